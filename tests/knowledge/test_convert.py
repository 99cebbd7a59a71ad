"""Nothing is lost in the knowledge service's conversions: a message with every field set
goes proto -> domain -> proto and comes back equal; every field of a request reaches the
domain; a record with every field set leaves no field of its message unset, and comes
back whole from its stored payload. A field added to knowledge.proto and not to
convert.py (or to the record and not to the store) fails here."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from knowhub_contracts.v1 import knowledge_pb2

from knowhub_server.common.security.auth import Principal
from knowhub_server.knowledge import convert
from knowhub_server.knowledge.domain import Knowledge, KnowledgeVersion
from knowhub_server.knowledge.operations import SearchHit, SearchResult, SlimReport
from knowhub_server.knowledge.ranking import Selection
from knowhub_server.knowledge.resource_client import DELETED, EXPIRED, MISSING
from knowhub_server.knowledge.store import from_payload, to_payload
from tests.support.messages import (
    assert_writes_every_field,
    differences,
    filled,
    filled_record,
    unread_fields,
)

# A caller of the shared namespace: every name reads as stored.
VIEWER = Principal(user_id="viewer", namespace="")

ROUND_TRIPS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Message]]] = {
    "Case": (
        lambda m: convert.case_from_proto(m, "case"),
        lambda case: knowledge_pb2.Case(**convert.case_fields(case)),
    ),
    "Source": (
        lambda m: convert.source_from_proto(m, "source"),
        lambda source: knowledge_pb2.Source(**convert.source_fields(source, VIEWER)),
    ),
}

# Request fields the servicer reads itself (options of the call, the search's arguments).
READ_BY_THE_SERVICER = {
    "SaveKnowledgeRequest": {"validate_only"},
    "UpdateKnowledgeRequest": {"id"},
    "AskKnowledgeRequest": {"query", "top_k", "min_score", "types", "min_relevance"},
}
REQUESTS: dict[str, Callable[[Any], Any]] = {
    "SaveKnowledgeRequest": lambda m: convert.draft_from_proto(m, ""),
    "UpdateKnowledgeRequest": convert.feedback_from_proto,
    "KnowledgeFeedback": lambda m: convert.feedback_item_from_proto(m, "feedback_list[0]"),
    "AskKnowledgeRequest": convert.query_log_from_proto,
}


def _hit_message(hit: SearchHit) -> knowledge_pb2.SearchHit:
    return knowledge_pb2.SearchKnowledgeResponse(
        hits=convert.search_hits(SearchResult([hit], Selection.ROUTED), VIEWER)
    ).hits[0]


RECORDS: dict[str, tuple[Callable[[], Any], Callable[[Any], Message]]] = {
    "Knowledge": (
        lambda: filled_record(Knowledge),
        lambda record: convert.knowledge_to_proto(record, VIEWER),
    ),
    "KnowledgeVersion": (
        lambda: filled_record(KnowledgeVersion),
        lambda version: convert.version_to_proto(version, VIEWER),
    ),
    "SearchHit": (
        lambda: filled_record(
            SearchHit,
            {"unavailable_resources": [("r-1", MISSING), ("r-2", EXPIRED), ("r-3", DELETED)]},
        ),
        _hit_message,
    ),
    "SlimKnowledgeResponse": (lambda: filled_record(SlimReport), convert.slim_to_proto),
}


@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_a_message_survives_its_domain_record(name: str) -> None:
    from_proto, to_proto = ROUND_TRIPS[name]
    for message in filled(knowledge_pb2.DESCRIPTOR.message_types_by_name[name]):
        back = to_proto(from_proto(message))
        assert back == message, f"{name} loses {differences(message, back)}"


@pytest.mark.parametrize("name", REQUESTS)
def test_every_field_of_a_request_reaches_the_domain(name: str) -> None:
    for message in filled(knowledge_pb2.DESCRIPTOR.message_types_by_name[name]):
        ignored = set(unread_fields(message, REQUESTS[name])) - READ_BY_THE_SERVICER.get(
            name, set()
        )
        assert ignored == set(), f"{name}: {sorted(ignored)} never reach the domain"


@pytest.mark.parametrize("name", RECORDS)
def test_a_full_record_sets_every_field_of_its_message(name: str) -> None:
    assert_writes_every_field(name, RECORDS)


def test_the_enum_maps_have_every_value_of_their_enums() -> None:
    assert convert.ORDERS.name(0, "order_by") == "updated"
    assert convert.ORDERS.names == ("confidence",)
    assert set(convert.UNAVAILABLE_REASONS.names) == {MISSING, EXPIRED, DELETED}


def test_the_store_keeps_every_field_of_a_record() -> None:
    record = filled_record(Knowledge)
    stored = json.loads(json.dumps(to_payload(record)))
    assert from_payload(stored) == record
