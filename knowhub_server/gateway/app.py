"""The gateway's Starlette app and the uvicorn server that runs it in a thread, for
`knowhub serve gateway` (alone, reaching the services by address) and `knowhub up`
(next to the gRPC server, in the same process)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import uvicorn
from knowhub import errors
from knowhub.local import read_local_token
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.http import ConnectionLimits, HostPolicy, listen, server_config
from knowhub_server.common.runtime.server import stop_on_signal
from knowhub_server.common.security.auth import LOOPBACK_HOSTS
from knowhub_server.common.security.tls import peer_ca
from knowhub_server.gateway import openapi
from knowhub_server.gateway.config import GatewaySettings
from knowhub_server.gateway.guard import RequestGuard
from knowhub_server.gateway.overview import HubFacts, overview_route
from knowhub_server.gateway.routes import ROUTES
from knowhub_server.gateway.session import (
    COOKIE,
    SECRET_HEADER,
    Sessions,
    login_url,
    mint_login_code,
    request_token,
)
from knowhub_server.gateway.translation import SERVICES, Backend, error_body, http_status

log = logging.getLogger(__name__)

CONSOLE_DIR = Path(__file__).resolve().parent / "console"
# /docs: Swagger UI (vendored, no CDN) over /openapi.json.
API_DOCS_DIR = Path(__file__).resolve().parent / "apidocs"
START_TIMEOUT_SECONDS = 30.0
_HTTP_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
}


def _error_response(error: errors.KnowHubError) -> Response:
    status = http_status(error)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(error), status_code=status, headers=headers)


async def _knowhub_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.KnowHubError)
    if http_status(exc) >= 500:  # the hub's trouble, not the caller's: worth a line
        log.warning(
            "gateway: %s %s: %s %s", request.method, request.url.path, exc.code, exc.message
        )
    return _error_response(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "UNKNOWN")
    return JSONResponse(
        {"error": {"code": code, "message": exc.detail}},
        status_code=exc.status_code,
        headers=exc.headers,
    )


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    log.exception("gateway: %s %s failed", request.method, request.url.path)
    return JSONResponse(
        {"error": {"code": "INTERNAL", "message": "the gateway failed; see its log"}},
        status_code=500,
    )


async def _openapi(_request: Request) -> Response:
    return JSONResponse(openapi.document())


async def _home(request: Request) -> Response:
    """The console; with `?login=<code>`, a sign-in link: the session's cookie, and its
    secret in the fragment of the console's URL (which no server log or Referer carries)."""
    code = request.query_params.get("login")
    if code is None:
        return RedirectResponse("/console/", status_code=302)
    sessions: Sessions = request.app.state.sessions
    cookie, session = sessions.sign_in(code)
    response = RedirectResponse(f"/console/#session={session.secret}", status_code=303)
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=int(sessions.session_seconds),
        path="/",
        httponly=True,
        samesite="strict",
    )
    return response


async def _session_state(request: Request) -> Response:
    """GET /api/session: whether this gateway signs in with links (a local hub) and
    whether the request's session is open."""
    sessions: Sessions = request.app.state.sessions
    try:
        signed_in = request_token(request) is not None
    except errors.Unauthenticated:
        signed_in = False
    return JSONResponse({"local": sessions.local, "signed_in": signed_in})


async def _sign_out(request: Request) -> Response:
    """DELETE /api/session: ends the request's console session."""
    sessions: Sessions = request.app.state.sessions
    cookie = request.cookies.get(COOKIE)
    if cookie:
        sessions.sign_out(cookie, request.headers.get(SECRET_HEADER))
    response = JSONResponse({})
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


LOOPBACK_POLICY = HostPolicy.for_bind("127.0.0.1")


def create_app(
    targets: Mapping[str, str],
    timeout: float,
    tls_ca: bytes | None = None,
    *,
    policy: HostPolicy = LOOPBACK_POLICY,
    local_token: str | None = None,
    own: GatewaySettings | None = None,
    facts: HubFacts | None = None,
) -> Starlette:
    """The gateway; `targets` gives each service's gRPC address, `tls_ca` the CA that
    verifies them when they speak TLS, `policy` the Host and Origin headers it answers,
    `local_token` the hub's local token (local mode), which console sessions act with,
    `facts` the configuration its overview reports."""
    own = own or GatewaySettings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.backend = Backend(targets, timeout, tls_ca)  # channels belong to this loop
        app.state.loop = asyncio.get_running_loop()
        app.state.closing = asyncio.Event()  # set when the gateway stops: streams end
        yield
        await app.state.backend.close()

    routes = [
        Route("/", _home, methods=["GET"]),
        Route("/openapi.json", _openapi, methods=["GET"]),
        Route("/api/session", _session_state, methods=["GET"]),
        Route("/api/session", _sign_out, methods=["DELETE"]),
        Route("/api/overview", overview_route(facts), methods=["GET"]),
        *ROUTES,
        Mount("/console", app=StaticFiles(directory=CONSOLE_DIR, html=True), name="console"),
        Mount("/docs", app=StaticFiles(directory=API_DOCS_DIR, html=True), name="docs"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(RequestGuard, policy=policy)],
        exception_handlers={
            errors.KnowHubError: _knowhub_error,
            HTTPException: _http_error,
            Exception: _unexpected_error,
        },
    )
    app.state.sessions = Sessions(
        local_token, own.gateway_login_seconds, own.gateway_session_seconds
    )
    return app


def hub_address(settings: CommonSettings, port: int) -> str:
    """Where to reach the gRPC server bound to KNOWHUB_HOST on `port`."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def service_targets(settings: CommonSettings) -> dict[str, str]:
    """Each service at KNOWHUB_<SERVICE>_ADDRESS, else the hub at KNOWHUB_HOST:KNOWHUB_PORT;
    the admin service, which every server process hosts, where the knowledge service is."""
    targets = {
        service: getattr(settings, f"{service}_address", None)
        or hub_address(settings, settings.port)
        for service in SERVICES
        if service != "admin"
    }
    return {**targets, "admin": targets["knowledge"]}


class GatewayServer:
    """uvicorn serving the gateway in a thread of its own, with its own event loop."""

    def __init__(
        self, app: Starlette, host: str, port: int, limits: ConnectionLimits | None = None
    ) -> None:
        self.host = host
        self.port = port
        self._app = app
        self._server = uvicorn.Server(
            server_config(
                app,
                limits or GatewaySettings().connection_limits,
                log_level="warning",
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=5,
            )
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> int:
        """Binds (here, so a port in use fails now), starts serving; returns the port."""
        sock = listen(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="knowhub-gateway", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not start on {self.host}:{self.port}")
            self._thread.join(0.01)
        return self.port

    def stop(self) -> None:
        """Ends open streams, lets running calls finish, closes the channels."""
        state = self._app.state
        if self._server.started:
            state.loop.call_soon_threadsafe(state.closing.set)
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(START_TIMEOUT_SECONDS)
            self._thread = None


def _check_binding(settings: CommonSettings, host: str) -> None:
    """Like the gRPC server: without a tokens file, loopback only."""
    if settings.tokens_file is None and host not in LOOPBACK_HOSTS:
        raise ValueError(
            f"refusing to bind the gateway to {host} without tokens: set "
            "KNOWHUB_TOKENS_FILE, or bind 127.0.0.1"
        )


def _policy(own: GatewaySettings, host: str) -> HostPolicy:
    return HostPolicy.for_bind(host, own.gateway_allowed_hosts, own.gateway_allowed_origins)


def _local_token(settings: CommonSettings) -> str | None:
    """The hub's local token when it runs without a tokens file (and shares this data
    directory), for the console."""
    return None if settings.tokens_file else read_local_token(settings.data_dir)


def _listening(gateway: GatewayServer, settings: CommonSettings, own: GatewaySettings) -> str:
    line = (
        f"KnowHub gateway listening on {gateway.url} "
        f"(console {gateway.url}/console/, API docs {gateway.url}/docs/, "
        f"OpenAPI {gateway.url}/openapi.json)"
    )
    sign_in = sign_in_line(gateway.url, settings, own)
    return f"{line}\n{sign_in}" if sign_in else line


def console_link(settings: CommonSettings, url: str | None = None) -> str:
    """`knowhub console-link`: a fresh sign-in link to the console of the local hub of
    `settings.data_dir`, at `url` (default: the gateway's settings)."""
    own = GatewaySettings()
    if url is None:
        host = own.gateway_host
        url = f"http://{f'[{host}]' if ':' in host else host}:{own.gateway_port}"
    line = sign_in_line(url, settings, own)
    if line is None:
        raise ValueError(
            f"no local token in {settings.data_dir}: a hub with a tokens file "
            "signs in with a token (paste it into the console), and a local "
            "hub writes its token at its first start"
        )
    return line


def sign_in_line(url: str, settings: CommonSettings, own: GatewaySettings) -> str | None:
    """The console's one-time sign-in link for a local hub (None with a tokens file)."""
    token = _local_token(settings)
    if token is None:
        return None
    code = mint_login_code(token, own.gateway_login_seconds)
    minutes = max(1, round(own.gateway_login_seconds / 60))
    return (
        f"Open the console: {login_url(url, code)} (works once, within {minutes} min; "
        "`knowhub console-link` prints another)"
    )


def serve_gateway(
    settings: CommonSettings, host: str | None = None, port: int | None = None
) -> int:
    """`knowhub serve gateway`: the gateway alone until SIGINT or SIGTERM."""
    own = GatewaySettings()
    host = host or own.gateway_host
    port = own.gateway_port if port is None else port
    _check_binding(settings, host)
    targets = service_targets(settings)
    app = create_app(
        targets,
        own.gateway_timeout_seconds,
        peer_ca(settings),
        policy=_policy(own, host),
        local_token=_local_token(settings),
        own=own,
        facts=HubFacts.of(settings),
    )
    gateway = GatewayServer(app, host, port, own.connection_limits)
    stop = stop_on_signal()
    gateway.start()
    print(_listening(gateway, settings, own), flush=True)
    print("services: " + ", ".join(f"{s} at {a}" for s, a in targets.items()), flush=True)
    stop.wait()
    gateway.stop()
    print("KnowHub gateway stopped", flush=True)
    return 0


def hub_gateway_port(settings: CommonSettings, port: int | None = None) -> int:
    """The port of the gateway `knowhub up` starts: `port` when given, else
    KNOWHUB_GATEWAY_PORT; a free one beside a hub on a free port (tests, benchmarks)."""
    own = GatewaySettings()
    if port is not None:
        return port
    if "gateway_port" not in own.model_fields_set and settings.port == 0:
        return 0
    return own.gateway_port


class HubGateway:
    """The gateway `knowhub up` runs beside its gRPC server (see serve_forever)."""

    def __init__(self, settings: CommonSettings, port: int | None = None) -> None:
        own = GatewaySettings()
        _check_binding(settings, own.gateway_host)  # before the hub starts
        self._settings = settings
        self._own = own
        self._host = own.gateway_host
        self._port = hub_gateway_port(settings, port)
        self._gateway: GatewayServer | None = None

    @staticmethod
    def enabled() -> bool:
        return GatewaySettings().gateway_enabled

    def start(self, hub_port: int) -> str:
        targets = dict.fromkeys(SERVICES, hub_address(self._settings, hub_port))
        app = create_app(
            targets,
            self._own.gateway_timeout_seconds,
            peer_ca(self._settings),
            policy=_policy(self._own, self._host),
            local_token=_local_token(self._settings),
            own=self._own,
            facts=HubFacts.of(self._settings),
        )
        self._gateway = GatewayServer(app, self._host, self._port, self._own.connection_limits)
        self._gateway.start()
        return _listening(self._gateway, self._settings, self._own)

    def stop(self) -> None:
        if self._gateway is not None:
            self._gateway.stop()
