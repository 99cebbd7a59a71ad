"""`knowhub health`: one gRPC health check (grpc.health.v1 Check), for probes."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub.channels import open_channel
from knowhub.errors import connection_problem

from knowhub_server.common.runtime.server import EMBEDDING_BACKLOG, EMBEDDING_STATE

WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "[::]", ""})


def probe_address(host: str, port: int) -> str:
    """Where a server bound to host:port is reached from its own machine."""
    return f"127.0.0.1:{port}" if host in WILDCARD_HOSTS else f"{host}:{port}"


def health_name(service: str) -> str:
    """The name a service is checked under: a short name is the protos' service of that
    name (`knowledge` is knowhub.v1.KnowledgeService); a full name stays as it is; "" is
    the whole server."""
    if service and "." not in service:
        return f"knowhub.v1.{service.capitalize()}Service"
    return service


def check(
    address: str, service: str, *, tls_ca: bytes | None = None, timeout: float = 5.0
) -> tuple[bool, str]:
    """Asks the server at `address` whether `service` is serving; returns whether it is
    and a line saying so."""
    what = f"{service or 'server'} at {address}"
    with open_channel(address, tls_ca=tls_ca) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            response, call = stub.Check.with_call(
                health_pb2.HealthCheckRequest(service=health_name(service)), timeout=timeout
            )
        except grpc.RpcError as error:
            code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
            if code == grpc.StatusCode.NOT_FOUND:
                return False, f"{what}: not served there (NOT_FOUND)"
            details = error.details() if hasattr(error, "details") else ""
            problem = connection_problem(address, details or "", tls_ca is not None)
            line = f"{what}: unreachable ({code.name}: {details})"
            return False, f"{line}: {problem}" if problem else line
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    serving = response.status == health_pb2.HealthCheckResponse.SERVING
    return serving, f"{what}: {status}{_embedding(dict(call.trailing_metadata() or ()))}"


def _embedding(trailer: dict[str, str]) -> str:
    """What the server said of its embedding model: the records waiting for a vector."""
    if EMBEDDING_BACKLOG not in trailer:
        return ""
    state = "failing" if trailer.get(EMBEDDING_STATE) == "failing" else "answering"
    return (
        f"; embedding model {state}, {trailer[EMBEDDING_BACKLOG]} record(s) waiting "
        "for their vector"
    )
