"""SearchEvents: hard isolation by group, user and tenant; time range; the time-decay
rerank and its candidates; defaults by mode; validation. One server, no LLM (events are
stored as written)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from tests.dream.support import FAST_HISTORIAN, Queue, group_context, memory_settings
from tests.dream.support import private_context as private
from tests.support.harness import Harness
from tests.support.shared import bearer, failure, running_hub

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

DAY = 86_400.0
NOW = time.time()
# The same visit on three days is three events here: reconciliation (which would take the
# later ones, stored as written without an LLM, for exact duplicates) is off.
ENV = {
    **FAST_HISTORIAN,
    "KNOWHUB_MEMORY_AUTO_TOP_K": "2",
    "KNOWHUB_MEMORY_TOOL_DEFAULT_TOP_K": "4",
    "KNOWHUB_MEMORY_RECONCILE_CANDIDATES": "0",
}

# (principal, observation, context, days ago, scope)
MEMORIES: list[tuple[str, str, dict[str, Any], float, str]] = [
    (
        "alice",
        "The 30001 group plans a hiking trip to Mount Tai",
        group_context("30001", user_id="40001"),
        2,
        "",
    ),
    (
        "alice",
        "The 30002 group plans a hiking trip to Mount Hua",
        group_context("30002", user_id="40001"),
        2,
        "",
    ),
    ("alice", "User 40002 bought hiking boots", private("40002"), 1, ""),
    ("alice", "User 40003 keeps a secret hiking plan", private("40003"), 1, "user:alice"),
    ("alice", "User 40004 likes hiking poles", private("40004"), 3, ""),
    (
        "bob",
        "The 30001 group of globex plans a hiking trip to Mount Fuji",
        group_context("30001", user_id="40001"),
        2,
        "",
    ),
    ("alice", "User 40050 published an orienteering map", private("40050"), 1, "public"),
    ("alice", "User 40010 visited the aquarium", private("40010"), 30, ""),
    ("alice", "User 40010 visited the aquarium", private("40010"), 10, ""),
    ("alice", "User 40010 visited the aquarium", private("40010"), 1, ""),
    ("alice", "User 40020 repaired the red bicycle chain", private("40020"), 100, ""),
    (
        "alice",
        "User 40020 mentioned a bicycle once while filling tax forms in the garden",
        private("40020"),
        0,
        "",
    ),
    ("alice", "User 40030 zebra quokka narwhal", private("40030"), 1000, ""),
    ("alice", "User 40030 zebra quokka narwhal okapi", private("40030"), 0, ""),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Harness]:
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ENV.items():
            patch.setenv(name, value)
        with running_hub(
            tmp_path_factory.mktemp("search"), **memory_settings(redis_url, prefix)
        ) as harness:
            for principal, observation, context, days, scope in MEMORIES:
                harness.client(principal).memory.remember(
                    "",
                    [observation],
                    context={**context, "timestamp": NOW - days * DAY},
                    scope=scope or None,
                )
            Queue(redis_url, prefix).wait_drained()
            yield harness


@pytest.fixture(scope="module")
def alice(server: Harness) -> KnowHub:
    return server.client("alice")


def texts(hits: list[Any]) -> list[str]:
    return [h.event.text for h in hits]


# ---- Isolation ----------------------------------------------------------------------------------


def test_a_group_search_sees_only_that_group(alice: KnowHub) -> None:
    hits = alice.memory.search_events("hiking trip", target_group_id="30001", top_k=100)
    assert texts(hits) == ["The 30001 group plans a hiking trip to Mount Tai"]
    assert hits[0].event.perspective == "group"
    hits = alice.memory.search_events("Mount Tai hiking", target_group_id="30002")
    assert texts(hits) == ["The 30002 group plans a hiking trip to Mount Hua"]


def test_another_tenants_events_are_never_returned(server: Harness) -> None:
    bob, carol = server.client("bob"), server.client("carol")
    assert texts(bob.memory.search_events("hiking trip", target_group_id="30001")) == [
        "The 30001 group of globex plans a hiking trip to Mount Fuji"
    ]
    assert texts(carol.memory.search_events("hiking trip", target_group_id="30001")) == [
        "The 30001 group plans a hiking trip to Mount Tai"
    ]  # same org as alice
    assert "Fuji" not in " ".join(
        texts(server.client("alice").memory.search_events("Mount Fuji hiking trip", top_k=100))
    )


def test_a_private_search_sees_only_that_user(alice: KnowHub) -> None:
    hits = alice.memory.search_events("hiking", target_user_id="40002", top_k=100)
    assert texts(hits) == ["User 40002 bought hiking boots"]
    assert hits[0].event.perspective == "sender"
    # A user's own words in groups are part of their memory (private requests are
    # isolated by user_id); with a group as well, only that group's.
    assert sorted(texts(alice.memory.search_events("hiking trip", target_user_id="40001"))) == [
        "The 30001 group plans a hiking trip to Mount Tai",
        "The 30002 group plans a hiking trip to Mount Hua",
    ]
    assert texts(
        alice.memory.search_events("hiking trip", target_user_id="40001", target_group_id="30002")
    ) == ["The 30002 group plans a hiking trip to Mount Hua"]


def test_an_untargeted_search_returns_each_visible_event_once(alice: KnowHub) -> None:
    hits = alice.memory.search_events("hiking", top_k=100)
    assert sorted(texts(hits)) == sorted(
        [
            "The 30001 group plans a hiking trip to Mount Tai",
            "The 30002 group plans a hiking trip to Mount Hua",
            "User 40002 bought hiking boots",
            "User 40003 keeps a secret hiking plan",
            "User 40004 likes hiking poles",
        ]
    )
    assert {h.event.perspective for h in hits} == {"global"}


def test_scopes_narrow_and_public_memory_is_shared(server: Harness, alice: KnowHub) -> None:
    assert texts(alice.memory.search_events("hiking", scope="user:alice")) == [
        "User 40003 keeps a secret hiking plan"
    ]
    carol, bob = server.client("carol"), server.client("bob")
    assert "User 40003 keeps a secret hiking plan" not in texts(
        carol.memory.search_events("secret hiking plan", top_k=100)
    )
    assert texts(bob.memory.search_events("orienteering")) == [
        "User 40050 published an orienteering map"
    ]
    with pytest.raises(errors.PermissionDenied):
        bob.memory.search_events("hiking", scope="org:acme")


# ---- Time range and time decay ---------------------------------------------------------------


def test_the_time_range_is_a_hard_filter(alice: KnowHub) -> None:
    hits = alice.memory.search_events(
        "aquarium", target_user_id="40010", time_from=NOW - 15 * DAY, time_to=NOW - 5 * DAY
    )
    assert len(hits) == 1 and hits.warnings == ()
    assert abs(hits[0].event.timestamp.timestamp() - (NOW - 10 * DAY)) < 1
    assert (
        len(alice.memory.search_events("aquarium", target_user_id="40010", time_from=NOW - 2 * DAY))
        == 1
    )


def test_a_reversed_time_range_is_swapped_with_a_warning(alice: KnowHub) -> None:
    hits = alice.memory.search_events(
        "aquarium", target_user_id="40010", time_from=NOW - 5 * DAY, time_to=NOW - 15 * DAY
    )
    assert len(hits) == 1
    assert abs(hits[0].event.timestamp.timestamp() - (NOW - 10 * DAY)) < 1
    assert hits.warnings == ("time_from was after time_to; they were swapped",)


def decayed(similarity: float, age_days: float, half_life_days: float) -> float:
    return similarity * (1 + 0.2 * 0.5 ** (age_days / half_life_days))


@pytest.mark.parametrize(("mode", "half_life"), [("tool", 60.0), ("auto", 14.0)])
def test_equally_similar_events_rank_newest_first_by_the_mode_half_life(
    alice: KnowHub, mode: str, half_life: float
) -> None:
    hits = alice.memory.search_events("aquarium", target_user_id="40010", top_k=3, mode=mode)
    ages = [(time.time() - h.event.timestamp.timestamp()) / DAY for h in hits]
    assert [round(a) for a in ages] == [1, 10, 30]
    for hit, age in zip(hits, ages, strict=True):
        assert hit.similarity == pytest.approx(1.0)
        assert hit.score == pytest.approx(decayed(1.0, age, half_life), abs=1e-4)


def test_time_decay_applies_only_from_the_minimum_similarity(alice: KnowHub) -> None:
    hits = alice.memory.search_events("repaired red bicycle chain", target_user_id="40020")
    assert texts(hits)[0] == "User 40020 repaired the red bicycle chain"
    weak = [h for h in hits if h.similarity < 0.35]
    assert weak, "the data holds a new event below the minimum similarity"
    for hit in hits:
        age = (time.time() - hit.event.timestamp.timestamp()) / DAY
        expected = hit.similarity if hit.similarity < 0.35 else decayed(hit.similarity, age, 60.0)
        assert hit.score == pytest.approx(expected, abs=1e-4)


def test_an_unrelated_new_event_stays_below_the_decay_gate_even_alone(alice: KnowHub) -> None:
    """The only event sharing a word with the query is new and about something else: its
    similarity is its share of what the query asks (a quarter), not 1.0 for being the
    best of those recalled, so time decay does not lift it."""
    [hit] = alice.memory.search_events("garden sprinkler timer settings", target_user_id="40020")
    assert hit.event.text.endswith("tax forms in the garden")
    assert hit.similarity == pytest.approx(0.25, abs=0.01)
    assert hit.score == pytest.approx(hit.similarity)


def test_the_rerank_considers_more_candidates_than_it_returns(alice: KnowHub) -> None:
    [hit] = alice.memory.search_events("zebra quokka narwhal", target_user_id="40030", top_k=1)
    # Recall alone would return the old exact match; decay lifts the new one from the
    # top_k x 3 candidates.
    assert hit.event.text == "User 40030 zebra quokka narwhal okapi"
    assert hit.similarity < 1.0 and hit.score > 1.0


def test_top_k_defaults_by_mode(alice: KnowHub) -> None:
    assert len(alice.memory.search_events("hiking")) == 4  # tool default (4 here)
    assert len(alice.memory.search_events("hiking", mode="auto")) == 2  # auto default


# ---- Validation -------------------------------------------------------------------------------

INVALID = [
    (dict(query=""), "query"),
    (dict(query="q" * 2001), "query"),
    (dict(query="q", top_k=0), "top_k"),
    (dict(query="q", top_k=101), "top_k"),
    (dict(query="q", target_user_id="a b"), "target_user_id"),
    (dict(query="q", target_group_id="g" * 129), "target_group_id"),
    (dict(query="q", mode=9), "mode"),
    (dict(query="q", scope="team"), "scope"),
    (dict(query="q", time_from={"seconds": -1}), "time_from"),
    (dict(query="q", time_to={"seconds": 1, "nanos": -1}), "time_to"),
]


@pytest.mark.parametrize(
    ("fields", "field"), INVALID, ids=[f"{f}-{i}" for i, (_, f) in enumerate(INVALID)]
)
def test_search_events_validation(server: Harness, fields: dict[str, Any], field: str) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = dream_pb2_grpc.DreamServiceStub(channel)
        code, message = failure(
            lambda: stub.SearchEvents(
                dream_pb2.SearchEventsRequest(**fields), metadata=bearer("alice")
            )
        )
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", field), message


# ---- ListEvents: browsing without a query ---------------------------------------------------


def every_event(kh: KnowHub, limit: int = 3, **filters: Any) -> list[Any]:
    events, token = [], ""
    while True:
        page = kh.memory.list_events(limit=limit, page_token=token, **filters)
        events += page
        token = page.next_page_token
        if not token:
            return events


def test_events_are_listed_newest_first_isolated_like_search(
    server: Harness, alice: KnowHub
) -> None:
    listed = every_event(alice, limit=4)
    times = [e.timestamp for e in listed]
    assert times == sorted(times, reverse=True)
    assert {e.perspective for e in listed} == {"global"}
    assert len({e.event_id for e in listed}) == len(listed)
    assert "The 30001 group of globex plans a hiking trip to Mount Fuji" not in [
        e.text for e in listed
    ]  # another organisation's
    assert "User 40003 keeps a secret hiking plan" in [e.text for e in listed]
    assert [e.text for e in every_event(alice, target_user_id="40010")] == [
        "User 40010 visited the aquarium"
    ] * 3
    assert [e.text for e in every_event(alice, target_group_id="30002")] == [
        "The 30002 group plans a hiking trip to Mount Hua"
    ]
    recent = every_event(alice, target_user_id="40010", time_from=NOW - 15 * DAY)
    assert len(recent) == 2
    carol = server.client("carol")  # same organisation, not alice's private scope
    assert "User 40003 keeps a secret hiking plan" not in [e.text for e in every_event(carol)]


def test_listing_events_refuses_what_search_refuses(server: Harness) -> None:
    bob = server.client("bob")
    with pytest.raises(errors.PermissionDenied):
        bob.memory.list_events(scope="org:acme")
    with grpc.insecure_channel(server.address) as channel:
        stub = dream_pb2_grpc.DreamServiceStub(channel)
        for fields, field in [
            (dict(page_size=101), "page_size"),
            (dict(page_size=-1), "page_size"),
            (dict(target_user_id="a b"), "target_user_id"),
            (dict(time_from={"seconds": 100}, time_to={"seconds": 10}), "time_from"),
            (dict(page_token="nonsense"), "page_token"),
            (dict(scope="team"), "scope"),
        ]:
            code, message = failure(
                lambda f=fields: stub.ListEvents(  # type: ignore[misc]
                    dream_pb2.ListEventsRequest(**f), metadata=bearer("alice")
                )
            )
            assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", field), message
