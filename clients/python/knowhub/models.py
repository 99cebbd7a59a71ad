"""Typed results. `to_dict()` gives seed 001's JSON shape (times as ISO 8601 strings)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from knowhub.v1 import dream_pb2, knowledge_pb2

TimeLike = datetime | str | float | int | None


def _time(stamp: Timestamp) -> datetime | None:
    if stamp.seconds == 0 and stamp.nanos == 0:
        return None
    return stamp.ToDatetime(tzinfo=timezone.utc)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def to_timestamp(value: TimeLike) -> Timestamp | None:
    """A Timestamp from a datetime, an ISO 8601 string or epoch seconds (None stays None)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.timestamp()
    stamp = Timestamp()
    stamp.FromNanoseconds(round(float(value) * 1e9))
    return stamp


class _Model:
    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


def _plain(value: Any) -> Any:
    if isinstance(value, _Model):
        return value.to_dict()
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass
class Case(_Model):
    task: str = ""
    outcome: str = ""
    reason: str = ""
    trace_id: str = ""
    timestamp: datetime | None = None
    query_sequence: int = 0

    @classmethod
    def from_proto(cls, message: knowledge_pb2.Case) -> Case:
        return cls(message.task, message.outcome, message.reason, message.trace_id,
                   _time(message.timestamp), message.query_sequence)

    @staticmethod
    def to_proto(case: Case | dict[str, Any] | None) -> knowledge_pb2.Case | None:
        """Accepts a Case or a dict with the same keys (seed 001's case objects)."""
        if case is None:
            return None
        data = case.to_dict() if isinstance(case, Case) else dict(case)
        unknown = set(data) - {f.name for f in fields(Case)}
        if unknown:
            raise ValueError(f"unknown case field(s): {', '.join(sorted(unknown))}")
        return knowledge_pb2.Case(
            task=data.get("task") or "", outcome=data.get("outcome") or "",
            reason=data.get("reason") or "", trace_id=data.get("trace_id") or "",
            timestamp=to_timestamp(data.get("timestamp")),
            query_sequence=int(data.get("query_sequence") or 0))


@dataclass
class Source(_Model):
    name: str = ""
    category: str = ""
    urls: list[str] = field(default_factory=list)
    agent_id: str = ""
    submitted_by: str = ""
    timestamp: datetime | None = None
    message_id: str = ""

    @classmethod
    def from_proto(cls, message: knowledge_pb2.Source) -> Source:
        return cls(message.name, message.category, list(message.urls), message.agent_id,
                   message.submitted_by, _time(message.timestamp), message.message_id)


@dataclass
class Eval(_Model):
    score: int = 0
    helpful: int = 0
    harmful: int = 0
    confidence: float = 0.0
    helpful_history: list[Case] = field(default_factory=list)
    harmful_history: list[Case] = field(default_factory=list)

    @classmethod
    def from_proto(cls, message: knowledge_pb2.Eval) -> Eval:
        return cls(message.score, message.helpful, message.harmful, message.confidence,
                   [Case.from_proto(c) for c in message.helpful_history],
                   [Case.from_proto(c) for c in message.harmful_history])


@dataclass
class Knowledge(_Model):
    id: str
    message_id: str
    types: list[str]
    task: str
    tags: dict[str, str]
    scopes: list[str]
    owner: str
    content: str
    resource_ids: list[str]
    source: Source
    eval: Eval
    created_at: datetime | None
    updated_at: datetime | None

    @classmethod
    def from_proto(cls, message: knowledge_pb2.Knowledge) -> Knowledge:
        return cls(
            id=message.id, message_id=message.message_id, types=list(message.types),
            task=message.task, tags=dict(message.tags), scopes=list(message.scopes),
            owner=message.owner, content=message.content,
            resource_ids=list(message.resource_ids), source=Source.from_proto(message.source),
            eval=Eval.from_proto(message.eval), created_at=_time(message.created_at),
            updated_at=_time(message.updated_at))


@dataclass
class SearchHit(_Model):
    knowledge: Knowledge
    quality_score: float
    relevance: float

    @classmethod
    def from_proto(cls, message: knowledge_pb2.SearchHit) -> SearchHit:
        return cls(Knowledge.from_proto(message.knowledge), message.quality_score,
                   message.relevance)

    def to_dict(self) -> dict[str, Any]:
        """Seed 001's search result: the record's fields plus quality_score and relevance."""
        return {**self.knowledge.to_dict(), "quality_score": self.quality_score,
                "relevance": self.relevance}


class SearchResults(list[SearchHit]):
    """The hits, best first; `routed` tells whether the LLM chose the candidates."""

    routed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"results": [h.to_dict() for h in self], "count": len(self)}


class Page(list[Knowledge]):
    """One page of a list; pass `next_page_token` back for the next ("" at the end)."""

    next_page_token: str = ""


@dataclass
class FeedbackResult(_Model):
    """The outcome of one batch feedback item: `knowledge` on success, else `error`."""

    knowledge_id: str
    knowledge: Knowledge | None
    error: dict[str, str] | None

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def from_proto(cls, message: knowledge_pb2.KnowledgeFeedbackResult) -> FeedbackResult:
        if message.HasField("error"):
            return cls(message.knowledge_id, None,
                       {"code": message.error.code, "message": message.error.message})
        return cls(message.knowledge_id, Knowledge.from_proto(message.knowledge), None)


@dataclass
class SlimGroup(_Model):
    kept_id: str
    removed_ids: list[str]
    merged_by_llm: bool
    note: str


@dataclass
class SlimReport(_Model):
    groups: list[SlimGroup]
    examined: int
    dry_run: bool

    @classmethod
    def from_proto(cls, message: knowledge_pb2.SlimKnowledgeResponse) -> SlimReport:
        return cls([SlimGroup(g.kept_id, list(g.removed_ids), g.merged_by_llm, g.note)
                    for g in message.groups], message.examined, message.dry_run)


@dataclass
class KnowledgeVersion(_Model):
    content: str
    replaced_at: datetime | None
    reason: str
    feedback: str

    @classmethod
    def from_proto(cls, message: knowledge_pb2.KnowledgeVersion) -> KnowledgeVersion:
        return cls(message.content, _time(message.replaced_at), message.reason,
                   message.feedback)


# ---- Memory (dream service, seed 002) ------------------------------------------------------

_REQUEST_TYPE_NAMES = {dream_pb2.REQUEST_TYPE_GROUP: "group",
                       dream_pb2.REQUEST_TYPE_PRIVATE: "private"}
_ENTITY_TYPE_NAMES = {dream_pb2.ENTITY_TYPE_USER: "user", dream_pb2.ENTITY_TYPE_GROUP: "group"}


@dataclass
class RememberResult(_Model):
    """`job_id` is "" when nothing was enqueued (no memo and no observations)."""

    job_id: str
    enqueued: bool
    memo_recorded: bool
    warnings: list[str]

    @classmethod
    def from_proto(cls, message: dream_pb2.RememberResponse) -> RememberResult:
        return cls(message.job_id, message.enqueued, message.memo_recorded,
                   list(message.warnings))


@dataclass
class Memo(_Model):
    text: str
    created_at: datetime | None
    sender_id: str
    job_id: str

    @classmethod
    def from_proto(cls, message: dream_pb2.Memo) -> Memo:
        return cls(message.text, _time(message.created_at), message.sender_id, message.job_id)


@dataclass
class MemoryEvent(_Model):
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

    @classmethod
    def from_proto(cls, message: dream_pb2.MemoryEvent) -> MemoryEvent:
        return cls(message.event_id, message.text, message.user_id, message.group_id,
                   message.sender_id, _time(message.timestamp), message.timestamp_local,
                   message.request_type, message.perspective, message.is_absolute,
                   message.schema_version, message.scope, message.warning, message.job_id)

    def to_dict(self) -> dict[str, Any]:
        """Seed 002's metadata: timestamp_utc (ISO), timestamp_local and timestamp_epoch."""
        data = super().to_dict()
        data["timestamp_utc"] = data.pop("timestamp")
        data["timestamp_epoch"] = int(self.timestamp.timestamp()) if self.timestamp else 0
        return data


@dataclass
class EventHit(_Model):
    event: MemoryEvent
    similarity: float
    score: float

    @classmethod
    def from_proto(cls, message: dream_pb2.EventHit) -> EventHit:
        return cls(MemoryEvent.from_proto(message.event), message.similarity, message.score)


class EventResults(list[EventHit]):
    """The hits, best score first; `warnings` says e.g. that a reversed range was swapped."""

    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"results": [h.to_dict() for h in self], "count": len(self),
                "warnings": list(self.warnings)}


@dataclass
class Profile(_Model):
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

    @classmethod
    def from_proto(cls, message: dream_pb2.Profile) -> Profile:
        return cls(_ENTITY_TYPE_NAMES.get(message.entity_type, ""), message.entity_id,
                   message.name, list(message.tags), message.summary, message.markdown,
                   _time(message.updated_at), message.source_event_id, message.revision,
                   message.scope, message.reason)


@dataclass
class ProfileHit(_Model):
    profile: Profile
    score: float

    @classmethod
    def from_proto(cls, message: dream_pb2.ProfileHit) -> ProfileHit:
        return cls(Profile.from_proto(message.profile), message.score)


@dataclass
class ProfileRevision(_Model):
    profile: Profile
    replaced_at: datetime | None

    @classmethod
    def from_proto(cls, message: dream_pb2.ProfileRevision) -> ProfileRevision:
        return cls(Profile.from_proto(message.profile), _time(message.replaced_at))


@dataclass
class FailedJob(_Model):
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

    @classmethod
    def from_proto(cls, message: dream_pb2.FailedJob) -> FailedJob:
        return cls(message.job_id, message.error, message.deliveries, _time(message.failed_at),
                   message.scope, _REQUEST_TYPE_NAMES.get(message.request_type, ""),
                   message.user_id, message.group_id, message.memo, list(message.observations))


class FailedJobsPage(list[FailedJob]):
    """One page of failed jobs, newest first; pass `next_page_token` back for the next."""

    next_page_token: str = ""
