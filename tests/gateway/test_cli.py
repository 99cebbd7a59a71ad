"""`knowhub up` starts the gateway beside the gRPC server; `knowhub serve gateway` runs it
alone, reaching the services by address; neither binds beyond loopback without tokens."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from knowhub_server.common.config import CommonSettings
from knowhub_server.common.http import listen
from knowhub_server.gateway.app import HubGateway, hub_address, service_targets
from tests.support.harness import Harness

ROOT = Path(__file__).resolve().parents[2]


def knowhub(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
    return subprocess.Popen([sys.executable, "-m", "knowhub_server.cli", *args], cwd=ROOT,
                            env={**clean, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def gateway_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    for _ in range(5):
        line = process.stdout.readline()
        match = re.search(r"gateway listening on (http://[\d.]+:\d+)", line)
        if match:
            return match.group(1)
    process.kill()
    raise AssertionError(f"no gateway line; stderr: {process.communicate()[1]}")


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    out, _err = process.communicate(timeout=60)
    assert process.returncode == 0
    return out


def test_up_serves_the_gateway_on_its_own_port(tmp_path: Path) -> None:
    process = knowhub("up", "--data-dir", str(tmp_path / "hub"), "--port", "0")
    url = gateway_url(process)
    try:
        note = {"task": "t", "content": "c", "types": ["tool"]}
        assert httpx.post(f"{url}/api/knowledge", json=note, timeout=30).status_code == 401
        token = httpx.get(f"{url}/api/local-token", headers={"X-KnowHub-Console": "1"},
                          timeout=30).json()["token"]
        assert token == (tmp_path / "hub" / "local_token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        saved = httpx.post(f"{url}/api/knowledge", json=note, headers=headers, timeout=30)
        assert saved.status_code == 201, saved.text
        found = httpx.get(f"{url}/api/knowledge/search", params={"q": "t c"}, timeout=30,
                          headers=headers)
        assert found.json()["count"] == 1
        assert httpx.get(f"{url}/", timeout=30).headers["location"] == "/console/"
        console = httpx.get(f"{url}/console/", timeout=30)
        assert console.status_code == 200 and "<html" in console.text
    finally:
        assert "KnowHub stopped" in stop(process)


def test_serve_gateway_alone_reaches_the_services_by_address(hub: Harness) -> None:
    process = knowhub("serve", "gateway", "--port", "0",
                      env={"KNOWHUB_KNOWLEDGE_ADDRESS": hub.address,
                           "KNOWHUB_RESOURCE_ADDRESS": hub.address,
                           "KNOWHUB_COGNITION_ADDRESS": hub.address,
                           "KNOWHUB_DREAM_ADDRESS": hub.address})
    url = gateway_url(process)
    try:
        headers = {"Authorization": "Bearer token-alice"}
        saved = httpx.post(f"{url}/api/knowledge", headers=headers, json={
            "task": "t", "content": "c", "types": ["tool"]}, timeout=30)
        assert saved.json()["owner"] == "agent:alice_bot"
        memos = httpx.post(f"{url}/api/v1/dream/RecentMemos", headers=headers, timeout=30,
                           json={"user_id": "u1", "request_type": "REQUEST_TYPE_PRIVATE"})
        assert memos.json() == {"memos": []}
        assert httpx.get(f"{url}/api/knowledge", timeout=30).status_code == 401
    finally:
        assert "gateway stopped" in stop(process)


def test_no_tokens_means_loopback_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused = knowhub("serve", "gateway", "--host", "0.0.0.0", "--port", "0")
    _out, err = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert "refusing to bind the gateway to 0.0.0.0 without tokens" in err
    monkeypatch.setenv("KNOWHUB_GATEWAY_HOST", "0.0.0.0")
    with pytest.raises(ValueError, match="KNOWHUB_TOKENS_FILE"):
        HubGateway(CommonSettings(data_dir=tmp_path))


def test_a_port_in_use_is_refused_with_a_clear_message() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = knowhub("serve", "gateway", "--port", str(taken.getsockname()[1]))
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "cannot listen on 127.0.0.1" in err and "in use" in err


def test_the_listening_socket_lets_asyncio_turn_nagle_off() -> None:
    """asyncio sets TCP_NODELAY only on sockets made with IPPROTO_TCP; without it every
    answer waited ~40 ms for the client's delayed ACK (seen in bench/gateway_latency)."""
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_where_the_gateway_finds_the_services() -> None:
    assert hub_address(CommonSettings(host="0.0.0.0"), 50051) == "127.0.0.1:50051"
    assert hub_address(CommonSettings(host="::1"), 7) == "[::1]:7"
    assert hub_address(CommonSettings(host="10.1.2.3"), 7) == "10.1.2.3:7"
    targets = service_targets(CommonSettings(port=6000, knowledge_address="k.internal:50051"))
    assert targets == {"knowledge": "k.internal:50051", "resource": "127.0.0.1:6000",
                       "cognition": "127.0.0.1:6000", "dream": "127.0.0.1:6000",
                       "admin": "k.internal:50051"}
