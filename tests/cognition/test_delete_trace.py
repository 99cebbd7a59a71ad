"""Deleting a trace: by its owner or an admin, through the SDK, REST and the CLI (the MCP
tool is in tests/mcp); the log, its extractions, its evaluation state and every index
entry go in one step, nothing of another trace does, and the id may name a new trace."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.cognition.conftest import new_trace, payload, query_event, save_knowledge
from tests.conftest import StartHub
from tests.gateway.conftest import Gateway, gateway_for
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

MESSAGE = {"type": "message", "sequence": 1, "role": "user", "content": "hello"}


def trace_keys(redis_url: str, redis_prefix: str, owner: str, trace_id: str) -> list[str]:
    """Every Redis key that names the trace, and every index entry that does."""
    redis = connect(redis_url)
    base = keyspace(redis_prefix, "cognition")
    ref = f"{owner}/{trace_id}"
    found = [k.decode() for k in redis.scan_iter(match=f"{base}*{ref}*", count=1000)]
    for key in redis.scan_iter(match=f"{base}*traces*", count=1000):
        if redis.zscore(key, ref) is not None:
            found.append(f"{key.decode()} -> {ref}")
    for key in redis.scan_iter(match=f"{base}extractions-by-state*", count=1000):
        found += [
            f"{key.decode()} -> {m.decode()}"
            for m in redis.zrange(key, 0, -1)
            if m.decode().startswith(f"{ref}|")
        ]
    redis.close()
    return found


def test_the_owner_deletes_a_trace_with_everything_it_held(
    start_redis_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_redis_hub()
    alice, bob = hub.client("alice"), hub.client("bob")
    record = save_knowledge(alice)
    trace_id, kept = new_trace(), new_trace()
    for target in (trace_id, kept):
        alice.cognition.append_events(target, [MESSAGE, query_event(3, record)], task="t")
        alice.cognition.save_pending(target, **payload())
        alice.cognition.submit_evaluation(
            target,
            evaluations=[
                {
                    "query_sequence": 3,
                    "assessments": [{"knowledge_id": record.id, "status": "helpful"}],
                }
            ],
        )
        alice.cognition.signal_trigger(target, "compression")
    bob.cognition.append_events(trace_id, [MESSAGE])
    assert trace_keys(redis_url, redis_prefix, "user:alice", trace_id)

    deleted = alice.cognition.delete_trace(trace_id)
    assert (deleted.deleted_events, deleted.deleted_extractions) == (4, 1)
    assert trace_keys(redis_url, redis_prefix, "user:alice", trace_id) == []
    assert failure(lambda: alice.cognition.get_log(trace_id)) == (
        "NOT_FOUND",
        f"trace {trace_id!r} not found",
    )
    assert failure(lambda: alice.cognition.delete_trace(trace_id))[0] == "NOT_FOUND"
    assert trace_id not in {t.trace_id for t in alice.cognition.list_traces(limit=100)}
    assert {x.trace_id for x in alice.cognition.list_extractions(limit=100)} == {kept}
    # the other trace, bob's trace of the same id, and the applied feedback stay
    assert len(alice.cognition.get_log(kept)) == 4
    assert [e.type for e in bob.cognition.get_log(trace_id)] == ["message"]
    assert alice.knowledge.get(record.id).eval.helpful == record.eval.helpful + 2
    # the id names a new trace, of another agent even
    fresh = alice.cognition.append_events(trace_id, [MESSAGE], agent_id="").trace
    carol_style = (
        hub.client("carol").cognition.append_events(trace_id, [MESSAGE], agent_id="carol_bot").trace
    )
    assert (fresh.event_count, fresh.pending_evaluations, fresh.task) == (1, 0, "")
    assert carol_style.agent_id == "carol_bot"


def test_only_the_owner_or_an_admin_deletes(server: Harness) -> None:
    alice, bob, admin = server.client("alice"), server.client("bob"), server.client("admin")
    evaluator, dreamer = server.client("eval"), server.client("dream")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])
    for client in (bob, evaluator, dreamer):
        assert failure(lambda c=client: c.cognition.delete_trace(trace_id, owner="user:alice")) == (
            "NOT_FOUND",
            f"trace {trace_id!r} not found",
        )
    assert len(alice.cognition.get_log(trace_id)) == 1
    assert admin.cognition.delete_trace(trace_id, owner="user:alice").deleted_events == 1
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"
    for bad, field in (("", "trace_id"), ("has space", "trace_id")):
        code, message = failure(lambda b=bad: alice.cognition.delete_trace(b))
        assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:")
    code, message = failure(lambda: admin.cognition.delete_trace(trace_id, owner="agent:x"))
    assert code == "INVALID_ARGUMENT" and message.startswith("owner:")


@pytest.fixture
def gateway(server: Harness) -> Iterator[Gateway]:
    running = gateway_for(server)
    yield running
    running.stop()


def test_delete_over_rest_and_the_command(
    server: Harness, gateway: Gateway, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = server.client("alice")
    over_rest, by_command = new_trace(), new_trace()
    for trace_id in (over_rest, by_command):
        alice.cognition.append_events(trace_id, [MESSAGE, {**MESSAGE, "sequence": 2}])

    response = gateway.rpc("cognition", "DeleteTrace", {"trace_id": over_rest}, as_="alice")
    assert response.status_code == 200
    assert response.json() == {"deleted_events": 2, "deleted_extractions": 0}
    again = gateway.rpc("cognition", "DeleteTrace", {"trace_id": over_rest}, as_="alice")
    assert again.status_code == 404

    target = ["--target", server.address, "--token", "token-alice"]
    assert knowhub_cli(["cognition", "delete", by_command, *target]) == 0
    assert f"deleted trace {by_command}: 2 events, 0 extractions" in capsys.readouterr().out
    assert knowhub_cli(["cognition", "delete", by_command, *target]) == 1
    assert f"NOT_FOUND: trace {by_command!r} not found" in capsys.readouterr().err
    for trace_id in (over_rest, by_command):
        assert failure(lambda t=trace_id: alice.cognition.get_log(t))[0] == "NOT_FOUND"
