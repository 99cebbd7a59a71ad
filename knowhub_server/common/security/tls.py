"""TLS for gRPC: the server's certificate and key, and the CA that calls to other services
verify servers with (KNOWHUB_TLS_CERT_FILE, KNOWHUB_TLS_KEY_FILE, KNOWHUB_TLS_CA_FILE).

The files are checked when the settings load (base/tls_files.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import grpc

if TYPE_CHECKING:
    from knowhub_server.common.base.config import CommonSettings


def server_credentials(settings: CommonSettings) -> grpc.ServerCredentials | None:
    """The server's TLS credentials, or None to serve plaintext."""
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    return grpc.ssl_server_credentials(
        [(settings.tls_key_file.read_bytes(), settings.tls_cert_file.read_bytes())]
    )


def peer_ca(settings: CommonSettings) -> bytes | None:
    """The CA that calls to other services verify them with; None for plaintext calls."""
    return settings.tls_ca_file.read_bytes() if settings.tls_ca_file else None
