"""Slim: near-duplicate records that share owner and scopes are
merged, by the LLM when there is one, else by keeping the best record and folding the
others' feedback into it."""

from __future__ import annotations

from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, SlimReport, errors

from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.openai_stub import Failure, OpenAIStub

TASK = "sailing checklist"
WORDS = "pelican harbor anchor compass lantern rope tide beacon"
# Token Jaccard with ORIGINAL (10 tokens with the task): NEAR 10/11 = 0.91,
# LOOSE 10/14 = 0.71 (and 10/15 = 0.67 with NEAR).
ORIGINAL = WORDS
NEAR = WORDS + " zebra"
LOOSE = WORDS + " walrus otter heron moose"
OTHER = "grind the coffee beans just before brewing"


def save(client: KnowHub, content: str, **fields: Any) -> Knowledge:
    values: dict[str, Any] = {
        "task": TASK,
        "content": content,
        "types": ["plan"],
        "scopes": ["org:acme"],
    }
    values.update(fields)
    return client.knowledge.save(**values)


def give(
    client: KnowHub, knowledge_id: str, *, helpful: int = 0, harmful: int = 0, label: str = ""
) -> None:
    feedback = [
        {
            "knowledge_id": knowledge_id,
            "is_helpful": True,
            "case": {"task": f"{label} helpful {n}", "outcome": "ok"},
        }
        for n in range(helpful)
    ]
    feedback += [
        {
            "knowledge_id": knowledge_id,
            "is_helpful": False,
            "case": {"task": f"{label} harmful {n}", "outcome": "bad"},
        }
        for n in range(harmful)
    ]
    assert all(r.ok for r in client.knowledge.batch_update(feedback))


def snapshot(client: KnowHub, records: list[Knowledge]) -> dict[str, Any]:
    return {
        r.id: (
            client.knowledge.get(r.id).to_dict(),
            [v.to_dict() for v in client.knowledge.versions(r.id)],
        )
        for r in records
    }


def groups(report: SlimReport) -> list[tuple[str, set[str]]]:
    return sorted((g.kept_id, set(g.removed_ids)) for g in report.groups)


@pytest.fixture
def merge_hub(start_hub: StartHub, llm: OpenAIStub) -> Harness:
    """A hub with the scripted LLM whose operator also allows `merge-model`."""
    return start_hub(
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=5,
        llm_allowed_models=["merge-model"],
    )


def exists(client: KnowHub, knowledge_id: str) -> bool:
    try:
        client.knowledge.get(knowledge_id)
    except errors.NotFound:
        return False
    return True


# ---- Finding near-duplicates -------------------------------------------------------------


@pytest.mark.parametrize(
    ("similarity", "grouped"),
    [
        (None, {"original", "near"}),  # default 0.8
        ("0.7", {"original", "near", "loose"}),
        ("0.95", set()),
    ],
)
def test_near_duplicates_are_records_with_enough_shared_tokens(
    start_hub: StartHub, similarity: str | None, grouped: set[str]
) -> None:
    env = {"KNOWHUB_SLIM_SIMILARITY": similarity} if similarity else {}
    alice = start_hub(env).client("alice")
    saved = {
        "original": save(alice, ORIGINAL),
        "near": save(alice, NEAR),
        "loose": save(alice, LOOSE),
        "other": save(alice, OTHER),
    }
    report = alice.knowledge.slim(dry_run=True)
    assert report.examined == 4
    if not grouped:
        assert report.groups == []
        return
    assert len(report.groups) == 1
    group = report.groups[0]
    assert {group.kept_id, *group.removed_ids} == {saved[name].id for name in grouped}
    assert len(group.removed_ids) == len(grouped) - 1


def test_records_with_another_owner_or_other_scopes_are_never_grouped(hub: Harness) -> None:
    alice, carol, admin = hub.client("alice"), hub.client("carol"), hub.client("admin")
    original = save(alice, ORIGINAL)
    near = save(alice, NEAR)
    others = [
        save(alice, ORIGINAL, scopes=["public"]),  # other scopes
        save(alice, NEAR, scopes=["org:acme", "public"]),  # a superset of scopes
        save(alice, ORIGINAL, owner="user:alice"),  # same creator, other owner
        save(carol, ORIGINAL),  # another user
    ]
    # The admin may slim all of these: only alice's same-owner, same-scope pair groups.
    report = admin.knowledge.slim(dry_run=True)
    assert report.examined == 6
    assert groups(report) == [(near.id, {original.id})]

    admin.knowledge.slim()
    assert not exists(alice, original.id)
    assert all(exists(alice, r.id) for r in [near, *others])


# ---- Dry run --------------------------------------------------------------------------------


def test_dry_run_reports_the_groups_and_changes_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    records = [save(alice, ORIGINAL), save(alice, NEAR), save(alice, OTHER)]
    give(alice, records[0].id, helpful=2)
    before = snapshot(alice, records)

    report = alice.knowledge.slim(dry_run=True)
    assert report.dry_run is True
    assert report.examined == 3
    assert groups(report) == [(records[0].id, {records[1].id})]
    assert snapshot(alice, records) == before

    # The real run does what the dry run announced.
    done = alice.knowledge.slim()
    assert done.dry_run is False
    assert groups(done) == groups(report)


def test_dry_run_does_not_ask_the_llm(merge_hub: Harness, llm: OpenAIStub) -> None:
    alice = merge_hub.client("alice")
    records = [save(alice, ORIGINAL), save(alice, NEAR)]
    before = snapshot(alice, records)
    report = alice.knowledge.slim(model="merge-model", dry_run=True)
    assert len(report.groups) == 1
    assert report.groups[0].merged_by_llm is False
    assert llm.chat_requests == []
    assert snapshot(alice, records) == before


# ---- Without an LLM: keep the best, fold the rest in ---------------------------------------


def test_without_an_llm_the_best_record_is_kept_and_absorbs_the_others(hub: Harness) -> None:
    alice = hub.client("alice")
    alice.resources.save("code/sailing/knots", "Knots", "bowline, cleat hitch")
    best = save(alice, ORIGINAL, score=4, tags={"origin": "best", "shared": "best"})
    near = save(
        alice, NEAR, tags={"shared": "near", "extra": "near"}, resource_ids=["code/sailing/knots"]
    )
    give(alice, best.id, helpful=2, harmful=1, label="best")  # 4 + 3 - 2 = 5
    give(alice, near.id, helpful=1, harmful=2, label="near")  # 3 + 2 - 4 = 1

    report = alice.knowledge.slim()
    assert groups(report) == [(best.id, {near.id})]
    group = report.groups[0]
    assert (group.merged_by_llm, group.note) == (False, "")

    kept = alice.knowledge.get(best.id)
    assert not exists(alice, near.id)
    assert kept.content == ORIGINAL
    assert alice.knowledge.versions(best.id) == []
    assert (kept.eval.helpful, kept.eval.harmful) == (3 + 2, 1 + 2)
    assert kept.eval.confidence == pytest.approx(5 / (5 + 3 + 1))
    assert kept.eval.score == 4
    assert sorted(c.task for c in kept.eval.helpful_history) == [
        "best helpful 0",
        "best helpful 1",
        "near helpful 0",
    ]
    assert sorted(c.task for c in kept.eval.harmful_history) == [
        "best harmful 0",
        "near harmful 0",
        "near harmful 1",
    ]
    assert kept.resource_ids == ["code/sailing/knots"]
    assert kept.tags == {"origin": "best", "shared": "best", "extra": "near"}


def test_on_equal_quality_the_newest_record_is_kept(hub: Harness) -> None:
    alice = hub.client("alice")
    older, newer = save(alice, NEAR), save(alice, ORIGINAL)
    report = alice.knowledge.slim()
    assert groups(report) == [(newer.id, {older.id})]
    kept = alice.knowledge.get(newer.id)
    assert (kept.content, kept.eval.helpful) == (ORIGINAL, 2)
    assert not exists(alice, older.id)


def test_a_group_of_three_folds_into_one(start_hub: StartHub) -> None:
    alice = start_hub({"KNOWHUB_SLIM_SIMILARITY": "0.7"}).client("alice")
    records = [save(alice, ORIGINAL), save(alice, NEAR), save(alice, LOOSE)]
    give(alice, records[1].id, helpful=3)
    report = alice.knowledge.slim()
    assert groups(report) == [(records[1].id, {records[0].id, records[2].id})]
    kept = alice.knowledge.get(records[1].id)
    assert kept.eval.helpful == 4 + 1 + 1
    assert [r.id for r in alice.knowledge.list(limit=10)] == [records[1].id]


def test_a_second_slim_finds_nothing_more_to_do(hub: Harness) -> None:
    alice = hub.client("alice")
    records = [
        save(alice, ORIGINAL),
        save(alice, NEAR),
        save(alice, OTHER),
        save(alice, "other other " + OTHER),
    ]
    first = alice.knowledge.slim()
    assert len(first.groups) == 2
    remaining = snapshot(alice, [r for r in records if exists(alice, r.id)])
    assert len(remaining) == 2

    second = alice.knowledge.slim()
    assert second.groups == []
    assert second.examined == 2
    assert snapshot(alice, [r for r in records if r.id in remaining]) == remaining


# ---- With an LLM: merge the contents -------------------------------------------------------


def test_with_an_llm_the_group_is_merged_with_the_model_asked_for(
    merge_hub: Harness, llm: OpenAIStub
) -> None:
    alice = merge_hub.client("alice")
    best, near = save(alice, ORIGINAL, score=5), save(alice, NEAR)
    llm.script(
        {
            "task": "sailing checklist before leaving harbor",
            "content": "check anchor, compass, lantern, rope, tide and beacon; "
            "watch for zebra mussels",
        }
    )

    report = alice.knowledge.slim(model="merge-model")
    assert groups(report) == [(best.id, {near.id})]
    assert report.groups[0].merged_by_llm is True
    assert report.groups[0].note == ""

    assert len(llm.chat_requests) == 1
    request = llm.chat_requests[0]
    assert request["model"] == "merge-model"
    prompt = "\n".join(m["content"] for m in request["messages"])
    assert ORIGINAL in prompt and NEAR in prompt

    kept = alice.knowledge.get(best.id)
    assert kept.task == "sailing checklist before leaving harbor"
    assert kept.content.startswith("check anchor, compass")
    assert kept.eval.helpful == 2
    versions = alice.knowledge.versions(best.id)
    assert [(v.content, v.reason) for v in versions] == [(ORIGINAL, "slim")]
    assert not exists(alice, near.id)
    # Recall follows the merged text.
    hits = alice.knowledge.search("mussels")
    assert [h.knowledge.id for h in hits] == [best.id]


def test_without_a_model_argument_the_configured_model_merges(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(llm_base_url=llm.base_url, llm_model="configured-model", llm_max_retries=0)
    alice = hub.client("alice")
    save(alice, ORIGINAL)
    save(alice, NEAR)
    llm.script({"task": "merged", "content": "merged content"})
    report = alice.knowledge.slim()
    assert report.groups[0].merged_by_llm is True
    assert [r["model"] for r in llm.chat_requests] == ["configured-model"]


@pytest.mark.parametrize(
    "reply",
    [
        Failure(500),
        "I merged them for you!",
        {"task": "", "content": "merged"},
        {"task": "merged", "content": "   "},
        {"content": "only content"},
    ],
    ids=["http-500", "garbage", "empty-task", "blank-content", "no-task"],
)
def test_when_the_llm_fails_slim_keeps_the_best_record_with_a_note(
    merge_hub: Harness, llm: OpenAIStub, reply: str | Failure | dict[str, Any]
) -> None:
    alice = merge_hub.client("alice")
    best, near = save(alice, ORIGINAL, score=5), save(alice, NEAR)
    give(alice, near.id, harmful=1, label="near")
    llm.script(reply)

    report = alice.knowledge.slim(model="merge-model")
    assert groups(report) == [(best.id, {near.id})]
    group = report.groups[0]
    assert group.merged_by_llm is False
    assert group.note

    kept = alice.knowledge.get(best.id)
    assert (kept.task, kept.content) == (TASK, ORIGINAL)
    assert alice.knowledge.versions(best.id) == []
    assert (kept.eval.helpful, kept.eval.harmful) == (2, 1)
    assert not exists(alice, near.id)


def test_a_model_without_an_llm_is_refused_and_changes_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    records = [save(alice, ORIGINAL), save(alice, NEAR)]
    before = snapshot(alice, records)
    with pytest.raises(errors.FailedPrecondition) as raised:
        alice.knowledge.slim(model="merge-model")
    assert "LLM" in raised.value.message
    assert snapshot(alice, records) == before


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_model_the_operator_does_not_allow_is_refused_and_changes_nothing(
    llm_hub: Harness, llm: OpenAIStub, dry_run: bool
) -> None:
    alice = llm_hub.client("alice")
    records = [save(alice, ORIGINAL), save(alice, NEAR)]
    before = snapshot(alice, records)
    with pytest.raises(errors.InvalidArgument) as raised:
        alice.knowledge.slim(model="gpt-4-32k-at-your-cost", dry_run=dry_run)
    assert raised.value.message.startswith("model:")
    assert "gpt-4o-mini" in raised.value.message  # what the hub allows
    assert llm.chat_requests == []
    assert snapshot(alice, records) == before


def test_the_configured_model_may_be_named(llm_hub: Harness, llm: OpenAIStub) -> None:
    alice = llm_hub.client("alice")
    save(alice, ORIGINAL)
    save(alice, NEAR)
    llm.script({"task": "merged", "content": "merged content"})
    assert alice.knowledge.slim(model="gpt-4o-mini").groups[0].merged_by_llm is True
    assert [r["model"] for r in llm.chat_requests] == ["gpt-4o-mini"]


# ---- Whose records ----------------------------------------------------------------------


def test_a_non_admin_slims_only_what_it_owns_or_created(hub: Harness) -> None:
    alice, carol = hub.client("alice"), hub.client("carol")
    alices = [save(alice, ORIGINAL), save(alice, NEAR)]
    carols = [save(carol, ORIGINAL), save(carol, NEAR)]
    before = snapshot(alice, alices)

    report = carol.knowledge.slim()
    assert report.examined == 2
    assert groups(report) == [(carols[1].id, {carols[0].id})]
    assert snapshot(alice, alices) == before
    assert not exists(carol, carols[0].id)

    report = alice.knowledge.slim()
    assert groups(report) == [(alices[1].id, {alices[0].id})]
