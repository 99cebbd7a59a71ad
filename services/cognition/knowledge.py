"""The knowledge service as the cognition service reaches it: through its RPCs, as the
caller, with idempotency keys so a retried call never counts twice."""

from __future__ import annotations

from knowhub.v1 import knowledge_pb2, knowledge_pb2_grpc

from services.common.auth import Principal
from services.common.peers import Peers, call_as
from services.knowledge.domain import Case, Draft


class KnowledgeLink:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers
        self._stub: knowledge_pb2_grpc.KnowledgeServiceStub | None = None

    def _knowledge(self) -> knowledge_pb2_grpc.KnowledgeServiceStub:
        if self._stub is None:
            self._stub = knowledge_pb2_grpc.KnowledgeServiceStub(self._peers.channel("knowledge"))
        return self._stub

    def add_case(self, principal: Principal, knowledge_id: str, case: Case, *, helpful: bool,
                 request_id: str) -> None:
        """A helpful or harmful case on a record (UpdateKnowledge). Raises PeerRefused or
        Unavailable."""
        message = knowledge_pb2.Case(task=case.task, outcome=case.outcome, reason=case.reason,
                                     trace_id=case.trace_id,
                                     query_sequence=case.query_sequence)
        request = knowledge_pb2.UpdateKnowledgeRequest(id=knowledge_id, request_id=request_id)
        (request.add_helpful_case if helpful else request.add_harmful_case).CopyFrom(message)
        call_as(principal, self._knowledge().UpdateKnowledge, request)

    def save(self, principal: Principal, draft: Draft, request_id: str) -> str:
        """Saves a draft (SaveKnowledge); returns the record's id, the first one's on a
        retry. Raises PeerRefused or Unavailable."""
        given = draft.source
        request = knowledge_pb2.SaveKnowledgeRequest(
            task=draft.task, content=draft.content, types=draft.types, tags=draft.tags,
            scopes=draft.scopes, owner=draft.owner, message_id=draft.message_id,
            resource_ids=draft.resource_ids, request_id=request_id,
            source=knowledge_pb2.Source(
                name=given.name, category=given.category, urls=given.urls,
                agent_id=given.agent_id, submitted_by=given.submitted_by,
                message_id=given.message_id))
        if draft.score is not None:
            request.score = draft.score
        return call_as(principal, self._knowledge().SaveKnowledge, request).knowledge.id
