"""Typed results. `to_dict()` gives seed 001's JSON shape (times as ISO 8601 strings)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from knowhub.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

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
    # The record's resource_ids the caller cannot use now (missing, expired or deleted).
    unavailable_resources: list[UnavailableResource] = field(default_factory=list)
    # True when the resource service could not be asked about them.
    resources_unverified: bool = False

    @classmethod
    def from_proto(cls, message: knowledge_pb2.SearchHit) -> SearchHit:
        unavailable = [
            UnavailableResource(u.resource_id, knowledge_pb2.UnavailableResource.Reason.Name(
                u.reason).removeprefix("REASON_").lower())
            for u in message.unavailable_resources]
        return cls(Knowledge.from_proto(message.knowledge), message.quality_score,
                   message.relevance, unavailable, message.resources_unverified)

    def to_dict(self) -> dict[str, Any]:
        """Seed 001's search result: the record's fields plus quality_score and relevance,
        and which of its resources cannot be used."""
        return {**self.knowledge.to_dict(), "quality_score": self.quality_score,
                "relevance": self.relevance,
                "unavailable_resources": [u.to_dict() for u in self.unavailable_resources],
                "resources_unverified": self.resources_unverified}


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


# ---- Resources ---------------------------------------------------------------------------

_CONTENT_TYPE_PREFIX = "RESOURCE_CONTENT_TYPE_"


def content_type_name(number: int) -> str:
    """"code" for RESOURCE_CONTENT_TYPE_CODE, and so on."""
    return resource_pb2.ResourceContentType.Name(number).removeprefix(_CONTENT_TYPE_PREFIX).lower()


def content_type_number(name: str) -> int:
    try:
        return resource_pb2.ResourceContentType.Value(_CONTENT_TYPE_PREFIX + name.upper())
    except ValueError:
        raise ValueError(f"content_type must be one of text, code, credential, cookie; "
                         f"got {name!r}") from None


@dataclass
class Resource(_Model):
    """One version of a resource. `secure_body` is None unless it was asked for with
    include_secure (and it is left out of repr, so it does not end up in logs)."""

    id: str
    title: str
    body: str
    content_type: str
    metadata: dict[str, Any]
    scopes: list[str]
    owner: str
    expires_at: datetime | None
    version: int
    created_at: datetime | None
    updated_at: datetime | None
    expired: bool
    has_secure_body: bool
    deleted: bool
    deleted_at: datetime | None
    secure_body: str | None = field(default=None, repr=False)

    @classmethod
    def from_proto(cls, message: resource_pb2.Resource) -> Resource:
        return cls(
            id=message.id, title=message.title, body=message.body,
            content_type=content_type_name(message.content_type),
            metadata=json_format.MessageToDict(message.metadata),
            scopes=list(message.scopes), owner=message.owner,
            expires_at=_time(message.expires_at), version=message.version,
            created_at=_time(message.created_at), updated_at=_time(message.updated_at),
            expired=message.expired, has_secure_body=message.has_secure_body,
            deleted=message.deleted, deleted_at=_time(message.deleted_at),
            secure_body=message.secure_body if message.HasField("secure_body") else None)


@dataclass
class ResourceHit(_Model):
    resource: Resource
    relevance: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.resource.to_dict(), "relevance": self.relevance}


class ResourcePage(list[Resource]):
    """One page of resources; pass `next_page_token` back for the next ("" at the end)."""

    next_page_token: str = ""


@dataclass
class ResourceResult(_Model):
    """One id of a batch read: `resource` when found, else `error`."""

    id: str
    resource: Resource | None
    error: dict[str, str] | None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ResourceVersion(_Model):
    version: int
    created_at: datetime | None
    saved_by: str
    has_secure_body: bool
    deleted: bool
    deleted_at: datetime | None

    @classmethod
    def from_proto(cls, message: resource_pb2.ResourceVersion) -> ResourceVersion:
        return cls(message.version, _time(message.created_at), message.saved_by,
                   message.has_secure_body, message.deleted, _time(message.deleted_at))


@dataclass
class AuditEvent(_Model):
    id: str
    time: datetime | None
    actor: str
    agent_id: str
    action: str
    resource_id: str
    version: int
    outcome: str
    detail: str

    @classmethod
    def from_proto(cls, message: resource_pb2.AuditEvent) -> AuditEvent:
        return cls(message.id, _time(message.time), message.actor, message.agent_id,
                   message.action, message.resource_id, message.version, message.outcome,
                   message.detail)


class AuditPage(list[AuditEvent]):
    """Audit events, newest first; pass `next_page_token` back for older ones."""

    next_page_token: str = ""


@dataclass
class KeyRotation(_Model):
    active_key_id: str
    created: bool
    rewrapped: int
    remaining: int


@dataclass
class UnavailableResource(_Model):
    """A resource a knowledge search hit refers to that the caller cannot use now."""

    resource_id: str
    reason: str  # missing, expired or deleted


# ---- Cognition ---------------------------------------------------------------------------

_JSON_OPTIONS: dict[str, Any] = {"preserving_proto_field_name": True,
                                 "always_print_fields_with_no_presence": True,
                                 "unquote_int64_if_possible": True}


_EVENT_TYPES = tuple(f.name for f in cognition_pb2.Event.DESCRIPTOR.oneofs_by_name["body"].fields)


def message_dict(message: Message) -> dict[str, Any]:
    """A message's fields as seed 000's JSON (every field, in the proto's order)."""
    found = json_format.MessageToDict(message, **_JSON_OPTIONS)
    return {f.name: found[f.name] for f in message.DESCRIPTOR.fields if f.name in found}


@dataclass
class Event(_Model):
    """One event of a trace's log. `data` holds the type's fields with seed 000's names;
    `to_dict()` gives the seed's flat shape {"type", ..., "timestamp", "event_id"}."""

    type: str
    data: dict[str, Any]
    event_id: str = ""
    timestamp: datetime | None = None

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    @classmethod
    def from_proto(cls, message: cognition_pb2.Event) -> Event:
        kind = message.WhichOneof("body") or ""
        data = message_dict(getattr(message, kind)) if kind else {}
        return cls(kind, data, message.event_id, _time(message.timestamp))

    @staticmethod
    def to_proto(event: Event | Mapping[str, Any]) -> cognition_pb2.Event:
        """From an Event or a seed-shaped dict {"type": "query", "sequence": 3, ...}."""
        if isinstance(event, Event):
            kind, fields_ = event.type, dict(event.data)
        else:
            fields_ = {k: v for k, v in event.items()
                       if k not in ("type", "event_id", "timestamp")}
            kind = event.get("type", "")
        message = cognition_pb2.Event()
        if kind not in _EVENT_TYPES:
            raise ValueError(f"unknown event type {kind!r}: use one of "
                             f"{', '.join(_EVENT_TYPES)}")
        body = getattr(message, kind)
        body.SetInParent()
        json_format.ParseDict(fields_, body)
        return message

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **_plain(self.data), "timestamp": _iso(self.timestamp),
                "event_id": self.event_id}


@dataclass
class Trace(_Model):
    trace_id: str
    owner: str
    agent_id: str
    task: str
    last_sequence: int
    reflected_at_sequence: int
    auto_commit: bool
    event_count: int
    pending_evaluations: int
    unconsumed_reflections: int
    last_trigger: str
    created_at: datetime | None
    updated_at: datetime | None

    @classmethod
    def from_proto(cls, message: cognition_pb2.Trace) -> Trace:
        return cls(message.trace_id, message.owner, message.agent_id, message.task,
                   message.last_sequence, message.reflected_at_sequence, message.auto_commit,
                   message.event_count, message.pending_evaluations,
                   message.unconsumed_reflections, message.last_trigger,
                   _time(message.created_at), _time(message.updated_at))


@dataclass
class AppendResult(_Model):
    event_ids: list[str]
    trace: Trace


class LogPage(list[Event]):
    """One page of a log; `next_page_token` ("" at the end) and the trace's record."""

    next_page_token: str = ""
    trace: Trace | None = None


class TracePage(list[Trace]):
    next_page_token: str = ""


class PendingQueries(list[Event]):
    """The pending query events; `last_trigger` is the trace's last signalled trigger."""

    last_trigger: str = ""


@dataclass
class TriggerSignal(_Model):
    query_sequences: list[int]
    published: bool
    trigger_id: str


@dataclass
class Trigger(_Model):
    trigger_id: str
    trace_id: str
    trigger: str
    query_sequences: list[int]
    owner: str
    agent_id: str
    signaled_at: datetime | None
    delivery_count: int

    @classmethod
    def from_proto(cls, message: cognition_pb2.Trigger) -> Trigger:
        return cls(message.trigger_id, message.trace_id, message.trigger,
                   list(message.query_sequences), message.owner, message.agent_id,
                   _time(message.signaled_at), message.delivery_count)


@dataclass
class EvaluationPrompt(_Model):
    prompt: str
    query_sequences: list[int]


_FEEDBACK_NAMES = {value: name.removeprefix("FEEDBACK_STATE_").lower()
                   for name, value in cognition_pb2.FeedbackState.items()}


@dataclass
class EvaluationOutcome(_Model):
    """What became of one assessment. `feedback`: none, applied, deferred, refused or
    imported."""

    query_sequence: int
    knowledge_id: str
    status: str
    recorded: bool
    feedback: str
    detail: str

    @classmethod
    def from_proto(cls, message: cognition_pb2.EvaluationOutcome) -> EvaluationOutcome:
        return cls(message.query_sequence, message.knowledge_id, message.status,
                   message.recorded, _FEEDBACK_NAMES[message.feedback], message.detail)


@dataclass
class EvaluationReport(_Model):
    outcomes: list[EvaluationOutcome]
    pending_query_sequences: list[int]

    @classmethod
    def from_proto(cls, message: cognition_pb2.SubmitEvaluationResponse) -> EvaluationReport:
        return cls([EvaluationOutcome.from_proto(o) for o in message.outcomes],
                   list(message.pending_query_sequences))


@dataclass
class Extraction(_Model):
    """Candidate knowledge and its review state; payloads are seed 000's dicts."""

    trace_id: str
    extraction_id: str
    state: str
    sequence: int
    goal_id: str
    branch_id: str
    payload: dict[str, Any]
    edited_payload: dict[str, Any] | None
    knowledge_id: str
    created_at: datetime | None
    reviewed_at: datetime | None
    committed_at: datetime | None

    @classmethod
    def from_proto(cls, message: cognition_pb2.Extraction) -> Extraction:
        edited = message_dict(message.edited_payload) \
            if message.HasField("edited_payload") else None
        return cls(message.trace_id, message.extraction_id, message.state, message.sequence,
                   message.goal_id, message.branch_id, message_dict(message.payload), edited,
                   message.knowledge_id, _time(message.created_at),
                   _time(message.reviewed_at), _time(message.committed_at))


class ExtractionPage(list[Extraction]):
    next_page_token: str = ""


@dataclass
class CommitFailure(_Model):
    extraction_id: str
    code: str
    message: str

    @classmethod
    def from_proto(cls, message: cognition_pb2.CommitFailure) -> CommitFailure:
        return cls(message.extraction_id, message.code, message.message)


@dataclass
class SavedExtraction(_Model):
    """A saved extraction; with auto_commit, `commit_failure` says why the commit failed."""

    extraction: Extraction
    commit_failure: CommitFailure | None

    @classmethod
    def from_proto(cls, message: cognition_pb2.SavePendingExtractionResponse
                   ) -> SavedExtraction:
        failure = CommitFailure.from_proto(message.commit_failure) \
            if message.HasField("commit_failure") else None
        return cls(Extraction.from_proto(message.extraction), failure)


@dataclass
class CommitReport(_Model):
    """{extraction_id: knowledge_id} of the committed ones, and the failures."""

    committed: dict[str, str]
    failed: list[CommitFailure]

    @classmethod
    def from_proto(cls, message: cognition_pb2.CommitExtractionsResponse) -> CommitReport:
        return cls({c.extraction_id: c.knowledge_id for c in message.committed},
                   [CommitFailure.from_proto(f) for f in message.failed])


@dataclass
class TimelineStep(_Model):
    sequence: int
    events: list[Event]


@dataclass
class MemoryCount(_Model):
    memory_type: str
    reads: int
    writes: int


@dataclass
class KnowledgeEvaluation(_Model):
    knowledge_id: str
    queried: int
    helpful: int
    harmful: int
    neutral: int
    unused: int
    irrelevant: int
    feedback_deferred: int


@dataclass
class TraceView(_Model):
    """Seed 004's aggregations of one trace."""

    trace: Trace
    timeline: list[TimelineStep]
    memory_timeline: list[Event]
    memory_counts: list[MemoryCount]
    plan_evolution: list[Event]
    knowledge: list[KnowledgeEvaluation]
    extraction_funnel: dict[str, int]
    reflections: list[Event]
    pending_query_sequences: list[int]

    @classmethod
    def from_proto(cls, message: cognition_pb2.GetTraceViewResponse) -> TraceView:
        funnel = message.extraction_funnel
        return cls(
            trace=Trace.from_proto(message.trace),
            timeline=[TimelineStep(s.sequence, [Event.from_proto(e) for e in s.events])
                      for s in message.timeline],
            memory_timeline=[Event.from_proto(e) for e in message.memory_timeline],
            memory_counts=[MemoryCount(c.memory_type, c.reads, c.writes)
                           for c in message.memory_counts],
            plan_evolution=[Event.from_proto(e) for e in message.plan_evolution],
            knowledge=[KnowledgeEvaluation(
                k.knowledge_id, k.queried, k.helpful, k.harmful, k.neutral, k.unused,
                k.irrelevant, k.feedback_deferred) for k in message.knowledge],
            extraction_funnel={f.name: getattr(funnel, f.name)
                               for f in funnel.DESCRIPTOR.fields},
            reflections=[Event.from_proto(e) for e in message.reflections],
            pending_query_sequences=list(message.pending_query_sequences))


@dataclass
class ImportResult(_Model):
    trace: Trace
    imported: int


@dataclass
class KnowledgeInjection(_Model):
    """What inject_knowledge_for_goal found and logged: the hits, the "📚 相关知识" block
    to show the model, and the ids of the query and memory_read events."""

    hits: list[SearchHit]
    text: str
    event_ids: list[str]
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
class CognitiveEvent(_Model):
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
    def from_proto(cls, message: dream_pb2.CognitiveEvent) -> CognitiveEvent:
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
    event: CognitiveEvent
    similarity: float
    score: float

    @classmethod
    def from_proto(cls, message: dream_pb2.EventHit) -> EventHit:
        return cls(CognitiveEvent.from_proto(message.event), message.similarity, message.score)


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


# ---- Dream runs (dream service, seed 000) ---------------------------------------------------

PHASE_NAMES = {dream_pb2.DREAM_PHASE_PER_TRACE_REFLECT: "per_trace_reflect",
               dream_pb2.DREAM_PHASE_CROSS_TRACE_INTEGRATE: "cross_trace_integrate"}
RUN_STATUS_NAMES = {dream_pb2.DREAM_RUN_STATUS_QUEUED: "queued",
                     dream_pb2.DREAM_RUN_STATUS_RUNNING: "running",
                     dream_pb2.DREAM_RUN_STATUS_DONE: "done",
                     dream_pb2.DREAM_RUN_STATUS_SKIPPED: "skipped",
                     dream_pb2.DREAM_RUN_STATUS_FAILED: "failed"}


def _phase_names(values: Any) -> list[str]:
    return [PHASE_NAMES.get(v, "") for v in values]


@dataclass
class DreamFailure(_Model):
    phase: str
    trace_id: str  # "" for the agent's integration (phase 2)
    reason: str


@dataclass
class DreamRun(_Model):
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
        return self.status in ("done", "skipped", "failed")

    @classmethod
    def from_proto(cls, message: dream_pb2.DreamRun) -> DreamRun:
        counts = {f.name: getattr(message.counts, f.name)
                  for f in dream_pb2.DreamRunCounts.DESCRIPTOR.fields}
        return cls(message.run_id, message.agent_id, list(message.trace_ids),
                   _phase_names(message.phases), RUN_STATUS_NAMES.get(message.status, ""),
                   message.reason, counts,
                   [DreamFailure(PHASE_NAMES.get(f.phase, ""), f.trace_id, f.reason)
                    for f in message.failures],
                   message.schedule_id, message.requested_by, _time(message.created_at),
                   _time(message.started_at), _time(message.finished_at), message.attempts)


class DreamRunPage(list[DreamRun]):
    """One page of dream runs, newest first; pass `next_page_token` back for the next."""

    next_page_token: str = ""


@dataclass
class DreamSchedule(_Model):
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

    @classmethod
    def from_proto(cls, message: dream_pb2.DreamSchedule) -> DreamSchedule:
        return cls(message.schedule_id, message.agent_id, message.every_minutes,
                   message.cron, message.time_zone, _phase_names(message.phases),
                   _time(message.start_time), message.requested_by,
                   _time(message.created_at), _time(message.next_run_at),
                   _time(message.last_fired_at), message.last_run_id)


class SchedulePage(list[DreamSchedule]):
    next_page_token: str = ""


@dataclass
class MemoryDocumentRevision(_Model):
    revision: int
    updated_at: datetime | None
    replaced_at: datetime | None
    run_id: str


@dataclass
class MemoryDocument(_Model):
    """One of an agent's memory documents; `content` is "" in listings without content,
    `revisions` (newest first) is filled by `kh.dream.document`."""

    agent_id: str
    path: str
    content: str
    revision: int
    updated_at: datetime | None
    run_id: str
    size: int
    revisions: list[MemoryDocumentRevision] = field(default_factory=list)

    @classmethod
    def from_proto(cls, message: dream_pb2.MemoryDocument,
                   revisions: Any = ()) -> MemoryDocument:
        return cls(message.agent_id, message.path, message.content, message.revision,
                   _time(message.updated_at), message.run_id, message.size,
                   [MemoryDocumentRevision(r.revision, _time(r.updated_at),
                                           _time(r.replaced_at), r.run_id)
                    for r in revisions])


class MemoryDocumentPage(list[MemoryDocument]):
    next_page_token: str = ""
