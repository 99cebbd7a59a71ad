"""`knowhub mcp --transport http`: streamable HTTP at /mcp, each caller as the principal
of the bearer token its requests carry."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from knowhub_server.mcp.server import HubClients
from tests.mcp.conftest import data, error_text
from tests.mcp.test_stdio import TOOL_COUNT
from tests.support.harness import Harness


def connect(url: str, token: str | None,
            authorization: str | bytes | None = None) -> Client:
    """A client sending `Bearer <token>`, or the `authorization` header as given."""
    if authorization is None and token:
        authorization = f"Bearer {token}"
    headers: Any = {"Authorization": authorization} if authorization else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers)))


def test_tools_over_streamable_http_run_as_the_callers_token(
        hub: Harness, http_url: str) -> None:
    async def scenario() -> str:
        async with connect(http_url, "token-alice") as alice:
            assert len((await alice.list_tools()).tools) == TOOL_COUNT
            saved = data(await alice.call_tool("knowledge_save", {
                "task": "Page the on-call engineer", "content": "Use the escalation policy.",
                "types": ["strategy"]}))
            assert saved["owner"] == "agent:alice_bot"
            found = data(await alice.call_tool("knowledge_search",
                                               {"query": "escalation policy on-call"}))
            assert [hit["id"] for hit in found["results"]] == [saved["id"]]
            data(await alice.call_tool("resource_save", {
                "id": "credentials/pager", "title": "Pager", "body": "the pager account",
                "secure_body": "pager-s3cret", "content_type": "credential"}))
        async with connect(http_url, "token-bob") as bob:  # another organisation
            assert data(await bob.call_tool("knowledge_list", {}))["count"] == 0
        async with connect(http_url, "token-carol") as carol:  # alice's org, not allowed
            refused = error_text(await carol.call_tool(
                "resource_get", {"id": "credentials/pager", "include_secure": True}))
            assert refused.startswith("PERMISSION_DENIED")
        return saved["id"]

    saved_id = anyio.run(scenario)
    assert hub.client("alice").knowledge.get(saved_id).task == "Page the on-call engineer"


def test_an_unknown_or_missing_token_is_refused(hub: Harness, http_url: str) -> None:
    """The server's own KNOWHUB_TOKEN (admin's, in the fixture) is never lent to HTTP
    callers: they call the hub with their own token or none."""
    async def scenario() -> None:
        async with connect(http_url, "token-mallory") as mallory:
            assert error_text(await mallory.call_tool("knowledge_list", {})) == \
                "UNAUTHENTICATED: unknown bearer token"
            message = error_text(await mallory.call_tool("knowledge_save", {
                "task": "t", "content": "c", "types": ["tool"]}))
            assert message.startswith("UNAUTHENTICATED")
        async with connect(http_url, None) as anonymous:
            message = error_text(await anonymous.call_tool("knowledge_list", {}))
            assert message.startswith("UNAUTHENTICATED: missing bearer token")

    anyio.run(scenario)
    assert len(hub.client("admin").knowledge.list(limit=100)) == 0


def test_a_malformed_authorization_header_is_refused_naming_it(
        hub: Harness, http_url: str) -> None:
    """Not Bearer, or a token gRPC metadata cannot carry: UNAUTHENTICATED, not INTERNAL."""
    async def scenario() -> list[str]:
        messages = []
        for header in ("Basic YWxpY2U6cHc=", b"Bearer t\xf6ken-alice"):
            async with connect(http_url, None, authorization=header) as caller:
                messages.append(error_text(await caller.call_tool("knowledge_save", {
                    "task": "t", "content": "c", "types": ["tool"]})))
        return messages

    assert anyio.run(scenario) == ["UNAUTHENTICATED: Authorization: expected 'Bearer <token>'",
                                   "UNAUTHENTICATED: Authorization: malformed token"]
    assert len(hub.client("admin").knowledge.list(limit=100)) == 0


def test_a_request_from_another_host_name_is_refused(http_url: str) -> None:
    """DNS rebinding protection: on loopback only loopback Host and Origin are served."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx.post(http_url, headers={"Host": "evil.example:80"},
                      json=ping).status_code == 421
    assert httpx.post(http_url, headers={"Origin": "http://evil.example"},
                      json=ping).status_code == 403


def test_one_client_per_token_the_most_recently_used_kept() -> None:
    hubs = HubClients("127.0.0.1:1", keep=2)
    alice, bob = hubs.for_token("token-alice"), hubs.for_token("token-bob")
    assert hubs.for_token("token-alice") is alice  # alice is now the most recent
    hubs.for_token("token-carol")  # drops bob, the least recently used
    assert hubs.for_token("token-alice") is alice
    assert hubs.for_token("token-bob") is not bob
    hubs.close()
