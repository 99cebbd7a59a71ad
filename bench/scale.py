"""How far one node goes: knowledge search (BM25 and hybrid) and memory event search at
growing sizes, each size measured on a fresh `knowhub up` process.

For each mode and size: the ingest rate, the start-up time (from launch to serving, which
includes indexing what the last run left unindexed), SearchKnowledge p50/p99 through gRPC,
the server's memory split into anonymous (heap) and file-backed (memory-mapped store)
pages, and the store's size on disk. Then, with the server stopped, the same shard in this
process: the raw engine's hybrid search work (both searches, the bound, the fusion; no
embedding call) and the dense side's recall against an exact (exhaustive) search, with the
caller's filter (4 in 5 records) and another organisation's (1 in 5).

Hybrid runs use synthetic vectors (`--dim`, from the words of each text) served by a
loopback endpoint, so the model is not the bottleneck; searches repeat their queries once
to warm up, so the measured pass finds every query in the query embedding cache and
leaves the embedding call out. Memory events are written straight into the store
(BM25), then searched through SearchEvents.

Targets: hybrid work at 100k within 2x of 1k and p50 <= 5 ms at 100k;
anonymous memory <= 300 MB at 1M BM25 records; p50 at 1M within 2x of 10k.

    nice -n 10 .venv/bin/python -m bench scale --sizes 1000,10000,100000,1000000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import qdrant_edge as qe
from knowhub import KnowHub
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc, knowledge_pb2, knowledge_pb2_grpc

from bench.common import (
    BENCH_TOKEN,
    TextGenerator,
    percentiles,
    server_process,
    timed_calls,
    timed_ms,
)
from bench.embedding_cache import caching_endpoint
from bench.knowledge_latency import VISIBLE_SCOPES, synthetic_records
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.edge_store import EdgeStore, dense_search_params
from knowhub_server.common.storage.vectors import DEFAULT_TUNING, DENSE, HybridFusion, SearchQuery
from knowhub_server.dream.memory.domain import PERSPECTIVE_GROUP, CognitiveEvent
from knowhub_server.dream.memory.store import EVENTS, EventStore, MemoryVectors
from knowhub_server.knowledge.store import COLLECTION, knowledge_schema, visible_where

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
BATCH = 500
MODEL = "synthetic"
POOL = 50  # KNOWHUB_SEARCH_HYBRID_POOL's default: what the dense side recalls
GROUPS, USERS = 50, 500
LATENT = 48  # dimensions the synthetic vectors span


class SyntheticEmbeddings:
    """Vectors from the words of a text: each word a fixed random point (from its hash)
    of a `LATENT`-dimensional space mapped into `dim` dimensions, a text the normalised
    sum of its words' weighted towards rarer (longer) words. Texts sharing words get
    close vectors, as with a model, and like a sentence model's the vectors span few
    dimensions (which is what lets an approximate index find neighbours); a few dozen
    additions a text, so the model is never the bottleneck."""

    def __init__(self, dim: int) -> None:
        self.model = MODEL
        self.dim = dim
        self._basis = np.random.default_rng(384).standard_normal((LATENT, dim)).astype(np.float32)
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            latent = np.random.default_rng(seed).standard_normal(LATENT).astype(np.float32)
            vector = (latent @ self._basis) * len(word) ** 2  # longer words are rarer
            self._words[word] = vector
        return vector

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.stack(
            [
                np.sum(
                    [self._word(w) for w in t.split()] or [np.ones(self.dim, np.float32)], axis=0
                )
                for t in texts
            ]
        )
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).round(6).tolist()


@dataclass
class Row:
    """The figures of one mode at one size."""

    mode: str
    size: int
    ingest: float = 0.0  # records per second over this size's increment
    startup: float = 0.0  # seconds from launch to serving
    search: dict[str, float] = field(default_factory=dict)
    memory: dict[str, float] = field(default_factory=dict)  # MiB
    disk: float = 0.0  # MiB
    raw: dict[str, float] = field(default_factory=dict)  # in-process figures
    segments: int = 0


# ---- Process figures -------------------------------------------------------------------------


def memory_mib(pid: int) -> dict[str, float]:
    """Resident memory of a process in MiB: anonymous (heap: Python objects, the engine's
    mutable structures), file-backed (mapped store files, in the page cache), and peak."""
    wanted = {"RssAnon": "anon", "RssFile": "file", "VmHWM": "peak"}
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in wanted:
            found[wanted[key]] = int(rest.split()[0]) / 1024
    return found


def disk_mib(path: Path) -> float:
    """Space the files under `path` take on disk (allocated blocks, not apparent size)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file()) / 2**20


@contextmanager
def timed_server(data_dir: Path, env: dict[str, str]) -> Iterator[tuple[int, int, float]]:
    """A server process; yields (pid, port, seconds from launch to serving)."""
    started = time.perf_counter()
    with server_process(data_dir, env) as (process, port):
        yield process.pid, port, time.perf_counter() - started


# ---- Knowledge -------------------------------------------------------------------------------


def ingest(port: int, text: TextGenerator, count: int) -> float:
    """Records per second through BatchSaveKnowledge, 500 a call."""
    # A long deadline: the embedded store pauses the server while it indexes a batch.
    kh = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN, timeout=900)
    started, done = time.perf_counter(), 0
    while done < count:
        batch = min(BATCH, count - done)
        kh.knowledge.save_many(synthetic_records(text, batch))
        done += batch
    kh.close()
    return count / (time.perf_counter() - started) if count else 0.0


def search_latency(port: int, queries: list[str]) -> dict[str, float]:
    """SearchKnowledge percentiles (ms) of the second of two passes over the queries."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    search = knowledge_pb2_grpc.KnowledgeServiceStub(channel).SearchKnowledge
    requests = [knowledge_pb2.SearchKnowledgeRequest(query=q, top_k=5) for q in queries]
    try:
        return second_pass(search, requests)
    finally:
        channel.close()


def second_pass(call: Any, requests: Sequence[object]) -> dict[str, float]:
    """Percentiles (ms) of `call` over the requests, after a first pass to warm up (and
    fill the query embedding cache and the kept BM25 term readings); `cold` is the first
    pass's p50, every query term new to the process."""
    first = iter(requests)
    cold = percentiles(timed_ms(lambda: call(next(first), metadata=METADATA), len(requests), 0))[
        "p50"
    ]
    cycle = iter(requests)
    return percentiles(timed_ms(lambda: call(next(cycle), metadata=METADATA), len(requests), 0)) | {
        "cold": cold
    }


def raw_figures(
    data_dir: Path, queries: list[str], embeddings: SyntheticEmbeddings | None
) -> dict[str, float]:
    """In-process figures on the server's shard: the engine's BM25 search, and with dense
    vectors the hybrid search work and the dense side's recall."""
    root = data_dir / "qdrant"
    store = EdgeStore(root)
    schema = knowledge_schema(_Embedder(embeddings.dim) if embeddings else None)
    collection = store.open(schema)
    bm25 = Bm25Encoder()
    where = visible_where(VISIBLE_SCOPES, min_score=3)
    sparse = [bm25.query(q) for q in queries]
    figures = {}
    cycle = iter(range(10**9))
    figures["bm25"] = percentiles(
        timed_ms(
            lambda: collection.search(
                SearchQuery(where, 10, sparse=sparse[next(cycle) % len(queries)])
            ),
            len(queries),
            len(queries),
        )
    )["p50"]
    if embeddings is not None:
        dense = embeddings.embed(queries)
        fusion = HybridFusion(POOL, 0.6)
        figures["hybrid"] = percentiles(
            timed_ms(
                lambda: _hybrid(fusion, collection, where, sparse, dense, next(cycle)),
                len(queries),
                len(queries),
            )
        )["p50"]
        figures |= hybrid_parts(collection, where, sparse, dense)
    store.close()
    if embeddings is not None:
        figures |= dense_recall(root / COLLECTION, dense)
    else:
        figures["segments"] = segment_count(root / COLLECTION)
    return figures


def segment_count(shard_path: Path) -> float:
    shard = qe.EdgeShard.load(str(shard_path))
    try:
        return float(shard.info().segments_count)
    finally:
        shard.close()


def _hybrid(
    fusion: HybridFusion,
    collection: Any,
    where: Any,
    sparse: list[Any],
    dense: list[list[float]],
    n: int,
) -> object:
    index = n % len(sparse)
    return fusion.search(collection, where, sparse[index], dense[index], 5)


def hybrid_parts(
    collection: Any, where: Any, sparse: list[Any], dense: list[list[float]]
) -> dict[str, float]:
    """p50s (ms) of the parts of the hybrid search, each alone: the BM25 pool, the dense
    pool, and the BM25 bound (each query term's best score, kept since the first pass)."""
    parts: dict[str, Any] = {
        "part_bm25": lambda i: collection.search_batch(
            [SearchQuery(where, POOL, sparse=sparse[i], with_payload=False)]
        ),
        "part_dense": lambda i: collection.search_batch(
            [SearchQuery(where, POOL, dense=dense[i], with_payload=False)]
        ),
        "part_bound": lambda i: collection.search_bounded([], where, sparse[i])[1],
    }
    return {
        name: percentiles(timed_calls(lambda n, part=part: part(n % len(sparse)), len(sparse), 20))[
            "p50"
        ]
        for name, part in parts.items()
    }


@dataclass(frozen=True)
class _Embedder:
    """What `knowledge_schema` reads of an embedder."""

    dim: int
    model: str = MODEL


def dense_recall(shard_path: Path, dense: list[list[float]]) -> dict[str, float]:
    """Recall@50 of the engine's dense search (HNSW) against an exact search, over the
    caller's records (4 in 5) and another organisation's (1 in 5), and the p50 of each."""
    shard = qe.EdgeShard.load(str(shard_path))
    figures = {"segments": float(shard.info().segments_count)}
    service_params = dense_search_params(DEFAULT_TUNING)  # as the service asks
    for name, scopes in (("mine", sorted(VISIBLE_SCOPES)), ("other", ["org:globex"])):
        where = qe.Filter(must=[qe.FieldCondition(key="scopes", match=qe.MatchAny(any=scopes))])
        found, total, took = 0, 0, []
        for vector in dense:
            query = qe.Query.Nearest(vector, using=DENSE)
            started = time.perf_counter()
            approximate = shard.query(
                qe.QueryRequest(limit=POOL, query=query, filter=where, params=service_params)
            )
            took.append((time.perf_counter() - started) * 1000)
            exact = shard.query(
                qe.QueryRequest(
                    limit=POOL, query=query, filter=where, params=qe.SearchParams(exact=True)
                )
            )
            found += len({p.id for p in approximate} & {p.id for p in exact})
            total += len(exact)
        figures[f"recall_{name}"] = found / total if total else float("nan")
        figures[f"dense_{name}"] = percentiles(took)["p50"]
    shard.close()
    return figures


def knowledge_rows(tmp: Path, mode: str, sizes: list[int], searches: int, dim: int) -> list[Row]:
    text, queries = TextGenerator(seed=16), TextGenerator(seed=61)
    query_texts = [queries.query() for _ in range(searches)]
    data_dir = tmp / f"knowledge-{mode}"
    embeddings = SyntheticEmbeddings(dim) if mode == "hybrid" else None
    rows, stored = [], 0
    with ExitStack() as stack:
        env = {}
        if embeddings is not None:
            url = stack.enter_context(caching_endpoint(embeddings))
            env = {
                "KNOWHUB_EMBEDDING_BASE_URL": url,
                "KNOWHUB_EMBEDDING_MODEL": MODEL,
                "KNOWHUB_EMBEDDING_DIM": str(dim),
            }
        for size in sizes:
            row = Row(mode, size)
            with timed_server(data_dir, env) as (_pid, port, _startup):
                row.ingest = ingest(port, text, size - stored)
            stored = size
            with timed_server(data_dir, env) as (pid, port, startup):
                row.startup = startup
                row.search = search_latency(port, query_texts)
                row.memory = memory_mib(pid)
            row.disk = disk_mib(data_dir / "qdrant" / COLLECTION)
            row.raw = raw_figures(data_dir, query_texts[:200], embeddings)
            rows.append(row)
            print_row(row, flush=True)
    return rows


# ---- Memory events ---------------------------------------------------------------------------


def events(text: TextGenerator, rng: random.Random, start: int, count: int) -> list[CognitiveEvent]:
    now = time.time()
    made = []
    for index in range(start, start + count):
        at = now - rng.randrange(90 * 86_400)
        user = str(10_000 + rng.randrange(USERS))
        made.append(
            CognitiveEvent(
                event_id=f"bench_{index}_group",
                scope="org:acme",
                text=text.words(20),
                user_id=user,
                group_id=str(20_000 + rng.randrange(GROUPS)),
                sender_id=user,
                timestamp_epoch=at,
                timestamp_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at)),
                timestamp_local="",
                request_type="group",
                perspective=PERSPECTIVE_GROUP,
                is_absolute=True,
                job_id=f"bench_{index}",
            )
        )
    return made


def write_events(
    data_dir: Path, text: TextGenerator, rng: random.Random, start: int, count: int
) -> float:
    """Events per second written straight into the memory store (BM25), 500 at a time."""
    store = EdgeStore(data_dir / "qdrant")
    memory = EventStore(store, MemoryVectors(None), HybridFusion(POOL, 0.6))
    started = time.perf_counter()
    for offset in range(start, start + count, BATCH):
        memory.put(events(text, rng, offset, min(BATCH, start + count - offset)))
    store.close()  # waits for the last background indexing
    return count / (time.perf_counter() - started) if count else 0.0


def event_search_latency(
    port: int, queries: list[str], rng: random.Random, one_user: bool = False
) -> dict[str, float]:
    """SearchEvents percentiles (ms) in one group's memory (2% of the events), or with
    `one_user` in one member's events in it (0.004%), after a warm-up pass."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    search = dream_pb2_grpc.DreamServiceStub(channel).SearchEvents
    requests = [
        dream_pb2.SearchEventsRequest(
            query=q,
            target_group_id=str(20_000 + rng.randrange(GROUPS)),
            target_user_id=str(10_000 + rng.randrange(USERS)) if one_user else "",
        )
        for q in queries
    ]
    try:
        return second_pass(search, requests)
    finally:
        channel.close()


def event_rows(tmp: Path, sizes: list[int], searches: int) -> list[Row]:
    """Per size, a row for searches in one group's memory ("events") and one for one
    member's events in a group ("ev-user"), from the same server process."""
    text, rng = TextGenerator(seed=23), random.Random(23)
    query_texts = [TextGenerator(seed=32).query() for _ in range(searches)]
    data_dir, rows, stored = tmp / "events", [], 0
    for size in sizes:
        group, member = Row("events", size), Row("ev-user", size)
        group.ingest = member.ingest = write_events(data_dir, text, rng, stored, size - stored)
        stored = size
        with timed_server(data_dir, {}) as (pid, port, startup):
            group.startup = member.startup = startup
            group.search = event_search_latency(port, query_texts, rng)
            member.search = event_search_latency(port, query_texts, rng, one_user=True)
            group.memory = member.memory = memory_mib(pid)
        group.disk = member.disk = disk_mib(data_dir / "qdrant" / EVENTS)
        group.raw = member.raw = {"segments": segment_count(data_dir / "qdrant" / EVENTS)}
        rows += [group, member]
        print_row(group, flush=True)
        print_row(member, flush=True)
    return rows


# ---- Report ----------------------------------------------------------------------------------

HEADER = (
    f"{'mode':<7} {'records':>9} {'ingest/s':>9} {'start s':>8} {'cold ms':>8} "
    f"{'p50 ms':>7} "
    f"{'p99 ms':>7} {'anon MiB':>9} {'file MiB':>9} {'peak MiB':>9} {'disk MiB':>9} "
    f"{'raw bm25':>9} {'raw hyb':>8} {'dense':>6} {'recall':>7} {'rec oth':>8} "
    f"{'segs':>5}"
)


def print_row(row: Row, flush: bool = False) -> None:
    raw = row.raw
    print(
        f"{row.mode:<7} {row.size:>9} {row.ingest:>9.0f} {row.startup:>8.1f} "
        f"{row.search['cold']:>8.2f} {row.search['p50']:>7.2f} {row.search['p99']:>7.2f} "
        f"{row.memory['anon']:>9.0f} {row.memory['file']:>9.0f} {row.memory['peak']:>9.0f} "
        f"{row.disk:>9.0f} {raw.get('bm25', float('nan')):>9.2f} "
        f"{raw.get('hybrid', float('nan')):>8.2f} {raw.get('dense_mine', float('nan')):>6.2f} "
        f"{raw.get('recall_mine', float('nan')):>7.3f} "
        f"{raw.get('recall_other', float('nan')):>8.3f} "
        f"{int(raw.get('segments', 0)):>5}",
        flush=flush,
    )


def report(rows: list[Row]) -> None:
    print("\n== scale: one node, one `knowhub up` process per measurement ==")
    print(
        "ingest: BatchSaveKnowledge (500/call) for knowledge, straight into the store for "
        "events; p50/p99: SearchKnowledge (top_k 5) or SearchEvents through gRPC, second "
        "pass over the queries; cold: the first pass's p50;\n"
        "events / ev-user: SearchEvents in one group's memory (2% of the events) / in one "
        "member's events in a group (0.004%);\n"
        "raw bm25 / raw hyb: the engine's BM25 search / the hybrid search work in-process "
        "(ms, no embedding call); dense: the dense search's p50 (ms);\n"
        f"recall / rec oth: recall@{POOL} of the dense search against an exact one, with "
        "the caller's filter (4 in 5 records) / another org's (1 in 5)"
    )
    print(HEADER)
    for row in rows:
        print_row(row)
    for mode in ("bm25", "hybrid", "events", "ev-user"):
        mine = {r.size: r for r in rows if r.mode == mode}
        if len(mine) < 2:
            continue
        first, last = mine[min(mine)], mine[max(mine)]
        line = (
            f"{mode}: p50 {first.size} -> {last.size}: "
            f"{last.search['p50'] / first.search['p50']:.2f}x"
        )
        if 10_000 in mine and last.size > 10_000:
            line += (
                f"; {last.size} vs 10000: "
                f"{last.search['p50'] / mine[10_000].search['p50']:.2f}x (target <= 2x)"
            )
        if mode == "hybrid":
            line += (
                f"; raw hybrid work {first.size} -> {last.size}: "
                f"{last.raw['hybrid'] / first.raw['hybrid']:.2f}x (target <= 2x at 100k)"
            )
        print(line)
    hybrid = [r for r in rows if r.mode == "hybrid"]
    if hybrid:
        print("\nhybrid search work in-process, p50 ms: the whole, and its parts each alone")
        print(
            f"{'records':>9} {'whole':>7} {'BM25 pool':>10} {'dense pool':>11} {'BM25 bound':>11}"
        )
        for row in hybrid:
            raw = row.raw
            print(
                f"{row.size:>9} {raw['hybrid']:>7.2f} {raw['part_bm25']:>10.2f} "
                f"{raw['part_dense']:>11.2f} {raw['part_bound']:>11.2f}"
            )
    print("targets: hybrid p50 <= 5 ms at 100k; anonymous memory <= 300 MB at 1M BM25 records")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="1000,10000,100000", help="knowledge record counts, ascending"
    )
    parser.add_argument(
        "--hybrid-sizes", default=None, help="record counts of the hybrid runs (default: --sizes)"
    )
    parser.add_argument(
        "--event-sizes", default="10000,100000", help="memory event counts, ascending"
    )
    parser.add_argument(
        "--modes", default="bm25,hybrid,events", help="which of bm25, hybrid and events to run"
    )
    parser.add_argument("--searches", type=int, default=500, help="searches per size")
    parser.add_argument("--dim", type=int, default=384, help="synthetic vector size")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    hybrid_sizes = [int(s) for s in (args.hybrid_sizes or args.sizes).split(",")]
    modes = args.modes.split(",")
    rows: list[Row] = []
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-scale-", dir="/var/tmp") as name:
        tmp = Path(name)
        if "bm25" in modes:
            rows += knowledge_rows(tmp, "bm25", sizes, args.searches, args.dim)
        if "hybrid" in modes:
            rows += knowledge_rows(tmp, "hybrid", hybrid_sizes, args.searches, args.dim)
        if "events" in modes:
            rows += event_rows(tmp, [int(s) for s in args.event_sizes.split(",")], args.searches)
    report(rows)


if __name__ == "__main__":
    main()
