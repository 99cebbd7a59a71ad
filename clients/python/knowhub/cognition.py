"""`kh.cognition`: per-trace cognition logs, evaluation triggers, evaluations and the review
of extracted knowledge (seeds 000 and 004).

Events are seed 000's dicts, e.g. {"type": "query", "sequence": 3, "query": "...",
"source_ids": [...], "sources": [...]}, or `Event` objects. Every method returns its result
from `KnowHub` and an awaitable of it from `AsyncKnowHub`; `watch_triggers` returns an
iterator (an async iterator from `AsyncKnowHub`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format

from knowhub._transport import AsyncStream, AsyncTransport, Stream, Transport
from knowhub.knowledge import KnowledgeAPI
from knowhub.models import (
    AppendResult,
    CommitReport,
    EvaluationPrompt,
    EvaluationReport,
    Event,
    Extraction,
    ExtractionPage,
    ImportResult,
    KnowledgeInjection,
    LogPage,
    PendingQueries,
    SavedExtraction,
    SearchHit,
    TimeLike,
    Trace,
    TracePage,
    TraceView,
    Trigger,
    TriggerSignal,
    to_timestamp,
)
from knowhub.v1 import cognition_pb2, cognition_pb2_grpc

SOURCE_CONTENT_KEPT = 500
KNOWLEDGE_HEADING = "📚 相关知识"


def payload_message(payload: Mapping[str, Any]) -> cognition_pb2.ExtractionPayload:
    """An ExtractionPayload from seed 000's payload dict (knowledge_save's arguments)."""
    return json_format.ParseDict(dict(payload), cognition_pb2.ExtractionPayload())


def knowledge_block(hits: Sequence[SearchHit]) -> str:
    """Seed 001's "📚 相关知识" section for the model: id, task and content of each hit."""
    lines = [f"{KNOWLEDGE_HEADING} ({len(hits)} 条):"]
    for number, hit in enumerate(hits, 1):
        k = hit.knowledge
        lines.append(f"{number}. [{k.id}] {k.task}\n   {k.content}")
    return "\n".join(lines)


def _paged(page: Any, next_page_token: str) -> Any:
    page.next_page_token = next_page_token
    return page


def _trace_page(response: cognition_pb2.ListTracesResponse) -> TracePage:
    return _paged(TracePage(Trace.from_proto(t) for t in response.traces),
                  response.next_page_token)


def _log_page(response: cognition_pb2.GetLogResponse) -> LogPage:
    page = _paged(LogPage(Event.from_proto(e) for e in response.events),
                  response.next_page_token)
    page.trace = Trace.from_proto(response.trace)
    return page


def _pending(response: cognition_pb2.PendingEvaluationsResponse) -> PendingQueries:
    queries = PendingQueries(Event.from_proto(e) for e in response.queries)
    queries.last_trigger = response.last_trigger
    return queries


def _extraction_page(response: cognition_pb2.ListExtractionsResponse) -> ExtractionPage:
    return _paged(ExtractionPage(Extraction.from_proto(x) for x in response.extractions),
                  response.next_page_token)


def _appended(response: cognition_pb2.AppendEventsResponse) -> AppendResult:
    return AppendResult(list(response.event_ids), Trace.from_proto(response.trace))


class CognitionAPI:
    def __init__(self, transport: Transport | AsyncTransport, knowledge: KnowledgeAPI) -> None:
        self._transport = transport
        self._knowledge = knowledge
        self._stub = cognition_pb2_grpc.CognitionServiceStub(transport.channel)

    # -- log --

    def append_events(self, trace_id: str, events: Sequence[Event | Mapping[str, Any]], *,
                      request_id: str | None = None, task: str | None = None,
                      agent_id: str | None = None,
                      auto_commit: bool | None = None) -> AppendResult:
        """Appends events atomically. With `request_id`, a retry appends nothing and returns
        the first answer. `task` and `auto_commit` set the trace's mission and option."""
        request = cognition_pb2.AppendEventsRequest(
            trace_id=trace_id, events=[Event.to_proto(e) for e in events],
            request_id=request_id or "", task=task or "", agent_id=agent_id or "",
            auto_commit=auto_commit)
        return self._transport.call(self._stub.AppendEvents, request, _appended)

    def get_log(self, trace_id: str, types: Sequence[str] | None = None,
                since: TimeLike = None, limit: int = 100, page_token: str = "") -> LogPage:
        """Events in append order, of `types`, appended at or after `since`."""
        request = cognition_pb2.GetLogRequest(
            trace_id=trace_id, types=list(types or []), since=to_timestamp(since),
            page_size=limit, page_token=page_token)
        return self._transport.call(self._stub.GetLog, request, _log_page)

    def list_traces(self, agent_id: str | None = None, updated_since: TimeLike = None,
                    limit: int = 20, page_token: str = "",
                    owner: str | None = None) -> TracePage:
        """The caller's traces, newest first (an admin's: every trace, or `owner`'s)."""
        request = cognition_pb2.ListTracesRequest(
            agent_id=agent_id or "", updated_since=to_timestamp(updated_since),
            page_size=limit, page_token=page_token, owner=owner or "")
        return self._transport.call(self._stub.ListTraces, request, _trace_page)

    def consume_reflections(self, trace_id: str, event_ids: Sequence[str]) -> int:
        """Marks reflection events consumed (dream phase 2); returns how many were not."""
        return self._transport.call(
            self._stub.ConsumeReflections,
            cognition_pb2.ConsumeReflectionsRequest(trace_id=trace_id,
                                                    event_ids=list(event_ids)),
            lambda r: r.consumed)

    def trace_view(self, trace_id: str) -> TraceView:
        return self._transport.call(self._stub.GetTraceView,
                                    cognition_pb2.GetTraceViewRequest(trace_id=trace_id),
                                    TraceView.from_proto)

    def export_log(self, trace_id: str) -> str:
        """Seed 000's JSON log file of the trace."""
        return self._transport.call(self._stub.ExportLog,
                                    cognition_pb2.ExportLogRequest(trace_id=trace_id),
                                    lambda r: r.document)

    def import_log(self, document: str, trace_id: str | None = None) -> ImportResult:
        """Creates a trace from a JSON log file (seed 000's or the legacy entries[])."""
        return self._transport.call(
            self._stub.ImportLog,
            cognition_pb2.ImportLogRequest(document=document, trace_id=trace_id or ""),
            lambda r: ImportResult(Trace.from_proto(r.trace), r.imported))

    # -- evaluation --

    def pending_evaluations(self, trace_id: str) -> PendingQueries:
        return self._transport.call(
            self._stub.PendingEvaluations,
            cognition_pb2.PendingEvaluationsRequest(trace_id=trace_id), _pending)

    def signal_trigger(self, trace_id: str, trigger: str) -> TriggerSignal:
        """goal_completion, compression or task_completion: publishes one trigger when
        queries are pending (not again for the same pending set)."""
        return self._transport.call(
            self._stub.SignalTrigger,
            cognition_pb2.SignalTriggerRequest(trace_id=trace_id, trigger=trigger),
            lambda r: TriggerSignal(list(r.query_sequences), r.published, r.trigger_id))

    def watch_triggers(self, group: str | None = None, consumer: str | None = None
                       ) -> Stream[Trigger] | AsyncStream[Trigger]:
        """Triggers for this consumer of `group` ("evaluators") until the stream's
        `cancel()` (or the end of a `with` block). Acknowledge each with ack_triggers, or
        it is delivered again after the server's visibility timeout."""
        request = cognition_pb2.WatchTriggersRequest(group=group or "",
                                                      consumer=consumer or "")
        return self._transport.stream(self._stub.WatchTriggers, request,
                                      lambda r: Trigger.from_proto(r.trigger))

    def ack_triggers(self, trigger_ids: Sequence[str], group: str | None = None) -> int:
        return self._transport.call(
            self._stub.AckTriggers,
            cognition_pb2.AckTriggersRequest(group=group or "", trigger_ids=list(trigger_ids)),
            lambda r: r.acknowledged)

    def evaluation_prompt(self, trace_id: str, mission: str = "",
                          goal: str = "") -> EvaluationPrompt:
        """Seed 000's prompt for the pending queries ("" when none is pending)."""
        return self._transport.call(
            self._stub.GetEvaluationPrompt,
            cognition_pb2.GetEvaluationPromptRequest(trace_id=trace_id, mission=mission,
                                                     goal=goal),
            lambda r: EvaluationPrompt(r.prompt, list(r.query_sequences)))

    def submit_evaluation(self, trace_id: str, raw_text: str | None = None,
                          evaluations: Sequence[Mapping[str, Any]] | None = None,
                          trigger: str | None = None) -> EvaluationReport:
        """The evaluator's raw answer, or `evaluations` as seed 000's
        [{"query_sequence", "assessments": [{"knowledge_id", "status", "reason"}]}]."""
        request = cognition_pb2.SubmitEvaluationRequest(
            trace_id=trace_id, raw_text=raw_text or "", trigger=trigger or "",
            evaluations=[_query_evaluation(e) for e in evaluations or []])
        return self._transport.call(self._stub.SubmitEvaluation, request,
                                    EvaluationReport.from_proto)

    # -- extractions --

    def save_pending(self, trace_id: str, task: str, content: str, types: Sequence[str], *,
                     sequence: int = 0, goal_id: str = "", branch_id: str = "",
                     request_id: str | None = None, **save_arguments: Any) -> SavedExtraction:
        """Seed 000's knowledge_save_pending: knowledge_save's arguments (tags, scopes,
        owner, source_name, source_category, urls, agent_id, submitted_by, score,
        message_id, resource_ids), held for review."""
        payload = payload_message({"task": task, "content": content, "types": list(types),
                                   **save_arguments})
        request = cognition_pb2.SavePendingExtractionRequest(
            trace_id=trace_id, sequence=sequence, goal_id=goal_id, branch_id=branch_id,
            payload=payload, request_id=request_id or "")
        return self._transport.call(self._stub.SavePendingExtraction, request,
                                    SavedExtraction.from_proto)

    def list_extractions(self, trace_id: str | None = None,
                         states: Sequence[str] | None = None, limit: int = 20,
                         page_token: str = "") -> ExtractionPage:
        """Oldest first; in one trace, or across every trace the caller can see."""
        request = cognition_pb2.ListExtractionsRequest(
            trace_id=trace_id or "", states=list(states or []), page_size=limit,
            page_token=page_token)
        return self._transport.call(self._stub.ListExtractions, request, _extraction_page)

    def review_extraction(self, trace_id: str, extraction_id: str, decision: str,
                          edited_payload: Mapping[str, Any] | None = None) -> Extraction:
        """approve, edit (with the whole edited payload) or discard; the latest wins."""
        request = cognition_pb2.ReviewExtractionRequest(
            trace_id=trace_id, extraction_id=extraction_id, decision=decision,
            edited_payload=payload_message(edited_payload) if edited_payload else None)
        return self._transport.call(self._stub.ReviewExtraction, request,
                                    lambda r: Extraction.from_proto(r.extraction))

    def commit_extractions(self, trace_id: str,
                           extraction_ids: Sequence[str] | None = None) -> CommitReport:
        request = cognition_pb2.CommitExtractionsRequest(
            trace_id=trace_id, extraction_ids=list(extraction_ids or []))
        return self._transport.call(self._stub.CommitExtractions, request,
                                    CommitReport.from_proto)

    # -- the agent's helper --

    def inject_knowledge_for_goal(self, trace_id: str, goal_id: str, goal: str, sequence: int,
                                  top_k: int = 3, min_score: int = 3) -> Any:
        """Seed 001's knowledge injection on goal focus: searches for the goal, logs the
        query (for evaluation later) and a memory_read, and returns the hits with the
        "📚 相关知识" text to show the model (a KnowledgeInjection)."""
        searched = self._knowledge.search(goal, top_k=top_k, min_score=min_score)

        def log(hits: Sequence[SearchHit]) -> tuple[str, Any]:
            text = knowledge_block(hits)
            events = [
                {"type": "query", "sequence": sequence, "goal_id": goal_id, "query": goal,
                 "response": text, "source_ids": [h.knowledge.id for h in hits],
                 "sources": [{"id": h.knowledge.id, "task": h.knowledge.task,
                              "content": h.knowledge.content[:SOURCE_CONTENT_KEPT]}
                             for h in hits]},
                {"type": "memory_read", "memory_type": "long_term",
                 "key_or_scope": "knowledge", "step_index": sequence,
                 "summary": f"knowledge_search top_k={top_k} min_score={min_score}: "
                            f"{len(hits)} 条"},
            ]
            return text, self.append_events(trace_id, events)

        if inspect.isawaitable(searched):
            async def run() -> KnowledgeInjection:
                hits = await searched
                text, appended = log(hits)
                return KnowledgeInjection(list(hits), text, (await appended).event_ids)

            return run()
        text, appended = log(searched)
        return KnowledgeInjection(list(searched), text, appended.event_ids)


def _query_evaluation(item: Mapping[str, Any]) -> cognition_pb2.QueryEvaluation:
    return cognition_pb2.QueryEvaluation(
        query_sequence=int(item["query_sequence"]),
        assessments=[cognition_pb2.Assessment(
            knowledge_id=a.get("knowledge_id") or a.get("source_id") or "",
            status=a.get("status") or a.get("eval_status") or "", reason=a.get("reason") or "")
            for a in item.get("assessments", [])])
