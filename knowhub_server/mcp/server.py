"""The MCP server: lists the tools, runs each call through the SDK as the right caller,
over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from importlib.metadata import version
from typing import Any

import anyio
import grpc
import mcp_types as types
import uvicorn
from knowhub import KnowHub
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.runtime.http import HostGuard, HostPolicy, listen, server_config
from knowhub_server.common.runtime.rpc import LOCAL_MODE_TRAILER
from knowhub_server.common.security.auth import LOOPBACK_HOSTS, bearer_token
from knowhub_server.mcp import tools
from knowhub_server.mcp.config import McpSettings
from knowhub_server.mcp.http_guard import TokenSessions

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
PROBE_SECONDS = 5.0
INSTRUCTIONS = (
    "KnowHub is the knowledge base agents share. Search it (knowledge_search) before a "
    "task, report whether what you used helped (knowledge_update, knowledge_batch_update), "
    "and save what you learned (knowledge_save; code, credentials and cookies with "
    "resource_save, referenced by resource_ids)."
)


class HubClients:
    """One SDK client per bearer token, so calls of several HTTP callers each go to the
    hub as their own principal. Least recently used clients beyond `keep` are dropped
    (their channels close once no call uses them)."""

    def __init__(
        self,
        target: str,
        *,
        knowledge: str | None = None,
        resource: str | None = None,
        keep: int = 64,
    ) -> None:
        self._target, self._knowledge, self._resource = target, knowledge, resource
        self._keep = keep
        self._clients: OrderedDict[str | None, KnowHub] = OrderedDict()

    def for_token(self, token: str | None) -> KnowHub:
        """A client calling with `token`; None: the token the SDK finds itself
        (KNOWHUB_TOKEN, else a local hub's token), for the stdio transport only."""
        client = self._clients.pop(token, None) or KnowHub(
            self._target, token=token, knowledge=self._knowledge, resource=self._resource
        )
        self._clients[token] = client
        while len(self._clients) > self._keep:
            self._clients.popitem(last=False)
        return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


def build_server(hubs: HubClients, stdio_token: str | None) -> Server[Any]:
    """The MCP server. Over stdio every call uses `stdio_token` (None: the SDK's own
    choice); over HTTP each call uses the bearer token its request carries (none without
    the header: the server's own token and a local hub's are never lent)."""

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.TOOLS)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if tools.input_schema(params.name) is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}")
        request = ctx.request
        token = stdio_token
        if isinstance(request, Request):
            try:  # as the gateway does: a malformed header is refused, never sent on
                token = bearer_token(request.headers.get("authorization")) or ""
            except ServiceError as error:
                return tools.error_result(f"{error.code.name}: {error.message}")
        kh = hubs.for_token(token)
        return await anyio.to_thread.run_sync(tools.call, kh, params.name, params.arguments or {})

    return Server(
        "knowhub",
        version=version("knowhub"),
        instructions=INSTRUCTIONS,
        get_tool_input_schema=tools.input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(settings: McpSettings, hubs: HubClients) -> None:
    """Serves one client on stdin/stdout until it closes stdin."""
    server = build_server(hubs, settings.token)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run)


def serve_http(settings: McpSettings, hubs: HubClients) -> None:
    """Serves streamable HTTP on settings.mcp_host:mcp_port at /mcp until interrupted.
    Beyond loopback only in front of a hub that requires tokens; requests must name
    this server in Host and, from a browser, come from an allowed Origin."""
    if settings.mcp_host not in LOOPBACK_HOSTS:
        problem = open_hub_problem(settings.target)
        if problem:
            raise ValueError(
                f"refusing to bind the MCP server to {settings.mcp_host}: {problem}; bind 127.0.0.1"
            )
    sock = listen(settings.mcp_host, settings.mcp_port)
    port = sock.getsockname()[1]
    server = build_server(hubs, stdio_token=None)
    policy = HostPolicy.for_bind(
        settings.mcp_host, settings.mcp_allowed_hosts, settings.mcp_allowed_origins
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=settings.mcp_host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    log.info(
        "MCP server for hub %s on http://%s:%d%s",
        settings.target,
        settings.mcp_host,
        port,
        MCP_PATH,
    )
    guarded = HostGuard(TokenSessions(app, hubs.for_token), policy, "KNOWHUB_MCP")
    uvicorn.Server(server_config(guarded, settings.connection_limits, lifespan="on")).run(
        sockets=[sock]
    )


def open_hub_problem(target: str) -> str:
    """Why a hub may not be served beyond loopback ("" when it may): it takes calls
    without a token, runs in local mode (no tokens file), or cannot be asked."""
    with grpc.insecure_channel(target) as channel:
        stub = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
        try:
            stub.ListKnowledge(
                knowledge_pb2.ListKnowledgeRequest(page_size=1), timeout=PROBE_SECONDS
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNAUTHENTICATED:
                return (
                    f"cannot tell whether the hub at {target} requires tokens "
                    f"({error.code().name}: {error.details()}); start it first"
                )
            # grpc's stubs type trailers as objects with bytes values; they are (key, str)
            # tuples for text keys
            if LOCAL_MODE_TRAILER in tuple(error.trailing_metadata() or ()):  # type: ignore[comparison-overlap]
                return f"the hub at {target} runs without a tokens file (local mode)"
            return ""
    return f"the hub at {target} answers calls without a token"
