"""Errors a service raises on purpose, each bound to the gRPC status a caller sees.

Domain code raises these; `knowhub_server.common.runtime.rpc` turns them into a status with the
message unchanged. Anything else that escapes a handler is a bug and becomes INTERNAL.
"""

from __future__ import annotations

import grpc


class ServiceError(Exception):
    """Base of the errors a caller is told about."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    """A field of the request is wrong; the message names the field."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(ServiceError):
    """A concurrent change won; the caller may retry."""

    code = grpc.StatusCode.ABORTED


class ResourceExhausted(ServiceError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


# The trailing metadata by which a Busy refusal says when to try again (milliseconds):
# gRPC's own pushback, which a client retry policy listing RESOURCE_EXHAUSTED obeys.
RETRY_AFTER_HEADER = "grpc-retry-pushback-ms"


class Busy(ResourceExhausted):
    """A limit of concurrent work was reached; trying again after `retry_after_ms` may
    succeed. The hint is in the message and in the trailing metadata
    `grpc-retry-pushback-ms`."""

    def __init__(self, message: str, retry_after_ms: int) -> None:
        super().__init__(f"{message}; retry in {retry_after_ms / 1000:g} s")
        self.retry_after_ms = retry_after_ms

    @property
    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ((RETRY_AFTER_HEADER, str(self.retry_after_ms)),)


class Unavailable(ServiceError):
    """A store or the LLM cannot be reached right now."""

    code = grpc.StatusCode.UNAVAILABLE
