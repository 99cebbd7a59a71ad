"""The LLM endpoint down (HTTP 503), slow past its timeout, or answering garbage, for
every pipeline that asks it: knowledge search routing, evolve and slim; the historian's
rewrite and profile merge; dream reflection and integration; the server-side evaluator
(cognition's evaluations). Each takes its documented degrade path, and no work is lost:
what could not be done waits and is done once the LLM answers again.

(Cognition's extractions ask no LLM: people review them.)"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from knowhub import errors

from knowhub_server.dream.memory import prompts as memory_prompts
from knowhub_server.dream.runs import prompts as runs_prompts
from knowhub_server.knowledge import prompts as knowledge_prompts
from tests.conftest import StartHub
from tests.dream.dreaming import FAST, wait_run, write_dream_tokens
from tests.dream.test_evaluator import rate_every_source
from tests.reliability.conftest import Report
from tests.reliability.processes import wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import Delay, Failure, OpenAIStub, ToolCalls

LLM_TIMEOUT = 0.5
ROUTING_TIMEOUT = 0.25
SLOW = LLM_TIMEOUT + 0.5

PIPELINES = ("routing", "evolve", "slim", "rewrite", "profile", "reflect", "integrate", "evaluate")
SYSTEMS = {
    knowledge_prompts.ROUTING_SYSTEM: "routing",
    knowledge_prompts.EVOLVE_SYSTEM: "evolve",
    knowledge_prompts.SLIM_SYSTEM: "slim",
    runs_prompts.REFLECT_SYSTEM: "reflect",
    runs_prompts.INTEGRATE_SYSTEM: "integrate",
    runs_prompts.EVALUATOR_SYSTEM: "evaluate",
}
TOOLS = {memory_prompts.REWRITE_TOOL: "rewrite", memory_prompts.PROFILE_TOOL: "profile"}


def pipeline_of(request: dict[str, Any]) -> str:
    if request.get("tools"):
        return TOOLS[request["tools"][0]["function"]["name"]]
    return SYSTEMS[request["messages"][0]["content"]]


def good_answer(pipeline: str, request: dict[str, Any]) -> str | ToolCalls:
    prompt = request["messages"][-1]["content"]
    if pipeline == "routing":
        return json.dumps({"ids": re.findall(r'"id": "([^"]+)"', prompt)[::-1]})
    if pipeline == "evolve":
        return json.dumps({"content": "evolved: use the saved cookie, refreshed daily"})
    if pipeline == "slim":
        return json.dumps({"task": "merged task", "content": "merged content"})
    if pipeline == "rewrite":
        return ToolCalls([("submit_rewrite", {"text": "Null (QQ 10001) likes the oboe."})])
    if pipeline == "profile":
        return ToolCalls(
            [
                (
                    "update_profile",
                    {
                        "entity_type": "user",
                        "entity_id": "10001",
                        "name": "Null",
                        "tags": [],
                        "summary": "likes the oboe",
                    },
                )
            ]
        )
    if pipeline == "reflect":
        return json.dumps({"summary": "the run taught patience"})
    if pipeline == "integrate":
        return json.dumps({"updates": [{"path": "notes.md", "new_content": "# Notes\n"}]})
    return rate_every_source("helpful")(prompt)  # evaluate


def fault_answer(fault: str, pipeline: str) -> str | ToolCalls | Failure | Delay:
    if fault == "down":
        return Failure(503)
    if fault == "slow":
        return Delay(SLOW, "{}")
    if pipeline in TOOLS.values():  # garbage: a call whose arguments are not JSON
        return ToolCalls(
            [
                (
                    memory_prompts.REWRITE_TOOL
                    if pipeline == "rewrite"
                    else memory_prompts.PROFILE_TOOL,
                    "{{not json",
                )
            ]
        )
    return "Sorry, as a language model I cannot answer in JSON."


class FaultyLLM:
    """Answers the pipelines in `faulty` with the fault, the others well; counts calls."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.faulty: set[str] = set(PIPELINES)
        self.calls: dict[str, int] = dict.fromkeys(PIPELINES, 0)

    def __call__(self, request: dict[str, Any]) -> str | ToolCalls | Failure | Delay:
        pipeline = pipeline_of(request)
        self.calls[pipeline] += 1
        if pipeline in self.faulty:
            return fault_answer(self.fault, pipeline)
        return good_answer(pipeline, request)


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


@pytest.fixture
def hub_for(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> Callable[[FaultyLLM], Harness]:
    def start(scripted: FaultyLLM) -> Harness:
        llm.responder = scripted
        write_dream_tokens(tokens_file.parent)
        hub = start_hub(
            env={
                **FAST,
                "KNOWHUB_HISTORIAN_WORKERS": "1",
                "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
                "KNOWHUB_EVALUATOR": "on",
                "KNOWHUB_EVALUATOR_MAX_DELIVERIES": "100",
                "KNOWHUB_COGNITION_TRIGGER_POLL_SECONDS": "0.1",
                "KNOWHUB_COGNITION_TRIGGER_VISIBILITY_SECONDS": "0.5",
                "KNOWHUB_SEARCH_ROUTING_TIMEOUT_SECONDS": str(ROUTING_TIMEOUT),
            },
            redis_url=redis_url,
            redis_prefix=redis_prefix,
            llm_base_url=llm.base_url,
            llm_max_retries=0,
            llm_timeout_seconds=LLM_TIMEOUT,
        )
        return hub

    return start


@pytest.mark.parametrize("fault", ["down", "slow", "garbage"])
def test_every_llm_pipeline_degrades_and_loses_no_work(
    fault: str, hub_for: Callable[[FaultyLLM], Harness], figures: Report
) -> None:
    scripted = FaultyLLM(fault)
    hub = hub_for(scripted)
    alice, carol = hub.client("alice"), hub.client("carol")
    slowest: dict[str, float] = {}

    # Routing (the LLM picks 2 of the 3 recalled): the recall order stands.
    record = alice.knowledge.save(
        task="log in to the supplier portal", content="use the saved cookie", types=["strategy"]
    )
    for task in ("portal invoices export", "portal user admin"):
        alice.knowledge.save(task=task, content="from the settings tab", types=["tool"])
    hits, slowest["search"] = timed(lambda: alice.knowledge.search("portal", top_k=1))
    assert len(hits) == 1 and not hits.routed

    # Evolve: UNAVAILABLE, nothing changed.
    with pytest.raises(errors.Unavailable):
        alice.knowledge.update(record.id, evolve_feedback="the cookie expires daily")
    assert alice.knowledge.get(record.id).content == "use the saved cookie"
    assert alice.knowledge.versions(record.id) == []

    # Slim: the best record's content is kept, the group is still merged.
    twin = [
        alice.knowledge.save(
            task="rotate the api keys monthly", content=text, types=["strategy"], score=score
        )
        for text, score in (
            ("revoke old keys after rotation", 5),
            ("revoke old keys after rotation now", 3),
        )
    ]
    report, slowest["slim"] = timed(lambda: alice.knowledge.slim())
    [group] = report.groups
    assert (group.kept_id, group.removed_ids) == (twin[0].id, [twin[1].id])
    assert not group.merged_by_llm and "LLM merge failed" in group.note
    assert alice.knowledge.get(twin[0].id).content == "revoke old keys after rotation"

    # The historian: the observation is stored as written, profiles stay as they are.
    job = alice.memory.remember(
        "", ["User 10001 likes the oboe"], context={"user_id": "10001"}
    ).job_id
    wait_until(
        lambda: alice.memory.search_events("oboe", target_user_id="10001"),
        what="the historian's event",
    )
    [hit] = alice.memory.search_events("oboe", target_user_id="10001")
    assert (hit.event.job_id, hit.event.text, hit.event.is_absolute) == (
        job,
        "User 10001 likes the oboe",
        False,
    )
    assert "rewrite failed" in hit.event.warning
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "10001")
    assert list(alice.memory.failed_jobs()) == []

    # Reflection: the trace fails in the run and stays unreflected for the next run.
    trace = "llm-faults-trace"
    alice.cognition.append_events(
        trace,
        [
            {"type": "message", "sequence": n, "role": "user", "content": f"step {n}"}
            for n in range(1, 4)
        ],
        task="try the portal",
    )
    run = wait_run(alice, alice.dream.run().run_id, timeout=60)
    assert run.status == "failed" and [f.trace_id for f in run.failures] == [trace]
    assert alice.cognition.get_log(trace, limit=1).trace.reflected_at_sequence == 0

    # The evaluator: the trigger is not acknowledged and comes back. (Carol's trace: she
    # runs no agent, so alice_bot's dream runs leave it out.)
    evaluated = "llm-faults-evaluated"
    carol.cognition.append_events(
        evaluated,
        [
            {
                "type": "query",
                "sequence": 1,
                "goal_id": "g1",
                "query": "portal login",
                "response": "",
                "source_ids": [record.id],
                "sources": [{"id": record.id, "task": record.task, "content": record.content}],
            }
        ],
    )
    assert carol.cognition.signal_trigger(evaluated, "goal_completion").published
    wait_until(lambda: scripted.calls["evaluate"] >= 2, 30, "the trigger's second delivery")
    assert carol.cognition.get_log(evaluated, types=["evaluation"]) == []
    assert len(carol.cognition.pending_evaluations(evaluated)) == 1

    # Integration fails while the rest recovers: the reflection waits, unconsumed.
    scripted.faulty = {"integrate"}
    run = wait_run(alice, alice.dream.run().run_id, timeout=60)
    assert run.counts["reflections_written"] == 1
    assert [f.phase for f in run.failures] == ["cross_trace_integrate"]
    assert alice.cognition.get_log(trace, limit=1).trace.unconsumed_reflections == 1
    # (the evaluation event is logged first, then its feedback applied)
    recovered = wait_until(
        lambda: alice.knowledge.get(record.id).eval.helpful == record.eval.helpful + 1,
        30,
        "the evaluator's feedback once the LLM answers",
    )
    assert len(carol.cognition.get_log(evaluated, types=["evaluation"])) == 1

    # Everything answers: the waiting work is done, once.
    scripted.faulty = set()
    run = wait_run(alice, alice.dream.run().run_id, timeout=60)
    assert (run.status, run.counts["reflections_consumed"]) == ("done", 1)
    assert alice.cognition.get_log(trace, limit=1).trace.unconsumed_reflections == 0
    assert [d.path for d in alice.dream.documents()] == ["notes.md"]
    assert alice.knowledge.search("portal", top_k=1).routed
    evolved = alice.knowledge.update(record.id, evolve_feedback="the cookie expires daily")
    assert evolved.content.startswith("evolved:")
    assert len(carol.cognition.get_log(evaluated, types=["evaluation"])) == 1
    assert alice.knowledge.get(record.id).eval.helpful == record.eval.helpful + 1

    called = sum(1 for p in PIPELINES if scripted.calls[p])
    figures(
        f"LLM {fault}: {called} of {len(PIPELINES)} pipelines met the fault and took "
        f"their degrade path, no work lost; search answered in "
        f"{slowest['search'] * 1000:.0f} ms, slim in {slowest['slim'] * 1000:.0f} ms; "
        f"the waiting evaluation done {recovered:.2f}s after the LLM recovered"
    )
    assert called == len(PIPELINES)
