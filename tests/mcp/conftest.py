"""The MCP server as its users run it: `knowhub mcp` in its own process, reached with the
mcp package's own client, against a real hub on loopback."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

from tests.support.harness import Harness
from tests.support.ports import free_port

KNOWHUB = str(Path(sys.executable).parent / "knowhub")


def server_env(address: str, **extra: str) -> dict[str, str]:
    return {
        **get_default_environment(),
        "KNOWHUB_TARGET": address,
        "KNOWHUB_LOG_LEVEL": "WARNING",
        **extra,
    }


def stdio_server(hub: Harness | str, token: str | None) -> StdioServerParameters:
    """`knowhub mcp` over stdio, calling `hub` (or the address) with `token`
    (KNOWHUB_TOKEN)."""
    address = hub if isinstance(hub, str) else hub.address
    env = server_env(address, **({"KNOWHUB_TOKEN": token} if token else {}))
    return StdioServerParameters(command=KNOWHUB, args=["mcp"], env=env)


def data(result: types.CallToolResult) -> dict[str, Any]:
    """A successful tool result's JSON (its text content), checked against its
    structured content."""
    assert not result.is_error, result.content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    parsed = json.loads(text.text)
    assert parsed == result.structured_content
    return parsed


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return text.text


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"knowhub mcp exited with {process.returncode}: "
                f"{process.stderr.read().decode() if process.stderr else ''}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"knowhub mcp did not listen on port {port}")


@contextlib.contextmanager
def mcp_http(hub: Harness | str, host: str, **env: str) -> Iterator[str]:
    """`knowhub mcp --transport http` bound to `host` on a free port, calling `hub` (or
    the address); its URL on loopback."""
    address = hub if isinstance(hub, str) else hub.address
    port = free_port()
    process = subprocess.Popen(
        [KNOWHUB, "mcp", "--transport", "http", "--host", host, "--port", str(port)],
        env={**os.environ, **server_env(address, **env)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def http_url(hub: Harness) -> Iterator[str]:
    """`knowhub mcp --transport http` on a free loopback port; its URL. KNOWHUB_TOKEN is
    set to admin's token to show that the HTTP transport never uses it."""
    with mcp_http(hub, "127.0.0.1", KNOWHUB_TOKEN="token-admin") as url:
        yield url
