"""gRPC face of the knowledge service: protobuf messages in and out, nothing more."""

from __future__ import annotations

from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.base.convert import item_error
from knowhub_server.common.base.errors import InvalidArgument, ServiceError
from knowhub_server.common.base.times import to_timestamp
from knowhub_server.common.runtime.rpc import unary
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.knowledge.convert import (
    ORDERS,
    SELECTIONS,
    VIEWS,
    draft_from_proto,
    feedback_from_proto,
    feedback_item_from_proto,
    knowledge_fields,
    knowledge_to_proto,
    query_log_from_proto,
    saved_fields,
    search_hits,
    slim_to_proto,
    version_to_proto,
)
from knowhub_server.knowledge.domain import DEFAULT_MIN_SCORE, DEFAULT_PAGE_SIZE, DEFAULT_TOP_K
from knowhub_server.knowledge.operations import FeedbackItem, KnowledgeOperations


class KnowledgeServicer(knowledge_pb2_grpc.KnowledgeServiceServicer):
    def __init__(self, authenticator: Authenticator, operations: KnowledgeOperations) -> None:
        self.authenticator = authenticator
        self._ops = operations

    @unary
    def SaveKnowledge(
        self, request: knowledge_pb2.SaveKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.SaveKnowledgeResponse:
        record, existing = self._ops.save(
            principal, draft_from_proto(request, ""), validate_only=request.validate_only
        )
        return knowledge_pb2.SaveKnowledgeResponse(
            knowledge=knowledge_to_proto(record, principal), existing=existing
        )

    @unary
    def BatchSaveKnowledge(
        self, request: knowledge_pb2.BatchSaveKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.BatchSaveKnowledgeResponse:
        drafts = [draft_from_proto(r, f"requests[{i}].") for i, r in enumerate(request.requests)]
        for index, item in enumerate(request.requests):
            if item.validate_only:
                raise InvalidArgument(
                    f"requests[{index}].validate_only", "is for SaveKnowledge; a batch always saves"
                )
        view = VIEWS.name(request.view, "view")
        records, existing = self._ops.save_batch(principal, drafts)
        return knowledge_pb2.BatchSaveKnowledgeResponse(
            knowledge=saved_fields(records, principal, view), existing=existing
        )

    @unary
    def GetKnowledge(
        self, request: knowledge_pb2.GetKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.GetKnowledgeResponse:
        record = self._ops.get(principal, request.id)
        return knowledge_pb2.GetKnowledgeResponse(knowledge=knowledge_to_proto(record, principal))

    @unary
    def ListKnowledge(
        self, request: knowledge_pb2.ListKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.ListKnowledgeResponse:
        records, token = self._ops.list_page(
            principal,
            page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token,
            types=list(request.types),
            scopes=list(request.scopes),
            order=ORDERS.name(request.order_by, "order_by"),
        )
        return knowledge_pb2.ListKnowledgeResponse(
            knowledge=[knowledge_fields(r, principal) for r in records], next_page_token=token
        )

    @unary
    def SearchKnowledge(
        self, request: knowledge_pb2.SearchKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.SearchKnowledgeResponse:
        result = self._ops.search(
            principal,
            request.query,
            top_k=request.top_k if request.HasField("top_k") else DEFAULT_TOP_K,
            min_score=request.min_score if request.HasField("min_score") else DEFAULT_MIN_SCORE,
            types=list(request.types),
            min_relevance=request.min_relevance if request.HasField("min_relevance") else None,
        )
        return knowledge_pb2.SearchKnowledgeResponse(
            hits=search_hits(result, principal),
            routed=result.routed,
            selection=SELECTIONS.value(result.selection.value),
        )

    @unary
    def AskKnowledge(
        self, request: knowledge_pb2.AskKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.AskKnowledgeResponse:
        log = query_log_from_proto(request)
        if log is None and (request.sequence or request.goal_id):
            raise InvalidArgument("trace_id", "is required with sequence or goal_id")
        answer = self._ops.ask(
            principal,
            request.query,
            top_k=request.top_k if request.HasField("top_k") else DEFAULT_TOP_K,
            min_score=request.min_score if request.HasField("min_score") else DEFAULT_MIN_SCORE,
            types=list(request.types),
            log=log,
            min_relevance=request.min_relevance if request.HasField("min_relevance") else None,
        )
        return knowledge_pb2.AskKnowledgeResponse(
            answer=answer.text,
            cited_ids=answer.cited_ids,
            routed=answer.search.routed,
            hits=search_hits(answer.search, principal),
            event_id=answer.event_id,
            selection=SELECTIONS.value(answer.search.selection.value),
        )

    @unary
    def UpdateKnowledge(
        self, request: knowledge_pb2.UpdateKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.UpdateKnowledgeResponse:
        record = self._ops.update(principal, request.id, feedback_from_proto(request))
        return knowledge_pb2.UpdateKnowledgeResponse(
            knowledge=knowledge_to_proto(record, principal)
        )

    @unary
    def BatchUpdateKnowledge(
        self, request: knowledge_pb2.BatchUpdateKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.BatchUpdateKnowledgeResponse:
        items: list[FeedbackItem | ServiceError] = []
        for index, item in enumerate(request.feedback_list):
            try:
                items.append(feedback_item_from_proto(item, f"feedback_list[{index}]"))
            except ServiceError as unreadable:
                items.append(unreadable)
        outcomes = self._ops.batch_update(principal, items)
        results = []
        for item, outcome in zip(request.feedback_list, outcomes, strict=True):
            result = knowledge_pb2.KnowledgeFeedbackResult(knowledge_id=item.knowledge_id)
            if isinstance(outcome, ServiceError):
                result.error.CopyFrom(item_error(outcome))
            else:
                result.knowledge.CopyFrom(knowledge_to_proto(outcome, principal))
            results.append(result)
        return knowledge_pb2.BatchUpdateKnowledgeResponse(results=results)

    @unary
    def DeleteKnowledge(
        self, request: knowledge_pb2.DeleteKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.DeleteKnowledgeResponse:
        purge_at = self._ops.delete(principal, request.id)
        return knowledge_pb2.DeleteKnowledgeResponse(purge_time=to_timestamp(purge_at))

    @unary
    def UndeleteKnowledge(
        self, request: knowledge_pb2.UndeleteKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.UndeleteKnowledgeResponse:
        record = self._ops.undelete(principal, request.id)
        return knowledge_pb2.UndeleteKnowledgeResponse(
            knowledge=knowledge_to_proto(record, principal)
        )

    @unary
    def ForgetKnowledgeSubject(
        self, request: knowledge_pb2.ForgetKnowledgeSubjectRequest, principal: Principal
    ) -> knowledge_pb2.ForgetKnowledgeSubjectResponse:
        return knowledge_pb2.ForgetKnowledgeSubjectResponse(
            erased=self._ops.forget(principal, request.subject)
        )

    @unary
    def SlimKnowledge(
        self, request: knowledge_pb2.SlimKnowledgeRequest, principal: Principal
    ) -> knowledge_pb2.SlimKnowledgeResponse:
        report = self._ops.slim(principal, model=request.model, dry_run=request.dry_run)
        return slim_to_proto(report)

    @unary
    def ListKnowledgeVersions(
        self, request: knowledge_pb2.ListKnowledgeVersionsRequest, principal: Principal
    ) -> knowledge_pb2.ListKnowledgeVersionsResponse:
        versions = self._ops.versions(principal, request.id)
        return knowledge_pb2.ListKnowledgeVersionsResponse(
            versions=[version_to_proto(v, principal) for v in versions]
        )
