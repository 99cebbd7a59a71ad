"""Dream runs' use cases: running and scheduling them, and reading the memory
documents they write."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

import grpc

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
)
from knowhub_server.common.base.paging import read_token, write_token
from knowhub_server.common.base.times import now
from knowhub_server.common.runtime.peers import PeerRefused
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.forget import forget_subject, subject_parts
from knowhub_server.common.storage.redis_store import reachable
from knowhub_server.dream.runs.cognition_client import CognitionClient, TraceInfo
from knowhub_server.dream.runs.config import RunsSettings
from knowhub_server.dream.runs.domain import (
    DOCUMENT_MAX,
    ID_MAX,
    PAGE_SIZE_MAX,
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
    same_schedule,
    validate_agent_id,
    validate_cadence,
    validate_phases,
)
from knowhub_server.dream.runs.dreamer import runs_refusal
from knowhub_server.dream.runs.store import DreamStore


@dataclass
class ScheduleView:
    schedule: Schedule
    fired: Fired | None
    next_run_at: float | None


class DreamOperations:
    def __init__(
        self,
        store: DreamStore,
        cognition: CognitionClient,
        settings: RunsSettings,
        service: Principal | None,
        on_run: Callable[[], None],
        on_schedule: Callable[[], None],
    ) -> None:
        self._store = store
        self._cognition = cognition
        self._settings = settings
        self._service = service
        self._on_run = on_run
        self._on_schedule = on_schedule

    # -- runs --

    def run_dream(
        self, principal: Principal, *, agent_id: str, trace_ids: list[str], phases: list[str]
    ) -> DreamRun:
        """Queues a run; the caller must be the agent (or an admin) and able to read
        each named trace."""
        phases = validate_phases(phases)
        check.items(trace_ids, "trace_ids", TRACE_IDS_MAX)
        for index, trace_id in enumerate(trace_ids):
            check.trace_id(trace_id, f"trace_ids[{index}]")
        if agent_id:
            self._agent_for(principal, agent_id)
        self._require_service()
        traces = [self._readable(principal, t, f"trace_ids[{i}]") for i, t in enumerate(trace_ids)]
        agents = sorted({t.agent_id for t in traces})
        agent = (
            agent_id
            or principal.agent_id
            or (principal.show(agents[0]) if len(agents) == 1 else "")
        )
        agent = self._agent_for(principal, agent)
        for index, trace in enumerate(traces):
            if trace.agent_id != agent:
                theirs = principal.show(trace.agent_id) or "(none)"
                raise InvalidArgument(
                    f"trace_ids[{index}]",
                    f"trace {trace.trace_id!r} is "
                    f"agent {theirs!r}'s, not {principal.show(agent)!r}'s",
                )
        run = new_run(
            agent, list(trace_ids), phases, principal.user_scope, principal.is_admin, now()
        )
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

    def list_runs(
        self, principal: Principal, *, agent_id: str, status: str, page_size: int, page_token: str
    ) -> tuple[list[DreamRun], str]:
        """The runs the caller may read (those it requested; every run for an admin),
        newest first, optionally only an agent's or only those in a status."""
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if agent_id:
            agent_id = principal.qualify(validate_agent_id(agent_id))
        filters = ("runs", principal.user_scope, principal.is_admin, agent_id, status)
        after = _time_cursor(page_token, filters) if page_token else None
        requester = "" if principal.is_admin else principal.user_scope
        with reachable("listing dream runs"):
            matching = (
                run
                for run in self._store.runs_newest_first(requester, after)
                if agent_id in ("", run.agent_id) and status in ("", run.status)
            )
            found = list(islice(matching, page_size + 1))
        page = found[:page_size]
        token = (
            write_token([page[-1].created_at, page[-1].run_id], filters)
            if len(found) > page_size
            else ""
        )
        return page, token

    # -- schedules --

    def schedule(
        self,
        principal: Principal,
        *,
        agent_id: str,
        every_minutes: int,
        cron: str,
        time_zone: str,
        phases: list[str],
        start_time: float | None,
        allow_duplicate: bool = False,
    ) -> tuple[ScheduleView, bool]:
        """Adds a schedule: (it, False); or, unless `allow_duplicate`, (the equal schedule
        the agent has from this requester, True)."""
        at = now()
        validate_cadence(every_minutes, cron, time_zone)
        phases = validate_phases(phases)
        if start_time is not None and start_time > at + START_AHEAD_MAX_SECONDS:
            raise InvalidArgument("start_time", "is more than a year ahead")
        agent = self._agent_for(principal, agent_id)
        self._require_service()
        schedule = Schedule(
            schedule_id=new_schedule_id(),
            agent_id=agent,
            phases=phases,
            requested_by=principal.user_scope,
            sees_all=principal.is_admin,
            created_at=at,
            start_time=start_time if start_time is not None else at + every_minutes * 60,
            every_minutes=every_minutes,
            cron=cron,
            time_zone=time_zone or ("UTC" if cron else ""),
        )
        with reachable("adding a dream schedule"):
            mine = [
                s
                for s in self._store.all_schedules()
                if s.agent_id == agent and s.requested_by == schedule.requested_by
            ]
            same = next(
                (s for s in mine if same_schedule(s, schedule, start_time is not None)), None
            )
            if same is not None and not allow_duplicate:
                fired = self._store.fired([same.schedule_id]).get(same.schedule_id)
                return ScheduleView(same, fired, next_run(same, fired, at)), True
            if len(mine) >= SCHEDULES_PER_AGENT_MAX:
                raise ResourceExhausted(
                    f"agent {principal.show(agent)!r} already has "
                    f"{len(mine)} schedules "
                    f"of {schedule.requested_by}; the limit is "
                    f"{SCHEDULES_PER_AGENT_MAX}"
                )
            self._store.add_schedule(schedule)
        self._on_schedule()
        return ScheduleView(schedule, None, next_run(schedule, None, at)), False

    def schedules(
        self, principal: Principal, *, agent_id: str, page_size: int, page_token: str
    ) -> tuple[list[ScheduleView], str]:
        """The caller's schedules (every one for an admin), oldest first."""
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if agent_id:
            agent_id = principal.qualify(validate_agent_id(agent_id))
        filters = ("schedules", principal.user_scope, principal.is_admin, agent_id)
        after = _time_cursor(page_token, filters) if page_token else None
        with reachable("listing dream schedules"):
            found = sorted(
                (
                    s
                    for s in self._store.all_schedules()
                    if _may_see(principal, s.requested_by) and agent_id in ("", s.agent_id)
                ),
                key=lambda s: (s.created_at, s.schedule_id),
            )
            found = [s for s in found if after is None or (s.created_at, s.schedule_id) > after]
            page = found[:page_size]
            fired = self._store.fired([s.schedule_id for s in page])
        at = now()
        views = [
            ScheduleView(s, fired.get(s.schedule_id), next_run(s, fired.get(s.schedule_id), at))
            for s in page
        ]
        token = (
            write_token([page[-1].created_at, page[-1].schedule_id], filters)
            if len(found) > page_size
            else ""
        )
        return views, token

    def forget(self, principal: Principal, subject: str) -> dict[str, int]:
        """Erases a subject's dream state: an agent's memory documents and schedules, or
        the schedules a user made."""
        stored = forget_subject(principal, subject)
        kind, entity_id = subject_parts(stored)
        agent = kind == "agent"
        with reachable("forgetting a subject's dreams"):
            documents = self._store.erase_documents(entity_id) if agent else 0
            doomed = [
                s.schedule_id
                for s in self._store.all_schedules()
                if (s.agent_id == entity_id if agent else s.requested_by == stored)
            ]
            schedules = sum(self._store.delete_schedule(i) for i in doomed)
        return {"documents": documents, "schedules": schedules}

    def delete_schedule(self, principal: Principal, schedule_id: str) -> str:
        check.text(schedule_id, "schedule_id", ID_MAX, required=True)
        with reachable("deleting a dream schedule"):
            schedule = self._store.schedule(schedule_id)
            if (
                schedule is None
                or not _may_see(principal, schedule.requested_by)
                or not self._store.delete_schedule(schedule_id)
            ):
                raise NotFound(f"dream schedule {schedule_id!r} not found")
        return schedule_id

    # -- memory documents --

    def documents(
        self, principal: Principal, *, agent_id: str, page_size: int, page_token: str
    ) -> tuple[list[MemoryDocument], str]:
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

    def document(
        self, principal: Principal, *, agent_id: str, path: str, revision: int
    ) -> tuple[MemoryDocument, list[DocumentRevision]]:
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
            raise NotFound(f"agent {principal.show(agent)!r} has no memory document {path!r}")
        if not revision or revision == current.revision:
            return current, revisions
        earlier = next((r.document for r in revisions if r.document.revision == revision), None)
        if earlier is None:
            raise NotFound(
                f"revision {revision} of {path!r} is not kept (the last "
                f"{self._settings.dream_document_revision_keep} are)"
            )
        return earlier, revisions

    def write_document(
        self,
        principal: Principal,
        *,
        agent_id: str,
        path: str,
        content: str,
        mode: str,
        expected_revision: int | None,
    ) -> MemoryDocument:
        """Creates, replaces or appends to one of the agent's documents, keeping the
        replaced revision; `expected_revision` (0: must not exist) guards a rewrite."""
        agent = self._agent_for(principal, agent_id)
        problem = path_problem(path)
        if problem:
            raise InvalidArgument("path", problem)
        check.text(content, "content", DOCUMENT_MAX, required=True)
        if expected_revision is not None:
            check.int_range(expected_revision, "expected_revision", 0, 2**31 - 1)
        with reachable("writing a memory document"):
            written = self._store.write_document(
                agent,
                path,
                content,
                mode=mode,
                expected=expected_revision,
                at=now(),
                keep=self._settings.dream_document_revision_keep,
                writer=principal.user_scope,
                max_chars=DOCUMENT_MAX,
            )
        if isinstance(written, MemoryDocument):
            return written
        kind, _, value = written.partition(":")
        if kind == "moved":
            raise FailedPrecondition(
                f"expected_revision: {path!r} is at revision {value}, "
                f"not {expected_revision}; read it again"
            )
        raise InvalidArgument(
            "content", f"the document would hold {value} characters; at most {DOCUMENT_MAX}"
        )

    def delete_document(self, principal: Principal, *, agent_id: str, path: str) -> str:
        agent = self._agent_for(principal, agent_id)
        problem = path_problem(path)
        if problem:
            raise InvalidArgument("path", problem)
        with reachable("deleting a memory document"):
            if not self._store.delete_document(agent, path):
                raise NotFound(f"agent {principal.show(agent)!r} has no memory document {path!r}")
        return path

    # -- rights --

    def _agent_for(self, principal: Principal, agent_id: str) -> str:
        """The agent a call acts for (the named one, else the token's), qualified by its
        org: its memory documents and runs are that org's agent's; only the agent's own
        tokens and admins may."""
        agent = agent_id or principal.agent_id
        if not agent:
            raise InvalidArgument("agent_id", "is required: the caller's token names no agent")
        validate_agent_id(agent)
        return principal.acting_agent(agent, "agent_id")

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
