"""ListKnowledge: order, paging, filters, page tokens; and ListKnowledgeVersions.

The tests share one server. Each one either filters on a scope no other test here writes
into, or only looks at the relative order of the records it saved itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge

from tests.support.harness import Harness
from tests.support.shared import failure, running_hub


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with running_hub(tmp_path_factory.mktemp("list")) as harness:
        yield harness


@pytest.fixture(scope="module")
def alice(server: Harness) -> KnowHub:
    return server.client("alice")


@pytest.fixture(scope="module")
def bob(server: Harness) -> KnowHub:
    return server.client("bob")


def item(task: str, **fields: Any) -> dict[str, Any]:
    return {"task": task, "content": f"content of {task}", "types": ["strategy"], **fields}


def save_each(client: KnowHub, count: int, **fields: Any) -> list[Knowledge]:
    """`count` records saved one call at a time, oldest first."""
    return [client.knowledge.save(**item(f"record {i}", **fields)) for i in range(count)]


def pages(client: KnowHub, page_size: int, **filters: Any) -> list[list[Knowledge]]:
    """Every page of a listing, following next_page_token until it is empty."""
    result: list[list[Knowledge]] = []
    token = ""
    while True:
        page = client.knowledge.list(limit=page_size, page_token=token, **filters)
        result.append(list(page))
        token = page.next_page_token
        if not token:
            return result


def ids(records: list[Knowledge]) -> list[str]:
    return [k.id for k in records]


def only(listed: list[Knowledge], mine: list[Knowledge]) -> list[str]:
    """The ids of `mine` in the order the listing gave them."""
    wanted = set(ids(mine))
    return [k.id for k in listed if k.id in wanted]


def in_order(times: list[datetime | None], *, descending: bool) -> bool:
    """Whether every time is set and they never go the wrong way."""
    if any(t is None for t in times):
        return False
    return times == sorted(times, reverse=descending)  # type: ignore[type-var]


def rate(client: KnowHub, record: Knowledge, helpful: int, harmful: int) -> Knowledge:
    """Adds helpful and harmful cases, returning the record as it then is."""
    cases = [
        {
            "knowledge_id": record.id,
            "is_helpful": kind,
            "case": {"trace_id": f"trace-{uuid.uuid4().hex}"},
        }
        for kind in [True] * helpful + [False] * harmful
    ]
    if cases:
        assert all(r.ok for r in client.knowledge.batch_update(cases))
    return client.knowledge.get(record.id)


# ---- Order by updated_at (the default) ------------------------------------------------------


def test_default_order_is_newest_updated_first(alice: KnowHub) -> None:
    saved = save_each(alice, 5, scopes=["user:alice"])

    listed = list(alice.knowledge.list(limit=100, scopes=["user:alice"]))
    assert ids(listed) == ids(saved)[::-1]
    assert in_order([k.updated_at for k in listed], descending=True)

    alice.knowledge.update(saved[1].id, add_helpful_case={"task": "touch"})
    relisted = alice.knowledge.list(limit=100, scopes=["user:alice"])
    assert ids(relisted) == [saved[1].id, *[k.id for k in listed if k.id != saved[1].id]]


def test_paging_returns_each_record_exactly_once(alice: KnowHub) -> None:
    saved = save_each(alice, 25, scopes=["project:p1"])

    result = pages(alice, 7, scopes=["project:p1"])

    assert [len(p) for p in result] == [7, 7, 7, 4]
    flat = [k.id for page in result for k in page]
    assert flat == ids(saved)[::-1]


def test_a_page_that_ends_exactly_at_the_end_has_no_next_token(alice: KnowHub) -> None:
    save_each(alice, 6, scopes=["agent:alice_bot"])
    first = alice.knowledge.list(limit=6, scopes=["agent:alice_bot"])
    assert len(first) == 6
    assert first.next_page_token == ""
    halves = pages(alice, 3, scopes=["agent:alice_bot"])
    assert [len(p) for p in halves] == [3, 3]


def test_the_default_page_size_is_ten(alice: KnowHub) -> None:
    saved = save_each(alice, 12, scopes=["team:t1"], types=["usecase"])
    first = alice.knowledge.list(scopes=["team:t1"], types=["usecase"])
    assert ids(first) == ids(saved)[::-1][:10]
    assert first.next_page_token
    rest = alice.knowledge.list(
        scopes=["team:t1"], types=["usecase"], page_token=first.next_page_token
    )
    assert ids(rest) == ids(saved)[::-1][10:]
    assert rest.next_page_token == ""


def test_a_batch_keeps_its_order(alice: KnowHub) -> None:
    batch = alice.knowledge.save_many([item(f"batch {i}") for i in range(20)])

    listed = [k for page in pages(alice, 100) for k in page]

    assert only(listed, batch) == ids(batch)[::-1]
    assert in_order([k.created_at for k in batch], descending=False)


# ---- Order by confidence, then helpful ---------------------------------------------------


def test_confidence_order_sorts_by_confidence_then_helpful(alice: KnowHub) -> None:
    a, b, c, d, e = save_each(alice, 5, types=["user_profile"])
    rated = {
        "a": rate(alice, a, 0, 0),  # helpful 1, harmful 0: 1/2
        "b": rate(alice, b, 2, 0),  # 3, 0: 3/4
        "c": rate(alice, c, 0, 1),  # 1, 1: 1/3
        "d": rate(alice, d, 1, 1),  # 2, 1: 2/4, more helpful than a
        "e": rate(alice, e, 3, 1),  # 4, 1: 4/6
    }
    assert [rated[n].eval.confidence for n in "bedac"] == pytest.approx(
        [0.75, 4 / 6, 0.5, 0.5, 1 / 3]
    )

    listed = list(alice.knowledge.list(limit=100, types=["user_profile"], order="confidence"))

    assert ids(listed) == [rated[n].id for n in "bedac"]
    newest_first = alice.knowledge.list(limit=100, types=["user_profile"])
    assert ids(newest_first) == [rated[n].id for n in "edcba"]


def test_confidence_paging_with_many_ties_returns_each_once(alice: KnowHub) -> None:
    saved = save_each(alice, 23, scopes=["public"], types=["definition"])
    boosted = [rate(alice, saved[i], helpful, 0) for i, helpful in ((3, 2), (11, 1), (17, 1))]
    lowered = rate(alice, saved[5], 0, 1)

    result = pages(alice, 4, scopes=["public"], types=["definition"], order="confidence")

    flat = [k for page in result for k in page]
    assert len(result) == 6
    assert sorted(ids(flat)) == sorted(ids(saved))
    assert len(set(ids(flat))) == 23
    keys = [(k.eval.confidence, k.eval.helpful) for k in flat]
    assert keys == sorted(keys, reverse=True)
    assert flat[0].id == boosted[0].id
    assert {k.id for k in flat[1:3]} == {boosted[1].id, boosted[2].id}
    assert flat[-1].id == lowered.id


# ---- Filters -----------------------------------------------------------------------------


def test_types_filter_matches_any_of_the_types(alice: KnowHub) -> None:
    saved = {
        "tool": alice.knowledge.save(**item("t", types=["tool"], scopes=["org:acme"])),
        "plan": alice.knowledge.save(**item("p", types=["plan"], scopes=["org:acme"])),
        "both": alice.knowledge.save(**item("tp", types=["tool", "plan"], scopes=["org:acme"])),
    }

    def listed(types: list[str]) -> set[str]:
        found = {k.id for page in pages(alice, 100, types=types) for k in page}
        return found & {k.id for k in saved.values()}

    assert listed(["plan"]) == {saved["plan"].id, saved["both"].id}
    assert listed(["tool"]) == {saved["tool"].id, saved["both"].id}
    assert listed(["tool", "plan"]) == {k.id for k in saved.values()}
    assert listed(["user_profile", "usecase"]) == set()
    for record in alice.knowledge.list(limit=100, types=["plan"]):
        assert "plan" in record.types


def test_scopes_filter_is_intersected_with_what_the_caller_sees(
    alice: KnowHub, bob: KnowHub
) -> None:
    theirs = bob.knowledge.save(**item("globex secret"))
    assert theirs.scopes == ["org:globex"]
    assert theirs.id in ids(bob.knowledge.list(limit=100, scopes=["org:globex"]))

    assert list(alice.knowledge.list(limit=100, scopes=["org:globex"])) == []
    assert alice.knowledge.list(limit=100, scopes=["org:globex"]).next_page_token == ""
    mixed = [k for page in pages(alice, 100, scopes=["org:globex", "org:acme"]) for k in page]
    assert mixed
    assert theirs.id not in ids(mixed)
    assert all("org:acme" in k.scopes for k in mixed)


# ---- Page tokens -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def token_of_acme(alice: KnowHub) -> str:
    """A next_page_token of alice's newest-first listing of org:acme, page size 2."""
    save_each(alice, 3, scopes=["org:acme"], types=["plan"])
    token = alice.knowledge.list(limit=2, scopes=["org:acme"]).next_page_token
    assert token
    return token


@pytest.mark.parametrize(
    "other",
    [
        {"order": "confidence"},
        {"types": ["plan"]},
        {"scopes": ["org:acme", "public"]},
        {"scopes": None},  # every visible scope
    ],
    ids=["order", "types", "scopes", "no-scopes"],
)
def test_a_page_token_only_works_for_its_own_listing(
    alice: KnowHub, token_of_acme: str, other: dict[str, Any]
) -> None:
    code, message = failure(
        lambda: alice.knowledge.list(
            limit=2, page_token=token_of_acme, **{"scopes": ["org:acme"], **other}
        )
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith("page_token:"), message


@pytest.mark.parametrize("scopes", [["org:acme"], ["org:globex"], None])
def test_a_page_token_does_not_work_for_another_caller(
    bob: KnowHub, token_of_acme: str, scopes: list[str] | None
) -> None:
    code, message = failure(
        lambda: bob.knowledge.list(limit=2, page_token=token_of_acme, scopes=scopes)
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith("page_token:"), message


def test_a_garbage_page_token_is_rejected_even_for_an_empty_listing(alice: KnowHub) -> None:
    assert list(alice.knowledge.list(scopes=["org:globex"])) == []
    code, message = failure(
        lambda: alice.knowledge.list(scopes=["org:globex"], page_token="garbage")
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith("page_token:"), message


def test_a_page_token_may_change_the_page_size(alice: KnowHub, token_of_acme: str) -> None:
    first = alice.knowledge.list(limit=2, scopes=["org:acme"])
    rest = [k for page in pages(alice, 100, scopes=["org:acme"]) for k in page]
    following = alice.knowledge.list(limit=100, scopes=["org:acme"], page_token=token_of_acme)
    assert ids(following) == ids(rest)[2:]
    assert not set(ids(first)) & set(ids(following))


# ---- Versions ----------------------------------------------------------------------------


def test_a_fresh_record_has_no_versions(alice: KnowHub) -> None:
    saved = alice.knowledge.save(**item("fresh"))
    assert alice.knowledge.versions(saved.id) == []
    alice.knowledge.update(saved.id, add_helpful_case={"task": "used"}, update_score=5)
    assert alice.knowledge.versions(saved.id) == []
