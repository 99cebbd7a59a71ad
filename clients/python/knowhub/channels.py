"""gRPC channels as KnowHub's clients open them: round-robin over every address a target
resolves to, and TLS when asked.

A target is `host:port`, `dns:///name:port` (every address the name resolves to, e.g.
the replicas of a compose service) or `ipv4:a:p1,b:p2` (a fixed list). With round-robin
load balancing each call goes to the next ready address, instead of all calls to the
first one (gRPC's default, pick_first).

Reads that fail UNAVAILABLE (a replica restarting, a dropped connection) are tried again
by gRPC itself, following the service config's retryPolicy. Only reads: the config is
per method, so it cannot tell a write that carries a request_id (safe to repeat) from
one that does not; such writes are left to the caller to retry with the same request_id.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import grpc
import grpc.aio
from knowhub_contracts.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

DEFAULT_TARGET = "127.0.0.1:50051"
# Methods that change nothing: the standard reads by their verb, and the custom ones.
READ_VERBS = ("Get", "BatchGet", "List", "Search")
CUSTOM_READS = frozenset({"PendingEvaluations", "ExportLog"})
RETRY_POLICY = {
    "maxAttempts": 4,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}
# Past a few failures in a row on a channel, no more retries until calls succeed again.
RETRY_THROTTLING = {"maxTokens": 10, "tokenRatio": 0.1}


def default_target() -> str:
    """The hub a client calls when it is given no target: `KNOWHUB_TARGET`, else
    127.0.0.1:50051 (where `knowhub up` listens by default)."""
    return os.environ.get("KNOWHUB_TARGET", "").strip() or DEFAULT_TARGET


def read_methods() -> list[dict[str, str]]:
    """The unary read methods of every KnowHub service, as service config names."""
    services = [
        service
        for module in (knowledge_pb2, resource_pb2, cognition_pb2, dream_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
    ]
    return [
        {"service": service.full_name, "method": method.name}
        for service in services
        for method in service.methods
        if not method.server_streaming
        and (method.name.startswith(READ_VERBS) or method.name in CUSTOM_READS)
    ]


SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [{"name": read_methods(), "retryPolicy": RETRY_POLICY}],
        "retryThrottling": RETRY_THROTTLING,
    }
)
# Clients ping a connection that has calls open every minute, data or not, so a long
# stream (the evaluator's WatchTriggers) notices a dead peer. KnowHub's servers accept
# pings that often (`server_keepalive_options`): gRPC's default policy allows one ping in
# five minutes without data and ends the connection with GOAWAY too_many_pings after a
# few more.
KEEPALIVE_TIME_MS = 60_000


def client_keepalive_options(time_ms: int) -> list[tuple[str, int]]:
    """Ping every `time_ms` while calls are open, however long no data flows."""
    return [("grpc.keepalive_time_ms", time_ms), ("grpc.http2.max_pings_without_data", 0)]


def server_keepalive_options(client_time_ms: int) -> list[tuple[str, int]]:
    """A server policy that never strikes a client pinging every `client_time_ms`: pings
    half as far apart pass (timers drift), with or without data or calls in flight."""
    return [
        ("grpc.http2.min_ping_interval_without_data_ms", client_time_ms // 2),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


SERVER_KEEPALIVE_OPTIONS = server_keepalive_options(KEEPALIVE_TIME_MS)
"""The options of a gRPC server that accepts the SDK's keepalive pings (KnowHub's servers
are started with them)."""
CHANNEL_OPTIONS = [
    ("grpc.service_config", SERVICE_CONFIG),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    *client_keepalive_options(KEEPALIVE_TIME_MS),
]

# A CA to verify the server with: PEM bytes, or the path of a PEM file.
TlsCA = bytes | str | os.PathLike[str]


def read_ca(tls_ca: TlsCA | None) -> bytes | None:
    """PEM bytes as they are; a path's contents (ValueError naming the file if unreadable)."""
    if tls_ca is None or isinstance(tls_ca, bytes):
        return tls_ca
    try:
        return Path(tls_ca).read_bytes()
    except OSError as exc:
        raise ValueError(f"tls_ca: cannot read {tls_ca}: {exc.strerror or exc}") from None


def open_channel(target: str, *, tls: bool = False, tls_ca: TlsCA | None = None) -> grpc.Channel:
    """A blocking gRPC channel with the SDK's options, for the generated stubs.

    Args:
        target: The hub's `host:port` (or a `dns:///name:port` target).
        tls: Speak TLS, verifying the server with the system's root certificates.
        tls_ca: Speak TLS, verifying the server with this CA (PEM bytes or a file's path).

    Returns:
        The channel.
    """
    if tls or tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=read_ca(tls_ca))
        return grpc.secure_channel(target, credentials, CHANNEL_OPTIONS)
    return grpc.insecure_channel(target, CHANNEL_OPTIONS)


def open_aio_channel(
    target: str, *, tls: bool = False, tls_ca: TlsCA | None = None
) -> grpc.aio.Channel:
    """The asyncio counterpart of open_channel."""
    if tls or tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=read_ca(tls_ca))
        return grpc.aio.secure_channel(target, credentials, CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(target, CHANNEL_OPTIONS)
