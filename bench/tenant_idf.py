"""What BM25 term statistics per caller cost: every search takes its IDF from the records
the caller can see (the engine's IDF corpus = the search's filter) instead of from the
whole collection, so another organisation's private words never change the caller's
scores.

Prints, at N records spread over several organisations: the engine's search p50/p95 with
statistics over the caller's records and over the whole collection (the old way), for a
plain BM25 search and for the batch hybrid search sends (the query plus one search per
term, for its bound); the service's SearchKnowledge p50 as deployed; and, to show what is
bought, how much a caller's top score moves when another organisation adds records
holding the query's words, under each way.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from qdrant_edge import SparseVector

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process, timed_ms
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import (
    SPARSE,
    Record,
    SearchQuery,
    VectorCollection,
    Where,
)
from knowhub_server.knowledge.store import knowledge_schema, visible_where

VISIBLE = frozenset({"user:bench", "agent:bench_agent", "org:acme", "public"})
GLOBAL = Where()


def _org(index: int, orgs: int) -> str:
    return "acme" if index % orgs == 0 else f"org{index % orgs}"


def _fill(
    collection: VectorCollection,
    text: TextGenerator,
    bm25: Bm25Encoder,
    count: int,
    orgs: int,
    start: int = 0,
) -> None:
    for offset in range(0, count, 500):
        batch = []
        for index in range(start + offset, start + min(count, offset + 500)):
            body = text.words(60)
            batch.append(
                Record(
                    key=f"k{index}",
                    payload={
                        "scopes": [f"org:{_org(index, orgs)}"],
                        "types": ["tool"],
                        "score": 3,
                        "updated_at": float(index),
                        "text": body,
                    },
                    vectors={SPARSE: bm25.document(body)},
                )
            )
        collection.put(batch)


def _searches(where: Where, sparse: SparseVector, corpus: Where | None) -> list[SearchQuery]:
    """The hybrid's sparse batch: the query, and each term alone for the bound."""
    terms = [SparseVector([t], [v]) for t, v in zip(sparse.indices, sparse.values, strict=True)]
    return [
        SearchQuery(where, 10, sparse=sparse, with_payload=False, corpus=corpus),
        *(SearchQuery(where, 1, sparse=t, with_payload=False, corpus=corpus) for t in terms),
    ]


def _engine(
    collection: VectorCollection, queries: list[SparseVector], searches: int
) -> dict[str, dict[str, float]]:
    where = visible_where(VISIBLE, min_score=3)
    rows = {}
    for name, corpus in (("caller's records", None), ("whole collection", GLOBAL)):
        plain = iter([SearchQuery(where, 10, sparse=q, corpus=corpus) for q in queries] * 50)
        batch = iter([_searches(where, q, corpus) for q in queries] * 50)
        rows[name] = {
            "plain": percentiles(timed_ms(lambda p=plain: collection.search(next(p)), searches)),
            "batch": percentiles(
                timed_ms(lambda b=batch: collection.search_batch(next(b)), searches)
            ),
        }
    return rows


def _drift(
    collection: VectorCollection,
    text: TextGenerator,
    bm25: Bm25Encoder,
    query: str,
    count: int,
    orgs: int,
) -> dict[str, float]:
    """How much acme's top score for `query` moves (relative) when another organisation
    adds 10% more records that hold the query's words."""
    where = visible_where(VISIBLE, min_score=3)
    sparse = bm25.query(query)

    def top(corpus: Where | None) -> float:
        hits = collection.search(SearchQuery(where, 1, sparse=sparse, corpus=corpus))
        return hits[0].score if hits else 0.0

    before = {"caller's records": top(None), "whole collection": top(GLOBAL)}
    collection.put(
        [
            Record(
                key=f"leak{i}",
                payload={
                    "scopes": ["org:org1"],
                    "types": ["tool"],
                    "score": 3,
                    "updated_at": 0.0,
                    "text": query,
                },
                vectors={SPARSE: bm25.document(f"{query} {text.words(20)}")},
            )
            for i in range(max(1, count // 10))
        ]
    )
    after = {"caller's records": top(None), "whole collection": top(GLOBAL)}
    return {
        name: abs(after[name] - before[name]) / before[name] if before[name] else 0.0
        for name in before
    }


def _service_p50(data_dir: Path, count: int, orgs: int, queries: list[str]) -> float:
    from knowhub import KnowHub

    text = TextGenerator(seed=11)
    cycle = iter(queries * 50)
    with (
        server_process(data_dir) as (_process, port),
        KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN) as kh,
    ):
        for offset in range(0, count, 500):
            kh.knowledge.save_many(
                [
                    {
                        "task": text.words(12),
                        "content": text.words(60),
                        "types": ["tool"],
                        "scopes": [f"org:{_org(i, orgs)}"],
                        "owner": "user:bench",
                    }
                    for i in range(offset, min(count, offset + 500))
                ]
            )
        samples = timed_ms(lambda: kh.knowledge.search(next(cycle), top_k=5), len(queries))
    return percentiles(samples)["p50"]


def run(count: int, orgs: int, searches: int) -> None:
    text, bm25 = TextGenerator(), Bm25Encoder()
    queries = [text.query() for _ in range(200)]
    sparse = [bm25.query(q) for q in queries]
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-idf-") as tmp:
        store = EdgeStore(Path(tmp) / "engine")
        collection = store.open(knowledge_schema(None))
        _fill(collection, text, bm25, count, orgs)
        engine = _engine(collection, sparse, searches)
        drift = _drift(collection, text, bm25, queries[0], count, orgs)
        store.close()
        service = _service_p50(Path(tmp) / "service", count, orgs, queries)
    print(
        f"\n== BM25 term statistics per caller: {count} records over {orgs} organisations, "
        f"the caller sees 1/{orgs} =="
    )
    print(
        f"{'IDF over':<18} {'search p50':>11} {'p95':>7} {'hybrid batch p50':>17} "
        f"{'p95':>7} {'top score moved':>16}"
    )
    for name, row in engine.items():
        print(
            f"{name:<18} {row['plain']['p50']:9.3f}ms {row['plain']['p95']:6.3f} "
            f"{row['batch']['p50']:15.3f}ms {row['batch']['p95']:6.3f} "
            f"{drift[name]:15.1%}"
        )
    mine, theirs = engine["caller's records"], engine["whole collection"]
    print(
        f"cost: search p50 x{mine['plain']['p50'] / theirs['plain']['p50']:.2f}, hybrid "
        f"batch p50 x{mine['batch']['p50'] / theirs['batch']['p50']:.2f} (raw engine, "
        "same filter)"
    )
    print(f"SearchKnowledge through gRPC (per-caller statistics, top_k=5): p50 {service:.3f} ms")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--orgs", type=int, default=8)
    parser.add_argument("--searches", type=int, default=2000)
    args = parser.parse_args(argv)
    run(args.records, args.orgs, args.searches)


if __name__ == "__main__":
    main()
