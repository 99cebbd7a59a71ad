"""gRPC face of the dream service: protobuf messages in and out, nothing more."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from google.protobuf.timestamp_pb2 import Timestamp
from knowhub.v1 import dream_pb2, dream_pb2_grpc

from services.common.auth import Authenticator, Principal
from services.common.errors import InvalidArgument
from services.common.redaction import keep_out_of_logs
from services.common.rpc import unary
from services.common.runtime import Runtime
from services.common.server import ServiceHost
from services.common.times import from_timestamp, to_timestamp
from services.common.vectors import HybridFusion
from services.dream.cognition_link import CognitionLink
from services.dream.config import DreamSettings
from services.dream.domain import (
    DEFAULT_PAGE_SIZE,
    GROUP,
    GROUP_ENTITY,
    PRIVATE,
    USER,
    CognitiveEvent,
    Context,
    FailedJob,
    Memo,
    Profile,
)
from services.dream.dream_store import DreamStore
from services.dream.dreamer import Dreamer, RunExecutor, runs_refusal, service_principal
from services.dream.dreams import (
    CROSS_TRACE_INTEGRATE,
    DONE,
    FAILED,
    PER_TRACE_REFLECT,
    QUEUED,
    RUNNING,
    SKIPPED,
    DreamRun,
    MemoryDocument,
)
from services.dream.evaluator import Evaluator, evaluator_refusal
from services.dream.historian import Historian, JobProcessor
from services.dream.operations import AUTO, TOOL, DreamOperations, MemoryOperations, ScheduleView
from services.dream.queue import HistorianQueue
from services.dream.scheduler import Scheduler
from services.dream.store import EventStore, MemoryVectors, ProfileStore

log = logging.getLogger(__name__)
SERVICE_NAME = dream_pb2.DESCRIPTOR.services_by_name["DreamService"].full_name
_REQUEST_TYPES = {dream_pb2.REQUEST_TYPE_UNSPECIFIED: "", dream_pb2.REQUEST_TYPE_GROUP: GROUP,
                  dream_pb2.REQUEST_TYPE_PRIVATE: PRIVATE}
_REQUEST_TYPE_ENUMS = {name: value for value, name in _REQUEST_TYPES.items() if name}
_ENTITY_TYPES = {dream_pb2.ENTITY_TYPE_UNSPECIFIED: "", dream_pb2.ENTITY_TYPE_USER: USER,
                 dream_pb2.ENTITY_TYPE_GROUP: GROUP_ENTITY}
_ENTITY_TYPE_ENUMS = {name: value for value, name in _ENTITY_TYPES.items() if name}
_MODES = {dream_pb2.SEARCH_MODE_UNSPECIFIED: TOOL, dream_pb2.SEARCH_MODE_TOOL: TOOL,
          dream_pb2.SEARCH_MODE_AUTO: AUTO}


_PHASES = {dream_pb2.DREAM_PHASE_PER_TRACE_REFLECT: PER_TRACE_REFLECT,
           dream_pb2.DREAM_PHASE_CROSS_TRACE_INTEGRATE: CROSS_TRACE_INTEGRATE}
_PHASE_ENUMS = {name: value for value, name in _PHASES.items()}
_STATUS_ENUMS = {QUEUED: dream_pb2.DREAM_RUN_STATUS_QUEUED,
                 RUNNING: dream_pb2.DREAM_RUN_STATUS_RUNNING,
                 DONE: dream_pb2.DREAM_RUN_STATUS_DONE,
                 SKIPPED: dream_pb2.DREAM_RUN_STATUS_SKIPPED,
                 FAILED: dream_pb2.DREAM_RUN_STATUS_FAILED}
_STATUSES = {dream_pb2.DREAM_RUN_STATUS_UNSPECIFIED: "",
             **{value: name for name, value in _STATUS_ENUMS.items()}}


class DreamServicer(dream_pb2_grpc.DreamServiceServicer):
    def __init__(self, authenticator: Authenticator, memory: MemoryOperations,
                 dreams: DreamOperations) -> None:
        self.authenticator = authenticator
        self._memory = memory
        self._dreams = dreams

    @unary
    def Remember(self, request: dream_pb2.RememberRequest,
                 principal: Principal) -> dream_pb2.RememberResponse:
        result = self._memory.remember(
            principal, memo=request.memo, observations=list(request.observations),
            context=context_from_proto(request.context), force=request.force,
            scope=request.scope, request_id=request.request_id)
        return dream_pb2.RememberResponse(job_id=result.job_id, enqueued=result.enqueued,
                                          memo_recorded=result.memo_recorded,
                                          warnings=result.warnings)

    @unary
    def RecentMemos(self, request: dream_pb2.RecentMemosRequest,
                    principal: Principal) -> dream_pb2.RecentMemosResponse:
        memos = self._memory.recent_memos(
            principal, request_type=_enum(_REQUEST_TYPES, request.request_type,
                                          "request_type"),
            user_id=request.user_id, group_id=request.group_id, limit=request.limit,
            scope=request.scope)
        return dream_pb2.RecentMemosResponse(memos=[memo_to_proto(m) for m in memos])

    @unary
    def SearchEvents(self, request: dream_pb2.SearchEventsRequest,
                     principal: Principal) -> dream_pb2.SearchEventsResponse:
        result = self._memory.search_events(
            principal, query=request.query, target_user_id=request.target_user_id,
            target_group_id=request.target_group_id,
            top_k=request.top_k if request.HasField("top_k") else None,
            time_from=from_timestamp(request.time_from, "time_from"),
            time_to=from_timestamp(request.time_to, "time_to"),
            mode=_enum(_MODES, request.mode, "mode"), scope=request.scope)
        return dream_pb2.SearchEventsResponse(
            hits=[dream_pb2.EventHit(event=event_to_proto(h.event), similarity=h.similarity,
                                     score=h.score) for h in result.hits],
            warnings=result.warnings)

    @unary
    def GetProfile(self, request: dream_pb2.GetProfileRequest,
                   principal: Principal) -> dream_pb2.GetProfileResponse:
        profile = self._memory.get_profile(
            principal, entity_type=_enum(_ENTITY_TYPES, request.entity_type, "entity_type"),
            entity_id=request.entity_id, scope=request.scope)
        return dream_pb2.GetProfileResponse(profile=profile_to_proto(profile))

    @unary
    def SearchProfiles(self, request: dream_pb2.SearchProfilesRequest,
                       principal: Principal) -> dream_pb2.SearchProfilesResponse:
        hits = self._memory.search_profiles(
            principal, query=request.query,
            entity_type=_enum(_ENTITY_TYPES, request.entity_type, "entity_type"),
            top_k=request.top_k if request.HasField("top_k") else None, scope=request.scope)
        return dream_pb2.SearchProfilesResponse(
            hits=[dream_pb2.ProfileHit(profile=profile_to_proto(p), score=score)
                  for p, score in hits])

    @unary
    def ListProfileRevisions(self, request: dream_pb2.ListProfileRevisionsRequest,
                             principal: Principal
                             ) -> dream_pb2.ListProfileRevisionsResponse:
        revisions = self._memory.profile_revisions(
            principal, entity_type=_enum(_ENTITY_TYPES, request.entity_type, "entity_type"),
            entity_id=request.entity_id, scope=request.scope)
        return dream_pb2.ListProfileRevisionsResponse(revisions=[
            dream_pb2.ProfileRevision(profile=profile_to_proto(r.profile),
                                      replaced_at=to_timestamp(r.replaced_at))
            for r in revisions])

    @unary
    def RestoreProfileRevision(self, request: dream_pb2.RestoreProfileRevisionRequest,
                               principal: Principal
                               ) -> dream_pb2.RestoreProfileRevisionResponse:
        profile = self._memory.restore_profile(
            principal, entity_type=_enum(_ENTITY_TYPES, request.entity_type, "entity_type"),
            entity_id=request.entity_id, scope=request.scope, revision=request.revision)
        return dream_pb2.RestoreProfileRevisionResponse(profile=profile_to_proto(profile))

    @unary
    def ListFailedJobs(self, request: dream_pb2.ListFailedJobsRequest,
                       principal: Principal) -> dream_pb2.ListFailedJobsResponse:
        jobs, token = self._memory.failed_jobs(principal, page_size=request.page_size,
                                               page_token=request.page_token)
        return dream_pb2.ListFailedJobsResponse(jobs=[failed_job_to_proto(j) for j in jobs],
                                                next_page_token=token)

    @unary
    def RetryFailedJob(self, request: dream_pb2.RetryFailedJobRequest,
                       principal: Principal) -> dream_pb2.RetryFailedJobResponse:
        job_id = self._memory.retry_failed_job(principal, request.job_id)
        return dream_pb2.RetryFailedJobResponse(job_id=job_id)


    # -- dream runs --

    @unary
    def RunDream(self, request: dream_pb2.RunDreamRequest,
                 principal: Principal) -> dream_pb2.RunDreamResponse:
        run = self._dreams.run_dream(principal, agent_id=request.agent_id,
                                     trace_ids=list(request.trace_ids),
                                     phases=_phases(request.phases))
        return dream_pb2.RunDreamResponse(run=run_to_proto(run))

    @unary
    def GetDreamRun(self, request: dream_pb2.GetDreamRunRequest,
                    principal: Principal) -> dream_pb2.GetDreamRunResponse:
        return dream_pb2.GetDreamRunResponse(
            run=run_to_proto(self._dreams.get_run(principal, request.run_id)))

    @unary
    def ListDreamRuns(self, request: dream_pb2.ListDreamRunsRequest,
                      principal: Principal) -> dream_pb2.ListDreamRunsResponse:
        runs, token = self._dreams.list_runs(
            principal, agent_id=request.agent_id,
            status=_enum(_STATUSES, request.status, "status"),
            page_size=request.page_size or DEFAULT_PAGE_SIZE, page_token=request.page_token)
        return dream_pb2.ListDreamRunsResponse(runs=[run_to_proto(r) for r in runs],
                                               next_page_token=token)

    @unary
    def ScheduleDream(self, request: dream_pb2.ScheduleDreamRequest,
                      principal: Principal) -> dream_pb2.ScheduleDreamResponse:
        view = self._dreams.schedule(
            principal, agent_id=request.agent_id, every_minutes=request.every_minutes,
            cron=request.cron, time_zone=request.time_zone, phases=_phases(request.phases),
            start_time=from_timestamp(request.start_time, "start_time"))
        return dream_pb2.ScheduleDreamResponse(schedule=schedule_to_proto(view))

    @unary
    def ListSchedules(self, request: dream_pb2.ListSchedulesRequest,
                      principal: Principal) -> dream_pb2.ListSchedulesResponse:
        views, token = self._dreams.schedules(
            principal, agent_id=request.agent_id,
            page_size=request.page_size or DEFAULT_PAGE_SIZE, page_token=request.page_token)
        return dream_pb2.ListSchedulesResponse(
            schedules=[schedule_to_proto(v) for v in views], next_page_token=token)

    @unary
    def DeleteSchedule(self, request: dream_pb2.DeleteScheduleRequest,
                       principal: Principal) -> dream_pb2.DeleteScheduleResponse:
        return dream_pb2.DeleteScheduleResponse(
            schedule_id=self._dreams.delete_schedule(principal, request.schedule_id))

    @unary
    def ListMemoryDocuments(self, request: dream_pb2.ListMemoryDocumentsRequest,
                            principal: Principal) -> dream_pb2.ListMemoryDocumentsResponse:
        documents, token = self._dreams.documents(
            principal, agent_id=request.agent_id,
            page_size=request.page_size or DEFAULT_PAGE_SIZE, page_token=request.page_token)
        return dream_pb2.ListMemoryDocumentsResponse(
            documents=[document_to_proto(d, with_content=request.include_content)
                       for d in documents], next_page_token=token)

    @unary
    def GetMemoryDocument(self, request: dream_pb2.GetMemoryDocumentRequest,
                          principal: Principal) -> dream_pb2.GetMemoryDocumentResponse:
        document, revisions = self._dreams.document(
            principal, agent_id=request.agent_id, path=request.path,
            revision=request.revision)
        return dream_pb2.GetMemoryDocumentResponse(
            document=document_to_proto(document, with_content=True),
            revisions=[dream_pb2.MemoryDocumentRevision(
                revision=r.document.revision, updated_at=to_timestamp(r.document.updated_at),
                replaced_at=to_timestamp(r.replaced_at), run_id=r.document.run_id)
                for r in revisions])


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the dream service to `server`, and its historian, dream workers, scheduler and
    evaluator to the runtime's background work; returns the service's full name."""
    settings = DreamSettings()
    vectors = MemoryVectors(runtime.embedder)
    fusion = HybridFusion(settings.memory_search_hybrid_pool,
                          settings.memory_search_dense_weight)
    events = EventStore(runtime.vectors, vectors, fusion)
    profiles = ProfileStore(runtime.vectors, vectors, fusion)
    queue = HistorianQueue(runtime.redis, runtime.settings.redis_prefix,
                           memos_keep=settings.memory_recent_memos_keep,
                           failed_max_files=settings.historian_failed_max_files,
                           failed_max_age_days=settings.historian_failed_max_age_days)
    runtime.watch_streams(queue.jobs, queue.failed)
    historian = Historian(runtime, queue, JobProcessor(events, profiles, runtime.llm, settings),
                          settings)
    runtime.background.append(historian)
    memory = MemoryOperations(queue, events, profiles, settings, on_enqueue=historian.wake)
    dream_pb2_grpc.add_DreamServiceServicer_to_server(
        DreamServicer(runtime.authenticator, memory, _dreams(runtime, settings)), server)
    return SERVICE_NAME


def _dreams(runtime: Runtime, settings: DreamSettings) -> DreamOperations:
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
    cognition = CognitionLink(runtime.peers)
    dreamer = Dreamer(runtime, store, RunExecutor(store, cognition, principal, runtime.llm,
                                                  settings), settings)
    scheduler = Scheduler(runtime, store, settings, on_fire=dreamer.wake)
    runtime.background += [dreamer, scheduler]
    if principal is not None and settings.evaluator:
        runtime.background.append(Evaluator(runtime, cognition, principal, runtime.llm,
                                            settings))
    return DreamOperations(store, cognition, settings, principal, on_run=dreamer.wake,
                           on_schedule=scheduler.wake)


def _enum(names: dict[int, str], value: int, field: str) -> str:
    if value not in names:
        raise InvalidArgument(field, f"{value} is not a valid value")
    return names[value]


def _phases(values: Iterable[int]) -> list[str]:
    return [_enum(_PHASES, v, f"phases[{i}]") for i, v in enumerate(values)]


# ---- Conversions ----------------------------------------------------------------------

def context_from_proto(context: dream_pb2.MemoryContext) -> Context:
    return Context(
        request_type=_enum(_REQUEST_TYPES, context.request_type, "context.request_type"),
        user_id=context.user_id, group_id=context.group_id, sender_id=context.sender_id,
        source_message=context.source_message,
        recent_messages=list(context.recent_messages), sender_name=context.sender_name,
        group_name=context.group_name,
        timestamp=from_timestamp(context.timestamp, "context.timestamp"))


def memo_to_proto(memo: Memo) -> dream_pb2.Memo:
    return dream_pb2.Memo(text=memo.text, created_at=to_timestamp(memo.created_at),
                          sender_id=memo.sender_id, job_id=memo.job_id)


def event_to_proto(event: CognitiveEvent) -> dream_pb2.CognitiveEvent:
    return dream_pb2.CognitiveEvent(
        event_id=event.event_id, text=event.text, user_id=event.user_id,
        group_id=event.group_id, sender_id=event.sender_id,
        timestamp=to_timestamp(event.timestamp_epoch), timestamp_local=event.timestamp_local,
        request_type=event.request_type, perspective=event.perspective,
        is_absolute=event.is_absolute, schema_version=event.schema_version,
        scope=event.scope, warning=event.warning, job_id=event.job_id)


def profile_to_proto(profile: Profile) -> dream_pb2.Profile:
    return dream_pb2.Profile(
        entity_type=_ENTITY_TYPE_ENUMS[profile.entity_type], entity_id=profile.entity_id,
        name=profile.name, tags=profile.tags, summary=profile.summary,
        markdown=profile.markdown, updated_at=to_timestamp(profile.updated_at),
        source_event_id=profile.source_event_id, revision=profile.revision,
        scope=profile.scope, reason=profile.reason)


def failed_job_to_proto(failed: FailedJob) -> dream_pb2.FailedJob:
    message = dream_pb2.FailedJob(job_id=failed.job_id, error=failed.error,
                                  deliveries=failed.deliveries,
                                  failed_at=to_timestamp(failed.failed_at))
    job = failed.job
    if job is not None:
        message.scope, message.memo = job.scope, job.memo
        message.request_type = _REQUEST_TYPE_ENUMS[job.context.request_type]
        message.user_id, message.group_id = job.context.user_id, job.context.group_id
        message.observations.extend(job.observations)
    return message


def run_to_proto(run: DreamRun) -> dream_pb2.DreamRun:
    return dream_pb2.DreamRun(
        run_id=run.run_id, agent_id=run.agent_id, trace_ids=run.trace_ids,
        phases=[_PHASE_ENUMS[p] for p in run.phases], status=_STATUS_ENUMS[run.status],
        reason=run.reason, counts=dream_pb2.DreamRunCounts(**run.counts),
        failures=[dream_pb2.DreamFailure(phase=_PHASE_ENUMS[f.phase], trace_id=f.trace_id,
                                         reason=f.reason) for f in run.failures],
        schedule_id=run.schedule_id, requested_by=run.requested_by,
        created_at=to_timestamp(run.created_at), started_at=_optional_time(run.started_at),
        finished_at=_optional_time(run.finished_at), attempts=run.attempts)


def schedule_to_proto(view: ScheduleView) -> dream_pb2.DreamSchedule:
    schedule, fired = view.schedule, view.fired
    message = dream_pb2.DreamSchedule(
        schedule_id=schedule.schedule_id, agent_id=schedule.agent_id,
        every_minutes=schedule.every_minutes, cron=schedule.cron,
        time_zone=schedule.time_zone, phases=[_PHASE_ENUMS[p] for p in schedule.phases],
        start_time=to_timestamp(schedule.start_time), requested_by=schedule.requested_by,
        created_at=to_timestamp(schedule.created_at),
        next_run_at=_optional_time(view.next_run_at or 0.0))
    if fired is not None:
        message.last_fired_at.CopyFrom(to_timestamp(fired.slot))
        message.last_run_id = fired.run_id
    return message


def document_to_proto(document: MemoryDocument, *,
                      with_content: bool) -> dream_pb2.MemoryDocument:
    return dream_pb2.MemoryDocument(
        agent_id=document.agent_id, path=document.path,
        content=document.content if with_content else "", revision=document.revision,
        updated_at=to_timestamp(document.updated_at), run_id=document.run_id,
        size=len(document.content))


def _optional_time(seconds: float) -> Timestamp | None:
    return to_timestamp(seconds) if seconds else None
