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
from typing import Protocol, TypeVar

import grpc

from knowhub_server.common.auth import Authenticator, Principal
from knowhub_server.common.errors import ServiceError

log = logging.getLogger("knowhub.rpc")

Request = TypeVar("Request")
Response = TypeVar("Response")


class HasAuthenticator(Protocol):
    authenticator: Authenticator


class HasStopSignal(HasAuthenticator, Protocol):
    stopping: threading.Event  # set when the server begins to stop


Handler = Callable[[HasAuthenticator, Request, Principal], Response]
GrpcHandler = Callable[[HasAuthenticator, Request, grpc.ServicerContext], Response]
Live = Callable[[], bool]
StreamHandler = Callable[[HasStopSignal, Request, Principal, Live], Iterator[Response]]
GrpcStreamHandler = Callable[[HasStopSignal, Request, grpc.ServicerContext],
                             Iterator[Response]]


def unary(method: Handler) -> GrpcHandler:
    """Adapts `method(self, request, principal)` to a gRPC unary handler."""

    @functools.wraps(method)
    def handle(self: HasAuthenticator, request: Request, context: grpc.ServicerContext) -> Response:
        try:
            principal = self.authenticator.authenticate(context.invocation_metadata())
            if principal.delegation is not None:
                principal.delegation.check_method(method.__name__)
            response = method(self, request, principal)
        except ServiceError as error:
            context.abort(error.code, error.message)
        except Exception:
            incident = uuid.uuid4().hex[:12]
            log.exception("%s failed unexpectedly (incident %s)", method.__name__, incident)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")
        return response

    return handle


def server_streaming(method: StreamHandler) -> GrpcStreamHandler:
    """Adapts a generator `method(self, request, principal, live)` to a gRPC
    server-streaming handler. `live()` turns false once the caller has cancelled or the
    server is stopping; the method checks it between waits and returns, which ends the
    stream cleanly."""

    @functools.wraps(method)
    def handle(self: HasStopSignal, request: Request,
               context: grpc.ServicerContext) -> Iterator[Response]:
        def live() -> bool:
            return context.is_active() and not self.stopping.is_set()

        try:
            principal = self.authenticator.authenticate(context.invocation_metadata())
            if principal.delegation is not None:
                principal.delegation.check_method(method.__name__)
            yield from method(self, request, principal, live)
        except Exception as error:
            if not live():  # the caller left or the server is closing its stores: no one to tell
                log.debug("%s ended early: %r", method.__name__, error)
                return
            if isinstance(error, ServiceError):
                context.abort(error.code, error.message)
            incident = uuid.uuid4().hex[:12]
            log.exception("%s failed unexpectedly (incident %s)", method.__name__, incident)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")

    return handle
