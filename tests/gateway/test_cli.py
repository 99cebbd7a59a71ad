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

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.http import listen
from knowhub_server.gateway.app import HubGateway, hub_address, service_targets
from tests.support.harness import Harness

ROOT = Path(__file__).resolve().parents[2]


def knowhub(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
    return subprocess.Popen(
        [sys.executable, "-m", "knowhub_server.cli", *args],
        cwd=ROOT,
        env={**clean, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def gateway_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    for _ in range(5):
        line = process.stdout.readline()
        match = re.search(r"gateway listening on (http://[\d.]+:\d+)", line)
        if match:
            return match.group(1)
    process.kill()
    raise AssertionError(f"no gateway line; stderr: {process.communicate()[1]}")


def sign_in_link(process: subprocess.Popen[str]) -> str:
    """The console's one-time link, on the line after the gateway's."""
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"Open the console: (http://\S+\?login=[\w-]+) \(works once", line)
    assert match, line
    return match.group(1)


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
        link = sign_in_link(process)
        assert link.startswith(f"{url}/?login=")
        assert httpx.post(f"{url}/api/knowledge", json=note, timeout=30).status_code == 401
        signed_in = httpx.get(link, timeout=30)
        assert signed_in.status_code == 303, signed_in.text
        secret = signed_in.headers["location"].removeprefix("/console/#session=")
        headers = {
            "X-KnowHub-Session": secret,
            "Cookie": f"knowhub_session={signed_in.cookies['knowhub_session']}",
        }
        saved = httpx.post(f"{url}/api/knowledge", json=note, headers=headers, timeout=30)
        assert saved.status_code == 201, saved.text
        found = httpx.get(
            f"{url}/api/knowledge/search", params={"q": "t c"}, timeout=30, headers=headers
        )
        assert found.json()["count"] == 1
        assert httpx.get(f"{url}/", timeout=30).headers["location"] == "/console/"
        console = httpx.get(f"{url}/console/", timeout=30)
        assert console.status_code == 200 and "<html" in console.text
    finally:
        assert "KnowHub stopped" in stop(process)


def test_serve_gateway_alone_reaches_the_services_by_address(hub: Harness) -> None:
    process = knowhub(
        "serve",
        "gateway",
        "--port",
        "0",
        env={
            "KNOWHUB_KNOWLEDGE_ADDRESS": hub.address,
            "KNOWHUB_RESOURCE_ADDRESS": hub.address,
            "KNOWHUB_COGNITION_ADDRESS": hub.address,
            "KNOWHUB_DREAM_ADDRESS": hub.address,
        },
    )
    url = gateway_url(process)
    try:
        headers = {"Authorization": "Bearer token-alice"}
        saved = httpx.post(
            f"{url}/api/knowledge",
            headers=headers,
            json={"task": "t", "content": "c", "types": ["tool"]},
            timeout=30,
        )
        assert saved.json()["owner"] == "agent:alice_bot"
        memos = httpx.post(
            f"{url}/api/v1/dream/RecentMemos",
            headers=headers,
            timeout=30,
            json={"user_id": "u1", "request_type": "REQUEST_TYPE_PRIVATE"},
        )
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
    assert targets == {
        "knowledge": "k.internal:50051",
        "resource": "127.0.0.1:6000",
        "cognition": "127.0.0.1:6000",
        "dream": "127.0.0.1:6000",
        "admin": "k.internal:50051",
    }


@pytest.mark.parametrize("busy", ["grpc", "gateway"])
def test_up_checks_its_ports_before_it_creates_anything(tmp_path: Path, busy: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        ports = ["--port", port] if busy == "grpc" else ["--port", "0", "--gateway-port", port]
        process = knowhub("up", "--data-dir", str(tmp_path / "hub"), *ports)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    what, option = (
        ("the gRPC port", "--port") if busy == "grpc" else ("the gateway's port", "--gateway-port")
    )
    assert err.startswith(f"knowhub: {what}: cannot listen on 127.0.0.1:{port}"), err
    assert option in err and "E1126" not in err and "add_port" not in err
    assert not (tmp_path / "hub").exists()  # no data directory, no master key


def test_console_link_prints_a_link_only_the_token_holder_can_make(tmp_path: Path) -> None:
    from knowhub_server.gateway.session import Sessions

    data_dir = tmp_path / "hub"
    data_dir.mkdir()
    (data_dir / "local_token").write_text("the-local-token\n")
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "console-link",
            "--data-dir",
            str(data_dir),
            "--url",
            "http://127.0.0.1:9999",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    match = re.search(r"http://127\.0\.0\.1:9999/\?login=([\w-]+) ", made.stdout)
    assert match, made.stdout
    sessions = Sessions("the-local-token", 900, 3600)
    assert sessions.sign_in(match.group(1))[1].token == "the-local-token"
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "console-link",
            "--data-dir",
            str(tmp_path / "none"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert missing.returncode == 1 and "no local token in" in missing.stderr
