"""Connections to the gateway: a client that connects and sends nothing, or drips its
headers, is cut off; idle keep-alive connections close; beyond a cap new connections are
closed at once; and a flood of slow connections leaves the gRPC server beside the gateway
(same process, same open-file limit) answering."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from knowhub import KnowHub
from knowhub.local import read_local_token

from knowhub_server.common.runtime.health_probe import check
from knowhub_server.common.runtime.http import ConnectionLimits
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.translation import SERVICES

ROOT = Path(__file__).resolve().parents[2]
LIMITS = ConnectionLimits(max_connections=20, header_seconds=0.5, idle_seconds=1.0)
PARTIAL = b"GET /console/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # headers never finished


@pytest.fixture
def small_gateway() -> Iterator[GatewayServer]:
    app = create_app(dict.fromkeys(SERVICES, "127.0.0.1:1"), 5.0, local_token=None)
    server = GatewayServer(app, "127.0.0.1", 0, LIMITS)
    server.start()
    yield server
    server.stop()


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long until the server closed `sock` (None: still open after `seconds`)."""
    start = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - start


def connect(server: GatewayServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


def test_a_silent_or_dripping_client_is_cut_off(small_gateway: GatewayServer) -> None:
    with connect(small_gateway) as silent:
        assert closed_within(silent, 5) is not None
    with connect(small_gateway) as dripping:
        start = time.monotonic()
        with contextlib.suppress(OSError):  # the server closes it midway
            for byte in PARTIAL:
                dripping.sendall(bytes([byte]))
                time.sleep(0.05)  # every byte well within any idle timeout
        assert closed_within(dripping, 5) is not None
        assert time.monotonic() - start < 3  # not the 2 s the whole drip would take


def test_an_idle_keep_alive_connection_closes(small_gateway: GatewayServer) -> None:
    with connect(small_gateway) as sock:
        host = f"127.0.0.1:{small_gateway.port}".encode()
        sock.sendall(b"GET /console/ HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        waited = closed_within(sock, 5)
        assert waited is not None and waited >= 0.4  # after the answer, not at once


def test_beyond_the_cap_connections_close_at_once() -> None:
    app = create_app(dict.fromkeys(SERVICES, "127.0.0.1:1"), 5.0, local_token=None)
    limits = ConnectionLimits(max_connections=20, header_seconds=10.0, idle_seconds=1.0)
    server = GatewayServer(app, "127.0.0.1", 0, limits)
    server.start()
    held = [connect(server) for _ in range(limits.max_connections)]
    try:
        deadline = time.monotonic() + 10
        while len(server._server.server_state.connections) < limits.max_connections:
            assert time.monotonic() < deadline, "the held connections were not accepted"
            time.sleep(0.05)
        with connect(server) as extra:
            waited = closed_within(extra, 5)
            assert waited is not None and waited < 2  # not the 10 s a slow client gets
    finally:
        for sock in held:
            sock.close()
    try:
        time.sleep(0.2)
        assert httpx.get(f"{server.url}/console/", timeout=10).status_code == 200
    finally:
        server.stop()


def _low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@contextlib.contextmanager
def hub_with_low_file_limit(data_dir: Path, log: Path) -> Iterator[tuple[str, str]]:
    """`knowhub up` (gRPC server and gateway in one process) limited to 1024 open files;
    yields the gRPC address and the gateway's URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
    env["KNOWHUB_GATEWAY_HEADER_TIMEOUT_SECONDS"] = "4"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "up",
            "--data-dir",
            str(data_dir),
            "--port",
            "0",
            "--processes",
            "1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        preexec_fn=_low_file_limit,
    )
    assert process.stdout is not None
    try:
        address = url = ""
        for _ in range(6):
            line = process.stdout.readline()
            if found := re.search(r"KnowHub listening on [\d.]+:(\d+)", line):
                address = f"127.0.0.1:{found.group(1)}"
            if found := re.search(r"gateway listening on (http://[\d.]+:\d+)", line):
                url = found.group(1)
                break
        assert address and url, log.read_text()
        yield address, url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_slow_connections_to_the_gateway_leave_the_grpc_server_answering(tmp_path: Path) -> None:
    """The attack: more slow-header connections than the process may open files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2000:
        pytest.skip(f"this process may open only {hard} files; the attack needs 1,500")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2000), hard))
    log = tmp_path / "hub.log"
    with hub_with_low_file_limit(tmp_path / "hub", log) as (address, url):
        port = int(url.rsplit(":", 1)[1])
        slow: list[socket.socket] = []
        try:
            for _ in range(1500):
                sock = socket.socket()
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    sock.connect(("127.0.0.1", port))
                slow.append(sock)
            time.sleep(1.0)
            for sock in slow:
                with contextlib.suppress(OSError):
                    sock.send(PARTIAL)
            serving, line = check(address, "", timeout=10)
            assert serving, line
            assert "Too many open files" not in log.read_text()
            token = read_local_token(tmp_path / "hub")
            with KnowHub(address, token=token, timeout=10) as kh:
                saved = kh.knowledge.save(task="still answering", content="yes", types=["tool"])
                assert kh.knowledge.get(saved.id).task == "still answering"
        finally:
            for sock in slow:
                sock.close()
        deadline = time.monotonic() + 30
        while True:  # the slow ones gone, the gateway answers again
            try:
                if httpx.get(f"{url}/console/", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the gateway did not recover"
            time.sleep(0.5)
