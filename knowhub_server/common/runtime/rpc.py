"""The wrappers every servicer method goes through: `unary`, and `server_streaming` for
methods that stream their answer.

They authenticate the caller, call the method with the principal, and turn a
`ServiceError` into its gRPC status. Anything else is a server bug: it is logged with
its traceback and the caller gets INTERNAL with an incident id to quote. Each call's
code and time are logged and counted by the server's interceptor (observe.py).
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import NoReturn, Protocol, TypeVar

import grpc

from knowhub_server.common.base.errors import Busy, InvalidArgument, ServiceError, Unauthenticated
from knowhub_server.common.security.auth import Authenticator, Principal

log = logging.getLogger("knowhub.rpc")

Request = TypeVar("Request")
Response = TypeVar("Response")


class HasAuthenticator(Protocol):
    authenticator: Authenticator


class HasStopSignal(HasAuthenticator, Protocol):
    stopping: threading.Event  # set when the server begins to stop


# The servicer a wrapped method belongs to: generic, so each servicer's own methods fit.
Servicer = TypeVar("Servicer", bound=HasAuthenticator)
StreamServicer = TypeVar("StreamServicer", bound=HasStopSignal)

Handler = Callable[[Servicer, Request, Principal], Response]
GrpcHandler = Callable[[Servicer, Request, grpc.ServicerContext], Response]
Live = Callable[[], bool]
StreamHandler = Callable[[StreamServicer, Request, Principal, Live], Iterator[Response]]
GrpcStreamHandler = Callable[[StreamServicer, Request, grpc.ServicerContext], Iterator[Response]]


# A caller's error message at most this long: it travels in gRPC metadata (8 KB in all by
# default), and a message repeating a huge input would otherwise become RESOURCE_EXHAUSTED.
MESSAGE_MAX = 2000
# Trailing metadata of an UNAUTHENTICATED answer from a hub in local mode (no tokens file),
# so a client can tell (`knowhub mcp` refuses to serve such a hub beyond loopback).
LOCAL_MODE_TRAILER = ("knowhub-auth-mode", "local")


class Undecodable:
    """A request that arrived but could not be decoded (see common/runtime/server.py)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _decoded(request: object) -> None:
    if isinstance(request, Undecodable):
        raise InvalidArgument(
            "request",
            f"is not a message of this method "
            f"({request.problem[:200]}); nesting is limited to 100 levels",
        )


# Exceptions that are not failures of a call: the process or the generator is ending.
_NOT_FAILURES = (KeyboardInterrupt, SystemExit, GeneratorExit)


def _refuse(self: HasAuthenticator, context: grpc.ServicerContext, error: ServiceError) -> NoReturn:
    if isinstance(error, Unauthenticated) and self.authenticator.local_mode:
        context.set_trailing_metadata((LOCAL_MODE_TRAILER,))
    if isinstance(error, Busy):
        context.set_trailing_metadata(error.trailing_metadata)
    message = error.message
    if len(message) > MESSAGE_MAX:
        message = message[: MESSAGE_MAX - 1] + "…"
    context.abort(error.code, message)


def _fail(method: Callable[..., object], context: grpc.ServicerContext) -> NoReturn:
    """INTERNAL for a server bug (including a panic of the engine, which Python raises as
    a BaseException), logged with an incident id the caller can quote."""
    incident = uuid.uuid4().hex[:12]
    log.exception("%s failed unexpectedly (incident %s)", method.__name__, incident)
    context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")


def unary(
    method: Handler[Servicer, Request, Response],
) -> GrpcHandler[Servicer, Request, Response]:
    """Adapts `method(self, request, principal)` to a gRPC unary handler."""

    @functools.wraps(method)
    def handle(self: Servicer, request: Request, context: grpc.ServicerContext) -> Response:
        try:
            principal = self.authenticator.authenticate(context.invocation_metadata())
            if principal.delegation is not None:
                principal.delegation.check_method(method.__name__)
            _decoded(request)
            return method(self, request, principal)
        except ServiceError as error:
            _refuse(self, context, error)
        except BaseException as error:
            if isinstance(error, _NOT_FAILURES):
                raise
            _fail(method, context)

    return handle


def server_streaming(
    method: StreamHandler[StreamServicer, Request, Response],
) -> GrpcStreamHandler[StreamServicer, Request, Response]:
    """Adapts a generator `method(self, request, principal, live)` to a gRPC
    server-streaming handler. `live()` turns false once the caller has cancelled or the
    server is stopping; the method checks it between waits and returns, which ends the
    stream cleanly."""

    @functools.wraps(method)
    def handle(
        self: StreamServicer, request: Request, context: grpc.ServicerContext
    ) -> Iterator[Response]:
        def live() -> bool:
            return context.is_active() and not self.stopping.is_set()

        try:
            principal = self.authenticator.authenticate(context.invocation_metadata())
            if principal.delegation is not None:
                principal.delegation.check_method(method.__name__)
            _decoded(request)
            yield from method(self, request, principal, live)
        except BaseException as error:
            if isinstance(error, _NOT_FAILURES):
                raise
            if not live():  # the caller left or the server is closing its stores: no one to tell
                log.debug("%s ended early: %r", method.__name__, error)
                return
            if isinstance(error, ServiceError):
                _refuse(self, context, error)
            _fail(method, context)

    return handle
