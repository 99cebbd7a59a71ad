"""`kh.dream`: seed 000's dream runs (the dream service's run, schedule and memory
document RPCs). `kh.memory` is seed 002's memory in the same service.

    run = kh.dream.run()                          # the token's agent, both phases
    kh.dream.get_run(run.run_id).status           # queued, running, done, skipped, failed
    kh.dream.list_runs(status="failed")           # the caller's runs, newest first
    kh.dream.schedule(cron="0 3 * * *", time_zone="Asia/Shanghai")
    for doc in kh.dream.documents(include_content=True):
        print(doc.path, doc.content)

Phases are "per_trace_reflect" and "cross_trace_integrate". Every method returns its
result from `KnowHub` and an awaitable of it from `AsyncKnowHub`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowhub._transport import AsyncTransport, Transport
from knowhub.models import (
    PHASE_NAMES,
    RUN_STATUS_NAMES,
    DreamRun,
    DreamRunPage,
    DreamSchedule,
    MemoryDocument,
    MemoryDocumentPage,
    SchedulePage,
    TimeLike,
    to_timestamp,
)
from knowhub.v1 import dream_pb2, dream_pb2_grpc

_PHASES = {name: value for value, name in PHASE_NAMES.items()}
_STATUSES = {name: value for value, name in RUN_STATUS_NAMES.items()}


def _phases(phases: Sequence[str] | None) -> list[int]:
    unknown = [p for p in phases or () if p not in _PHASES]
    if unknown:
        raise ValueError(f"unknown phase {unknown[0]!r}: use {', '.join(_PHASES)}")
    return [_PHASES[p] for p in phases or ()]


def _run(response: Any) -> DreamRun:
    return DreamRun.from_proto(response.run)


def _status(status: str | None) -> int:
    if status and status not in _STATUSES:
        raise ValueError(f"unknown run status {status!r}: use {', '.join(_STATUSES)}")
    return _STATUSES[status] if status else dream_pb2.DREAM_RUN_STATUS_UNSPECIFIED


def _run_page(response: dream_pb2.ListDreamRunsResponse) -> DreamRunPage:
    page = DreamRunPage(DreamRun.from_proto(r) for r in response.runs)
    page.next_page_token = response.next_page_token
    return page


def _schedule(response: dream_pb2.ScheduleDreamResponse) -> DreamSchedule:
    return DreamSchedule.from_proto(response.schedule)


def _schedule_page(response: dream_pb2.ListSchedulesResponse) -> SchedulePage:
    page = SchedulePage(DreamSchedule.from_proto(s) for s in response.schedules)
    page.next_page_token = response.next_page_token
    return page


def _document_page(response: dream_pb2.ListMemoryDocumentsResponse) -> MemoryDocumentPage:
    page = MemoryDocumentPage(MemoryDocument.from_proto(d) for d in response.documents)
    page.next_page_token = response.next_page_token
    return page


def _document(response: dream_pb2.GetMemoryDocumentResponse) -> MemoryDocument:
    return MemoryDocument.from_proto(response.document, response.revisions)


class DreamAPI:
    def __init__(self, transport: Transport | AsyncTransport) -> None:
        self._transport = transport
        self._stub = dream_pb2_grpc.DreamServiceStub(transport.channel)

    def run(self, agent_id: str | None = None, trace_ids: Sequence[str] | None = None,
            phases: Sequence[str] | None = None) -> DreamRun:
        """Queues a dream run of the agent (the token's by default) over the traces the
        caller may read (or `trace_ids`); returns it queued. Both phases by default."""
        request = dream_pb2.RunDreamRequest(agent_id=agent_id or "",
                                            trace_ids=list(trace_ids or []),
                                            phases=_phases(phases))
        return self._transport.call(self._stub.RunDream, request, _run)

    def get_run(self, run_id: str) -> DreamRun:
        return self._transport.call(self._stub.GetDreamRun,
                                    dream_pb2.GetDreamRunRequest(run_id=run_id), _run)

    def list_runs(self, agent_id: str | None = None, status: str | None = None,
                  limit: int = 20, page_token: str = "") -> DreamRunPage:
        """The runs the caller requested (every run for an admin), newest first; only
        `agent_id`'s, only those in `status` (queued, running, done, skipped, failed)."""
        request = dream_pb2.ListDreamRunsRequest(agent_id=agent_id or "",
                                                 status=_status(status), page_size=limit,
                                                 page_token=page_token)
        return self._transport.call(self._stub.ListDreamRuns, request, _run_page)

    def schedule(self, every_minutes: int | None = None, cron: str | None = None, *,
                 agent_id: str | None = None, time_zone: str | None = None,
                 phases: Sequence[str] | None = None,
                 start_time: TimeLike = None) -> DreamSchedule:
        """Runs the agent's dream every N minutes or on a five-field cron expression (in
        `time_zone`, UTC by default), from `start_time` on."""
        request = dream_pb2.ScheduleDreamRequest(
            agent_id=agent_id or "", every_minutes=every_minutes or 0, cron=cron or "",
            time_zone=time_zone or "", phases=_phases(phases),
            start_time=to_timestamp(start_time))
        return self._transport.call(self._stub.ScheduleDream, request, _schedule)

    def schedules(self, agent_id: str | None = None, limit: int = 20,
                  page_token: str = "") -> SchedulePage:
        """The caller's schedules (every one for an admin), oldest first."""
        request = dream_pb2.ListSchedulesRequest(agent_id=agent_id or "", page_size=limit,
                                                 page_token=page_token)
        return self._transport.call(self._stub.ListSchedules, request, _schedule_page)

    def delete_schedule(self, schedule_id: str) -> str:
        return self._transport.call(
            self._stub.DeleteSchedule, dream_pb2.DeleteScheduleRequest(schedule_id=schedule_id),
            lambda r: r.schedule_id)

    def documents(self, agent_id: str | None = None, include_content: bool = False,
                  limit: int = 20, page_token: str = "") -> MemoryDocumentPage:
        """The agent's memory documents by path (content only with `include_content`)."""
        request = dream_pb2.ListMemoryDocumentsRequest(
            agent_id=agent_id or "", include_content=include_content, page_size=limit,
            page_token=page_token)
        return self._transport.call(self._stub.ListMemoryDocuments, request, _document_page)

    def document(self, path: str, agent_id: str | None = None,
                 revision: int = 0) -> MemoryDocument:
        """A memory document with its content (an earlier kept revision when given) and
        the list of its kept revisions."""
        request = dream_pb2.GetMemoryDocumentRequest(agent_id=agent_id or "", path=path,
                                                     revision=revision)
        return self._transport.call(self._stub.GetMemoryDocument, request, _document)
