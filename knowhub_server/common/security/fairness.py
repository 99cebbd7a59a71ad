"""Fair sharing of one server between its callers.

A gRPC server handles each call on one thread of its pool until the call returns, so
whatever holds threads for long takes them from everyone. Two limits keep one tenant from
doing that:

- **Calls per caller** (`CallerLimit`, applied by the public server's interceptor): a
  token has at most KNOWHUB_CALLS_PER_CALLER_MAX calls in progress; one more is answered
  RESOURCE_EXHAUSTED at once, holding no thread.
- **The model lane** (`ModelLane`, in llm/lane.py beside the model clients that take it):
  calls that wait on the LLM or the embedding endpoint take one of a few slots, so the
  rest of the pool serves everything else.

Both refusals are `Busy`: the message and the trailing metadata `grpc-retry-pushback-ms`
say when to try again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from knowhub_server.common.base.errors import Busy
from knowhub_server.common.base.grpc_typing import MethodHandler, replaced

# What a refused caller is told to wait: a few ordinary calls.
CALLER_RETRY_MS = 1_000


class CallerLimit:
    """Each caller's calls in progress, at most `limit` (0: no limit)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._in_progress: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, caller: str) -> None:
        """Takes one of the caller's places; raises Busy when it holds them all."""
        if not self._limit:
            return
        with self._lock:
            held = self._in_progress.get(caller, 0)
            if held >= self._limit:
                raise Busy(
                    f"this token has {held} calls in progress, the most one caller "
                    "may have at once (KNOWHUB_CALLS_PER_CALLER_MAX)",
                    CALLER_RETRY_MS,
                )
            self._in_progress[caller] = held + 1

    def give_back(self, caller: str) -> None:
        if not self._limit:
            return
        with self._lock:
            left = self._in_progress[caller] - 1
            if left:
                self._in_progress[caller] = left
            else:
                del self._in_progress[caller]


Behavior = Callable[[Any, grpc.ServicerContext], Any]


class FairShareInterceptor(grpc.ServerInterceptor):
    """Applies a CallerLimit to a server's unary and server-streaming calls, by bearer
    token (a token is one principal). Calls without a token are not counted: they are
    refused before doing any work."""

    def __init__(self, limit: CallerLimit) -> None:
        self._limit = limit

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], MethodHandler | None],
        details: grpc.HandlerCallDetails,
    ) -> MethodHandler | None:
        handler = continuation(details)
        caller = _authorization(details.invocation_metadata)
        if handler is None or handler.request_streaming or not caller:
            return handler
        if handler.unary_unary:
            return replaced(handler, unary_unary=self._unary(handler.unary_unary, caller))
        if handler.unary_stream:
            return replaced(handler, unary_stream=self._streaming(handler.unary_stream, caller))
        return handler

    def _unary(self, behavior: Behavior, caller: str) -> Behavior:
        def limited(request: Any, context: grpc.ServicerContext) -> Any:
            self._take(caller, context)
            try:
                return behavior(request, context)
            finally:
                self._limit.give_back(caller)

        return limited

    def _streaming(self, behavior: Behavior, caller: str) -> Behavior:
        def limited(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            self._take(caller, context)
            try:
                yield from behavior(request, context)
            finally:
                self._limit.give_back(caller)

        return limited

    def _take(self, caller: str, context: grpc.ServicerContext) -> None:
        try:
            self._limit.take(caller)
        except Busy as busy:
            context.set_trailing_metadata(busy.trailing_metadata)
            context.abort(busy.code, busy.message)


def _authorization(metadata: Any) -> str:
    for key, value in metadata or ():
        if key.lower() == "authorization" and isinstance(value, str):
            return value
    return ""
