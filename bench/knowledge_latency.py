"""Knowledge service speed: ingest rate, search latency at growing sizes, against the raw
engine and a bare gRPC round trip; peak memory of the server.

Targets: search p50 <= 2 ms and p99 <= 10 ms at 10k records; p50 growth from
1k to 100k <= 2x; service / (raw engine + bare gRPC) <= 1.5; ingest >= 5,000 records/s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub import KnowHub
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from bench.common import (
    BENCH_TOKEN,
    TextGenerator,
    peak_rss_mb,
    percentiles,
    server_process,
    timed_ms,
)
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import SearchQuery
from knowhub_server.knowledge.store import knowledge_schema, visible_where

VISIBLE_SCOPES = frozenset({"user:bench", "agent:bench_agent", "org:acme", "public"})
BATCH = 500


def synthetic_records(text: TextGenerator, count: int) -> list[dict[str, Any]]:
    """Agent experience spread over visible and invisible scopes (1 in 5 is another org's)."""
    items = []
    for index in range(count):
        scopes = ["org:globex"] if index % 5 == 4 else ["org:acme"]
        items.append(
            {
                "task": text.words(12),
                "content": text.words(60),
                "types": ["strategy", "tool"][index % 2 :][:1],
                "scopes": scopes,
                "score": 1 + index % 5,
                "owner": "user:bench",
            }
        )
    return items


def _ingest(kh: KnowHub, items: list[dict[str, Any]]) -> float:
    """Records per second through BatchSaveKnowledge (500 per call)."""
    started = time.perf_counter()
    for offset in range(0, len(items), BATCH):
        kh.knowledge.save_many(items[offset : offset + BATCH])
    return len(items) / (time.perf_counter() - started)


def _single_saves(kh: KnowHub, items: list[dict[str, Any]], threads: int) -> float:
    """Records per second through one SaveKnowledge per record."""
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda item: kh.knowledge.save(**item), items))
    return len(items) / (time.perf_counter() - started)


def _raw_engine_p50(data_dir: Path, queries: list[str]) -> float:
    """The engine alone: the same filtered BM25 query on the service's own shard."""
    store = EdgeStore(data_dir / "qdrant")
    collection = store.open(knowledge_schema(None))
    bm25 = Bm25Encoder()
    where = visible_where(VISIBLE_SCOPES, min_score=3)
    prepared = [SearchQuery(where=where, limit=10, sparse=bm25.query(q)) for q in queries]
    cycle = iter(prepared * 100)
    samples = timed_ms(lambda: collection.search(next(cycle)), len(queries))
    store.close()
    return percentiles(samples)["p50"]


def run(sizes: list[int], searches: int) -> None:
    text = TextGenerator()
    queries = [text.query() for _ in range(searches)]
    rows, batch_rates = [], []
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-") as tmp:
        data_dir, stored = Path(tmp) / "data", 0
        for size in sizes:
            with server_process(data_dir) as (_process, port):
                kh = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN)
                batch_rates.append(_ingest(kh, synthetic_records(text, size - stored)))
                stored = size
                row = {"size": size, **_search_latency(port, queries)}
                kh.close()
            # With the server stopped, the engine can open its shard on its own.
            row["raw"] = _raw_engine_p50(data_dir, queries)
            rows.append(row)
        with server_process(data_dir) as (process, port):
            kh = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN)
            single = _single_saves(kh, synthetic_records(text, 1000), threads=1)
            concurrent = _single_saves(kh, synthetic_records(text, 2000), threads=8)
            _search_latency(port, queries)
            rss = peak_rss_mb(process.pid)
            kh.close()
    _report(rows, single, concurrent, batch_rates, rss)


def _search_latency(port: int, queries: list[str]) -> dict[str, float]:
    """SearchKnowledge percentiles through the generated stub (the SDK adds its typed
    results on top) and a bare gRPC round trip's p50, measured in alternation so that
    the machine's drift affects both alike."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    search = knowledge_pb2_grpc.KnowledgeServiceStub(channel).SearchKnowledge
    health = health_pb2_grpc.HealthStub(channel)
    metadata = (("authorization", f"Bearer {BENCH_TOKEN}"),)
    searches, bare = [], []
    for index, query in enumerate(queries * 2):
        request = knowledge_pb2.SearchKnowledgeRequest(query=query, top_k=5)
        started = time.perf_counter()
        search(request, metadata=metadata)
        middle = time.perf_counter()
        health.Check(health_pb2.HealthCheckRequest())
        if index >= len(queries):  # the first pass warms up
            searches.append((middle - started) * 1000)
            bare.append((time.perf_counter() - middle) * 1000)
    channel.close()
    return {**percentiles(searches), "bare": percentiles(bare)["p50"]}


def _report(
    rows: list[dict[str, float]],
    single: float,
    concurrent: float,
    batch_rates: list[float],
    rss: float,
) -> None:
    print("\n== knowledge: ingest ==")
    print(f"SaveKnowledge, 1 client:          {single:8.0f} records/s")
    print(f"SaveKnowledge, 8 clients:         {concurrent:8.0f} records/s")
    print(
        f"BatchSaveKnowledge (500/call):    {min(batch_rates):8.0f} records/s (slowest of "
        f"{len(batch_rates)} loads)   target >= 5000"
    )
    print("\n== knowledge: SearchKnowledge through gRPC (top_k=5, BM25, scope-filtered) ==")
    print(
        f"{'records':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'raw p50':>8} "
        f"{'bare p50':>9} {'service/(raw+bare)':>19}"
    )
    for row in rows:
        ratio = row["p50"] / (row["raw"] + row["bare"])
        print(
            f"{int(row['size']):>8} {row['p50']:8.3f} {row['p95']:8.3f} {row['p99']:8.3f} "
            f"{row['raw']:8.3f} {row['bare']:9.3f} {ratio:19.2f}"
        )
    first, last = rows[0], rows[-1]
    print(
        f"targets: p50 <= 2 ms and p99 <= 10 ms at 10k; service/(raw+bare) <= 1.5; "
        f"p50 growth {int(first['size'])} -> {int(last['size'])}: "
        f"{last['p50'] / first['p50']:.2f}x (target <= 2x)"
    )
    print(f"server peak RSS: {rss:.0f} MiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="record counts to measure at, ascending"
    )
    parser.add_argument("--searches", type=int, default=2000, help="searches per size")
    args = parser.parse_args(argv)
    run([int(s) for s in args.sizes.split(",")], args.searches)


if __name__ == "__main__":
    main()
