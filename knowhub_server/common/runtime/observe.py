"""The server interceptor that observes every RPC: it counts and times the call by method
and status code (metrics.py), and marks the thread with the call's service, method,
request id and trace id while it runs, so every log record of the call carries them.

The trace id is the `x-trace-id` metadata, else the request's own `trace_id` field (the
cognition and dream calls have one); the request id is `x-request-id`, else a new one.
Unary and server-streaming calls are observed; the others (reflection) pass as they are.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import grpc

from knowhub_server.common.base.calls import CallContext, current_call
from knowhub_server.common.base.grpc_typing import MethodHandler, outcome
from knowhub_server.common.base.metrics import Metrics

log = logging.getLogger("knowhub.rpc")

TRACE_HEADER = "x-trace-id"
REQUEST_HEADER = "x-request-id"
# What a caller may send as an id: anything else is ignored, so it cannot forge log text.
_ID = re.compile(r"[A-Za-z0-9._:/-]{1,128}")
_READ_HEADERS = frozenset({TRACE_HEADER, REQUEST_HEADER, "authorization"})

Unary = Callable[[Any, grpc.ServicerContext], Any]
Streaming = Callable[[Any, grpc.ServicerContext], Iterator[Any]]


class ObservingInterceptor(grpc.ServerInterceptor):
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], MethodHandler | None],
        details: grpc.HandlerCallDetails,
    ) -> MethodHandler | None:
        handler = continuation(details)
        if handler is None or handler.request_streaming:
            return handler
        service, _, method = details.method.lstrip("/").rpartition("/")
        metadata = _metadata(details.invocation_metadata)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, service, method, metadata),
                handler.request_deserializer,
                handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, service, method, metadata),
                handler.request_deserializer,
                handler.response_serializer,
            )
        return handler

    def _unary(self, behavior: Unary, service: str, method: str, metadata: dict[str, str]) -> Unary:
        def observed(request: Any, context: grpc.ServicerContext) -> Any:
            call = _call(service, method, metadata, request)
            started, code = time.perf_counter(), grpc.StatusCode.UNKNOWN
            try:
                with _in_call(call):
                    response = behavior(request, context)
                code = outcome(context).code() or grpc.StatusCode.OK
                return response
            except Exception:
                code = outcome(context).code() or grpc.StatusCode.UNKNOWN
                raise
            finally:
                self._record(call, "unary", code, started, context)

        return observed

    def _streaming(
        self, behavior: Streaming, service: str, method: str, metadata: dict[str, str]
    ) -> Streaming:
        def observed(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            call = _call(service, method, metadata, request)
            # Left as CANCELLED when the caller goes away and the stream is closed.
            started, code = time.perf_counter(), grpc.StatusCode.CANCELLED
            try:
                with _in_call(call):
                    responses = iter(behavior(request, context))
                while True:
                    # The call's context is set around each step only: between steps the
                    # thread may serve other calls, and the stream may be closed elsewhere.
                    with _in_call(call):
                        response = next(responses, None)
                    if response is None:
                        break
                    yield response
                code = outcome(context).code() or (
                    grpc.StatusCode.OK if context.is_active() else grpc.StatusCode.CANCELLED
                )
            except Exception:
                code = outcome(context).code() or grpc.StatusCode.UNKNOWN
                raise
            finally:
                self._record(call, "server_stream", code, started, context)

        return observed

    def _record(
        self,
        call: CallContext,
        kind: str,
        code: grpc.StatusCode,
        started: float,
        context: grpc.ServicerContext,
    ) -> None:
        elapsed = time.perf_counter() - started
        self._metrics.rpc_calls.labels(call.service, call.method, kind, code.name).inc()
        self._metrics.rpc_seconds.labels(call.service, call.method, code.name).observe(elapsed)
        if log.isEnabledFor(logging.DEBUG):
            with _in_call(call):
                details = outcome(context).details() or b""  # grpc keeps them encoded
                if isinstance(details, bytes):
                    details = details.decode(errors="replace")
                log.debug(
                    "rpc=%s code=%s ms=%.2f%s",
                    call.method,
                    code.name,
                    elapsed * 1000,
                    f" {details}" if details else "",
                )


def _metadata(pairs: Sequence[tuple[str, str | bytes]] | None) -> dict[str, str]:
    """The call's id and authorization headers (binary values are neither)."""
    return {
        key.lower(): value
        for key, value in pairs or ()
        if key.lower() in _READ_HEADERS and isinstance(value, str)
    }


def _call(service: str, method: str, metadata: dict[str, str], request: Any) -> CallContext:
    trace_id = _valid_id(metadata.get(TRACE_HEADER)) or _valid_id(
        getattr(request, "trace_id", None)
    )
    # A log correlation id, not a secret: no system call for randomness on every RPC.
    request_id = _valid_id(metadata.get(REQUEST_HEADER)) or f"{random.getrandbits(64):016x}"
    call = CallContext(service, method, request_id, trace_id)
    token = metadata.get("authorization", "").strip().partition(" ")[2]
    secure_body = getattr(request, "secure_body", "")
    call.secrets.update(s for s in (token.strip(), secure_body) if isinstance(s, str) and s)
    return call


def _valid_id(value: object) -> str:
    return value if isinstance(value, str) and _ID.fullmatch(value) else ""


@contextmanager
def _in_call(call: CallContext) -> Iterator[None]:
    token = current_call.set(call)
    try:
        yield
    finally:
        current_call.reset(token)
