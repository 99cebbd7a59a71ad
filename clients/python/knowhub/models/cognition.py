"""Traces, their events, evaluation triggers and reports, extractions and the trace view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from knowhub_contracts import message_dict
from knowhub_contracts.v1 import cognition_pb2

from knowhub.models.base import (
    Model,
    ProtoList,
    ProtoModel,
    from_timestamp,
    iso,
    plain,
    to_timestamp,
)
from knowhub.models.knowledge import SearchHit

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
        return cls(
            type=kind,
            data=data,
            event_id=message.event_id,
            timestamp=from_timestamp(message.timestamp),
        )

    def to_proto(self: Event | Mapping[str, Any]) -> cognition_pb2.Event:
        """The message of this event, or (as `Event.to_proto(event)`) of a log-shaped dict
        {"type": "query", "sequence": 3, ...}, whose event_id and timestamp are left out:
        the server sets them."""
        event = (
            self
            if isinstance(self, Event)
            else Event(
                str(self.get("type", "")),
                {k: v for k, v in self.items() if k not in _EVENT_ENVELOPE},
            )
        )
        if event.type not in EVENT_TYPES:
            raise ValueError(
                f"unknown event type {event.type!r}: use one of {', '.join(EVENT_TYPES)}"
            )
        message = cognition_pb2.Event(
            event_id=event.event_id, timestamp=to_timestamp(event.timestamp)
        )
        body = getattr(message, event.type)
        body.SetInParent()
        json_format.ParseDict(event.data, body)
        return message

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            **plain(self.data),
            "timestamp": iso(self.timestamp),
            "event_id": self.event_id,
        }


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
    abandoned_evaluations: int


@dataclass
class DeletedTrace(ProtoModel[cognition_pb2.DeleteTraceResponse]):
    """What a deleted trace held."""

    deleted_events: int
    deleted_extractions: int


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
    """Each assessment's outcome and the queries still pending; `parse_failed` (with
    `parse_error`) when the raw answer held no evaluation: logged, nothing evaluated."""

    outcomes: list[EvaluationOutcome]
    pending_query_sequences: list[int]
    parse_failed: bool
    parse_error: str


@dataclass
class AbandonedEvaluation(ProtoModel[cognition_pb2.AbandonEvaluationResponse]):
    """The evaluation_failed event written (by the first call, for a retried one) and the
    queries given up on."""

    event_id: str
    query_sequences: list[int]


@dataclass
class Extraction(ProtoModel[cognition_pb2.Extraction]):
    """Candidate knowledge and its review state; payloads are knowledge_save's arguments
    as dicts."""

    trace_id: str
    owner: str
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
        return cls(
            committed={c.extraction_id: c.knowledge_id for c in message.committed},
            failed=[CommitFailure.from_proto(f) for f in message.failed],
            linked=[c.extraction_id for c in message.committed if c.linked],
        )

    def to_proto(self) -> cognition_pb2.CommitExtractionsResponse:
        return cognition_pb2.CommitExtractionsResponse(
            committed=[
                cognition_pb2.CommittedExtraction(
                    extraction_id=e, knowledge_id=k, linked=e in self.linked
                )
                for e, k in self.committed.items()
            ],
            failed=[f.to_proto() for f in self.failed],
        )


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


# ---- The views of an agent runtime's job ----------------------------------------------------


@dataclass
class TaskNode(ProtoModel[cognition_pb2.TaskNode]):
    """One step of a plan; `type` is tool, llm, workflow, ..."""

    id: str
    type: str
    tool_name: str
    workflow: str
    description: str


@dataclass
class TaskEdge(ProtoModel[cognition_pb2.TaskEdge]):
    """`to_node` depends on the output of `from_node`."""

    from_node: str
    to_node: str


@dataclass
class TaskGraph(ProtoModel[cognition_pb2.TaskGraph]):
    nodes: list[TaskNode]
    edges: list[TaskEdge]


@dataclass
class TraceHeader(ProtoModel[cognition_pb2.TraceHeader]):
    """The job the views show, whose it is, its goal, `status` (running, completed,
    failed; "" without runtime events) and cursor (the node that last finished ok)."""

    job_id: str
    job_ids: list[str]
    agent_id: str
    goal: str
    status: str
    cursor_node_id: str
    cursor_step_index: int
    plan_version: int


@dataclass
class NodeAttempt(ProtoModel[cognition_pb2.NodeAttempt]):
    """One run of a node; `state`: running, ok, failed or retryable."""

    attempt: int
    state: str
    started_at: datetime | None
    finished_at: datetime | None
    duration_ms: int
    reason: str
    worker_id: str
    step_index: int


@dataclass
class ReasoningStep(ProtoModel[cognition_pb2.ReasoningStep]):
    """A node of the reasoning timeline: attempts, thought / decision / tool / result
    cards, memory reads and writes, and the plan version it began under."""

    node_id: str
    step_index: int
    state: str
    attempts: list[NodeAttempt]
    cards: list[Event]
    memory: list[Event]
    plan_version: int


@dataclass
class GraphEdge(ProtoModel[cognition_pb2.GraphEdge]):
    from_node_id: str
    to_node_id: str
    execution_order: int


@dataclass
class DecisionTreeNode(ProtoModel[cognition_pb2.DecisionTreeNode]):
    """A node, its choices (decision_made and tool_selected events) and where it stands
    (`state`: pending, running, ok, failed, retryable)."""

    node_id: str
    node_type: str
    tool_name: str
    description: str
    state: str
    attempts: int
    step_index: int
    choices: list[Event]
    branch: bool
    leaf: bool
    in_current_plan: bool


@dataclass
class DecisionTree(ProtoModel[cognition_pb2.DecisionTree]):
    nodes: list[DecisionTreeNode]
    edges: list[GraphEdge]
    root_node_ids: list[str]
    plan_version: int


@dataclass
class PlanSnapshot(ProtoModel[cognition_pb2.PlanSnapshot]):
    """One plan version and its change from the previous one."""

    plan_version: int
    source: str
    event_ids: list[str]
    timestamp: datetime | None
    goal: str
    task_graph: TaskGraph | None
    task_graph_summary: str
    reasoning_summary: str
    memory_summary: str
    memory_keys: list[str]
    plan_hash: str
    diff_summary: str
    diff_computed: bool


@dataclass
class NodeChange(ProtoModel[cognition_pb2.NodeChange]):
    node_id: str
    changes: list[str]


@dataclass
class PlanDiff(ProtoModel[cognition_pb2.PlanDiff]):
    from_version: int
    to_version: int
    summary: str
    computed: bool
    goal_changed: bool
    added_nodes: list[TaskNode]
    removed_nodes: list[TaskNode]
    changed_nodes: list[NodeChange]
    added_edges: list[TaskEdge]
    removed_edges: list[TaskEdge]


@dataclass
class ToolCall(ProtoModel[cognition_pb2.ToolCall]):
    """A tool call: input and output summaries, error, and provenance (external_id)."""

    tool_name: str
    reason: str
    input_summary: str
    output_summary: str
    error: str
    external_id: str
    idempotent: bool
    rollback_available: bool
    attempt: int
    selected_event_id: str
    result_event_id: str
    selected_at: datetime | None
    finished_at: datetime | None


@dataclass
class ToolGraphNode(ProtoModel[cognition_pb2.ToolGraphNode]):
    node_id: str
    node_type: str
    description: str
    tool_node: bool
    state: str
    finish_order: int
    calls: list[ToolCall]
    in_current_plan: bool
    step_index: int


@dataclass
class ToolGraph(ProtoModel[cognition_pb2.ToolGraph]):
    nodes: list[ToolGraphNode]
    edges: list[GraphEdge]


@dataclass
class TraceView(ProtoModel[cognition_pb2.GetTraceViewResponse]):
    """The trace view of one window of the log (`window_events` events; the next window
    with `next_page_token`): the knowledge aggregations, the evaluation failures, and the
    views of one runtime job (header, reasoning_steps, decision_tree, plan_snapshots,
    plan_diff, tool_graph; empty without runtime events)."""

    trace: Trace
    timeline: list[TimelineStep]
    memory_timeline: list[Event]
    memory_counts: list[MemoryCount]
    plan_evolution: list[Event]
    knowledge: list[KnowledgeEvaluation]
    extraction_funnel: dict[str, int]
    reflections: list[Event]
    pending_query_sequences: list[int]
    header: TraceHeader
    reasoning_steps: list[ReasoningStep]
    decision_tree: DecisionTree
    plan_snapshots: list[PlanSnapshot]
    plan_diff: PlanDiff
    tool_graph: ToolGraph
    evaluation_failures: list[Event]
    abandoned_query_sequences: list[int]
    window_events: int
    next_page_token: str


@dataclass
class ExportPage(ProtoModel[cognition_pb2.ExportLogResponse]):
    """One page of an exported log: a log file `document` of its own with this page's
    events, and the next page's token ("" on the last)."""

    document: str
    next_page_token: str


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
