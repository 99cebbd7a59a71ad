"""The HTTP servers' (the gateway's, MCP's over HTTP) listening socket, and which Host
and Origin headers they accept.

Every local port is reachable by any web page in the user's browser. A page on another
origin can send requests (a form post, a `no-cors` fetch) though it cannot read the
answers; through DNS rebinding (its own name re-pointed at 127.0.0.1) it can even read
them, but its requests then carry its own name in `Host`. So a server answers only
requests whose Host is one of its own addresses, and whose Origin, when a browser sends
one, is this server itself or an origin the settings allow.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from knowhub_server.common.auth import LOOPBACK_HOSTS

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
        raise RuntimeError(f"cannot listen on {host}:{port}: {exc} (is the port in use?)") \
            from exc
    return sock


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
    def for_bind(cls, bind_host: str, hosts: list[str] | tuple[str, ...] = (),
                 origins: list[str] | tuple[str, ...] = ()) -> HostPolicy:
        if bind_host in LOOPBACK_HOSTS:
            names = frozenset(LOOPBACK_NAMES)
        elif bind_host in WILDCARD_HOSTS:
            names = frozenset()
        else:
            names = frozenset({_bracketed(bind_host)})
        return cls(names, frozenset(h.lower() for h in hosts),
                   frozenset(o.lower().rstrip("/") for o in origins))

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
        return name in self.hosts or (given_port is not None
                                      and f"{name}:{given_port}" in self.hosts)

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

    def refusal(self, host: str | None, origin: str | None, port: int,
                settings: str) -> tuple[int, str] | None:
        """The HTTP status and message refusing a request with these headers (None: it
        is not refused): 421 for a Host that is not this server, 403 for an Origin that
        may not call it. `settings` names the settings that widen what is accepted
        (KNOWHUB_GATEWAY, KNOWHUB_MCP)."""
        if not self.host_allowed(host, port):
            return 421, (f"Host: {(host or '')[:SHOWN]!r} is not an address of this server "
                         f"({settings}_ALLOWED_HOSTS)")
        if not self.origin_allowed(origin, host, port):
            return 403, (f"Origin: {(origin or '')[:SHOWN]!r} may not call this server "
                         f"({settings}_ALLOWED_ORIGINS)")
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
                response = JSONResponse({"error": {"code": "PERMISSION_DENIED",
                                                   "message": message}}, status_code=status)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def request_refusal(policy: HostPolicy, scope: Scope,
                    settings: str) -> tuple[int, str] | None:
    """The status and message refusing this HTTP request (logged), or None."""
    headers = Headers(scope=scope)
    port = (scope.get("server") or ("", 0))[1]
    refused = policy.refusal(headers.get("host"), headers.get("origin"), port, settings)
    if refused is not None:
        log.warning("refused %s %s: %s", scope["method"], scope["path"], refused[1])
    return refused
