"""One gRPC server for one or more KnowHub services, with health and reflection."""

from __future__ import annotations

import gc
import logging
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol, cast

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from knowhub import channels

from knowhub_server.common.base.grpc_typing import replaced
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.runtime import admin
from knowhub_server.common.runtime.forward import Forwarder
from knowhub_server.common.runtime.observe import ObservingInterceptor
from knowhub_server.common.runtime.rpc import Undecodable
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.vector_backlog import VectorBacklog
from knowhub_server.common.security.fairness import CallerLimit, FairShareInterceptor
from knowhub_server.common.security.tls import server_credentials

log = logging.getLogger(__name__)

GRACE_SECONDS = 10.0
# Trailing metadata of a health check (see _EmbeddingHealth).
EMBEDDING_BACKLOG = "knowhub-embedding-backlog"
EMBEDDING_STATE = "knowhub-embedding"
# The longest chain of calls between co-hosted services (cognition -> knowledge ->
# resource): the peer server gets this many threads per public one, so calls waiting on
# their own sub-calls can never take every thread those sub-calls need.
PEER_CALL_DEPTH = 3


class ServiceHost(Protocol):
    """What a service's `register` adds its servicer to: the two methods the generated
    add_*Servicer_to_server functions call."""

    def add_generic_rpc_handlers(self, handlers: Any) -> None: ...

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None: ...


@dataclass(frozen=True)
class HostedService:
    """A service a server can host, as the command line names it (knowhub_server.composition):
    its short name (`knowhub serve NAME`, the key Peers reaches it by), its full gRPC name,
    the function that adds it to a server and returns that name, and its part of the
    admin's ForgetSubject."""

    name: str
    full_name: str
    register: Callable[[ServiceHost, Runtime], str]
    forget: admin.SubjectForget


def as_grpc_server(host: ServiceHost) -> grpc.Server:
    """`host` typed as the generated add_*Servicer_to_server functions want it: they call
    only the two methods a ServiceHost has."""
    return cast(grpc.Server, host)


class _Fanout:
    """A ServiceHost that adds each servicer to several servers at once, each method with
    a request decoder that never fails (see `lenient`)."""

    def __init__(self, *servers: grpc.Server) -> None:
        self._servers = servers

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        for server in self._servers:
            server.add_generic_rpc_handlers(tuple(_LenientService(h) for h in handlers))

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        lenient_handlers = {name: lenient(h) for name, h in handlers.items()}
        for server in self._servers:
            server.add_registered_method_handlers(service, lenient_handlers)


def lenient(handler: Any) -> Any:
    """The method handler with a request decoder that hands a message it cannot decode
    (nested past protobuf's depth limit, truncated, ...) to the method as Undecodable, so
    the caller gets INVALID_ARGUMENT rather than gRPC's own INTERNAL."""
    decode = handler.request_deserializer

    def decode_leniently(data: bytes) -> Any:
        try:
            return decode(data)
        except Exception as error:  # protobuf's DecodeError, or a RecursionError
            return Undecodable(str(error))

    return replaced(handler, request_deserializer=decode_leniently)


class _LenientService(grpc.GenericRpcHandler):
    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        handler = self._inner.service(handler_call_details)
        return None if handler is None else lenient(handler)


def _grpc_server(
    workers: int, name: str, metrics: Metrics, *interceptors: grpc.ServerInterceptor
) -> grpc.Server:
    return grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name),
        interceptors=[ObservingInterceptor(metrics), *interceptors],
        options=[("grpc.so_reuseport", 0), *channels.SERVER_KEEPALIVE_OPTIONS],
    )


class _EmbeddingHealth(health.HealthServicer):  # type: ignore[misc]  # grpc_health has no types
    """gRPC health that also says, in trailing metadata, how many records wait for their
    dense vector (EMBEDDING_BACKLOG) and whether the embedding model is failing
    (EMBEDDING_STATE), for `knowhub health`."""

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self._runtime = runtime

    def Check(
        self, request: health_pb2.HealthCheckRequest, context: grpc.ServicerContext
    ) -> health_pb2.HealthCheckResponse:
        response = super().Check(request, context)
        embedder = self._runtime.embedder
        backlogs = [t for t in self._runtime.background if isinstance(t, VectorBacklog)]
        if embedder is not None and backlogs:
            waiting = sum(b.size() for b in backlogs)
            state = "failing" if embedder.breaker.failing else "ok"
            context.set_trailing_metadata(
                ((EMBEDDING_BACKLOG, str(waiting)), (EMBEDDING_STATE, state))
            )
        return response


class KnowHubServer:
    """Registers the chosen services on one port and runs them until stopped; calls for
    the `forwarded` services are passed on to where Peers reaches them (see Forwarder).
    The admin's ForgetSubject calls the `forgets` of every service, hosted here or not.

    The same services also listen on a loopback port of their own with a larger thread
    pool; co-hosted services call each other there (see Peers), never through the public
    pool their callers occupy. Only the public port limits each caller's calls in progress
    (common/security/fairness.py): a call there already holds its caller's place.
    """

    def __init__(
        self,
        runtime: Runtime,
        services: Sequence[HostedService],
        forwarded: Sequence[HostedService] = (),
        *,
        forgets: Sequence[admin.SubjectForget],
    ) -> None:
        self.runtime = runtime
        self._forgets = list(forgets)
        self._hosted = list(services)
        self._passed_on = list(forwarded)
        self.services = [s.name for s in self._hosted]
        self.forwarded = [s.name for s in self._passed_on]
        self.port = 0
        self.peer_port = 0
        self.metrics_port: int | None = None
        workers = runtime.settings.max_workers
        per_caller = CallerLimit(runtime.settings.calls_per_caller_max or 0)
        self._server = _grpc_server(
            workers, "knowhub-rpc", runtime.metrics, FairShareInterceptor(per_caller)
        )
        self._peer_server = _grpc_server(workers * PEER_CALL_DEPTH, "knowhub-peer", runtime.metrics)
        self._health = _EmbeddingHealth(runtime)
        self._names: list[str] = []

    def start(self) -> int:
        """Registers, binds and starts; returns the bound port."""
        both = _Fanout(self._server, self._peer_server)
        for service in self._hosted:
            self._names.append(service.register(both, self.runtime))
        if self._passed_on:
            full_names = {s.name: s.full_name for s in self._passed_on}
            forwarder = Forwarder(full_names, self.runtime.peers)
            for server in (self._server, self._peer_server):  # bytes: nothing to decode
                server.add_generic_rpc_handlers((forwarder,))
            self._names += [s.full_name for s in self._passed_on]
        if self.services:  # a server hosting none has nothing to back up
            self._names.append(admin.register(_Fanout(self._server), self.runtime, self._forgets))
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        reflection.enable_server_reflection(
            [*self._names, health.SERVICE_NAME, reflection.SERVICE_NAME], self._server
        )
        settings = self.runtime.settings
        self.port = _bind(
            self._server, f"{settings.host}:{settings.port}", server_credentials(settings)
        )
        self.peer_port = _bind(self._peer_server, "127.0.0.1:0")
        if settings.metrics_port is not None:
            self.metrics_port = self.runtime.metrics.serve(settings.host, settings.metrics_port)
        self._peer_server.start()
        self._server.start()
        self.runtime.peers.host_locally(self.services, f"127.0.0.1:{self.peer_port}")
        for task in self.runtime.background:
            task.start()
        for name in ["", *self._names]:
            self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self.port

    def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stops taking calls, lets in-flight ones finish, stops the background work
        (which may still call co-hosted services on the peer server), stops the peer
        server, then closes the stores."""
        self.runtime.stopping.set()
        self._health.enter_graceful_shutdown()
        self._server.stop(grace).wait()
        for task in reversed(self.runtime.background):
            task.stop()
        self._peer_server.stop(grace).wait()
        self.runtime.metrics.close()
        self.runtime.close()


def _bind(
    server: grpc.Server, address: str, credentials: grpc.ServerCredentials | None = None
) -> int:
    try:
        port = (
            server.add_secure_port(address, credentials)
            if credentials
            else server.add_insecure_port(address)
        )
    except RuntimeError as exc:
        raise RuntimeError(f"cannot listen on {address}: {exc} (is the port in use?)") from exc
    if port == 0:
        raise RuntimeError(f"cannot listen on {address} (is the port in use?)")
    return port


class Companion(Protocol):
    """What runs next to the gRPC server (the REST gateway): started once the server
    listens (returning the line to print), stopped before the server stops."""

    def start(self, hub_port: int) -> str: ...

    def stop(self) -> None: ...


def stop_on_signal() -> threading.Event:
    """An event set on SIGINT or SIGTERM."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    return stop


def _freeze_startup_objects() -> None:
    """Takes what start-up loaded (modules, settings, stores, servers) out of the cyclic
    garbage collector's full passes: it lives as long as the process, and walking it again
    on every full pass cost batch ingest about a seventh of its time."""
    gc.collect()
    gc.freeze()


def serve_forever(server: KnowHubServer, companions: Sequence[Companion] = ()) -> None:
    """Starts the server and its companions, prints where they listen, and stops them on
    SIGINT or SIGTERM. The server's line comes first, once every companion has started
    (a service in a child process included), so a caller who reads it can call them all."""
    stop = stop_on_signal()
    port = server.start()
    started: list[Companion] = []
    try:
        lines = []
        for companion in companions:
            lines.append(companion.start(port))
            started.append(companion)
        _freeze_startup_objects()  # before announcing the port: the collection holds the GIL
        for line in [_listening(server, port), *lines]:
            print(line, flush=True)
        stop.wait()
    finally:
        for companion in reversed(started):
            companion.stop()
        server.stop()
    print("KnowHub stopped", flush=True)


def _listening(server: KnowHubServer, port: int) -> str:
    settings = server.runtime.settings
    where = settings.qdrant_url or str(settings.data_dir.resolve())
    tls = " over TLS" if settings.tls_cert_file else ""
    metrics = (
        ""
        if server.metrics_port is None
        else f"; metrics: http://{settings.host}:{server.metrics_port}/metrics"
    )
    return (
        f"KnowHub listening on {settings.host}:{port}{tls} (services: "
        f"{', '.join([*server.services, *server.forwarded])}; data: {where}{metrics})"
    )
