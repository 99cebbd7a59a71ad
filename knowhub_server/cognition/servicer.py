"""gRPC face of the cognition service: protobuf messages in and out, nothing more.

Event bodies travel as dicts in seed 000's JSON shape; the proto messages carry the seed's
field names, so protobuf's JSON mapping converts between the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.cognition.config import CognitionSettings
from knowhub_server.cognition.domain import (
    DEFAULT_LIST_PAGE,
    DEFAULT_LOG_PAGE,
    EVENT_TYPES,
    Assessment,
    Body,
    CommitFailure,
    Event,
    Extraction,
    Trace,
)
from knowhub_server.cognition.evaluations import EvaluationOperations
from knowhub_server.cognition.extractions import ExtractionOperations
from knowhub_server.cognition.jobview import (
    Attempt,
    Header,
    JobGraph,
    JobView,
    Step,
    ToolCall,
)
from knowhub_server.cognition.knowledge_client import KnowledgeClient
from knowhub_server.cognition.logfile import read_document
from knowhub_server.cognition.operations import LogOperations, TraceAccess, TriggerOperations
from knowhub_server.cognition.plans import PlanDiff, PlanSnapshot
from knowhub_server.cognition.store import CognitionStore, Delivered
from knowhub_server.cognition.view import TraceView
from knowhub_server.common.auth import Authenticator, Principal
from knowhub_server.common.convert import ProtoEnum
from knowhub_server.common.errors import InvalidArgument
from knowhub_server.common.rpc import Live, server_streaming, unary
from knowhub_server.common.runtime import Runtime
from knowhub_server.common.server import ServiceHost
from knowhub_server.common.times import from_timestamp, to_timestamp

SERVICE_NAME = cognition_pb2.DESCRIPTOR.services_by_name["CognitionService"].full_name
_JSON: dict[str, Any] = {"preserving_proto_field_name": True,
                         "always_print_fields_with_no_presence": True,
                         "unquote_int64_if_possible": True}
_ENVELOPE = ("type", "event_id", "timestamp")
_FEEDBACK = {"none": cognition_pb2.FEEDBACK_STATE_NONE,
             "applied": cognition_pb2.FEEDBACK_STATE_APPLIED,
             "deferred": cognition_pb2.FEEDBACK_STATE_DEFERRED,
             "refused": cognition_pb2.FEEDBACK_STATE_REFUSED,
             "imported": cognition_pb2.FEEDBACK_STATE_IMPORTED}


class CognitionServicer(cognition_pb2_grpc.CognitionServiceServicer):
    def __init__(self, runtime: Runtime, log: LogOperations, triggers: TriggerOperations,
                 evaluations: EvaluationOperations, extractions: ExtractionOperations) -> None:
        self.authenticator: Authenticator = runtime.authenticator
        self.stopping = runtime.stopping
        self._log = log
        self._triggers = triggers
        self._evaluations = evaluations
        self._extractions = extractions

    @unary
    def AppendEvents(self, request: cognition_pb2.AppendEventsRequest,
                     principal: Principal) -> cognition_pb2.AppendEventsResponse:
        events = [body_from_proto(e, f"events[{i}]") for i, e in enumerate(request.events)]
        event_ids, trace = self._log.append(
            principal, request.trace_id, events, request_id=request.request_id,
            task=request.task, agent_id=request.agent_id,
            auto_commit=request.auto_commit if request.HasField("auto_commit") else None)
        return cognition_pb2.AppendEventsResponse(event_ids=event_ids,
                                                  trace=trace_to_proto(trace))

    @unary
    def GetLog(self, request: cognition_pb2.GetLogRequest,
               principal: Principal) -> cognition_pb2.GetLogResponse:
        page = self._log.get_log(
            principal, request.trace_id, types=list(request.types),
            since=from_timestamp(request.since, "since"),
            page_size=request.page_size or DEFAULT_LOG_PAGE, page_token=request.page_token)
        return cognition_pb2.GetLogResponse(
            events=[event_to_proto(e) for e in page.events],
            next_page_token=page.next_page_token, trace=trace_to_proto(page.trace))

    @unary
    def ListTraces(self, request: cognition_pb2.ListTracesRequest,
                   principal: Principal) -> cognition_pb2.ListTracesResponse:
        traces, token = self._log.list_traces(
            principal, agent_id=request.agent_id, owner=request.owner,
            updated_since=from_timestamp(request.updated_since, "updated_since"),
            page_size=request.page_size or DEFAULT_LIST_PAGE, page_token=request.page_token)
        return cognition_pb2.ListTracesResponse(traces=[trace_to_proto(t) for t in traces],
                                                next_page_token=token)

    @unary
    def PendingEvaluations(self, request: cognition_pb2.PendingEvaluationsRequest,
                           principal: Principal) -> cognition_pb2.PendingEvaluationsResponse:
        queries, last_trigger = self._triggers.pending(principal, request.trace_id)
        return cognition_pb2.PendingEvaluationsResponse(
            queries=[event_to_proto(q) for q in queries], last_trigger=last_trigger)

    @unary
    def SignalTrigger(self, request: cognition_pb2.SignalTriggerRequest,
                      principal: Principal) -> cognition_pb2.SignalTriggerResponse:
        sequences, published, trigger_id = self._triggers.signal(
            principal, request.trace_id, request.trigger)
        return cognition_pb2.SignalTriggerResponse(query_sequences=sequences,
                                                   published=published, trigger_id=trigger_id)

    @server_streaming
    def WatchTriggers(self, request: cognition_pb2.WatchTriggersRequest, principal: Principal,
                      live: Live) -> Iterator[cognition_pb2.WatchTriggersResponse]:
        for delivered in self._triggers.watch(principal, request.group, request.consumer,
                                              live):
            yield cognition_pb2.WatchTriggersResponse(trigger=trigger_to_proto(delivered))

    @unary
    def AckTriggers(self, request: cognition_pb2.AckTriggersRequest,
                    principal: Principal) -> cognition_pb2.AckTriggersResponse:
        count = self._triggers.ack(principal, request.group, list(request.trigger_ids))
        return cognition_pb2.AckTriggersResponse(acknowledged=count)

    @unary
    def GetEvaluationPrompt(self, request: cognition_pb2.GetEvaluationPromptRequest,
                            principal: Principal
                            ) -> cognition_pb2.GetEvaluationPromptResponse:
        prompt, sequences = self._evaluations.prompt(principal, request.trace_id,
                                                     request.mission, request.goal)
        return cognition_pb2.GetEvaluationPromptResponse(prompt=prompt,
                                                         query_sequences=sequences)

    @unary
    def SubmitEvaluation(self, request: cognition_pb2.SubmitEvaluationRequest,
                         principal: Principal) -> cognition_pb2.SubmitEvaluationResponse:
        outcomes, pending = self._evaluations.submit(
            principal, request.trace_id, raw_text=request.raw_text,
            structured=assessments_from_proto(request.evaluations) if request.evaluations
            else None, trigger=request.trigger)
        return cognition_pb2.SubmitEvaluationResponse(
            outcomes=[cognition_pb2.EvaluationOutcome(
                query_sequence=o.query_sequence, knowledge_id=o.knowledge_id,
                status=o.status, recorded=o.recorded, feedback=_FEEDBACK[o.feedback],
                detail=o.detail) for o in outcomes],
            pending_query_sequences=pending)

    @unary
    def SavePendingExtraction(self, request: cognition_pb2.SavePendingExtractionRequest,
                              principal: Principal
                              ) -> cognition_pb2.SavePendingExtractionResponse:
        extraction, failure = self._extractions.save_pending(
            principal, request.trace_id, sequence=request.sequence, goal_id=request.goal_id,
            branch_id=request.branch_id,
            payload=payload_from_proto(request.payload) if request.HasField("payload")
            else None, request_id=request.request_id)
        response = cognition_pb2.SavePendingExtractionResponse(
            extraction=extraction_to_proto(extraction))
        if failure is not None:
            response.commit_failure.CopyFrom(failure_to_proto(failure))
        return response

    @unary
    def ListExtractions(self, request: cognition_pb2.ListExtractionsRequest,
                        principal: Principal) -> cognition_pb2.ListExtractionsResponse:
        found, token = self._extractions.list(
            principal, trace_id=request.trace_id, states=list(request.states),
            page_size=request.page_size or DEFAULT_LIST_PAGE, page_token=request.page_token)
        return cognition_pb2.ListExtractionsResponse(
            extractions=[extraction_to_proto(x) for x in found], next_page_token=token)

    @unary
    def ReviewExtraction(self, request: cognition_pb2.ReviewExtractionRequest,
                         principal: Principal) -> cognition_pb2.ReviewExtractionResponse:
        edited = payload_from_proto(request.edited_payload) \
            if request.HasField("edited_payload") else None
        extraction = self._extractions.review(principal, request.trace_id,
                                              request.extraction_id, request.decision, edited)
        return cognition_pb2.ReviewExtractionResponse(extraction=extraction_to_proto(extraction))

    @unary
    def CommitExtractions(self, request: cognition_pb2.CommitExtractionsRequest,
                          principal: Principal) -> cognition_pb2.CommitExtractionsResponse:
        committed, failed = self._extractions.commit(principal, request.trace_id,
                                                     list(request.extraction_ids))
        return cognition_pb2.CommitExtractionsResponse(
            committed=[cognition_pb2.CommittedExtraction(
                extraction_id=c.extraction_id, knowledge_id=c.knowledge_id, linked=c.linked)
                for c in committed],
            failed=[failure_to_proto(f) for f in failed])

    @unary
    def GetTraceView(self, request: cognition_pb2.GetTraceViewRequest,
                     principal: Principal) -> cognition_pb2.GetTraceViewResponse:
        versions = tuple(getattr(request, name) if request.HasField(name) else None
                         for name in ("plan_diff_from", "plan_diff_to"))
        view = self._log.view(principal, request.trace_id, job_id=request.job_id,
                              diff_versions=(versions[0], versions[1]))
        return view_to_proto(view)

    @unary
    def ExportLog(self, request: cognition_pb2.ExportLogRequest,
                  principal: Principal) -> cognition_pb2.ExportLogResponse:
        return cognition_pb2.ExportLogResponse(
            document=self._log.export(principal, request.trace_id))

    @unary
    def ImportLog(self, request: cognition_pb2.ImportLogRequest,
                  principal: Principal) -> cognition_pb2.ImportLogResponse:
        document = read_document(request.document)
        events = [event_from_seed(raw, where) for where, raw in document.events]
        trace, count = self._log.import_log(principal, request.trace_id, document, events)
        return cognition_pb2.ImportLogResponse(trace=trace_to_proto(trace), imported=count)

    @unary
    def ConsumeReflections(self, request: cognition_pb2.ConsumeReflectionsRequest,
                           principal: Principal) -> cognition_pb2.ConsumeReflectionsResponse:
        count = self._log.consume_reflections(principal, request.trace_id,
                                              list(request.event_ids))
        return cognition_pb2.ConsumeReflectionsResponse(consumed=count)


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the cognition service to `server`; returns its full service name."""
    settings = CognitionSettings()
    store = CognitionStore(runtime.redis, runtime.settings.redis_prefix,
                           runtime.redis_wait)
    runtime.watch_streams(store.triggers_key)
    access = TraceAccess(store, settings)
    knowledge = KnowledgeClient(runtime.peers)
    servicer = CognitionServicer(runtime, LogOperations(access, knowledge),
                                 TriggerOperations(access),
                                 EvaluationOperations(access, knowledge,
                                                      runtime.authenticator.delegations,
                                                      runtime.metrics,
                                                      runtime.settings.language),
                                 ExtractionOperations(access, knowledge))
    cognition_pb2_grpc.add_CognitionServiceServicer_to_server(servicer, server)
    return SERVICE_NAME


# ---- Conversions ----------------------------------------------------------------------

def _as_dict(message: Message) -> Body:
    """Every field, in the proto's order (the seed's)."""
    found = json_format.MessageToDict(message, **_JSON)
    return {f.name: found[f.name] for f in message.DESCRIPTOR.fields if f.name in found}


def body_from_proto(event: cognition_pb2.Event, field: str) -> tuple[str, Body]:
    """The type and body of an event a caller sent."""
    kind = event.WhichOneof("body")
    if kind is None:
        raise InvalidArgument(field, f"has no event body: set one of {', '.join(EVENT_TYPES)}")
    if event.event_id:
        raise InvalidArgument(f"{field}.event_id", "is assigned by the server; leave it empty")
    if event.HasField("timestamp"):
        raise InvalidArgument(f"{field}.timestamp", "is assigned by the server; leave it "
                              "unset")
    body = getattr(event, kind)
    _check_times(body, f"{field}.{kind}")
    return kind, _as_dict(body)


def _check_times(body: Message, field: str) -> None:
    """The body's Timestamps must be real times (the JSON form cannot hold others)."""
    for descriptor, value in body.ListFields():
        if descriptor.message_type is Timestamp.DESCRIPTOR:
            from_timestamp(value, f"{field}.{descriptor.name}")


def event_to_proto(event: Event) -> cognition_pb2.Event:
    message = cognition_pb2.Event(event_id=event.get("event_id", ""))
    message.timestamp.FromJsonString(event["timestamp"])
    body = getattr(message, event["type"])
    body.SetInParent()
    json_format.ParseDict({k: v for k, v in event.items() if k not in _ENVELOPE}, body)
    return message


def event_from_seed(raw: dict[str, Any], where: str) -> tuple[str, Body, str]:
    """An event of a log file, read through its proto message: (type, body, timestamp)."""
    kind = raw.get("type")
    if kind not in EVENT_TYPES:
        raise InvalidArgument(f"{where}.type", f"{str(kind)[:60]!r} is not one of "
                              f"{', '.join(EVENT_TYPES)}")
    body = getattr(cognition_pb2.Event(), kind).__class__()
    fields = {k: v for k, v in raw.items() if k not in _ENVELOPE}
    try:
        json_format.ParseDict(fields, body, ignore_unknown_fields=True)
    except json_format.ParseError as error:
        raise InvalidArgument(where, str(error)) from None
    return kind, _as_dict(body), raw.get("timestamp", "")


def payload_from_proto(payload: cognition_pb2.ExtractionPayload) -> Body:
    return _as_dict(payload)


def _payload_to_proto(payload: Body) -> cognition_pb2.ExtractionPayload:
    return json_format.ParseDict(payload, cognition_pb2.ExtractionPayload())


def assessments_from_proto(evaluations: Iterable[cognition_pb2.QueryEvaluation]
                           ) -> list[Assessment]:
    found = []
    for index, query in enumerate(evaluations):
        where = f"evaluations[{index}]"
        for position, item in enumerate(query.assessments):
            found.append(Assessment(query.query_sequence, item.knowledge_id, item.status,
                                    item.reason, f"{where}.assessments[{position}]",
                                    f"{where}.query_sequence"))
    return found


def trace_to_proto(trace: Trace) -> cognition_pb2.Trace:
    return cognition_pb2.Trace(
        trace_id=trace.trace_id, owner=trace.owner, agent_id=trace.agent_id, task=trace.task,
        last_sequence=trace.last_sequence, reflected_at_sequence=trace.reflected_at_sequence,
        auto_commit=trace.auto_commit, event_count=trace.event_count,
        pending_evaluations=trace.pending_evaluations,
        unconsumed_reflections=trace.unconsumed_reflections, last_trigger=trace.last_trigger,
        created_at=to_timestamp(trace.created_at), updated_at=to_timestamp(trace.updated_at))


def _optional_time(seconds: float) -> Any:
    return to_timestamp(seconds) if seconds else None


def extraction_to_proto(extraction: Extraction) -> cognition_pb2.Extraction:
    message = cognition_pb2.Extraction(
        trace_id=extraction.trace_id, extraction_id=extraction.extraction_id,
        state=extraction.state, sequence=extraction.sequence, goal_id=extraction.goal_id,
        branch_id=extraction.branch_id, payload=_payload_to_proto(extraction.payload),
        knowledge_id=extraction.knowledge_id,
        created_at=to_timestamp(extraction.created_at),
        reviewed_at=_optional_time(extraction.reviewed_at),
        committed_at=_optional_time(extraction.committed_at))
    if extraction.edited_payload:
        message.edited_payload.CopyFrom(_payload_to_proto(extraction.edited_payload))
    return message


def failure_to_proto(failure: CommitFailure) -> cognition_pb2.CommitFailure:
    return cognition_pb2.CommitFailure(extraction_id=failure.extraction_id, code=failure.code,
                                       message=failure.message)


def trigger_to_proto(delivered: Delivered) -> cognition_pb2.Trigger:
    fields = delivered.fields
    sequences = [int(s) for s in fields.get("query_sequences", "").split(",") if s]
    message = cognition_pb2.Trigger(
        trigger_id=delivered.trigger_id, trace_id=fields.get("trace_id", ""),
        trigger=fields.get("trigger", ""), query_sequences=sequences,
        owner=fields.get("owner", ""), agent_id=fields.get("agent_id", ""),
        delivery_count=delivered.delivery_count)
    if fields.get("signaled_at"):
        message.signaled_at.FromJsonString(fields["signaled_at"])
    return message


def view_to_proto(view: TraceView) -> cognition_pb2.GetTraceViewResponse:
    return cognition_pb2.GetTraceViewResponse(
        trace=trace_to_proto(view.trace),
        timeline=[cognition_pb2.TimelineStep(sequence=sequence,
                                             events=[event_to_proto(e) for e in events])
                  for sequence, events in view.timeline],
        memory_timeline=[event_to_proto(e) for e in view.memory_timeline],
        memory_counts=[cognition_pb2.MemoryTypeCount(memory_type=c.memory_type, reads=c.reads,
                                                     writes=c.writes)
                       for c in view.memory_counts],
        plan_evolution=[event_to_proto(e) for e in view.plan_evolution],
        knowledge=[cognition_pb2.KnowledgeEvaluationSummary(
            knowledge_id=k.knowledge_id, queried=k.queried,
            feedback_deferred=k.feedback_deferred, feedback_refused=k.feedback_refused,
            **k.statuses) for k in view.knowledge],
        extraction_funnel=cognition_pb2.ExtractionFunnel(**view.funnel),
        reflections=[event_to_proto(e) for e in view.reflections],
        pending_query_sequences=view.pending, **job_view_to_proto(view.job))


# ---- The runtime job's views ----------------------------------------------------------

_NODE_STATE = ProtoEnum(cognition_pb2.NodeState)
_JOB_STATUS = ProtoEnum(cognition_pb2.JobStatus)


def job_view_to_proto(job: JobView) -> dict[str, Any]:
    """The GetTraceViewResponse fields of a job's views."""
    return {"header": header_to_proto(job.header),
            "reasoning_steps": [step_to_proto(s) for s in job.steps],
            "decision_tree": decision_tree_to_proto(job.graph),
            "plan_snapshots": [plan_snapshot_to_proto(p) for p in job.plans],
            "plan_diff": plan_diff_to_proto(job.plan_diff),
            "tool_graph": tool_graph_to_proto(job.graph)}


def _time(iso_time: str) -> Timestamp | None:
    if not iso_time:
        return None
    stamp = Timestamp()
    stamp.FromJsonString(iso_time)
    return stamp


def header_to_proto(header: Header) -> cognition_pb2.TraceHeader:
    return cognition_pb2.TraceHeader(
        job_id=header.job_id, job_ids=header.job_ids, agent_id=header.agent_id,
        goal=header.goal, status=_JOB_STATUS.value(header.status),
        cursor_node_id=header.cursor_node_id, cursor_step_index=header.cursor_step_index,
        plan_version=header.plan_version)


def step_to_proto(step: Step) -> cognition_pb2.ReasoningStep:
    return cognition_pb2.ReasoningStep(
        node_id=step.node_id, step_index=step.step_index,
        state=_NODE_STATE.value(step.state),
        attempts=[attempt_to_proto(a) for a in step.attempts],
        cards=[event_to_proto(e) for e in step.cards],
        memory=[event_to_proto(e) for e in step.memory], plan_version=step.plan_version)


def attempt_to_proto(attempt: Attempt) -> cognition_pb2.NodeAttempt:
    return cognition_pb2.NodeAttempt(
        attempt=attempt.attempt, state=_NODE_STATE.value(attempt.state),
        started_at=_time(attempt.started_at), finished_at=_time(attempt.finished_at),
        duration_ms=attempt.duration_ms, reason=attempt.reason, worker_id=attempt.worker_id,
        step_index=attempt.step_index)


def _edges_to_proto(graph: JobGraph) -> list[cognition_pb2.GraphEdge]:
    return [cognition_pb2.GraphEdge(from_node_id=e.from_node_id, to_node_id=e.to_node_id,
                                    execution_order=e.execution_order) for e in graph.edges]


def decision_tree_to_proto(graph: JobGraph) -> cognition_pb2.DecisionTree:
    return cognition_pb2.DecisionTree(
        nodes=[cognition_pb2.DecisionTreeNode(
            node_id=n.node_id, node_type=n.task_field("type"),
            tool_name=n.task_field("tool_name"), description=n.task_field("description"),
            state=_NODE_STATE.value(n.state), attempts=len(n.step.attempts) if n.step else 0,
            step_index=n.step.step_index if n.step else 0,
            choices=[event_to_proto(e) for e in n.choices], branch=n.successors > 1,
            leaf=n.successors == 0, in_current_plan=n.in_current_plan) for n in graph.nodes],
        edges=_edges_to_proto(graph), root_node_ids=graph.roots,
        plan_version=graph.plan_version)


def tool_graph_to_proto(graph: JobGraph) -> cognition_pb2.ToolGraph:
    return cognition_pb2.ToolGraph(
        nodes=[cognition_pb2.ToolGraphNode(
            node_id=n.node_id, node_type=n.task_field("type"),
            description=n.task_field("description"), tool_node=n.tool_node,
            state=_NODE_STATE.value(n.state), finish_order=n.finish_order,
            calls=[tool_call_to_proto(c) for c in n.step.calls] if n.step else [],
            in_current_plan=n.in_current_plan, step_index=n.step.step_index if n.step else 0)
            for n in graph.nodes],
        edges=_edges_to_proto(graph))


def tool_call_to_proto(call: ToolCall) -> cognition_pb2.ToolCall:
    return cognition_pb2.ToolCall(
        tool_name=call.tool_name, reason=call.reason, input_summary=call.input_summary,
        output_summary=call.output_summary, error=call.error, external_id=call.external_id,
        idempotent=call.idempotent, rollback_available=call.rollback_available,
        attempt=call.attempt, selected_event_id=call.selected_event_id,
        result_event_id=call.result_event_id, selected_at=_time(call.selected_at),
        finished_at=_time(call.finished_at))


def _task_graph(graph: Body) -> cognition_pb2.TaskGraph:
    return json_format.ParseDict(graph, cognition_pb2.TaskGraph())


def plan_snapshot_to_proto(plan: PlanSnapshot) -> cognition_pb2.PlanSnapshot:
    return cognition_pb2.PlanSnapshot(
        plan_version=plan.plan_version, source=plan.source, event_ids=plan.event_ids,
        timestamp=_time(plan.timestamp), goal=plan.goal,
        task_graph=_task_graph(plan.task_graph) if plan.task_graph is not None else None,
        task_graph_summary=plan.task_graph_summary,
        reasoning_summary=plan.reasoning_summary, memory_summary=plan.memory_summary,
        memory_keys=plan.memory_keys, plan_hash=plan.plan_hash,
        diff_summary=plan.diff_summary, diff_computed=plan.diff_computed)


def plan_diff_to_proto(diff: PlanDiff) -> cognition_pb2.PlanDiff:
    def nodes(found: list[Body]) -> list[cognition_pb2.TaskNode]:
        return [json_format.ParseDict(n, cognition_pb2.TaskNode()) for n in found]

    def edges(found: list[Body]) -> list[cognition_pb2.TaskEdge]:
        return [json_format.ParseDict(e, cognition_pb2.TaskEdge()) for e in found]

    return cognition_pb2.PlanDiff(
        from_version=diff.from_version, to_version=diff.to_version, summary=diff.summary,
        computed=diff.computed, goal_changed=diff.goal_changed,
        added_nodes=nodes(diff.added_nodes), removed_nodes=nodes(diff.removed_nodes),
        changed_nodes=[cognition_pb2.NodeChange(node_id=c.node_id, changes=c.changes)
                       for c in diff.changed_nodes],
        added_edges=edges(diff.added_edges), removed_edges=edges(diff.removed_edges))
