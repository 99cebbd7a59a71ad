"""Mixed load, one process vs several: `knowhub up --processes 1` and with more, both
running through the same run and measured in turn, each at 8 and 64 concurrent clients;
prints calls/s and p50 / p99 of every call side by side.

Each client has its own channel and calls a mix of knowledge saves, searches, gets and
helpful feedback, resource saves and gets, cognition appends and log reads, and memory
Remember (tests/reliability/test_load.py drives the same clients and checks nothing is
lost). The clients run in this process, on the same machine as the server: on 2 cores
they take a share of the CPU the server would otherwise have.
"""

from __future__ import annotations

import argparse
import collections
import random
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from knowhub import KnowHub, errors

from bench.common import BENCH_TOKEN, percentiles, server_process, tree_peak_rss_mb

WORDS = (
    "selenium",
    "login",
    "cookie",
    "retry",
    "proxy",
    "captcha",
    "timeout",
    "parser",
    "invoice",
    "report",
    "deploy",
    "cache",
    "queue",
    "index",
    "shard",
    "token",
)
SHARED_RECORDS = 16
SHARED_RESOURCES = 8


@dataclass
class Client:
    """One load client: its own connection, trace and counts."""

    number: int
    batch: str  # names this drive's traces apart from earlier ones on the same hub
    kh: KnowHub
    rng: random.Random
    shared: list[str]
    resources: list[str]
    latencies: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    errors: list[str] = field(default_factory=list)
    helpful: collections.Counter[str] = field(default_factory=collections.Counter)
    appended: int = 0
    sequence: int = 0
    saved_resources: int = 0

    @property
    def trace(self) -> str:
        return f"load-{self.batch}-{self.number}"

    def words(self, count: int = 4) -> str:
        return " ".join(self.rng.choices(WORDS, k=count))

    # -- the calls, each named after the RPC it makes --

    def SaveKnowledge(self) -> None:
        self.kh.knowledge.save(task=self.words(), content=self.words(12), types=["strategy"])

    def SearchKnowledge(self) -> None:
        self.kh.knowledge.search(self.words(3), top_k=5)

    def GetKnowledge(self) -> None:
        self.kh.knowledge.get(self.rng.choice(self.shared))

    def UpdateKnowledge(self) -> None:
        record = self.rng.choice(self.shared)
        # Each use a trace of its own: a user's cases count once per trace.
        self.kh.knowledge.update(
            record,
            add_helpful_case={
                "task": "load",
                "outcome": "ok",
                "trace_id": f"load-{self.batch}-{self.number}-{self.helpful[record]}",
            },
        )
        self.helpful[record] += 1

    def SaveResource(self) -> None:
        self.saved_resources += 1
        self.kh.resources.save(
            f"load/c{self.number}/r{self.saved_resources}",
            self.words(),
            self.words(20),
            secure_body="s3cret",
            content_type="code",
        )

    def GetResource(self) -> None:
        self.kh.resources.get(self.rng.choice(self.resources))

    def AppendEvents(self) -> None:
        self.sequence += 1
        self.kh.cognition.append_events(
            self.trace,
            [
                {
                    "type": "message",
                    "sequence": self.sequence,
                    "role": "user",
                    "content": self.words(10),
                },
                {"type": "query", "sequence": self.sequence, "query": self.words(3)},
            ],
        )
        self.appended += 2

    def GetLog(self) -> None:
        if self.appended:
            self.kh.cognition.get_log(self.trace, limit=20)

    def Remember(self) -> None:
        self.kh.memory.remember(
            self.words(6),
            [f"user 10001 mentioned {self.words(3)}"],
            context={"user_id": "10001", "group_id": "20002"},
        )

    def run(self, until: float) -> None:
        calls: list[Callable[[], None]] = [
            self.SaveKnowledge,
            self.SearchKnowledge,
            self.SearchKnowledge,
            self.GetKnowledge,
            self.GetKnowledge,
            self.UpdateKnowledge,
            self.SaveResource,
            self.GetResource,
            self.AppendEvents,
            self.GetLog,
            self.Remember,
        ]
        while time.monotonic() < until:
            call = self.rng.choice(calls)
            started = time.perf_counter()
            try:
                call()
            except errors.KnowHubError as error:
                self.errors.append(f"{call.__name__}: {error.code} {error.message}")
                continue
            self.latencies[call.__name__].append((time.perf_counter() - started) * 1000)


def seed(kh: KnowHub) -> tuple[list[str], list[str]]:
    records = [
        kh.knowledge.save(task=f"shared {i} {WORDS[i]}", content=" ".join(WORDS), types=["tool"]).id
        for i in range(SHARED_RECORDS)
    ]
    resources = [
        kh.resources.save(f"load/shared/r{i}", f"shared {i}", " ".join(WORDS)).id
        for i in range(SHARED_RESOURCES)
    ]
    return records, resources


def drive(
    address: str,
    tokens: list[str],
    clients_count: int,
    seconds: float,
    shared: list[str],
    resources: list[str],
) -> tuple[list[Client], float]:
    """`clients_count` clients (token by turns) calling for `seconds`; returns them (with
    their latencies and errors) and the seconds they ran."""
    batch = uuid.uuid4().hex[:8]
    clients = [
        Client(
            n,
            batch,
            KnowHub(address, token=tokens[n % len(tokens)], timeout=60),
            random.Random(n),
            shared,
            resources,
        )
        for n in range(clients_count)
    ]
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=c.run, args=(until,)) for c in clients]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return clients, time.monotonic() - started


def all_latencies(clients: list[Client]) -> list[float]:
    return [ms for c in clients for samples in c.latencies.values() for ms in samples]


@dataclass
class Row:
    """The figures of one layout at one client count, over every round."""

    samples: list[float] = field(default_factory=list)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, clients: list[Client], elapsed: float) -> None:
        self.samples += all_latencies(clients)
        self.seconds += elapsed
        self.errors += [error for c in clients for error in c.errors]

    def line(self) -> str:
        shape = percentiles(self.samples)
        example = f", e.g. {self.errors[0]}" if self.errors else ""
        return (
            f"{len(self.samples) / self.seconds:7.0f} calls/s  p50 {shape['p50']:6.1f} ms"
            f"  p99 {shape['p99']:6.1f} ms  ({len(self.errors)} errors{example})"
        )


@dataclass
class Hub:
    pid: int
    address: str
    shared: list[str]
    resources: list[str]

    def drive(self, count: int, seconds: float) -> tuple[list[Client], float]:
        clients, elapsed = drive(
            self.address, [BENCH_TOKEN], count, seconds, self.shared, self.resources
        )
        for client in clients:
            client.kh.close()
        return clients, elapsed


def started(stack: ExitStack, processes: int, work: Path) -> Hub:
    # One token stands for 64 agents here: no limit of calls in progress per token.
    process, port = stack.enter_context(
        server_process(
            work / f"p{processes}" / "data",
            {"KNOWHUB_CALLS_PER_CALLER_MAX": "0"},
            args=["--processes", str(processes)],
        )
    )
    address = f"127.0.0.1:{port}"
    with KnowHub(address, token=BENCH_TOKEN, timeout=60) as owner:
        shared, resources = seed(owner)
    return Hub(process.pid, address, shared, resources)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--processes", default="1,3", help="comma-separated process counts to compare (default 1,3)"
    )
    parser.add_argument(
        "--clients", default="8,64", help="comma-separated client counts (default 8,64)"
    )
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="measured seconds per round (default 10)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds per layout and client count, taken in turn (default 2)",
    )
    args = parser.parse_args(argv)
    layouts = [int(p) for p in args.processes.split(",")]
    counts = [int(c) for c in args.clients.split(",")]
    rows = {(p, c): Row() for p in layouts for c in counts}
    with tempfile.TemporaryDirectory() as work, ExitStack() as stack:
        hubs = {p: started(stack, p, Path(work)) for p in layouts}  # all up at once
        for count in counts:
            for processes in layouts:
                hubs[processes].drive(count, 2.0)  # warm-up
            # In turn: load on the machine that drifts during the run (other work on it)
            # weighs on every layout alike.
            for processes in layouts * args.rounds:
                rows[processes, count].add(*hubs[processes].drive(count, args.seconds))
        memory = {p: tree_peak_rss_mb(hub.pid) for p, hub in hubs.items()}
    print(
        f"\nmixed load, {args.rounds} x {args.seconds:.0f} s per row, layouts taken in "
        "turn (knowhub up --processes N)"
    )
    for count in counts:
        for processes in layouts:
            plural = "es" if processes > 1 else "  "
            print(
                f"  {count:3d} clients, {processes} process{plural}: "
                f"{rows[processes, count].line()}"
            )
    print(
        "  peak RSS of all processes (embedded Redis included): "
        + ", ".join(f"{p} process{'es' if p > 1 else ''} {mb:.0f} MiB" for p, mb in memory.items())
    )


if __name__ == "__main__":
    main()
