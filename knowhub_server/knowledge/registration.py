"""How the knowledge service joins a server: its store, settings, peer clients and
background work (the purger) wired to the runtime."""

from __future__ import annotations

import logging
import threading

from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.runtime.admin import SubjectForget
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import ServiceHost, as_grpc_server
from knowhub_server.knowledge.cognition_client import CognitionClient
from knowhub_server.knowledge.config import KnowledgeSettings
from knowhub_server.knowledge.operations import KnowledgeOperations
from knowhub_server.knowledge.resource_client import ResourceClient
from knowhub_server.knowledge.servicer import KnowledgeServicer
from knowhub_server.knowledge.store import KnowledgeStore, KnowledgeVectors

log = logging.getLogger(__name__)
SERVICE_NAME = knowledge_pb2.DESCRIPTOR.services_by_name["KnowledgeService"].full_name
# This service's part of the admin's ForgetSubject.
FORGET = SubjectForget(
    "knowledge",
    knowledge_pb2_grpc.KnowledgeServiceStub,
    "ForgetKnowledgeSubject",
    knowledge_pb2.ForgetKnowledgeSubjectRequest,
)


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the knowledge service to `server`; returns its full service name."""
    settings = KnowledgeSettings()
    store = KnowledgeStore(runtime.vectors, KnowledgeVectors(runtime.embedder), settings)
    store.add_missing_fingerprints()  # before the first save looks for its duplicates
    backlog = store.backlog(runtime.metrics)
    if backlog is not None:
        runtime.background.append(backlog)
    links = ResourceClient(runtime.peers, settings.resource_check_timeout_seconds)
    operations = KnowledgeOperations(
        store,
        settings,
        runtime.llm,
        links,
        CognitionClient(runtime.peers),
        runtime.settings.language,
    )
    knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(
        KnowledgeServicer(runtime.authenticator, operations), as_grpc_server(server)
    )
    runtime.background.append(Purger(operations, settings.knowledge_purge_interval_seconds))
    return SERVICE_NAME


class Purger:
    """Erases deleted records whose retention passed, every `interval` seconds; a
    Background of the runtime."""

    def __init__(self, operations: KnowledgeOperations, interval: float) -> None:
        self._ops = operations
        self._interval = interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="knowledge-purger", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                purged = self._ops.purge_expired()
                if purged:
                    log.info("purged %d deleted knowledge records past their retention", purged)
            except Exception:  # a store hiccup must not end the sweeps
                log.exception("purging deleted knowledge failed; trying again later")
            self._stopping.wait(self._interval)
