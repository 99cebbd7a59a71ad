"""The server-side evaluator (KNOWHUB_EVALUATOR=on): a trigger becomes evaluation events and
knowledge counters through cognition; without an LLM triggers wait in the stream; an
answer it cannot use is retried, then given up."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.cognition.conftest import query_event, save_knowledge
from tests.conftest import StartHub
from tests.dream.dreaming import FAST, DreamLLM, new_trace, write_dream_tokens
from tests.dream.support import wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

EVALUATOR = {**FAST, "KNOWHUB_EVALUATOR": "on", "KNOWHUB_COGNITION_TRIGGER_POLL_SECONDS": "0.1"}


def rate_every_source(status: str) -> Any:
    """An evaluator LLM rating each source of each pending query of the prompt."""

    def answer(prompt: str) -> str:
        evaluations = []
        for block in prompt.split("### ")[1:]:
            sequence = re.search(r"query_sequence=(\d+)", block)
            if sequence:
                evaluations.append(
                    {
                        "query_sequence": int(sequence.group(1)),
                        "assessments": [
                            {"source_id": s, "status": status, "reason": "scripted"}
                            for s in re.findall(r"source_id: (\S+)", block)
                        ],
                    }
                )
        return "```json\n" + json.dumps({"evaluations": evaluations}) + "\n```"

    return answer


def evaluator_hub(
    start_hub: StartHub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    llm: OpenAIStub | None,
    **env: str,
) -> Harness:
    write_dream_tokens(tokens_file.parent)
    settings: dict[str, Any] = {"redis_url": redis_url, "redis_prefix": redis_prefix}
    if llm is not None:
        settings.update(llm_base_url=llm.base_url, llm_max_retries=0)
    return start_hub(env={**EVALUATOR, **env}, **settings)


def pending_triggers(redis_url: str, redis_prefix: str) -> int:
    redis = connect(redis_url)
    groups = redis.xinfo_groups(f"{keyspace(redis_prefix, 'cognition')}triggers:evaluation")
    return sum(g["pending"] for g in groups)


def queried_trace(alice: KnowHub, knowledge_id: str) -> str:
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [query_event(3, knowledge_id)], task="log in")
    assert alice.cognition.signal_trigger(trace_id, "goal_completion").published
    return trace_id


def test_a_trigger_becomes_evaluations_and_counters(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    scripted.evaluate = rate_every_source("helpful")
    llm.responder = scripted
    hub = evaluator_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice = hub.client("alice")
    record = save_knowledge(alice)
    before = record.eval.helpful

    trace_id = queried_trace(alice, record.id)
    wait_until(
        lambda: alice.knowledge.get(record.id).eval.helpful == before + 1,
        what="the evaluator's feedback",
    )

    [evaluation] = alice.cognition.get_log(trace_id, types=["evaluation"])
    assert (
        evaluation["knowledge_id"],
        evaluation["eval_result"]["status"],
        evaluation["evaluated_at_trigger"],
    ) == (record.id, "helpful", "goal_completion")
    assert list(alice.cognition.pending_evaluations(trace_id)) == []
    [case] = alice.knowledge.get(record.id).eval.helpful_history[-1:]
    assert case.trace_id == trace_id and case.query_sequence == 3
    assert "query_sequence=3" in scripted.prompts["evaluate"][0]
    wait_until(
        lambda: pending_triggers(redis_url, redis_prefix) == 0,
        what="the trigger to be acknowledged",
    )


def test_without_an_llm_triggers_wait_in_the_stream(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    idle = evaluator_hub(start_hub, tokens_file, redis_url, redis_prefix, None)
    alice = idle.client("alice")
    record = save_knowledge(alice)
    trace_id = queried_trace(alice, record.id)
    stream = f"{keyspace(redis_prefix, 'cognition')}triggers:evaluation"
    idle.stop()  # had it read the trigger, it would be pending in its group now
    redis = connect(redis_url)
    assert redis.xlen(stream) == 1 and redis.xinfo_groups(stream) == []

    scripted = DreamLLM()
    scripted.evaluate = rate_every_source("neutral")
    llm.responder = scripted
    hub = evaluator_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice = hub.client("alice")
    wait_until(
        lambda: alice.cognition.get_log(trace_id, types=["evaluation"]),
        what="the waiting trigger to be evaluated",
    )
    assert (
        alice.cognition.get_log(trace_id, types=["evaluation"])[0]["eval_result"]["status"]
        == "neutral"
    )


def test_an_answer_it_cannot_use_comes_back_then_is_given_up(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    scripted.evaluate = lambda prompt: "I cannot rate these, sorry."
    llm.responder = scripted
    hub = evaluator_hub(
        start_hub,
        tokens_file,
        redis_url,
        redis_prefix,
        llm,
        KNOWHUB_COGNITION_TRIGGER_VISIBILITY_SECONDS="0.3",
        KNOWHUB_EVALUATOR_MAX_DELIVERIES="2",
    )
    alice = hub.client("alice")
    record = save_knowledge(alice)
    trace_id = queried_trace(alice, record.id)

    wait_until(lambda: len(scripted.prompts["evaluate"]) == 2, what="the second delivery")
    wait_until(
        lambda: pending_triggers(redis_url, redis_prefix) == 0, what="the trigger to be given up"
    )
    assert alice.cognition.get_log(trace_id, types=["evaluation"]) == []
    assert len(alice.cognition.pending_evaluations(trace_id)) == 1
    assert alice.knowledge.get(record.id).eval.helpful == record.eval.helpful
    assert len(scripted.prompts["evaluate"]) == 2


def test_a_given_up_evaluation_is_shown_and_a_new_signal_retries_it(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    scripted.evaluate = lambda prompt: "I cannot rate these, sorry."
    llm.responder = scripted
    hub = evaluator_hub(
        start_hub,
        tokens_file,
        redis_url,
        redis_prefix,
        llm,
        KNOWHUB_COGNITION_TRIGGER_VISIBILITY_SECONDS="0.3",
        KNOWHUB_EVALUATOR_MAX_DELIVERIES="3",
    )
    alice = hub.client("alice")
    record = save_knowledge(alice)
    trace_id = queried_trace(alice, record.id)

    wait_until(
        lambda: alice.cognition.get_log(trace_id).trace.abandoned_evaluations == 1,
        what="the evaluator to give up",
    )
    failures = alice.cognition.get_log(trace_id, types=["evaluation_failed"])
    assert [f["gave_up"] for f in failures] == [False, False, False, True]
    assert all(f["query_sequences"] == [3] for f in failures)
    assert failures[0]["answer_excerpt"] == "I cannot rate these, sorry."
    assert "holds no JSON" in failures[0]["reason"]
    assert (failures[-1]["deliveries"], failures[-1]["trigger_id"] != "") == (3, True)
    view = alice.cognition.trace_view(trace_id)
    assert (view.abandoned_query_sequences, len(view.evaluation_failures)) == ([3], 4)
    wait_until(
        lambda: pending_triggers(redis_url, redis_prefix) == 0,
        what="the trigger to be acknowledged",
    )

    # the model is fixed: a new signal publishes the same queries again
    scripted.evaluate = rate_every_source("helpful")
    assert alice.cognition.signal_trigger(trace_id, "task_completion").published
    wait_until(
        lambda: alice.knowledge.get(record.id).eval.helpful == record.eval.helpful + 1,
        what="the retried evaluation",
    )
    trace = alice.cognition.get_log(trace_id).trace
    assert (trace.pending_evaluations, trace.abandoned_evaluations) == (0, 0)
    assert len(scripted.prompts["evaluate"]) == 4


def test_the_evaluator_rates_each_owners_trace_of_one_name_in_its_own_trace(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    """alice (acme) and bob (globex) each have a trace of the same id; the evaluator, of
    neither's organisation, rates each one's query as that owner (a delegated grant)."""
    scripted = DreamLLM()
    scripted.evaluate = rate_every_source("helpful")
    llm.responder = scripted
    hub = evaluator_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice, bob = hub.client("alice"), hub.client("bob")
    alices = save_knowledge(alice)
    bobs = bob.knowledge.save(
        task="ship the globex order", content="use the dock door", types=["strategy"]
    )
    trace_id = new_trace()
    for client, record in ((alice, alices), (bob, bobs)):
        client.cognition.append_events(trace_id, [query_event(3, record.id)], task="work")
        assert client.cognition.signal_trigger(trace_id, "goal_completion").published

    for client, record in ((alice, alices), (bob, bobs)):
        wait_until(
            lambda c=client, r=record: c.knowledge.get(r.id).eval.helpful == r.eval.helpful + 1,
            what="each owner's feedback",
        )
        [evaluation] = client.cognition.get_log(trace_id, types=["evaluation"])
        assert evaluation["knowledge_id"] == record.id
        [case] = client.knowledge.get(record.id).eval.helpful_history[-1:]
        assert (case.trace_id, case.query_sequence) == (trace_id, 3)
