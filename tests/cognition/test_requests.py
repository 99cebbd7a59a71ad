"""The request rules of the RPCs not covered with their use cases: each refusal is
INVALID_ARGUMENT naming the field, and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from knowhub import KnowHub
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from tests.cognition.conftest import new_trace, payload, query_event
from tests.support.harness import Harness
from tests.support.shared import bearer, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

Call = Callable[[KnowHub, str], object]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda kh, t: kh.cognition.save_pending(t, **payload(), sequence=-1), "sequence"),
        (lambda kh, t: kh.cognition.save_pending(t, **payload(), goal_id="g" * 257), "goal_id"),
        (lambda kh, t: kh.cognition.save_pending(t, **payload(), branch_id="b" * 257), "branch_id"),
        (
            lambda kh, t: kh.cognition.save_pending(t, **payload(), request_id="r" * 257),
            "request_id",
        ),
        (lambda kh, t: kh.cognition.save_pending("bad trace", **payload()), "trace_id"),
        (lambda kh, t: kh.cognition.evaluation_prompt(t, mission="m" * 4_001), "mission"),
        (lambda kh, t: kh.cognition.evaluation_prompt(t, goal="g" * 4_001), "goal"),
        (lambda kh, t: kh.cognition.list_traces(limit=101), "page_size"),
        (lambda kh, t: kh.cognition.list_traces(agent_id="no spaces"), "agent_id"),
        (lambda kh, t: kh.cognition.list_traces(page_token="garbage"), "page_token"),
        (lambda kh, t: kh.cognition.list_extractions(limit=101), "page_size"),
        (lambda kh, t: kh.cognition.list_extractions(states=["pending", "pending"]), "states[1]"),
        (lambda kh, t: kh.cognition.consume_reflections(t, []), "event_ids"),
        (lambda kh, t: kh.cognition.review_extraction(t, "bad id", "approve"), "extraction_id"),
        (
            lambda kh, t: kh.cognition.import_log(
                json.dumps({"trace_id": t, "task": "x" * 4_001, "events": []})
            ),
            "document.task",
        ),
        (
            lambda kh, t: kh.cognition.import_log(
                json.dumps({"trace_id": t, "agent_id": "no spaces", "events": []})
            ),
            "document.agent_id",
        ),
    ],
)
def test_each_request_rule_names_its_field(server: Harness, call: Call, field: str) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    code, message = failure(lambda: call(alice, trace_id))
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


def test_a_save_without_a_payload_is_refused(server: Harness) -> None:
    channel = grpc.insecure_channel(server.address)
    stub, trace_id = cognition_pb2_grpc.CognitionServiceStub(channel), new_trace()
    code, message = failure(
        lambda: stub.SavePendingExtraction(
            cognition_pb2.SavePendingExtractionRequest(trace_id=trace_id, sequence=1),
            metadata=bearer("alice"),
        )
    )
    channel.close()
    assert (code, message) == ("INVALID_ARGUMENT", "payload: is required")


def test_reads_of_an_unknown_or_foreign_trace_are_not_found(server: Harness) -> None:
    alice, bob = server.client("alice"), server.client("bob")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(1, "k")])
    reads: list[Callable[[KnowHub, str], Any]] = [
        lambda kh, t: kh.cognition.get_log(t),
        lambda kh, t: kh.cognition.pending_evaluations(t),
        lambda kh, t: kh.cognition.evaluation_prompt(t),
        lambda kh, t: kh.cognition.trace_view(t),
        lambda kh, t: kh.cognition.export_log(t),
        lambda kh, t: kh.cognition.list_extractions(t),
        lambda kh, t: kh.cognition.consume_reflections(t, ["1-0"]),
    ]
    for read in reads:
        assert failure(lambda r=read: r(bob, trace_id))[0] == "NOT_FOUND"
        assert failure(lambda r=read: r(alice, new_trace()))[0] == "NOT_FOUND"
