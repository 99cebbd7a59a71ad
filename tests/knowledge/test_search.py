"""Two-stage search, through the SDK against real servers.

Recall (BM25, or hybrid: BM25 and dense fused by `HybridFusion`) picks
ceil(multiplier * top_k) candidates above the relevance floor, or the LLM picks them from
a wider pool (stage 1); stage 2 orders records of similar relevance (a band) by
quality_score = score + helpful - 2 * harmful, then scope priority and relevance. Tests of
the order within a band widen the band to the whole list (`one_band`); the relevance
rule itself is tested in test_relevance_first.py.
"""

from __future__ import annotations

import itertools
import json
import string
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, errors

from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.openai_stub import Delay, Failure, OpenAIStub

# Query words. A record holding the first n of them is more relevant to QUERY than one
# holding fewer, so "graded" records have a known recall order.
WORDS = ("kestrel", "juniper", "basalt", "meridian", "tundra", "quiver", "lantern", "saffron")
QUERY = " ".join(WORDS)


# Stage 2 over one band holding every record, and no relevance floor: the within-band order.
ONE_BAND = {
    "KNOWHUB_SEARCH_RELEVANCE_BAND": "1",
    "KNOWHUB_SEARCH_MIN_RELEVANCE_BM25": "0",
    "KNOWHUB_SEARCH_MIN_RELEVANCE": "0",
}


@pytest.fixture
def one_band(start_hub: StartHub) -> Harness:
    return start_hub(ONE_BAND)


def llm_settings(llm: OpenAIStub) -> dict[str, Any]:
    return {"llm_base_url": llm.base_url, "llm_max_retries": 0, "llm_timeout_seconds": 5}


def graded_text(rank: int, count: int) -> str:
    """Text with the first count - rank query words: rank 0 is the most relevant."""
    return " ".join(WORDS[: count - rank])


def save_graded(
    client: KnowHub,
    count: int,
    *,
    scores: list[int] | None = None,
    scopes: list[list[str]] | None = None,
    types: list[list[str]] | None = None,
    task_suffix: str = "",
) -> list[Knowledge]:
    """`count` records matching QUERY, most relevant first."""
    records = []
    for rank in range(count):
        text = graded_text(rank, count)
        records.append(
            client.knowledge.save(
                task=text + task_suffix.format(rank=rank),
                content=f"{text} body{rank}",
                types=types[rank] if types else ["strategy"],
                score=scores[rank] if scores else 3,
                scopes=scopes[rank] if scopes else None,
            )
        )
    return records


def ids(hits: list[Any]) -> list[str]:
    return [h.knowledge.id for h in hits]


def add_harmful(client: KnowHub, knowledge_id: str, times: int) -> Knowledge:
    record = client.knowledge.get(knowledge_id)
    for n in range(times):
        record = client.knowledge.update(
            knowledge_id, add_harmful_case={"task": f"t{n}", "outcome": "bad"}
        )
    return record


# ---- Filters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "visible"),
    [
        ("alice", {"user:alice", "project:p1", "agent:alice_bot", "team:t1", "org:acme", "public"}),
        ("carol", {"team:t1", "org:acme", "public"}),
        ("bob", {"public"}),
    ],
)
def test_search_returns_only_records_in_the_callers_visible_scopes(
    hub: Harness, caller: str, visible: set[str]
) -> None:
    alice = hub.client("alice")
    scopes = ["user:alice", "project:p1", "agent:alice_bot", "team:t1", "org:acme", "public"]
    by_scope = {
        s: alice.knowledge.save(
            task=f"harbor crane {s}", content="lift containers", types=["tool"], scopes=[s]
        )
        for s in scopes
    }
    hits = hub.client(caller).knowledge.search("harbor crane", top_k=10)
    assert set(ids(hits)) == {by_scope[s].id for s in visible}


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["plan"], {"plan+strategy"}),
        (["tool", "user_profile"], {"tool", "user_profile"}),
        (["definition"], set()),
        (None, {"tool", "plan+strategy", "user_profile"}),
    ],
)
def test_search_filters_by_types(hub: Harness, types: list[str] | None, expected: set[str]) -> None:
    alice = hub.client("alice")
    saved = {
        "tool": alice.knowledge.save(task="glacier survey", content="a", types=["tool"]),
        "plan+strategy": alice.knowledge.save(
            task="glacier survey", content="b", types=["plan", "strategy"]
        ),
        "user_profile": alice.knowledge.save(
            task="glacier survey", content="c", types=["user_profile"]
        ),
    }
    hits = alice.knowledge.search("glacier survey", top_k=10, types=types)
    assert set(ids(hits)) == {saved[name].id for name in expected}


@pytest.mark.parametrize("min_score", [1, 2, 3, 4, 5])
def test_search_leaves_out_records_scored_below_min_score(hub: Harness, min_score: int) -> None:
    alice = hub.client("alice")
    by_score = {
        s: alice.knowledge.save(
            task="volcano sampling", content=f"score {s}", types=["usecase"], score=s
        )
        for s in range(1, 6)
    }
    hits = alice.knowledge.search("volcano sampling", top_k=10, min_score=min_score)
    assert set(ids(hits)) == {k.id for s, k in by_score.items() if s >= min_score}
    assert all(h.knowledge.eval.score >= min_score for h in hits)


def test_search_min_score_defaults_to_three(hub: Harness) -> None:
    alice = hub.client("alice")
    by_score = {
        s: alice.knowledge.save(
            task="volcano sampling", content=f"score {s}", types=["usecase"], score=s
        )
        for s in range(1, 6)
    }
    hits = alice.knowledge.search("volcano sampling", top_k=10)
    assert set(ids(hits)) == {by_score[s].id for s in (3, 4, 5)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("429", "rate"),  # a standalone number is searchable
        ("2023", "release"),  # next to punctuation
        ("8", "standup"),  # "8" in "8:30"
        ("30", "standup"),  # "30" after the colon
        ("v2", "release"),  # glued to a letter: the word "v2" ...
        ("2", None),  # ... and no number 2
    ],
)
def test_search_finds_standalone_numbers(hub: Harness, query: str, expected: str | None) -> None:
    alice = hub.client("alice")
    saved = {
        name: alice.knowledge.save(task=task, content="notes", types=["usecase"])
        for name, task in [
            ("rate", "the gateway answers 429 under load"),
            ("release", "shipped in (2023), the v2 api"),
            ("standup", "standup at 8:30 daily"),
        ]
    }
    hits = alice.knowledge.search(query, top_k=10)
    assert ids(hits) == ([saved[expected].id] if expected else [])


# ---- Recall: the candidate set ----------------------------------------------------------


@pytest.mark.parametrize(
    ("multiplier", "top_k", "candidates"),
    [
        (None, 1, 2),  # default 2 * top_k
        (None, 2, 4),
        ("1.0", 2, 2),
        ("1.5", 1, 2),  # ceil(1.5)
        ("1.5", 3, 5),  # ceil(4.5)
        ("2.5", 1, 3),  # ceil(2.5)
    ],
)
def test_search_reranks_ceil_multiplier_times_top_k_recalled_candidates(
    start_hub: StartHub, multiplier: str | None, top_k: int, candidates: int
) -> None:
    env = {"KNOWHUB_SEARCH_RECALL_MULTIPLIER": multiplier} if multiplier else {}
    alice = start_hub({**ONE_BAND, **env}).client("alice")
    # Quality rises as relevance falls: stage 2 reverses whatever recall handed it, so
    # the best hit is the least relevant of the candidates.
    records = save_graded(alice, 5, scores=[1, 2, 3, 4, 5])
    hits = alice.knowledge.search(QUERY, top_k=top_k, min_score=1)
    expected = [records[rank].id for rank in range(candidates - 1, -1, -1)][:top_k]
    assert ids(hits) == expected
    assert hits.routed is False


@pytest.mark.parametrize("top_k", [1, 3, 7, 10])
def test_search_returns_at_most_top_k_hits(hub: Harness, top_k: int) -> None:
    alice = hub.client("alice")
    save_graded(alice, 7)
    hits = alice.knowledge.search(QUERY, top_k=top_k, min_relevance=0)
    assert len(hits) == min(top_k, 7)


def test_each_hit_carries_the_knowledge_its_quality_score_and_relevance(hub: Harness) -> None:
    alice = hub.client("alice")
    records = save_graded(alice, 3, scores=[5, 4, 3])
    alice.knowledge.update(records[2].id, add_helpful_case={"task": "t", "outcome": "ok"})
    alice.knowledge.update(records[1].id, add_harmful_case={"task": "t", "outcome": "bad"})
    hits = alice.knowledge.search(QUERY, top_k=3, min_relevance=0)
    assert len(hits) == 3
    for hit in hits:
        stored = alice.knowledge.get(hit.knowledge.id)
        assert hit.knowledge.task == stored.task
        assert hit.knowledge.content == stored.content
        evaluation = stored.eval
        assert hit.quality_score == evaluation.score + evaluation.helpful - 2 * evaluation.harmful
        assert 0 < hit.relevance <= 1
    assert {h.knowledge.id: h.quality_score for h in hits} == {
        records[0].id: 6.0,
        records[1].id: 3.0,
        records[2].id: 5.0,
    }


# ---- Stage 2 within a band: quality, scope priority, relevance ---------------------------


def test_within_a_band_hits_are_ordered_by_quality_score_first(one_band: Harness) -> None:
    alice = one_band.client("alice")
    # Least relevant gets the best score; the most personal scope gets the worst.
    records = save_graded(
        alice, 3, scores=[3, 4, 5], scopes=[["user:alice"], ["team:t1"], ["public"]]
    )
    hits = alice.knowledge.search(QUERY, top_k=3)
    assert ids(hits) == [records[2].id, records[1].id, records[0].id]
    assert [h.quality_score for h in hits] == [6.0, 5.0, 4.0]


def test_equal_quality_hits_follow_scope_priority_before_relevance(one_band: Harness) -> None:
    alice = one_band.client("alice")
    # Scope priority: user > project > agent > team > org > public. Relevance runs the other
    # way, so only the scope priority can produce the expected order.
    order = ["user:alice", "project:p1", "agent:alice_bot", "team:t1", "org:acme", "public"]
    records = save_graded(alice, 6, scopes=[[s] for s in reversed(order)])
    by_scope = {r.scopes[0]: r.id for r in records}
    hits = alice.knowledge.search(QUERY, top_k=6)
    assert ids(hits) == [by_scope[s] for s in order]
    assert len({h.quality_score for h in hits}) == 1


def test_a_user_profile_ranks_first_among_equal_quality_hits(one_band: Harness) -> None:
    alice = one_band.client("alice")
    # Less relevant and in a less personal scope, the profile still comes first.
    strategy, profile = save_graded(
        alice, 2, types=[["strategy"], ["user_profile"]], scopes=[["user:alice"], ["org:acme"]]
    )
    assert ids(alice.knowledge.search(QUERY)) == [profile.id, strategy.id]
    # Quality stays first: a better-rated strategy beats the profile.
    alice.knowledge.update(strategy.id, add_helpful_case={"task": "t", "outcome": "ok"})
    assert ids(alice.knowledge.search(QUERY)) == [strategy.id, profile.id]


def test_scope_priority_counts_only_the_scopes_the_caller_can_see(one_band: Harness) -> None:
    alice = one_band.client("alice")
    # Carol sees org:acme and team:t1 but not project:p1.
    project_and_org, team = save_graded(alice, 2, scopes=[["project:p1", "org:acme"], ["team:t1"]])
    assert ids(alice.knowledge.search(QUERY)) == [project_and_org.id, team.id]
    assert ids(one_band.client("carol").knowledge.search(QUERY)) == [team.id, project_and_org.id]


def test_a_record_ranks_by_its_most_personal_visible_scope(one_band: Harness) -> None:
    alice = one_band.client("alice")
    public_and_user, org = save_graded(alice, 2, scopes=[["org:acme"], ["public", "user:alice"]])[
        ::-1
    ]
    assert ids(alice.knowledge.search(QUERY)) == [public_and_user.id, org.id]


def test_equal_quality_and_scope_hits_follow_relevance(one_band: Harness) -> None:
    alice = one_band.client("alice")
    records = save_graded(alice, 4)
    hits = alice.knowledge.search(QUERY, top_k=4)
    assert ids(hits) == [r.id for r in records]
    relevances = [h.relevance for h in hits]
    assert relevances == sorted(relevances, reverse=True)
    assert len(set(relevances)) == 4


def test_records_with_negative_quality_drop_out(one_band: Harness) -> None:
    alice = one_band.client("alice")
    borderline, doomed, fine = save_graded(alice, 3)
    assert set(ids(alice.knowledge.search(QUERY))) == {borderline.id, doomed.id, fine.id}
    add_harmful(alice, borderline.id, 2)  # 3 + 1 - 4 = 0: stays
    add_harmful(alice, doomed.id, 3)  # 3 + 1 - 6 = -2: dropped
    hits = alice.knowledge.search(QUERY)
    assert ids(hits) == [fine.id, borderline.id]
    assert [h.quality_score for h in hits] == [4.0, 0.0]
    # Still stored and readable, only left out of search.
    assert alice.knowledge.get(doomed.id).eval.harmful == 3


@pytest.mark.parametrize(
    ("top_k", "min_score", "field"),
    [
        (0, 3, "top_k"),
        (101, 3, "top_k"),
        (5, 0, "min_score"),
        (5, 6, "min_score"),
    ],
)
def test_search_rejects_top_k_and_min_score_out_of_range(
    hub: Harness, top_k: int, min_score: int, field: str
) -> None:
    alice = hub.client("alice")
    save_graded(alice, 1)
    with pytest.raises(errors.InvalidArgument) as raised:
        alice.knowledge.search(QUERY, top_k=top_k, min_score=min_score)
    assert field in raised.value.message


# ---- Stage 1: LLM routing ----------------------------------------------------------------

LONG_TAIL = " " + "x" * 100 + " TAILMARK{rank}"  # pushes the marker past the 100th character


def test_routing_asks_the_llm_with_metadata_only(start_hub: StartHub, llm: OpenAIStub) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    kinds = [["tool"], ["plan", "usecase"], ["definition"], ["strategy"]]
    records = save_graded(alice, 4, types=kinds, task_suffix=LONG_TAIL)
    llm.script({"ids": [records[3].id]})
    alice.knowledge.search(QUERY, top_k=1)
    assert len(llm.chat_requests) == 1
    prompt = "\n".join(m["content"] for m in llm.chat_requests[0]["messages"])
    assert QUERY in prompt
    lines = prompt.splitlines()
    for record in records:
        assert len(record.task) > 100
        line = next(line for line in lines if record.id in line)
        assert record.task[:100] in line
        for kind in record.types:
            assert kind in line
    for rank, record in enumerate(records):
        assert f"TAILMARK{rank}" not in prompt
        assert record.content not in prompt
        assert f"body{rank}" not in prompt


def test_routing_uses_the_llms_pick(start_hub: StartHub, llm: OpenAIStub) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    records = save_graded(alice, 6)
    # Without routing, top_k=1 would return the most relevant record.
    llm.script({"ids": [records[5].id]})
    hits = alice.knowledge.search(QUERY, top_k=1)
    assert hits.routed is True
    assert ids(hits) == [records[5].id]

    llm.script({"ids": [records[5].id, records[3].id]})
    hits = alice.knowledge.search(QUERY, top_k=2)
    assert hits.routed is True
    assert set(ids(hits)) == {records[5].id, records[3].id}


def test_routing_keeps_only_known_ids_of_a_partly_wrong_answer(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    records = save_graded(alice, 6)
    llm.script({"ids": ["knowledge-20990101-0123456789ab", records[4].id, records[4].id]})
    hits = alice.knowledge.search(QUERY, top_k=2)
    assert hits.routed is True
    assert ids(hits) == [records[4].id]


@pytest.mark.parametrize(
    "reply",
    [
        Failure(500),
        Failure(429),
        "I think the second one looks good",
        {"ids": ["knowledge-20990101-0123456789ab"]},
        {"ids": "not a list"},
        {"ids": []},
        Delay(3.0, json.dumps({"ids": ["placeholder"]})),
    ],
    ids=["http-500", "http-429", "garbage", "unknown-ids", "ids-not-a-list", "no-ids", "too-slow"],
)
def test_routing_falls_back_to_recall_order(
    start_hub: StartHub, llm: OpenAIStub, reply: str | Failure | Delay | dict[str, Any]
) -> None:
    hub = start_hub({"KNOWHUB_SEARCH_ROUTING_TIMEOUT_SECONDS": "0.5"}, **llm_settings(llm))
    alice = hub.client("alice")
    records = save_graded(alice, 6)
    if isinstance(reply, Delay):  # a pick the service must not wait for
        reply = Delay(reply.seconds, json.dumps({"ids": [records[5].id]}))
    llm.script(reply)
    hits = alice.knowledge.search(QUERY, top_k=2)
    assert len(llm.chat_requests) == 1
    assert hits.routed is False
    assert ids(hits) == [records[0].id, records[1].id]


def test_routing_off_never_calls_the_llm(start_hub: StartHub, llm: OpenAIStub) -> None:
    alice = start_hub({"KNOWHUB_SEARCH_ROUTING": "false"}, **llm_settings(llm)).client("alice")
    records = save_graded(alice, 6)
    llm.script({"ids": [records[5].id]})
    hits = alice.knowledge.search(QUERY, top_k=1)
    assert llm.chat_requests == []
    assert llm.pending == 1
    assert hits.routed is False
    assert ids(hits) == [records[0].id]


def test_routing_runs_on_a_small_knowledge_base(start_hub: StartHub, llm: OpenAIStub) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    records = save_graded(alice, 2)
    llm.script({"ids": [records[1].id]})
    hits = alice.knowledge.search(QUERY, top_k=1)  # 2 candidates, 2 records
    assert len(llm.chat_requests) == 1
    assert hits.routed is True
    assert ids(hits) == [records[1].id]


def test_routing_pool_limits_what_the_llm_chooses_from_above_the_catalog_limit(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(
        {"KNOWHUB_SEARCH_ROUTING_POOL": "4", "KNOWHUB_SEARCH_ROUTING_CATALOG_MAX": "5"},
        **llm_settings(llm),
    )
    alice = hub.client("alice")
    records = save_graded(alice, 6)
    llm.script({"ids": [records[3].id]})
    hits = alice.knowledge.search(QUERY, top_k=1)
    prompt = llm.chat_requests[0]["messages"][-1]["content"]
    assert [r.id in prompt for r in records] == [True, True, True, True, False, False]
    assert ids(hits) == [records[3].id]


# Paraphrases: the query shares no word with the records it means.
ZEBRAFISH = [
    ("feeding zebrafish larvae in the lab", "give paramecia twice a day"),
    ("zebrafish tank water quality", "keep the water at 28 degrees, pH 7.5"),
    ("breeding danio rerio", "separate the pairs with a divider overnight"),
]
UNRELATED = [
    ("renewing a TLS certificate", "run certbot renew and reload nginx"),
    ("quarterly tax filing", "file the VAT return before the 10th"),
]


def pick_by_words(words: dict[str, list[str]]) -> Any:
    """A scripted routing LLM that knows what a query means: it picks the candidates whose
    task holds one of the words the query stands for."""

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        query = prompt.splitlines()[0].removeprefix("Query: ")
        wanted = words.get(query, [])
        lines = [json.loads(line) for line in prompt.splitlines() if line.startswith("{")]
        return json.dumps({"ids": [c["id"] for c in lines if any(w in c["task"] for w in wanted)]})

    return respond


def save_pairs(client: KnowHub, pairs: list[tuple[str, str]], **fields: Any) -> list[str]:
    return [
        client.knowledge.save(task=task, content=content, types=["strategy"], **fields).id
        for task, content in pairs
    ]


def test_routing_finds_records_a_paraphrase_shares_no_word_with(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    fish = save_pairs(alice, ZEBRAFISH)
    save_pairs(alice, UNRELATED)
    llm.responder = pick_by_words({"caring for aquarium pets": ["zebrafish", "danio"]})
    hits = alice.knowledge.search("caring for aquarium pets", top_k=3)
    assert hits.routed is True
    assert set(ids(hits)) == set(fish)


def test_without_an_llm_a_paraphrase_finds_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    save_pairs(alice, ZEBRAFISH)
    hits = alice.knowledge.search("caring for aquarium pets", top_k=3)
    assert (list(hits), hits.routed) == ([], False)


def test_the_routing_catalog_is_the_callers_visible_filtered_knowledge(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(**llm_settings(llm))
    alice, bob = hub.client("alice"), hub.client("bob")
    mine = save_pairs(alice, ZEBRAFISH)
    low = alice.knowledge.save(
        task="zebrafish myths", content="they remember 3 seconds", types=["strategy"], score=1
    ).id
    plan = alice.knowledge.save(
        task="zebrafish facility plan", content="two racks", types=["plan"]
    ).id
    others = save_pairs(bob, [("zebrafish at globex", "bob's fish")])
    llm.responder = pick_by_words({"aquarium pets": ["zebrafish", "danio"]})
    hits = alice.knowledge.search("aquarium pets", top_k=5, types=["strategy"], min_score=2)
    prompt = llm.chat_requests[-1]["messages"][-1]["content"]
    assert all(i in prompt for i in mine)
    assert not any(i in prompt for i in [low, plan, *others])
    assert set(ids(hits)) == set(mine)


def test_a_routing_failure_without_matching_words_finds_nothing(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    alice = start_hub(**llm_settings(llm)).client("alice")
    save_pairs(alice, ZEBRAFISH)
    llm.script(Failure(500))
    hits = alice.knowledge.search("caring for aquarium pets", top_k=3)
    assert len(llm.chat_requests) == 1
    assert (list(hits), hits.routed) == ([], False)


def test_routing_without_an_llm_is_recall_order(hub: Harness) -> None:
    alice = hub.client("alice")
    records = save_graded(alice, 6)
    hits = alice.knowledge.search(QUERY, top_k=2)
    assert hits.routed is False
    assert ids(hits) == [records[0].id, records[1].id]


# ---- Hybrid recall (dense + BM25) ---------------------------------------------------------


def test_hybrid_embeds_records_on_save_and_the_query_on_search(
    hybrid_hub: Harness, llm: OpenAIStub
) -> None:
    alice = hybrid_hub.client("alice")
    saved = alice.knowledge.save(
        task="orchard irrigation", content="drip lines at dawn", types=["usecase"]
    )
    assert llm.embedding_requests, "the record was not embedded"
    save_request = llm.embedding_requests[-1]
    assert save_request["model"] == "stub-embed"
    assert any(
        "orchard irrigation" in text and "drip lines at dawn" in text
        for text in save_request["input"]
    )

    before = len(llm.embedding_requests)
    hits = alice.knowledge.search("orchard irrigation")
    assert len(llm.embedding_requests) == before + 1
    assert llm.embedding_requests[-1]["input"] in (["orchard irrigation"], "orchard irrigation")
    assert ids(hits) == [saved.id]
    assert llm.chat_requests == []


def test_hybrid_embeds_a_batch_in_one_request(hybrid_hub: Harness, llm: OpenAIStub) -> None:
    alice = hybrid_hub.client("alice")
    saved = alice.knowledge.save_many(
        [
            {"task": f"batch item {n}", "content": f"payload {n}", "types": ["tool"]}
            for n in range(3)
        ]
    )
    assert len(saved) == 3
    inputs = llm.embedding_requests[-1]["input"]
    assert len(inputs) == 3
    assert all(f"batch item {n}" in inputs[n] for n in range(3))


def _dense_twin(llm: OpenAIStub, text: str) -> str:
    """A different word that the stub embeds exactly like `text` (a hash collision)."""
    target = llm.embed(text)
    for letters in itertools.product(string.ascii_lowercase, repeat=3):
        word = "vol" + "".join(letters)
        if llm.embed(word) == target:
            return word
    raise AssertionError("no colliding word found")


def test_hybrid_finds_through_the_dense_leg_what_bm25_cannot(
    hybrid_hub: Harness, llm: OpenAIStub, start_hub: StartHub
) -> None:
    twin = _dense_twin(llm, "xylophone xylophone")
    records = [
        ("xylophone", "xylophone"),
        ("banana orchard", "harvest in autumn"),
        ("river delta", "sediment maps"),
    ]
    alice = hybrid_hub.client("alice")
    saved = [alice.knowledge.save(task=t, content=c, types=["definition"]) for t, c in records]

    hits = alice.knowledge.search(twin, top_k=3)
    assert hits and hits[0].knowledge.id == saved[0].id

    # The same records and query with BM25 alone: no shared token, nothing found.
    bm25_alice = start_hub().client("alice")
    for task, content in records:
        bm25_alice.knowledge.save(task=task, content=content, types=["definition"])
    assert list(bm25_alice.knowledge.search(twin, top_k=3)) == []
    assert len(bm25_alice.knowledge.search("xylophone", top_k=3)) == 1


def test_hybrid_finds_by_stopwords_that_bm25_drops(
    hybrid_hub: Harness, start_hub: StartHub
) -> None:
    text = "to be or not to be"
    alice = hybrid_hub.client("alice")
    saved = alice.knowledge.save(task=text, content=text, types=["definition"])
    alice.knowledge.save(task="tidal energy", content="turbines", types=["definition"])
    hits = alice.knowledge.search(text, top_k=1)
    assert ids(hits) == [saved.id]

    bm25_alice = start_hub().client("alice")
    bm25_alice.knowledge.save(task=text, content=text, types=["definition"])
    assert list(bm25_alice.knowledge.search(text, top_k=1)) == []


def test_hybrid_still_ranks_by_words(hybrid_hub: Harness) -> None:
    alice = hybrid_hub.client("alice")
    records = save_graded(alice, 4, scores=[3, 3, 3, 3])
    hits = alice.knowledge.search(QUERY, top_k=1)
    assert ids(hits) == [records[0].id]
    hits = alice.knowledge.search(QUERY, top_k=4, min_relevance=0)
    assert set(ids(hits)) == {r.id for r in records}


# ---- Multilingual tokenizing --------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("反爬", "selenium"),
        ("绕过检测", "selenium"),
        ("限额", "account"),
        ("会话", "account"),
    ],
)
def test_chinese_text_is_segmented_and_found_by_a_word(
    hub: Harness, query: str, expected: str
) -> None:
    alice = hub.client("alice")
    saved = {
        "selenium": alice.knowledge.save(
            task="使用 Selenium 登录某网站并绕过反爬检测",
            content="使用undetected_chromedriver可以绕过大部分检测,关键是设置合适的user-agent",
            types=["tool", "strategy"],
        ),
        "account": alice.knowledge.save(
            task="登录某网站进行数据采集",
            content="使用测试账号登录,注意每天限额一百次,登录后会话有效期两小时",
            types=["tool", "usecase"],
        ),
    }
    hits = alice.knowledge.search(query, top_k=5)
    # Recall may bring the other record along (it shares words with the first); the one
    # holding the query's words leads.
    assert hits and hits[0].knowledge.id == saved[expected].id
    assert all(h.relevance < hits[0].relevance for h in hits[1:])
