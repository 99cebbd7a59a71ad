"""Bearer tokens pass through to the services; gRPC status codes become HTTP ones."""

from __future__ import annotations

import socket
from pathlib import Path

import grpc
import httpx

from knowhub_server.gateway.translation import HTTP_STATUS, SERVICES
from tests.conftest import StartHub
from tests.gateway.conftest import Gateway, gateway_for, start_gateway
from tests.support.harness import Harness

ROUTES = [
    ("GET", "/api/knowledge/search?q=selenium"),
    ("GET", "/api/knowledge"),
    ("POST", "/api/knowledge/slim"),
    ("GET", "/api/resource/code/x"),
    ("POST", "/api/v1/knowledge/ListKnowledge"),
    ("POST", "/api/v1/dream/ListSchedules"),
]


def test_no_or_unknown_token_is_401_on_every_route(gateway: Gateway) -> None:
    for method, path in ROUTES:
        for headers in (
            {},
            {"Authorization": "Bearer not-a-token"},
            {"Authorization": "Basic YWxpY2U6cHc="},
            {"Authorization": "Bearer"},
            {"Authorization": b"Bearer t\xf6ken"},
        ):
            response = gateway.request(method, path, headers=headers)
            assert response.status_code == 401, (path, headers, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_the_token_is_the_callers_identity(gateway: Gateway) -> None:
    saved = gateway.post(
        "/api/knowledge", "alice", json={"task": "t", "content": "c", "types": ["tool"]}
    ).json()
    assert saved["owner"] == "agent:alice_bot"
    # The token header is case-insensitive in its scheme.
    same = gateway.get("/api/knowledge", headers={"Authorization": "bearer token-carol"})
    assert [k["id"] for k in same.json()["items"]] == [saved["id"]]
    assert gateway.get("/api/knowledge", "bob").json()["items"] == []
    denied = gateway.rpc("knowledge", "DeleteKnowledge", {"id": saved["id"]}, as_="carol")
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "PERMISSION_DENIED"
    assert (
        gateway.rpc("knowledge", "DeleteKnowledge", {"id": saved["id"]}, as_="alice").status_code
        == 200
    )


def test_without_a_tokens_file_the_local_token_is_needed(local_gateway: Gateway) -> None:
    note = {"task": "t", "content": "c", "types": ["tool"]}
    assert local_gateway.post("/api/knowledge", json=note).status_code == 401
    assert local_gateway.hub is not None
    saved = local_gateway.post(
        "/api/knowledge",
        json=note,
        headers={"Authorization": f"Bearer {local_gateway.hub.local_token}"},
    )
    assert saved.status_code == 201
    assert saved.json()["owner"] == "user:local"


def test_the_status_table_covers_every_grpc_code() -> None:
    assert set(HTTP_STATUS) == {code.name for code in grpc.StatusCode} - {"OK"}
    assert {
        name: HTTP_STATUS[name]
        for name in (
            "INVALID_ARGUMENT",
            "UNAUTHENTICATED",
            "PERMISSION_DENIED",
            "NOT_FOUND",
            "ALREADY_EXISTS",
            "ABORTED",
            "FAILED_PRECONDITION",
            "RESOURCE_EXHAUSTED",
            "UNAVAILABLE",
            "DEADLINE_EXCEEDED",
            "UNIMPLEMENTED",
        )
    } == {
        "INVALID_ARGUMENT": 400,
        "UNAUTHENTICATED": 401,
        "PERMISSION_DENIED": 403,
        "NOT_FOUND": 404,
        "ALREADY_EXISTS": 409,
        "ABORTED": 409,
        "FAILED_PRECONDITION": 400,
        "RESOURCE_EXHAUSTED": 429,
        "UNAVAILABLE": 503,
        "DEADLINE_EXCEEDED": 504,
        "UNIMPLEMENTED": 501,
    }


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    return error["message"]


def test_unreachable_service_is_503() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}"
    running = start_gateway(dict.fromkeys(SERVICES, closed), timeout=5)
    try:
        _error(running.get("/api/knowledge"), 503, "UNAVAILABLE")
        answer = running.rpc("dream", "ListSchedules")
        _error(answer, 503, "UNAVAILABLE")
        assert answer.json()["error"]["message"].startswith(
            f"no KnowHub hub answers at {closed}: start one with `knowhub up`"
        )
    finally:
        running.stop()


def test_a_call_past_its_deadline_is_504() -> None:
    """A listener that never speaks HTTP/2: the call waits for its connection until the
    gateway's deadline passes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        running = start_gateway(dict.fromkeys(SERVICES, address), timeout=0.3)
        try:
            _error(running.get("/api/knowledge", "alice"), 504, "DEADLINE_EXCEEDED")
        finally:
            running.stop()


def test_a_service_not_served_there_is_501(tmp_path: Path, tokens_file: Path) -> None:
    knowledge_only = Harness(
        tmp_path / "k", services=["knowledge"], tokens_file=tokens_file
    ).start()
    running = gateway_for(knowledge_only)
    try:
        assert running.get("/api/knowledge", "alice").status_code == 200
        _error(running.rpc("dream", "ListSchedules", as_="alice"), 501, "UNIMPLEMENTED")
    finally:
        running.stop()
        knowledge_only.stop()


def test_a_full_trace_is_429(start_hub: StartHub) -> None:
    hub = start_hub(env={"KNOWHUB_COGNITION_MAX_EVENTS_PER_TRACE": "2"})
    running = gateway_for(hub)
    try:
        events = [{"message": {"sequence": n, "role": "user", "content": "hi"}} for n in range(3)]
        _error(
            running.rpc(
                "cognition", "AppendEvents", {"trace_id": "t", "events": events}, as_="alice"
            ),
            429,
            "RESOURCE_EXHAUSTED",
        )
    finally:
        running.stop()
