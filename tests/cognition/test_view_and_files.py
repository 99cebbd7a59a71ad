"""The trace view of a scripted trace, and the trace log file: export, import, the
legacy knowledge_log.json, and what a bad file is told."""

from __future__ import annotations

import json
from typing import Any

import pytest
from knowhub import KnowHub

from tests.cognition.conftest import new_trace, payload, query_event, save_knowledge
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def scripted_trace(client: KnowHub) -> tuple[str, dict[str, Any]]:
    """A trace with every kind of event; returns its id and the ids it used."""
    trace_id = new_trace()
    k1 = save_knowledge(client, task="k1 task")
    k2 = save_knowledge(client, task="k2 task")
    cognition = client.cognition
    ids = cognition.append_events(
        trace_id,
        [
            {"type": "message", "sequence": 1, "role": "user", "content": "deploy the service"},
            {"type": "plan_evolution", "plan_version": 1, "diff_summary": "first plan"},
            {"type": "message", "sequence": 2, "role": "assistant", "content": "looking it up"},
            query_event(2, k1, k2, text="how to deploy"),
            {
                "type": "memory_read",
                "memory_type": "long_term",
                "key_or_scope": "knowledge",
                "summary": "2 hits",
                "step_index": 2,
            },
            {"type": "message", "sequence": 3, "role": "assistant", "content": "deployed"},
            {
                "type": "memory_write",
                "memory_type": "episodic",
                "key_or_scope": "deploys",
                "summary": "noted",
                "step_index": 3,
            },
            {"type": "plan_evolution", "plan_version": 2, "diff_summary": "added a canary"},
        ],
        task="ship release 7",
    ).event_ids
    cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {
                "query_sequence": 2,
                "assessments": [
                    {"knowledge_id": k1.id, "status": "helpful", "reason": "worked"},
                    {"knowledge_id": k2.id, "status": "irrelevant", "reason": "other topic"},
                ],
            }
        ],
        trigger="goal_completion",
    )
    committed = cognition.save_pending(
        trace_id, **payload(task="canary first"), sequence=3
    ).extraction.extraction_id
    cognition.review_extraction(trace_id, committed, "approve")
    cognition.commit_extractions(trace_id)
    waiting = cognition.save_pending(
        trace_id, **payload(task="later"), sequence=4
    ).extraction.extraction_id
    cognition.append_events(
        trace_id,
        [
            {"type": "reflection", "sequence_range": [1, 3], "summary": "canaries help"},
            query_event(5, k1, text="how to roll back"),
        ],
    )
    return trace_id, {
        "k1": k1.id,
        "k2": k2.id,
        "committed": committed,
        "waiting": waiting,
        "first": ids[0],
    }


# ---- The view ---------------------------------------------------------------------------


def test_the_trace_view_aggregates_a_scripted_trace(server: Harness) -> None:
    alice = server.client("alice")
    trace_id, ids = scripted_trace(alice)
    view = alice.cognition.trace_view(trace_id)

    assert view.trace.task == "ship release 7" and view.trace.reflected_at_sequence == 3
    assert [(s.sequence, [e.type for e in s.events]) for s in view.timeline] == [
        (1, ["message"]),
        (2, ["message", "query", "memory_read", "evaluation", "evaluation"]),
        (
            3,
            [
                "message",
                "memory_write",
                "extraction_pending",
                "extraction_reviewed",
                "extraction_committed",
            ],
        ),
        (4, ["extraction_pending"]),
        (5, ["query"]),
    ]
    assert [e.type for e in view.memory_timeline] == ["memory_read", "memory_write"]
    assert [c.to_dict() for c in view.memory_counts] == [
        {"memory_type": "long_term", "reads": 1, "writes": 0},
        {"memory_type": "episodic", "reads": 0, "writes": 1},
    ]
    assert [e["plan_version"] for e in view.plan_evolution] == [1, 2]
    summaries = {k.knowledge_id: k.to_dict() for k in view.knowledge}
    assert summaries[ids["k1"]] == {
        "knowledge_id": ids["k1"],
        "queried": 2,
        "helpful": 1,
        "harmful": 0,
        "neutral": 0,
        "unused": 0,
        "irrelevant": 0,
        "feedback_deferred": 0,
        "feedback_refused": 0,
    }
    assert (summaries[ids["k2"]]["queried"], summaries[ids["k2"]]["irrelevant"]) == (1, 1)
    assert view.extraction_funnel == {
        "saved": 2,
        "reviewed": 1,
        "pending": 1,
        "approved": 0,
        "edited": 0,
        "discarded": 0,
        "committed": 1,
    }
    assert [e["summary"] for e in view.reflections] == ["canaries help"]
    assert view.pending_query_sequences == [5]


# ---- Export and import -------------------------------------------------------------------


def test_an_exported_log_imports_as_the_same_history(server: Harness) -> None:
    alice = server.client("alice")
    trace_id, ids = scripted_trace(alice)
    reflection = alice.cognition.get_log(trace_id, types=["reflection"])[0]
    alice.cognition.consume_reflections(trace_id, [reflection.event_id])
    document = alice.cognition.export_log(trace_id)

    parsed = json.loads(document)
    assert (parsed["trace_id"], parsed["task"], parsed["agent_id"]) == (
        trace_id,
        "ship release 7",
        "alice_bot",
    )
    assert all("event_id" not in e and e["timestamp"].endswith("Z") for e in parsed["events"])

    copy = new_trace()
    result = alice.cognition.import_log(document, trace_id=copy)
    assert result.imported == len(parsed["events"])
    original = [_comparable(e) for e in alice.cognition.get_log(trace_id, limit=1000)]
    imported = [_comparable(e) for e in alice.cognition.get_log(copy, limit=1000)]
    assert imported == original
    trace = result.trace
    assert (
        trace.task,
        trace.last_sequence,
        trace.reflected_at_sequence,
        trace.pending_evaluations,
        trace.unconsumed_reflections,
    ) == ("ship release 7", 5, 3, 1, 0)
    states = {x.extraction_id: x.state for x in alice.cognition.list_extractions(copy)}
    assert states == {ids["committed"]: "committed", ids["waiting"]: "pending"}
    assert alice.knowledge.get(ids["k1"]).eval.helpful == 2  # the import counted nothing
    again = alice.cognition.submit_evaluation(
        copy,
        evaluations=[
            {"query_sequence": 2, "assessments": [{"knowledge_id": ids["k1"], "status": "harmful"}]}
        ],
    )
    assert [(o.recorded, o.status, o.feedback) for o in again.outcomes] == [
        (False, "helpful", "imported")
    ]
    assert alice.knowledge.get(ids["k1"]).eval.to_dict()["harmful"] == 0


def _comparable(event: Any) -> dict[str, Any]:
    found = event.to_dict()
    found.pop("event_id")
    return found


def test_an_import_never_overwrites_a_trace(server: Harness) -> None:
    alice = server.client("alice")
    trace_id, _ = scripted_trace(alice)
    document = alice.cognition.export_log(trace_id)
    before = alice.cognition.get_log(trace_id, limit=1000)
    code, message = failure(lambda: alice.cognition.import_log(document))
    assert code == "ALREADY_EXISTS" and trace_id in message
    assert len(alice.cognition.get_log(trace_id, limit=1000)) == len(before)
    alice_copy = alice.cognition.import_log(document, trace_id=new_trace())
    assert alice_copy.trace.owner == "user:alice"


def test_an_import_checks_its_extractions_as_the_importers_own_saves(server: Harness) -> None:
    """Another org's user cannot smuggle candidate knowledge into acme through a log file:
    its payloads are checked as saves by the importer, like SavePendingExtraction's."""
    alice, bob = server.client("alice"), server.client("bob")
    trace_id, _ = scripted_trace(alice)
    document = json.dumps(
        {**json.loads(alice.cognition.export_log(trace_id)), "agent_id": ""}
    )  # bob may not act as alice's agent either
    copy_id = new_trace()
    code, message = failure(lambda: bob.cognition.import_log(document, trace_id=copy_id))
    assert code == "PERMISSION_DENIED"
    # the payload's agent (alice's) is refused first; its scopes would be too
    assert (
        ".extraction_pending.payload.agent_id: this token may not act as agent "
        "'alice_bot'" in message
    )
    assert failure(lambda: bob.cognition.get_log(copy_id))[0] == "NOT_FOUND"


def test_a_legacy_knowledge_log_is_read(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    legacy = {
        "trace_id": trace_id,
        "entries": [
            {
                "sequence": 42,
                "goal_id": "1",
                "query": "goal text",
                "response": "answer",
                "source_ids": ["knowledge-a1b2", "knowledge-c3d4"],
                "sources": [{"id": "knowledge-a1b2", "task": "t", "content": "c"}],
                "timestamp": "2026-03-20T10:00:00",
            },
            {
                "query_sequence": 42,
                "knowledge_id": "knowledge-a1b2",
                "eval_result": {"status": "helpful", "reason": "located the problem"},
                "evaluated_at_trigger": "goal_completion",
                "timestamp": "2026-03-20T10:05:00",
            },
            {
                "query_sequence": 42,
                "source_id": "knowledge-c3d4",
                "status": "irrelevant",
                "reason": "unrelated",
            },
        ],
    }
    result = alice.cognition.import_log(json.dumps(legacy))
    assert result.trace.trace_id == trace_id and result.imported == 3
    events = alice.cognition.get_log(trace_id)
    assert [e.type for e in events] == ["query", "evaluation", "evaluation"]
    assert events[0].to_dict()["timestamp"] == "2026-03-20T10:00:00Z"
    assert events[2].data["eval_result"] == {"status": "irrelevant", "reason": "unrelated"}
    assert events[2]["knowledge_id"] == "knowledge-c3d4"
    assert alice.cognition.pending_evaluations(trace_id) == []


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ("not json", "document"),
        ("[]", "document"),
        ('{"events": {}}', "document.events"),
        ('{"events": ["x"]}', "document.events[0]"),
        ('{"events": [{"type": "thought"}]}', "document.events[0].type"),
        ('{"events": [{"type": "message", "sequence": "abc"}]}', "document.events[0]"),
        (
            '{"events": [{"type": "message", "role": "user", "timestamp": "yesterday"}]}',
            "document.events[0].timestamp",
        ),
        ('{"events": [{"type": "message", "role": "robot"}]}', "document.events[0].message.role"),
        (
            '{"events": [{"type": "extraction_reviewed", "extraction_id": "pending-1",'
            ' "decision": "approve"}]}',
            "document.events[0].extraction_reviewed.extraction_id",
        ),
        ('{"entries": [{"note": "?"}]}', "document.entries[0]"),
        ('{"events": []}', "trace_id"),
    ],
)
def test_a_bad_file_is_refused_and_creates_nothing(
    server: Harness, document: str, field: str
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    named = "" if field == "trace_id" else trace_id
    code, message = failure(lambda: alice.cognition.import_log(document, trace_id=named))
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"
