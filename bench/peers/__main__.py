"""KnowHub side by side with mem0, chromadb, txtai and the raw Qdrant engine, each run as
its users run it: KnowHub as `knowhub up` called through the SDK over gRPC (hybrid, and
BM25 alone), the others as in-process libraries, each in a virtualenv of its own with
pinned versions (made on first use under --cache).

Every system gets the same all-MiniLM-L6-v2 vectors from one caching endpoint in front of
--embeddings (the cache is filled before anything is timed), and every dense search makes
one embedding call (KnowHub's query-vector cache is off; the benchmark counts the calls).
Peers' own embedding models are downloads, so each gets an embedding function calling that
endpoint (mem0: its OpenAI embedder pointed at it). The endpoint looks texts up with their
newlines made spaces (mem0 sends them so; the model's tokens, so its vectors, are the
same), and a joined record's vector is the unit-length sum of its two turns' vectors (the
model averages its tokens: close to embedding the joined text, without 7k model calls).

Recall@10: the LoCoMo file (--data), one tenant per conversation (a KnowHub principal, a
mem0 user, a chromadb collection, a txtai index, a Qdrant filter), every question of
categories 1-4 asked in its conversation. Latency: one tenant of 1k and of 10k records (the
turns, then records joining two random turns), the questions asked of every system in
turn (interleaved, so the machine's drift touches all alike); a peer's time is its library
call, measured in its process. Beside them, the floors: a bare gRPC health round trip to
the hub, the bare embedding call, the raw engine's BM25 and hybrid queries (engine time
alone).

    .venv/bin/python -m bench.peers --data ../shared/bench-data/locomo/locomo5-dev.json

`--peers qdrant-edge --skip-recall` measures KnowHub against its floors alone; `--before
../main` adds the KnowHub rows of another checkout to the same rotation (a change, paired).
`--settle 75` asks the latency questions of stores at rest: after the load, the raw engine
optimises its shard (it has no optimiser of its own; its users call it) and everything
waits 75 s, past the 60 s without writes after which KnowHub indexes what it was written.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub import KnowHub

from bench.common import ROOT, percentiles, server_process
from bench.embedding_cache import CACHE, CachedEmbeddings, caching_endpoint
from bench.locomo_recall import CATEGORIES, Question, Turn, default_data, load
from bench.peers.systems import PEERS, WORKER, interpreter

TOP_K = 10
LATENCY_TENANT = "bench"
DEFAULT_CACHE = Path.home() / ".cache" / "knowhub-bench" / "peers"


@dataclass
class Record:
    id: str
    tenant: str
    task: str
    content: str
    parts: tuple[str, str] | None = None  # a joined record's two turns' texts

    @property
    def text(self) -> str:
        return f"{self.task}\n{self.content}"


@dataclass
class Store:
    """What one phase loads: its records and the questions it asks (query, tenant)."""

    name: str
    records: list[Record]
    asks: list[tuple[Question, str]]


# ---- the data ---------------------------------------------------------------------------


def recall_store(turns: list[Turn], questions: list[Question]) -> Store:
    records = [Record(f"{t.sample}:{t.dia_id}", t.sample, t.task, t.content) for t in turns]
    return Store("recall", records, [(q, q.sample) for q in questions])


def latency_store(
    turns: list[Turn], questions: list[Question], size: int, count: int, seed: int = 7
) -> Store:
    """`size` records in one tenant: the turns first, then records each joining two random
    turns; `count` questions drawn at random."""
    rng = random.Random(seed)
    records = [
        Record(f"{t.sample}:{t.dia_id}", LATENCY_TENANT, t.task, t.content) for t in turns[:size]
    ]
    while len(records) < size:
        first, second = rng.sample(turns, 2)
        records.append(
            Record(
                f"joined:{len(records)}",
                LATENCY_TENANT,
                first.task,
                f"{first.content} {second.content}",
                (first.text, second.text),
            )
        )
    asks = [(q, LATENCY_TENANT) for q in rng.sample(questions, min(count, len(questions)))]
    return Store(f"{size // 1000}k" if size % 1000 == 0 else str(size), records, asks)


# ---- embeddings -------------------------------------------------------------------------


def canonical(text: str) -> str:
    return text.replace("\n", " ")


class CountedEmbeddings:
    """CachedEmbeddings by canonical text, counting the requests it answers (one per
    embedding call)."""

    def __init__(self, inner: CachedEmbeddings) -> None:
        self.inner = inner
        self.model = inner.model
        self.calls = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            self.calls += 1
        return self.inner.embed([canonical(t) for t in texts])

    def fill(self, stores: Sequence[Store], questions: Sequence[Question]) -> None:
        """Every vector a run asks for, in the cache before anything is timed."""
        texts = sorted(
            {r.text for s in stores for r in s.records if r.parts is None}
            | {q.text for q in questions}
        )
        print(f"{len(texts)} texts to embed (the cache has most) ...", flush=True)
        self.inner.put([canonical(t) for t in texts], self.inner.embed(texts))
        joined = {r.text: r.parts for s in stores for r in s.records if r.parts is not None}
        if joined:
            pairs = list(joined.values())
            first = self.inner.embed([canonical(a) for a, _ in pairs])
            second = self.inner.embed([canonical(b) for _, b in pairs])
            self.inner.put(
                [canonical(t) for t in joined],
                [
                    unit([x + y for x, y in zip(a, b, strict=True)])
                    for a, b in zip(first, second, strict=True)
                ],
            )


def unit(vector: list[float]) -> list[float]:
    length = sum(x * x for x in vector) ** 0.5
    return [x / length for x in vector]


class BareEmbeddingCall:
    """One POST to the endpoint over a kept-alive connection: the embedding call's floor."""

    def __init__(self, base_url: str, model: str) -> None:
        url = urllib.parse.urlsplit(base_url)
        self._path = url.path.rstrip("/") + "/embeddings"
        self._connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        self._model = model

    def __call__(self, text: str) -> None:
        self._connection.request(
            "POST",
            self._path,
            json.dumps({"model": self._model, "input": [text]}),
            {"Content-Type": "application/json"},
        )
        self._connection.getresponse().read()


# ---- the systems ------------------------------------------------------------------------


@dataclass
class Result:
    ids: list[str]
    ms: float
    engine_ms: float | None = None


class Worker:
    """A peer's worker process (bench/peers/worker.py) in the peer's virtualenv."""

    def __init__(
        self, python: Path, name: str, workdir: Path, url: str, model: str, dim: int
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [str(python), str(WORKER), name, str(workdir), url, model, str(dim)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            stderr=open(workdir / "worker.log", "a"),  # noqa: SIM115 (closed with the process)
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"},
        )

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker died on {request['op']}; see its worker.log")
        return dict(json.loads(line))

    def stop(self) -> None:
        self.ask(op="exit")
        self._process.wait(60)


class System:
    """One row of the table: loads a store, answers a search with ids and milliseconds."""

    label: str

    def open(self, store: Store) -> float:
        """Loads the store; returns records per second."""
        raise NotImplementedError

    def search(self, question: Question, tenant: str) -> Result:
        raise NotImplementedError

    def settle(self) -> None:
        """What the system's users do once a load is over, before they search."""

    def close(self) -> None:
        raise NotImplementedError


class PeerSystem(System):
    def __init__(self, worker: Worker, label: str, mode: str = "") -> None:
        self.worker, self.label, self.mode = worker, label, mode

    def open(self, store: Store) -> float:
        self.worker.ask(op="open", store=store.name)
        started = time.perf_counter()
        self.worker.ask(
            op="load",
            records=[{"id": r.id, "text": r.text, "tenant": r.tenant} for r in store.records],
        )
        return len(store.records) / (time.perf_counter() - started)

    def search(self, question: Question, tenant: str) -> Result:
        answer = self.worker.ask(op="search", query=question.text, tenant=tenant, mode=self.mode)
        return Result(answer["ids"], answer["ms"], answer.get("engine_ms"))

    def settle(self) -> None:
        self.worker.ask(op="settle")

    def close(self) -> None:
        self.worker.ask(op="close")


class SecondMode(PeerSystem):
    """Another search mode of a worker that another row already loads."""

    def open(self, store: Store) -> float:
        return float("nan")

    def close(self) -> None:
        pass


class KnowHubSystem(System):
    """`knowhub up` in its own process, searched through the SDK over gRPC."""

    def __init__(
        self,
        label: str,
        directory: Path,
        tenants: list[str],
        env: dict[str, str],
        root: Path = ROOT,
    ) -> None:
        self.label, self._directory, self._tenants, self._env = label, directory, tenants, env
        self._root = root  # the checkout whose server runs (with its own .venv)
        self._stack = ExitStack()
        self._clients: dict[str, KnowHub] = {}
        self.port = 0

    def open(self, store: Store) -> float:
        where = self._directory / store.name
        where.mkdir(parents=True)
        tokens = where / "peers-tokens.json"
        tokens.write_text(
            json.dumps({"tokens": [{"token": f"peers-{t}", "user_id": t} for t in self._tenants]})
        )
        env = {**self._env, "KNOWHUB_TOKENS_FILE": str(tokens)}
        python = str(self._root / ".venv" / "bin" / "python")
        _process, self.port = self._stack.enter_context(
            server_process(where / "data", env, root=self._root, python=python)
        )
        self._clients = {
            t: self._stack.enter_context(
                KnowHub(f"127.0.0.1:{self.port}", token=f"peers-{t}", timeout=300)
            )
            for t in self._tenants
        }
        by_tenant: dict[str, list[Record]] = {}
        for record in store.records:
            by_tenant.setdefault(record.tenant, []).append(record)
        started = time.perf_counter()
        for tenant, records in by_tenant.items():
            for first in range(0, len(records), 500):
                self._clients[tenant].knowledge.save_many(
                    [
                        {
                            "task": r.task,
                            "content": r.content,
                            "types": ["usecase"],
                            "tags": {"rid": r.id},
                        }
                        for r in records[first : first + 500]
                    ]
                )
        return len(store.records) / (time.perf_counter() - started)

    def search(self, question: Question, tenant: str) -> Result:
        started = time.perf_counter()
        hits = self._clients[tenant].knowledge.search(question.text, top_k=TOP_K, min_score=1)
        ms = (time.perf_counter() - started) * 1000
        return Result([h.knowledge.tags["rid"] for h in hits], ms)

    def close(self) -> None:
        self._stack.close()
        self._stack = ExitStack()


# ---- measuring --------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    latency_ms: list[float] = field(default_factory=list)
    engine_ms: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)
    ingest: float = float("nan")
    embedding_calls: int = 0


def recall_of(question: Question, ids: list[str]) -> float:
    found = set(ids[:TOP_K])
    return sum(1 for e in question.evidence if f"{question.sample}:{e}" in found) / len(
        question.evidence
    )


def run_store(
    store: Store,
    systems: list[System],
    floors: dict[str, Callable[[], object]],
    counter: CountedEmbeddings,
    warmup: int,
    settle: float = 0.0,
) -> dict[str, Row]:
    """Loads `store` into every system, lets each settle for `settle` seconds when given,
    then asks its questions of each in turn (the order rotating per question), the floors
    among them."""
    rows = {s.label: Row(s.label) for s in systems} | {f: Row(f) for f in floors}

    def load(system: System) -> None:
        rows[system.label].ingest = system.open(store)
        print(
            f"  {store.name}: {system.label}: {len(store.records)} records loaded "
            f"({rows[system.label].ingest:,.0f}/s)",
            flush=True,
        )

    # All at once: the slowest (mem0, one add per record) sets the time.
    with ThreadPoolExecutor(len(systems)) as pool:
        list(pool.map(load, systems))
    if settle:
        loaded = time.monotonic()
        for system in systems:
            system.settle()
        time.sleep(max(0.0, settle - (time.monotonic() - loaded)))
        print(
            f"  {store.name}: searched {time.monotonic() - loaded:.0f} s after the load", flush=True
        )
    labels = [s.label for s in systems] + list(floors)
    by_label: dict[str, System | Callable[[], object]] = {s.label: s for s in systems} | floors
    for index, (question, tenant) in enumerate(
        [*store.asks[:warmup], *store.asks] if warmup else store.asks
    ):
        measured = index >= warmup
        turn = index % len(labels)
        for label in labels[turn:] + labels[:turn]:
            target = by_label[label]
            row = rows[label]
            before = counter.calls
            if isinstance(target, System):
                result = target.search(question, tenant)
                if measured:
                    row.latency_ms.append(result.ms)
                    if result.engine_ms is not None:
                        row.engine_ms.append(result.engine_ms)
                    row.recall.append(recall_of(question, result.ids))
                    row.categories.append(question.category)
                    row.embedding_calls += counter.calls - before
            else:
                started = time.perf_counter()
                target()
                if measured:
                    row.latency_ms.append((time.perf_counter() - started) * 1000)
    for system in systems:
        system.close()
    return rows


# ---- report -----------------------------------------------------------------------------


def p(samples: list[float], q: str) -> float:
    return percentiles(samples)[q] if samples else float("nan")


def print_recall(rows: dict[str, Row]) -> None:
    names = ["all", *CATEGORIES.values()]
    print(f"\n-- recall@{TOP_K}, LoCoMo, one tenant per conversation --")
    print(f"{'':58}" + "".join(f"{n:>12}" for n in names) + f"{'calls/search':>14}")
    for row in rows.values():
        if not row.recall:
            continue
        cells = []
        for name in names:
            picked = [
                r
                for r, c in zip(row.recall, row.categories, strict=True)
                if name == "all" or CATEGORIES[c] == name
            ]
            cells.append(sum(picked) / len(picked))
        calls = row.embedding_calls / len(row.recall)
        print(f"{row.label:58}" + "".join(f"{c:12.3f}" for c in cells) + f"{calls:14.2f}")


def print_latency(by_size: dict[str, dict[str, Row]]) -> None:
    sizes = list(by_size)
    print("\n-- search latency, ms (p50 / p95), top 10, interleaved --")
    print(f"{'':58}" + "".join(f"{s + ' records':>22}" for s in sizes))
    labels = list(next(iter(by_size.values())))
    for label in labels:
        cells = [
            f"{p(by_size[s][label].latency_ms, 'p50'):.2f} / "
            f"{p(by_size[s][label].latency_ms, 'p95'):.2f}"
            for s in sizes
        ]
        print(f"{label:58}" + "".join(f"{c:>22}" for c in cells))
    for label in labels:
        if by_size[sizes[0]][label].engine_ms:
            cells = [
                f"{p(by_size[s][label].engine_ms, 'p50'):.2f} / "
                f"{p(by_size[s][label].engine_ms, 'p95'):.2f}"
                for s in sizes
            ]
            print(f"{label + ': engine query alone':58}" + "".join(f"{c:>22}" for c in cells))
    print(
        f"\n{'ingest, records/s (every system loading at once)':58}"
        + "".join(f"{s + ' records':>22}" for s in sizes)
    )
    for label in labels:
        rates = [by_size[s][label].ingest for s in sizes]
        if any(rate == rate for rate in rates):
            print(f"{label:58}" + "".join(f"{r:>22,.0f}" for r in rates))
    print(f"\n{'embedding calls per search':58}" + "".join(f"{s + ' records':>22}" for s in sizes))
    for label in labels:
        if by_size[sizes[0]][label].recall:
            cells = [
                by_size[s][label].embedding_calls / len(by_size[s][label].recall) for s in sizes
            ]
            print(f"{label:58}" + "".join(f"{c:>22.2f}" for c in cells))


def print_ratios(
    by_size: dict[str, dict[str, Row]], hybrid: str, bm25: str, raw_bm25: str, raw_hybrid: str
) -> None:
    print(f"\n-- {bm25.replace('BM25 ', '')} against its floors (p50) --")
    for size, rows in by_size.items():
        grpc_ms = p(rows["bare gRPC health round trip"].latency_ms, "p50")
        embed_ms = p(rows["bare embedding call"].latency_ms, "p50")
        bm25_floor = grpc_ms + p(rows[raw_bm25].engine_ms, "p50")
        hybrid_floor = grpc_ms + embed_ms + p(rows[raw_hybrid].engine_ms, "p50")
        print(
            f"{size}: BM25 {p(rows[bm25].latency_ms, 'p50'):.2f} ms = "
            f"{p(rows[bm25].latency_ms, 'p50') / bm25_floor:.2f} x (gRPC round trip + raw "
            f"BM25 query = {bm25_floor:.2f} ms; target 1.5); hybrid "
            f"{p(rows[hybrid].latency_ms, 'p50'):.2f} ms = "
            f"{p(rows[hybrid].latency_ms, 'p50') / hybrid_floor:.2f} x (gRPC round trip + "
            f"embedding call + raw hybrid query = {hybrid_floor:.2f} ms; target 1.5)"
        )


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, load {load}"


# ---- main -------------------------------------------------------------------------------


@contextmanager
def grpc_health(port: int) -> Iterator[Callable[[], object]]:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        yield lambda: stub.Check(health_pb2.HealthCheckRequest())
    finally:
        channel.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=default_data(), help="LoCoMo JSON file")
    parser.add_argument("--sizes", default="1000,10000", help="latency store sizes")
    parser.add_argument(
        "--queries", type=int, default=300, help="questions timed per size and system (default 300)"
    )
    parser.add_argument("--warmup", type=int, default=20, help="untimed questions first")
    parser.add_argument(
        "--embeddings",
        default=os.environ.get("KNOWHUB_EMBEDDING_BASE_URL", "http://127.0.0.1:8765/v1"),
        help="the OpenAI-compatible embeddings endpoint behind the cache",
    )
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"the peers' virtualenvs (default {DEFAULT_CACHE})",
    )
    parser.add_argument("--skip-recall", action="store_true", help="latency only")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds between a latency store's load and its questions, the raw engine "
        "optimised meanwhile (75: KnowHub's idle indexing too); default 0, at once",
    )
    parser.add_argument(
        "--peers",
        default=",".join(peer.name for peer in PEERS),
        help="the peers to run beside KnowHub, comma-separated (default all; the floors "
        "need qdrant-edge)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout (with its own .venv): its KnowHub rows too, in the same "
        "rotation, to measure a change paired",
    )
    args = parser.parse_args(argv)
    chosen = [peer for peer in PEERS if peer.name in args.peers.split(",")]

    turns, questions = load(args.data)
    stores = [] if args.skip_recall else [recall_store(turns, questions)]
    stores += [
        latency_store(turns, questions, int(size), args.queries) for size in args.sizes.split(",")
    ]
    pythons = {peer.name: interpreter(args.cache, peer) for peer in chosen}
    print(f"machine: {machine()}", flush=True)
    started = time.perf_counter()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-peers-")))
        cached = CachedEmbeddings(args.embeddings, args.model, path=CACHE)
        stack.callback(cached.close)
        counter = CountedEmbeddings(cached)
        url = stack.enter_context(caching_endpoint(counter))
        counter.fill(stores, questions)
        workers = {
            peer.name: Worker(
                pythons[peer.name], peer.name, tmp / peer.name, url, args.model, args.dim
            )
            for peer in chosen
        }
        for worker in workers.values():
            stack.callback(worker.stop)
        dense = {
            "KNOWHUB_EMBEDDING_BASE_URL": url,
            "KNOWHUB_EMBEDDING_MODEL": args.model,
            "KNOWHUB_EMBEDDING_DIM": str(args.dim),
            "KNOWHUB_EMBEDDING_QUERY_CACHE_SIZE": "0",
            "KNOWHUB_EMBEDDING_TIMEOUT_SECONDS": "300",
        }
        results: dict[str, dict[str, Row]] = {}
        for store in stores:
            tenants = sorted({r.tenant for r in store.records})
            hybrid = KnowHubSystem("KnowHub hybrid (SDK over gRPC)", tmp / "hybrid", tenants, dense)
            bm25 = KnowHubSystem("KnowHub BM25 (SDK over gRPC)", tmp / "bm25", tenants, {})
            systems: list[System] = [hybrid, bm25]
            if args.before:
                systems += [
                    KnowHubSystem(f"{label} before", tmp / f"{kind}-before", tenants, env, root)
                    for label, kind, env, root in (
                        (hybrid.label, "hybrid", dense, args.before),
                        (bm25.label, "bm25", {}, args.before),
                    )
                ]
            systems += [
                PeerSystem(workers[peer.name], peer.label)
                for peer in chosen
                if peer.name != "qdrant-edge"
            ]
            if "qdrant-edge" in workers:
                systems += [
                    PeerSystem(workers["qdrant-edge"], PEERS[3].label, "hybrid"),
                    SecondMode(workers["qdrant-edge"], "Qdrant engine, BM25 (in-process)", "bm25"),
                ]
            floors: dict[str, Callable[[], object]] = {}
            if store.name != "recall":
                hybrid_health = _health_after_open(hybrid, store)
                floors = {
                    "bare gRPC health round trip": hybrid_health,
                    "bare embedding call": _bare_call(url, args.model, questions),
                }
            print(
                f"\n{store.name}: {len(store.records)} records, {len(store.asks)} questions",
                flush=True,
            )
            latency = store.name != "recall"
            results[store.name] = run_store(
                store,
                systems,
                floors,
                counter,
                args.warmup if latency else 0,
                args.settle if latency else 0.0,
            )
            # Each phase's figures as soon as they are in, in case a later one fails.
            if store.name == "recall":
                print_recall(results[store.name])
            else:
                print_latency({store.name: results[store.name]})
            print(f"machine: {machine()}", flush=True)
    print(
        f"\n== KnowHub and its peers: LoCoMo ({args.data.name}), top {TOP_K}, identical "
        f"{args.model} vectors =="
    )
    print(f"machine: {machine()}")
    if "recall" in results:
        print_recall(results.pop("recall"))
    print_latency(results)
    for suffix in ("", " before") if args.before else ("",):
        if "qdrant-edge" in args.peers.split(","):
            print_ratios(
                results,
                f"KnowHub hybrid (SDK over gRPC){suffix}",
                f"KnowHub BM25 (SDK over gRPC){suffix}",
                "Qdrant engine, BM25 (in-process)",
                PEERS[3].label,
            )
    print(f"({time.perf_counter() - started:.0f} s)")


def _health_after_open(hybrid: KnowHubSystem, store: Store) -> Callable[[], object]:
    """The health round trip to the hybrid hub of this store, once it has started."""
    state: dict[str, Callable[[], object]] = {}

    def call() -> object:
        if "call" not in state:
            state["call"] = hybrid._stack.enter_context(grpc_health(hybrid.port))
        return state["call"]()

    return call


def _bare_call(url: str, model: str, questions: list[Question]) -> Callable[[], object]:
    """The bare embedding call, a new question each time (all are in the cache)."""
    call = BareEmbeddingCall(url, model)
    texts = iter([q.text for q in questions] * 1000)
    return lambda: call(next(texts))


if __name__ == "__main__":
    main()
