"""Memory: memos, cognitive events, profiles and the historian's failed jobs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from knowhub_contracts.v1 import dream_pb2

from knowhub.models.base import ProtoList, ProtoModel


@dataclass
class MemoryDecision(ProtoModel[dream_pb2.MemoryDecision]):
    """What the historian did with one observation: action add, update, delete or noop;
    `event_id` the event stored, `target_event_id` the one superseded or matched."""

    observation_index: int
    action: str
    event_id: str
    target_event_id: str
    reason: str


@dataclass
class MemoryJob(ProtoModel[dream_pb2.MemoryJob]):
    """A historian job: state pending, processing, done or failed (with `error`)."""

    job_id: str
    state: str
    error: str
    event_ids: list[str]
    decisions: list[MemoryDecision]
    deliveries: int
    created_at: datetime | None
    updated_at: datetime | None
    scope: str


@dataclass
class RememberResult(ProtoModel[dream_pb2.RememberResponse]):
    """`job_id` is "" when nothing was enqueued (no memo and no observations); `job` is
    set when the call waited for the historian."""

    job_id: str
    enqueued: bool
    memo_recorded: bool
    warnings: list[str]
    job: MemoryJob | None = None


@dataclass
class Memo(ProtoModel[dream_pb2.Memo]):
    text: str
    created_at: datetime | None
    sender_id: str
    job_id: str
    edited_at: datetime | None = None


@dataclass
class CognitiveEvent(ProtoModel[dream_pb2.CognitiveEvent]):
    event_id: str
    text: str
    user_id: str
    group_id: str
    sender_id: str
    timestamp: datetime | None
    timestamp_local: str
    request_type: str
    perspective: str
    is_absolute: bool
    schema_version: str
    scope: str
    warning: str
    job_id: str
    state: str = "current"
    superseded_at: datetime | None = None
    superseded_by: str = ""
    supersedes: str = ""
    deleted_at: datetime | None = None
    purge_at: datetime | None = None
    edited_at: datetime | None = None
    confirmed_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """The event's metadata: timestamp_utc (ISO), timestamp_local and timestamp_epoch."""
        data = super().to_dict()
        data["timestamp_utc"] = data.pop("timestamp")
        data["timestamp_epoch"] = int(self.timestamp.timestamp()) if self.timestamp else 0
        return data


@dataclass
class EventHit(ProtoModel[dream_pb2.EventHit]):
    event: CognitiveEvent
    similarity: float
    score: float


class EventResults(ProtoList[EventHit, dream_pb2.SearchEventsResponse]):
    """The hits, best score first; `warnings` says e.g. that a reversed range was swapped."""

    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [h.to_dict() for h in self],
            "count": len(self),
            "warnings": list(self.warnings),
        }


@dataclass
class Profile(ProtoModel[dream_pb2.Profile]):
    entity_type: str
    entity_id: str
    name: str
    tags: list[str]
    summary: str
    markdown: str
    updated_at: datetime | None
    source_event_id: str
    revision: int
    scope: str
    reason: str


@dataclass
class ProfileHit(ProtoModel[dream_pb2.ProfileHit]):
    profile: Profile
    score: float


@dataclass
class ProfileRevision(ProtoModel[dream_pb2.ProfileRevision]):
    profile: Profile
    replaced_at: datetime | None


@dataclass
class FailedJob(ProtoModel[dream_pb2.FailedJob]):
    job_id: str
    error: str
    deliveries: int
    failed_at: datetime | None
    scope: str
    request_type: str
    user_id: str
    group_id: str
    memo: str
    observations: list[str]


class EventsPage(ProtoList[CognitiveEvent, dream_pb2.ListEventsResponse]):
    """One page of events, newest first; pass `next_page_token` back for the next."""

    next_page_token: str = ""


class ProfilesPage(ProtoList[Profile, dream_pb2.ListProfilesResponse]):
    """One page of profiles; pass `next_page_token` back for the next."""

    next_page_token: str = ""


class FailedJobsPage(ProtoList[FailedJob, dream_pb2.ListFailedJobsResponse]):
    """One page of failed jobs, newest first; pass `next_page_token` back for the next."""

    next_page_token: str = ""
