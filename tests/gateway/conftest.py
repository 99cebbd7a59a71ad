"""The gateway in front of real gRPC servers, over HTTP on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.translation import SERVICES
from tests.support.harness import Harness


@dataclass
class Gateway:
    """A running gateway and an HTTP client for it; `as_` picks a principal's token."""

    server: GatewayServer
    client: httpx.Client
    hub: Harness | None = None

    @property
    def url(self) -> str:
        return self.server.url

    def request(
        self, method: str, path: str, as_: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if as_:
            headers["Authorization"] = f"Bearer token-{as_}"
        if method not in ("GET", "HEAD"):
            headers.setdefault("Content-Type", "application/json")
        return self.client.request(method, path, headers=headers, **kwargs)

    def get(self, path: str, as_: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, as_, **kwargs)

    def post(self, path: str, as_: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, as_, **kwargs)

    def put(self, path: str, as_: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, as_, **kwargs)

    def rpc(
        self, service: str, method: str, body: dict[str, Any] | None = None, as_: str | None = None
    ) -> httpx.Response:
        return self.post(f"/api/v1/{service}/{method}", as_, json=body or {})

    def stop(self) -> None:
        self.client.close()
        self.server.stop()


def start_gateway(
    targets: dict[str, str],
    timeout: float = 30.0,
    hub: Harness | None = None,
    local_token: str | None = None,
) -> Gateway:
    server = GatewayServer(create_app(targets, timeout, local_token=local_token), "127.0.0.1", 0)
    server.start()
    return Gateway(server, httpx.Client(base_url=server.url, timeout=30), hub)


def gateway_for(hub: Harness, timeout: float = 30.0, local_token: str | None = None) -> Gateway:
    """A gateway sending every service's calls to `hub`."""
    return start_gateway(dict.fromkeys(SERVICES, hub.address), timeout, hub, local_token)


@pytest.fixture
def gateway(hub: Harness) -> Iterator[Gateway]:
    """The gateway in front of a hub with the tests' tokens and no LLM."""
    running = gateway_for(hub)
    yield running
    running.stop()


@pytest.fixture
def local_gateway(tmp_path: Path) -> Iterator[Gateway]:
    """The gateway in front of a hub without a tokens file, knowing its local token (as
    `knowhub up` runs it)."""
    hub = Harness(tmp_path / "local").start()
    running = gateway_for(hub, local_token=hub.local_token)
    yield running
    running.stop()
    hub.stop()
