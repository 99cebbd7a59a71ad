"""`kh.cognition`: per-trace cognition logs, evaluation triggers, evaluations and the review
of extracted knowledge.

Events are the log's dicts, e.g. {"type": "query", "sequence": 3, "query": "...",
"source_ids": [...], "sources": [...]}, or `Event` objects. `watch_triggers` returns an
iterator of triggers (an async iterator from `AsyncKnowHub`).

Each user names their own traces; `owner` ("user:ID") names another user's trace, for
admins and the evaluator and dreamer roles (the caller's own when None).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from knowhub._async.knowledge import AsyncKnowledgeAPI
from knowhub._requests.cognition import (
    event_message,
    injection_events,
    knowledge_block,
    payload_message,
    query_evaluation,
)
from knowhub._transport import AsyncStream, AsyncTransport
from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.cognition import (
    AbandonedEvaluation,
    AppendResult,
    CommitReport,
    DeletedTrace,
    EvaluationPrompt,
    EvaluationReport,
    Event,
    ExportPage,
    Extraction,
    ExtractionPage,
    ImportResult,
    KnowledgeInjection,
    LogPage,
    PendingQueries,
    SavedExtraction,
    TracePage,
    TraceView,
    Trigger,
    TriggerSignal,
)
from knowhub.v1 import cognition_pb2, cognition_pb2_grpc


class AsyncCognitionAPI:
    def __init__(self, transport: AsyncTransport, knowledge: AsyncKnowledgeAPI) -> None:
        self._transport = transport
        self._knowledge = knowledge
        self._stub = cognition_pb2_grpc.CognitionServiceStub(transport.channel)

    # -- log --

    async def append_events(self, trace_id: str, events: Sequence[Event | Mapping[str, Any]],
                            *, request_id: str | None = None, task: str | None = None,
                            agent_id: str | None = None, auto_commit: bool | None = None,
                            owner: str | None = None) -> AppendResult:
        """Appends events atomically. With `request_id`, a retry appends nothing and returns
        the first answer. `task` and `auto_commit` set the trace's mission and option."""
        request = cognition_pb2.AppendEventsRequest(
            trace_id=trace_id, events=[event_message(e) for e in events],
            request_id=request_id or "", task=task or "", agent_id=agent_id or "",
            auto_commit=auto_commit, owner=owner or "")
        return await self._transport.call(self._stub.AppendEvents, request,
                                          AppendResult.from_proto)

    async def get_log(self, trace_id: str, types: Sequence[str] | None = None,
                      since: TimeLike = None, limit: int = 100,
                      page_token: str = "", owner: str | None = None) -> LogPage:
        """Events in append order, of `types`, appended at or after `since`."""
        request = cognition_pb2.GetLogRequest(
            trace_id=trace_id, types=list(types or []), since=to_timestamp(since),
            page_size=limit, page_token=page_token, owner=owner or "")
        return await self._transport.call(self._stub.GetLog, request, LogPage.from_proto)

    async def list_traces(self, agent_id: str | None = None, updated_since: TimeLike = None,
                          limit: int = 20, page_token: str = "",
                          owner: str | None = None) -> TracePage:
        """The caller's traces, newest first (an admin's: every trace, or `owner`'s)."""
        request = cognition_pb2.ListTracesRequest(
            agent_id=agent_id or "", updated_since=to_timestamp(updated_since),
            page_size=limit, page_token=page_token, owner=owner or "")
        return await self._transport.call(self._stub.ListTraces, request,
                                          TracePage.from_proto)

    async def consume_reflections(self, trace_id: str, event_ids: Sequence[str],
                                  owner: str | None = None) -> int:
        """Marks reflection events consumed (dream phase 2); returns how many were not."""
        request = cognition_pb2.ConsumeReflectionsRequest(trace_id=trace_id,
                                                          event_ids=list(event_ids),
                                                          owner=owner or "")
        return await self._transport.call(self._stub.ConsumeReflections, request,
                                          lambda r: r.consumed)

    async def delete_trace(self, trace_id: str, owner: str | None = None) -> DeletedTrace:
        """Deletes a trace with its log, extractions and evaluation state (the owner's call,
        or an admin's); how many events and extractions it held."""
        request = cognition_pb2.DeleteTraceRequest(trace_id=trace_id, owner=owner or "")
        return await self._transport.call(self._stub.DeleteTrace, request,
                                          DeletedTrace.from_proto)

    async def trace_view(self, trace_id: str, job_id: str | None = None,
                         plan_diff: tuple[int, int] | None = None, *,
                         owner: str | None = None, page_size: int = 0,
                         page_token: str = "") -> TraceView:
        """The views of one window of the trace's log (`page_size` events, 1,000 when 0;
        `next_page_token` gives the next window): its knowledge aggregations, and the
        views of runtime job `job_id` (the latest job when None) with plan versions
        `plan_diff` = (from, to) compared (the last two when None)."""
        request = cognition_pb2.GetTraceViewRequest(
            trace_id=trace_id, job_id=job_id or "",
            plan_diff_from=plan_diff[0] if plan_diff else None,
            plan_diff_to=plan_diff[1] if plan_diff else None, owner=owner or "",
            page_size=page_size, page_token=page_token)
        return await self._transport.call(self._stub.GetTraceView, request,
                                          TraceView.from_proto)

    async def export_log(self, trace_id: str, owner: str | None = None,
                         page_size: int = 0) -> str:
        """The trace's JSON log file, read from the server a page (`page_size` events,
        1,000 when 0) at a time."""
        document: dict[str, Any] | None = None
        token = ""
        while True:
            page = await self.export_log_page(trace_id, owner, page_size, token)
            if document is None and not page.next_page_token:
                return page.document
            events = json.loads(page.document)
            if document is None:
                document = events
            else:
                document["events"] += events["events"]
            token = page.next_page_token
            if not token:
                return json.dumps(document, ensure_ascii=False, indent=1)

    async def export_log_page(self, trace_id: str, owner: str | None = None,
                              page_size: int = 0, page_token: str = "") -> ExportPage:
        """One page of the trace's JSON log file: a document with `page_size` events (1,000
        when 0) from `page_token` on."""
        request = cognition_pb2.ExportLogRequest(trace_id=trace_id, owner=owner or "",
                                                 page_size=page_size, page_token=page_token)
        return await self._transport.call(self._stub.ExportLog, request, ExportPage.from_proto)

    async def import_log(self, document: str, trace_id: str | None = None) -> ImportResult:
        """Creates a trace from a JSON log file (the export's shape or legacy entries[])."""
        request = cognition_pb2.ImportLogRequest(document=document, trace_id=trace_id or "")
        return await self._transport.call(self._stub.ImportLog, request,
                                          ImportResult.from_proto)

    # -- evaluation --

    async def pending_evaluations(self, trace_id: str,
                                  owner: str | None = None) -> PendingQueries:
        """The trace's query events still waiting for a verdict on one of their sources."""
        return await self._transport.call(
            self._stub.PendingEvaluations,
            cognition_pb2.PendingEvaluationsRequest(trace_id=trace_id, owner=owner or ""),
            PendingQueries.from_proto)

    async def signal_trigger(self, trace_id: str, trigger: str,
                             owner: str | None = None) -> TriggerSignal:
        """goal_completion, compression or task_completion: publishes one trigger when
        queries are pending (not again for the same pending set, unless an evaluator gave
        up on it)."""
        return await self._transport.call(
            self._stub.SignalTrigger,
            cognition_pb2.SignalTriggerRequest(trace_id=trace_id, trigger=trigger,
                                               owner=owner or ""),
            TriggerSignal.from_proto)

    def watch_triggers(self, group: str | None = None,
                       consumer: str | None = None) -> AsyncStream[Trigger]:
        """Triggers for this consumer of `group` ("evaluators") until the stream's
        `cancel()` (or the end of a `with` block). Acknowledge each with ack_triggers, or
        it is delivered again after the server's visibility timeout."""
        request = cognition_pb2.WatchTriggersRequest(group=group or "",
                                                      consumer=consumer or "")
        return self._transport.stream(self._stub.WatchTriggers, request,
                                      lambda r: Trigger.from_proto(r.trigger))

    async def ack_triggers(self, trigger_ids: Sequence[str], group: str | None = None) -> int:
        """Acknowledges triggers read with `watch_triggers` in `group`; how many were pending."""
        request = cognition_pb2.AckTriggersRequest(group=group or "",
                                                   trigger_ids=list(trigger_ids))
        return await self._transport.call(self._stub.AckTriggers, request,
                                          lambda r: r.acknowledged)

    async def evaluation_prompt(self, trace_id: str, mission: str = "",
                                goal: str = "", owner: str | None = None) -> EvaluationPrompt:
        """The evaluator's prompt for the pending queries ("" when none is pending)."""
        request = cognition_pb2.GetEvaluationPromptRequest(trace_id=trace_id,
                                                           mission=mission, goal=goal,
                                                           owner=owner or "")
        return await self._transport.call(self._stub.GetEvaluationPrompt, request,
                                          EvaluationPrompt.from_proto)

    async def submit_evaluation(self, trace_id: str, raw_text: str | None = None,
                                evaluations: Sequence[Mapping[str, Any]] | None = None,
                                trigger: str | None = None,
                                owner: str | None = None) -> EvaluationReport:
        """The evaluator's raw answer, or `evaluations` as
        [{"query_sequence", "assessments": [{"knowledge_id", "status", "reason"}]}]. A raw
        answer without evaluation JSON is logged and reported with `parse_failed`."""
        request = cognition_pb2.SubmitEvaluationRequest(
            trace_id=trace_id, raw_text=raw_text or "", trigger=trigger or "",
            evaluations=[query_evaluation(e) for e in evaluations or []], owner=owner or "")
        return await self._transport.call(self._stub.SubmitEvaluation, request,
                                          EvaluationReport.from_proto)

    async def abandon_evaluation(self, trace_id: str, reason: str = "",
                                 trigger_id: str | None = None, deliveries: int = 0,
                                 owner: str | None = None) -> AbandonedEvaluation:
        """Gives up on the trace's pending queries (an evaluator's last attempt failed):
        logged, shown in the console, and the next signal_trigger publishes them again."""
        request = cognition_pb2.AbandonEvaluationRequest(
            trace_id=trace_id, owner=owner or "", trigger_id=trigger_id or "", reason=reason,
            deliveries=deliveries)
        return await self._transport.call(self._stub.AbandonEvaluation, request,
                                          AbandonedEvaluation.from_proto)

    # -- extractions --

    async def save_pending(self, trace_id: str, task: str, content: str,
                           types: Sequence[str], *, sequence: int = 0, goal_id: str = "",
                           branch_id: str = "", request_id: str | None = None,
                           trace_owner: str | None = None,
                           **save_arguments: Any) -> SavedExtraction:
        """knowledge_save_pending: knowledge_save's arguments (tags, scopes, owner,
        source_name, source_category, urls, agent_id, submitted_by, score, message_id,
        resource_ids), held for review. `trace_owner` names another user's trace (`owner`
        is the knowledge's)."""
        payload = payload_message({"task": task, "content": content, "types": list(types),
                                   **save_arguments})
        request = cognition_pb2.SavePendingExtractionRequest(
            trace_id=trace_id, sequence=sequence, goal_id=goal_id, branch_id=branch_id,
            payload=payload, request_id=request_id or "", owner=trace_owner or "")
        return await self._transport.call(self._stub.SavePendingExtraction, request,
                                          SavedExtraction.from_proto)

    async def list_extractions(self, trace_id: str | None = None,
                               states: Sequence[str] | None = None, limit: int = 20,
                               page_token: str = "", owner: str | None = None
                               ) -> ExtractionPage:
        """Oldest first; in one trace, or across every trace the caller can see."""
        request = cognition_pb2.ListExtractionsRequest(
            trace_id=trace_id or "", states=list(states or []), page_size=limit,
            page_token=page_token, owner=owner or "")
        return await self._transport.call(self._stub.ListExtractions, request,
                                          ExtractionPage.from_proto)

    async def review_extraction(self, trace_id: str, extraction_id: str, decision: str,
                                edited_payload: Mapping[str, Any] | None = None,
                                owner: str | None = None) -> Extraction:
        """approve, edit (with the whole edited payload) or discard; the latest wins."""
        request = cognition_pb2.ReviewExtractionRequest(
            trace_id=trace_id, extraction_id=extraction_id, decision=decision,
            edited_payload=payload_message(edited_payload) if edited_payload else None,
            owner=owner or "")
        return await self._transport.call(self._stub.ReviewExtraction, request,
                                          lambda r: Extraction.from_proto(r.extraction))

    async def commit_extractions(self, trace_id: str,
                                 extraction_ids: Sequence[str] | None = None,
                                 owner: str | None = None) -> CommitReport:
        """Saves the trace's approved and edited extractions (or only `extraction_ids`) as
        knowledge; the report lists each one's new or linked record, or its failure."""
        request = cognition_pb2.CommitExtractionsRequest(
            trace_id=trace_id, extraction_ids=list(extraction_ids or []), owner=owner or "")
        return await self._transport.call(self._stub.CommitExtractions, request,
                                          CommitReport.from_proto)

    # -- the agent's helper --

    async def inject_knowledge_for_goal(self, trace_id: str, goal_id: str, goal: str,
                                        sequence: int, top_k: int = 3, min_score: int = 3,
                                        language: str | None = None) -> KnowledgeInjection:
        """Knowledge injection on goal focus: searches for the goal, logs the query (for
        evaluation later) and a memory_read, and returns the hits with the
        "📚 Relevant knowledge" text to show the model (`language` "zh", or
        KNOWHUB_LANGUAGE=zh: "📚 相关知识")."""
        hits = await self._knowledge.search(goal, top_k=top_k, min_score=min_score)
        text = knowledge_block(hits, language)
        events = injection_events(goal_id, goal, sequence, top_k, min_score, hits, text,
                                  language)
        appended = await self.append_events(trace_id, events)
        return KnowledgeInjection(list(hits), text, appended.event_ids)
