"""What every request to MCP over HTTP meets after the Host and Origin checks: a bearer
token the hub knows (else HTTP 401 with `WWW-Authenticate`, so a client can ask its user
for one), and sessions that belong to the token that opened them.

The MCP library names a session by the `mcp-session-id` it hands out, and would serve (or
end, with DELETE) any session to whoever sends its id. Here a request naming a session
opened with another token is answered as if the session did not exist.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

import anyio.to_thread
from knowhub import KnowHub, errors
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.security.auth import bearer_token

SESSION_HEADER = "mcp-session-id"
# How long the hub's word that a token is valid is kept, and how many sessions are known.
TOKEN_CHECK_SECONDS = 60.0
MAX_SESSIONS = 10_000


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _unauthorized(message: str, error: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}},
        status_code=401,
        headers={"WWW-Authenticate": f'Bearer realm="knowhub", error="{error}"'},
    )


def _no_session() -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}},
        status_code=404,
    )


class TokenSessions:
    """ASGI middleware: requests need a valid bearer token; a session serves only the
    token that opened it."""

    def __init__(self, app: ASGIApp, hub_for: Callable[[str], KnowHub]) -> None:
        self.app = app
        self.hub_for = hub_for  # an SDK client calling with the token
        self._valid: dict[bytes, float] = {}
        self._owners: OrderedDict[str, bytes] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            token = bearer_token(headers.get("authorization"))
        except ServiceError as error:
            await _unauthorized(f"UNAUTHENTICATED: {error.message}", "invalid_request")(
                scope, receive, send
            )
            return
        if not token:
            await _unauthorized(
                "UNAUTHENTICATED: missing bearer token: send 'Authorization: Bearer <token>'",
                "invalid_request",
            )(scope, receive, send)
            return
        digest = _digest(token)
        if not await self._known(token, digest):
            await _unauthorized("UNAUTHENTICATED: unknown bearer token", "invalid_token")(
                scope, receive, send
            )
            return
        session = headers.get(SESSION_HEADER)
        if session is not None:
            if self._owners.get(session) != digest:
                await _no_session()(scope, receive, send)
                return
            if scope["method"] == "DELETE":
                self._owners.pop(session, None)
        await self.app(scope, receive, self._recording(send, digest, session))

    async def _known(self, token: str, digest: bytes) -> bool:
        now = time.monotonic()
        if self._valid.get(digest, 0.0) > now:
            return True
        if not await anyio.to_thread.run_sync(_hub_knows, self.hub_for(token)):
            return False
        self._valid = {d: t for d, t in self._valid.items() if t > now}
        self._valid[digest] = now + TOKEN_CHECK_SECONDS
        return True

    def _recording(self, send: Send, digest: bytes, asked: str | None) -> Send:
        """`send` that notes the owner of a session the library opens in its answer."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and asked is None:
                opened = MutableHeaders(scope=message).get(SESSION_HEADER)
                if opened:
                    self._owners[opened] = digest
                    while len(self._owners) > MAX_SESSIONS:
                        self._owners.popitem(last=False)
            await send(message)

        return sending


def _hub_knows(client: KnowHub) -> bool:
    """Whether the hub knows the client's token (one small read); True also when it
    cannot say (the call itself will tell why)."""
    try:
        client.knowledge.list(limit=1)
    except errors.Unauthenticated:
        return False
    except errors.KnowHubError:
        return True
    return True
