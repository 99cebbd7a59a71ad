"""Settings of `knowhub mcp`, read from `KNOWHUB_*` environment variables."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.config import HubSettings
from knowhub_server.common.listing import CommaList


class McpSettings(HubSettings):
    """Which hub the MCP server calls, as whom, and where its HTTP transport listens."""


    target: str = Field("127.0.0.1:50051", min_length=1,
                        description="host:port (or dns:/// target) of the hub the MCP "
                                    "server calls.")
    # Printable ASCII, no spaces (as gRPC metadata and the gateway take it); empty: none.
    token: str | None = Field(None, pattern=r"^[!-~]*$",
                              description="Bearer token the stdio MCP server calls the hub with.")
    mcp_host: str = Field("127.0.0.1", min_length=1,
                          description="Address the MCP HTTP transport binds to.")
    mcp_port: int = Field(8931, ge=0, le=65535, description="Port of the MCP HTTP transport.")
    mcp_allowed_hosts: CommaList = Field(
        default_factory=list, description="Further Host names the MCP HTTP transport "
        "answers to, comma-separated: `name` (any port) or `name:port`. It always answers "
        "to its own address (every loopback name on loopback).")
    mcp_allowed_origins: CommaList = Field(
        default_factory=list, description="Origins of web pages that may call the MCP "
        "HTTP transport from a browser, comma-separated (e.g. a browser-based MCP client's "
        "`http://localhost:6274`); any other origin is refused.")
