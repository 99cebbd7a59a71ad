"""KnowHub errors: one class per gRPC status a caller can act on."""

from __future__ import annotations

import grpc


class KnowHubError(Exception):
    """A call failed. `code` is the gRPC status name, `message` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InvalidArgument(KnowHubError):
    """A field of the request is wrong; the message names it."""


class NotFound(KnowHubError):
    pass


class AlreadyExists(KnowHubError):
    pass


class PermissionDenied(KnowHubError):
    pass


class Unauthenticated(KnowHubError):
    pass


class FailedPrecondition(KnowHubError):
    pass


class Aborted(KnowHubError):
    """A concurrent change won; retrying is safe."""


class ResourceExhausted(KnowHubError):
    pass


class Unavailable(KnowHubError):
    """The service, one of its stores, or its LLM is unreachable right now."""


class DeadlineExceeded(KnowHubError):
    pass


_BY_CODE: dict[grpc.StatusCode, type[KnowHubError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.ABORTED: Aborted,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
}


def from_rpc_error(error: grpc.RpcError) -> KnowHubError:
    """The KnowHubError for a failed gRPC call."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return _BY_CODE.get(code, KnowHubError)(code.name, details or "")
