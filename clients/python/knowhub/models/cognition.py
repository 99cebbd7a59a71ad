"""Traces, their events, evaluation triggers and reports, extractions and the trace view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from knowhub.models.base import (
    Model,
    ProtoList,
    ProtoModel,
    from_timestamp,
    iso,
    message_dict,
    plain,
    to_timestamp,
)
from knowhub.models.knowledge import SearchHit
from knowhub.v1 import cognition_pb2

EVENT_TYPES = tuple(f.name for f in cognition_pb2.Event.DESCRIPTOR.oneofs_by_name["body"].fields)
_EVENT_ENVELOPE = ("type", "event_id", "timestamp")


@dataclass
class Event(ProtoModel[cognition_pb2.Event]):
    """One event of a trace's log. `data` holds the type's fields with the log's names;
    `to_dict()` gives the log's flat shape {"type", ..., "timestamp", "event_id"}."""

    type: str
    data: dict[str, Any]
    event_id: str = ""
    timestamp: datetime | None = None

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    @classmethod
    def from_proto(cls, message: Message) -> Event:
        assert isinstance(message, cognition_pb2.Event)
        kind = message.WhichOneof("body") or ""
        data = message_dict(getattr(message, kind)) if kind else {}
        return cls(type=kind, data=data, event_id=message.event_id,
                   timestamp=from_timestamp(message.timestamp))

    def to_proto(self: Event | Mapping[str, Any]) -> cognition_pb2.Event:
        """The message of this event, or (as `Event.to_proto(event)`) of a log-shaped dict
        {"type": "query", "sequence": 3, ...}, whose event_id and timestamp are left out:
        the server sets them."""
        event = self if isinstance(self, Event) else Event(
            str(self.get("type", "")),
            {k: v for k, v in self.items() if k not in _EVENT_ENVELOPE})
        if event.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {event.type!r}: use one of "
                             f"{', '.join(EVENT_TYPES)}")
        message = cognition_pb2.Event(event_id=event.event_id,
                                      timestamp=to_timestamp(event.timestamp))
        body = getattr(message, event.type)
        body.SetInParent()
        json_format.ParseDict(event.data, body)
        return message

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **plain(self.data),
                "timestamp": iso(self.timestamp), "event_id": self.event_id}


@dataclass
class Trace(ProtoModel[cognition_pb2.Trace]):
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


@dataclass
class AppendResult(ProtoModel[cognition_pb2.AppendEventsResponse]):
    event_ids: list[str]
    trace: Trace


class LogPage(ProtoList[Event, cognition_pb2.GetLogResponse]):
    """One page of a log; `next_page_token` ("" at the end) and the trace's record."""

    next_page_token: str = ""
    trace: Trace | None = None


class TracePage(ProtoList[Trace, cognition_pb2.ListTracesResponse]):
    next_page_token: str = ""


class PendingQueries(ProtoList[Event, cognition_pb2.PendingEvaluationsResponse]):
    """The pending query events; `last_trigger` is the trace's last signalled trigger."""

    last_trigger: str = ""


@dataclass
class TriggerSignal(ProtoModel[cognition_pb2.SignalTriggerResponse]):
    query_sequences: list[int]
    published: bool
    trigger_id: str


@dataclass
class Trigger(ProtoModel[cognition_pb2.Trigger]):
    trigger_id: str
    trace_id: str
    trigger: str
    query_sequences: list[int]
    owner: str
    agent_id: str
    signaled_at: datetime | None
    delivery_count: int


@dataclass
class EvaluationPrompt(ProtoModel[cognition_pb2.GetEvaluationPromptResponse]):
    prompt: str
    query_sequences: list[int]


@dataclass
class EvaluationOutcome(ProtoModel[cognition_pb2.EvaluationOutcome]):
    """What became of one assessment. `feedback`: none, applied, deferred, refused or
    imported."""

    query_sequence: int
    knowledge_id: str
    status: str
    recorded: bool
    feedback: str
    detail: str


@dataclass
class EvaluationReport(ProtoModel[cognition_pb2.SubmitEvaluationResponse]):
    outcomes: list[EvaluationOutcome]
    pending_query_sequences: list[int]


@dataclass
class Extraction(ProtoModel[cognition_pb2.Extraction]):
    """Candidate knowledge and its review state; payloads are knowledge_save's arguments
    as dicts."""

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


class ExtractionPage(ProtoList[Extraction, cognition_pb2.ListExtractionsResponse]):
    next_page_token: str = ""


@dataclass
class CommitFailure(ProtoModel[cognition_pb2.CommitFailure]):
    extraction_id: str
    code: str
    message: str


@dataclass
class SavedExtraction(ProtoModel[cognition_pb2.SavePendingExtractionResponse]):
    """A saved extraction; with auto_commit, `commit_failure` says why the commit failed."""

    extraction: Extraction
    commit_failure: CommitFailure | None


@dataclass
class CommitReport(ProtoModel[cognition_pb2.CommitExtractionsResponse]):
    """{extraction_id: knowledge_id} of the committed ones, the ids of those linked to a
    record that already said the same (no second record was saved), and the failures."""

    committed: dict[str, str]
    failed: list[CommitFailure]
    linked: list[str]

    @classmethod
    def from_proto(cls, message: Message) -> CommitReport:
        assert isinstance(message, cognition_pb2.CommitExtractionsResponse)
        return cls(committed={c.extraction_id: c.knowledge_id for c in message.committed},
                   failed=[CommitFailure.from_proto(f) for f in message.failed],
                   linked=[c.extraction_id for c in message.committed if c.linked])

    def to_proto(self) -> cognition_pb2.CommitExtractionsResponse:
        return cognition_pb2.CommitExtractionsResponse(
            committed=[cognition_pb2.CommittedExtraction(
                extraction_id=e, knowledge_id=k, linked=e in self.linked)
                for e, k in self.committed.items()],
            failed=[f.to_proto() for f in self.failed])


@dataclass
class TimelineStep(ProtoModel[cognition_pb2.TimelineStep]):
    sequence: int
    events: list[Event]


@dataclass
class MemoryCount(ProtoModel[cognition_pb2.MemoryTypeCount]):
    memory_type: str
    reads: int
    writes: int


@dataclass
class KnowledgeEvaluation(ProtoModel[cognition_pb2.KnowledgeEvaluationSummary]):
    knowledge_id: str
    queried: int
    helpful: int
    harmful: int
    neutral: int
    unused: int
    irrelevant: int
    feedback_deferred: int
    feedback_refused: int


@dataclass
class TraceView(ProtoModel[cognition_pb2.GetTraceViewResponse]):
    """The trace view's aggregations of one trace."""

    trace: Trace
    timeline: list[TimelineStep]
    memory_timeline: list[Event]
    memory_counts: list[MemoryCount]
    plan_evolution: list[Event]
    knowledge: list[KnowledgeEvaluation]
    extraction_funnel: dict[str, int]
    reflections: list[Event]
    pending_query_sequences: list[int]


@dataclass
class ImportResult(ProtoModel[cognition_pb2.ImportLogResponse]):
    trace: Trace
    imported: int


@dataclass
class KnowledgeInjection(Model):
    """What inject_knowledge_for_goal found and logged: the hits, the "📚 相关知识" block
    to show the model, and the ids of the query and memory_read events."""

    hits: list[SearchHit]
    text: str
    event_ids: list[str]
