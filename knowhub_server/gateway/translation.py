"""HTTP to gRPC and back: which RPCs exist, JSON bodies to request messages, response
messages to JSON, gRPC status codes to HTTP ones, and the calls themselves.

Every call carries the HTTP caller's own bearer token as gRPC metadata, so the services
apply the caller's identity and visibility exactly as they do for gRPC callers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import grpc
import grpc.aio
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from knowhub import errors
from knowhub.channels import open_aio_channel
from knowhub.knowledge import SLIM_TIMEOUT
from knowhub_contracts.v1 import admin_pb2, cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

from knowhub_server.common.base import json_input
from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.security import auth

# The URL name of each service (`/api/v1/{service}/{Method}`) and its descriptor.
SERVICES: dict[str, ServiceDescriptor] = {
    "knowledge": knowledge_pb2.DESCRIPTOR.services_by_name["KnowledgeService"],
    "resource": resource_pb2.DESCRIPTOR.services_by_name["ResourceService"],
    "cognition": cognition_pb2.DESCRIPTOR.services_by_name["CognitionService"],
    "dream": dream_pb2.DESCRIPTOR.services_by_name["DreamService"],
    "admin": admin_pb2.DESCRIPTOR.services_by_name["AdminService"],
}

# google.rpc.Code's HTTP mapping (as grpc-gateway and Google APIs use it). FAILED_PRECONDITION
# is 400, not 412: 412 is about HTTP's own conditional headers, which this API does not use.
HTTP_STATUS: dict[str, int] = {
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
    "UNAUTHENTICATED": 401,
}
# Calls that legitimately run long get at least this deadline.
LONG_CALLS: dict[str, float] = {
    "SlimKnowledge": SLIM_TIMEOUT,
    "RotateMasterKey": 3600.0,
    "ForgetSubject": 600.0,
}
# The services' own limit on a request (gRPC's default message size).
MAX_BODY_BYTES = 4 * 1024 * 1024
M = TypeVar("M", bound=Message)
StreamCall: TypeAlias = "grpc.aio.UnaryStreamCall[Message, Message]"  # generic in the stubs only
_JSON_OPTIONS: dict[str, Any] = {
    "preserving_proto_field_name": True,
    "always_print_fields_with_no_presence": True,
    "unquote_int64_if_possible": True,
}


def invalid(message: str) -> errors.KnowHubError:
    """A caller's mistake (HTTP 400); `message` starts with the field it concerns."""
    return errors.InvalidArgument("INVALID_ARGUMENT", message)


def not_found(message: str) -> errors.KnowHubError:
    return errors.NotFound("NOT_FOUND", message)


class BodyTooLarge(errors.KnowHubError):
    """A request body beyond what the services accept (HTTP 413)."""

    http_status = 413


def http_status(error: errors.KnowHubError) -> int:
    return getattr(error, "http_status", None) or HTTP_STATUS.get(error.code, 500)


def error_body(error: errors.KnowHubError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": error.message}}


@dataclass(frozen=True)
class Rpc:
    """One method of one service, with its message classes."""

    service: str
    method: MethodDescriptor
    request_class: type[Message]
    response_class: type[Message]

    @property
    def name(self) -> str:
        return self.method.name

    @property
    def path(self) -> str:
        """The gRPC method path, /knowhub.v1.KnowledgeService/SaveKnowledge."""
        return f"/{self.method.containing_service.full_name}/{self.method.name}"

    @property
    def streaming(self) -> bool:
        return self.method.server_streaming


def _rpc(service: str, method: MethodDescriptor) -> Rpc:
    return Rpc(
        service,
        method,
        message_factory.GetMessageClass(method.input_type),
        message_factory.GetMessageClass(method.output_type),
    )


RPCS: dict[tuple[str, str], Rpc] = {
    (service, method.name): _rpc(service, method)
    for service, descriptor in SERVICES.items()
    for method in descriptor.methods
}


def find_rpc(service: str, method: str) -> Rpc:
    if service not in SERVICES:
        raise not_found(f"service: unknown service {service!r}; one of {', '.join(SERVICES)}")
    rpc = RPCS.get((service, method))
    if rpc is None:
        names = ", ".join(m.name for m in SERVICES[service].methods)
        raise not_found(f"method: {service} has no RPC {method!r}; one of {names}")
    return rpc


# ---- JSON in ------------------------------------------------------------------------------


def json_object(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object; an empty body is {}. (RequestGuard kept it
    within MAX_BODY_BYTES.)"""
    if not body.strip():
        return {}
    try:
        data = json_input.loads(body)
    except ValueError as exc:  # bad JSON, bad UTF-8, NaN, too deep
        raise invalid(f"body: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise invalid(f"body: must be a JSON object, not {type(data).__name__}")
    return data


def to_message(
    data: Mapping[str, Any], message_class: type[M], path_fields: Mapping[str, Any] | None = None
) -> M:
    """Parses proto3 JSON (field names as in the proto or lowerCamelCase) into a message;
    `path_fields` come from the URL and may not also be in the body."""
    for name in path_fields or {}:
        if name in data:
            raise invalid(f"{name}: given in the URL path; leave it out of the body")
    try:
        message = json_format.ParseDict(dict(data), message_class())
        for name, value in (path_fields or {}).items():
            setattr(message, name, value)
    except json_format.ParseError as exc:
        raise invalid(str(exc)) from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise invalid(f"body: {exc}") from None
    return message


# ---- JSON out -----------------------------------------------------------------------------


def to_json(message: Message) -> dict[str, Any]:
    """A response message as proto3 JSON with the proto's field names, every field present
    (int64 values as numbers when exact, enums by name)."""
    return json_format.MessageToDict(message, **_JSON_OPTIONS)


# ---- Calls --------------------------------------------------------------------------------


def caller_token(authorization: str | None) -> str | None:
    """The bearer token of an HTTP caller's Authorization header (None without one)."""
    try:
        return auth.bearer_token(authorization)
    except ServiceError as error:
        raise errors.Unauthenticated("UNAUTHENTICATED", error.message) from None


class Backend:
    """asyncio channels to the services (one per distinct address; TLS when a CA is given)
    and the calls on them. Create and use it on the event loop that serves the requests."""

    def __init__(
        self, targets: Mapping[str, str], timeout: float, tls_ca: bytes | None = None
    ) -> None:
        self._targets = dict(targets)
        self._timeout = timeout
        self._tls_ca = tls_ca
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._methods: dict[tuple[str, str], Any] = {}

    def _channel(self, service: str) -> grpc.aio.Channel:
        address = self._targets[service]
        if address not in self._channels:
            self._channels[address] = open_aio_channel(address, tls_ca=self._tls_ca)
        return self._channels[address]

    def _deadline(self, rpc: Rpc) -> float:
        return max(self._timeout, LONG_CALLS.get(rpc.name, 0.0))

    def _method(self, rpc: Rpc) -> Any:
        """The RPC's callable on its channel, made once and kept (not per request)."""
        key = (rpc.service, rpc.name)
        if key not in self._methods:
            channel = self._channel(rpc.service)
            make = channel.unary_stream if rpc.streaming else channel.unary_unary
            self._methods[key] = make(
                rpc.path,
                request_serializer=rpc.request_class.SerializeToString,
                response_deserializer=rpc.response_class.FromString,
            )
        return self._methods[key]

    async def call(self, rpc: Rpc, request: Message, token: str | None) -> Message:
        method = self._method(rpc)
        try:
            response: Message = await method(
                request, metadata=auth.bearer_metadata(token), timeout=self._deadline(rpc)
            )
            return response
        except grpc.RpcError as error:
            raise errors.from_rpc_error(
                error, self._targets[rpc.service], self._tls_ca is not None
            ) from None

    def stream(self, rpc: Rpc, request: Message, token: str | None) -> StreamCall:
        """A server-streaming call without deadline; the caller reads and cancels it."""
        call: StreamCall = self._method(rpc)(request, metadata=auth.bearer_metadata(token))
        return call

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
        self._methods.clear()


async def read_stream(call: StreamCall) -> AsyncIterator[Message]:
    """The messages of a streaming call; its failure as a KnowHubError."""
    try:
        while True:
            message = await call.read()
            if not isinstance(message, Message):  # grpc.aio.EOF
                return
            yield message
    except grpc.RpcError as error:
        raise errors.from_rpc_error(error) from None
