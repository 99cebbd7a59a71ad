"""The dream service's use cases: the memory (seed 002) — remember, recent memos, event
and profile search, profile revisions, the failed historian jobs — and dream runs (seed
000) — running and scheduling them, and reading the memory documents they write."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

import grpc

from services.cognition.domain import validate_trace_id
from services.common import validation as check
from services.common.auth import Principal
from services.common.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
)
from services.common.paging import read_token, write_token
from services.common.peers import PeerRefused
from services.common.redis_store import reachable
from services.common.times import now
from services.dream.cognition_link import CognitionLink, TraceInfo
from services.dream.config import DreamSettings
from services.dream.domain import (
    DEFAULT_PAGE_SIZE,
    ID_MAX,
    PAGE_SIZE_MAX,
    CognitiveEvent,
    Context,
    FailedJob,
    Job,
    Memo,
    Profile,
    ProfileRecord,
    ProfileRevision,
    conversation,
    decayed_score,
    isolation,
    memory_scope,
    new_job_id,
    restored_profile,
    searched_scopes,
    truncated_context,
    validate_conversation,
    validate_entity_type,
    validate_id,
    validate_query,
    validate_remember,
    validate_request_id,
)
from services.dream.dream_store import DreamStore
from services.dream.dreamer import runs_refusal
from services.dream.dreams import (
    SCHEDULES_PER_AGENT_MAX,
    START_AHEAD_MAX_SECONDS,
    TRACE_IDS_MAX,
    DocumentRevision,
    DreamRun,
    Fired,
    MemoryDocument,
    Schedule,
    new_run,
    new_schedule_id,
    next_run,
    path_problem,
    validate_agent_id,
    validate_cadence,
    validate_phases,
)
from services.dream.queue import HistorianQueue
from services.dream.store import EventStore, ProfileStore, event_where, profile_where

TOOL, AUTO = "tool", "auto"


@dataclass
class RememberResult:
    job_id: str = ""
    enqueued: bool = False
    memo_recorded: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(vars(self))

    @classmethod
    def from_json(cls, raw: str) -> RememberResult:
        return cls(**json.loads(raw))


@dataclass
class EventHit:
    event: CognitiveEvent
    similarity: float
    score: float


@dataclass
class EventSearch:
    hits: list[EventHit]
    warnings: list[str]


class MemoryOperations:
    def __init__(self, queue: HistorianQueue, events: EventStore, profiles: ProfileStore,
                 settings: DreamSettings, on_enqueue: Callable[[], None]) -> None:
        self._queue = queue
        self._events = events
        self._profiles = profiles
        self._settings = settings
        self._on_enqueue = on_enqueue

    # -- short-term memory and the historian queue --

    def remember(self, principal: Principal, *, memo: str, observations: list[str],
                 context: Context, force: bool, scope: str,
                 request_id: str = "") -> RememberResult:
        """Records the memo and enqueues its historian job; a replayed request_id (same
        caller, within the TTL) returns the first call's result and records nothing."""
        self._require_enabled()
        at = now()
        validate_remember(memo, observations, context, at)
        validate_request_id(request_id)
        scope = memory_scope(principal, scope)
        settings = self._settings
        context, warnings = truncated_context(
            context, source_max=settings.historian_source_message_max_len,
            recent_k=settings.historian_recent_messages_inject_k,
            line_max=settings.historian_recent_message_line_max_len)
        if not memo.strip() and not observations:
            return RememberResult(warnings=warnings)
        job = Job(job_id=new_job_id(), scope=scope, context=context, memo=memo,
                  observations=list(observations), force=force, created_at=at,
                  written_by=principal.user_scope)
        note = Memo(text=memo, created_at=at, sender_id=context.sender_id or context.user_id,
                    job_id=job.job_id) if memo.strip() else None
        result = RememberResult(job.job_id, True, note is not None, warnings)
        with reachable("remember"):
            first = self._queue.remember(
                job, note, request_id=request_id, response=result.to_json(),
                request_ttl_seconds=settings.memory_remember_request_ttl_hours * 3600)
        if first is not None:
            return RememberResult.from_json(first)
        self._on_enqueue()
        return result

    def recent_memos(self, principal: Principal, *, request_type: str, user_id: str,
                     group_id: str, limit: int, scope: str) -> list[Memo]:
        self._require_enabled()
        validate_conversation(request_type, user_id, group_id)
        keep = self._settings.memory_recent_memos_keep
        check.int_range(limit, "limit", 0, keep)
        scope = memory_scope(principal, scope)
        limit = limit or self._settings.memory_recent_memos_inject_k
        if not limit:
            return []
        with reachable("recent memos"):
            return self._queue.recent_memos(
                scope, conversation(request_type, user_id, group_id), min(limit, keep))

    # -- events --

    def search_events(self, principal: Principal, *, query: str, target_user_id: str,
                      target_group_id: str, top_k: int | None, time_from: float | None,
                      time_to: float | None, mode: str, scope: str) -> EventSearch:
        self._require_enabled()
        settings = self._settings
        if top_k is None:
            top_k = settings.memory_auto_top_k if mode == AUTO \
                else settings.memory_tool_default_top_k
        validate_query(query, top_k)
        validate_id(target_user_id, "target_user_id", required=False)
        validate_id(target_group_id, "target_group_id", required=False)
        warnings = []
        if time_from is not None and time_to is not None and time_from > time_to:
            time_from, time_to = time_to, time_from
            warnings.append("time_from was after time_to; they were swapped")
        scopes = searched_scopes(principal, scope)
        where = event_where(scopes, isolation(target_user_id, target_group_id), time_from,
                            time_to)
        multiplier = settings.memory_rerank_candidate_multiplier
        rerank = settings.memory_time_decay_enabled and multiplier >= 2
        recalled = self._events.recall(query, where, top_k * multiplier if rerank else top_k)
        half_life = settings.memory_time_decay_half_life_days_auto if mode == AUTO \
            else settings.memory_time_decay_half_life_days_tool
        current = time.time()
        scored = sorted(((decayed_score(
            c.similarity, current - c.timestamp, half_life_days=half_life,
            boost=settings.memory_time_decay_boost,
            min_similarity=settings.memory_time_decay_min_similarity) if rerank
            else c.similarity, c) for c in recalled), key=lambda s: (-s[0], -s[1].timestamp))
        hits = [EventHit(c.event, c.similarity, score) for score, c in scored[:top_k]]
        return EventSearch(hits, warnings)

    # -- profiles --

    def get_profile(self, principal: Principal, *, entity_type: str, entity_id: str,
                    scope: str) -> Profile:
        return self._profile_record(principal, entity_type, entity_id, scope).profile

    def search_profiles(self, principal: Principal, *, query: str, entity_type: str,
                        top_k: int | None, scope: str) -> list[tuple[Profile, float]]:
        self._require_enabled()
        top_k = self._settings.memory_profile_top_k if top_k is None else top_k
        validate_query(query, top_k)
        if entity_type:
            validate_entity_type(entity_type, "entity_type")
        where = profile_where(searched_scopes(principal, scope), entity_type)
        return self._profiles.recall(query, where, top_k)

    def profile_revisions(self, principal: Principal, *, entity_type: str, entity_id: str,
                          scope: str) -> list[ProfileRevision]:
        return self._profile_record(principal, entity_type, entity_id, scope).revisions

    def restore_profile(self, principal: Principal, *, entity_type: str, entity_id: str,
                        scope: str, revision: int) -> Profile:
        """Makes an earlier revision current; the one it replaces becomes a revision."""
        if revision < 1:
            raise InvalidArgument("revision", "is required: a revision number from "
                                  "ListProfileRevisions")
        current = self._profile_record(principal, entity_type, entity_id, scope)
        keep = self._settings.memory_profile_revision_keep

        def change(record: ProfileRecord) -> ProfileRecord:
            earlier = next((r.profile for r in record.revisions
                            if r.profile.revision == revision), None)
            if earlier is None:
                raise NotFound(f"revision {revision} of {entity_type} {entity_id!r} is not "
                               f"kept (the last {keep} are)")
            at = now()
            record.replace(restored_profile(record.profile, earlier, at), at, keep)
            return record

        profile = current.profile
        return self._profiles.update(profile.scope, entity_type, entity_id, change).profile

    def _profile_record(self, principal: Principal, entity_type: str, entity_id: str,
                        scope: str) -> ProfileRecord:
        self._require_enabled()
        validate_entity_type(entity_type, "entity_type")
        validate_id(entity_id, "entity_id")
        scope = memory_scope(principal, scope)
        record = self._profiles.get(scope, entity_type, entity_id)
        if record is None:
            raise NotFound(f"no profile of {entity_type} {entity_id!r} in {scope}")
        return record

    # -- failed historian jobs --

    def failed_jobs(self, principal: Principal, *, page_size: int,
                    page_token: str) -> tuple[list[FailedJob], str]:
        self._require_enabled()
        check.int_range(page_size or DEFAULT_PAGE_SIZE, "page_size", 1, PAGE_SIZE_MAX)
        with reachable("failed jobs"):
            return self._queue.failed_page(page_size or DEFAULT_PAGE_SIZE, page_token,
                                           _failed_job_visibility(principal))

    def retry_failed_job(self, principal: Principal, job_id: str) -> str:
        self._require_enabled()
        check.text(job_id, "job_id", 128, required=True)
        with reachable("retry failed job"):
            self._queue.retry_failed(job_id, _failed_job_visibility(principal))
        self._on_enqueue()
        return job_id

    def _require_enabled(self) -> None:
        if not self._settings.memory_enabled:
            raise FailedPrecondition("memory is disabled (KNOWHUB_MEMORY_ENABLED=false); "
                                     "queued jobs wait until it is enabled again")


def _failed_job_visibility(principal: Principal) -> Callable[[FailedJob], bool]:
    """Admins see every failed job; others those of the scopes they can see."""
    def visible(job: FailedJob) -> bool:
        return principal.is_admin or (job.job is not None
                                      and job.job.scope in principal.visible_scopes)
    return visible


# ---- Dream runs, schedules and memory documents (seed 000) -------------------------------

@dataclass
class ScheduleView:
    schedule: Schedule
    fired: Fired | None
    next_run_at: float | None


class DreamOperations:
    def __init__(self, store: DreamStore, cognition: CognitionLink, settings: DreamSettings,
                 service: Principal | None, on_run: Callable[[], None],
                 on_schedule: Callable[[], None]) -> None:
        self._store = store
        self._cognition = cognition
        self._settings = settings
        self._service = service
        self._on_run = on_run
        self._on_schedule = on_schedule

    # -- runs --

    def run_dream(self, principal: Principal, *, agent_id: str, trace_ids: list[str],
                  phases: list[str]) -> DreamRun:
        """Queues a run; the caller must be the agent (or an admin) and able to read
        each named trace."""
        phases = validate_phases(phases)
        check.items(trace_ids, "trace_ids", TRACE_IDS_MAX)
        for index, trace_id in enumerate(trace_ids):
            validate_trace_id(trace_id, f"trace_ids[{index}]")
        if agent_id:
            self._agent_for(principal, agent_id)
        self._require_service()
        traces = [self._readable(principal, t, f"trace_ids[{i}]")
                  for i, t in enumerate(trace_ids)]
        agents = sorted({t.agent_id for t in traces})
        agent = agent_id or principal.agent_id or (agents[0] if len(agents) == 1 else "")
        agent = self._agent_for(principal, agent)
        for index, trace in enumerate(traces):
            if trace.agent_id != agent:
                raise InvalidArgument(f"trace_ids[{index}]", f"trace {trace.trace_id!r} is "
                                      f"agent {trace.agent_id or '(none)'!r}'s, not {agent!r}'s")
        run = new_run(agent, list(trace_ids), phases, principal.user_scope,
                      principal.is_admin, now())
        with reachable("queueing a dream run"):
            self._store.create_run(run)
        self._on_run()
        return run

    def get_run(self, principal: Principal, run_id: str) -> DreamRun:
        check.text(run_id, "run_id", ID_MAX, required=True)
        with reachable("reading a dream run"):
            run = self._store.run(run_id)
        if run is None or not _may_see(principal, run.requested_by):
            raise NotFound(f"dream run {run_id!r} not found")
        return run

    def list_runs(self, principal: Principal, *, agent_id: str, status: str, page_size: int,
                  page_token: str) -> tuple[list[DreamRun], str]:
        """The runs the caller may read (those it requested; every run for an admin),
        newest first, optionally only an agent's or only those in a status."""
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if agent_id:
            validate_agent_id(agent_id)
        filters = ("runs", principal.user_scope, principal.is_admin, agent_id, status)
        after = _time_cursor(page_token, filters) if page_token else None
        requester = "" if principal.is_admin else principal.user_scope
        with reachable("listing dream runs"):
            matching = (run for run in self._store.runs_newest_first(requester, after)
                        if agent_id in ("", run.agent_id) and status in ("", run.status))
            found = list(islice(matching, page_size + 1))
        page = found[:page_size]
        token = write_token([page[-1].created_at, page[-1].run_id], filters) \
            if len(found) > page_size else ""
        return page, token

    # -- schedules --

    def schedule(self, principal: Principal, *, agent_id: str, every_minutes: int,
                 cron: str, time_zone: str, phases: list[str],
                 start_time: float | None) -> ScheduleView:
        at = now()
        validate_cadence(every_minutes, cron, time_zone)
        phases = validate_phases(phases)
        if start_time is not None and start_time > at + START_AHEAD_MAX_SECONDS:
            raise InvalidArgument("start_time", "is more than a year ahead")
        agent = self._agent_for(principal, agent_id)
        self._require_service()
        schedule = Schedule(
            schedule_id=new_schedule_id(), agent_id=agent, phases=phases,
            requested_by=principal.user_scope, sees_all=principal.is_admin, created_at=at,
            start_time=start_time if start_time is not None
            else at + every_minutes * 60, every_minutes=every_minutes, cron=cron,
            time_zone=time_zone or ("UTC" if cron else ""))
        with reachable("adding a dream schedule"):
            mine = [s for s in self._store.all_schedules() if s.agent_id == agent
                    and s.requested_by == schedule.requested_by]
            if len(mine) >= SCHEDULES_PER_AGENT_MAX:
                raise ResourceExhausted(f"agent {agent!r} already has {len(mine)} schedules "
                                        f"of {schedule.requested_by}; the limit is "
                                        f"{SCHEDULES_PER_AGENT_MAX}")
            self._store.add_schedule(schedule)
        self._on_schedule()
        return ScheduleView(schedule, None, next_run(schedule, None, at))

    def schedules(self, principal: Principal, *, agent_id: str, page_size: int,
                  page_token: str) -> tuple[list[ScheduleView], str]:
        """The caller's schedules (every one for an admin), oldest first."""
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if agent_id:
            validate_agent_id(agent_id)
        filters = ("schedules", principal.user_scope, principal.is_admin, agent_id)
        after = _time_cursor(page_token, filters) if page_token else None
        with reachable("listing dream schedules"):
            found = sorted((s for s in self._store.all_schedules()
                            if _may_see(principal, s.requested_by)
                            and agent_id in ("", s.agent_id)),
                           key=lambda s: (s.created_at, s.schedule_id))
            found = [s for s in found if after is None
                     or (s.created_at, s.schedule_id) > after]
            page = found[:page_size]
            fired = self._store.fired([s.schedule_id for s in page])
        at = now()
        views = [ScheduleView(s, fired.get(s.schedule_id),
                              next_run(s, fired.get(s.schedule_id), at)) for s in page]
        token = write_token([page[-1].created_at, page[-1].schedule_id], filters) \
            if len(found) > page_size else ""
        return views, token

    def delete_schedule(self, principal: Principal, schedule_id: str) -> str:
        check.text(schedule_id, "schedule_id", ID_MAX, required=True)
        with reachable("deleting a dream schedule"):
            schedule = self._store.schedule(schedule_id)
            if schedule is None or not _may_see(principal, schedule.requested_by) or \
                    not self._store.delete_schedule(schedule_id):
                raise NotFound(f"dream schedule {schedule_id!r} not found")
        return schedule_id

    # -- memory documents --

    def documents(self, principal: Principal, *, agent_id: str, page_size: int,
                  page_token: str) -> tuple[list[MemoryDocument], str]:
        """The agent's documents by path."""
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        agent = self._agent_for(principal, agent_id)
        filters = ("documents", agent)
        after = str(read_token(page_token, filters)) if page_token else ""
        with reachable("listing memory documents"):
            found = sorted(p for p in self._store.documents(agent).items() if p[0] > after)
        page = [document for _, document in found[:page_size]]
        token = write_token(page[-1].path, filters) if len(found) > page_size else ""
        return page, token

    def document(self, principal: Principal, *, agent_id: str, path: str,
                 revision: int) -> tuple[MemoryDocument, list[DocumentRevision]]:
        """The document (or one of its kept revisions) and its kept revisions."""
        agent = self._agent_for(principal, agent_id)
        problem = path_problem(path)
        if problem:
            raise InvalidArgument("path", problem)
        check.int_range(revision, "revision", 0, 2**31 - 1)
        with reachable("reading a memory document"):
            current = self._store.document(agent, path)
            revisions = self._store.revisions(agent, path) if current else []
        if current is None:
            raise NotFound(f"agent {agent!r} has no memory document {path!r}")
        if not revision or revision == current.revision:
            return current, revisions
        earlier = next((r.document for r in revisions if r.document.revision == revision),
                       None)
        if earlier is None:
            raise NotFound(f"revision {revision} of {path!r} is not kept (the last "
                           f"{self._settings.dream_document_revision_keep} are)")
        return earlier, revisions

    # -- rights --

    def _agent_for(self, principal: Principal, agent_id: str) -> str:
        """The agent a call acts for (the named one, else the token's); only the agent's
        own tokens and admins may."""
        agent = agent_id or principal.agent_id
        if not agent:
            raise InvalidArgument("agent_id", "is required: the caller's token names no agent")
        validate_agent_id(agent)
        if not principal.is_admin and principal.agent_id != agent:
            raise PermissionDenied(f"agent_id: only agent {agent!r}'s own tokens and admins "
                                   "may dream for it or read its memory")
        return agent

    def _readable(self, principal: Principal, trace_id: str, field_name: str) -> TraceInfo:
        """The trace, if the caller itself may read it (asked of cognition as the caller)."""
        try:
            return self._cognition.trace(principal, trace_id)
        except PeerRefused as refused:
            if refused.code == grpc.StatusCode.NOT_FOUND:
                raise NotFound(f"{field_name}: trace {trace_id!r} not found") from None
            raise

    def _require_service(self) -> None:
        refusal = runs_refusal(self._service)
        if refusal:
            raise FailedPrecondition(refusal)


def _time_cursor(page_token: str, filters: object) -> tuple[float, str]:
    """The (created_at, id) a page of schedules or runs ended with."""
    try:
        created_at, item_id = read_token(page_token, filters)
        return float(created_at), str(item_id)
    except (TypeError, ValueError):
        raise InvalidArgument("page_token", "is not a token this service issued") from None


def _may_see(principal: Principal, requested_by: str) -> bool:
    return principal.is_admin or requested_by == principal.user_scope
