"""`kh.knowledge`: seed 001's knowledge tools as methods.

Every method returns its result from `KnowHub` and an awaitable of it from
`AsyncKnowHub`; names and defaults follow the seed's agent tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowhub._transport import AsyncTransport, Transport
from knowhub.models import (
    Case,
    FeedbackResult,
    Knowledge,
    KnowledgeVersion,
    Page,
    SearchHit,
    SearchResults,
    SlimReport,
    to_timestamp,
)
from knowhub.v1 import knowledge_pb2, knowledge_pb2_grpc

_ORDERS = {"updated": knowledge_pb2.KNOWLEDGE_ORDER_UNSPECIFIED,
           "confidence": knowledge_pb2.KNOWLEDGE_ORDER_CONFIDENCE}
SLIM_TIMEOUT = 600.0


def save_request(task: str, content: str, types: Sequence[str], *,
                 tags: Mapping[str, str] | None = None, scopes: Sequence[str] | None = None,
                 owner: str | None = None, source_name: str = "",
                 source_category: str = "exp", urls: Sequence[str] | None = None,
                 agent_id: str = "research_agent", submitted_by: str = "", score: int = 3,
                 message_id: str = "", resource_ids: Sequence[str] | None = None,
                 source_timestamp: Any = None,
                 request_id: str | None = None) -> knowledge_pb2.SaveKnowledgeRequest:
    """The SaveKnowledgeRequest for seed 001's knowledge_save arguments."""
    return knowledge_pb2.SaveKnowledgeRequest(
        task=task, content=content, types=list(types), tags=dict(tags or {}),
        scopes=list(scopes or []), owner=owner or "",
        source=knowledge_pb2.Source(
            name=source_name, category=source_category, urls=list(urls or []),
            agent_id=agent_id or "", submitted_by=submitted_by, message_id=message_id,
            timestamp=to_timestamp(source_timestamp)),
        score=score, message_id=message_id, resource_ids=list(resource_ids or []),
        request_id=request_id or "")


def _one(response: Any) -> Knowledge:
    return Knowledge.from_proto(response.knowledge)


def _many(response: Any) -> list[Knowledge]:
    return [Knowledge.from_proto(k) for k in response.knowledge]


def _page(response: knowledge_pb2.ListKnowledgeResponse) -> Page:
    page = Page(Knowledge.from_proto(k) for k in response.knowledge)
    page.next_page_token = response.next_page_token
    return page


def _hits(response: knowledge_pb2.SearchKnowledgeResponse) -> SearchResults:
    results = SearchResults(SearchHit.from_proto(h) for h in response.hits)
    results.routed = response.routed
    return results


def _nothing(_response: Any) -> None:
    return None


class KnowledgeAPI:
    def __init__(self, transport: Transport | AsyncTransport) -> None:
        self._transport = transport
        self._stub = knowledge_pb2_grpc.KnowledgeServiceStub(transport.channel)

    def save(self, task: str, content: str, types: Sequence[str],
             tags: Mapping[str, str] | None = None, scopes: Sequence[str] | None = None,
             owner: str | None = None, source_name: str = "", source_category: str = "exp",
             urls: Sequence[str] | None = None, agent_id: str = "research_agent",
             submitted_by: str = "", score: int = 3, message_id: str = "",
             resource_ids: Sequence[str] | None = None,
             request_id: str | None = None) -> Knowledge:
        """Saves new knowledge (seed 001 knowledge_save). With `request_id`, a retried call
        returns the record the first one created instead of saving it twice."""
        request = save_request(
            task, content, types, tags=tags, scopes=scopes, owner=owner,
            source_name=source_name, source_category=source_category, urls=urls,
            agent_id=agent_id, submitted_by=submitted_by, score=score, message_id=message_id,
            resource_ids=resource_ids, request_id=request_id)
        return self._transport.call(self._stub.SaveKnowledge, request, _one)

    def save_many(self, items: Sequence[Mapping[str, Any]]) -> list[Knowledge]:
        """Saves up to 500 records at once; each item takes `save`'s keyword arguments.
        Nothing is written unless every item is valid."""
        requests = [save_request(**item) for item in items]
        return self._transport.call(
            self._stub.BatchSaveKnowledge,
            knowledge_pb2.BatchSaveKnowledgeRequest(requests=requests), _many)

    def get(self, knowledge_id: str) -> Knowledge:
        return self._transport.call(
            self._stub.GetKnowledge, knowledge_pb2.GetKnowledgeRequest(id=knowledge_id), _one)

    def list(self, limit: int = 10, types: Sequence[str] | None = None,
             scopes: Sequence[str] | None = None, order: str = "updated",
             page_token: str = "") -> Page:
        """Lists visible knowledge (seed 001 knowledge_list), newest first or, with
        order="confidence", by confidence then helpful."""
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {', '.join(_ORDERS)}")
        request = knowledge_pb2.ListKnowledgeRequest(
            page_size=limit, page_token=page_token, types=list(types or []),
            scopes=list(scopes or []), order_by=_ORDERS[order])
        return self._transport.call(self._stub.ListKnowledge, request, _page)

    def search(self, query: str, top_k: int = 5, min_score: int = 3,
               types: Sequence[str] | None = None) -> SearchResults:
        """Two-stage search (seed 001 knowledge_search): hits best first."""
        request = knowledge_pb2.SearchKnowledgeRequest(
            query=query, top_k=top_k, min_score=min_score, types=list(types or []))
        return self._transport.call(self._stub.SearchKnowledge, request, _hits)

    def update(self, knowledge_id: str, add_helpful_case: Case | Mapping[str, Any] | None = None,
               add_harmful_case: Case | Mapping[str, Any] | None = None,
               update_score: int | None = None, evolve_feedback: str | None = None,
               request_id: str | None = None) -> Knowledge:
        """Feedback and evolution (seed 001 knowledge_update). `request_id` makes a retried
        call count once."""
        request = knowledge_pb2.UpdateKnowledgeRequest(
            id=knowledge_id, add_helpful_case=Case.to_proto(add_helpful_case),
            add_harmful_case=Case.to_proto(add_harmful_case), update_score=update_score,
            evolve_feedback=evolve_feedback or "", request_id=request_id or "")
        return self._transport.call(self._stub.UpdateKnowledge, request, _one)

    def batch_update(self, feedback_list: Sequence[Mapping[str, Any]]) -> list[FeedbackResult]:
        """Seed 001 knowledge_batch_update: items of {knowledge_id, is_helpful, case}.
        Each item succeeds or fails on its own."""
        items = [knowledge_pb2.KnowledgeFeedback(
            knowledge_id=item["knowledge_id"], is_helpful=bool(item.get("is_helpful", True)),
            case=Case.to_proto(item.get("case")), request_id=item.get("request_id") or "")
            for item in feedback_list]
        return self._transport.call(
            self._stub.BatchUpdateKnowledge,
            knowledge_pb2.BatchUpdateKnowledgeRequest(feedback_list=items),
            lambda r: [FeedbackResult.from_proto(x) for x in r.results])

    def delete(self, knowledge_id: str) -> None:
        return self._transport.call(
            self._stub.DeleteKnowledge, knowledge_pb2.DeleteKnowledgeRequest(id=knowledge_id),
            _nothing)

    def slim(self, model: str | None = None, dry_run: bool = False) -> SlimReport:
        """Merges near-duplicates (seed 001 knowledge_slim); `dry_run` only reports."""
        return self._transport.call(
            self._stub.SlimKnowledge,
            knowledge_pb2.SlimKnowledgeRequest(model=model or "", dry_run=dry_run),
            SlimReport.from_proto, timeout=SLIM_TIMEOUT)

    def versions(self, knowledge_id: str) -> list[KnowledgeVersion]:
        """Earlier contents replaced by evolve or slim, newest first."""
        return self._transport.call(
            self._stub.ListKnowledgeVersions,
            knowledge_pb2.ListKnowledgeVersionsRequest(id=knowledge_id),
            lambda r: [KnowledgeVersion.from_proto(v) for v in r.versions])
