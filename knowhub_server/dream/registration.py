"""How the dream service joins a server: the memory's stores and historian, and dream
runs' workers, scheduler and evaluator, wired to the runtime."""

from __future__ import annotations

import logging

from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub_server.common.runtime.admin import SubjectForget
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import ServiceHost, as_grpc_server
from knowhub_server.common.security.redaction import keep_out_of_logs
from knowhub_server.common.storage.vectors import HybridFusion
from knowhub_server.dream.memory.config import MemorySettings
from knowhub_server.dream.memory.historian import Historian, JobProcessor
from knowhub_server.dream.memory.operations import MemoryOperations
from knowhub_server.dream.memory.queue import HistorianQueue
from knowhub_server.dream.memory.store import EventStore, MemoryVectors, ProfileStore
from knowhub_server.dream.runs.cognition_client import CognitionClient
from knowhub_server.dream.runs.config import RunsSettings
from knowhub_server.dream.runs.dreamer import (
    Dreamer,
    RunExecutor,
    runs_refusal,
    service_principal,
)
from knowhub_server.dream.runs.evaluator import Evaluator, evaluator_refusal
from knowhub_server.dream.runs.operations import DreamOperations
from knowhub_server.dream.runs.scheduler import Scheduler
from knowhub_server.dream.runs.store import DreamStore
from knowhub_server.dream.servicer import DreamServicer

log = logging.getLogger(__name__)
SERVICE_NAME = dream_pb2.DESCRIPTOR.services_by_name["DreamService"].full_name
# This service's part of the admin's ForgetSubject.
FORGET = SubjectForget(
    "dream",
    dream_pb2_grpc.DreamServiceStub,
    "ForgetDreamSubject",
    dream_pb2.ForgetDreamSubjectRequest,
)


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the dream service to `server`, and its historian, dream workers, scheduler and
    evaluator to the runtime's background work; returns the service's full name."""
    settings = MemorySettings()
    vectors = MemoryVectors(runtime.embedder)
    fusion = HybridFusion(settings.memory_search_hybrid_pool, settings.memory_search_dense_weight)
    events = EventStore(runtime.vectors, vectors, fusion)
    profiles = ProfileStore(runtime.vectors, vectors, fusion)
    runtime.background += [
        b
        for b in (events.backlog(runtime.metrics), profiles.backlog(runtime.metrics))
        if b is not None
    ]
    queue = HistorianQueue(
        runtime.redis,
        runtime.settings.redis_prefix,
        memos_keep=settings.memory_recent_memos_keep,
        failed_max_files=settings.historian_failed_max_files,
        failed_max_age_days=settings.historian_failed_max_age_days,
        job_keep_hours=settings.memory_job_keep_hours,
    )
    runtime.watch_streams(queue.jobs, queue.failed)
    historian = Historian(
        runtime, queue, JobProcessor(events, profiles, runtime.llm, settings), settings
    )
    runtime.background.append(historian)
    memory = MemoryOperations(queue, events, profiles, settings, on_enqueue=historian.wake)
    dream_pb2_grpc.add_DreamServiceServicer_to_server(
        DreamServicer(runtime.authenticator, memory, _dreams(runtime, RunsSettings())),
        as_grpc_server(server),
    )
    return SERVICE_NAME


def _dreams(runtime: Runtime, settings: RunsSettings) -> DreamOperations:
    """Dream runs: their workers, scheduler and the evaluator join the background work.
    Refuses to start when the service token is unknown or the evaluator lacks its role."""
    keep_out_of_logs(settings.dream_service_token)
    principal = service_principal(runtime.authenticator, settings.dream_service_token)
    refusal = evaluator_refusal(settings, principal)
    if refusal:
        raise ValueError(refusal)
    if settings.dream_service_token and runs_refusal(principal):
        log.warning("%s: RunDream and ScheduleDream will refuse", runs_refusal(principal))
    store = DreamStore(runtime.redis, runtime.settings.redis_prefix)
    runtime.watch_streams(store.stream)
    cognition = CognitionClient(runtime.peers)
    dreamer = Dreamer(
        runtime, store, RunExecutor(store, cognition, principal, runtime.llm, settings), settings
    )
    scheduler = Scheduler(runtime, store, settings, on_fire=dreamer.wake)
    runtime.background += [dreamer, scheduler]
    if principal is not None and settings.evaluator:
        runtime.background.append(Evaluator(runtime, cognition, principal, runtime.llm, settings))
    return DreamOperations(
        store, cognition, settings, principal, on_run=dreamer.wake, on_schedule=scheduler.wake
    )
