"""Gateway settings (`KNOWHUB_GATEWAY_*`). Where the services are comes from the common
settings: `KNOWHUB_<SERVICE>_ADDRESS`, else the hub at `KNOWHUB_HOST:KNOWHUB_PORT`."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.base.config import HubSettings
from knowhub_server.common.base.listing import CommaList
from knowhub_server.common.runtime.http import ConnectionLimits


class GatewaySettings(HubSettings):
    gateway_enabled: bool = Field(True, description="`knowhub up` also starts the REST gateway.")
    gateway_host: str = Field("127.0.0.1", description="Address the REST gateway binds to.")
    gateway_port: int = Field(
        8080, ge=0, le=65535, description="REST gateway port (0 picks a free one)."
    )
    gateway_timeout_seconds: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="Deadline of one gRPC call the gateway makes "
        "(SlimKnowledge and RotateMasterKey get at least 600 s).",
    )
    gateway_allowed_hosts: CommaList = Field(
        default_factory=list,
        description="Further Host names the gateway answers to, "
        "comma-separated: `name` (any port) or `name:port`, e.g. the name a proxy serves "
        "it under. It always answers to its own address (every loopback name on loopback).",
    )
    gateway_allowed_origins: CommaList = Field(
        default_factory=list,
        description="Origins of other web pages that may call the "
        "gateway from a browser, comma-separated (e.g. `https://tools.example.com`). Its "
        "own console's origin is always allowed; any other is refused.",
    )
    gateway_login_seconds: float = Field(
        900.0,
        gt=0,
        le=86400,
        description="How long a console sign-in link of a local hub "
        "(printed by `knowhub up` and `knowhub console-link`) stays valid; each works once.",
    )
    gateway_session_seconds: float = Field(
        43200.0,
        gt=0,
        le=30 * 86400,
        description="How long a console session a sign-in link "
        "started lasts (sessions also end when the gateway stops, or on sign-out).",
    )
    gateway_max_connections: int = Field(
        1000,
        ge=1,
        description="Most connections the gateway keeps open; more are closed at "
        "once. Never more than a quarter of the process's open-file limit (raised to its "
        "hard limit at start), so the gRPC server beside it keeps descriptors.",
    )
    gateway_header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Time a client has to send a request's headers, "
        "from connecting or from the end of the previous answer; then the connection closes.",
    )
    gateway_idle_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=3600,
        description="How long an idle keep-alive connection to the "
        "gateway stays open between requests.",
    )

    @property
    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(
            self.gateway_max_connections,
            self.gateway_header_timeout_seconds,
            self.gateway_idle_timeout_seconds,
        )
