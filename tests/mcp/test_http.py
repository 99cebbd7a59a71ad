"""`knowhub mcp --transport http`: streamable HTTP at /mcp, each caller as the principal
of the bearer token its requests carry."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from knowhub_server.mcp.server import HubClients
from tests.mcp.conftest import KNOWHUB, data, error_text, mcp_http, server_env
from tests.mcp.test_stdio import TOOL_COUNT
from tests.support.harness import Harness


def connect(url: str, token: str | None, authorization: str | bytes | None = None) -> Client:
    """A client sending `Bearer <token>`, or the `authorization` header as given."""
    if authorization is None and token:
        authorization = f"Bearer {token}"
    headers: Any = {"Authorization": authorization} if authorization else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers)))


def test_tools_over_streamable_http_run_as_the_callers_token(hub: Harness, http_url: str) -> None:
    async def scenario() -> str:
        async with connect(http_url, "token-alice") as alice:
            assert len((await alice.list_tools()).tools) == TOOL_COUNT
            saved = data(
                await alice.call_tool(
                    "knowledge_save",
                    {
                        "task": "Page the on-call engineer",
                        "content": "Use the escalation policy.",
                        "types": ["strategy"],
                    },
                )
            )
            assert saved["owner"] == "agent:alice_bot"
            found = data(
                await alice.call_tool("knowledge_search", {"query": "escalation policy on-call"})
            )
            assert [hit["id"] for hit in found["results"]] == [saved["id"]]
            data(
                await alice.call_tool(
                    "resource_save",
                    {
                        "id": "credentials/pager",
                        "title": "Pager",
                        "body": "the pager account",
                        "secure_body": "pager-s3cret",
                        "content_type": "credential",
                    },
                )
            )
        async with connect(http_url, "token-bob") as bob:  # another organisation
            assert data(await bob.call_tool("knowledge_list", {}))["count"] == 0
        async with connect(http_url, "token-carol") as carol:  # alice's org, not allowed
            refused = error_text(
                await carol.call_tool(
                    "resource_get", {"id": "credentials/pager", "include_secure": True}
                )
            )
            assert refused.startswith("PERMISSION_DENIED")
        return saved["id"]

    saved_id = anyio.run(scenario)
    assert hub.client("alice").knowledge.get(saved_id).task == "Page the on-call engineer"


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = "application/json, text/event-stream"


def post(
    url: str, body: dict[str, Any], authorization: str | None = None, session: str | None = None
) -> httpx.Response:
    headers = {"Accept": ACCEPT}
    if authorization:
        headers["Authorization"] = authorization
    if session:
        headers["mcp-session-id"] = session
    return httpx.post(url, json=body, headers=headers, timeout=30)


def test_without_a_valid_token_the_answer_is_401_with_www_authenticate(
    hub: Harness, http_url: str
) -> None:
    """The server's own KNOWHUB_TOKEN (admin's, in the fixture) is never lent to HTTP
    callers; a request without a token the hub knows is HTTP 401, so that a client can
    ask its user for one, before any tool is listed or called."""
    for authorization, message, error in (
        (None, "missing bearer token: send 'Authorization: Bearer <token>'", "invalid_request"),
        ("Bearer token-mallory", "unknown bearer token", "invalid_token"),
        ("Basic YWxpY2U6cHc=", "Authorization: expected 'Bearer <token>'", "invalid_request"),
        (b"Bearer t\xf6ken-alice", "Authorization: malformed token", "invalid_request"),
    ):
        headers: Any = {"Accept": ACCEPT}
        if authorization:
            headers["Authorization"] = authorization
        response = httpx.post(http_url, json=INITIALIZE, headers=headers, timeout=30)
        assert response.status_code == 401, (authorization, response.text)
        assert response.headers["www-authenticate"] == f'Bearer realm="knowhub", error="{error}"'
        assert response.json()["error"]["message"] == f"UNAUTHENTICATED: {message}"

    async def scenario() -> None:
        with pytest.raises(Exception):  # noqa: B017 - the client's own error for a 401
            async with connect(http_url, "token-mallory") as mallory:
                await mallory.call_tool("knowledge_list", {})

    anyio.run(scenario)
    assert len(hub.client("admin").knowledge.list(limit=100)) == 0


def test_a_session_belongs_to_the_token_that_opened_it(hub: Harness, http_url: str) -> None:
    """Another client's session id, with another token or none, neither ends nor uses
    that session."""
    opened = post(http_url, INITIALIZE, "Bearer token-alice")
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for authorization in ("Bearer token-bob", "Bearer token-carol"):
        ended = httpx.delete(
            http_url,
            headers={"Authorization": authorization, "mcp-session-id": session},
            timeout=30,
        )
        assert ended.status_code == 404, ended.text
        assert post(http_url, ping, authorization, session).status_code == 404
    anonymous = httpx.delete(http_url, headers={"mcp-session-id": session}, timeout=30)
    assert anonymous.status_code == 401
    assert post(http_url, ping, "Bearer token-alice", session).status_code == 200
    own = httpx.delete(
        http_url,
        headers={"Authorization": "Bearer token-alice", "mcp-session-id": session},
        timeout=30,
    )
    assert own.status_code in (200, 204), own.text
    assert post(http_url, ping, "Bearer token-alice", session).status_code == 404


def test_a_request_from_another_host_name_is_refused(http_url: str) -> None:
    """DNS rebinding protection: on loopback only loopback Host and Origin are served,
    on this server's own port (not another local web app's)."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    port = int(http_url.split(":")[2].split("/")[0])
    for host in ("evil.example:80", f"evil.example:{port}", f"127.0.0.1:{port + 1}", ""):
        assert httpx.post(http_url, headers={"Host": host}, json=ping).status_code == 421
    for origin in ("http://evil.example", f"http://localhost:{port + 1}", "null"):
        assert httpx.post(http_url, headers={"Origin": origin}, json=ping).status_code == 403
    own = httpx.post(
        http_url,
        json=ping,
        headers={
            "Origin": f"http://localhost:{port}",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert own.status_code not in (403, 421)


def test_beyond_loopback_only_in_front_of_a_hub_that_requires_tokens(
    hub: Harness, tmp_path: Path
) -> None:
    local = Harness(tmp_path / "local").start()
    try:
        for target, refusal in (
            (local.address, "runs without a tokens file"),
            ("127.0.0.1:1", "cannot tell whether the hub"),
        ):
            process = subprocess.run(
                [KNOWHUB, "mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
                env={**os.environ, **server_env(target)},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert process.returncode == 1, process.stderr
            assert "refusing to bind the MCP server to 0.0.0.0" in process.stderr
            assert refusal in process.stderr
    finally:
        local.stop()
    with mcp_http(hub, "0.0.0.0") as url:  # a hub with tokens: callers bring theirs

        async def scenario() -> None:
            async with connect(url, "token-alice") as alice:
                assert data(await alice.call_tool("knowledge_list", {}))["count"] == 0

        anyio.run(scenario)
        assert post(url, INITIALIZE).status_code == 401


def test_no_token_is_lent_in_front_of_a_local_hub(tmp_path: Path) -> None:
    """On loopback in front of a local hub, with its data directory in reach: a caller
    without the local token gets nothing, secrets least of all."""
    local = Harness(tmp_path / "local").start()
    local.client().resources.save("credentials/db", "db", "how", secure_body="s3cret")
    try:
        with mcp_http(local, "127.0.0.1", KNOWHUB_DATA_DIR=str(local.data_dir)) as url:

            async def scenario() -> dict[str, Any]:
                async with connect(url, local.local_token) as owner:
                    return data(
                        await owner.call_tool(
                            "resource_get", {"id": "credentials/db", "include_secure": True}
                        )
                    )

            refused = post(url, INITIALIZE)
            allowed = anyio.run(scenario)
    finally:
        local.stop()
    assert refused.status_code == 401 and "s3cret" not in refused.text
    assert allowed["secure_body"] == "s3cret"


def test_one_client_per_token_the_most_recently_used_kept() -> None:
    hubs = HubClients("127.0.0.1:1", keep=2)
    alice, bob = hubs.for_token("token-alice"), hubs.for_token("token-bob")
    assert hubs.for_token("token-alice") is alice  # alice is now the most recent
    hubs.for_token("token-carol")  # drops bob, the least recently used
    assert hubs.for_token("token-alice") is alice
    assert hubs.for_token("token-bob") is not bob
    hubs.close()


def test_a_client_that_never_sends_its_headers_is_cut_off(hub: Harness) -> None:
    """MCP over HTTP meets slow clients as the gateway does (tests/gateway/test_connections.py)."""
    with mcp_http(hub, "127.0.0.1", KNOWHUB_MCP_HEADER_TIMEOUT_SECONDS="1") as url:
        port = int(url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as silent:
            silent.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and no more
            start = time.monotonic()
            assert silent.recv(1024) == b""
            assert time.monotonic() - start < 5
