"""Evaluation never stalls: a query is pending until each of its sources has a verdict, one
without sources is closed at once; an answer without evaluation JSON is logged and answered
OK; an evaluator's give-up is logged, counted on the trace, and a new signal publishes the
queries again. Through the SDK, REST and the CLI (the server-side evaluator, with the
scripted LLM, is in tests/dream/test_evaluator.py; the MCP tools in tests/mcp)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knowhub_server.cli import main as knowhub_cli
from tests.cognition.conftest import new_trace, query_event
from tests.gateway.conftest import Gateway, gateway_for
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def rated(sequence: int, *pairs: tuple[str, str]) -> list[dict[str, object]]:
    return [
        {
            "query_sequence": sequence,
            "assessments": [{"knowledge_id": k, "status": s} for k, s in pairs],
        }
    ]


def test_a_query_waits_for_a_verdict_on_each_source(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1", "k2", "k3"), query_event(4)])
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [3]
    assert alice.cognition.evaluation_prompt(trace_id).query_sequences == [3]

    report = alice.cognition.submit_evaluation(
        trace_id, evaluations=rated(3, ("k1", "helpful"), ("k3", "unused"))
    )
    assert report.pending_query_sequences == [3]
    prompt = alice.cognition.evaluation_prompt(trace_id)
    assert prompt.query_sequences == [3] and "k2" in prompt.prompt
    # a second verdict on a rated source changes nothing; the last source closes it
    report = alice.cognition.submit_evaluation(
        trace_id, evaluations=rated(3, ("k1", "harmful"), ("k2", "neutral"))
    )
    assert [(o.knowledge_id, o.status, o.recorded) for o in report.outcomes] == [
        ("k1", "helpful", False),
        ("k2", "neutral", True),
    ]
    assert report.pending_query_sequences == []
    assert alice.cognition.evaluation_prompt(trace_id).prompt == ""
    assert not alice.cognition.signal_trigger(trace_id, "task_completion").published


def test_an_evaluator_gives_up_and_a_new_signal_publishes_again(server: Harness) -> None:
    alice, evaluator = server.client("alice"), server.client("eval")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1"), query_event(5, "k2")])
    first = alice.cognition.signal_trigger(trace_id, "goal_completion")
    assert first.published
    assert not alice.cognition.signal_trigger(trace_id, "goal_completion").published

    given_up = evaluator.cognition.abandon_evaluation(
        trace_id,
        "the model answered prose three times",
        trigger_id=first.trigger_id,
        deliveries=3,
        owner="user:alice",
    )
    assert given_up.query_sequences == [3, 5] and given_up.event_id
    retried = evaluator.cognition.abandon_evaluation(
        trace_id, "again", trigger_id=first.trigger_id, deliveries=4, owner="user:alice"
    )
    assert retried.event_id == given_up.event_id  # once per trigger: the first answer
    trace = alice.cognition.get_log(trace_id).trace
    assert (trace.pending_evaluations, trace.abandoned_evaluations) == (2, 2)
    [failed] = alice.cognition.get_log(trace_id, types=["evaluation_failed"])
    assert (failed["gave_up"], failed["deliveries"], failed["trigger_id"], failed["reason"]) == (
        True,
        3,
        first.trigger_id,
        "the model answered prose three times",
    )
    view = alice.cognition.trace_view(trace_id)
    assert view.abandoned_query_sequences == [3, 5]
    assert [e.event_id for e in view.evaluation_failures] == [given_up.event_id]

    again = alice.cognition.signal_trigger(trace_id, "task_completion")
    assert again.published and again.trigger_id != first.trigger_id
    assert alice.cognition.get_log(trace_id).trace.abandoned_evaluations == 0
    # a verdict on one query takes it off what was given up, the other stays pending
    alice.cognition.submit_evaluation(trace_id, evaluations=rated(3, ("k1", "helpful")))
    assert alice.cognition.pending_evaluations(trace_id).last_trigger == "task_completion"
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [5]


def test_who_may_give_up_and_what_is_checked(server: Harness) -> None:
    alice, bob, dreamer = server.client("alice"), server.client("bob"), server.client("dream")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1")])
    for client in (bob, dreamer):
        assert failure(
            lambda c=client: c.cognition.abandon_evaluation(trace_id, owner="user:alice")
        ) == ("NOT_FOUND", f"trace {trace_id!r} not found")
    for call, field in (
        (lambda: alice.cognition.abandon_evaluation(trace_id, trigger_id="x"), "trigger_id"),
        (lambda: alice.cognition.abandon_evaluation(trace_id, reason="r" * 4_001), "reason"),
        (lambda: alice.cognition.abandon_evaluation(trace_id, deliveries=-1), "deliveries"),
    ):
        code, message = failure(call)
        assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:")
    assert (
        alice.cognition.get_log(trace_id, types=["evaluation_failed"]).trace.abandoned_evaluations
        == 0
    )
    assert alice.cognition.abandon_evaluation(trace_id).query_sequences == [3]  # the owner


@pytest.fixture
def gateway(server: Harness) -> Iterator[Gateway]:
    running = gateway_for(server)
    yield running
    running.stop()


def test_over_rest_an_unreadable_answer_is_200_and_a_give_up_can_be_retried(
    server: Harness, gateway: Gateway
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1")])

    answered = gateway.rpc(
        "cognition",
        "SubmitEvaluation",
        {"trace_id": trace_id, "raw_text": "Looks good to me!"},
        as_="alice",
    )
    assert answered.status_code == 200, answered.text
    body = answered.json()
    assert body["parse_failed"] is True and "holds no JSON" in body["parse_error"]
    assert body["pending_query_sequences"] == [3]
    log = gateway.rpc(
        "cognition", "GetLog", {"trace_id": trace_id, "types": ["evaluation_failed"]}, as_="alice"
    )
    [event] = log.json()["events"]
    assert event["evaluation_failed"]["answer_excerpt"] == "Looks good to me!"

    assert gateway.rpc(
        "cognition", "SignalTrigger", {"trace_id": trace_id, "trigger": "compression"}, as_="alice"
    ).json()["published"]
    abandoned = gateway.rpc(
        "cognition",
        "AbandonEvaluation",
        {"trace_id": trace_id, "owner": "user:alice", "reason": "no JSON"},
        as_="eval",
    )
    assert abandoned.status_code == 200 and abandoned.json()["query_sequences"] == [3]
    view = gateway.rpc("cognition", "GetTraceView", {"trace_id": trace_id}, as_="alice")
    assert view.json()["trace"]["abandoned_evaluations"] == 1
    assert gateway.rpc(
        "cognition", "SignalTrigger", {"trace_id": trace_id, "trigger": "compression"}, as_="alice"
    ).json()["published"]


def test_the_signal_command_retries_a_given_up_evaluation(
    server: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, "k1")])
    command = [
        "cognition",
        "signal",
        trace_id,
        "--target",
        server.address,
        "--token",
        "token-alice",
    ]

    assert knowhub_cli(command) == 0
    assert "published trigger" in capsys.readouterr().out
    assert knowhub_cli(command) == 0
    assert "already published" in capsys.readouterr().out
    alice.cognition.abandon_evaluation(trace_id, "gave up")
    assert knowhub_cli([*command, "--trigger", "goal_completion"]) == 0
    assert "published trigger" in capsys.readouterr().out
    assert alice.cognition.pending_evaluations(trace_id).last_trigger == "goal_completion"
    empty = new_trace()
    alice.cognition.append_events(empty, [query_event(1)])
    assert knowhub_cli(["cognition", "signal", empty, *command[3:]]) == 0
    assert "no query waits" in capsys.readouterr().out
