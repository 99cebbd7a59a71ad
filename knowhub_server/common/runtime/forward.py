"""Calls for services that run in another process, passed on from the one public port.

`knowhub up --processes N` serves every KnowHub service on one port while some of them run
in its child processes. A call for one of those is passed on as it came: the request and
response bytes are never decoded, the caller's metadata (its token, trace and request ids)
goes along, the deadline is what is left of the caller's, and the other process's status,
message and trailing metadata come back unchanged. (The compose stack has nginx in front
of its services instead: deploy/nginx/nginx.conf.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import grpc
from google.protobuf import descriptor_pool

from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.base.grpc_typing import MethodHandler
from knowhub_server.common.runtime.peers import Peers

# Metadata gRPC sets itself on the onward call; passing the caller's would duplicate it.
_OWN_HEADERS = ("grpc-", ":")
_OWN_KEYS = frozenset({"user-agent", "content-type", "te"})

Method = Callable[..., Any]


def _onward_metadata(context: grpc.ServicerContext) -> tuple[tuple[str, str | bytes], ...]:
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata()
        if key not in _OWN_KEYS and not key.startswith(_OWN_HEADERS)
    )


def _fail_like(context: grpc.ServicerContext, error: grpc.RpcError) -> NoReturn:
    """Ends the call with the other process's status, message and trailing metadata."""
    call = error if isinstance(error, grpc.Call) else None
    if call is not None and call.trailing_metadata():
        context.set_trailing_metadata(call.trailing_metadata())
    code = call.code() if call is not None else grpc.StatusCode.UNAVAILABLE
    details = (call.details() if call is not None else "") or code.name
    context.abort(code, details)


class Forwarder(grpc.GenericRpcHandler):
    """The methods of `services` (service name -> full gRPC service name), each passed on
    over the channel Peers keeps for its service."""

    def __init__(self, services: dict[str, str], peers: Peers) -> None:
        self._by_full_name = {full: name for name, full in services.items()}
        self._peers = peers
        self._pool = descriptor_pool.Default()
        self._handlers: dict[str, MethodHandler] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> MethodHandler | None:
        path = handler_call_details.method
        handler = self._handlers.get(path)
        if handler is None:
            handler = self._handler(path)
            if handler is not None:
                self._handlers[path] = handler
        return handler

    def _handler(self, path: str) -> MethodHandler | None:
        full_name, _, method_name = path.lstrip("/").partition("/")
        service = self._by_full_name.get(full_name)
        if service is None:
            return None
        method = self._pool.FindServiceByName(full_name).methods_by_name.get(method_name)
        if method is None or method.client_streaming:  # no KnowHub RPC streams requests
            return None
        if method.server_streaming:
            return grpc.unary_stream_rpc_method_handler(self._streaming(service, path))
        return grpc.unary_unary_rpc_method_handler(self._unary(service, path))

    def _channel(self, service: str, context: grpc.ServicerContext) -> grpc.Channel:
        """The channel to `service`; UNAVAILABLE while it cannot be reached (a child not
        started yet, an address not set)."""
        try:
            return self._peers.channel(service)
        except ServiceError as error:
            context.abort(error.code, error.message)

    def _unary(self, service: str, path: str) -> Method:
        def forward(request: bytes, context: grpc.ServicerContext) -> bytes:
            onward: grpc.UnaryUnaryMultiCallable[bytes, bytes] = self._channel(
                service, context
            ).unary_unary(path)
            try:
                response, call = onward.with_call(
                    request, timeout=context.time_remaining(), metadata=_onward_metadata(context)
                )
            except grpc.RpcError as error:
                _fail_like(context, error)
            if call.trailing_metadata():
                context.set_trailing_metadata(call.trailing_metadata())
            return response

        return forward

    def _streaming(self, service: str, path: str) -> Method:
        def forward(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
            onward: grpc.UnaryStreamMultiCallable[bytes, bytes] = self._channel(
                service, context
            ).unary_stream(path)
            responses = onward(
                request, timeout=context.time_remaining(), metadata=_onward_metadata(context)
            )

            def caller_left() -> None:
                responses.cancel()

            context.add_callback(caller_left)
            try:
                yield from responses
            except grpc.RpcError as error:
                if context.is_active():
                    _fail_like(context, error)
                raise

        return forward
