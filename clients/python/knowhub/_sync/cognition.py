# Generated from knowhub/_async/cognition.py by `make sdk-sync`: edit that file, not this one.
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

from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub._requests.cognition import (
    event_message,
    injection_events,
    knowledge_block,
    payload_message,
    query_evaluation,
)
from knowhub._sync.knowledge import KnowledgeAPI
from knowhub._transport import Stream, Transport
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


class CognitionAPI:
    def __init__(self, transport: Transport, knowledge: KnowledgeAPI) -> None:
        self._transport = transport
        self._knowledge = knowledge
        self._stub = cognition_pb2_grpc.CognitionServiceStub(transport.channel)

    # -- log --

    def append_events(
        self,
        trace_id: str,
        events: Sequence[Event | Mapping[str, Any]],
        *,
        request_id: str | None = None,
        task: str | None = None,
        agent_id: str | None = None,
        auto_commit: bool | None = None,
        owner: str | None = None,
    ) -> AppendResult:
        """Appends events to the trace's log atomically, creating the trace on its first write.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            events: Up to 500 events: log dicts such as `{"type": "message", "role": "user",
                "content": "..."}` or `Event` objects; the hub assigns ids and times.
            request_id: An idempotency key: a retry with the same key appends nothing and
                returns the first call's answer.
            task: Sets the trace's mission (at most 4,000 characters); unchanged when None.
            agent_id: The agent that runs the trace, one the caller's token may act as; kept
                from the trace's first write.
            auto_commit: Sets the trace's option to save approved extractions as knowledge at once.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            The ids of the appended events, in order.

        Raises:
            InvalidArgument: A malformed trace id or event, too many events, or a reused request_id.
            PermissionDenied: `owner` names another user and the caller may not act for them.
        """
        request = cognition_pb2.AppendEventsRequest(
            trace_id=trace_id,
            events=[event_message(e) for e in events],
            request_id=request_id or "",
            task=task or "",
            agent_id=agent_id or "",
            auto_commit=auto_commit,
            owner=owner or "",
        )
        return self._transport.call(self._stub.AppendEvents, request, AppendResult.from_proto)

    def get_log(
        self,
        trace_id: str,
        types: Sequence[str] | None = None,
        since: TimeLike = None,
        limit: int = 100,
        page_token: str = "",
        owner: str | None = None,
    ) -> LogPage:
        """The trace's events in append order.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            types: Only these event types (e.g. "query", "message"); all when None.
            since: Only events appended at or after this time (datetime, ISO 8601 or epoch seconds).
            limit: Events per page, 1 to 1,000.
            page_token: The previous page's `next_page_token`; "" for the first page.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            One page of events and its `next_page_token` ("" on the last page).

        Raises:
            InvalidArgument: An unknown event type, a limit out of range or a stale page_token.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.GetLogRequest(
            trace_id=trace_id,
            types=list(types or []),
            since=to_timestamp(since),
            page_size=limit,
            page_token=page_token,
            owner=owner or "",
        )
        return self._transport.call(self._stub.GetLog, request, LogPage.from_proto)

    def list_traces(
        self,
        agent_id: str | None = None,
        updated_since: TimeLike = None,
        limit: int = 20,
        page_token: str = "",
        owner: str | None = None,
    ) -> TracePage:
        """The caller's traces, most recently updated first (an admin's or the dreamer's: every
        trace, or `owner`'s).

        Args:
            agent_id: Only traces of this agent.
            updated_since: Only traces updated at or after this time.
            limit: Traces per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.
            owner: Only traces of this owner (`user:ID`), for admins and the dreamer role.

        Returns:
            One page of traces and its `next_page_token`.

        Raises:
            InvalidArgument: A limit out of range or a stale page_token.
            PermissionDenied: `owner` names another user and the caller is not an admin or dreamer.
        """
        request = cognition_pb2.ListTracesRequest(
            agent_id=agent_id or "",
            updated_since=to_timestamp(updated_since),
            page_size=limit,
            page_token=page_token,
            owner=owner or "",
        )
        return self._transport.call(self._stub.ListTraces, request, TracePage.from_proto)

    def consume_reflections(
        self, trace_id: str, event_ids: Sequence[str], owner: str | None = None
    ) -> int:
        """Marks reflection events consumed, so the next dream run's integration skips them.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            event_ids: The reflection events' ids.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            How many of them were not consumed before.

        Raises:
            InvalidArgument: No ids, or an id that is not a reflection event of the trace.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.ConsumeReflectionsRequest(
            trace_id=trace_id, event_ids=list(event_ids), owner=owner or ""
        )
        return self._transport.call(self._stub.ConsumeReflections, request, lambda r: r.consumed)

    def delete_trace(self, trace_id: str, owner: str | None = None) -> DeletedTrace:
        """Deletes a trace with its whole log, its extractions and its evaluation state (the
        owner's call, or an admin's).

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            How many events and extractions the trace held.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
            PermissionDenied: `owner` names another user and the caller may not act for them.
        """
        request = cognition_pb2.DeleteTraceRequest(trace_id=trace_id, owner=owner or "")
        return self._transport.call(self._stub.DeleteTrace, request, DeletedTrace.from_proto)

    def trace_view(
        self,
        trace_id: str,
        job_id: str | None = None,
        plan_diff: tuple[int, int] | None = None,
        *,
        owner: str | None = None,
        page_size: int = 0,
        page_token: str = "",
    ) -> TraceView:
        """The views of one window of the trace's log: its knowledge aggregations, and the
        runtime views (steps, decisions, plan versions) of one job.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            job_id: The runtime job the views show; the latest job when None.
            plan_diff: The two plan versions (from, to) to compare; the last two when None.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.
            page_size: Events in the window, 1 to 5,000 (1,000 when 0).
            page_token: The previous window's `next_page_token`; "" for the first.

        Returns:
            The views of the window and the `next_page_token` of the next one.

        Raises:
            InvalidArgument: A malformed job_id or plan_diff, or a stale page_token.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.GetTraceViewRequest(
            trace_id=trace_id,
            job_id=job_id or "",
            plan_diff_from=plan_diff[0] if plan_diff else None,
            plan_diff_to=plan_diff[1] if plan_diff else None,
            owner=owner or "",
            page_size=page_size,
            page_token=page_token,
        )
        return self._transport.call(self._stub.GetTraceView, request, TraceView.from_proto)

    def export_log(self, trace_id: str, owner: str | None = None, page_size: int = 0) -> str:
        """The trace's whole log as one JSON file, read from the hub a page at a time.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.
            page_size: Events fetched per call, 1 to 5,000 (1,000 when 0).

        Returns:
            The JSON document `{"trace_id", "task", "agent_id", "events": [...]}`; `import_log`
            reads it back.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        document: dict[str, Any] | None = None
        token = ""
        while True:
            page = self.export_log_page(trace_id, owner, page_size, token)
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

    def export_log_page(
        self, trace_id: str, owner: str | None = None, page_size: int = 0, page_token: str = ""
    ) -> ExportPage:
        """One page of the trace's JSON log file.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.
            page_size: Events in the page, 1 to 5,000 (1,000 when 0).
            page_token: The previous page's `next_page_token`; "" for the first.

        Returns:
            The page's JSON document and the `next_page_token` ("" on the last page).

        Raises:
            InvalidArgument: A page_size out of range or a stale page_token.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.ExportLogRequest(
            trace_id=trace_id, owner=owner or "", page_size=page_size, page_token=page_token
        )
        return self._transport.call(self._stub.ExportLog, request, ExportPage.from_proto)

    def import_log(self, document: str, trace_id: str | None = None) -> ImportResult:
        """Creates a trace from a JSON log file (the shape `export_log` writes, or
        legacy entries[]).

        Args:
            document: The JSON text.
            trace_id: The new trace's id; the document's when None.

        Returns:
            The new trace's id and how many events it got.

        Raises:
            InvalidArgument: The document is not a log file; the message says where.
            AlreadyExists: A trace of the caller's already has this id.
        """
        request = cognition_pb2.ImportLogRequest(document=document, trace_id=trace_id or "")
        return self._transport.call(self._stub.ImportLog, request, ImportResult.from_proto)

    # -- evaluation --

    def pending_evaluations(self, trace_id: str, owner: str | None = None) -> PendingQueries:
        """The trace's query events still waiting for a verdict on one of their sources.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            The pending queries, each with the ids of the knowledge it returned.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        return self._transport.call(
            self._stub.PendingEvaluations,
            cognition_pb2.PendingEvaluationsRequest(trace_id=trace_id, owner=owner or ""),
            PendingQueries.from_proto,
        )

    def signal_trigger(
        self, trace_id: str, trigger: str, owner: str | None = None
    ) -> TriggerSignal:
        """Signals that the agent reached a point to evaluate at: publishes one trigger for the
        evaluators when queries are pending (not again for the same pending set, unless an
        evaluator gave up on it).

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            trigger: goal_completion, compression or task_completion.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            Whether a trigger was published, and its id.

        Raises:
            InvalidArgument: An unknown trigger.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        return self._transport.call(
            self._stub.SignalTrigger,
            cognition_pb2.SignalTriggerRequest(
                trace_id=trace_id, trigger=trigger, owner=owner or ""
            ),
            TriggerSignal.from_proto,
        )

    def watch_triggers(
        self, group: str | None = None, consumer: str | None = None
    ) -> Stream[Trigger]:
        """The evaluation triggers for this consumer of `group`, as they come, until the
        stream's `cancel()` (or the end of a `with` block). Acknowledge each with
        `ack_triggers`, or it is delivered again after the hub's visibility timeout.

        Args:
            group: The consumer group; "evaluators" when None.
            consumer: This consumer's name in the group; a fresh one when None.

        Returns:
            A stream of triggers (an async iterator from `AsyncKnowHub`).

        Raises:
            InvalidArgument: A malformed group or consumer name (when the stream is read).
            PermissionDenied: Only admins and the evaluator role may watch triggers.
        """
        request = cognition_pb2.WatchTriggersRequest(group=group or "", consumer=consumer or "")
        return self._transport.stream(
            self._stub.WatchTriggers, request, lambda r: Trigger.from_proto(r.trigger)
        )

    def ack_triggers(self, trigger_ids: Sequence[str], group: str | None = None) -> int:
        """Acknowledges triggers read with `watch_triggers`.

        Args:
            trigger_ids: 1 to 500 trigger ids.
            group: The consumer group; "evaluators" when None.

        Returns:
            How many of them were pending in the group.

        Raises:
            InvalidArgument: No ids or too many.
            PermissionDenied: Only admins and the evaluator role may acknowledge triggers.
        """
        request = cognition_pb2.AckTriggersRequest(group=group or "", trigger_ids=list(trigger_ids))
        return self._transport.call(self._stub.AckTriggers, request, lambda r: r.acknowledged)

    def evaluation_prompt(
        self, trace_id: str, mission: str = "", goal: str = "", owner: str | None = None
    ) -> EvaluationPrompt:
        """The prompt that asks a model to evaluate the knowledge the trace's pending queries
        returned (the trace_evaluation_prompt tool).

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            mission: The mission shown to the evaluator; the trace's task when "".
            goal: The current goal's description.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            The prompt ("" when no query is pending) and the queries it covers.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.GetEvaluationPromptRequest(
            trace_id=trace_id, mission=mission, goal=goal, owner=owner or ""
        )
        return self._transport.call(
            self._stub.GetEvaluationPrompt, request, EvaluationPrompt.from_proto
        )

    def submit_evaluation(
        self,
        trace_id: str,
        raw_text: str | None = None,
        evaluations: Sequence[Mapping[str, Any]] | None = None,
        trigger: str | None = None,
        owner: str | None = None,
    ) -> EvaluationReport:
        """The evaluator's verdicts on the knowledge the trace's queries returned (the
        trace_submit_evaluation tool); each verdict counts once in the record's helpful or
        harmful counters.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            raw_text: The model's answer to `evaluation_prompt`; one without evaluation JSON is
                logged and reported with `parse_failed`, not an error.
            evaluations: Instead of raw_text: `[{"query_sequence", "assessments":
                [{"knowledge_id", "status", "reason"}]}]`, status helpful, harmful, neutral,
                unused or irrelevant.
            trigger: The trigger evaluated; the trace's last signalled one when None.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            What was applied: the feedback per record, and `parse_failed` for a raw answer
            without evaluation JSON.

        Raises:
            InvalidArgument: Both or neither of raw_text and evaluations, or a malformed assessment.
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.SubmitEvaluationRequest(
            trace_id=trace_id,
            raw_text=raw_text or "",
            trigger=trigger or "",
            evaluations=[query_evaluation(e) for e in evaluations or []],
            owner=owner or "",
        )
        return self._transport.call(
            self._stub.SubmitEvaluation, request, EvaluationReport.from_proto
        )

    def abandon_evaluation(
        self,
        trace_id: str,
        reason: str = "",
        trigger_id: str | None = None,
        deliveries: int = 0,
        owner: str | None = None,
    ) -> AbandonedEvaluation:
        """Gives up on the trace's pending queries (an evaluator's last attempt failed): logged,
        shown in the console, and the next `signal_trigger` publishes them again.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            reason: Why, at most 4,000 characters.
            trigger_id: The trigger given up on: a retried call with it writes nothing more.
            deliveries: How often the trigger was delivered.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            The evaluation_failed event written and the queries given up on.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.AbandonEvaluationRequest(
            trace_id=trace_id,
            owner=owner or "",
            trigger_id=trigger_id or "",
            reason=reason,
            deliveries=deliveries,
        )
        return self._transport.call(
            self._stub.AbandonEvaluation, request, AbandonedEvaluation.from_proto
        )

    # -- extractions --

    def save_pending(
        self,
        trace_id: str,
        task: str,
        content: str,
        types: Sequence[str],
        *,
        sequence: int = 0,
        goal_id: str = "",
        branch_id: str = "",
        request_id: str | None = None,
        trace_owner: str | None = None,
        **save_arguments: Any,
    ) -> SavedExtraction:
        """Holds candidate knowledge for a person's review (knowledge_save_pending): it becomes
        knowledge when approved (or edited) and committed.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            task: As in `kh.knowledge.save`.
            content: As in `kh.knowledge.save`.
            types: As in `kh.knowledge.save`.
            sequence: The message sequence the extraction came from.
            goal_id: The goal it belongs to.
            branch_id: The side branch that extracted it.
            request_id: An idempotency key: a retry returns the extraction the first call saved.
            trace_owner: The trace's owner (`user:ID`), for admins and the evaluator and
                dreamer roles (`owner` is the knowledge's).
            **save_arguments: The other arguments of `kh.knowledge.save` (tags, scopes, owner,
                source_name, source_category, urls, agent_id, submitted_by, score, message_id,
                resource_ids).

        Returns:
            The extraction's id (`pending-...`) and, with auto_commit, how its commit went.

        Raises:
            InvalidArgument: The payload fails a save's checks; the message names the field.
            PermissionDenied: A scope or owner the caller may not write.
        """
        payload = payload_message(
            {"task": task, "content": content, "types": list(types), **save_arguments}
        )
        request = cognition_pb2.SavePendingExtractionRequest(
            trace_id=trace_id,
            sequence=sequence,
            goal_id=goal_id,
            branch_id=branch_id,
            payload=payload,
            request_id=request_id or "",
            owner=trace_owner or "",
        )
        return self._transport.call(
            self._stub.SavePendingExtraction, request, SavedExtraction.from_proto
        )

    def list_extractions(
        self,
        trace_id: str | None = None,
        states: Sequence[str] | None = None,
        limit: int = 20,
        page_token: str = "",
        owner: str | None = None,
    ) -> ExtractionPage:
        """Extractions, oldest first, in one trace or across every trace the caller can see.

        Args:
            trace_id: One trace; every visible trace when None.
            states: Only these states: pending, approved, edited, discarded, committed.
            limit: Extractions per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.
            owner: The owner of `trace_id` (`user:ID`), for admins and the evaluator and
                dreamer roles; the caller when None.

        Returns:
            One page of extractions and its `next_page_token`.

        Raises:
            InvalidArgument: An unknown state, a limit out of range or a stale page_token.
        """
        request = cognition_pb2.ListExtractionsRequest(
            trace_id=trace_id or "",
            states=list(states or []),
            page_size=limit,
            page_token=page_token,
            owner=owner or "",
        )
        return self._transport.call(self._stub.ListExtractions, request, ExtractionPage.from_proto)

    def review_extraction(
        self,
        trace_id: str,
        extraction_id: str,
        decision: str,
        edited_payload: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> Extraction:
        """A person's decision on an extraction; the latest decision wins.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            extraction_id: `pending-...` as `save_pending` returned it.
            decision: approve, edit or discard.
            edited_payload: With "edit": the whole edited payload (task, content, types, ...).
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            The extraction with its new state.

        Raises:
            InvalidArgument: An unknown decision, or "edit" without a valid payload.
            NotFound: No such extraction in the trace.
            FailedPrecondition: The extraction is already committed.
        """
        request = cognition_pb2.ReviewExtractionRequest(
            trace_id=trace_id,
            extraction_id=extraction_id,
            decision=decision,
            edited_payload=payload_message(edited_payload) if edited_payload else None,
            owner=owner or "",
        )
        return self._transport.call(
            self._stub.ReviewExtraction, request, lambda r: Extraction.from_proto(r.extraction)
        )

    def commit_extractions(
        self, trace_id: str, extraction_ids: Sequence[str] | None = None, owner: str | None = None
    ) -> CommitReport:
        """Saves the trace's approved and edited extractions as knowledge.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            extraction_ids: Only these; every approved or edited one when None.
            owner: The trace's owner (`user:ID`), for admins and the evaluator and dreamer
                roles; the caller when None.

        Returns:
            Each extraction's new (or linked, when it was already there) record, or its failure.

        Raises:
            NotFound: No such trace of the caller's (or of `owner`'s).
        """
        request = cognition_pb2.CommitExtractionsRequest(
            trace_id=trace_id, extraction_ids=list(extraction_ids or []), owner=owner or ""
        )
        return self._transport.call(self._stub.CommitExtractions, request, CommitReport.from_proto)

    # -- the agent's helper --

    def inject_knowledge_for_goal(
        self,
        trace_id: str,
        goal_id: str,
        goal: str,
        sequence: int,
        top_k: int = 3,
        min_score: int = 3,
        language: str | None = None,
    ) -> KnowledgeInjection:
        """Knowledge injection when the agent focuses on a goal: searches for the goal, logs the
        query (for evaluation later) and a memory_read in the trace, and returns the hits with
        the "📚 Relevant knowledge" text to show the model.

        Args:
            trace_id: The trace: 1-128 letters, digits and `. _ : @ + -`.
            goal_id: The goal's id.
            goal: The goal's text, the search query.
            sequence: The query event's sequence number in the trace.
            top_k: How many hits, 1 to 100.
            min_score: 1 to 5: records the author rated lower are left out.
            language: "zh" for the Chinese heading ("📚 相关知识"); KNOWHUB_LANGUAGE by default.

        Returns:
            The hits, the text to show and the ids of the logged events.

        Raises:
            InvalidArgument: An empty goal or a malformed trace id.
        """
        hits = self._knowledge.search(goal, top_k=top_k, min_score=min_score)
        text = knowledge_block(hits, language)
        events = injection_events(goal_id, goal, sequence, top_k, min_score, hits, text, language)
        appended = self.append_events(trace_id, events)
        return KnowledgeInjection(list(hits), text, appended.event_ids)
