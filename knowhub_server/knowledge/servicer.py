"""gRPC face of the knowledge service: protobuf messages in and out, nothing more."""

from __future__ import annotations

from knowhub.v1 import common_pb2, knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.auth import Authenticator, Principal
from knowhub_server.common.errors import InvalidArgument, ServiceError
from knowhub_server.common.rpc import unary
from knowhub_server.common.runtime import Runtime
from knowhub_server.common.server import ServiceHost
from knowhub_server.common.times import from_timestamp, timestamp_fields, to_timestamp
from knowhub_server.knowledge.cognition_client import CognitionClient
from knowhub_server.knowledge.config import KnowledgeSettings
from knowhub_server.knowledge.domain import (
    DEFAULT_MIN_SCORE,
    DEFAULT_PAGE_SIZE,
    DEFAULT_TOP_K,
    Case,
    ContentVersion,
    Draft,
    Feedback,
    Knowledge,
    Source,
)
from knowhub_server.knowledge.operations import (
    FeedbackItem,
    KnowledgeOperations,
    QueryLog,
    SearchResult,
)
from knowhub_server.knowledge.resource_client import DELETED, EXPIRED, MISSING, ResourceClient
from knowhub_server.knowledge.store import KnowledgeStore, KnowledgeVectors

SERVICE_NAME = knowledge_pb2.DESCRIPTOR.services_by_name["KnowledgeService"].full_name
_ORDERS = {
    knowledge_pb2.KNOWLEDGE_ORDER_UNSPECIFIED: "updated",
    knowledge_pb2.KNOWLEDGE_ORDER_CONFIDENCE: "confidence",
}
_REASONS = {MISSING: knowledge_pb2.UnavailableResource.REASON_MISSING,
            EXPIRED: knowledge_pb2.UnavailableResource.REASON_EXPIRED,
            DELETED: knowledge_pb2.UnavailableResource.REASON_DELETED}


class KnowledgeServicer(knowledge_pb2_grpc.KnowledgeServiceServicer):
    def __init__(self, authenticator: Authenticator, operations: KnowledgeOperations) -> None:
        self.authenticator = authenticator
        self._ops = operations

    @unary
    def SaveKnowledge(self, request: knowledge_pb2.SaveKnowledgeRequest,
                      principal: Principal) -> knowledge_pb2.SaveKnowledgeResponse:
        if request.validate_only and request.reuse_existing:
            raise InvalidArgument("reuse_existing", "cannot be combined with validate_only")
        record, existing = self._ops.save(principal, draft_from_proto(request, ""),
                                          validate_only=request.validate_only,
                                          reuse_existing=request.reuse_existing)
        return knowledge_pb2.SaveKnowledgeResponse(knowledge=knowledge_to_proto(record),
                                                   existing=existing)

    @unary
    def BatchSaveKnowledge(self, request: knowledge_pb2.BatchSaveKnowledgeRequest,
                           principal: Principal) -> knowledge_pb2.BatchSaveKnowledgeResponse:
        drafts = [draft_from_proto(r, f"requests[{i}].") for i, r in enumerate(request.requests)]
        for index, item in enumerate(request.requests):
            for option in ("validate_only", "reuse_existing"):
                if getattr(item, option):
                    raise InvalidArgument(f"requests[{index}].{option}", "is for "
                                          "SaveKnowledge; a batch always saves")
        records = self._ops.save_batch(principal, drafts)
        return knowledge_pb2.BatchSaveKnowledgeResponse(
            knowledge=[knowledge_fields(r) for r in records])

    @unary
    def GetKnowledge(self, request: knowledge_pb2.GetKnowledgeRequest,
                     principal: Principal) -> knowledge_pb2.GetKnowledgeResponse:
        record = self._ops.get(principal, request.id)
        return knowledge_pb2.GetKnowledgeResponse(knowledge=knowledge_to_proto(record))

    @unary
    def ListKnowledge(self, request: knowledge_pb2.ListKnowledgeRequest,
                      principal: Principal) -> knowledge_pb2.ListKnowledgeResponse:
        records, token = self._ops.list(
            principal, page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token, types=list(request.types),
            scopes=list(request.scopes), order=_order(request.order_by))
        return knowledge_pb2.ListKnowledgeResponse(
            knowledge=[knowledge_fields(r) for r in records], next_page_token=token)

    @unary
    def SearchKnowledge(self, request: knowledge_pb2.SearchKnowledgeRequest,
                        principal: Principal) -> knowledge_pb2.SearchKnowledgeResponse:
        result = self._ops.search(
            principal, request.query,
            top_k=request.top_k if request.HasField("top_k") else DEFAULT_TOP_K,
            min_score=request.min_score if request.HasField("min_score") else DEFAULT_MIN_SCORE,
            types=list(request.types))
        return knowledge_pb2.SearchKnowledgeResponse(hits=search_hits(result),
                                                     routed=result.routed)

    @unary
    def AskKnowledge(self, request: knowledge_pb2.AskKnowledgeRequest,
                     principal: Principal) -> knowledge_pb2.AskKnowledgeResponse:
        log = QueryLog(request.trace_id, request.sequence, request.goal_id) \
            if request.trace_id else None
        if log is None and (request.sequence or request.goal_id):
            raise InvalidArgument("trace_id", "is required with sequence or goal_id")
        answer = self._ops.ask(
            principal, request.query,
            top_k=request.top_k if request.HasField("top_k") else DEFAULT_TOP_K,
            min_score=request.min_score if request.HasField("min_score") else DEFAULT_MIN_SCORE,
            types=list(request.types), log=log)
        return knowledge_pb2.AskKnowledgeResponse(
            answer=answer.text, cited_ids=answer.cited_ids, routed=answer.search.routed,
            hits=search_hits(answer.search), event_id=answer.event_id)

    @unary
    def UpdateKnowledge(self, request: knowledge_pb2.UpdateKnowledgeRequest,
                        principal: Principal) -> knowledge_pb2.UpdateKnowledgeResponse:
        feedback = Feedback(
            helpful_case=case_from_proto(request.add_helpful_case, "add_helpful_case")
            if request.HasField("add_helpful_case") else None,
            harmful_case=case_from_proto(request.add_harmful_case, "add_harmful_case")
            if request.HasField("add_harmful_case") else None,
            score=request.update_score if request.HasField("update_score") else None,
            evolve_feedback=request.evolve_feedback, request_id=request.request_id)
        record = self._ops.update(principal, request.id, feedback)
        return knowledge_pb2.UpdateKnowledgeResponse(knowledge=knowledge_to_proto(record))

    @unary
    def BatchUpdateKnowledge(self, request: knowledge_pb2.BatchUpdateKnowledgeRequest,
                             principal: Principal
                             ) -> knowledge_pb2.BatchUpdateKnowledgeResponse:
        items: list[FeedbackItem | ServiceError] = []
        for index, item in enumerate(request.feedback_list):
            try:
                case = case_from_proto(item.case, f"feedback_list[{index}].case")
            except ServiceError as unreadable:
                items.append(unreadable)
                continue
            items.append(FeedbackItem(item.knowledge_id, item.is_helpful, case,
                                      item.request_id))
        outcomes = self._ops.batch_update(principal, items)
        results = []
        for item, outcome in zip(request.feedback_list, outcomes, strict=True):
            result = knowledge_pb2.KnowledgeFeedbackResult(knowledge_id=item.knowledge_id)
            if isinstance(outcome, ServiceError):
                result.error.CopyFrom(common_pb2.ItemError(code=outcome.code.name,
                                                           message=outcome.message))
            else:
                result.knowledge.CopyFrom(knowledge_to_proto(outcome))
            results.append(result)
        return knowledge_pb2.BatchUpdateKnowledgeResponse(results=results)

    @unary
    def DeleteKnowledge(self, request: knowledge_pb2.DeleteKnowledgeRequest,
                        principal: Principal) -> knowledge_pb2.DeleteKnowledgeResponse:
        self._ops.delete(principal, request.id)
        return knowledge_pb2.DeleteKnowledgeResponse()

    @unary
    def SlimKnowledge(self, request: knowledge_pb2.SlimKnowledgeRequest,
                      principal: Principal) -> knowledge_pb2.SlimKnowledgeResponse:
        report = self._ops.slim(principal, model=request.model, dry_run=request.dry_run)
        return knowledge_pb2.SlimKnowledgeResponse(
            groups=[knowledge_pb2.SlimGroup(kept_id=g.kept_id, removed_ids=g.removed_ids,
                                            merged_by_llm=g.merged_by_llm, note=g.note)
                    for g in report.groups],
            examined=report.examined, dry_run=report.dry_run)

    @unary
    def ListKnowledgeVersions(self, request: knowledge_pb2.ListKnowledgeVersionsRequest,
                              principal: Principal
                              ) -> knowledge_pb2.ListKnowledgeVersionsResponse:
        versions = self._ops.versions(principal, request.id)
        return knowledge_pb2.ListKnowledgeVersionsResponse(
            versions=[version_to_proto(v) for v in versions])


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the knowledge service to `server`; returns its full service name."""
    settings = KnowledgeSettings()
    store = KnowledgeStore(runtime.vectors, KnowledgeVectors(runtime.embedder), settings)
    links = ResourceClient(runtime.peers, settings.resource_check_timeout_seconds)
    operations = KnowledgeOperations(store, settings, runtime.llm, links,
                                     CognitionClient(runtime.peers), runtime.settings.language)
    knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(
        KnowledgeServicer(runtime.authenticator, operations), server)
    return SERVICE_NAME


def search_hits(result: SearchResult) -> list[dict[str, object]]:
    """SearchHit messages' fields (see knowledge_fields)."""
    return [{"knowledge": knowledge_fields(h.knowledge), "quality_score": h.quality_score,
             "relevance": h.relevance, "resources_unverified": h.resources_unverified,
             "unavailable_resources": [{"resource_id": i, "reason": _REASONS[state]}
                                       for i, state in h.unavailable_resources]}
            for h in result.hits]


def _order(value: int) -> str:
    if value not in _ORDERS:
        raise InvalidArgument("order_by", f"{value} is not a KnowledgeOrder")
    return _ORDERS[value]


# ---- Conversions ----------------------------------------------------------------------

def draft_from_proto(request: knowledge_pb2.SaveKnowledgeRequest, prefix: str) -> Draft:
    return Draft(
        task=request.task, content=request.content, types=list(request.types),
        tags=dict(request.tags), scopes=list(request.scopes), owner=request.owner,
        source=source_from_proto(request.source, f"{prefix}source"),
        score=request.score if request.HasField("score") else None,
        message_id=request.message_id, resource_ids=list(request.resource_ids),
        request_id=request.request_id,
    )


def source_from_proto(source: knowledge_pb2.Source, prefix: str) -> Source:
    return Source(
        name=source.name, category=source.category, urls=list(source.urls),
        agent_id=source.agent_id, submitted_by=source.submitted_by,
        timestamp=from_timestamp(source.timestamp, f"{prefix}.timestamp") or 0.0,
        message_id=source.message_id,
    )


def case_from_proto(case: knowledge_pb2.Case, prefix: str) -> Case:
    return Case(task=case.task, outcome=case.outcome, reason=case.reason,
                trace_id=case.trace_id,
                timestamp=from_timestamp(case.timestamp, f"{prefix}.timestamp") or 0.0,
                query_sequence=case.query_sequence)


def case_fields(case: Case) -> dict[str, object]:
    """A Case message's fields (see knowledge_to_proto)."""
    return {"task": case.task, "outcome": case.outcome, "reason": case.reason,
            "trace_id": case.trace_id, "timestamp": timestamp_fields(case.timestamp),
            "query_sequence": case.query_sequence}


def version_to_proto(version: ContentVersion) -> knowledge_pb2.KnowledgeVersion:
    return knowledge_pb2.KnowledgeVersion(
        content=version.content, replaced_at=to_timestamp(version.replaced_at),
        reason=version.reason, feedback=version.feedback)


def knowledge_to_proto(record: Knowledge) -> knowledge_pb2.Knowledge:
    return knowledge_pb2.Knowledge(**knowledge_fields(record))


def knowledge_fields(record: Knowledge) -> dict[str, object]:
    """A Knowledge message's fields, nested messages as dicts: protobuf builds those in
    place, where a message passed in is copied (searches and batch saves convert many)."""
    given, counters = record.source, record.eval
    return {
        "id": record.id, "message_id": record.message_id, "types": record.types,
        "task": record.task, "tags": record.tags, "scopes": record.scopes,
        "owner": record.owner, "content": record.content,
        "resource_ids": record.resource_ids,
        "created_at": timestamp_fields(record.created_at),
        "updated_at": timestamp_fields(record.updated_at),
        "source": {"name": given.name, "category": given.category, "urls": given.urls,
                   "agent_id": given.agent_id, "submitted_by": given.submitted_by,
                   "message_id": given.message_id,
                   "timestamp": timestamp_fields(given.timestamp)},
        "eval": {"score": counters.score, "helpful": counters.helpful,
                 "harmful": counters.harmful, "confidence": counters.confidence,
                 "helpful_history": [case_fields(c) for c in counters.helpful_history],
                 "harmful_history": [case_fields(c) for c in counters.harmful_history]},
    }
