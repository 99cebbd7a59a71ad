"""KnowHub errors: one class per gRPC status a caller can act on."""

from __future__ import annotations

from typing import Any

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
    """A limit was reached. When the hub was only busy (too many calls of this token in
    progress, or its model lane full), `retry_after` says how many seconds to wait
    before trying again; None for limits that waiting does not lift."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after


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


# gRPC's pushback: how many milliseconds the server asks a client to wait before a retry.
PUSHBACK_HEADER = "grpc-retry-pushback-ms"


def from_rpc_error(
    error: grpc.RpcError, target: str | None = None, tls: bool = False
) -> KnowHubError:
    """The KnowHubError for a failed gRPC call to `target` (with TLS or not); a
    connection that failed says what to do about it."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return ResourceExhausted(code.name, details or "", _pushback_seconds(error))
    if code == grpc.StatusCode.UNAVAILABLE and target:
        problem = connection_problem(target, details or "", tls)
        details = f"{problem} ({details})" if problem else details
    return _BY_CODE.get(code, KnowHubError)(code.name, details or "")


_REFUSED = (
    "Connection refused",
    "connection refused",
    "No such file or directory",
    "Name or service not known",
    "DNS resolution failed",
)
_TLS = ("ssl", "SSL", "handshake", "Handshake", "WRONG_VERSION_NUMBER", "certificate")


def connection_problem(target: str, details: str, tls: bool) -> str | None:
    """What went wrong reaching a hub at `target`, and what to do, when gRPC's `details`
    say the connection failed (None: they say something else)."""
    if any(sign in details for sign in _REFUSED):
        return (
            f"no KnowHub hub answers at {target}: start one with `knowhub up`, or "
            "give the address of yours (KNOWHUB_TARGET, --target, target=)"
        )
    if tls and any(sign in details for sign in _TLS):
        return (
            f"TLS with {target} failed: the hub does not speak TLS there, or its "
            "certificate is not signed by the CA given (KNOWHUB_TLS_CA_FILE, tls_ca=)"
        )
    if not tls and ("Socket closed" in details or "Connection reset" in details):
        return (
            f"the hub at {target} closed the connection: if it serves TLS "
            "(KNOWHUB_TLS_CERT_FILE), connect with TLS and its CA (KNOWHUB_TLS_CA_FILE, "
            "tls_ca=)"
        )
    return None


def _pushback_seconds(error: grpc.RpcError) -> float | None:
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    pairs: Any = trailing or ()  # (key, value) pairs: tuples, or grpc's _Metadatum
    for key, value in pairs:
        if key == PUSHBACK_HEADER and isinstance(value, str) and value.isdigit():
            return int(value) / 1000
    return None
