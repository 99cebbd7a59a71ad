"""Trace ids belong to their owner: two users (also of two organisations) each have their
own `trace-1`, and another user's trace reads exactly as one that does not exist, through
the SDK, REST and the CLI. Traces stored under their bare id (before) move to their
owner's name when the hub starts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from knowhub import KnowHub

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.cognition.conftest import new_trace, payload, query_event, save_knowledge
from tests.conftest import StartHub
from tests.gateway.conftest import Gateway, gateway_for
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

MESSAGE = {"type": "message", "sequence": 1, "role": "user", "content": "hello"}


@pytest.fixture
def gateway(server: Harness) -> Iterator[Gateway]:
    running = gateway_for(server)
    yield running
    running.stop()


def test_two_users_of_two_orgs_each_have_their_own_trace_of_one_name(server: Harness) -> None:
    alice, bob = server.client("alice"), server.client("bob")  # acme, globex
    trace_id = new_trace()
    bob.cognition.append_events(trace_id, [{**MESSAGE, "content": "bob's"}], task="bob's")
    alice.cognition.append_events(trace_id, [{**MESSAGE, "content": "alice's"}], task="alice's")
    alice.cognition.save_pending(trace_id, **payload(task="alice learned"))

    for client, owner, agent in ((alice, "user:alice", "alice_bot"), (bob, "user:bob", "bob_bot")):
        page = client.cognition.get_log(trace_id, types=["message"])
        who = owner.partition(":")[2]
        assert [e["content"] for e in page] == [f"{who}'s"]
        assert (page.trace.owner, page.trace.agent_id, page.trace.task) == (
            owner,
            agent,
            f"{who}'s",
        )
        assert trace_id in {t.trace_id for t in client.cognition.list_traces(limit=100)}
    assert [x.payload["task"] for x in alice.cognition.list_extractions(trace_id)] == [
        "alice learned"
    ]
    assert list(bob.cognition.list_extractions(trace_id)) == []
    admin = server.client("admin")
    assert [t.owner for t in admin.cognition.list_traces(limit=100) if t.trace_id == trace_id] == [
        "user:alice",
        "user:bob",
    ]
    assert json.loads(admin.cognition.export_log(trace_id, owner="user:bob"))["task"] == "bob's"


def nameless_calls(
    client: KnowHub, trace_id: str, owner: str | None
) -> dict[str, Callable[[], object]]:
    """Every call naming a trace, as a stranger would make it."""
    cognition = client.cognition
    return {
        "get_log": lambda: cognition.get_log(trace_id, owner=owner),
        "trace_view": lambda: cognition.trace_view(trace_id, owner=owner),
        "export_log": lambda: cognition.export_log(trace_id, owner=owner),
        "pending": lambda: cognition.pending_evaluations(trace_id, owner=owner),
        "signal": lambda: cognition.signal_trigger(trace_id, "compression", owner=owner),
        "prompt": lambda: cognition.evaluation_prompt(trace_id, owner=owner),
        "submit": lambda: cognition.submit_evaluation(trace_id, raw_text="{}", owner=owner),
        "abandon": lambda: cognition.abandon_evaluation(trace_id, owner=owner),
        "extractions": lambda: cognition.list_extractions(trace_id, owner=owner),
        "review": lambda: cognition.review_extraction(
            trace_id, "pending-0123456789abcdef", "approve", owner=owner
        ),
        "commit": lambda: cognition.commit_extractions(trace_id, owner=owner),
        "consume": lambda: cognition.consume_reflections(trace_id, ["1-0"], owner=owner),
        "append": lambda: cognition.append_events(trace_id, [MESSAGE], owner=owner),
        "delete": lambda: cognition.delete_trace(trace_id, owner=owner),
    }


def test_another_users_trace_reads_exactly_as_one_that_does_not_exist(server: Harness) -> None:
    alice, bob = server.client("alice"), server.client("bob")
    trace_id, missing = new_trace(), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1"), MESSAGE])
    alice.cognition.save_pending(trace_id, **payload())

    strangers = nameless_calls(bob, trace_id, "user:alice")
    for name, absent in nameless_calls(bob, missing, "user:alice").items():
        code, message = failure(strangers[name])
        assert code == "NOT_FOUND", name
        assert (code, message.replace(trace_id, "T")) == tuple(
            part.replace(missing, "T") for part in failure(absent)
        ), name
    assert len(alice.cognition.get_log(trace_id)) == 3  # nothing changed, nothing added
    assert alice.cognition.signal_trigger(trace_id, "compression").published


def test_another_owners_trace_over_rest_is_the_same_404(server: Harness, gateway: Gateway) -> None:
    alice = server.client("alice")
    trace_id, missing = new_trace(), new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])

    for method in ("GetLog", "GetTraceView", "ExportLog", "DeleteTrace"):
        seen = gateway.rpc(
            "cognition", method, {"trace_id": trace_id, "owner": "user:alice"}, as_="bob"
        )
        unseen = gateway.rpc(
            "cognition", method, {"trace_id": missing, "owner": "user:alice"}, as_="bob"
        )
        assert seen.status_code == unseen.status_code == 404, method
        assert seen.json()["error"]["message"].replace(trace_id, "T") == unseen.json()["error"][
            "message"
        ].replace(missing, "T"), method
    own = gateway.rpc(
        "cognition",
        "AppendEvents",
        {
            "trace_id": trace_id,
            "events": [{"message": {"sequence": 2, "role": "user", "content": "bob's own"}}],
        },
        as_="bob",
    )
    assert own.status_code == 200 and own.json()["trace"]["owner"] == "user:bob"
    read = gateway.rpc(
        "cognition", "GetLog", {"trace_id": trace_id, "owner": "user:alice"}, as_="admin"
    )
    assert [e["message"]["content"] for e in read.json()["events"]] == ["hello"]
    refused = gateway.rpc(
        "cognition", "GetLog", {"trace_id": trace_id, "owner": "agent:x"}, as_="admin"
    )
    assert refused.status_code == 400 and "owner" in refused.json()["error"]["message"]


def test_the_commands_name_an_owners_trace(
    server: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, bob = server.client("alice"), server.client("bob")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [{**MESSAGE, "content": "alice's"}])
    bob.cognition.append_events(trace_id, [{**MESSAGE, "content": "bob's"}])

    def export(token: str, *owner: str) -> tuple[int, str]:
        code = knowhub_cli(
            ["cognition", "export", trace_id, "--target", server.address, "--token", token, *owner]
        )
        captured = capsys.readouterr()
        return code, captured.out or captured.err

    code, out = export("token-bob")
    assert code == 0 and json.loads(out)["events"][0]["content"] == "bob's"
    code, out = export("token-admin", "--owner", "user:alice")
    assert code == 0 and json.loads(out)["events"][0]["content"] == "alice's"
    code, out = export("token-bob", "--owner", "user:alice")
    assert code == 1 and f"NOT_FOUND: trace {trace_id!r} not found" in out


def test_knowledge_ask_logs_into_the_callers_own_trace(
    start_redis_hub: StartHub, llm: OpenAIStub
) -> None:
    """AskKnowledge (over REST) logs its query into the caller's trace of that name,
    whoever else has one."""
    llm.responder = lambda request: "Rotate them monthly."
    hub = start_redis_hub(
        {"KNOWHUB_SEARCH_ROUTING": "false"}, llm_base_url=llm.base_url, llm_max_retries=0
    )
    alice, bob = hub.client("alice"), hub.client("bob")
    record = save_knowledge(alice, task="rotate the quokka keys", content="monthly")
    trace_id = new_trace()
    bob.cognition.append_events(trace_id, [MESSAGE])
    gateway = gateway_for(hub)
    try:
        asked = gateway.post(
            "/api/knowledge/ask",
            as_="alice",
            json={"query": "rotate the quokka keys", "trace_id": trace_id, "sequence": 4},
        )
    finally:
        gateway.stop()
    assert asked.status_code == 200, asked.text
    [query] = alice.cognition.get_log(trace_id, types=["query"])
    assert query["sequence"] == 4 and record.id in query["source_ids"]
    assert [e.type for e in bob.cognition.get_log(trace_id)] == ["message"]


# ---- Traces stored under their bare id ---------------------------------------------------


def write_legacy_trace(
    redis_url: str, prefix: str, trace_id: str, owner: str, sources: list[str], evaluated: str
) -> None:
    """A trace as the hub stored it before traces were named per owner: its keys under the
    bare id, one query of `sources` of which `evaluated` has a verdict (so the query was no
    longer pending then), and one pending extraction."""
    base = keyspace(prefix, "cognition")
    redis = connect(redis_url)
    query = {**query_event(3, *sources), "timestamp": "2026-01-01T00:00:00+00:00"}
    query_id = redis.xadd(f"{base}log:{trace_id}", {"t": "query", "e": json.dumps(query)})
    evaluation = {
        "type": "evaluation",
        "query_sequence": 3,
        "knowledge_id": evaluated,
        "eval_result": {"status": "neutral", "reason": ""},
        "evaluated_at_trigger": "",
        "timestamp": "2026-01-01T00:00:01+00:00",
    }
    redis.xadd(f"{base}log:{trace_id}", {"t": "evaluation", "e": json.dumps(evaluation)})
    extraction = {
        "type": "extraction_pending",
        "extraction_id": "pending-00aa00aa00aa00aa",
        "sequence": 3,
        "goal_id": "",
        "branch_id": "",
        "payload": payload(),
        "timestamp": "2026-01-01T00:00:02+00:00",
    }
    pending_id = redis.xadd(
        f"{base}log:{trace_id}", {"t": "extraction_pending", "e": json.dumps(extraction)}
    )
    redis.hset(
        f"{base}trace:{trace_id}",
        mapping={
            "trace_id": trace_id,
            "owner": owner,
            "created_at": "1767225600.0",
            "updated_at": "1767225602.0",
            "agent_id": "alice_bot",
            "task": "legacy",
            "auto_commit": "0",
            "event_count": "3",
            "unconsumed_reflections": "0",
            "last_sequence": "3",
            "reflected_at_sequence": "0",
        },
    )
    redis.hset(f"{base}queries:{trace_id}", "3", query_id)
    redis.hset(
        f"{base}evaluated:{trace_id}",
        f"3|{evaluated}",
        json.dumps({"status": "neutral", "reason": "", "feedback": "none", "detail": ""}),
    )
    redis.sadd(f"{base}evaluated-seqs:{trace_id}", "3")
    redis.zadd(f"{base}extractions:{trace_id}", {"pending-00aa00aa00aa00aa": 1767225602.0})
    redis.hset(
        f"{base}extraction:{trace_id}|pending-00aa00aa00aa00aa",
        mapping={
            "trace_id": trace_id,
            "extraction_id": "pending-00aa00aa00aa00aa",
            "sequence": "3",
            "goal_id": "",
            "branch_id": "",
            "payload": json.dumps(payload()),
            "created_at": "1767225602.0",
            "event_id": pending_id,
            "state": "pending",
        },
    )
    for index in (
        "traces",
        f"traces:owner:{owner}",
        "traces:agent:alice_bot",
        f"traces:owner-agent:{owner}|alice_bot",
    ):
        redis.zadd(f"{base}{index}", {trace_id: 1767225602.0})
    for index in ("extractions-by-state:pending", f"extractions-by-state:pending:{owner}"):
        redis.zadd(f"{base}{index}", {f"{trace_id}|pending-00aa00aa00aa00aa": 1767225602.0})
    redis.close()


def test_a_trace_stored_under_its_bare_id_moves_to_its_owners_name(
    start_redis_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    trace_id = new_trace()
    write_legacy_trace(redis_url, redis_prefix, trace_id, "user:alice", ["k1", "k2"], "k1")
    hub = start_redis_hub()
    alice, bob, admin = hub.client("alice"), hub.client("bob"), hub.client("admin")

    page = alice.cognition.get_log(trace_id)
    assert [e.type for e in page] == ["query", "evaluation", "extraction_pending"]
    assert (page.trace.owner, page.trace.task, page.trace.event_count) == (
        "user:alice",
        "legacy",
        3,
    )
    # the query waits for a verdict on its other source now
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [3]
    [extraction] = alice.cognition.list_extractions(states=["pending"], limit=100)
    assert (extraction.trace_id, extraction.owner) == (trace_id, "user:alice")
    # its agent stays as stored until `knowhub migrate-names` gives it an organisation
    assert [t.trace_id for t in admin.cognition.list_traces(owner="user:alice", limit=100)].count(
        trace_id
    ) == 1
    assert failure(lambda: bob.cognition.get_log(trace_id))[0] == "NOT_FOUND"
    bob.cognition.append_events(trace_id, [MESSAGE])  # bob's own, beside alice's
    assert len(alice.cognition.get_log(trace_id)) == 3

    redis = connect(redis_url)
    base = keyspace(redis_prefix, "cognition")
    legacy = [k.decode() for k in redis.scan_iter(match=f"*:{trace_id}", count=1000)]
    assert legacy == [] and redis.get(f"{base}key-layout") == b"per-owner"
    assert redis.zscore(f"{base}traces", trace_id) is None
    redis.close()


def test_moving_is_done_once_and_leaves_other_data_alone(
    start_redis_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    first = start_redis_hub()
    alice = first.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])
    later = new_trace()  # written under its bare id after the move: not moved again
    write_legacy_trace(redis_url, redis_prefix, later, "user:alice", ["k1"], "k1")
    second = start_redis_hub()
    assert len(second.client("alice").cognition.get_log(trace_id)) == 1
    assert failure(lambda: second.client("alice").cognition.get_log(later))[0] == "NOT_FOUND"
