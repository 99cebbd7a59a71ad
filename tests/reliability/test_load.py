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
from pathlib import Path

from knowhub import KnowHub

from bench.common import percentiles, server_process
from bench.mixed_load import drive, seed
from tests.reliability.conftest import Report, Scale
from tests.support.harness import write_tokens_file

USERS = ("alice", "carol")  # both in acme: every client sees every shared record


def test_mixed_load(tmp_path: Path, scale: Scale, figures: Report) -> None:
    clients_count, seconds = int(scale.pick(8, 64)), float(scale.pick(3, 60))
    (tmp_path / "tokens").mkdir()
    tokens = write_tokens_file(tmp_path / "tokens")
    # Two tokens stand for up to 64 agents here: no limit of calls in progress per token.
    env = {"KNOWHUB_TOKENS_FILE": str(tokens), "KNOWHUB_CALLS_PER_CALLER_MAX": "0"}
    with server_process(tmp_path / "data", env) as (_, port):
        address = f"127.0.0.1:{port}"
        owner = KnowHub(address, token="token-alice", timeout=60)
        shared, resources = seed(owner)
        clients, elapsed = drive(
            address, [f"token-{user}" for user in USERS], clients_count, seconds, shared, resources
        )

        helpful = sum((c.helpful for c in clients), collections.Counter())
        lost_feedback = {
            record: 1 + helpful[record] - owner.knowledge.get(record).eval.helpful
            for record in shared
        }
        lost_events = {
            c.trace: c.appended - c.kh.cognition.get_log(c.trace, limit=1).trace.event_count
            for c in clients
            if c.appended
        }
        for client in [owner, *(c.kh for c in clients)]:
            client.close()

    latencies: dict[str, list[float]] = collections.defaultdict(list)
    for client in clients:
        for name, samples in client.latencies.items():
            latencies[name] += samples
    failures = [error for c in clients for error in c.errors]
    total = sum(len(samples) for samples in latencies.values())
    figures(
        f"{clients_count} clients for {elapsed:.1f} s: {total} calls, "
        f"{total / elapsed:.0f} calls/s, {len(failures)} errors"
    )
    for name, samples in sorted(latencies.items()):
        shape = percentiles(samples)
        figures(
            f"{name}: {len(samples)} calls, p50 {shape['p50']:.1f} ms, p99 {shape['p99']:.1f} ms"
        )
    assert not failures, failures[:10]
    assert not any(lost_feedback.values()), lost_feedback
    assert not any(lost_events.values()), lost_events
    assert len(latencies) == 9, sorted(latencies)
