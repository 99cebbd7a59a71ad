"""Dream runs, their schedules and the memory documents they write."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import dream_pb2

from knowhub.models.base import ProtoList, ProtoModel

PHASES = EnumNames(dream_pb2.DreamPhase.DESCRIPTOR)
RUN_STATUSES = EnumNames(dream_pb2.DreamRunStatus.DESCRIPTOR)
FINISHED_STATUSES = ("done", "skipped", "failed")


@dataclass
class DreamFailure(ProtoModel[dream_pb2.DreamFailure]):
    phase: str
    trace_id: str  # "" for the agent's integration (phase 2)
    reason: str


@dataclass
class DreamRun(ProtoModel[dream_pb2.DreamRun]):
    """A dream run; `status` is queued, running, done, skipped or failed, `counts` holds
    traces_considered, traces_reflected, traces_failed, reflections_written,
    reflections_integrated, reflections_consumed, documents_created, documents_updated
    and llm_calls."""

    run_id: str
    agent_id: str
    trace_ids: list[str]
    phases: list[str]
    status: str
    reason: str
    counts: dict[str, int]
    failures: list[DreamFailure]
    schedule_id: str
    requested_by: str
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATUSES


class DreamRunPage(ProtoList[DreamRun, dream_pb2.ListDreamRunsResponse]):
    """One page of dream runs, newest first; pass `next_page_token` back for the next."""

    next_page_token: str = ""


@dataclass
class DreamSchedule(ProtoModel[dream_pb2.DreamSchedule]):
    schedule_id: str
    agent_id: str
    every_minutes: int
    cron: str
    time_zone: str
    phases: list[str]
    start_time: datetime | None
    requested_by: str
    created_at: datetime | None
    next_run_at: datetime | None
    last_fired_at: datetime | None
    last_run_id: str


@dataclass
class ScheduledDream(ProtoModel[dream_pb2.ScheduleDreamResponse]):
    """A schedule asked for: the one added, or (`existing`) the equal one the agent had."""

    schedule: DreamSchedule
    existing: bool


class SchedulePage(ProtoList[DreamSchedule, dream_pb2.ListSchedulesResponse]):
    next_page_token: str = ""


@dataclass
class MemoryDocumentRevision(ProtoModel[dream_pb2.MemoryDocumentRevision]):
    revision: int
    updated_at: datetime | None
    replaced_at: datetime | None
    run_id: str


@dataclass
class MemoryDocument(ProtoModel[dream_pb2.MemoryDocument]):
    """One of an agent's memory documents; `content` is "" in listings without content,
    `revisions` (newest first) is filled by `kh.dream.document`."""

    agent_id: str
    path: str
    content: str
    revision: int
    updated_at: datetime | None
    run_id: str
    size: int
    written_by: str = ""
    revisions: list[MemoryDocumentRevision] = field(default_factory=list)

    @classmethod
    def from_response(cls, response: dream_pb2.GetMemoryDocumentResponse) -> MemoryDocument:
        """The document of GetMemoryDocument with its kept revisions."""
        document = cls.from_proto(response.document)
        document.revisions = [MemoryDocumentRevision.from_proto(r) for r in response.revisions]
        return document


class MemoryDocumentPage(ProtoList[MemoryDocument, dream_pb2.ListMemoryDocumentsResponse]):
    next_page_token: str = ""
