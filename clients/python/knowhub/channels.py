"""gRPC channels as KnowHub's clients open them: round-robin over every address a target
resolves to, and TLS when asked.

A target is `host:port`, `dns:///name:port` (every address the name resolves to, e.g.
the replicas of a compose service) or `ipv4:a:p1,b:p2` (a fixed list). With round-robin
load balancing each call goes to the next ready address, instead of all calls to the
first one (gRPC's default, pick_first).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import grpc
import grpc.aio

DEFAULT_TARGET = "127.0.0.1:50051"
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
CHANNEL_OPTIONS = [
    ("grpc.service_config", ROUND_ROBIN),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.keepalive_time_ms", 60_000),
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


def open_channel(target: str, *, tls: bool = False,
                 tls_ca: TlsCA | None = None) -> grpc.Channel:
    """A blocking channel; TLS when `tls` or `tls_ca` is given (without `tls_ca` the
    system's root certificates verify the server)."""
    if tls or tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=read_ca(tls_ca))
        return grpc.secure_channel(target, credentials, CHANNEL_OPTIONS)
    return grpc.insecure_channel(target, CHANNEL_OPTIONS)


def open_aio_channel(target: str, *, tls: bool = False,
                     tls_ca: TlsCA | None = None) -> grpc.aio.Channel:
    """The asyncio counterpart of open_channel."""
    if tls or tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=read_ca(tls_ca))
        return grpc.aio.secure_channel(target, credentials, CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(target, CHANNEL_OPTIONS)
