"""The knowledge service's protobuf messages to and from its domain (knowledge.proto).

Every conversion goes field by field name. A record's messages are built from their
fields (`*_fields`, nested messages as dicts): protobuf builds a nested message from a
dict in place but copies a message passed in, and searches and batches convert many.
Agent and resource names leave as the `viewer` reads them (bare when of its own org),
and a record's helpful and harmful counts as they rank it for the viewer's organisation.
"""

from __future__ import annotations

from typing import Any

from knowhub_contracts.v1 import knowledge_pb2

from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.times import from_timestamp, timestamp_fields, to_timestamp
from knowhub_server.common.security.auth import Principal
from knowhub_server.knowledge.domain import (
    EDITABLE_FIELDS,
    Case,
    Draft,
    Edit,
    Eval,
    Feedback,
    Knowledge,
    KnowledgeVersion,
    Source,
)
from knowhub_server.knowledge.operations import (
    FeedbackItem,
    QueryLog,
    SearchHit,
    SearchResult,
    SlimReport,
)

# The list's orders by their domain names: "updated" (the default) and "confidence".
ORDERS = ProtoEnum(knowledge_pb2.KnowledgeOrder, unspecified="updated")
# How a search chose its candidates, by the ranking's names (routed, recall, degraded).
SELECTIONS = ProtoEnum(knowledge_pb2.Selection)
# How much of each record a batch save returns: "full" (the default) or "basic" (the id).
VIEWS = ProtoEnum(knowledge_pb2.KnowledgeView, unspecified="full")
# Why a search hit's resource is unavailable, by the resource client's names of its states.
UNAVAILABLE_REASONS = ProtoEnum(knowledge_pb2.UnavailableResource.Reason)


# ---- Requests -----------------------------------------------------------------------------


def draft_from_proto(request: knowledge_pb2.SaveKnowledgeRequest, prefix: str) -> Draft:
    return Draft(
        task=request.task,
        content=request.content,
        types=list(request.types),
        tags=dict(request.tags),
        scopes=list(request.scopes),
        owner=request.owner,
        source=source_from_proto(request.source, f"{prefix}source"),
        score=request.score if request.HasField("score") else None,
        message_id=request.message_id,
        resource_ids=list(request.resource_ids),
        request_id=request.request_id,
        allow_duplicate=request.allow_duplicate,
    )


def source_from_proto(source: knowledge_pb2.Source, prefix: str) -> Source:
    return Source(
        name=source.name,
        category=source.category,
        urls=list(source.urls),
        agent_id=source.agent_id,
        submitted_by=source.submitted_by,
        timestamp=from_timestamp(source.timestamp, f"{prefix}.timestamp") or 0.0,
        message_id=source.message_id,
        trace_id=source.trace_id,
    )


def case_from_proto(case: knowledge_pb2.Case, prefix: str) -> Case:
    return Case(
        task=case.task,
        outcome=case.outcome,
        reason=case.reason,
        trace_id=case.trace_id,
        timestamp=from_timestamp(case.timestamp, f"{prefix}.timestamp") or 0.0,
        query_sequence=case.query_sequence,
    )


def feedback_from_proto(request: knowledge_pb2.UpdateKnowledgeRequest) -> Feedback:
    return Feedback(
        helpful_case=case_from_proto(request.add_helpful_case, "add_helpful_case")
        if request.HasField("add_helpful_case")
        else None,
        harmful_case=case_from_proto(request.add_harmful_case, "add_harmful_case")
        if request.HasField("add_harmful_case")
        else None,
        score=request.update_score if request.HasField("update_score") else None,
        evolve_feedback=request.evolve_feedback,
        request_id=request.request_id,
        edit=edit_from_proto(request),
    )


def edit_from_proto(request: knowledge_pb2.UpdateKnowledgeRequest) -> Edit | None:
    """The edit of the fields update_mask names (AIP-134), or, without a mask, of those
    `knowledge` sets; None when the request edits nothing."""
    if not request.HasField("update_mask") and not request.HasField("knowledge"):
        if request.change_note:
            raise InvalidArgument("change_note", "is for edits: give knowledge and update_mask")
        return None
    given = request.knowledge
    paths = (
        list(request.update_mask.paths)
        if request.HasField("update_mask")
        else [name for name in EDITABLE_FIELDS if getattr(given, name)]
    )
    return Edit(
        paths=paths,
        task=given.task,
        content=given.content,
        tags=dict(given.tags),
        types=list(given.types),
        scopes=list(given.scopes),
        resource_ids=list(given.resource_ids),
        record_id=given.id,
        note=request.change_note,
    )


def feedback_item_from_proto(item: knowledge_pb2.KnowledgeFeedback, prefix: str) -> FeedbackItem:
    return FeedbackItem(
        knowledge_id=item.knowledge_id,
        is_helpful=item.is_helpful,
        case=case_from_proto(item.case, f"{prefix}.case"),
        request_id=item.request_id,
    )


def query_log_from_proto(request: knowledge_pb2.AskKnowledgeRequest) -> QueryLog | None:
    """Where AskKnowledge logs its question; None when it names no trace."""
    if not request.trace_id:
        return None
    return QueryLog(trace_id=request.trace_id, sequence=request.sequence, goal_id=request.goal_id)


# ---- Records ------------------------------------------------------------------------------


def knowledge_to_proto(record: Knowledge, viewer: Principal) -> knowledge_pb2.Knowledge:
    return knowledge_pb2.Knowledge(**knowledge_fields(record, viewer))


def knowledge_fields(record: Knowledge, viewer: Principal) -> dict[str, Any]:
    return {
        "id": record.id,
        "message_id": record.message_id,
        "types": record.types,
        "task": record.task,
        "tags": record.tags,
        "scopes": [viewer.show_scope(s) for s in record.scopes],
        "owner": viewer.show_scope(record.owner),
        "content": record.content,
        "resource_ids": [viewer.show(r) for r in record.resource_ids],
        "source": source_fields(record.source, viewer),
        "eval": eval_fields(record.eval.seen_by(viewer.voters)),
        "created_at": timestamp_fields(record.created_at),
        "updated_at": timestamp_fields(record.updated_at),
    }


def saved_fields(records: list[Knowledge], viewer: Principal, view: str) -> list[dict[str, Any]]:
    """The records a batch save answers with, as much of each as `view` (VIEWS) asks."""
    if view == "basic":
        return [{"id": r.id} for r in records]
    return [knowledge_fields(r, viewer) for r in records]


def source_fields(source: Source, viewer: Principal) -> dict[str, object]:
    return {
        "name": source.name,
        "category": source.category,
        "urls": source.urls,
        "agent_id": viewer.show(source.agent_id),
        "submitted_by": source.submitted_by,
        "timestamp": timestamp_fields(source.timestamp),
        "message_id": source.message_id,
        "trace_id": source.trace_id,
    }


def eval_fields(counters: Eval) -> dict[str, object]:
    return {
        "score": counters.score,
        "helpful": counters.helpful,
        "harmful": counters.harmful,
        "confidence": counters.confidence,
        "helpful_history": [case_fields(c) for c in counters.helpful_history],
        "harmful_history": [case_fields(c) for c in counters.harmful_history],
    }


def case_fields(case: Case) -> dict[str, object]:
    return {
        "task": case.task,
        "outcome": case.outcome,
        "reason": case.reason,
        "trace_id": case.trace_id,
        "timestamp": timestamp_fields(case.timestamp),
        "query_sequence": case.query_sequence,
    }


def version_to_proto(
    version: KnowledgeVersion, viewer: Principal
) -> knowledge_pb2.KnowledgeVersion:
    return knowledge_pb2.KnowledgeVersion(
        content=version.content,
        replaced_at=to_timestamp(version.replaced_at),
        reason=version.reason,
        feedback=version.feedback,
        task=version.task,
        types=version.types,
        tags=version.tags,
        scopes=[viewer.show_scope(s) for s in version.scopes],
        resource_ids=[viewer.show(r) for r in version.resource_ids],
        changed_by=viewer.show_scope(version.changed_by) if version.changed_by else "",
        changed_fields=version.changed_fields,
    )


# ---- Results ------------------------------------------------------------------------------


def search_hits(result: SearchResult, viewer: Principal) -> list[dict[str, object]]:
    """The SearchHit messages' fields."""
    return [hit_fields(hit, viewer) for hit in result.hits]


def hit_fields(hit: SearchHit, viewer: Principal) -> dict[str, object]:
    return {
        "knowledge": knowledge_fields(hit.knowledge, viewer),
        "quality_score": hit.quality_score,
        "relevance": hit.relevance,
        "unavailable_resources": [
            {"resource_id": viewer.show(resource_id), "reason": UNAVAILABLE_REASONS.value(state)}
            for resource_id, state in hit.unavailable_resources
        ],
        "resources_unverified": hit.resources_unverified,
    }


def slim_to_proto(report: SlimReport) -> knowledge_pb2.SlimKnowledgeResponse:
    return knowledge_pb2.SlimKnowledgeResponse(
        groups=[
            knowledge_pb2.SlimGroup(
                kept_id=g.kept_id,
                removed_ids=g.removed_ids,
                merged_by_llm=g.merged_by_llm,
                note=g.note,
            )
            for g in report.groups
        ],
        examined=report.examined,
        dry_run=report.dry_run,
    )
