"""One contract for `VectorCollection`, run against both adapters.

Edge runs the Qdrant engine in-process over a shard in a temporary directory; Remote runs
qdrant-client against `QdrantClient(":memory:")`. Every test here must pass on both.

With `KNOWHUB_TEST_QDRANT_URL` set (e.g. `http://127.0.0.1:6333`), every test also runs
against that Qdrant server ("server"), each under collection names of its own that it
removes as it ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import random
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import pytest
import qdrant_edge as qe
from qdrant_client import QdrantClient
from qdrant_edge import SparseVector

from knowhub_server.common.base.errors import Aborted, NotFound, Unavailable
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.edge_store import EdgeCollection, EdgeStore, dense_search_params
from knowhub_server.common.storage.qdrant_store import RemoteStore
from knowhub_server.common.storage.vectors import (
    DENSE,
    SPARSE,
    AnyOf,
    CollectionSchema,
    Eq,
    HasKey,
    Hit,
    HybridFusion,
    IndexTuning,
    Missing,
    Order,
    Range,
    Record,
    SearchQuery,
    StoreMismatch,
    VectorCollection,
    Vectors,
    VectorStore,
    Where,
    point_id,
)

DIM = 4
SCHEMA = CollectionSchema(
    name="things",
    dense_dim=DIM,
    embedding_model="tiny-embed",
    keyword_fields=("tag",),
    integer_fields=("n",),
    float_fields=("rank",),
    bulk_fields=("history",),
)
BM25 = Bm25Encoder()


@dataclass
class Backend:
    """An adapter under test, and how to open its store again on the same data."""

    kind: str
    root: Path
    store: VectorStore

    def reopen(self) -> VectorStore:
        """The same data through a fresh store (Edge, server) or the same client
        (in-memory)."""
        if self.kind != "remote":
            self.store.close()
            self.store = open_store(self.kind, self.root)
        return self.store


QDRANT_SERVER_URL = os.environ.get("KNOWHUB_TEST_QDRANT_URL", "")
ADAPTERS = ["edge", "remote"] + (["server"] if QDRANT_SERVER_URL else [])


SESSION_PREFIX = f"knowhub_test_{uuid.uuid4().hex[:8]}_"


def server_prefix(root: Path) -> str:
    """Collection names of one store's own on the shared Qdrant server (the same for a
    store opened again on the same root)."""
    return f"{SESSION_PREFIX}{hashlib.sha1(str(root).encode()).hexdigest()[:10]}_"


def open_store(kind: str, root: Path, tuning: IndexTuning | None = None) -> VectorStore:
    extra: dict[str, Any] = {"tuning": tuning} if tuning else {}
    if kind == "edge":
        return EdgeStore(root, **extra)
    if kind == "server":
        client = QdrantClient(url=QDRANT_SERVER_URL, timeout=10)
        return RemoteStore(client, prefix=server_prefix(root), **extra)
    return RemoteStore.connect(":memory:", **extra)


@pytest.fixture(scope="module", autouse=True)
def _drop_server_collections() -> Iterator[None]:
    """Removes what this module's tests created on the Qdrant server."""
    yield
    if not QDRANT_SERVER_URL:
        return
    client = QdrantClient(url=QDRANT_SERVER_URL, timeout=10)
    for alias in client.get_aliases().aliases:
        if alias.alias_name.startswith(SESSION_PREFIX):
            client.delete_alias(alias.alias_name)
    for collection in client.get_collections().collections:
        if collection.name.startswith(SESSION_PREFIX):
            client.delete_collection(collection.name)
    client.close()


@pytest.fixture(params=ADAPTERS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    root = tmp_path / "qdrant"
    state = Backend(request.param, root, open_store(request.param, root))
    yield state
    state.store.close()


@pytest.fixture
def things(backend: Backend) -> VectorCollection:
    return backend.store.open(SCHEMA)


def unit(index: int, dim: int = DIM) -> list[float]:
    vector = [0.0] * dim
    vector[index % dim] = 1.0
    return vector


def vectors(text: str, dense: list[float]) -> Vectors:
    return {SPARSE: BM25.document(text), DENSE: dense}


def record(key: str, text: str = "", dense: list[float] | None = None, **payload: Any) -> Record:
    return Record(
        key=key, payload={"text": text, **payload}, vectors=vectors(text or key, dense or unit(0))
    )


def keys_of(hits: list[Hit]) -> list[str]:
    """The record keys of search hits that carry their record."""
    assert all(h.record is not None for h in hits)
    return [h.record.key for h in hits if h.record is not None]


def keys_where(collection: VectorCollection, where: Where) -> set[str]:
    found, _ = collection.scroll(where, 1000)
    return {r.key for r in found}


def all_keys(collection: VectorCollection, page_size: int) -> tuple[list[str], int]:
    """Every key by following scroll cursors, and how many pages that took."""
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = collection.scroll(Where(), page_size, cursor=cursor)
        pages += 1
        seen += [r.key for r in page]
        if cursor is None:
            return seen, pages


# ---- Records ----------------------------------------------------------------------------


def test_put_get_retrieve_delete(things: VectorCollection) -> None:
    things.put([record("a", "alpha", tag="x"), record("b", "beta", tag="y")])

    got = things.get("a", with_vectors=True)
    assert got is not None
    assert got.payload == {"text": "alpha", "tag": "x"}
    assert got.version == 1
    assert got.write_token
    assert list(got.vectors[DENSE]) == unit(0)
    assert set(got.vectors) == {SPARSE, DENSE}
    assert things.get("missing") is None
    assert {r.key for r in things.retrieve(["a", "b", "missing"])} == {"a", "b"}

    things.delete(["a"])
    assert things.get("a") is None
    assert [r.key for r in things.retrieve(["a", "b"])] == ["b"]


def test_put_overwrites_and_keeps_a_given_version(things: VectorCollection) -> None:
    things.put([record("a", "first")])
    things.put([Record("a", {"text": "second"}, version=7, vectors=vectors("second", unit(1)))])
    got = things.get("a")
    assert got is not None
    assert (got.payload["text"], got.version) == ("second", 7)


def test_insert_creates_new_keys_only(things: VectorCollection) -> None:
    assert things.insert([record("a", "original")]) == [True]
    assert things.insert([record("a", "intruder"), record("b", "new")]) == [False, True]
    got = things.get("a")
    assert got is not None
    assert got.payload["text"] == "original"
    assert things.count(Where()) == 2


def insert_built_on(inserting: VectorCollection, other: VectorCollection) -> tuple[bool, int]:
    """`inserting` inserts "fresh" while `other` changes it (compare_and_set) as soon as it
    is written, before the insert reads its write back where nothing holds `other` off:
    what the insert answered, and the version the change got."""
    written, changed = threading.Event(), threading.Event()
    write = inserting._gated_write

    def write_then_pause(*args: Any, **kwargs: Any) -> None:
        write(*args, **kwargs)
        written.set()
        changed.wait(timeout=0.5)  # held off (one process: the write guard) or done

    def change(current: Record) -> Record:
        return Record(current.key, {**current.payload, "n": 2}, vectors=current.vectors)

    def build_on() -> int:
        assert written.wait(timeout=10)
        version = other.compare_and_set("fresh", change).version
        changed.set()
        return version

    inserting._gated_write = write_then_pause  # type: ignore[method-assign]
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            later = pool.submit(build_on)
            created = inserting.insert([record("fresh", "new", n=1)])
            version = later.result(timeout=10)
    finally:
        del inserting._gated_write
    return created == [True], version


def test_an_insert_changed_before_its_read_back_still_created_the_record(
    things: VectorCollection,
) -> None:
    created, version = insert_built_on(things, things)
    assert created, "the insert created the record"
    assert version == 2
    stored = things.get("fresh")
    assert stored is not None and stored.payload["n"] == 2


def test_compare_and_set_applies_the_change_and_bumps_the_version(things: VectorCollection) -> None:
    things.put([record("a", "alpha", n=1)])

    def bump(current: Record) -> Record:
        assert current.vectors, "compare_and_set hands the change the record's vectors"
        return Record(
            current.key, {**current.payload, "n": current.payload["n"] + 1}, vectors=current.vectors
        )

    first = things.compare_and_set("a", bump)
    second = things.compare_and_set("a", bump)
    stored = things.get("a", with_vectors=True)
    assert stored is not None
    assert (first.version, second.version, stored.version) == (2, 3, 3)
    assert stored.payload["n"] == 3
    assert stored.write_token == second.write_token
    assert set(stored.vectors) == {SPARSE, DENSE}


def test_compare_and_set_on_a_missing_key_is_not_found(things: VectorCollection) -> None:
    with pytest.raises(NotFound):
        things.compare_and_set("ghost", lambda r: r)
    assert things.count(Where()) == 0


def test_concurrent_compare_and_set_loses_no_increment(things: VectorCollection) -> None:
    things.put([record("counter", "counter", n=0)])

    def increment(_: int) -> int:
        def change(current: Record) -> Record:
            return Record(
                current.key,
                {**current.payload, "n": current.payload["n"] + 1},
                vectors=current.vectors,
            )

        return things.compare_and_set("counter", change).version

    with ThreadPoolExecutor(max_workers=16) as pool:
        versions = list(pool.map(increment, range(200)))

    final = things.get("counter")
    assert final is not None
    assert final.payload["n"] == 200
    assert final.version == 201
    assert sorted(versions) == list(range(2, 202)), "each write won exactly one version"


def test_replicas_sharing_a_store_neither_lose_nor_repeat_an_increment(tmp_path: Path) -> None:
    """Several replicas on one store: adapters that share no lock, each checking its
    conditional write by reading back. The Edge engine applies a conditional write
    atomically, as a Qdrant server does, so this is the path a shared server takes."""
    store = EdgeStore(tmp_path)
    first = store.open(SCHEMA)
    replicas: list[VectorCollection] = []
    for _ in range(4):
        replica = type(first)(first._shard, SCHEMA)
        replica.exclusive = False  # what a replica on a shared server is
        replicas.append(replica)
    first.put([record("counter", "counter", n=0)])

    def increment(index: int) -> bool:
        def change(current: Record) -> Record:
            return Record(
                current.key,
                {**current.payload, "n": current.payload["n"] + 1},
                vectors=current.vectors,
            )

        try:
            replicas[index % len(replicas)].compare_and_set("counter", change)
        except Aborted:  # too busy to tell: the caller is told, and may retry
            return False
        return True

    with ThreadPoolExecutor(max_workers=16) as pool:
        applied = sum(pool.map(increment, range(200)))

    final = first.get("counter")
    assert final is not None
    assert applied >= 190, "nearly every call gets a definite answer"
    assert final.payload["n"] == applied, "no increment lost or applied twice"
    assert final.version == applied + 1
    store.close()


def test_a_replica_knows_its_insert_created_a_record_another_changed_at_once(
    tmp_path: Path,
) -> None:
    """Two replicas on one store (no shared lock, as on a shared server): one inserts, the
    other builds on the record before the insert reads its write back."""
    store = EdgeStore(tmp_path)
    first = store.open(SCHEMA)
    inserting, other = (type(first)(first._shard, SCHEMA) for _ in range(2))
    inserting.exclusive = other.exclusive = False
    created, version = insert_built_on(inserting, other)
    assert created, "the insert created the record"
    assert version == 2
    assert inserting.insert([record("fresh", "again")]) == [False]
    store.close()


# ---- Search ------------------------------------------------------------------------------


@pytest.fixture
def corpus(things: VectorCollection) -> VectorCollection:
    """a: selenium + e0; b: selenium + e1; c: pandas + near e0; d: rust + e2."""
    near_e0 = [0.9, 0.1, 0.0, 0.0]
    things.put(
        [
            record("a", "selenium login with chrome", unit(0), tag="web", rank=1.0),
            record("b", "selenium grid setup", unit(1), tag="web", rank=2.0),
            record("c", "pandas dataframe merge", near_e0, tag="data", rank=3.0),
            record("d", "rust tokio runtime", unit(2), tag="sys", rank=4.0),
        ]
    )
    return things


def test_sparse_search_finds_records_sharing_words(corpus: VectorCollection) -> None:
    hits = corpus.search(SearchQuery(where=Where(), limit=10, sparse=BM25.query("selenium login")))
    assert keys_of(hits) == ["a", "b"]
    assert hits[0].score > hits[1].score > 0
    assert hits[0].point_id == point_id("a")
    assert hits[0].record is not None
    assert hits[0].record.payload == {
        "text": "selenium login with chrome",
        "tag": "web",
        "rank": 1.0,
    }


def test_dense_search_ranks_by_cosine(corpus: VectorCollection) -> None:
    hits = corpus.search(SearchQuery(where=Where(), limit=2, dense=unit(0)))
    assert keys_of(hits) == ["a", "c"]
    assert math.isclose(hits[0].score, 1.0, rel_tol=1e-4)


def relevance_by_definition(
    collection: VectorCollection, where: Where, query: str, dense: list[float], dense_weight: float
) -> dict[str, float]:
    """Every matching record's hybrid relevance from unpooled searches: (1 - w) * BM25 over
    the sum of each query term's best score, plus w * cosine."""
    sparse = BM25.query(query)
    terms = [SparseVector([t], [v]) for t, v in zip(sparse.indices, sparse.values, strict=True)]
    bm25, cosine, *per_term = collection.search_batch(
        [
            SearchQuery(where, 1000, sparse=sparse),
            SearchQuery(where, 1000, dense=dense),
            *(SearchQuery(where, 1, sparse=t) for t in terms),
        ]
    )
    bound = sum(hits[0].score for hits in per_term if hits)
    lexical = {h.point_id: h.score / bound for h in bm25}
    return {
        h.point_id: (1 - dense_weight) * lexical.get(h.point_id, 0.0)
        + dense_weight * max(h.score, 0.0)
        for h in cosine
    }


@pytest.mark.parametrize("dense_weight", [0.0, 0.4, 1.0])
def test_hybrid_fusion_scores_every_candidate_by_both_searches(
    corpus: VectorCollection, dense_weight: float
) -> None:
    # Candidates: BM25's best two (a, b) and the nearest two (b, c); the fusion must look
    # up a's cosine and c's BM25 score, so relevance never depends on what was recalled.
    fusion = HybridFusion(pool=1, dense_weight=dense_weight)
    expected = relevance_by_definition(corpus, Where(), "selenium chrome", unit(1), dense_weight)

    fused = fusion.search(corpus, Where(), BM25.query("selenium chrome"), unit(1), limit=2)

    best_two = sorted(expected.items(), key=lambda item: -item[1])[:2]
    assert [p for p, _ in fused] == [p for p, _ in best_two]
    for (_, score), (_, wanted) in zip(fused, best_two, strict=True):
        assert math.isclose(score, wanted, abs_tol=1e-6)


def test_hybrid_fusion_gives_one_to_the_best_match_on_every_term_and_direction(
    corpus: VectorCollection,
) -> None:
    fused = HybridFusion(pool=10, dense_weight=0.6).search(
        corpus, Where(), BM25.query("login chrome"), unit(0), limit=10
    )

    by_point = {p: s for p, s in fused}
    assert fused[0][0] == point_id("a")
    assert math.isclose(fused[0][1], 1.0, rel_tol=1e-4)
    assert math.isclose(by_point[point_id("c")], 0.6 * 0.9 / math.hypot(0.9, 0.1), rel_tol=1e-4), (
        "no shared word: the weighted cosine alone"
    )
    assert point_id("d") not in by_point or by_point[point_id("d")] == 0.0


def test_hybrid_fusion_of_a_query_without_words_ranks_by_cosine(corpus: VectorCollection) -> None:
    fused = HybridFusion(pool=10, dense_weight=0.5).search(
        corpus, Where(), BM25.query("the of and"), unit(0), limit=2
    )
    assert [p for p, _ in fused] == [point_id("a"), point_id("c")]
    assert math.isclose(fused[0][1], 0.5, rel_tol=1e-4)


def test_hybrid_fusion_respects_the_filter(corpus: VectorCollection) -> None:
    where = Where(must=(Eq("tag", "web"),))
    fused = HybridFusion(pool=1, dense_weight=0.5).search(
        corpus, where, BM25.query("pandas selenium"), unit(2), limit=10
    )
    assert {p for p, _ in fused} <= {point_id("a"), point_id("b")}
    assert fused


def test_hybrid_fusion_is_the_same_over_both_adapters(tmp_path: Path) -> None:
    results = []
    for kind in ADAPTERS:
        store = open_store(kind, tmp_path / kind)
        collection = store.open(SCHEMA)
        collection.put(
            [
                record(f"r{i}", text, [math.cos(i), math.sin(i), 0.3, -0.2])
                for i, text in enumerate(
                    [
                        "selenium login with chrome",
                        "selenium grid setup",
                        "chrome driver crashes on login",
                        "pandas dataframe merge",
                        "login page of the grid console",
                        "rust tokio runtime",
                    ]
                )
            ]
        )
        results.append(
            HybridFusion(pool=2, dense_weight=0.55).search(
                collection, Where(), BM25.query("chrome login grid"), [1.0, 0.2, 0.0, 0.1], 6
            )
        )
        store.close()
    edge, *others = results
    for other in others:
        assert [p for p, _ in edge] == [p for p, _ in other]
        assert all(
            math.isclose(a, b, abs_tol=1e-5) for (_, a), (_, b) in zip(edge, other, strict=True)
        )


def test_search_without_payload_returns_point_ids_only(corpus: VectorCollection) -> None:
    hits = corpus.search(SearchQuery(where=Where(), limit=2, dense=unit(0), with_payload=False))
    assert [h.point_id for h in hits] == [point_id("a"), point_id("c")]
    assert all(h.record is None for h in hits)
    found = corpus.retrieve_points([h.point_id for h in hits])
    assert {r.key for r in found} == {"a", "c"}


def test_search_respects_the_filter(corpus: VectorCollection) -> None:
    hits = corpus.search(
        SearchQuery(where=Where(must=(Eq("tag", "data"),)), limit=10, dense=unit(0))
    )
    assert keys_of(hits) == ["c"]


def test_term_statistics_come_from_the_searched_records_alone(corpus: VectorCollection) -> None:
    """Records outside a search's filter (another tenant's) do not change its BM25 scores,
    in a plain search, in hybrid fusion and when its corpus is named apart from `where`."""
    web = Where(must=(Eq("tag", "web"),))
    query = BM25.query("selenium chrome")

    def scores() -> tuple[list[float], list[float], list[float]]:
        plain = [h.score for h in corpus.search(SearchQuery(web, 10, sparse=query))]
        fused = [
            s
            for _, s in HybridFusion(pool=1, dense_weight=0.4).search(
                corpus, web, query, unit(1), limit=2
            )
        ]
        narrowed = corpus.search(
            SearchQuery(
                Where(must=(Eq("tag", "web"), HasKey(("a",)))), 10, sparse=query, corpus=web
            )
        )
        return plain, fused, [h.score for h in narrowed]

    before = scores()
    corpus.put(
        [record(f"other{i}", "selenium selenium chrome", unit(3), tag="other") for i in range(30)]
    )
    after = scores()
    # Equal to float precision: the statistics are read afresh after the writes, each
    # term's weight rescaled from the collection's to the corpus's (`SparseSearch`).
    for now, then in zip(after, before, strict=True):
        assert now == pytest.approx(then, rel=1e-6)
    everything = [
        h.score
        for h in corpus.search(SearchQuery(Where(), 10, sparse=query))
        if h.point_id in {point_id("a"), point_id("b")}
    ]
    assert everything != before[0]  # the statistics over every record do differ


@pytest.mark.parametrize(
    "vectors_given", [{}, {"sparse": BM25.query("x"), "dense": unit(0)}], ids=["none", "both"]
)
def test_a_search_takes_exactly_one_vector(vectors_given: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SearchQuery(where=Where(), limit=3, **vectors_given)


def test_searches_leave_out_bulk_fields_unless_asked(things: VectorCollection) -> None:
    history = [{"task": "x", "outcome": "ok"}, {"task": "y", "outcome": "bad"}]
    things.put([record("a", "selenium", tag="web", eval={"score": 4}, history=history)])
    query = SearchQuery(where=Where(), limit=1, sparse=BM25.query("selenium"))

    lean = things.search(query)
    full = things.search(replace(query, with_bulk=True))

    assert keys_of(lean) == keys_of(full) == ["a"]
    assert lean[0].record is not None and full[0].record is not None
    assert lean[0].record.payload == {"text": "selenium", "tag": "web", "eval": {"score": 4}}
    assert full[0].record.payload == {**lean[0].record.payload, "history": history}
    stored = things.get("a")
    assert stored is not None and stored.payload["history"] == history
    page, _ = things.scroll(Where(), 10)
    assert page[0].payload["history"] == history


# ---- Filters -----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=ADAPTERS)
def filterable(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VectorCollection]:
    """Four records to filter, shared by the read-only filter tests of one adapter."""
    store = open_store(request.param, tmp_path_factory.mktemp("filters"))
    things = store.open(SCHEMA)
    things.put(
        [
            record("k1", tag="red", n=1, rank=0.5),
            record("k2", tag="green", n=2, rank=1.5),
            record("k3", tag="blue", n=3, rank=2.5),
            record("k4", tag="red", n=4, rank=3.5),
        ]
    )
    yield things
    store.close()


FILTERS: dict[str, tuple[Where, set[str]]] = {
    "none": (Where(), {"k1", "k2", "k3", "k4"}),
    "eq-keyword": (Where(must=(Eq("tag", "red"),)), {"k1", "k4"}),
    "eq-integer": (Where(must=(Eq("n", 3),)), {"k3"}),
    "any-of": (Where(must=(AnyOf("tag", ("green", "blue")),)), {"k2", "k3"}),
    "range-closed": (Where(must=(Range("rank", gte=1.5, lte=2.5),)), {"k2", "k3"}),
    "range-open": (Where(must=(Range("rank", gt=1.5, lt=3.5),)), {"k3"}),
    "range-integer": (Where(must=(Range("n", gte=3),)), {"k3", "k4"}),
    "has-key": (Where(must=(HasKey(("k2", "k4", "nope")),)), {"k2", "k4"}),
    "must-not": (Where(must_not=(Eq("tag", "red"),)), {"k2", "k3"}),
    "must-not-has-key": (Where(must_not=(HasKey(("k1", "k2")),)), {"k3", "k4"}),
    "should": (Where(should=(Eq("tag", "green"), Range("n", gte=4))), {"k2", "k4"}),
    "must-and-must-not": (Where(must=(Eq("tag", "red"),), must_not=(Eq("n", 1),)), {"k4"}),
    "must-and-should": (
        Where(must=(Range("rank", gte=1.0),), should=(Eq("tag", "red"), Eq("tag", "blue"))),
        {"k3", "k4"},
    ),
    "no-match": (Where(must=(Eq("tag", "purple"),)), set()),
}


@pytest.mark.parametrize(("where", "expected"), list(FILTERS.values()), ids=list(FILTERS))
def test_filters(filterable: VectorCollection, where: Where, expected: set[str]) -> None:
    assert keys_where(filterable, where) == expected
    assert filterable.count(where) == len(expected)


def test_missing_matches_records_without_the_field(things: VectorCollection) -> None:
    things.put([record("a", tag="x"), record("b"), record("c", tag="y", n=1)])
    assert keys_where(things, Where(must=(Missing("tag"),))) == {"b"}
    assert keys_where(things, Where(must=(Missing("n"),))) == {"a", "b"}
    assert things.count(Where(must=(Missing("tag"),))) == 1


def test_set_fields_writes_indexed_fields_of_records_still_as_read(
    things: VectorCollection,
) -> None:
    things.put([record("a", "alpha", n=1), record("b", "beta"), record("c", "gamma")])
    a, b, c = (things.get(key, with_vectors=True) for key in "abc")
    assert a is not None and b is not None and c is not None
    things.put([record("b", "beta again", n=5)])  # written since it was read
    things.delete(["c"])

    things.set_fields([(a, {"tag": "red", "n": 10}), (b, {"tag": "red"}), (c, {"tag": "red"})])

    got = things.get("a", with_vectors=True)
    assert got is not None
    assert got.payload == {"text": "alpha", "n": 10, "tag": "red"}
    assert (got.version, got.write_token) == (a.version, a.write_token)
    assert list(got.vectors[DENSE]) == list(a.vectors[DENSE])
    assert keys_where(things, Where(must=(Eq("tag", "red"),))) == {"a"}  # indexed
    again = things.get("b")
    assert again is not None and again.payload == {"text": "beta again", "n": 5}
    assert things.get("c") is None
    # A later write of the record goes on from what is stored.
    changed = things.compare_and_set("a", lambda r: replace(r, payload={**r.payload, "n": 11}))
    assert changed.payload == {"text": "alpha", "n": 11, "tag": "red"}


def test_set_fields_refuses_a_field_that_is_not_indexed(things: VectorCollection) -> None:
    things.put([record("a", "alpha")])
    found = things.get("a")
    assert found is not None
    with pytest.raises(ValueError, match="text"):
        things.set_fields([(found, {"text": "changed"})])
    again = things.get("a")
    assert again is not None and again.payload["text"] == "alpha"


# ---- Scroll and count ---------------------------------------------------------------------


def test_scroll_pages_by_cursor_return_each_record_once(things: VectorCollection) -> None:
    keys = [f"rec-{i:03d}" for i in range(300)]
    things.put([record(k, rank=float(i)) for i, k in enumerate(keys)])

    seen, pages = all_keys(things, 128)

    assert len(seen) == len(set(seen)) == 300
    assert set(seen) == set(keys)
    assert pages == 3


def test_scroll_in_descending_order_resumes_from_a_value(things: VectorCollection) -> None:
    things.put([record(f"r{i}", rank=float(i)) for i in range(10)])

    page, cursor = things.scroll(Where(), 4, order=Order("rank", descending=True))
    assert [r.payload["rank"] for r in page] == [9.0, 8.0, 7.0, 6.0]
    assert cursor is None

    page, _ = things.scroll(Where(), 4, order=Order("rank", descending=True, start_from=5.0))
    assert [r.payload["rank"] for r in page] == [5.0, 4.0, 3.0, 2.0]

    page, _ = things.scroll(
        Where(must_not=(HasKey(("r5",)),)), 2, order=Order("rank", descending=True, start_from=5.0)
    )
    assert [r.key for r in page] == ["r4", "r3"]

    page, _ = things.scroll(Where(), 3, order=Order("rank", descending=False, start_from=7.0))
    assert [r.payload["rank"] for r in page] == [7.0, 8.0, 9.0]


def test_count(things: VectorCollection) -> None:
    assert things.count(Where()) == 0
    things.put([record(f"r{i}", tag="even" if i % 2 == 0 else "odd") for i in range(7)])
    assert things.count(Where()) == 7
    assert things.count(Where(must=(Eq("tag", "even"),))) == 4
    things.delete(["r0", "r1"])
    assert things.count(Where()) == 5


# ---- Manifest, rebuild --------------------------------------------------------------------


@pytest.mark.parametrize(
    "changed",
    [
        CollectionSchema(name="things", dense_dim=8, embedding_model="tiny-embed"),
        CollectionSchema(name="things", dense_dim=DIM, embedding_model="other-embed"),
        CollectionSchema(name="things"),
    ],
    ids=["dense_dim", "embedding_model", "bm25_only"],
)
def test_reopening_with_another_embedding_is_a_store_mismatch(
    backend: Backend, changed: CollectionSchema
) -> None:
    backend.store.open(SCHEMA).put([record("a", "alpha")])
    store = backend.reopen()

    with pytest.raises(StoreMismatch, match="knowhub reindex"):
        store.open(changed)

    again = store.open(SCHEMA)
    got = again.get("a")
    assert got is not None and got.payload["text"] == "alpha"


def test_rebuild_copies_every_record_into_the_new_schema(backend: Backend) -> None:
    things = backend.store.open(SCHEMA)
    things.put([record(f"r{i}", f"text {i}", n=i) for i in range(300)])
    bumped = things.compare_and_set(
        "r7", lambda r: Record(r.key, {**r.payload, "n": 70}, vectors=r.vectors)
    )
    assert bumped.version == 2
    before = {r.key: (r.payload, r.version) for r in things.scroll(Where(), 1000)[0]}
    store = backend.reopen()
    wide = CollectionSchema(
        name="things",
        dense_dim=8,
        embedding_model="wide-embed",
        keyword_fields=("tag",),
        integer_fields=("n",),
    )
    reported: list[tuple[int, int]] = []

    def revectorize(records: list[Record]) -> list[Vectors]:
        # r7 alone points along axis 5, so a dense search for it proves the new vectors.
        return [vectors(r.payload["text"], unit(5 if r.key == "r7" else 1, 8)) for r in records]

    copied = store.rebuild(wide, revectorize, lambda done, total: reported.append((done, total)))

    assert copied == 300
    assert reported and reported[-1] == (300, 300)
    assert {total for _done, total in reported} == {300}  # the total is known from the start
    with pytest.raises(StoreMismatch, match="knowhub reindex"):
        store.open(SCHEMA)
    rebuilt = store.open(wide)
    after = {r.key: (r.payload, r.version) for r in rebuilt.scroll(Where(), 1000)[0]}
    assert after == before
    assert after["r7"] == ({"text": "text 7", "n": 70}, 2)
    got = rebuilt.get("r3", with_vectors=True)
    assert got is not None and len(got.vectors[DENSE]) == 8
    hits = rebuilt.search(SearchQuery(where=Where(), limit=1, dense=unit(5, 8)))
    assert keys_of(hits) == ["r7"]
    assert math.isclose(hits[0].score, 1.0, rel_tol=1e-4)


# ---- Edge only -----------------------------------------------------------------------------


@pytest.fixture
def edge_root(tmp_path: Path) -> Path:
    return tmp_path / "qdrant"


def test_edge_keeps_data_across_close_and_reopen(edge_root: Path) -> None:
    store = EdgeStore(edge_root)
    things = store.open(SCHEMA)
    things.put([record(f"r{i}", f"selenium {i}", n=i) for i in range(20)])
    things.compare_and_set(
        "r1", lambda r: Record(r.key, {**r.payload, "n": 100}, vectors=r.vectors)
    )
    things.delete(["r2"])
    store.close()

    reopened = EdgeStore(edge_root)
    try:
        again = reopened.open(SCHEMA)
        assert again.count(Where()) == 19
        got = again.get("r1")
        assert got is not None and (got.payload["n"], got.version) == (100, 2)
        assert again.get("r2") is None
        hits = again.search(SearchQuery(where=Where(), limit=3, sparse=BM25.query("selenium")))
        assert len(hits) == 3
    finally:
        reopened.close()


def search_pool_threads() -> int:
    """This process's threads of the engine's search pools."""
    count = 0
    for thread in os.listdir("/proc/self/task"):
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            count += Path(f"/proc/self/task/{thread}/comm").read_text().startswith("edge-search")
    return count


def settled_search_pool_threads(seconds: float = 10.0) -> int:
    """`search_pool_threads` once the pools of stores closed before have ended: their
    threads exit after `close` returns."""
    deadline = time.monotonic() + seconds
    count = search_pool_threads()
    while count and time.monotonic() < deadline:
        time.sleep(0.05)
        count = search_pool_threads()
    return count


@pytest.mark.parametrize("threads", [1, 3, 0])
def test_edge_searches_with_the_threads_it_is_told(edge_root: Path, threads: int) -> None:
    before = settled_search_pool_threads()
    store = EdgeStore(edge_root, IndexTuning(search_threads=threads))
    try:
        things = store.open(SCHEMA)
        things.put([record(f"r{i}", f"selenium {i}") for i in range(5)])
        assert len(things.search(SearchQuery(Where(), 3, sparse=BM25.query("selenium")))) == 3
        assert search_pool_threads() - before == (threads or os.cpu_count())
    finally:
        store.close()


def test_edge_indexes_writes_in_the_background_and_keeps_finding_them(edge_root: Path) -> None:
    """Past `optimize_after_writes` the records get an HNSW graph (here for 8-dimensional
    vectors, with thresholds of 1 KB), the tag is a tenant index, and searches find the
    same records before, during and after: the graph's answers equal an exact scan's."""
    schema = replace(SCHEMA, name="indexed", dense_dim=8, tenant_field="tag")
    tuning = IndexTuning(
        full_scan_threshold_kb=1, indexing_threshold_kb=1, optimize_after_writes=300
    )
    store = EdgeStore(edge_root, tuning)
    things = store.open(schema)
    spread = [[math.sin(i * (d + 1)) for d in range(8)] for i in range(900)]
    for start in range(0, 900, 100):
        things.put(
            [
                record(
                    f"r{i}", f"word{i % 17} selenium", dense=spread[i], tag="a" if i % 3 else "b"
                )
                for i in range(start, start + 100)
            ]
        )
    in_b = Where(must=(Eq("tag", "b"),))
    first = things.search(SearchQuery(in_b, 10, dense=spread[3]))
    store.close()  # waits for the background optimisation
    # BM25 vectors count as indexed in every segment; dense ones once in a graph.
    assert _indexed_vectors(edge_root / "indexed") > 900

    reopened = EdgeStore(edge_root, tuning)  # opening indexes the rest
    try:
        again = reopened.open(schema).search(SearchQuery(in_b, 10, dense=spread[3]))
        assert keys_of(again) == keys_of(first) and keys_of(first)[0] == "r3"
    finally:
        reopened.close()
    shard = qe.EdgeShard.load(str(edge_root / "indexed"))
    try:
        info = shard.info()
        assert (info.points_count, info.indexed_vectors_count) == (900, 2 * 900)
        assert info.payload_schema["tag"].params.is_tenant
        for where in (
            None,
            qe.Filter(must=[qe.FieldCondition(key="tag", match=qe.MatchValue(value="b"))]),
        ):
            query = qe.Query.Nearest(spread[3], using=DENSE)
            graph, exact = (
                shard.query(qe.QueryRequest(limit=10, query=query, filter=where, params=params))
                for params in (dense_search_params(tuning), qe.SearchParams(exact=True))
            )
            # Scores, not ids: some of these vectors tie.
            assert [round(p.score, 5) for p in graph] == [round(p.score, 5) for p in exact]
    finally:
        shard.close()


def test_edge_indexes_a_collection_whose_writes_stopped(
    edge_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store loaded short of `optimize_after_writes` gets its graph once no record was
    written for `optimize_when_idle_seconds`, if what it holds unindexed is enough for one
    (here 8-dimensional vectors and a 1 KB threshold: 32 records); fewer are left to the
    scan they would get anyway."""
    schema = replace(SCHEMA, name="idle", dense_dim=8)
    tuning = IndexTuning(
        full_scan_threshold_kb=1, indexing_threshold_kb=1, optimize_when_idle_seconds=0.2
    )
    draw = random.Random(7)
    spread = [[draw.gauss(0, 1) for _ in range(8)] for _ in range(320)]
    caplog.set_level(logging.INFO, logger="knowhub_server.common.storage.edge_store")
    store = EdgeStore(edge_root, tuning)
    try:
        things = store.open(schema)
        things.put([record(f"r{i}", f"word{i}", dense=spread[i]) for i in range(20)])
        time.sleep(1.0)
        assert _dense_indexed(things) == 0  # 20 records: under the threshold
        things.put([record(f"r{i}", f"word{i}", dense=spread[i]) for i in range(20, 320)])
        deadline = time.monotonic() + 20
        while not _logged(caplog, "0.2 s after its last write") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _dense_indexed(things) == 320
        assert _logged(caplog, "indexed the idle store, 0.2 s after its last write, in")
        assert keys_of(things.search(SearchQuery(Where(), 3, dense=spread[3])))[0] == "r3"
        assert not things.optimize()  # nothing left to index
    finally:
        store.close()


def test_edge_indexes_only_after_its_writes_when_idle_indexing_is_off(edge_root: Path) -> None:
    schema = replace(SCHEMA, name="busy", dense_dim=8)
    tuning = IndexTuning(indexing_threshold_kb=1, optimize_when_idle_seconds=0)
    store = EdgeStore(edge_root, tuning)
    try:
        things = store.open(schema)
        things.put(
            [
                record(f"r{i}", "w", dense=[math.cos(i * (d + 1)) for d in range(8)])
                for i in range(100)
            ]
        )
        assert "index-idle" not in {t.name for t in threading.enumerate()}
        assert _dense_indexed(things) == 0
        assert things.optimize()
        assert _dense_indexed(things) == 100
    finally:
        store.close()


def _logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in r.getMessage() for r in caplog.records)


def _dense_indexed(collection: VectorCollection) -> int:
    """Vectors of an open embedded collection in an HNSW graph (its BM25 vectors count
    as indexed in every segment: one per point)."""
    info = cast(EdgeCollection, collection)._shard.info()
    return info.indexed_vectors_count - info.points_count


def test_edge_keeps_on_disk_only_the_segments_it_searches(edge_root: Path) -> None:
    """Each indexing replaces segments; a process that runs for days must not keep the
    replaced ones on disk until it closes (the engine drops them on its next flush)."""
    schema = replace(SCHEMA, name="merged", dense_dim=8)
    store = EdgeStore(
        edge_root,
        IndexTuning(full_scan_threshold_kb=1, indexing_threshold_kb=1, max_segment_size_kb=1000),
    )
    try:
        things = store.open(schema)
        for batch in range(4):
            things.put(
                [
                    record(
                        f"r{batch}-{i}",
                        f"word{i % 13}",
                        dense=[math.sin((i + 1) * (d + 1)) for d in range(8)],
                    )
                    for i in range(600)
                ]
            )
            assert things.optimize()
            on_disk = len(list((edge_root / "merged" / "segments").iterdir()))
            assert on_disk == things.segments(), f"after indexing {batch + 1} batches"
        assert things.count(Where()) == 2400
    finally:
        store.close()


def _quantized_segments(shard_path: Path) -> tuple[int, int]:
    """(segments with an HNSW graph, those of them holding int8 copies of the vectors)."""
    indexed = [
        s
        for s in (shard_path / "segments").iterdir()
        if (s / f"vector_index-{DENSE}" / "graph.bin").exists()
    ]
    return len(indexed), sum(
        (s / f"vector_storage-{DENSE}" / "quantized.data").exists() for s in indexed
    )


def test_edge_walks_the_graph_over_int8_copies_and_scores_exactly(
    edge_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Indexed segments hold int8 copies of the dense vectors (`quantize_dense`); a store
    written without them gets them when opened with them; searches walk the copies and
    rescore with the vectors: the scores of an exact scan."""
    schema = replace(SCHEMA, name="quantized", dense_dim=8)
    plain = IndexTuning(full_scan_threshold_kb=1, indexing_threshold_kb=1, quantize_dense=False)
    spread = [[math.sin((i + 1) * (d + 1)) for d in range(8)] for i in range(600)]
    store = EdgeStore(edge_root, plain)
    written = store.open(schema)
    written.put([record(f"r{i}", f"word{i % 13}", dense=spread[i]) for i in range(600)])
    written.optimize()
    store.close()
    indexed, quantized = _quantized_segments(edge_root / "quantized")
    assert indexed >= 1 and quantized == 0

    store = EdgeStore(edge_root, replace(plain, quantize_dense=True))
    try:
        with caplog.at_level(logging.WARNING, logger="knowhub_server.common.storage.edge_store"):
            things = store.open(schema)
        assert "gets int8 copies" in caplog.text  # the one-time wait is announced
        for probe in (spread[5], spread[77], [1.0] * 8):
            hits = things.search(SearchQuery(Where(), 10, dense=probe, with_payload=False))
            by_hand = sorted((_cosine(probe, v) for v in spread), reverse=True)[:10]
            assert [h.score for h in hits] == pytest.approx(by_hand, abs=1e-5)
    finally:
        store.close()
    # The segments opening replaced are removed on closing.
    assert _quantized_segments(edge_root / "quantized") == (indexed, indexed)
    caplog.clear()
    again = EdgeStore(edge_root, replace(plain, quantize_dense=True))
    with caplog.at_level(logging.WARNING, logger="knowhub_server.common.storage.edge_store"):
        again.open(schema)
    again.close()
    assert "gets int8 copies" not in caplog.text  # once only


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.hypot(*a) / math.hypot(*b)


def _indexed_vectors(path: Path) -> int:
    shard = qe.EdgeShard.load(str(path))
    try:
        return shard.info().indexed_vectors_count
    finally:
        shard.close()


def test_edge_refuses_a_shard_that_is_already_open(edge_root: Path) -> None:
    first = EdgeStore(edge_root)
    held = first.open(SCHEMA)
    held.put([record("a", "alpha")])
    second = EdgeStore(edge_root)
    try:
        with pytest.raises(Unavailable, match="in use"):
            second.open(SCHEMA)
        held.put([record("b", "beta")])  # the first holder keeps working
        assert held.count(Where()) == 2
    finally:
        second.close()
        first.close()
    third = EdgeStore(edge_root)
    try:
        assert {r.key for r in third.open(SCHEMA).retrieve(["a", "b"])} == {"a", "b"}
    finally:
        third.close()


@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize("tenant_idf", [True, False])
def test_bm25_statistics_come_from_the_corpus_only_with_tenant_idf(
    kind: str, tenant_idf: bool, tmp_path: Path
) -> None:
    """With tenant IDF, another tenant's words leave a search's scores as they were; without
    it (KNOWHUB_VECTOR_TENANT_IDF=false), they move them: the leak the setting trades."""
    root = tmp_path / "qdrant"
    tuning = IndexTuning(tenant_idf=tenant_idf)
    store = open_store(kind, root, tuning)
    things = store.open(SCHEMA)
    things.put(
        [record("a", "selenium login with chrome", tag="web"), record("b", "grid setup", tag="web")]
    )
    mine = Where(must=(Eq("tag", "web"),))

    def scores() -> list[float]:
        return [
            h.score
            for h in things.search(
                SearchQuery(where=mine, limit=5, sparse=BM25.query("selenium login"))
            )
        ]

    before = scores()
    things.put([record(f"x{i}", "selenium selenium", tag="data") for i in range(20)])
    assert (scores() == pytest.approx(before, rel=1e-6)) is tenant_idf
    store.close()
