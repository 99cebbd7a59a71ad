"""The HTTP servers' (the gateway's, MCP's over HTTP) listening socket, which Host and
Origin headers they accept, and how many connections they hold and for how long.

Every local port is reachable by any web page in the user's browser. A page on another
origin can send requests (a form post, a `no-cors` fetch) though it cannot read the
answers; through DNS rebinding (its own name re-pointed at 127.0.0.1) it can even read
them, but its requests then carry its own name in `Host`. So a server answers only
requests whose Host is one of its own addresses, and whose Origin, when a browser sends
one, is this server itself or an origin the settings allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from knowhub_server.common.security.auth import LOOPBACK_HOSTS

log = logging.getLogger(__name__)

SHOWN = 200  # characters of a refused header an error repeats
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "[::]", ""})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (port 0: a free one); RuntimeError if it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
    # say so, and with Nagle on every answer waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise RuntimeError(f"cannot listen on {host}:{port}: {exc} (is the port in use?)") from exc
    return sock


def check_free(host: str, port: int, what: str, option: str) -> None:
    """RuntimeError, saying what to do, if host:port cannot be listened on now (port 0
    always can): checked before a command creates anything."""
    if port == 0:
        return
    try:
        listen(host, port).close()
    except RuntimeError as exc:
        raise RuntimeError(
            f"{what}: {exc}; stop what holds it, or choose another port ({option})"
        ) from None


def _bracketed(host: str) -> str:
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def split_host(value: str) -> tuple[str, int | None] | None:
    """(host, port or None) of a Host header value or an origin's netloc; None if it is
    malformed."""
    try:
        parts = urlsplit(f"//{value}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.password is not None:
        return None
    return _bracketed(parts.hostname), port


@dataclass(frozen=True)
class HostPolicy:
    """Accepted Host and Origin headers of a server bound to one address.

    `names`: host names accepted on the server's own port (its address; every loopback
    name for a loopback address). `hosts`: further Host values from the settings,
    `name` (any port) or `name:port`. `origins`: further Origin values from the settings.
    A wildcard address with no `hosts` set accepts any Host (it requires tokens, and a
    page that re-points a name at it has none) and only its own origin."""

    names: frozenset[str]
    hosts: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()

    @classmethod
    def for_bind(
        cls,
        bind_host: str,
        hosts: list[str] | tuple[str, ...] = (),
        origins: list[str] | tuple[str, ...] = (),
    ) -> HostPolicy:
        if bind_host in LOOPBACK_HOSTS:
            names = frozenset(LOOPBACK_NAMES)
        elif bind_host in WILDCARD_HOSTS:
            names = frozenset()
        else:
            names = frozenset({_bracketed(bind_host)})
        return cls(
            names,
            frozenset(h.lower() for h in hosts),
            frozenset(o.lower().rstrip("/") for o in origins),
        )

    @property
    def any_host(self) -> bool:
        return not self.names and not self.hosts

    def host_allowed(self, host: str | None, port: int) -> bool:
        """Whether a request with this Host header reached the server on `port` by one
        of its own names."""
        if self.any_host:
            return True
        return self._names_this_server(split_host(host or ""), port)

    def _names_this_server(self, found: tuple[str, int | None] | None, port: int) -> bool:
        if found is None:
            return False
        name, given_port = found
        if name in self.names and (given_port or 80) == port:
            return True
        return name in self.hosts or (
            given_port is not None and f"{name}:{given_port}" in self.hosts
        )

    def origin_allowed(self, origin: str | None, host: str | None, port: int) -> bool:
        """Whether a browser's Origin is this server itself or an allowed origin.
        Requests without an Origin (curl, the SDK, a page's own same-origin GET) pass."""
        if origin is None:
            return True
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or parts.path or not parts.netloc:
            return False  # "null" (a sandboxed frame, a file) among others
        found = split_host(parts.netloc)
        if self.any_host:  # it answers to any name: only to its own origin, as asked for
            return found is not None and found == split_host(host or "")
        return self._names_this_server(found, port)

    def refusal(
        self, host: str | None, origin: str | None, port: int, settings: str
    ) -> tuple[int, str] | None:
        """The HTTP status and message refusing a request with these headers (None: it
        is not refused): 421 for a Host that is not this server, 403 for an Origin that
        may not call it. `settings` names the settings that widen what is accepted
        (KNOWHUB_GATEWAY, KNOWHUB_MCP)."""
        if not self.host_allowed(host, port):
            return 421, (
                f"Host: {(host or '')[:SHOWN]!r} is not an address of this server "
                f"({settings}_ALLOWED_HOSTS)"
            )
        if not self.origin_allowed(origin, host, port):
            return 403, (
                f"Origin: {(origin or '')[:SHOWN]!r} may not call this server "
                f"({settings}_ALLOWED_ORIGINS)"
            )
        return None


class HostGuard:
    """ASGI middleware answering 403 to requests `policy` refuses."""

    def __init__(self, app: ASGIApp, policy: HostPolicy, settings: str) -> None:
        self.app = app
        self.policy = policy
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = request_refusal(self.policy, scope, self.settings)
            if refused is not None:
                status, message = refused
                response = JSONResponse(
                    {"error": {"code": "PERMISSION_DENIED", "message": message}}, status_code=status
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def request_refusal(policy: HostPolicy, scope: Scope, settings: str) -> tuple[int, str] | None:
    """The status and message refusing this HTTP request (logged), or None."""
    headers = Headers(scope=scope)
    port = (scope.get("server") or ("", 0))[1]
    refused = policy.refusal(headers.get("host"), headers.get("origin"), port, settings)
    if refused is not None:
        log.warning("refused %s %s: %s", scope["method"], scope["path"], refused[1])
    return refused


# ---- Connections ---------------------------------------------------------------------------

# Of the process's open-file limit, the share one HTTP server's connections may hold: the
# rest stays for the gRPC server beside it, its stores and the other HTTP server.
FD_SHARE = 4
_limit_raised = False


def raise_open_files_limit() -> int:
    """Raises this process's soft limit of open files to its hard limit (once); returns the
    soft limit."""
    global _limit_raised
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if not _limit_raised:
        _limit_raised = True
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        if target > soft:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                soft = target
    return soft


def connection_cap(requested: int) -> int:
    """`requested`, or less when the open-file limit leaves less than that to one server."""
    budget = max(16, raise_open_files_limit() // FD_SHARE)
    if requested > budget:
        log.warning(
            "at most %d HTTP connections (of %d asked): the open-file limit leaves "
            "no more beside the gRPC server",
            budget,
            requested,
        )
    return min(requested, budget)


@dataclass(frozen=True)
class ConnectionLimits:
    """How an HTTP server treats connections: at most `max_connections` open (more are
    closed at once), `header_seconds` to send a request's headers (from the connect, or
    from the end of the previous answer), `idle_seconds` kept open between requests."""

    max_connections: int
    header_seconds: float
    idle_seconds: float


def guarded_h11(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with `limits`: uvicorn itself times out idle keep-alive
    connections only, so a client that connects and sends nothing, or sends its headers a
    byte at a time, would hold its socket (a file descriptor) for ever."""
    limit = connection_cap(limits.max_connections)

    class GuardedH11Protocol(H11Protocol):
        cap = limit
        _header_timer: asyncio.TimerHandle | None = None
        _waiting_for: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > self.cap:
                transport.abort()  # before any byte is read: it costs nothing more
                return
            self._await_request()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not self._waiting_for:
                self._stop_timer()  # a request's headers arrived

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timer()
            super().connection_lost(exc)

        def _await_request(self) -> None:
            self._stop_timer()
            self._waiting_for = self.cycle
            self._header_timer = self.loop.call_later(limits.header_seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._header_timer = None
            waiting = self.cycle is self._waiting_for and (
                self.cycle is None or self.cycle.response_complete
            )
            if waiting and not self.transport.is_closing():
                self.transport.abort()

        def _stop_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

    return GuardedH11Protocol


def server_config(app: ASGIApp, limits: ConnectionLimits, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration of an HTTP server of the hub, with `limits`. The backlog
    is also how many connections asyncio accepts at once before their protocols (which
    close those beyond the cap) run: a quarter of the cap keeps a flood's burst of
    accepted sockets within the server's share of descriptors."""
    protocol = guarded_h11(limits)
    backlog = min(2048, max(16, connection_cap(limits.max_connections) // 4))
    # uvicorn types the keep-alive as int; it passes it on to asyncio, which takes a float
    return uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=limits.idle_seconds,  # type: ignore[arg-type]
        backlog=backlog,
        log_config=None,
        **options,
    )
