"""`knowhub mcp`: the MCP server's command-line options."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from knowhub_server.common.runtime.cli_support import add_target_option, invalid_settings

if TYPE_CHECKING:
    from knowhub_server.common.base.config import CommonSettings


def add_command(commands: Any) -> None:
    """Adds `mcp` to the `knowhub` command's subcommands."""
    mcp = commands.add_parser(
        "mcp", help="serve the agent tools over MCP (stdio, or streamable HTTP)"
    )
    mcp.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default: one client that started this process) or streamable HTTP at /mcp",
    )
    mcp.add_argument(
        "--host",
        dest="mcp_host",
        help="HTTP address to bind (default $KNOWHUB_MCP_HOST or 127.0.0.1)",
    )
    mcp.add_argument(
        "--port", dest="mcp_port", type=int, help="HTTP port (default $KNOWHUB_MCP_PORT or 8931)"
    )
    add_target_option(mcp)
    mcp.set_defaults(run=_run)


def _run(common: CommonSettings, args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from knowhub_server.mcp.config import McpSettings
    from knowhub_server.mcp.server import HubClients, serve_http, serve_stdio

    overrides = {
        name: getattr(args, name)
        for name in ("mcp_host", "mcp_port", "target")
        if getattr(args, name) is not None
    }
    try:
        settings = McpSettings(**overrides)
    except ValidationError as exc:
        print(f"knowhub: {invalid_settings(exc)}", file=sys.stderr)
        return 2
    hubs = HubClients(
        settings.target, knowledge=common.knowledge_address, resource=common.resource_address
    )
    try:
        (serve_http if args.transport == "http" else serve_stdio)(settings, hubs)
    finally:
        hubs.close()
    return 0
