"""Bulk ingest: KnowHub's BatchSaveKnowledge beside the raw engine writing the same records.

KnowHub: `knowhub up` in its own process (Qdrant Edge, BM25; hybrid too when
KNOWHUB_EMBEDDING_BASE_URL, _MODEL and _DIM name an endpoint, read through one caching
endpoint), saved through the SDK over gRPC, `--batch` records a call, idempotent by
content (each save looks for a record saying the same), each call answered with the ids
alone as a bulk load asks (`--view full`: the whole records). Raw: an Edge shard of the
engine in this process, with the same vectors (BM25 made here from the same text; the
same dense vectors, read beforehand), the payload task and content, one upsert per batch.
The sides take turns batch by batch (KnowHub, raw, KnowHub, ...; with `--before`, another
checkout's server takes its turn too), so a machine whose speed drifts slows them alike.
Prints records per second for each side, CPU time per record (a server's process, all
its threads, plus the SDK's in the client; the raw engine's thread), and the load average
before and after: on a shared machine the CPU times hold better than the rates.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
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
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.vectors import DENSE, SPARSE, Vectors, point_id

Batch = list[tuple[str, str]]  # (task, content)


def records(count: int, seed: int) -> list[tuple[str, str]]:
    """Synthetic experience: a task of 6-10 words, a content of 40-80 (Zipf words)."""
    text, lengths = TextGenerator(seed), random.Random(seed + 1)
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
        self.upsert = Side()  # the engine's update call alone

    def write(self, batch: Batch, dense: Sequence[list[float]] | None, first: int) -> None:
        vectors: list[Vectors] = [{SPARSE: self._bm25.document(f"{t}\n{c}")} for t, c in batch]
        if dense is not None:
            for item, vector in zip(vectors, dense, strict=True):
                item[DENSE] = vector
        points = [
            qe.Point(point_id(f"raw-{first + i}"), v, {"task": t, "content": c})
            for i, ((t, c), v) in enumerate(zip(batch, vectors, strict=True))
        ]
        self.upsert.timed(lambda: self._shard.update(qe.UpdateOperation.upsert_points(points)))

    def close(self) -> None:
        self._shard.close()


def process_cpu(pid: int) -> float:
    """CPU seconds a process has used so far, all its threads (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Side:
    """One side's wall time and CPU time over the batches it wrote."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid  # a server process whose CPU counts too
        self.wall = 0.0
        self.cpu = 0.0

    def timed(self, call: Callable[[], object]) -> None:
        server = process_cpu(self.pid) if self.pid else 0.0
        started, cpu = time.perf_counter(), time.thread_time()
        call()
        self.wall += time.perf_counter() - started
        self.cpu += time.thread_time() - cpu + (process_cpu(self.pid) - server if self.pid else 0)


def save(client: KnowHub, batch: Batch, view: str) -> None:
    client.knowledge.save_many(
        [{"task": t, "content": c, "types": ["usecase"]} for t, c in batch], view=view
    )


def run(
    servers: dict[str, Path],
    env: dict[str, str],
    data: list[Batch],
    dense: list[list[list[float]]] | None,
    directory: Path,
    view: str,
) -> dict[str, Side]:
    """Each server's and the raw engine's times, taking turns batch by batch."""
    with ExitStack() as stack:
        clients, sides = {}, {}
        for name, root in servers.items():
            python = str(root / ".venv" / "bin" / "python")
            process, port = stack.enter_context(
                server_process(directory / name / "data", env, root=root, python=python)
            )
            clients[name] = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN, timeout=600)
            stack.callback(clients[name].close)
            save(clients[name], records(20, seed=99), view)  # warm: connection, first writes
            sides[name] = Side(process.pid)
        dim = len(dense[0][0]) if dense else None
        raw = RawEngine(directory / "raw", dim)
        stack.callback(raw.close)
        raw.write(records(20, seed=99), [[1.0] * dim] * 20 if dim else None, -20)
        raw.upsert = Side()
        sides["raw engine"] = Side()
        first = 0
        for index, batch in enumerate(data):
            for name, client in clients.items():
                sides[name].timed(functools.partial(save, client, batch, view))
            vectors = dense[index] if dense else None
            sides["raw engine"].timed(functools.partial(raw.write, batch, vectors, first))
            first += len(batch)
        sides["raw upsert alone"] = raw.upsert
    return sides


def report(kind: str, sides: dict[str, Side], count: int, load: tuple[float, float]) -> None:
    raw = sides["raw engine"]
    mine = sides["KnowHub"]
    print(f"{kind}: load average {load[0]:.1f} before, {load[1]:.1f} after")
    print(f"  {'':18}{'records/s':>11}{'CPU us/record':>15}")
    for name, side in sides.items():
        print(f"  {name:18}{count / side.wall:11,.0f}{side.cpu * 1e6 / count:15.1f}")
    print(
        f"  KnowHub / raw engine: {raw.wall / mine.wall:.2f} in records/s, "
        f"{raw.cpu / mine.cpu:.2f} in CPU (target: 0.5)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=4000, help="records each side saves")
    parser.add_argument("--batch", type=int, default=500, help="records a call")
    parser.add_argument("--before", type=Path, help="another checkout (with its own .venv)")
    parser.add_argument(
        "--view",
        choices=("basic", "full"),
        default="basic",
        help="what each save answers with: the ids (as a bulk load asks) or whole records",
    )
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
            f"{args.batch} a call, {args.view} view, at {head} =="
        )
        for kind, env in kinds.items():
            dense = None
            if kind != "BM25":
                embeddings = CachedEmbeddings(
                    os.environ["KNOWHUB_EMBEDDING_BASE_URL"], os.environ["KNOWHUB_EMBEDDING_MODEL"]
                )
                stack.callback(embeddings.close)
                dense = [embeddings.embed([f"{t}\n{c}" for t, c in b]) for b in data]
            before = os.getloadavg()[0]
            sides = run(servers, env, data, dense, tmp / kind, args.view)
            report(kind, sides, len(rows), (before, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
