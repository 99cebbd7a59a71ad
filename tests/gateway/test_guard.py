"""A web page in the user's browser against the gateway of a local hub: cross-origin
writes (CSRF), DNS rebinding, the local token, huge bodies, and the headers that keep the
console from being framed or sniffed."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from knowhub_server.common.runtime.http import HostPolicy
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.guard import CONTENT_SECURITY_POLICY
from knowhub_server.gateway.translation import MAX_BODY_BYTES, SERVICES
from tests.gateway.conftest import Gateway
from tests.support.harness import Harness

NOTE = '{"task": "csrf", "content": "planted by a web page", "types": ["tool"]}'
EVIL = "http://evil.example"


def port_of(gateway: Gateway) -> int:
    return gateway.server.port


def local_notes(gateway: Gateway) -> list[str]:
    assert gateway.hub is not None
    return [k.task for k in gateway.hub.client().knowledge.list(limit=100)]


def with_token(gateway: Gateway, **headers: str) -> dict[str, str]:
    assert gateway.hub is not None
    return {"Authorization": f"Bearer {gateway.hub.local_token}", **headers}


def test_a_cross_origin_simple_request_writes_nothing(local_gateway: Gateway) -> None:
    """A page's form post or no-cors fetch: text/plain, its own Origin (or none)."""
    attempts = [
        ({"Content-Type": "text/plain", "Origin": EVIL}, 403),
        ({"Content-Type": "text/plain"}, 415),  # a browser that sent no Origin
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
        ({"Content-Type": "application/json", "Origin": EVIL}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),  # a sandboxed frame
        (
            {
                "Content-Type": "application/json",  # another local web app
                "Origin": f"http://127.0.0.1:{port_of(local_gateway) + 1}",
            },
            403,
        ),
    ]
    for headers, status in attempts:
        # even with the local token (a page cannot have it), the guard refuses first
        for sent in (headers, with_token(local_gateway, **headers)):
            response = local_gateway.client.post("/api/knowledge", content=NOTE, headers=sent)
            assert response.status_code == status, (sent, response.text)
            response = local_gateway.client.post(
                "/api/v1/knowledge/DeleteKnowledge", content='{"id": "x"}', headers=sent
            )
            assert response.status_code == status, (sent, response.text)
    assert local_notes(local_gateway) == []
    same_origin = local_gateway.client.post(
        "/api/knowledge",
        content=NOTE,
        headers=with_token(
            local_gateway,
            **{
                "Content-Type": "application/json; charset=utf-8",
                "Origin": f"http://localhost:{port_of(local_gateway)}",
            },
        ),
    )
    assert same_origin.status_code == 201, same_origin.text
    assert local_notes(local_gateway) == ["csrf"]


def test_dns_rebinding_cannot_read_a_secret(local_gateway: Gateway) -> None:
    """A page whose name now points at 127.0.0.1 reads with its own name as Host."""
    assert local_gateway.hub is not None
    local_gateway.hub.client().resources.save(
        "credentials/db", "db", "how to log in", secure_body="s3cret-password"
    )
    path = "/api/resource/credentials/db?include_secure=true"
    for host in (
        f"evil.example:{port_of(local_gateway)}",
        "evil.example",
        f"127.0.0.1.evil.example:{port_of(local_gateway)}",
        "",
    ):
        for headers in ({"Host": host}, with_token(local_gateway, Host=host)):
            response = local_gateway.client.get(path, headers=headers)
            assert response.status_code == 421, (host, response.text)
            assert "s3cret-password" not in response.text
        session = local_gateway.client.get("/api/session", headers={"Host": host})
        assert session.status_code == 421
    own = local_gateway.client.get(
        path, headers=with_token(local_gateway, Host=f"localhost:{port_of(local_gateway)}")
    )
    assert own.json()["secure_body"] == "s3cret-password"


def test_allowed_origins_and_hosts_widen_the_checks(hub: Harness) -> None:
    policy = HostPolicy.for_bind("127.0.0.1", ["knowhub.internal"], ["https://tools.example.com"])
    server = GatewayServer(
        create_app(dict.fromkeys(SERVICES, hub.address), 30.0, policy=policy), "127.0.0.1", 0
    )
    server.start()
    headers = {"Authorization": "Bearer token-alice", "Content-Type": "application/json"}

    def status(**more: str) -> int:
        return httpx.post(
            f"{server.url}/api/v1/knowledge/ListKnowledge",
            content="{}",
            headers={**headers, **more},
            timeout=30,
        ).status_code

    try:
        assert status(Origin="https://tools.example.com") == 200
        assert status(Origin="https://other.example.com") == 403
        assert status(Host="knowhub.internal:9000", Origin="http://knowhub.internal:9000") == 200
        assert status(Host="knowhub.internal") == 200
        assert status(Host="knowhub.evil") == 421
    finally:
        server.stop()


def test_every_answer_carries_the_security_headers(local_gateway: Gateway) -> None:
    for path in (
        "/console/",
        "/console/js/app.js",
        "/api/knowledge",
        "/openapi.json",
        "/api/nothing",
    ):
        response = local_gateway.get(path)
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    console = local_gateway.get("/console/").text
    assert not re.search(r"<script(?![^>]*\bsrc=)", console), "an inline script breaks the CSP"
    assert " style=" not in console and "<style" not in console
    assert local_gateway.get("/api/knowledge").headers["cache-control"] == "no-store"


# ---- Huge bodies ----------------------------------------------------------------------------


@pytest.fixture
def gateway_process(hub: Harness) -> Iterator[tuple[str, int]]:
    """`knowhub serve gateway` in its own process (so its memory can be read); its URL
    and pid."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "knowhub_server.cli", "serve", "gateway", "--port", "0"],
        env={**clean, **{f"KNOWHUB_{s.upper()}_ADDRESS": hub.address for s in SERVICES}},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"listening on (http://[\d.]+:\d+)", line)
    assert match, (line, process.stderr.read() if process.stderr else "")
    try:
        yield match.group(1), process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


def peak_memory(pid: int) -> int:
    """The process's peak resident memory in bytes (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def declared_too_large(url: str) -> bytes:
    """The status line answering a request that announces 400 MB and sends none."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(
            f"POST /api/knowledge HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Authorization: Bearer token-alice\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {400 * 1024 * 1024}\r\n\r\n".encode()
        )
        return connection.recv(1024)


def test_a_huge_body_is_refused_before_it_is_read(gateway_process: tuple[str, int]) -> None:
    url, pid = gateway_process
    headers = {"Authorization": "Bearer token-alice", "Content-Type": "application/json"}
    httpx.post(f"{url}/api/v1/knowledge/ListKnowledge", json={}, headers=headers, timeout=30)
    before = peak_memory(pid)
    sent = 0
    chunk = b" " * (1024 * 1024)

    def body() -> Iterator[bytes]:  # chunked: no Content-Length to refuse it by
        nonlocal sent
        yield b'{"task": "'
        for _ in range(256):
            sent += len(chunk)
            yield chunk

    try:
        chunked = httpx.post(f"{url}/api/knowledge", content=body(), headers=headers, timeout=60)
        assert chunked.status_code == 413
        assert chunked.json()["error"]["code"] == "RESOURCE_EXHAUSTED"
    except httpx.TransportError:
        pass  # the gateway answered 413 and closed before the upload ended
    assert declared_too_large(url).startswith(b"HTTP/1.1 413 ")
    time.sleep(0.2)
    grown = peak_memory(pid) - before
    assert grown < 8 * MAX_BODY_BYTES, f"the gateway grew by {grown >> 20} MB"
    ok = httpx.post(f"{url}/api/v1/knowledge/ListKnowledge", json={}, headers=headers, timeout=30)
    assert ok.status_code == 200
