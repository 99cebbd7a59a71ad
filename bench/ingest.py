"""Bulk ingest: KnowHub's BatchSaveKnowledge beside the raw engine writing the same records.

KnowHub: `knowhub up` in its own process (Qdrant Edge, BM25; hybrid too when
KNOWHUB_EMBEDDING_BASE_URL, _MODEL and _DIM name an endpoint, read through one caching
endpoint), saved through the SDK over gRPC, `--batch` records a call, idempotent by
content (each save looks for a record saying the same). Raw: an Edge shard of the
engine in this process, with the same vectors (BM25 made here from the same text; the
same dense vectors, read beforehand), the payload task and content, one upsert per batch.
The sides take turns batch by batch (KnowHub, raw, KnowHub, ...; with `--before`, another
checkout's server takes its turn too), so a machine whose speed drifts slows them alike.
Prints records per second for each side and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

import qdrant_edge as qe
from knowhub import KnowHub

from bench.common import BENCH_TOKEN, ROOT, TextGenerator, server_process
from bench.embedding_cache import CachedEmbeddings, search_kinds
from knowhub_server.common.embedding import Bm25Encoder
from knowhub_server.common.vectors import DENSE, SPARSE, point_id

Batch = list[tuple[str, str]]  # (task, content)


def records(count: int, seed: int) -> list[tuple[str, str]]:
    """Synthetic experience: a task of 6-10 words, a content of 40-80 (Zipf words)."""
    text = TextGenerator(seed)
    lengths = TextGenerator(seed + 1)._random
    return [
        (text.words(lengths.randint(6, 10)), text.words(lengths.randint(40, 80)))
        for _ in range(count)
    ]


class RawEngine:
    """An Edge shard written directly: the engine's own upsert rate."""

    def __init__(self, path: Path, dense_dim: int | None) -> None:
        dense = {}
        if dense_dim:
            dense[DENSE] = qe.EdgeVectorParams(size=dense_dim, distance=qe.Distance.Cosine)
        path.mkdir(parents=True)
        config = qe.EdgeConfig(
            vectors=dense,
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        self._shard = qe.EdgeShard.create(str(path), config)
        self._bm25 = Bm25Encoder()
        self.upsert_seconds = 0.0

    def write(self, batch: Batch, dense: Sequence[list[float]] | None, first: int) -> None:
        vectors = [{SPARSE: self._bm25.document(f"{t}\n{c}")} for t, c in batch]
        if dense is not None:
            for item, vector in zip(vectors, dense, strict=True):
                item[DENSE] = vector
        points = [
            qe.Point(point_id(f"raw-{first + i}"), v, {"task": t, "content": c})
            for i, ((t, c), v) in enumerate(zip(batch, vectors, strict=True))
        ]
        started = time.perf_counter()
        self._shard.update(qe.UpdateOperation.upsert_points(points))
        self.upsert_seconds += time.perf_counter() - started

    def close(self) -> None:
        self._shard.close()


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def save(client: KnowHub, batch: Batch) -> None:
    client.knowledge.save_many(
        [{"task": t, "content": c, "types": ["usecase"]} for t, c in batch]
    )


def run(
    servers: dict[str, Path],
    env: dict[str, str],
    data: list[Batch],
    dense: list[list[list[float]]] | None,
    directory: Path,
) -> dict[str, float]:
    """Records per second of each server and of the raw engine, taking turns per batch."""
    seconds = dict.fromkeys([*servers, "raw engine"], 0.0)
    with ExitStack() as stack:
        clients = {}
        for name, root in servers.items():
            python = str(root / ".venv" / "bin" / "python")
            _process, port = stack.enter_context(
                server_process(directory / name / "data", env, root=root, python=python)
            )
            clients[name] = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN, timeout=600)
            stack.callback(clients[name].close)
            save(clients[name], records(20, seed=99))  # warm: connection, first writes
        dim = len(dense[0][0]) if dense else None
        raw = RawEngine(directory / "raw", dim)
        stack.callback(raw.close)
        raw.write(records(20, seed=99), [[1.0] * dim] * 20 if dim else None, -20)
        raw.upsert_seconds = 0.0
        first = 0
        for index, batch in enumerate(data):
            for name, client in clients.items():
                seconds[name] += timed(lambda c=client, b=batch: save(c, b))
            vectors = dense[index] if dense else None
            seconds["raw engine"] += timed(lambda b=batch, v=vectors: raw.write(b, v, first))
            first += len(batch)
        seconds["raw upsert alone"] = raw.upsert_seconds
    return {name: first / spent for name, spent in seconds.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=4000, help="records each side saves")
    parser.add_argument("--batch", type=int, default=500, help="records a call")
    parser.add_argument("--before", type=Path, help="another checkout (with its own .venv)")
    args = parser.parse_args(argv)
    rows = records(args.records, seed=7)
    data = [rows[i : i + args.batch] for i in range(0, len(rows), args.batch)]
    servers = {"KnowHub": ROOT}
    if args.before:
        servers = {"KnowHub before": args.before, "KnowHub": ROOT}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-ingest-")))
        kinds = search_kinds(stack)
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(
            f"== BatchSaveKnowledge vs the raw engine: {args.records} records, "
            f"{args.batch} a call, at {head} =="
        )
        for kind, env in kinds.items():
            dense = None
            if kind != "BM25":
                embeddings = CachedEmbeddings(
                    os.environ["KNOWHUB_EMBEDDING_BASE_URL"], os.environ["KNOWHUB_EMBEDDING_MODEL"]
                )
                stack.callback(embeddings.close)
                dense = [embeddings.embed([f"{t}\n{c}" for t, c in b]) for b in data]
            load = os.getloadavg()[0]
            rates = run(servers, env, data, dense, tmp / kind)
            raw = rates["raw engine"]
            cells = "  ".join(f"{name} {rate:,.0f}" for name, rate in rates.items())
            print(
                f"{kind:7} records/s: {cells}  (KnowHub / raw engine {rates['KnowHub'] / raw:.2f});"
                f" load {load:.1f} -> {os.getloadavg()[0]:.1f}"
            )


if __name__ == "__main__":
    main()
