"""gRPC face of the cognition service: protobuf messages in and out, nothing more."""

from __future__ import annotations

from collections.abc import Iterator

from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.cognition.convert import (
    assessments_from_proto,
    body_from_proto,
    committed_to_proto,
    event_from_log,
    event_to_proto,
    extraction_to_proto,
    failure_to_proto,
    outcome_to_proto,
    payload_from_proto,
    trace_to_proto,
    trigger_to_proto,
    view_to_proto,
)
from knowhub_server.cognition.domain import (
    DEFAULT_EXPORT_PAGE,
    DEFAULT_LIST_PAGE,
    DEFAULT_LOG_PAGE,
    DEFAULT_VIEW_WINDOW,
)
from knowhub_server.cognition.evaluations import EvaluationOperations
from knowhub_server.cognition.extractions import ExtractionOperations
from knowhub_server.cognition.logfile import read_document
from knowhub_server.cognition.operations import LogOperations, TriggerOperations
from knowhub_server.common.base.times import from_timestamp
from knowhub_server.common.runtime.rpc import Live, server_streaming, unary
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.security.auth import Authenticator, Principal


class CognitionServicer(cognition_pb2_grpc.CognitionServiceServicer):
    def __init__(
        self,
        runtime: Runtime,
        log: LogOperations,
        triggers: TriggerOperations,
        evaluations: EvaluationOperations,
        extractions: ExtractionOperations,
    ) -> None:
        self.authenticator: Authenticator = runtime.authenticator
        self.stopping = runtime.stopping
        self._log = log
        self._triggers = triggers
        self._evaluations = evaluations
        self._extractions = extractions

    @unary
    def AppendEvents(
        self, request: cognition_pb2.AppendEventsRequest, principal: Principal
    ) -> cognition_pb2.AppendEventsResponse:
        events = [body_from_proto(e, f"events[{i}]") for i, e in enumerate(request.events)]
        event_ids, trace = self._log.append(
            principal,
            request.trace_id,
            events,
            owner=request.owner,
            request_id=request.request_id,
            task=request.task,
            agent_id=request.agent_id,
            auto_commit=request.auto_commit if request.HasField("auto_commit") else None,
        )
        return cognition_pb2.AppendEventsResponse(
            event_ids=event_ids, trace=trace_to_proto(trace, principal)
        )

    @unary
    def GetLog(
        self, request: cognition_pb2.GetLogRequest, principal: Principal
    ) -> cognition_pb2.GetLogResponse:
        page = self._log.get_log(
            principal,
            request.trace_id,
            owner=request.owner,
            types=list(request.types),
            since=from_timestamp(request.since, "since"),
            page_size=request.page_size or DEFAULT_LOG_PAGE,
            page_token=request.page_token,
        )
        return cognition_pb2.GetLogResponse(
            events=[event_to_proto(e, principal) for e in page.events],
            next_page_token=page.next_page_token,
            trace=trace_to_proto(page.trace, principal),
        )

    @unary
    def ListTraces(
        self, request: cognition_pb2.ListTracesRequest, principal: Principal
    ) -> cognition_pb2.ListTracesResponse:
        traces, token = self._log.list_traces(
            principal,
            agent_id=request.agent_id,
            owner=request.owner,
            updated_since=from_timestamp(request.updated_since, "updated_since"),
            page_size=request.page_size or DEFAULT_LIST_PAGE,
            page_token=request.page_token,
        )
        return cognition_pb2.ListTracesResponse(
            traces=[trace_to_proto(t, principal) for t in traces], next_page_token=token
        )

    @unary
    def PendingEvaluations(
        self, request: cognition_pb2.PendingEvaluationsRequest, principal: Principal
    ) -> cognition_pb2.PendingEvaluationsResponse:
        queries, last_trigger = self._triggers.pending(principal, request.trace_id, request.owner)
        return cognition_pb2.PendingEvaluationsResponse(
            queries=[event_to_proto(q) for q in queries], last_trigger=last_trigger
        )

    @unary
    def SignalTrigger(
        self, request: cognition_pb2.SignalTriggerRequest, principal: Principal
    ) -> cognition_pb2.SignalTriggerResponse:
        sequences, published, trigger_id = self._triggers.signal(
            principal, request.trace_id, request.owner, request.trigger
        )
        return cognition_pb2.SignalTriggerResponse(
            query_sequences=sequences, published=published, trigger_id=trigger_id
        )

    @server_streaming
    def WatchTriggers(
        self, request: cognition_pb2.WatchTriggersRequest, principal: Principal, live: Live
    ) -> Iterator[cognition_pb2.WatchTriggersResponse]:
        for delivered in self._triggers.watch(principal, request.group, request.consumer, live):
            yield cognition_pb2.WatchTriggersResponse(
                trigger=trigger_to_proto(delivered, principal)
            )

    @unary
    def AckTriggers(
        self, request: cognition_pb2.AckTriggersRequest, principal: Principal
    ) -> cognition_pb2.AckTriggersResponse:
        count = self._triggers.ack(principal, request.group, list(request.trigger_ids))
        return cognition_pb2.AckTriggersResponse(acknowledged=count)

    @unary
    def GetEvaluationPrompt(
        self, request: cognition_pb2.GetEvaluationPromptRequest, principal: Principal
    ) -> cognition_pb2.GetEvaluationPromptResponse:
        prompt, sequences = self._evaluations.prompt(
            principal, request.trace_id, request.owner, request.mission, request.goal
        )
        return cognition_pb2.GetEvaluationPromptResponse(prompt=prompt, query_sequences=sequences)

    @unary
    def SubmitEvaluation(
        self, request: cognition_pb2.SubmitEvaluationRequest, principal: Principal
    ) -> cognition_pb2.SubmitEvaluationResponse:
        submitted = self._evaluations.submit(
            principal,
            request.trace_id,
            request.owner,
            raw_text=request.raw_text,
            structured=assessments_from_proto(request.evaluations) if request.evaluations else None,
            trigger=request.trigger,
        )
        return cognition_pb2.SubmitEvaluationResponse(
            outcomes=[outcome_to_proto(o) for o in submitted.outcomes],
            pending_query_sequences=submitted.pending,
            parse_failed=bool(submitted.parse_error),
            parse_error=submitted.parse_error,
        )

    @unary
    def AbandonEvaluation(
        self, request: cognition_pb2.AbandonEvaluationRequest, principal: Principal
    ) -> cognition_pb2.AbandonEvaluationResponse:
        abandoned = self._evaluations.abandon(
            principal,
            request.trace_id,
            request.owner,
            trigger_id=request.trigger_id,
            reason=request.reason,
            deliveries=request.deliveries,
        )
        return cognition_pb2.AbandonEvaluationResponse(
            event_id=abandoned.event_id, query_sequences=abandoned.query_sequences
        )

    @unary
    def SavePendingExtraction(
        self, request: cognition_pb2.SavePendingExtractionRequest, principal: Principal
    ) -> cognition_pb2.SavePendingExtractionResponse:
        extraction, failure = self._extractions.save_pending(
            principal,
            request.trace_id,
            owner=request.owner,
            sequence=request.sequence,
            goal_id=request.goal_id,
            branch_id=request.branch_id,
            payload=payload_from_proto(request.payload) if request.HasField("payload") else None,
            request_id=request.request_id,
        )
        response = cognition_pb2.SavePendingExtractionResponse(
            extraction=extraction_to_proto(extraction, principal)
        )
        if failure is not None:
            response.commit_failure.CopyFrom(failure_to_proto(failure))
        return response

    @unary
    def ListExtractions(
        self, request: cognition_pb2.ListExtractionsRequest, principal: Principal
    ) -> cognition_pb2.ListExtractionsResponse:
        found, token = self._extractions.list_page(
            principal,
            trace_id=request.trace_id,
            owner=request.owner,
            states=list(request.states),
            page_size=request.page_size or DEFAULT_LIST_PAGE,
            page_token=request.page_token,
        )
        return cognition_pb2.ListExtractionsResponse(
            extractions=[extraction_to_proto(x, principal) for x in found], next_page_token=token
        )

    @unary
    def ReviewExtraction(
        self, request: cognition_pb2.ReviewExtractionRequest, principal: Principal
    ) -> cognition_pb2.ReviewExtractionResponse:
        edited = (
            payload_from_proto(request.edited_payload)
            if request.HasField("edited_payload")
            else None
        )
        extraction = self._extractions.review(
            principal,
            request.trace_id,
            request.owner,
            request.extraction_id,
            request.decision,
            edited,
        )
        return cognition_pb2.ReviewExtractionResponse(
            extraction=extraction_to_proto(extraction, principal)
        )

    @unary
    def CommitExtractions(
        self, request: cognition_pb2.CommitExtractionsRequest, principal: Principal
    ) -> cognition_pb2.CommitExtractionsResponse:
        committed, failed = self._extractions.commit(
            principal, request.trace_id, request.owner, list(request.extraction_ids)
        )
        return cognition_pb2.CommitExtractionsResponse(
            committed=[committed_to_proto(c) for c in committed],
            failed=[failure_to_proto(f) for f in failed],
        )

    @unary
    def GetTraceView(
        self, request: cognition_pb2.GetTraceViewRequest, principal: Principal
    ) -> cognition_pb2.GetTraceViewResponse:
        versions = tuple(
            getattr(request, name) if request.HasField(name) else None
            for name in ("plan_diff_from", "plan_diff_to")
        )
        view = self._log.view(
            principal,
            request.trace_id,
            owner=request.owner,
            job_id=request.job_id,
            diff_versions=(versions[0], versions[1]),
            page_size=request.page_size or DEFAULT_VIEW_WINDOW,
            page_token=request.page_token,
        )
        return view_to_proto(view, principal)

    @unary
    def ExportLog(
        self, request: cognition_pb2.ExportLogRequest, principal: Principal
    ) -> cognition_pb2.ExportLogResponse:
        page = self._log.export(
            principal,
            request.trace_id,
            owner=request.owner,
            page_size=request.page_size or DEFAULT_EXPORT_PAGE,
            page_token=request.page_token,
        )
        return cognition_pb2.ExportLogResponse(
            document=page.document, next_page_token=page.next_page_token
        )

    @unary
    def ImportLog(
        self, request: cognition_pb2.ImportLogRequest, principal: Principal
    ) -> cognition_pb2.ImportLogResponse:
        document = read_document(request.document)
        events = [event_from_log(raw, where) for where, raw in document.events]
        trace, count = self._log.import_log(principal, request.trace_id, document, events)
        return cognition_pb2.ImportLogResponse(
            trace=trace_to_proto(trace, principal), imported=count
        )

    @unary
    def ConsumeReflections(
        self, request: cognition_pb2.ConsumeReflectionsRequest, principal: Principal
    ) -> cognition_pb2.ConsumeReflectionsResponse:
        count = self._log.consume_reflections(
            principal, request.trace_id, request.owner, list(request.event_ids)
        )
        return cognition_pb2.ConsumeReflectionsResponse(consumed=count)

    @unary
    def DeleteTrace(
        self, request: cognition_pb2.DeleteTraceRequest, principal: Principal
    ) -> cognition_pb2.DeleteTraceResponse:
        deleted = self._log.delete(principal, request.trace_id, request.owner)
        return cognition_pb2.DeleteTraceResponse(
            deleted_events=deleted.events, deleted_extractions=deleted.extractions
        )

    @unary
    def ForgetCognitionSubject(
        self, request: cognition_pb2.ForgetCognitionSubjectRequest, principal: Principal
    ) -> cognition_pb2.ForgetCognitionSubjectResponse:
        return cognition_pb2.ForgetCognitionSubjectResponse(
            erased=self._log.forget(principal, request.subject)
        )
