"""Feedback, scoring and evolution of knowledge (update, batch update, and the eval
counters), through the SDK against real servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, errors

from tests.support.harness import Harness
from tests.support.openai_stub import Failure, OpenAIStub

CASE: dict[str, Any] = {
    "task": "log in to the supplier portal",
    "outcome": "logged in on the first try",
    "reason": "the cookie was still valid",
    "trace_id": "trace-42",
    "timestamp": "2026-03-05T12:00:00Z",
    "query_sequence": 7,
}


def save(client: KnowHub, **fields: Any) -> Knowledge:
    values: dict[str, Any] = {
        "task": "rotate the API keys",
        "types": ["strategy"],
        "content": "rotate them monthly and revoke the old ones",
        "scopes": ["org:acme"],
        "allow_duplicate": True,
    }
    values.update(fields)
    return client.knowledge.save(**values)


def snapshot(client: KnowHub, knowledge_id: str) -> dict[str, Any]:
    """Everything observable about a record: its fields and its earlier contents."""
    return {
        "record": client.knowledge.get(knowledge_id).to_dict(),
        "versions": [v.to_dict() for v in client.knowledge.versions(knowledge_id)],
    }


def helpful(n: int = 0) -> dict[str, Any]:
    """A case of a trace of its own (a user's cases count once per trace)."""
    return {"task": f"case {n}", "outcome": "worked", "trace_id": f"trace-{uuid.uuid4().hex}"}


# ---- Cases and counters ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["helpful", "harmful"])
def test_a_case_is_appended_with_its_fields_and_counted(hub: Harness, kind: str) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    updated = alice.knowledge.update(saved.id, **{f"add_{kind}_case": CASE})

    history = getattr(updated.eval, f"{kind}_history")
    other = updated.eval.harmful_history if kind == "helpful" else updated.eval.helpful_history
    assert other == []
    assert len(history) == 1
    case = history[0]
    assert (case.task, case.outcome, case.reason, case.trace_id, case.query_sequence) == (
        CASE["task"],
        CASE["outcome"],
        CASE["reason"],
        CASE["trace_id"],
        7,
    )
    assert case.timestamp == datetime(2026, 3, 5, 12, tzinfo=timezone.utc)
    expected = {"helpful": (2, 0), "harmful": (1, 1)}[kind]
    assert (updated.eval.helpful, updated.eval.harmful) == expected
    assert updated.eval.confidence == pytest.approx(expected[0] / (sum(expected) + 1))
    assert alice.knowledge.get(saved.id).eval == updated.eval


def test_a_case_without_a_timestamp_gets_the_servers_time(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    updated = alice.knowledge.update(saved.id, add_helpful_case={"task": "t", "outcome": "ok"})
    stamp = updated.eval.helpful_history[0].timestamp
    assert stamp is not None and saved.created_at is not None
    assert stamp >= saved.created_at


@pytest.mark.parametrize(
    ("helpful_cases", "harmful_cases"),
    [
        (0, 0),
        (3, 0),
        (0, 3),
        (2, 5),
        (4, 1),
    ],
)
def test_confidence_is_helpful_over_helpful_plus_harmful_plus_one(
    hub: Harness, helpful_cases: int, harmful_cases: int
) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    assert (saved.eval.helpful, saved.eval.harmful, saved.eval.confidence) == (1, 0, 0.5)
    feedback = [
        {"knowledge_id": saved.id, "is_helpful": True, "case": helpful(n)}
        for n in range(helpful_cases)
    ]
    feedback += [
        {"knowledge_id": saved.id, "is_helpful": False, "case": helpful(n)}
        for n in range(harmful_cases)
    ]
    if feedback:
        assert all(r.ok for r in alice.knowledge.batch_update(feedback))
    record = alice.knowledge.get(saved.id)
    h, x = 1 + helpful_cases, harmful_cases
    assert (record.eval.helpful, record.eval.harmful) == (h, x)
    assert record.eval.confidence == pytest.approx(h / (h + x + 1))


@pytest.mark.parametrize("score", [1, 2, 3, 4, 5])
def test_update_score_sets_the_score(hub: Harness, score: int) -> None:
    alice = hub.client("alice")
    saved = save(alice, score=1 if score != 1 else 5)
    updated = alice.knowledge.update(saved.id, update_score=score)
    assert updated.eval.score == score
    assert alice.knowledge.get(saved.id).eval.score == score
    assert (updated.eval.helpful, updated.eval.harmful) == (1, 0)


@pytest.mark.parametrize("score", [0, 6, -1, 100])
def test_update_score_out_of_range_is_refused_and_changes_nothing(hub: Harness, score: int) -> None:
    alice = hub.client("alice")
    saved = save(alice, score=4)
    before = snapshot(alice, saved.id)
    with pytest.raises(errors.InvalidArgument) as raised:
        alice.knowledge.update(saved.id, add_helpful_case=helpful(), update_score=score)
    assert "update_score" in raised.value.message
    assert snapshot(alice, saved.id) == before


def test_an_update_with_nothing_to_change_is_refused(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    with pytest.raises(errors.InvalidArgument):
        alice.knowledge.update(saved.id)
    assert snapshot(alice, saved.id) == before


def test_several_changes_in_one_call_apply_together(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice, score=2)
    updated = alice.knowledge.update(
        saved.id,
        add_helpful_case=helpful(1),
        add_harmful_case={**helpful(2), "reason": "stale"},
        update_score=5,
    )
    assert (updated.eval.score, updated.eval.helpful, updated.eval.harmful) == (5, 2, 1)
    assert [c.task for c in updated.eval.helpful_history] == ["case 1"]
    assert [c.reason for c in updated.eval.harmful_history] == ["stale"]
    assert updated.eval.confidence == pytest.approx(2 / 4)
    assert alice.knowledge.get(saved.id).to_dict() == updated.to_dict()


def test_updating_an_unknown_record_is_not_found(hub: Harness) -> None:
    with pytest.raises(errors.NotFound):
        hub.client("alice").knowledge.update(
            "knowledge-20990101-0123456789ab", add_helpful_case=helpful()
        )


# ---- Idempotency -----------------------------------------------------------------------


def test_the_same_request_id_counts_once(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    first = alice.knowledge.update(saved.id, add_helpful_case=helpful(1), request_id="req-1")
    again = alice.knowledge.update(saved.id, add_helpful_case=helpful(1), request_id="req-1")
    assert first.eval.helpful == again.eval.helpful == 2
    assert len(again.eval.helpful_history) == 1
    other = alice.knowledge.update(saved.id, add_helpful_case=helpful(2), request_id="req-2")
    assert other.eval.helpful == 3
    plain = [alice.knowledge.update(saved.id, add_helpful_case=helpful(3)) for _ in range(2)]
    assert plain[-1].eval.helpful == 5
    assert alice.knowledge.get(saved.id).eval.helpful == 5


def test_batch_items_with_the_same_request_id_count_once(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    item = {
        "knowledge_id": saved.id,
        "is_helpful": False,
        "case": helpful(),
        "request_id": "batch-7",
    }
    results = alice.knowledge.batch_update([item, item])
    assert all(r.ok for r in results)
    assert alice.knowledge.batch_update([item])[0].ok
    # The same key through the single-record call is the same request too.
    alice.knowledge.update(saved.id, add_harmful_case=helpful(), request_id="batch-7")
    record = alice.knowledge.get(saved.id)
    assert record.eval.harmful == 1
    assert len(record.eval.harmful_history) == 1


# ---- Histories --------------------------------------------------------------------------


@pytest.mark.parametrize("is_helpful", [True, False])
def test_histories_keep_the_last_100_cases_while_counters_keep_counting(
    hub: Harness, is_helpful: bool
) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    results = alice.knowledge.batch_update(
        [
            {"knowledge_id": saved.id, "is_helpful": is_helpful, "case": helpful(n)}
            for n in range(105)
        ]
    )
    assert all(r.ok for r in results)
    record = alice.knowledge.get(saved.id)
    history = record.eval.helpful_history if is_helpful else record.eval.harmful_history
    assert [c.task for c in history] == [f"case {n}" for n in range(5, 105)]
    if is_helpful:
        assert (record.eval.helpful, record.eval.harmful) == (106, 0)
    else:
        assert (record.eval.helpful, record.eval.harmful) == (1, 105)


# ---- Who may give feedback --------------------------------------------------------------


def test_a_non_owner_who_sees_the_record_may_give_feedback(hub: Harness) -> None:
    alice, carol = hub.client("alice"), hub.client("carol")
    saved = save(alice)
    updated = carol.knowledge.update(
        saved.id, add_helpful_case=helpful(), add_harmful_case=helpful()
    )
    assert (updated.eval.helpful, updated.eval.harmful, updated.eval.score) == (2, 1, 3)
    assert alice.knowledge.get(saved.id).eval == updated.eval


def test_a_caller_who_cannot_see_the_record_cannot_give_feedback(hub: Harness) -> None:
    alice, bob = hub.client("alice"), hub.client("bob")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    with pytest.raises(errors.NotFound):
        bob.knowledge.update(saved.id, add_helpful_case=helpful())
    result = bob.knowledge.batch_update([{"knowledge_id": saved.id, "is_helpful": True}])
    assert result[0].error is not None and result[0].error["code"] == "NOT_FOUND"
    assert snapshot(alice, saved.id) == before


# ---- Evolve -----------------------------------------------------------------------------


def test_evolve_rewrites_the_content_and_keeps_the_previous_one(
    llm_hub: Harness, llm: OpenAIStub
) -> None:
    alice = llm_hub.client("alice")
    saved = save(alice, task="scrape the price list", content="parse the table with regex")
    llm.script({"content": "parse the table with an HTML parser, never regex"})
    updated = alice.knowledge.update(saved.id, evolve_feedback="regex broke on nested tags")

    assert updated.content == "parse the table with an HTML parser, never regex"
    assert updated.task == saved.task
    assert alice.knowledge.get(saved.id).content == updated.content
    versions = alice.knowledge.versions(saved.id)
    assert [(v.content, v.reason, v.feedback) for v in versions] == [
        ("parse the table with regex", "evolve", "regex broke on nested tags")
    ]
    assert versions[0].replaced_at is not None

    assert len(llm.chat_requests) == 1
    prompt = "\n".join(m["content"] for m in llm.chat_requests[0]["messages"])
    for part in (
        "scrape the price list",
        "parse the table with regex",
        "regex broke on nested tags",
    ):
        assert part in prompt

    # Recall follows the new text.
    assert [h.knowledge.id for h in alice.knowledge.search("HTML parser")] == [saved.id]

    llm.script({"content": "use lxml.html"})
    alice.knowledge.update(saved.id, evolve_feedback="name the library")
    assert [v.content for v in alice.knowledge.versions(saved.id)] == [
        updated.content,
        "parse the table with regex",
    ]


def test_evolve_and_feedback_in_one_call_apply_together(llm_hub: Harness, llm: OpenAIStub) -> None:
    alice = llm_hub.client("alice")
    saved = save(alice)
    llm.script('Here you go:\n```json\n{"content": "rotate keys weekly"}\n```')
    updated = alice.knowledge.update(
        saved.id, add_helpful_case=helpful(), evolve_feedback="monthly is too slow"
    )
    assert updated.content == "rotate keys weekly"
    assert updated.eval.helpful == 2


def test_an_admin_may_evolve_someone_elses_record(llm_hub: Harness, llm: OpenAIStub) -> None:
    saved = save(llm_hub.client("alice"))
    llm.script({"content": "rotate them and audit access"})
    updated = llm_hub.client("admin").knowledge.update(saved.id, evolve_feedback="add audit")
    assert updated.content == "rotate them and audit access"


def test_evolve_without_an_llm_fails_and_changes_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    with pytest.raises(errors.FailedPrecondition) as raised:
        alice.knowledge.update(
            saved.id, add_helpful_case=helpful(), update_score=5, evolve_feedback="be more specific"
        )
    assert "LLM" in raised.value.message
    assert snapshot(alice, saved.id) == before


@pytest.mark.parametrize(
    "reply",
    [
        Failure(500),
        Failure(503),
        "Sure! I rewrote it to be better.",
        {"content": ""},
        {"content": "   "},
        {"text": "rotate weekly"},
        {"content": ["rotate", "weekly"]},
    ],
    ids=["http-500", "http-503", "garbage", "empty", "blank", "no-content", "not-a-string"],
)
def test_evolve_with_a_failing_llm_is_unavailable_and_changes_nothing(
    llm_hub: Harness, llm: OpenAIStub, reply: str | Failure | dict[str, Any]
) -> None:
    alice = llm_hub.client("alice")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    llm.script(reply)
    with pytest.raises(errors.Unavailable):
        alice.knowledge.update(
            saved.id,
            add_helpful_case=helpful(),
            update_score=5,
            evolve_feedback="be more specific",
            request_id="evolve-1",
        )
    assert len(llm.chat_requests) == 1
    assert snapshot(alice, saved.id) == before

    # The failed call did not use up its request_id: the retry applies.
    llm.script({"content": "rotate them weekly"})
    updated = alice.knowledge.update(
        saved.id,
        add_helpful_case=helpful(),
        update_score=5,
        evolve_feedback="be more specific",
        request_id="evolve-1",
    )
    assert (updated.content, updated.eval.helpful, updated.eval.score) == (
        "rotate them weekly",
        2,
        5,
    )


def test_evolve_by_a_non_owner_is_refused(llm_hub: Harness, llm: OpenAIStub) -> None:
    alice, carol = llm_hub.client("alice"), llm_hub.client("carol")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    llm.script({"content": "carol's version"})
    with pytest.raises(errors.PermissionDenied):
        carol.knowledge.update(saved.id, add_helpful_case=helpful(), evolve_feedback="my take")
    assert llm.chat_requests == []
    assert snapshot(alice, saved.id) == before


def test_evolve_of_an_invisible_record_is_not_found(llm_hub: Harness, llm: OpenAIStub) -> None:
    alice, bob = llm_hub.client("alice"), llm_hub.client("bob")
    saved = save(alice)
    before = snapshot(alice, saved.id)
    with pytest.raises(errors.NotFound):
        bob.knowledge.update(saved.id, evolve_feedback="my take")
    assert llm.chat_requests == []
    assert snapshot(alice, saved.id) == before


# ---- Concurrency ----------------------------------------------------------------------


@pytest.fixture(params=["edge", "qdrant-client"])
def any_store_hub(
    request: pytest.FixtureRequest, tmp_path: Path, tokens_file: Path
) -> Iterator[Harness]:
    """A hub over the embedded Edge store, or over the qdrant-client adapter."""
    settings = {"qdrant_url": ":memory:"} if request.param == "qdrant-client" else {}
    # 32 concurrent callers share two tokens here: no limit of calls in progress per token.
    harness = Harness(
        tmp_path / "data", tokens_file=tokens_file, calls_per_caller_max=0, **settings
    ).start()
    yield harness
    harness.stop()


def test_concurrent_feedback_never_loses_an_increment(any_store_hub: Harness) -> None:
    owner = any_store_hub.client("alice")
    saved = save(owner)
    clients = [any_store_hub.client("carol" if n % 2 else "alice") for n in range(32)]

    def give(n: int) -> int:
        client = clients[n % len(clients)]
        return client.knowledge.update(saved.id, add_helpful_case=helpful(n)).eval.helpful

    with ThreadPoolExecutor(max_workers=32) as pool:
        seen = list(pool.map(give, range(200)))

    record = owner.knowledge.get(saved.id)
    assert record.eval.helpful == 201
    # Every call saw its own increment applied on top of a distinct predecessor.
    assert sorted(seen) == list(range(2, 202))
    assert len(record.eval.helpful_history) == 100
    assert record.eval.confidence == pytest.approx(201 / 202)


# ---- Batch update ------------------------------------------------------------------------


def test_batch_update_reports_each_item_and_applies_the_good_ones(hub: Harness) -> None:
    alice, bob = hub.client("alice"), hub.client("bob")
    first, second, untouched = save(alice), save(alice), save(alice)
    bobs = save(bob, scopes=["org:globex"])
    before_untouched = snapshot(alice, untouched.id)
    before_bobs = snapshot(bob, bobs.id)

    results = alice.knowledge.batch_update(
        [
            {"knowledge_id": first.id, "is_helpful": True, "case": helpful(1)},
            {"knowledge_id": "knowledge-20990101-0123456789ab", "is_helpful": True},
            {"knowledge_id": bobs.id, "is_helpful": False},
            {"knowledge_id": untouched.id, "is_helpful": True, "case": {"task": "x" * 4001}},
            {
                "knowledge_id": second.id,
                "is_helpful": False,
                "case": {**helpful(2), "reason": "timed out"},
            },
            {"knowledge_id": "", "is_helpful": True},
        ]
    )

    assert [r.knowledge_id for r in results] == [
        first.id,
        "knowledge-20990101-0123456789ab",
        bobs.id,
        untouched.id,
        second.id,
        "",
    ]
    assert [r.ok for r in results] == [True, False, False, False, True, False]
    codes = [r.error["code"] if r.error else None for r in results]
    assert codes == [None, "NOT_FOUND", "NOT_FOUND", "INVALID_ARGUMENT", None, "INVALID_ARGUMENT"]
    for result in results:
        if result.error is not None:
            assert set(result.error) == {"code", "message"}
            assert result.error["message"]
            assert result.knowledge is None
    assert "feedback_list[3].case.task" in results[3].error["message"]  # type: ignore[index]
    assert "feedback_list[5]" in results[5].error["message"]  # type: ignore[index]

    assert results[0].knowledge is not None and results[0].knowledge.eval.helpful == 2
    assert alice.knowledge.get(first.id).eval.helpful == 2
    second_now = alice.knowledge.get(second.id)
    assert (second_now.eval.helpful, second_now.eval.harmful) == (1, 1)
    assert second_now.eval.harmful_history[0].reason == "timed out"
    assert snapshot(alice, untouched.id) == before_untouched
    assert snapshot(bob, bobs.id) == before_bobs


def test_an_empty_batch_update_is_refused(hub: Harness) -> None:
    with pytest.raises(errors.InvalidArgument) as raised:
        hub.client("alice").knowledge.batch_update([])
    assert "feedback_list" in raised.value.message


def test_save_with_a_request_id_creates_the_record_once(hub: Harness) -> None:
    alice = hub.client("alice")
    first = alice.knowledge.save(
        task="once", content="only once", types=["tool"], request_id="commit-1"
    )
    again = alice.knowledge.save(
        task="once", content="only once", types=["tool"], request_id="commit-1"
    )
    batch = alice.knowledge.save_many(
        [
            {"task": "once", "content": "only once", "types": ["tool"], "request_id": "commit-1"},
            {"task": "other", "content": "new", "types": ["tool"], "request_id": "commit-2"},
        ]
    )
    assert again.id == first.id == batch[0].id
    assert batch[1].id != first.id
    assert sorted(k.task for k in alice.knowledge.list(limit=10)) == ["once", "other"]


def test_request_ids_are_per_user(hub: Harness) -> None:
    alice, carol = hub.client("alice"), hub.client("carol")
    mine = alice.knowledge.save(task="a", content="alice's", types=["tool"], request_id="r")
    theirs = carol.knowledge.save(task="c", content="carol's", types=["tool"], request_id="r")
    assert mine.id != theirs.id
    assert theirs.content == "carol's"


def test_concurrent_retries_of_one_save_create_one_record(hub: Harness) -> None:
    alice = hub.client("alice")
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(
            pool.map(
                lambda _: (
                    alice.knowledge.save(
                        task="raced", content="one", types=["tool"], request_id="race"
                    ).id
                ),
                range(16),
            )
        )
    assert len(ids) == 1
    assert [k.task for k in alice.knowledge.list(limit=10)] == ["raced"]


def test_a_save_whose_first_attempt_died_after_its_claim_is_completed(tmp_path: Path) -> None:
    from knowhub_server.common.runtime.peers import Peers
    from knowhub_server.common.security.auth import LOCAL_PRINCIPAL
    from knowhub_server.common.storage.edge_store import EdgeStore
    from knowhub_server.knowledge.cognition_client import CognitionClient
    from knowhub_server.knowledge.config import KnowledgeSettings
    from knowhub_server.knowledge.domain import Draft
    from knowhub_server.knowledge.operations import KnowledgeOperations
    from knowhub_server.knowledge.resource_client import ResourceClient
    from knowhub_server.knowledge.store import KnowledgeStore, KnowledgeVectors

    settings = KnowledgeSettings()
    store = KnowledgeStore(EdgeStore(tmp_path), KnowledgeVectors(None), settings)
    peers = Peers(object())
    operations = KnowledgeOperations(
        store, settings, None, ResourceClient(peers, 1), CognitionClient(peers)
    )
    # The first attempt claimed its key, then the process died before saving the record.
    store.claim_request("user:local:commit-9", "knowledge-20260101-aaaaaaaaaaaa")
    saved, existing = operations.save(
        LOCAL_PRINCIPAL, Draft(task="t", content="c", types=["tool"], request_id="commit-9")
    )
    assert existing is False
    assert saved.id == "knowledge-20260101-aaaaaaaaaaaa"
    assert store.get(saved.id) is not None
