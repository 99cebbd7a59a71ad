"""One gRPC server for one or more KnowHub services, with health and reflection."""

from __future__ import annotations

import importlib
import logging
import signal
import threading
from concurrent import futures
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common.runtime import Runtime

log = logging.getLogger(__name__)

# Service name -> module with `register(server, runtime) -> full service name`.
SERVICE_MODULES = {
    "knowledge": "services.knowledge.servicer",
    "resource": "services.resource.servicer",
    "cognition": "services.cognition.servicer",
}
GRACE_SECONDS = 10.0


class KnowHubServer:
    """Registers the chosen services on one port and runs them until stopped."""

    def __init__(self, runtime: Runtime, services: list[str]) -> None:
        unknown = [s for s in services if s not in SERVICE_MODULES]
        if unknown:
            raise ValueError(f"unknown service {unknown[0]!r}; choose from "
                             f"{', '.join(SERVICE_MODULES)}")
        self.runtime = runtime
        self.services = services
        self.port = 0
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=runtime.settings.max_workers,
                                       thread_name_prefix="knowhub-rpc"),
            options=[("grpc.so_reuseport", 0)],
        )
        self._health = health.HealthServicer()
        self._names: list[str] = []

    def start(self) -> int:
        """Registers, binds and starts; returns the bound port."""
        for service in self.services:
            module = importlib.import_module(SERVICE_MODULES[service])
            self._names.append(module.register(self._server, self.runtime))
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        reflection.enable_server_reflection(
            [*self._names, health.SERVICE_NAME, reflection.SERVICE_NAME], self._server)
        address = f"{self.runtime.settings.host}:{self.runtime.settings.port}"
        try:
            self.port = self._server.add_insecure_port(address)
        except RuntimeError as exc:
            raise RuntimeError(f"cannot listen on {address}: {exc} (is the port in use?)") from exc
        if self.port == 0:
            raise RuntimeError(f"cannot listen on {address} (is the port in use?)")
        self._server.start()
        host = self.runtime.settings.host
        loopback = "127.0.0.1" if host in ("0.0.0.0", "::", "[::]") else host
        self.runtime.peers.host_locally(self.services, f"{loopback}:{self.port}")
        for name in ["", *self._names]:
            self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self.port

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stops taking calls, lets in-flight ones finish, then closes the stores."""
        self.runtime.stopping.set()
        self._health.enter_graceful_shutdown()
        self._server.stop(grace).wait()
        self.runtime.close()


def serve_forever(server: KnowHubServer) -> None:
    """Starts the server, prints where it listens, and stops it on SIGINT or SIGTERM."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    port = server.start()
    settings = server.runtime.settings
    where = settings.qdrant_url or str(settings.data_dir.resolve())
    print(f"KnowHub listening on {settings.host}:{port} "
          f"(services: {', '.join(server.services)}; data: {where})", flush=True)
    stop.wait()
    server.stop()
    print("KnowHub stopped", flush=True)
