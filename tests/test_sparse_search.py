"""`SparseSearch` against both adapters: BM25 searches planned for speed (kept term
statistics per corpus, the shortcut through the collection's best matches) answer as
the engine answers the search as asked (`_search_batch`, statistics over the corpus,
filter checked posting by posting)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest
from qdrant_edge import SparseVector

from knowhub_server.common.storage import sparse_search
from knowhub_server.common.storage.vectors import (
    Eq,
    Hit,
    HybridFusion,
    Range,
    SearchQuery,
    VectorCollection,
    Where,
)
from tests.test_vector_store_contract import (  # noqa: F401  (fixtures)
    BM25,
    DIM,
    Backend,
    backend,
    record,
    relevance_by_definition,
    things,
)

WORDS = [f"w{i}" for i in range(60)]


def text(rng: random.Random) -> str:
    # A few common words and a long tail, as in real text.
    return " ".join(rng.choice(WORDS[: rng.choice((5, 20, 60))]) for _ in range(8))


@pytest.fixture
def filled(things: VectorCollection) -> VectorCollection:  # noqa: F811
    """300 records: half tagged web, half data; n from 0 to 9."""
    rng = random.Random(7)
    things.put(
        [
            record(
                f"r{i}",
                text(rng),
                [rng.uniform(-1, 1) for _ in range(DIM)],
                tag="web" if i % 2 else "data",
                n=i % 10,
            )
            for i in range(300)
        ]
    )
    return things


def assert_as_asked(collection: VectorCollection, query: SearchQuery) -> list[Hit]:
    """The search answers as the engine answers it as asked (statistics over the corpus,
    the filter as given): the same scores, each record with its own score (records
    scoring alike to float precision may swap places)."""
    found = collection.search(query)
    expected = collection._search_batch([query])[0]
    assert [h.score for h in found] == pytest.approx([h.score for h in expected], rel=1e-5)
    wider = collection._search_batch([replace(query, limit=1000)])[0]
    score_of = {h.point_id: h.score for h in wider}
    assert [score_of.get(h.point_id) for h in found] == pytest.approx(
        [h.score for h in found], rel=1e-5
    )
    return found


def queries(rng: random.Random, count: int) -> Iterator[str]:
    for _ in range(count):
        yield " ".join(rng.sample(WORDS, rng.randint(1, 4)))


WHERES = [
    Where(must=(Eq("tag", "web"),)),
    Where(must=(Range("n", gte=3),)),
    Where(must=(Eq("tag", "data"), Range("n", lte=1))),
]


@pytest.mark.parametrize("where", WHERES, ids=["half", "seven-tenths", "a tenth"])
def test_kept_statistics_score_as_the_engine_does(filled: VectorCollection, where: Where) -> None:
    for text_ in queries(random.Random(1), 15):
        assert_as_asked(filled, SearchQuery(where, 10, sparse=BM25.query(text_)))


def test_statistics_are_read_again_once_the_corpus_changed(filled: VectorCollection) -> None:
    web = Where(must=(Eq("tag", "web"),))
    query = SearchQuery(web, 10, sparse=BM25.query("w1 w7 w30"))
    before = filled.search(query)
    filled.put([record(f"new{i}", "w1 w1 w1 w7", tag="web") for i in range(40)])
    after = assert_as_asked(filled, query)
    assert [h.score for h in after] != [h.score for h in before]


def test_statistics_are_read_once_for_repeated_terms(
    filled: VectorCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[int] = []
    engine = filled._search_batch

    def counting(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        sent.append(len(batch))
        return engine(batch)

    monkeypatch.setattr(filled, "_search_batch", counting)
    query = SearchQuery(Where(must=(Eq("tag", "web"),)), 5, sparse=BM25.query("w2 w9"))
    filled.search(query)
    assert sum(sent) > 1  # the search and its probes
    sent.clear()
    filled.search(query)
    assert sent == [1]


def bounds(collection: VectorCollection, where: Where, text_: str) -> list[float]:
    return collection.search_bounded([], where, BM25.query(text_))[1]


def test_a_corpus_holding_every_record_reads_no_statistics_of_its_own(
    filled: VectorCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    everything = Where(must=(Range("n", gte=0),))  # every record of `filled` has n 0..9
    batches: list[Sequence[SearchQuery]] = []
    engine = filled._search_batch

    def recording(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        batches.append(batch)
        return engine(batch)

    texts = list(queries(random.Random(3), 10))
    monkeypatch.setattr(filled, "_search_batch", recording)
    answers = [
        filled.search_bounded(
            [SearchQuery(everything, 10, sparse=BM25.query(t))], everything, BM25.query(t)
        )
        for t in texts
    ]
    # One engine call a search, its new terms' bounds read beside it without a filter;
    # everything with the collection's statistics.
    assert len(batches) == len(texts)
    sent = [q for batch in batches for q in batch]
    assert all(q.collection_idf for q in sent)
    assert all(q.where.empty for q in sent if q.limit == 1)
    monkeypatch.undo()
    for text_, ((hits,), bound) in zip(texts, answers, strict=True):
        query = SearchQuery(everything, 10, sparse=BM25.query(text_))
        expected = assert_as_asked(filled, query)
        assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
        assert bound == pytest.approx(best_as_asked(filled, everything, text_), rel=1e-5)
    # One record outside the filter: its corpus is apart now, with statistics of its own.
    filled.put([record("outside", "w1 w2 w3 w50 w51", n=-1)])
    for text_ in ["w1 w50", "w2 w51 w3"]:
        assert_as_asked(filled, SearchQuery(everything, 10, sparse=BM25.query(text_)))
        assert bounds(filled, everything, text_) == pytest.approx(
            best_as_asked(filled, everything, text_), rel=1e-5
        )


@pytest.mark.parametrize("where", WHERES, ids=["half", "seven-tenths", "a tenth"])
@pytest.mark.parametrize("limit", [1, 5, 20])
def test_the_shortcut_answers_as_the_filtered_search(
    filled: VectorCollection, where: Where, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sparse_search, "SHORTCUT_MIN_RECORDS", 0)  # 300 records take it
    monkeypatch.setattr(sparse_search, "SHORTCUT_MAX_LOOKUPS", 10_000)
    shortcuts = 0
    engine = filled._search_batch

    def watching(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        nonlocal shortcuts
        shortcuts += sum(1 for q in batch if q.sparse is not None and q.where.empty)
        return engine(batch)

    monkeypatch.setattr(filled, "_search_batch", watching)
    for text_ in queries(random.Random(limit), 15):
        assert_as_asked(filled, SearchQuery(where, limit, sparse=BM25.query(text_)))
    assert shortcuts >= 15


def test_records_spread_over_many_segments_are_searched_as_asked(
    filled: VectorCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking a pool up costs a lookup per record and segment: past
    `SHORTCUT_MAX_LOOKUPS` the filtered search runs, and the segments are read once."""
    monkeypatch.setattr(sparse_search, "SHORTCUT_MIN_RECORDS", 0)
    assert filled.segments() >= 1
    read: list[int] = []
    sent: list[SearchQuery] = []
    engine, segments = filled._search_batch, filled.segments

    def watching(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        sent.extend(batch)
        return engine(batch)

    def many() -> int:
        read.append(segments())
        return sparse_search.SHORTCUT_MAX_LOOKUPS  # a pool of 2 or more costs too much

    monkeypatch.setattr(filled, "_search_batch", watching)
    monkeypatch.setattr(filled, "segments", many)
    for text_ in queries(random.Random(3), 5):
        assert_as_asked(filled, SearchQuery(WHERES[0], 5, sparse=BM25.query(text_)))
    assert len(read) == 1
    assert sent and all(not q.where.empty for q in sent if q.sparse is not None)


def test_a_filter_leaving_few_records_is_searched_as_asked(
    filled: VectorCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[SearchQuery] = []
    engine = filled._search_batch

    def watching(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        sent.extend(batch)
        return engine(batch)

    monkeypatch.setattr(filled, "_search_batch", watching)
    filled.search(SearchQuery(Where(must=(Eq("tag", "web"),)), 5, sparse=BM25.query("w3")))
    assert sent and all(not q.where.empty for q in sent)  # 150 records: no shortcut


def test_a_pool_leaving_too_few_is_searched_again_as_asked(
    things: VectorCollection,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collection's best matches are all another tag's: the shortcut finds none of
    the filter's records among them, and the filtered search answers."""
    monkeypatch.setattr(sparse_search, "SHORTCUT_MIN_RECORDS", 0)
    things.put(
        [record(f"web{i}", "alpha alpha alpha", tag="web") for i in range(100)]
        + [record(f"data{i}", f"alpha beta{i} gamma{i}", tag="data") for i in range(20)]
    )
    batches: list[int] = []
    engine = things._search_batch

    def counting(batch: Sequence[SearchQuery]) -> list[list[Hit]]:
        batches.append(len(batch))
        return engine(batch)

    query = SearchQuery(Where(must=(Eq("tag", "data"),)), 5, sparse=BM25.query("alpha"))
    things.search(query)  # reads the term's statistics and the filter's count
    monkeypatch.setattr(things, "_search_batch", counting)
    found = assert_as_asked(things, query)
    assert batches[:3] == [1, 1, 1]  # the pool, the pool through the filter, as asked
    assert len(found) == 5 and all(h.record and h.record.key.startswith("data") for h in found)


def best_as_asked(collection: VectorCollection, where: Where, text_: str) -> list[float]:
    """The engine's best score per query term, each term searched alone."""
    sparse = BM25.query(text_)
    found = collection._search_batch(
        [
            SearchQuery(where, 1, sparse=SparseVector([t], [v]), with_payload=False)
            for t, v in zip(sparse.indices, sparse.values, strict=True)
        ]
    )
    return [hits[0].score if hits else 0.0 for hits in found]


def test_bounds_follow_writes_and_deletes(filled: VectorCollection) -> None:
    web = Where(must=(Eq("tag", "web"),))
    text_ = "w4 w44 nowhere"

    terms = list(BM25.query(text_).indices)
    nowhere, w44 = (terms.index(BM25.query(word).indices[0]) for word in ("nowhere", "w44"))

    def best() -> list[float]:
        return bounds(filled, web, text_)

    assert best() == pytest.approx(best_as_asked(filled, web, text_), rel=1e-5)
    assert best()[nowhere] == 0.0  # no record holds it
    before = best()
    filled.put([record("strong", "w44 w44 w44 w44", tag="web")])  # a stronger w44
    now, expected = best(), best_as_asked(filled, web, text_)
    assert now[w44] > before[w44]
    assert now[w44] == pytest.approx(expected[w44], rel=1e-5)  # read again at once
    # The others keep statistics one write old (under 1% of the 150 records it covers).
    assert now == pytest.approx(expected, rel=0.02)
    filled.delete(["strong"])
    assert best() == pytest.approx(best_as_asked(filled, web, text_), rel=1e-5)


@pytest.mark.parametrize("dense_weight", [0.3, 0.6])
@pytest.mark.parametrize("limit", [1, 5])
def test_hybrid_fusion_skips_only_candidates_that_cannot_rank(
    filled: VectorCollection, dense_weight: float, limit: int
) -> None:
    """With small pools most candidates are found by one search only; the fusion scores
    just those that could still reach the `limit` best, and answers as scoring every
    candidate (the records of either pool) would."""
    rng = random.Random(limit)
    web = Where(must=(Eq("tag", "web"),))
    for text_ in queries(rng, 10):
        dense = [rng.uniform(-1, 1) for _ in range(DIM)]
        pools = filled.search_batch(
            [
                SearchQuery(web, 8, sparse=BM25.query(text_), with_payload=False),
                SearchQuery(web, 8, dense=dense, with_payload=False),
            ]
        )
        candidates = {h.point_id for hits in pools for h in hits}
        expected = {
            p: r
            for p, r in relevance_by_definition(filled, web, text_, dense, dense_weight).items()
            if p in candidates
        }
        fused = HybridFusion(pool=8, dense_weight=dense_weight).search(
            filled, web, BM25.query(text_), dense, limit
        )
        best = sorted(expected.values(), reverse=True)[:limit]
        assert [score for _, score in fused] == pytest.approx(best, abs=1e-6)
        for point, score in fused:
            assert expected[point] == pytest.approx(score, abs=1e-6)


def test_the_shortcut_answers_nothing_for_words_no_record_holds(
    filled: VectorCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sparse_search, "SHORTCUT_MIN_RECORDS", 0)
    web = Where(must=(Eq("tag", "web"),))
    assert filled.search(SearchQuery(web, 5, sparse=BM25.query("nowhere absent"))) == []
    both = filled.search_batch(
        [
            SearchQuery(web, 5, sparse=BM25.query("nowhere")),
            SearchQuery(web, 5, sparse=BM25.query("w1")),
        ]
    )
    assert both[0] == [] and len(both[1]) == 5
