"""Gateway settings (`KNOWHUB_GATEWAY_*`). Where the services are comes from the common
settings: `KNOWHUB_<SERVICE>_ADDRESS`, else the hub at `KNOWHUB_HOST:KNOWHUB_PORT`."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.config import HubSettings
from knowhub_server.common.listing import CommaList


class GatewaySettings(HubSettings):
    gateway_enabled: bool = Field(
        True, description="`knowhub up` also starts the REST gateway.")
    gateway_host: str = Field("127.0.0.1", description="Address the REST gateway binds to.")
    gateway_port: int = Field(
        8080, ge=0, le=65535, description="REST gateway port (0 picks a free one).")
    gateway_timeout_seconds: float = Field(
        60.0, gt=0, le=3600, description="Deadline of one gRPC call the gateway makes "
        "(SlimKnowledge and RotateMasterKey get at least 600 s).")
    gateway_allowed_hosts: CommaList = Field(
        default_factory=list, description="Further Host names the gateway answers to, "
        "comma-separated: `name` (any port) or `name:port`, e.g. the name a proxy serves "
        "it under. It always answers to its own address (every loopback name on loopback).")
    gateway_allowed_origins: CommaList = Field(
        default_factory=list, description="Origins of other web pages that may call the "
        "gateway from a browser, comma-separated (e.g. `https://tools.example.com`). Its "
        "own console's origin is always allowed; any other is refused.")
