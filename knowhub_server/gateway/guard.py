"""What every HTTP request meets before a route: the Host and Origin checks, JSON-only
writes, the body size limit, and the security headers of every answer.

A web page on another origin can send a "simple" cross-origin request (a form post with
`Content-Type: text/plain`, a `no-cors` fetch) without asking first; requiring
`application/json` makes any such write a preflighted request, which this gateway never
approves (it sends no CORS headers). The Host check stops DNS rebinding; the Origin check
stops pages of other origins outright.
"""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knowhub_server.common.runtime.http import SHOWN, HostPolicy, request_refusal
from knowhub_server.gateway.translation import MAX_BODY_BYTES, BodyTooLarge

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The console loads its own scripts and styles only, and no page may frame it.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _refusal(status: int, message: str, *, code: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class RequestGuard:
    """ASGI middleware in front of the gateway's routes."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send, scope["path"])
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, _limited(receive), send)

    def _refusal(self, scope: Scope) -> Response | None:
        refused = request_refusal(self.policy, scope, "KNOWHUB_GATEWAY")
        if refused is not None:
            return _refusal(*refused, code="PERMISSION_DENIED")
        headers = Headers(scope=scope)
        if scope["method"] in SAFE_METHODS:
            return None
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            return _refusal(
                415,
                f"Content-Type: must be application/json (got {media_type[:SHOWN] or 'none'!r})",
                code="INVALID_ARGUMENT",
            )
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            return _refusal(
                413, f"body: larger than {MAX_BODY_BYTES} bytes", code="RESOURCE_EXHAUSTED"
            )
        return None


def _with_security_headers(send: Send, path: str) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            if path.startswith("/api/"):  # answers may hold secrets: never kept in a cache
                headers.setdefault("Cache-Control", "no-store")
        await send(message)

    return sending


def _limited(receive: Receive) -> Receive:
    """`receive` that fails once the body passes MAX_BODY_BYTES (a body sent in chunks
    without a Content-Length), so no more than that is ever held."""
    received = 0

    async def receiving() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > MAX_BODY_BYTES:
                raise BodyTooLarge(
                    "RESOURCE_EXHAUSTED", f"body: larger than {MAX_BODY_BYTES} bytes"
                )
        return message

    return receiving
