"""Nothing is lost in the cognition service's conversions: every event type, and an
extraction's payload, goes proto -> domain -> proto and comes back equal; every field of
an evaluation reaches the domain; a record with every field set leaves no field of its
message unset. A field added to cognition.proto and not to convert.py fails here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from knowhub_contracts import message_dict
from knowhub_contracts.v1 import cognition_pb2

from knowhub_server.cognition import convert
from knowhub_server.cognition.domain import CommitFailure, Committed, Extraction, Trace
from knowhub_server.cognition.evaluations import Outcome
from knowhub_server.cognition.store import Delivered
from knowhub_server.cognition.view import TraceView
from knowhub_server.common.security.auth import Principal
from tests.support.messages import (
    assert_writes_every_field,
    differences,
    filled,
    filled_record,
    unread_fields,
    unset_fields,
)

EVENT_TYPES = [f.name for f in cognition_pb2.Event.DESCRIPTOR.oneofs_by_name["body"].fields]
[PAYLOAD] = filled(cognition_pb2.ExtractionPayload.DESCRIPTOR)

# A caller of the shared namespace: every name reads as stored.
VIEWER = Principal(user_id="viewer", namespace="")

RECORDS: dict[str, tuple[Callable[[], Any], Callable[[Any], Message]]] = {
    "Trace": (lambda: filled_record(Trace), lambda trace: convert.trace_to_proto(trace, VIEWER)),
    "Extraction": (
        lambda: filled_record(
            Extraction, {"payload": message_dict(PAYLOAD), "edited_payload": message_dict(PAYLOAD)}
        ),
        lambda extraction: convert.extraction_to_proto(extraction, VIEWER),
    ),
    "CommitFailure": (lambda: filled_record(CommitFailure), convert.failure_to_proto),
    "CommittedExtraction": (lambda: filled_record(Committed), convert.committed_to_proto),
    "EvaluationOutcome": (
        lambda: filled_record(Outcome, {"feedback": "deferred"}),
        convert.outcome_to_proto,
    ),
    "Trigger": (
        lambda: Delivered(
            "1-0",
            {
                "trace_id": "t-1",
                "trigger": "task_complete",
                "query_sequences": "3,5",
                "owner": "user:alice",
                "agent_id": "a-1",
                "signaled_at": "2026-01-01T00:00:00Z",
            },
            delivery_count=2,
        ),
        lambda delivered: convert.trigger_to_proto(delivered, VIEWER),
    ),
}


@pytest.mark.parametrize("kind", EVENT_TYPES)
def test_every_event_type_survives_its_domain_form(kind: str) -> None:
    [message] = [m for m in filled(cognition_pb2.Event.DESCRIPTOR) if m.WhichOneof("body") == kind]
    sent = cognition_pb2.Event()
    sent.CopyFrom(message)
    sent.ClearField("event_id")
    sent.ClearField("timestamp")  # both assigned by the server
    found, body = convert.body_from_proto(sent, "events[0]")
    event = {
        "type": found,
        **body,
        "event_id": message.event_id,
        "timestamp": message.timestamp.ToJsonString(),
    }
    back = convert.event_to_proto(event)
    lost = differences(getattr(message, kind), getattr(back, kind))
    assert back == message, f"{kind} loses {lost}"


@pytest.mark.parametrize("kind", EVENT_TYPES)
def test_every_event_type_of_a_log_file_survives(kind: str) -> None:
    [message] = [m for m in filled(cognition_pb2.Event.DESCRIPTOR) if m.WhichOneof("body") == kind]
    raw = {
        "type": kind,
        **message_dict(getattr(message, kind)),
        "timestamp": message.timestamp.ToJsonString(),
    }
    found, body, timestamp = convert.event_from_log(raw, "events[0]")
    back = convert.event_to_proto(
        {"type": found, **body, "timestamp": timestamp, "event_id": message.event_id}
    )
    assert back == message


def test_a_payload_survives_its_domain_form() -> None:
    assert convert.payload_to_proto(convert.payload_from_proto(PAYLOAD), VIEWER) == PAYLOAD


def test_every_field_of_an_evaluation_reaches_the_domain() -> None:
    for message in filled(cognition_pb2.QueryEvaluation.DESCRIPTOR):
        assert unread_fields(message, lambda m: convert.assessments_from_proto([m])) == []
        for item in message.assessments:
            assert (
                unread_fields(
                    item,
                    lambda i, m=message: convert.assessments_from_proto(
                        [
                            cognition_pb2.QueryEvaluation(
                                query_sequence=m.query_sequence, assessments=[i]
                            )
                        ]
                    ),
                )
                == []
            )


@pytest.mark.parametrize("name", RECORDS)
def test_a_full_record_sets_every_field_of_its_message(name: str) -> None:
    assert_writes_every_field(name, RECORDS)


def _events() -> list[dict[str, Any]]:
    """One event of every type, in the domain's form (the log's)."""
    return [
        {
            "type": m.WhichOneof("body"),
            **message_dict(getattr(m, m.WhichOneof("body"))),
            "event_id": m.event_id,
            "timestamp": m.timestamp.ToJsonString(),
        }
        for m in filled(cognition_pb2.Event.DESCRIPTOR)
    ]


def _filled_dict(message_type: type[Message]) -> dict[str, Any]:
    [message] = filled(message_type.DESCRIPTOR)
    return message_dict(message)


def test_a_full_trace_view_sets_every_field_of_its_message() -> None:
    events, when = _events(), "2026-01-01T00:00:00.250Z"
    summary = _filled_dict(cognition_pb2.KnowledgeEvaluationSummary)
    view = filled_record(
        TraceView,
        {
            "timeline": [(1, events), (2, events)],
            "memory_timeline": events,
            "plan_evolution": events,
            "reflections": events,
            "cards": events,
            "memory": events,
            "evaluation_failures": events,
            "GraphNode.task": _filled_dict(cognition_pb2.TaskNode),
            "task_graph": _filled_dict(cognition_pb2.TaskGraph),
            "added_nodes": [_filled_dict(cognition_pb2.TaskNode)],
            "removed_nodes": [_filled_dict(cognition_pb2.TaskNode)],
            "added_edges": [_filled_dict(cognition_pb2.TaskEdge)],
            "removed_edges": [_filled_dict(cognition_pb2.TaskEdge)],
            "statuses": Counter(
                {
                    k: v
                    for k, v in summary.items()
                    if k in {"helpful", "harmful", "neutral", "unused", "irrelevant"}
                }
            ),
            "funnel": _filled_dict(cognition_pb2.ExtractionFunnel),
            "started_at": when,
            "finished_at": when,
            "selected_at": when,
            "timestamp": when,
            "state": "retryable",
            "status": "completed",
            "predecessors": 0,
        },
    )  # roots
    message = convert.view_to_proto(view, VIEWER)
    # A node has successors (a branch) or none (a leaf), never both.
    assert [path for path in unset_fields(message) if not path.endswith(".leaf")] == []
