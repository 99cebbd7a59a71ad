"""Knowledge requests from the knowledge tools' arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import knowledge_pb2

from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.knowledge import Case

SLIM_TIMEOUT = 600.0
"""How long `slim` waits, in seconds: it merges every group of near-duplicates."""
ORDERS = EnumNames(knowledge_pb2.KnowledgeOrder.DESCRIPTOR, unspecified="updated")
"""The orders of `list`: "updated" (newest first, the default) or "confidence"."""
VIEWS = EnumNames(knowledge_pb2.KnowledgeView.DESCRIPTOR, unspecified="full")
"""How much of each record `save_many` returns: "full" (the default) or "basic" (the id)."""


def save_request(
    task: str,
    content: str,
    types: Sequence[str],
    *,
    tags: Mapping[str, str] | None = None,
    scopes: Sequence[str] | None = None,
    owner: str | None = None,
    source_name: str = "",
    source_category: str = "exp",
    urls: Sequence[str] | None = None,
    agent_id: str = "",
    submitted_by: str = "",
    score: int = 3,
    message_id: str = "",
    resource_ids: Sequence[str] | None = None,
    source_timestamp: TimeLike = None,
    request_id: str | None = None,
    trace_id: str = "",
    allow_duplicate: bool = False,
) -> knowledge_pb2.SaveKnowledgeRequest:
    """The SaveKnowledgeRequest for knowledge_save's arguments."""
    return knowledge_pb2.SaveKnowledgeRequest(
        task=task,
        content=content,
        types=list(types),
        tags=dict(tags or {}),
        scopes=list(scopes or []),
        owner=owner or "",
        source=knowledge_pb2.Source(
            name=source_name,
            category=source_category,
            urls=list(urls or []),
            agent_id=agent_id or "",
            submitted_by=submitted_by,
            message_id=message_id,
            timestamp=to_timestamp(source_timestamp),
            trace_id=trace_id or "",
        ),
        score=score,
        message_id=message_id,
        resource_ids=list(resource_ids or []),
        request_id=request_id or "",
        allow_duplicate=allow_duplicate,
    )


def edit_request(
    knowledge_id: str,
    *,
    task: str | None = None,
    content: str | None = None,
    tags: Mapping[str, str] | None = None,
    types: Sequence[str] | None = None,
    scopes: Sequence[str] | None = None,
    resource_ids: Sequence[str] | None = None,
    note: str = "",
) -> knowledge_pb2.UpdateKnowledgeRequest:
    """An UpdateKnowledgeRequest that writes the fields given (not None), by field mask:
    an empty tags or resource_ids clears them."""
    given = {
        "task": task,
        "content": content,
        "tags": tags,
        "types": types,
        "scopes": scopes,
        "resource_ids": resource_ids,
    }
    paths = [name for name, value in given.items() if value is not None]
    if not paths:
        raise ValueError("nothing to edit: give task, content, tags, types, scopes or resource_ids")
    record = knowledge_pb2.Knowledge(
        task=task or "",
        content=content or "",
        tags=dict(tags or {}),
        types=list(types or []),
        scopes=list(scopes or []),
        resource_ids=list(resource_ids or []),
    )
    request = knowledge_pb2.UpdateKnowledgeRequest(
        id=knowledge_id, knowledge=record, change_note=note
    )
    request.update_mask.paths.extend(paths)
    return request


def list_request(
    limit: int,
    types: Sequence[str] | None,
    scopes: Sequence[str] | None,
    order: str,
    page_token: str,
) -> knowledge_pb2.ListKnowledgeRequest:
    return knowledge_pb2.ListKnowledgeRequest(
        page_size=limit,
        page_token=page_token,
        types=list(types or []),
        scopes=list(scopes or []),
        order_by=ORDERS.proto_name(order, "order"),
    )


def case_message(case: Case | Mapping[str, Any] | None) -> knowledge_pb2.Case | None:
    return None if case is None else Case.to_proto(case)


def feedback_message(item: Mapping[str, Any]) -> knowledge_pb2.KnowledgeFeedback:
    """One knowledge_batch_update item: {knowledge_id, is_helpful, case, request_id}."""
    return knowledge_pb2.KnowledgeFeedback(
        knowledge_id=item["knowledge_id"],
        is_helpful=bool(item.get("is_helpful", True)),
        case=case_message(item.get("case")),
        request_id=item.get("request_id") or "",
    )
