"""Calls from one KnowHub service to another, on behalf of the caller.

A service reaches another only through its RPCs. Each call carries the caller's own
bearer token, so the other service applies the caller's visibility, never a wider one.
Services hosted in the same process (`knowhub up`) are reached on the server's own port;
a service running alone (`knowhub serve`) finds the others at KNOWHUB_<SERVICE>_ADDRESS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from knowhub.channels import open_channel

from knowhub_server.common.base.calls import current_call
from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.errors import ServiceError, Unavailable
from knowhub_server.common.runtime.observe import TRACE_HEADER
from knowhub_server.common.security.auth import Principal, bearer_metadata
from knowhub_server.common.security.tls import peer_ca

Response = TypeVar("Response")
PEER_TIMEOUT_SECONDS = 30.0

# What a peer refused for a reason of the caller's passes through as it is; anything else
# means the peer could not do its part.
_PASSED_THROUGH = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


class PeerRefused(ServiceError):
    """Another service refused the call; carries its status code and message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class Peers:
    """Channels to the other services, opened on first use."""

    def __init__(self, settings: CommonSettings) -> None:
        self._settings = settings  # read for KNOWHUB_<SERVICE>_ADDRESS and the TLS CA
        self._local: dict[str, str] = {}
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = threading.Lock()

    def host_locally(self, services: list[str], address: str) -> None:
        """Services in this process are reached at its own address."""
        for service in services:
            self._local[service] = address

    def host_elsewhere(self, service: str, address: str) -> None:
        """`service` runs in a child process of this one (`knowhub up --processes`),
        reached in plaintext on loopback at `address`."""
        self._local[service] = address

    def channel(self, service: str) -> grpc.Channel:
        with self._lock:
            if service not in self._channels:
                self._channels[service] = self._open(service)
            return self._channels[service]

    def _open(self, service: str) -> grpc.Channel:
        """Co-hosted services on the server's own loopback port, in plaintext; others at
        their address (round-robin over all it resolves to), over TLS with
        KNOWHUB_TLS_CA_FILE."""
        if service in self._local:
            return open_channel(self._local[service])
        address = getattr(self._settings, f"{service}_address", None)
        if not address:
            raise Unavailable(
                f"the {service} service is not reachable from here: "
                f"set KNOWHUB_{service.upper()}_ADDRESS"
            )
        return open_channel(address, tls_ca=peer_ca(self._settings))

    def close(self) -> None:
        with self._lock:
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()


def credentials(principal: Principal) -> tuple[tuple[str, str], ...]:
    """The gRPC metadata that presents `principal`'s own token, and passes on the trace id
    of the call being handled."""
    metadata = list(bearer_metadata(principal.token))
    call = current_call.get()
    if call and call.trace_id:
        metadata.append((TRACE_HEADER, call.trace_id))
    return tuple(metadata)


def peer_error(error: grpc.RpcError) -> ServiceError:
    """A peer's refusal as a PeerRefused with its code and message; any other failure as
    UNAVAILABLE."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = (error.details() if hasattr(error, "details") else "") or code.name
    if code in _PASSED_THROUGH:
        return PeerRefused(code, message)
    return Unavailable(f"another KnowHub service failed ({code.name}): {message}")


def call_as(
    principal: Principal,
    method: Callable[..., Response],
    request: Any,
    *,
    timeout: float = PEER_TIMEOUT_SECONDS,
    metadata: tuple[tuple[str, str], ...] = (),
) -> Response:
    """Calls another service's RPC as `principal` (with `metadata` besides its token); its
    refusal becomes a ServiceError with the same code and message, and an unreachable
    service UNAVAILABLE."""
    try:
        return method(request, metadata=credentials(principal) + metadata, timeout=timeout)
    except grpc.RpcError as error:
        raise peer_error(error) from None
