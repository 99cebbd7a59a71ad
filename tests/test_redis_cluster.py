"""Redis Cluster: keys renamed once from the layout before the hash tags, WAIT for the writes
that must survive a failover, and writers riding out a master killed with SIGKILL.

The Redis-backed suites (cognition, dream, the audit log, the runtime) run on the session's
local cluster too (the `redis_cluster` marker); this module covers what only a cluster, or
only the old layout, has."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.storage.redis_store import ReplicaWait, connect, keyspace
from knowhub_server.dream.streams import Delivery, JobStream, StreamWorker
from knowhub_server.resource.audit import AuditEvent, AuditLog
from tests.cognition.conftest import new_trace, query_event, save_knowledge
from tests.conftest import StartHub
from tests.dream.support import wait_until
from tests.support.redis_cluster import LocalCluster, failover_under_load, free_ports
from tests.support.shared import failure


def test_keys_of_the_layout_before_the_hash_tags_are_renamed_once(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    p, client = redis_prefix, connect(redis_url)
    client.hset(f"{p}cognition:trace:t1", "owner", "user:alice")
    client.xadd(f"{p}triggers:evaluation", {"trace_id": "t1"})
    client.xadd(f"{p}dream:runs", {"run_id": "r1"})
    client.set(f"{p}dream:remember-request:user:alice:q1", "first answer")
    client.rpush(f"{p}memory:memos:user:alice:c1", "memo")
    client.xadd(f"{p}historian:failed", {"job": "j"})
    client.xadd(f"{p}audit", {"action": "save"})
    client.set(f"{p}dream:fired", "old")
    client.set(f"{keyspace(p, 'dream')}fired", "written since")

    runtime = Runtime.open(
        CommonSettings(data_dir=tmp_path, port=0, redis_url=redis_url, redis_prefix=p)
    )
    runtime.redis()
    runtime.close()

    cognition, dream, historian = (keyspace(p, a) for a in ("cognition", "dream", "historian"))
    assert client.hget(f"{cognition}trace:t1", "owner") == b"user:alice"
    assert client.xlen(f"{cognition}triggers:evaluation") == 1
    assert client.xlen(f"{dream}runs") == 1
    assert client.get(f"{historian}remember-request:user:alice:q1") == b"first answer"
    assert client.lrange(f"{historian}memos:user:alice:c1", 0, -1) == [b"memo"]
    assert client.xlen(f"{historian}failed") == 1
    assert client.xlen(f"{p}audit") == 1, "one key, no tag needed: not renamed"
    assert client.get(f"{dream}fired") == b"written since"
    assert client.get(f"{p}dream:fired") == b"old", "kept where the new name is taken"
    assert not client.exists(f"{p}cognition:trace:t1", f"{p}dream:runs")

    client.set(f"{p}cognition:trace:t2", "late")
    again = Runtime.open(
        CommonSettings(data_dir=tmp_path, port=0, redis_url=redis_url, redis_prefix=p)
    )
    again.redis()
    again.close()
    assert client.get(f"{p}cognition:trace:t2") == b"late", "renamed once per Redis"


def test_audit_records_and_evaluation_claims_wait_for_a_replica(
    start_hub: StartHub, redis_cluster: LocalCluster, redis_prefix: str
) -> None:
    hub = start_hub(
        redis_url=redis_cluster.url,
        redis_prefix=redis_prefix,
        redis_wait_replicas=1,
        redis_wait_timeout_ms=2000,
    )
    alice, admin = hub.client("alice"), hub.client("admin")
    alice.resources.save("notes/waited", "title", "body")
    assert [
        (e.action, e.outcome) for e in admin.resources.audit_events(resource_id="notes/waited")
    ] == [("save", "ok"), ("save", "attempt")]

    record = save_knowledge(alice)
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, record)])
    report = alice.cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {
                "query_sequence": 3,
                "assessments": [
                    {"source_id": record.id, "status": "helpful", "reason": "it worked"}
                ],
            }
        ],
    )
    assert [o.recorded for o in report.outcomes] == [True]


def test_a_write_fewer_replicas_hold_than_asked_is_answered_unavailable(
    start_hub: StartHub, redis_cluster: LocalCluster, redis_prefix: str
) -> None:
    hub = start_hub(
        redis_url=redis_cluster.url,
        redis_prefix=redis_prefix,
        redis_wait_replicas=2,
        redis_wait_timeout_ms=50,
    )  # each master has one
    alice = hub.client("alice")
    code, message = failure(lambda: alice.resources.save("notes/unwaited", "title", "body"))
    assert code == "UNAVAILABLE" and "1 of 2 replicas" in message, message
    assert failure(lambda: alice.resources.get("notes/unwaited"))[0] == "NOT_FOUND"

    record = save_knowledge(alice)
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, record)])
    code, message = failure(
        lambda: alice.cognition.submit_evaluation(
            trace_id,
            evaluations=[
                {
                    "query_sequence": 3,
                    "assessments": [
                        {"source_id": record.id, "status": "helpful", "reason": "it worked"}
                    ],
                }
            ],
        )
    )
    assert code == "UNAVAILABLE" and "1 of 2 replicas" in message, message


@pytest.mark.parametrize(
    "wait", [ReplicaWait(), ReplicaWait(1, 1000)], ids=["no-wait", "wait-1-replica"]
)
def test_writers_ride_out_a_master_killed_and_wait_loses_no_acknowledged_record(
    tmp_path: Path, wait: ReplicaWait
) -> None:
    cluster = LocalCluster(tmp_path / "cluster").start()
    try:
        client = connect(cluster.url, failover_seconds=15)
        audit = AuditLog(lambda: client, "failover:", wait)
        writer = Principal(user_id="writer")

        def record(value: str) -> str:
            audit.record(writer, AuditEvent("save", value, 1, "ok"), unless="not saved")
            return value

        run = failover_under_load(cluster, audit.stream, record)
        present = {e[1][b"resource_id"].decode() for e in client.xrange(audit.stream)}
    finally:
        cluster.stop()

    lost = run.lost(present)
    print(
        f"\nfailover ({'WAIT' if wait.replicas else 'no WAIT'}): "
        f"{len(run.acknowledged)} acknowledged, {len(lost)} lost, {run.refused} refused, "
        f"replica promoted after {run.promotion_seconds:.2f}s, longest writer outage "
        f"{run.longest_outage_seconds:.2f}s"
    )
    assert run.acknowledged_after_kill >= 300, "the writers went on after the failover"
    if wait.replicas:
        assert lost == set(), "WAIT: every acknowledged record is on the promoted replica"


class Collector(StreamWorker):
    """Notes each job's number and acknowledges it."""

    def __init__(self, stream: JobStream, stopping: threading.Event) -> None:
        super().__init__("collector", stream, poll_seconds=0.1, stale_seconds=1, stopping=stopping)
        self.handled: set[str] = set()

    def handle(self, delivery: Delivery) -> None:
        self.handled.add(delivery.fields["n"])
        self.done(delivery)


def test_a_job_worker_reconnects_to_the_promoted_master_and_goes_on(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path / "cluster").start()
    stopping = threading.Event()
    try:
        client = connect(cluster.url, failover_seconds=15)
        stream = JobStream(lambda: client, keyspace("failover:", "historian") + "jobs", "g")
        worker = Collector(stream, stopping)
        worker.start()
        for n in range(50):
            client.xadd(stream.stream, {"n": f"before-{n}"})
        wait_until(lambda: len(worker.handled) == 50, what="the jobs before the failover")

        victim = cluster.master_of(stream.stream)
        cluster.kill(victim)
        cluster.wait_promoted(stream.stream, victim)
        after = [f"after-{n}" for n in range(50)]
        for n in after:
            client.xadd(stream.stream, {"n": n})
        wait_until(lambda: set(after) <= worker.handled, 30, "the jobs after the failover")
    finally:
        stopping.set()
        worker.unblock()
        worker.join(10)
        cluster.stop()
    assert not worker.is_alive()


def test_a_cluster_none_of_whose_nodes_answers_is_unavailable(start_hub: StartHub) -> None:
    hub = start_hub(redis_url=f"redis+cluster://127.0.0.1:{free_ports(1)[0]}")
    alice = hub.client("alice")
    code, message = failure(lambda: alice.cognition.append_events(new_trace(), [query_event(1)]))
    assert code == "UNAVAILABLE" and "no node of the Redis Cluster answers" in message, message


def _untagged(name: str, prefix: str) -> str:
    """The name a key had before the hash tags (the rename run backwards)."""
    moves = [
        ("historian", "remember-request:", "dream:remember-request:"),
        ("historian", "memos:", "memory:memos:"),
        ("historian", "", "historian:"),
        ("dream", "", "dream:"),
        ("cognition", "triggers:evaluation", "triggers:evaluation"),
        ("cognition", "", "cognition:"),
    ]
    for area, rest, old in moves:
        start = keyspace(prefix, area) + rest
        if name.startswith(start):
            return prefix + old + name[len(start) :]
    raise AssertionError(f"no area holds {name}")


def test_a_hub_upgraded_from_the_untagged_layout_serves_its_data(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_hub(redis_url=redis_url, redis_prefix=redis_prefix)
    alice = hub.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(1, "k-1")])
    alice.memory.remember("likes green tea", context={"user_id": "10001"})
    hub.stop()
    client = connect(redis_url)  # as the version before the hash tags left it:
    client.delete(f"{redis_prefix}key-layout")
    for key in list(client.scan_iter(match=f"{{{redis_prefix}*")):
        client.rename(key, _untagged(key.decode(), redis_prefix))

    alice = hub.restart().client("alice")
    assert [e.type for e in alice.cognition.get_log(trace_id)] == ["query"]
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [1]
    assert [t.trace_id for t in alice.cognition.list_traces()] == [trace_id]
    assert [m.text for m in alice.memory.recent_memos(user_id="10001")] == ["likes green tea"]
    assert not list(client.scan_iter(match=f"{redis_prefix}cognition:*"))
