"""The knowledge service as the cognition service reaches it: through its RPCs, as the
caller, with idempotency keys so a retried call never counts twice.

An extraction payload is the flat arguments of a knowledge save; the knowledge service
alone knows the rules of a record, so a payload is checked by asking it to validate the
save it stands for (SaveKnowledge with validate_only), as the caller.
"""

from __future__ import annotations

from typing import Any

from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.runtime.peers import PeerRefused, Peers, call_as
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.delegation import HEADER as DELEGATION_HEADER

Payload = dict[str, Any]

# The payload's flat fields where SaveKnowledge nests them under `source`.
_FLAT_FIELDS = {
    "source.name": "source_name",
    "source.category": "source_category",
    "source.urls": "urls",
    "source.agent_id": "agent_id",
    "source.submitted_by": "submitted_by",
    "source.message_id": "message_id",
}


def save_request(
    payload: Payload, *, request_id: str = "", validate_only: bool = False
) -> knowledge_pb2.SaveKnowledgeRequest:
    """The SaveKnowledge a payload stands for."""
    request = knowledge_pb2.SaveKnowledgeRequest(
        task=payload["task"],
        content=payload["content"],
        types=payload["types"],
        tags=payload["tags"],
        scopes=payload["scopes"],
        owner=payload["owner"],
        message_id=payload["message_id"],
        resource_ids=payload["resource_ids"],
        request_id=request_id,
        validate_only=validate_only,
        source=knowledge_pb2.Source(
            name=payload["source_name"],
            category=payload["source_category"],
            urls=payload["urls"],
            agent_id=payload["agent_id"],
            submitted_by=payload["submitted_by"],
            message_id=payload["message_id"],
        ),
    )
    if payload.get("score") is not None:
        request.score = payload["score"]
    return request


class KnowledgeClient:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers
        self._stub: knowledge_pb2_grpc.KnowledgeServiceStub | None = None

    def _knowledge(self) -> knowledge_pb2_grpc.KnowledgeServiceStub:
        if self._stub is None:
            self._stub = knowledge_pb2_grpc.KnowledgeServiceStub(self._peers.channel("knowledge"))
        return self._stub

    def add_case(
        self,
        principal: Principal,
        knowledge_id: str,
        *,
        task: str,
        outcome: str,
        reason: str,
        trace_id: str,
        query_sequence: int,
        request_id: str,
        grant: str = "",
    ) -> None:
        """A case on a record (UpdateKnowledge), helpful when its outcome is, else harmful,
        as the caller or, with a delegation `grant`, as the user it names. Raises
        PeerRefused or Unavailable."""
        case = knowledge_pb2.Case(
            task=task,
            outcome=outcome,
            reason=reason,
            trace_id=trace_id,
            query_sequence=query_sequence,
        )
        helpful = outcome == "helpful"
        request = knowledge_pb2.UpdateKnowledgeRequest(id=knowledge_id, request_id=request_id)
        (request.add_helpful_case if helpful else request.add_harmful_case).CopyFrom(case)
        call_as(
            principal,
            self._knowledge().UpdateKnowledge,
            request,
            metadata=((DELEGATION_HEADER, grant),) if grant else (),
        )

    def resolve(self, principal: Principal, payload: Payload, field: str) -> Payload:
        """The payload checked as a save by this caller, with the defaults that save would
        apply made explicit (scopes, owner, agent, category), so whoever commits it later
        saves the same record. Refusals name the payload's own fields under `field`."""
        try:
            record = call_as(
                principal,
                self._knowledge().SaveKnowledge,
                save_request(payload, validate_only=True),
            ).knowledge
        except PeerRefused as refused:
            raise _named_in_payload(refused, field) from None
        # Its names qualified by the caller's org, so whoever commits it, of whichever
        # org, saves it for the same agents and resources.
        return {
            **payload,
            "scopes": [principal.qualify_scope(s) for s in record.scopes],
            "owner": principal.qualify_scope(record.owner),
            "agent_id": principal.qualify(record.source.agent_id),
            "resource_ids": [principal.qualify(r) for r in payload["resource_ids"]],
            "source_category": record.source.category,
        }

    def save(self, principal: Principal, payload: Payload, request_id: str) -> tuple[str, bool]:
        """Saves a payload (SaveKnowledge) unless a record of the same owner and scopes
        already says the same: (the record's id, whether it existed), the first one's on a
        retry. Raises PeerRefused or Unavailable."""
        request = save_request(payload, request_id=request_id)
        response = call_as(principal, self._knowledge().SaveKnowledge, request)
        return response.knowledge.id, response.existing


def _named_in_payload(refused: PeerRefused, field: str) -> ServiceError:
    """The knowledge service's refusal with its field (`source.urls[0]: ...`) renamed to the
    payload's (`payload.urls[0]: ...`)."""
    name, separator, problem = refused.message.partition(": ")
    if not separator or " " in name:
        return PeerRefused(refused.code, f"{field}: {refused.message}")
    for nested, flat in _FLAT_FIELDS.items():
        if name == nested or name.startswith((f"{nested}[", f"{nested}.")):
            name = flat + name[len(nested) :]
            break
    return PeerRefused(refused.code, f"{field}.{name}: {problem}")
