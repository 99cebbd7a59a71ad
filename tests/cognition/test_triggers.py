"""Pending evaluations and their three triggers: one trigger per pending set on the
Redis stream, delivered through a consumer group, acknowledged, and delivered again when a
consumer dies before acknowledging."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from knowhub import KnowHub, Trigger

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.cognition.conftest import WAIT_SECONDS, Watcher, new_trace, query_event
from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

FAST_REDELIVERY = {
    "KNOWHUB_COGNITION_TRIGGER_VISIBILITY_SECONDS": "0.3",
    "KNOWHUB_COGNITION_TRIGGER_POLL_SECONDS": "0.05",
}


def trigger_stream(harness: Harness) -> list[dict[str, str]]:
    client = connect(harness.settings["redis_url"])
    key = keyspace(harness.settings["redis_prefix"], "cognition") + "triggers:evaluation"
    entries = [
        {k.decode(): v.decode() for k, v in fields.items()} for _, fields in client.xrange(key)
    ]
    client.close()
    return entries


def signalled(client: KnowHub, kind: str = "compression") -> tuple[str, str]:
    """A new trace of `client`'s with one pending query, signalled: (trace id, trigger id)."""
    trace_id = new_trace()
    client.cognition.append_events(trace_id, [query_event(3, "k1")])
    return trace_id, client.cognition.signal_trigger(trace_id, kind).trigger_id


@pytest.fixture
def fast_hub(start_redis_hub: StartHub) -> Iterator[Harness]:
    yield start_redis_hub(env=FAST_REDELIVERY)


# ---- Pending evaluations ----------------------------------------------------------------


def test_queries_with_sources_are_pending_until_evaluated(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    k = alice.knowledge.save(task="t", content="c", types=["tool"])
    alice.cognition.append_events(
        trace_id, [query_event(3, k), query_event(4), query_event(5, k, "knowledge-other")]
    )

    pending = alice.cognition.pending_evaluations(trace_id)
    assert [q["sequence"] for q in pending] == [3, 5]
    assert pending[0]["source_ids"] == [k.id]
    # a query waits for a verdict on each of its sources
    report = alice.cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {"query_sequence": 5, "assessments": [{"knowledge_id": k.id, "status": "unused"}]}
        ],
    )
    assert report.pending_query_sequences == [3, 5]
    report = alice.cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {
                "query_sequence": 5,
                "assessments": [{"knowledge_id": "knowledge-other", "status": "irrelevant"}],
            }
        ],
    )
    assert report.pending_query_sequences == [3]
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [3]
    # the query without sources (4) was closed at once, with no verdicts
    view = alice.cognition.trace_view(trace_id)
    assert view.pending_query_sequences == [3]
    assert [
        e["query_sequence"] for e in alice.cognition.get_log(trace_id, types=["evaluation"])
    ] == [5, 5]


# ---- Signalling -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["goal_completion", "compression", "task_completion"])
def test_each_trigger_kind_publishes_the_pending_set_once(
    start_redis_hub: StartHub, kind: str
) -> None:
    hub = start_redis_hub()
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1"), query_event(8, "k2")])

    signal = alice.cognition.signal_trigger(trace_id, kind)
    assert (signal.query_sequences, signal.published) == ([3, 8], True)
    (entry,) = trigger_stream(hub)
    assert {
        k: entry[k] for k in ("trace_id", "trigger", "query_sequences", "owner", "agent_id")
    } == {
        "trace_id": trace_id,
        "trigger": kind,
        "query_sequences": "3,8",
        "owner": "user:alice",
        "agent_id": "acme:alice_bot",
    }  # kept qualified by its org
    again = alice.cognition.signal_trigger(trace_id, "task_completion")
    assert (again.query_sequences, again.published, again.trigger_id) == (
        [3, 8],
        False,
        signal.trigger_id,
    )
    assert len(trigger_stream(hub)) == 1
    assert alice.cognition.pending_evaluations(trace_id).last_trigger == kind


def test_a_new_pending_query_makes_a_new_trigger(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub()
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1")])
    first = alice.cognition.signal_trigger(trace_id, "goal_completion")
    alice.cognition.append_events(trace_id, [query_event(4, "k2")])
    second = alice.cognition.signal_trigger(trace_id, "compression")

    assert second.published and second.trigger_id != first.trigger_id
    assert second.query_sequences == [3, 4]
    assert [e["query_sequences"] for e in trigger_stream(hub)] == ["3", "3,4"]


def test_nothing_pending_publishes_nothing(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub()
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3)])  # no sources
    signal = alice.cognition.signal_trigger(trace_id, "task_completion")
    assert (signal.query_sequences, signal.published, signal.trigger_id) == ([], False, "")
    assert trigger_stream(hub) == []


def test_signal_trigger_checks_its_arguments(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k")])
    code, message = failure(lambda: alice.cognition.signal_trigger(trace_id, "lunch"))
    assert code == "INVALID_ARGUMENT" and message.startswith("trigger:")
    assert (
        failure(lambda: server.client("bob").cognition.signal_trigger(trace_id, "compression"))[0]
        == "NOT_FOUND"
    )
    assert (
        failure(lambda: alice.cognition.signal_trigger(new_trace(), "compression"))[0]
        == "NOT_FOUND"
    )


# ---- Watching and acknowledging ------------------------------------------------------------


def test_a_trigger_reaches_a_watcher_and_an_ack_retires_it(fast_hub: Harness) -> None:
    alice, evaluator = fast_hub.client("alice"), fast_hub.client("eval")
    trace_id, trigger_id = signalled(alice, "goal_completion")

    watcher = Watcher(evaluator, consumer="one")
    trigger = watcher.next()
    assert isinstance(trigger, Trigger)
    assert (
        trigger.trigger_id,
        trigger.trace_id,
        trigger.trigger,
        trigger.query_sequences,
        trigger.delivery_count,
    ) == (trigger_id, trace_id, "goal_completion", [3], 1)
    assert trigger.owner == "user:alice" and trigger.signaled_at is not None
    assert evaluator.cognition.ack_triggers([trigger.trigger_id]) == 1
    assert evaluator.cognition.ack_triggers([trigger.trigger_id]) == 0
    time.sleep(0.5)  # past the visibility timeout: an acknowledged trigger does not return
    later, _ = signalled(alice)
    following = watcher.next()
    assert isinstance(following, Trigger) and following.trace_id == later
    watcher.stop()


def test_a_consumer_that_dies_before_acking_gets_redelivered(fast_hub: Harness) -> None:
    alice, evaluator = fast_hub.client("alice"), fast_hub.client("eval")
    trace_id, _ = signalled(alice)

    dying = Watcher(evaluator, consumer="dies")
    first = dying.next()
    assert isinstance(first, Trigger)
    dying.stop()  # cancelled without acknowledging

    survivor = Watcher(fast_hub.client("eval"), consumer="survives")
    again = survivor.next()
    assert isinstance(again, Trigger)
    assert (again.trigger_id, again.trace_id) == (first.trigger_id, trace_id)
    assert again.delivery_count == 2
    assert evaluator.cognition.ack_triggers([again.trigger_id]) == 1
    survivor.stop()


def test_each_group_gets_every_trigger(fast_hub: Harness) -> None:
    alice, evaluator = fast_hub.client("alice"), fast_hub.client("eval")
    trace_id, _ = signalled(alice)
    seen = []
    for group in ("evaluators", "auditors"):
        watcher = Watcher(evaluator, group=group)
        trigger = watcher.next()
        assert isinstance(trigger, Trigger)
        seen.append(trigger.trace_id)
        assert evaluator.cognition.ack_triggers([trigger.trigger_id], group=group) == 1
        watcher.stop()
    assert seen == [trace_id, trace_id]


def test_triggers_are_for_evaluators(server: Harness) -> None:
    alice = server.client("alice")
    stream = alice.cognition.watch_triggers()
    code, message = failure(lambda: next(stream))  # type: ignore[call-overload]
    assert code == "PERMISSION_DENIED" and "evaluator" in message
    assert failure(lambda: alice.cognition.ack_triggers(["1-0"]))[0] == "PERMISSION_DENIED"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ({"trigger_ids": []}, "trigger_ids"),
        ({"trigger_ids": ["not-an-id"]}, "trigger_ids[0]"),
        ({"trigger_ids": ["1-0"] * 501}, "trigger_ids"),
        ({"trigger_ids": ["1-0"], "group": "no spaces"}, "group"),
    ],
)
def test_ack_checks_its_arguments(server: Harness, call: dict[str, Any], field: str) -> None:
    code, message = failure(lambda: server.client("eval").cognition.ack_triggers(**call))
    assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:")


def test_a_bad_consumer_name_is_refused(server: Harness) -> None:
    stream = server.client("eval").cognition.watch_triggers(consumer="no spaces")
    code, message = failure(lambda: next(stream))  # type: ignore[call-overload]
    assert code == "INVALID_ARGUMENT" and message.startswith("consumer:")


def test_a_cancelled_watch_frees_its_slot(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub(env={**FAST_REDELIVERY, "KNOWHUB_COGNITION_MAX_WATCHERS": "1"})
    signalled(hub.client("alice"))
    first = Watcher(hub.client("eval"))
    assert isinstance(first.next(), Trigger)

    second = Watcher(hub.client("eval"))
    refused = second.next()
    assert getattr(refused, "code", None) == "RESOURCE_EXHAUSTED"
    first.stop()
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        third = Watcher(hub.client("eval"))
        outcome = third.next()  # the unacknowledged trigger again, once the slot is free
        if isinstance(outcome, Trigger):
            break
        assert getattr(outcome, "code", None) == "RESOURCE_EXHAUSTED"
        assert time.monotonic() < deadline, "the cancelled stream kept its slot"
        time.sleep(0.05)
    third.stop()


def test_a_server_stopping_ends_watch_streams_cleanly(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub(env=FAST_REDELIVERY)
    watcher = Watcher(hub.client("eval"))
    time.sleep(0.2)  # the stream is open and waiting
    assert hub.server is not None
    hub.server.stop(grace=30)
    hub.server = None
    assert watcher.next() is None  # ended without an error, well before the grace period
