"""Settings of `knowhub mcp`, read from `KNOWHUB_*` environment variables."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.base.config import HubSettings
from knowhub_server.common.base.listing import CommaList
from knowhub_server.common.runtime.http import ConnectionLimits


class McpSettings(HubSettings):
    """Which hub the MCP server calls, as whom, and where its HTTP transport listens."""

    target: str = Field(
        "127.0.0.1:50051",
        min_length=1,
        description="host:port (or dns:/// target) of the hub the MCP server calls.",
    )
    # Printable ASCII, no spaces (as gRPC metadata and the gateway take it); empty: none.
    token: str | None = Field(
        None,
        pattern=r"^[!-~]*$",
        description="Bearer token the stdio MCP server calls the hub with.",
    )
    mcp_host: str = Field(
        "127.0.0.1", min_length=1, description="Address the MCP HTTP transport binds to."
    )
    mcp_port: int = Field(8931, ge=0, le=65535, description="Port of the MCP HTTP transport.")
    mcp_allowed_hosts: CommaList = Field(
        default_factory=list,
        description="Further Host names the MCP HTTP transport "
        "answers to, comma-separated: `name` (any port) or `name:port`. It always answers "
        "to its own address (every loopback name on loopback).",
    )
    mcp_allowed_origins: CommaList = Field(
        default_factory=list,
        description="Origins of web pages that may call the MCP "
        "HTTP transport from a browser, comma-separated (e.g. a browser-based MCP client's "
        "`http://localhost:6274`); any other origin is refused.",
    )
    mcp_max_connections: int = Field(
        1000,
        ge=1,
        description="Most connections the MCP HTTP transport keeps open; more "
        "are closed at once (never more than a quarter of the open-file limit).",
    )
    mcp_header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Time an MCP HTTP client has to send a request's "
        "headers, from connecting or from the end of the previous answer.",
    )
    mcp_idle_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="How long an idle keep-alive MCP HTTP connection "
        "stays open between requests (an answer that streams is not idle).",
    )

    @property
    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(
            self.mcp_max_connections, self.mcp_header_timeout_seconds, self.mcp_idle_timeout_seconds
        )
