"""The cognition service's protobuf messages to and from its domain (cognition.proto).

Event bodies travel as dicts in the log file's JSON shape; the proto messages carry the
same field names, so protobuf's JSON mapping converts between the two (by field name, as
the records' conversions below go).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub_contracts import message_dict
from knowhub_contracts.v1 import cognition_pb2

from knowhub_server.cognition.domain import (
    EVENT_TYPES,
    Assessment,
    Body,
    CommitFailure,
    Committed,
    Event,
    Extraction,
    Trace,
    shown_payload,
    shown_payloads,
)
from knowhub_server.cognition.evaluations import Outcome
from knowhub_server.cognition.jobview import Attempt, Header, JobGraph, JobView, Step, ToolCall
from knowhub_server.cognition.plans import PlanDiff, PlanSnapshot
from knowhub_server.cognition.store import Delivered
from knowhub_server.cognition.view import TraceView
from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.times import from_timestamp, optional_timestamp, to_timestamp
from knowhub_server.common.security.auth import Principal

_ENVELOPE = ("type", "event_id", "timestamp")
FEEDBACK_STATES = ProtoEnum(cognition_pb2.FeedbackState)
NODE_STATES = ProtoEnum(cognition_pb2.NodeState)
JOB_STATUSES = ProtoEnum(cognition_pb2.JobStatus)


def body_from_proto(event: cognition_pb2.Event, field: str) -> tuple[str, Body]:
    """The type and body of an event a caller sent."""
    kind = event.WhichOneof("body")
    if kind is None:
        raise InvalidArgument(field, f"has no event body: set one of {', '.join(EVENT_TYPES)}")
    if event.event_id:
        raise InvalidArgument(f"{field}.event_id", "is assigned by the server; leave it empty")
    if event.HasField("timestamp"):
        raise InvalidArgument(f"{field}.timestamp", "is assigned by the server; leave it unset")
    body = getattr(event, kind)
    _check_times(body, f"{field}.{kind}")
    return kind, message_dict(body)


def _check_times(body: Message, field: str) -> None:
    """The body's Timestamps must be real times (the JSON form cannot hold others)."""
    for descriptor, value in body.ListFields():
        if descriptor.message_type is Timestamp.DESCRIPTOR:
            from_timestamp(value, f"{field}.{descriptor.name}")


def event_to_proto(event: Event, viewer: Principal | None = None) -> cognition_pb2.Event:
    """The event's message; with a `viewer`, the names of its extraction payloads as the
    viewer reads them."""
    message = cognition_pb2.Event(
        event_id=event.get("event_id", ""), timestamp=_time(event["timestamp"])
    )
    body = getattr(message, event["type"])
    body.SetInParent()
    fields = {k: v for k, v in event.items() if k not in _ENVELOPE}
    if viewer is not None:
        fields = shown_payloads(fields, viewer)
    try:  # the constructor takes the stored fields as they are, 30 times faster than JSON
        body.CopyFrom(type(body)(**fields))
    except (TypeError, ValueError):  # a field it does not take as is: a time, a JSON name
        body.Clear()
        json_format.ParseDict(fields, body)
    return message


def event_from_log(raw: dict[str, Any], where: str) -> tuple[str, Body, str]:
    """An event of a log file, read through its proto message: (type, body, timestamp)."""
    kind = raw.get("type")
    if kind not in EVENT_TYPES:
        raise InvalidArgument(
            f"{where}.type", f"{str(kind)[:60]!r} is not one of {', '.join(EVENT_TYPES)}"
        )
    body = getattr(cognition_pb2.Event(), kind).__class__()
    fields = {k: v for k, v in raw.items() if k not in _ENVELOPE}
    try:
        json_format.ParseDict(fields, body, ignore_unknown_fields=True)
    except json_format.ParseError as error:
        raise InvalidArgument(where, str(error)) from None
    return kind, message_dict(body), raw.get("timestamp", "")


def payload_from_proto(payload: cognition_pb2.ExtractionPayload) -> Body:
    return message_dict(payload)


def payload_to_proto(payload: Body, viewer: Principal) -> cognition_pb2.ExtractionPayload:
    return json_format.ParseDict(shown_payload(payload, viewer), cognition_pb2.ExtractionPayload())


def assessments_from_proto(
    evaluations: Iterable[cognition_pb2.QueryEvaluation],
) -> list[Assessment]:
    found = []
    for index, query in enumerate(evaluations):
        where = f"evaluations[{index}]"
        for position, item in enumerate(query.assessments):
            found.append(
                Assessment(
                    query.query_sequence,
                    item.knowledge_id,
                    item.status,
                    item.reason,
                    f"{where}.assessments[{position}]",
                    f"{where}.query_sequence",
                )
            )
    return found


def trace_to_proto(trace: Trace, viewer: Principal) -> cognition_pb2.Trace:
    return cognition_pb2.Trace(
        trace_id=trace.trace_id,
        owner=trace.owner,
        agent_id=viewer.show(trace.agent_id),
        task=trace.task,
        last_sequence=trace.last_sequence,
        reflected_at_sequence=trace.reflected_at_sequence,
        auto_commit=trace.auto_commit,
        event_count=trace.event_count,
        pending_evaluations=trace.pending_evaluations,
        unconsumed_reflections=trace.unconsumed_reflections,
        last_trigger=trace.last_trigger,
        created_at=to_timestamp(trace.created_at),
        updated_at=to_timestamp(trace.updated_at),
        abandoned_evaluations=trace.abandoned_evaluations,
    )


def extraction_to_proto(extraction: Extraction, viewer: Principal) -> cognition_pb2.Extraction:
    message = cognition_pb2.Extraction(
        trace_id=extraction.trace_id,
        owner=extraction.owner,
        extraction_id=extraction.extraction_id,
        state=extraction.state,
        sequence=extraction.sequence,
        goal_id=extraction.goal_id,
        branch_id=extraction.branch_id,
        payload=payload_to_proto(extraction.payload, viewer),
        knowledge_id=extraction.knowledge_id,
        created_at=to_timestamp(extraction.created_at),
        reviewed_at=optional_timestamp(extraction.reviewed_at),
        committed_at=optional_timestamp(extraction.committed_at),
    )
    if extraction.edited_payload:
        message.edited_payload.CopyFrom(payload_to_proto(extraction.edited_payload, viewer))
    return message


def committed_to_proto(committed: Committed) -> cognition_pb2.CommittedExtraction:
    return cognition_pb2.CommittedExtraction(
        extraction_id=committed.extraction_id,
        knowledge_id=committed.knowledge_id,
        linked=committed.linked,
    )


def outcome_to_proto(outcome: Outcome) -> cognition_pb2.EvaluationOutcome:
    return cognition_pb2.EvaluationOutcome(
        query_sequence=outcome.query_sequence,
        knowledge_id=outcome.knowledge_id,
        status=outcome.status,
        recorded=outcome.recorded,
        feedback=FEEDBACK_STATES.value(outcome.feedback),
        detail=outcome.detail,
    )


def failure_to_proto(failure: CommitFailure) -> cognition_pb2.CommitFailure:
    return cognition_pb2.CommitFailure(
        extraction_id=failure.extraction_id, code=failure.code, message=failure.message
    )


def trigger_to_proto(delivered: Delivered, viewer: Principal) -> cognition_pb2.Trigger:
    fields = delivered.fields
    sequences = [int(s) for s in fields.get("query_sequences", "").split(",") if s]
    message = cognition_pb2.Trigger(
        trigger_id=delivered.trigger_id,
        trace_id=fields.get("trace_id", ""),
        trigger=fields.get("trigger", ""),
        query_sequences=sequences,
        owner=fields.get("owner", ""),
        agent_id=viewer.show(fields.get("agent_id", "")),
        delivery_count=delivered.delivery_count,
    )
    if fields.get("signaled_at"):
        message.signaled_at.FromJsonString(fields["signaled_at"])
    return message


def view_to_proto(view: TraceView, viewer: Principal) -> cognition_pb2.GetTraceViewResponse:
    return cognition_pb2.GetTraceViewResponse(
        trace=trace_to_proto(view.trace, viewer),
        timeline=[
            cognition_pb2.TimelineStep(
                sequence=sequence, events=[event_to_proto(e, viewer) for e in events]
            )
            for sequence, events in view.timeline
        ],
        memory_timeline=[event_to_proto(e) for e in view.memory_timeline],
        memory_counts=[
            cognition_pb2.MemoryTypeCount(memory_type=c.memory_type, reads=c.reads, writes=c.writes)
            for c in view.memory_counts
        ],
        plan_evolution=[event_to_proto(e) for e in view.plan_evolution],
        knowledge=[
            cognition_pb2.KnowledgeEvaluationSummary(
                knowledge_id=k.knowledge_id,
                queried=k.queried,
                feedback_deferred=k.feedback_deferred,
                feedback_refused=k.feedback_refused,
                **k.statuses,
            )
            for k in view.knowledge
        ],
        extraction_funnel=cognition_pb2.ExtractionFunnel(**view.funnel),
        reflections=[event_to_proto(e) for e in view.reflections],
        pending_query_sequences=view.pending,
        evaluation_failures=[event_to_proto(e) for e in view.evaluation_failures],
        abandoned_query_sequences=view.abandoned,
        window_events=view.window_events,
        next_page_token=view.next_page_token,
        **job_view_to_proto(view.job, viewer),
    )


# ---- The runtime job's views ----------------------------------------------------------


def job_view_to_proto(job: JobView, viewer: Principal) -> dict[str, Any]:
    """The GetTraceViewResponse fields of a job's views."""
    return {
        "header": header_to_proto(job.header, viewer),
        "reasoning_steps": [step_to_proto(s) for s in job.steps],
        "decision_tree": decision_tree_to_proto(job.graph),
        "plan_snapshots": [plan_snapshot_to_proto(p) for p in job.plans],
        "plan_diff": plan_diff_to_proto(job.plan_diff),
        "tool_graph": tool_graph_to_proto(job.graph),
    }


def _time(iso_time: str) -> Timestamp | None:
    """A stored ISO 8601 time (UTC, as times.iso writes it) as a Timestamp; datetime's
    parser is many times faster than Timestamp's, which a view calls for every event."""
    if not iso_time:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(datetime.fromisoformat(iso_time.replace("Z", "+00:00")))
    return stamp


def header_to_proto(header: Header, viewer: Principal) -> cognition_pb2.TraceHeader:
    return cognition_pb2.TraceHeader(
        job_id=header.job_id,
        job_ids=header.job_ids,
        agent_id=viewer.show(header.agent_id),
        goal=header.goal,
        status=JOB_STATUSES.value(header.status),
        cursor_node_id=header.cursor_node_id,
        cursor_step_index=header.cursor_step_index,
        plan_version=header.plan_version,
    )


def step_to_proto(step: Step) -> cognition_pb2.ReasoningStep:
    return cognition_pb2.ReasoningStep(
        node_id=step.node_id,
        step_index=step.step_index,
        state=NODE_STATES.value(step.state),
        attempts=[attempt_to_proto(a) for a in step.attempts],
        cards=[event_to_proto(e) for e in step.cards],
        memory=[event_to_proto(e) for e in step.memory],
        plan_version=step.plan_version,
    )


def attempt_to_proto(attempt: Attempt) -> cognition_pb2.NodeAttempt:
    return cognition_pb2.NodeAttempt(
        attempt=attempt.attempt,
        state=NODE_STATES.value(attempt.state),
        started_at=_time(attempt.started_at),
        finished_at=_time(attempt.finished_at),
        duration_ms=attempt.duration_ms,
        reason=attempt.reason,
        worker_id=attempt.worker_id,
        step_index=attempt.step_index,
    )


def _edges_to_proto(graph: JobGraph) -> list[cognition_pb2.GraphEdge]:
    return [
        cognition_pb2.GraphEdge(
            from_node_id=e.from_node_id, to_node_id=e.to_node_id, execution_order=e.execution_order
        )
        for e in graph.edges
    ]


def decision_tree_to_proto(graph: JobGraph) -> cognition_pb2.DecisionTree:
    return cognition_pb2.DecisionTree(
        nodes=[
            cognition_pb2.DecisionTreeNode(
                node_id=n.node_id,
                node_type=n.task_field("type"),
                tool_name=n.task_field("tool_name"),
                description=n.task_field("description"),
                state=NODE_STATES.value(n.state),
                attempts=len(n.step.attempts) if n.step else 0,
                step_index=n.step.step_index if n.step else 0,
                choices=[event_to_proto(e) for e in n.choices],
                branch=n.successors > 1,
                leaf=n.successors == 0,
                in_current_plan=n.in_current_plan,
            )
            for n in graph.nodes
        ],
        edges=_edges_to_proto(graph),
        root_node_ids=graph.roots,
        plan_version=graph.plan_version,
    )


def tool_graph_to_proto(graph: JobGraph) -> cognition_pb2.ToolGraph:
    return cognition_pb2.ToolGraph(
        nodes=[
            cognition_pb2.ToolGraphNode(
                node_id=n.node_id,
                node_type=n.task_field("type"),
                description=n.task_field("description"),
                tool_node=n.tool_node,
                state=NODE_STATES.value(n.state),
                finish_order=n.finish_order,
                calls=[tool_call_to_proto(c) for c in n.step.calls] if n.step else [],
                in_current_plan=n.in_current_plan,
                step_index=n.step.step_index if n.step else 0,
            )
            for n in graph.nodes
        ],
        edges=_edges_to_proto(graph),
    )


def tool_call_to_proto(call: ToolCall) -> cognition_pb2.ToolCall:
    return cognition_pb2.ToolCall(
        tool_name=call.tool_name,
        reason=call.reason,
        input_summary=call.input_summary,
        output_summary=call.output_summary,
        error=call.error,
        external_id=call.external_id,
        idempotent=call.idempotent,
        rollback_available=call.rollback_available,
        attempt=call.attempt,
        selected_event_id=call.selected_event_id,
        result_event_id=call.result_event_id,
        selected_at=_time(call.selected_at),
        finished_at=_time(call.finished_at),
    )


def _task_graph(graph: Body) -> cognition_pb2.TaskGraph:
    return json_format.ParseDict(graph, cognition_pb2.TaskGraph())


def plan_snapshot_to_proto(plan: PlanSnapshot) -> cognition_pb2.PlanSnapshot:
    return cognition_pb2.PlanSnapshot(
        plan_version=plan.plan_version,
        source=plan.source,
        event_ids=plan.event_ids,
        timestamp=_time(plan.timestamp),
        goal=plan.goal,
        task_graph=_task_graph(plan.task_graph) if plan.task_graph is not None else None,
        task_graph_summary=plan.task_graph_summary,
        reasoning_summary=plan.reasoning_summary,
        memory_summary=plan.memory_summary,
        memory_keys=plan.memory_keys,
        plan_hash=plan.plan_hash,
        diff_summary=plan.diff_summary,
        diff_computed=plan.diff_computed,
    )


def plan_diff_to_proto(diff: PlanDiff) -> cognition_pb2.PlanDiff:
    def nodes(found: list[Body]) -> list[cognition_pb2.TaskNode]:
        return [json_format.ParseDict(n, cognition_pb2.TaskNode()) for n in found]

    def edges(found: list[Body]) -> list[cognition_pb2.TaskEdge]:
        return [json_format.ParseDict(e, cognition_pb2.TaskEdge()) for e in found]

    return cognition_pb2.PlanDiff(
        from_version=diff.from_version,
        to_version=diff.to_version,
        summary=diff.summary,
        computed=diff.computed,
        goal_changed=diff.goal_changed,
        added_nodes=nodes(diff.added_nodes),
        removed_nodes=nodes(diff.removed_nodes),
        changed_nodes=[
            cognition_pb2.NodeChange(node_id=c.node_id, changes=c.changes)
            for c in diff.changed_nodes
        ],
        added_edges=edges(diff.added_edges),
        removed_edges=edges(diff.removed_edges),
    )
