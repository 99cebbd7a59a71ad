"""Extractions (extract -> review -> commit): validation as a knowledge save,
the latest review wins, commit reports with failures, exactly-once commits, auto_commit,
and listing across traces."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from knowhub import KnowHub

from tests.cognition.conftest import new_trace, payload
from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.shared import failure, visible_records

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def pending(client: KnowHub, trace_id: str, **fields: Any) -> str:
    saved = client.cognition.save_pending(
        trace_id, **payload(**fields), sequence=5, goal_id="g2", branch_id="reflection-1"
    )
    return saved.extraction.extraction_id


def log_types(client: KnowHub, trace_id: str) -> list[str]:
    return [e.type for e in client.cognition.get_log(trace_id, limit=1000)]


def saved_tasks(client: KnowHub) -> list[str]:
    return sorted(r["task"] for r in visible_records(client).values())


# ---- Saving ---------------------------------------------------------------------------------


def test_a_pending_extraction_is_logged_and_listed(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    saved = alice.cognition.save_pending(
        trace_id,
        **payload(tags={"area": "ops"}, score=4),
        sequence=5,
        goal_id="g2",
        branch_id="reflection-1",
    )
    extraction = saved.extraction
    assert re.fullmatch(r"pending-[0-9a-f]{16}", extraction.extraction_id)
    assert saved.commit_failure is None
    assert (extraction.state, extraction.sequence, extraction.goal_id, extraction.branch_id) == (
        "pending",
        5,
        "g2",
        "reflection-1",
    )
    assert extraction.payload["tags"] == {"area": "ops"} and extraction.payload["score"] == 4
    (event,) = alice.cognition.get_log(trace_id)
    assert event.type == "extraction_pending"
    assert event["extraction_id"] == extraction.extraction_id
    assert event["payload"] == extraction.payload
    listed = alice.cognition.list_extractions(trace_id)
    assert [x.to_dict() for x in listed] == [extraction.to_dict()]


def test_a_retried_save_with_its_request_id_saves_once(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    first = alice.cognition.save_pending(trace_id, **payload(), request_id="save-1")
    again = alice.cognition.save_pending(trace_id, **payload(), request_id="save-1")
    assert again.extraction.extraction_id == first.extraction.extraction_id
    assert log_types(alice, trace_id) == ["extraction_pending"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"task": ""}, "payload.task"),
        ({"content": "x" * 65_537}, "payload.content"),
        ({"types": []}, "payload.types"),
        ({"types": ["recipe"]}, "payload.types[0]"),
        ({"score": 9}, "payload.score"),
        ({"scopes": ["galaxy:far"]}, "payload.scopes[0]"),
        ({"owner": "robot"}, "payload.owner"),
        ({"urls": ["ftp://x"]}, "payload.urls[0]"),
        ({"source_category": "c" * 65}, "payload.source_category"),
        ({"agent_id": "not valid!"}, "payload.agent_id"),
        ({"resource_ids": ["/abs"]}, "payload.resource_ids[0]"),
        ({"tags": {"k": "v" * 1_025}}, "payload.tags['k']"),
    ],
)
def test_each_payload_rule_of_a_knowledge_save_applies(
    server: Harness, fields: dict[str, Any], field: str
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    code, message = failure(lambda: pending(alice, trace_id, **fields))
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


def test_the_payload_must_be_what_the_caller_may_save(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    for fields, field in (
        ({"scopes": ["org:globex"]}, "payload.scopes[0]"),
        ({"owner": "user:bob"}, "payload.owner"),
    ):
        code, message = failure(lambda f=fields: pending(alice, trace_id, **f))
        assert code == "PERMISSION_DENIED" and message.startswith(f"{field}:")
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


# ---- Reviewing ------------------------------------------------------------------------------


def test_the_latest_review_wins(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    extraction_id = pending(alice, trace_id)
    for decision, state in (("approve", "approved"), ("discard", "discarded")):
        reviewed = alice.cognition.review_extraction(trace_id, extraction_id, decision)
        assert reviewed.state == state and reviewed.edited_payload is None
    edited = alice.cognition.review_extraction(
        trace_id, extraction_id, "edit", edited_payload=payload(content="rotate weekly")
    )
    assert edited.state == "edited"
    assert edited.edited_payload is not None
    assert edited.edited_payload["content"] == "rotate weekly"
    assert edited.reviewed_at is not None

    report = alice.cognition.commit_extractions(trace_id)
    knowledge_id = report.committed[extraction_id]
    assert alice.knowledge.get(knowledge_id).content == "rotate weekly"
    assert log_types(alice, trace_id) == ["extraction_pending"] + ["extraction_reviewed"] * 3 + [
        "extraction_committed"
    ]


def test_an_approval_after_an_edit_commits_the_original(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    extraction_id = pending(alice, trace_id, content="the original")
    alice.cognition.review_extraction(
        trace_id, extraction_id, "edit", edited_payload=payload(content="the edit")
    )
    approved = alice.cognition.review_extraction(trace_id, extraction_id, "approve")
    assert approved.edited_payload is None
    knowledge_id = alice.cognition.commit_extractions(trace_id).committed[extraction_id]
    assert alice.knowledge.get(knowledge_id).content == "the original"


@pytest.mark.parametrize(
    ("decision", "edited", "field"),
    [
        ("keep", None, "decision"),
        ("edit", None, "edited_payload"),
        ("approve", payload(), "edited_payload"),
        ("edit", payload(task=""), "edited_payload.task"),
        ("edit", payload(types=["nope"]), "edited_payload.types[0]"),
    ],
)
def test_each_review_rule_is_enforced(
    server: Harness, decision: str, edited: dict[str, Any] | None, field: str
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    extraction_id = pending(alice, trace_id)
    code, message = failure(
        lambda: alice.cognition.review_extraction(
            trace_id, extraction_id, decision, edited_payload=edited
        )
    )
    assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:"), message
    assert log_types(alice, trace_id) == ["extraction_pending"]
    assert alice.cognition.list_extractions(trace_id)[0].state == "pending"


def test_reviews_need_an_extraction_not_yet_committed(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    extraction_id = pending(alice, trace_id)
    assert (
        failure(
            lambda: alice.cognition.review_extraction(
                trace_id, "pending-0000000000000000", "approve"
            )
        )[0]
        == "NOT_FOUND"
    )
    assert (
        failure(
            lambda: server.client("bob").cognition.review_extraction(
                trace_id, extraction_id, "approve"
            )
        )[0]
        == "NOT_FOUND"
    )
    alice.cognition.review_extraction(trace_id, extraction_id, "approve")
    alice.cognition.commit_extractions(trace_id)
    code, message = failure(
        lambda: alice.cognition.review_extraction(trace_id, extraction_id, "discard")
    )
    assert code == "FAILED_PRECONDITION" and "already committed" in message


# ---- Committing -----------------------------------------------------------------------------


def test_a_commit_report_lists_each_failure_with_its_reason(server: Harness) -> None:
    alice, admin, trace_id = server.client("alice"), server.client("admin"), new_trace()
    good = pending(alice, trace_id, task="good one")
    denied = pending(alice, trace_id, task="denied one")
    left = pending(alice, trace_id, task="left pending")
    alice.cognition.review_extraction(trace_id, good, "approve")
    # An admin's edit may name a scope alice cannot write; alice's commit then fails.
    admin.cognition.review_extraction(
        trace_id,
        denied,
        "edit",
        edited_payload=payload(task="denied one", scopes=["team:elsewhere"]),
        owner="user:alice",
    )
    report = alice.cognition.commit_extractions(trace_id)

    assert list(report.committed) == [good]
    (failed,) = report.failed
    assert (failed.extraction_id, failed.code) == (denied, "PERMISSION_DENIED")
    assert "team:elsewhere" in failed.message
    states = {x.extraction_id: x.state for x in alice.cognition.list_extractions(trace_id)}
    assert states == {good: "committed", denied: "edited", left: "pending"}
    assert log_types(alice, trace_id).count("extraction_committed") == 1
    assert saved_tasks(alice).count("good one") == 1
    assert "denied one" not in saved_tasks(alice)


def test_commits_are_exactly_once(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    ids = [pending(alice, trace_id, task=f"once {n}") for n in range(3)]
    for extraction_id in ids[:2]:
        alice.cognition.review_extraction(trace_id, extraction_id, "approve")
    clients = [server.client("alice") for _ in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        reports = list(pool.map(lambda c: c.cognition.commit_extractions(trace_id), clients))

    knowledge_ids = {
        report.committed[i] for report in reports for i in ids[:2] if i in report.committed
    }
    assert len(knowledge_ids) == 2
    assert all(not report.failed for report in reports)
    assert log_types(alice, trace_id).count("extraction_committed") == 2
    tasks = saved_tasks(alice)
    assert (tasks.count("once 0"), tasks.count("once 1"), tasks.count("once 2")) == (1, 1, 0)

    again = alice.cognition.commit_extractions(trace_id)
    assert (again.committed, again.failed) == ({}, [])
    named = alice.cognition.commit_extractions(
        trace_id, [ids[0], ids[2], "pending-0000000000000000"]
    )
    states = {x.extraction_id: x for x in alice.cognition.list_extractions(trace_id)}
    assert named.committed == {ids[0]: states[ids[0]].knowledge_id}
    assert states[ids[0]].knowledge_id in knowledge_ids
    assert [(f.extraction_id, f.code) for f in named.failed] == [
        (ids[2], "FAILED_PRECONDITION"),
        ("pending-0000000000000000", "NOT_FOUND"),
    ]


def test_auto_commit_approves_and_commits_as_an_extraction_arrives(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [], auto_commit=True)
    saved = alice.cognition.save_pending(trace_id, **payload(task="auto saved"))

    assert saved.commit_failure is None
    assert saved.extraction.state == "committed" and saved.extraction.knowledge_id
    assert alice.knowledge.get(saved.extraction.knowledge_id).task == "auto saved"
    assert log_types(alice, trace_id) == [
        "extraction_pending",
        "extraction_reviewed",
        "extraction_committed",
    ]


def test_a_payload_that_knowledge_cannot_check_is_not_saved(start_redis_hub: StartHub) -> None:
    """The knowledge service alone checks a payload (SaveKnowledge validate_only): while it
    is unreachable nothing is logged, and the caller is told to retry."""
    hub = start_redis_hub(services=["cognition"], knowledge_address="127.0.0.1:1")
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [], auto_commit=True)
    code, _ = failure(lambda: alice.cognition.save_pending(trace_id, **payload()))

    assert code == "UNAVAILABLE"
    assert log_types(alice, trace_id) == []


def test_commit_checks_its_arguments(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    pending(alice, trace_id)
    code, message = failure(lambda: alice.cognition.commit_extractions(trace_id, ["bad id"]))
    assert code == "INVALID_ARGUMENT" and message.startswith("extraction_ids[0]:")
    assert (
        failure(lambda: server.client("bob").cognition.commit_extractions(trace_id))[0]
        == "NOT_FOUND"
    )


# ---- Listing --------------------------------------------------------------------------------


def test_extractions_are_listed_by_state_across_traces(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub()
    alice, bob, admin = hub.client("alice"), hub.client("bob"), hub.client("admin")
    first, second = new_trace(), new_trace()
    a1, a2 = pending(alice, first, task="a1"), pending(alice, first, task="a2")
    a3 = pending(alice, second, task="a3")
    b1 = pending(bob, new_trace(), scopes=["org:globex"], task="b1")
    alice.cognition.review_extraction(first, a2, "discard")

    def listed(client: KnowHub, **options: Any) -> list[str]:
        found, token = [], ""
        while True:
            page = client.cognition.list_extractions(limit=2, page_token=token, **options)
            found += [x.extraction_id for x in page]
            token = page.next_page_token
            if not token:
                return found

    assert listed(alice, states=["pending"]) == [a1, a3]
    assert listed(alice) == [a1, a2, a3]
    assert listed(alice, states=["discarded", "approved"]) == [a2]
    assert listed(alice, trace_id=first, states=["pending"]) == [a1]
    assert listed(bob, states=["pending"]) == [b1]
    assert listed(admin, states=["pending"]) == [a1, a3, b1]
    assert failure(lambda: bob.cognition.list_extractions(trace_id=first))[0] == "NOT_FOUND"
    code, message = failure(lambda: alice.cognition.list_extractions(states=["lost"]))
    assert code == "INVALID_ARGUMENT" and message.startswith("states[0]:")
    page = alice.cognition.list_extractions(limit=1)
    code, message = failure(
        lambda: alice.cognition.list_extractions(
            states=["pending"], limit=1, page_token=page.next_page_token
        )
    )
    assert code == "INVALID_ARGUMENT" and message.startswith("page_token:")


def test_the_savers_defaults_are_kept_whoever_commits(server: Harness) -> None:
    alice, admin, trace_id = server.client("alice"), server.client("admin"), new_trace()
    saved = alice.cognition.save_pending(
        trace_id, task="learned by alice's agent", content="c", types=["tool"]
    ).extraction
    assert (
        saved.payload["owner"],
        saved.payload["scopes"],
        saved.payload["agent_id"],
        saved.payload["source_category"],
    ) == ("agent:alice_bot", ["org:acme"], "alice_bot", "exp")
    admin.cognition.review_extraction(trace_id, saved.extraction_id, "approve", owner="user:alice")
    knowledge_id = admin.cognition.commit_extractions(trace_id, owner="user:alice").committed[
        saved.extraction_id
    ]
    record = alice.knowledge.get(knowledge_id)
    assert (record.owner, record.scopes, record.source.agent_id) == (
        "agent:alice_bot",
        ["org:acme"],
        "alice_bot",
    )


# ---- Deduplication ----------------------------------------------------------------------------


def test_committing_the_same_extraction_twice_links_to_the_first_record(server: Harness) -> None:
    """An exported trace imported again, and both copies' extractions committed: the second
    commit links to the record the first made, and the report says so."""
    alice, trace_id = server.client("alice"), new_trace()
    task = f"dedup {trace_id}"
    first = pending(alice, trace_id, task=task, content="Rotate the keys monthly.")
    alice.cognition.review_extraction(trace_id, first, "approve")
    copy = new_trace()
    alice.cognition.import_log(alice.cognition.export_log(trace_id), trace_id=copy)

    original = alice.cognition.commit_extractions(trace_id)
    again = alice.cognition.commit_extractions(copy)
    assert (original.linked, again.linked) == ([], [first])
    assert again.committed == {first: original.committed[first]}
    assert saved_tasks(alice).count(task) == 1
    [committed] = alice.cognition.get_log(copy, types=["extraction_committed"])
    assert committed["knowledge_id"] == original.committed[first]


def test_only_the_same_owner_scopes_task_and_content_link(server: Harness) -> None:
    alice, carol = server.client("alice"), server.client("carol")
    task = f"dedup variants {new_trace()}"
    base = alice.knowledge.save(
        task=task, content="Rotate the keys monthly.", types=["strategy"], scopes=["org:acme"]
    )
    same = alice.knowledge.save_unless_exists(
        f"  {task.upper()} ", "rotate  the keys\nmonthly.", ["strategy"], scopes=["org:acme"]
    )
    assert (same.existing, same.knowledge.id) == (True, base.id)
    for client, fields in (
        (alice, {"content": "Rotate the keys weekly."}),
        (alice, {"scopes": ["org:acme", "team:t1"]}),
        (carol, {}),
    ):
        values = {"content": "Rotate the keys monthly.", "scopes": ["org:acme"], **fields}
        other = client.knowledge.save_unless_exists(task, types=["strategy"], **values)
        assert other.existing is False and other.knowledge.id != base.id
