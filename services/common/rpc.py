"""The wrapper every unary servicer method goes through.

It authenticates the caller, calls the method with the principal, and turns a
`ServiceError` into its gRPC status. Anything else is a server bug: it is logged with
its traceback and the caller gets INTERNAL with an incident id to quote.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable
from typing import Protocol, TypeVar

import grpc

from services.common.auth import Authenticator, Principal
from services.common.errors import ServiceError

log = logging.getLogger("knowhub.rpc")

Request = TypeVar("Request")
Response = TypeVar("Response")


class HasAuthenticator(Protocol):
    authenticator: Authenticator


Handler = Callable[[HasAuthenticator, Request, Principal], Response]
GrpcHandler = Callable[[HasAuthenticator, Request, grpc.ServicerContext], Response]


def unary(method: Handler) -> GrpcHandler:
    """Adapts `method(self, request, principal)` to a gRPC unary handler."""

    @functools.wraps(method)
    def handle(self: HasAuthenticator, request: Request, context: grpc.ServicerContext) -> Response:
        started = time.perf_counter()
        try:
            principal = self.authenticator.authenticate(context.invocation_metadata())
            response = method(self, request, principal)
        except ServiceError as error:
            _log_call(method.__name__, error.code, started, error.message)
            context.abort(error.code, error.message)
        except Exception:
            incident = uuid.uuid4().hex[:12]
            log.exception("%s failed unexpectedly (incident %s)", method.__name__, incident)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")
        _log_call(method.__name__, grpc.StatusCode.OK, started)
        return response

    return handle


def _log_call(name: str, code: grpc.StatusCode, started: float, detail: str = "") -> None:
    if log.isEnabledFor(logging.DEBUG):
        elapsed_ms = (time.perf_counter() - started) * 1000
        log.debug("rpc=%s code=%s ms=%.2f %s", name, code.name, elapsed_ms, detail)
