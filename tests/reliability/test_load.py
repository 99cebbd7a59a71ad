"""Sustained mixed load: many concurrent clients across the four services, no errors.

`knowhub up` runs in its own process (as deployed: embedded Redis, Qdrant Edge); 64
clients (8 in CI), each on its own channel, call a mix of knowledge saves, searches, gets
and helpful feedback, resource saves and gets, cognition appends and log reads, and
memory Remember for 60 seconds (3 in CI). Every call must succeed. Afterwards no
feedback increment and no appended event is missing, and the figures give p50 / p99 per
RPC and the total throughput.
"""

from __future__ import annotations

import collections
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from knowhub import KnowHub, errors

from bench.common import percentiles, server_process
from tests.reliability.conftest import Report, Scale
from tests.support.harness import write_tokens_file

WORDS = ("selenium", "login", "cookie", "retry", "proxy", "captcha", "timeout", "parser",
         "invoice", "report", "deploy", "cache", "queue", "index", "shard", "token")
USERS = ("alice", "carol")  # both in acme: every client sees every shared record
SHARED_RECORDS = 16
SHARED_RESOURCES = 8


@dataclass
class Client:
    """One load client: its own connection, trace and counts."""

    number: int
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
        return f"load-{self.number}"

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
        self.kh.knowledge.update(record, add_helpful_case={"task": "load", "outcome": "ok"})
        self.helpful[record] += 1

    def SaveResource(self) -> None:
        self.saved_resources += 1
        self.kh.resources.save(f"load/c{self.number}/r{self.saved_resources}", self.words(),
                               self.words(20), secure_body="s3cret", content_type="code")

    def GetResource(self) -> None:
        self.kh.resources.get(self.rng.choice(self.resources))

    def AppendEvents(self) -> None:
        self.sequence += 1
        self.kh.cognition.append_events(self.trace, [
            {"type": "message", "sequence": self.sequence, "role": "user",
             "content": self.words(10)},
            {"type": "query", "sequence": self.sequence, "query": self.words(3)}])
        self.appended += 2

    def GetLog(self) -> None:
        if self.appended:
            self.kh.cognition.get_log(self.trace, limit=20)

    def Remember(self) -> None:
        self.kh.memory.remember(self.words(6), [f"user 10001 mentioned {self.words(3)}"],
                                context={"user_id": "10001", "group_id": "20002"})

    def run(self, until: float) -> None:
        calls: list[Callable[[], None]] = [
            self.SaveKnowledge, self.SearchKnowledge, self.SearchKnowledge, self.GetKnowledge,
            self.GetKnowledge, self.UpdateKnowledge, self.SaveResource, self.GetResource,
            self.AppendEvents, self.GetLog, self.Remember]
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
    records = [kh.knowledge.save(task=f"shared {i} {WORDS[i]}", content=" ".join(WORDS),
                                 types=["tool"]).id for i in range(SHARED_RECORDS)]
    resources = [kh.resources.save(f"load/shared/r{i}", f"shared {i}", " ".join(WORDS)).id
                 for i in range(SHARED_RESOURCES)]
    return records, resources


def test_mixed_load(tmp_path: Path, scale: Scale, figures: Report) -> None:
    clients_count, seconds = int(scale.pick(8, 64)), float(scale.pick(3, 60))
    (tmp_path / "tokens").mkdir()
    tokens = write_tokens_file(tmp_path / "tokens")
    with server_process(tmp_path / "data", {"KNOWHUB_TOKENS_FILE": str(tokens)}) as (_, port):
        address = f"127.0.0.1:{port}"
        owner = KnowHub(address, token="token-alice", timeout=60)
        shared, resources = seed(owner)
        clients = [Client(n, KnowHub(address, token=f"token-{USERS[n % 2]}", timeout=60),
                          random.Random(n), shared, resources) for n in range(clients_count)]
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=c.run, args=(until,)) for c in clients]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started

        helpful = sum((c.helpful for c in clients), collections.Counter())
        lost_feedback = {record: 1 + helpful[record] - owner.knowledge.get(record).eval.helpful
                         for record in shared}
        lost_events = {c.trace: c.appended - c.kh.cognition.get_log(c.trace, limit=1)
                       .trace.event_count for c in clients if c.appended}
        for client in [owner, *(c.kh for c in clients)]:
            client.close()

    latencies: dict[str, list[float]] = collections.defaultdict(list)
    for client in clients:
        for name, samples in client.latencies.items():
            latencies[name] += samples
    failures = [error for c in clients for error in c.errors]
    total = sum(len(samples) for samples in latencies.values())
    figures(f"{clients_count} clients for {elapsed:.1f} s: {total} calls, "
            f"{total / elapsed:.0f} calls/s, {len(failures)} errors")
    for name, samples in sorted(latencies.items()):
        shape = percentiles(samples)
        figures(f"{name}: {len(samples)} calls, p50 {shape['p50']:.1f} ms, "
                f"p99 {shape['p99']:.1f} ms")
    assert not failures, failures[:10]
    assert not any(lost_feedback.values()), lost_feedback
    assert not any(lost_events.values()), lost_events
    assert len(latencies) == 9, sorted(latencies)
