"""Dream runs on traces built through cognition's RPCs, with the scripted LLM:
phase 1 reflects each trace, phase 2 folds the reflections into the agent's memory
documents; the plan validator; the LLM failing or answering garbage; whose traces a run
reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from knowhub import KnowHub

from tests.dream.dreaming import DreamLLM, message, new_agent, new_trace, plan, wait_run
from tests.support.harness import Harness
from tests.support.openai_stub import Failure
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


@pytest.fixture
def admin(dream_server: Harness) -> KnowHub:
    return dream_server.client("admin")


def agent_trace(client: KnowHub, agent: str, *events: dict[str, Any], task: str = "") -> str:
    trace_id = new_trace()
    client.cognition.append_events(trace_id, list(events), agent_id=agent, task=task)
    return trace_id


def reflections(client: KnowHub, trace_id: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in client.cognition.get_log(trace_id, types=["reflection"])]


def trace_of(client: KnowHub, trace_id: str) -> Any:
    return client.cognition.get_log(trace_id, limit=1).trace


# ---- Phase 1 and 2 ---------------------------------------------------------------------------


def test_a_run_reflects_each_trace_and_integrates_the_reflections(
    admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    first = agent_trace(
        admin,
        agent,
        message(1, "I prefer green tea"),
        {
            "type": "query",
            "sequence": 2,
            "goal_id": "g1",
            "query": "how to brew green tea",
            "response": "80 degrees",
            "source_ids": ["knowledge-tea"],
            "sources": [{"id": "knowledge-tea", "task": "brew tea", "content": "80C"}],
        },
        message(3, "brewed at 80 degrees", role="assistant"),
        task="make tea",
    )
    admin.cognition.submit_evaluation(
        first,
        evaluations=[
            {
                "query_sequence": 2,
                "assessments": [
                    {
                        "knowledge_id": "knowledge-tea",
                        "status": "helpful",
                        "reason": "right temperature",
                    }
                ],
            }
        ],
    )
    admin.cognition.save_pending(
        first,
        "brew green tea",
        "use water at 80 degrees",
        ["strategy"],
        sequence=3,
        scopes=["org:acme"],
    )
    second = agent_trace(admin, agent, message(1, "remind me at 9"), message(2, "ok"))

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert (run.status, run.reason, run.failures) == ("done", "", [])
    assert run.counts == {
        "traces_considered": 2,
        "traces_reflected": 2,
        "traces_failed": 0,
        "reflections_written": 2,
        "reflections_integrated": 2,
        "reflections_consumed": 2,
        "documents_created": 1,
        "documents_updated": 0,
        "llm_calls": 3,
    }
    assert run.requested_by == "user:root" and run.attempts == 1 and run.finished_at
    [reflected] = [p for p in dream_llm.prompts["reflect"] if first in p]
    for seen in (
        "make tea",
        "[1] user: I prefer green tea",
        "how to brew green tea",
        "knowledge-tea rated helpful: right temperature",
        "proposed to save knowledge",
        "use water at 80 degrees",
    ):
        assert seen in reflected
    for trace_id in (first, second):
        [reflection] = reflections(admin, trace_id)
        assert reflection["summary"] == f"what {trace_id} taught"
        assert reflection["consumed_at"]
        trace = trace_of(admin, trace_id)
        assert trace.reflected_at_sequence == trace.last_sequence
        assert trace.unconsumed_reflections == 0
    assert reflections(admin, first)[0]["sequence_range"] == [1, 3]
    [document] = admin.dream.documents(agent_id=agent, include_content=True)
    assert (document.path, document.revision, document.run_id) == ("notes.md", 1, run.run_id)
    assert f"what {first} taught" in document.content
    assert f"what {second} taught" in document.content


def test_a_second_run_reflects_only_what_is_new_and_keeps_the_replaced_revision(
    admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    trace_id = agent_trace(admin, agent, message(1, "call me Ann"))
    wait_run(admin, admin.dream.run(agent_id=agent).run_id)
    admin.cognition.append_events(trace_id, [message(2, "I moved to Lyon")])
    dream_llm.integrate = lambda prompt: plan(
        ("notes.md", "# Notes\nAnn lives in Lyon"), ("people/ann.md", "Ann")
    )

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert run.status == "done"
    assert (
        run.counts["reflections_written"],
        run.counts["documents_created"],
        run.counts["documents_updated"],
    ) == (1, 1, 1)
    assert [r["sequence_range"] for r in reflections(admin, trace_id)] == [[1, 1], [2, 2]]
    assert "[2] user: I moved to Lyon" in dream_llm.prompts["reflect"][-1]
    assert "I moved to Lyon" not in dream_llm.prompts["reflect"][0]
    assert "### notes.md (revision 1)" in dream_llm.prompts["integrate"][-1]
    document = admin.dream.document("notes.md", agent_id=agent)
    assert (document.revision, document.content) == (2, "# Notes\nAnn lives in Lyon")
    assert [r.revision for r in document.revisions] == [1]
    earlier = admin.dream.document("notes.md", agent_id=agent, revision=1)
    assert f"what {trace_id} taught" in earlier.content and earlier.revision == 1
    assert [d.path for d in admin.dream.documents(agent_id=agent)] == ["notes.md", "people/ann.md"]

    calls = len(dream_llm.prompts["reflect"]) + len(dream_llm.prompts["integrate"])
    idle = wait_run(admin, admin.dream.run(agent_id=agent).run_id)
    assert idle.status == "done" and idle.counts["llm_calls"] == 0
    assert len(dream_llm.prompts["reflect"]) + len(dream_llm.prompts["integrate"]) == calls


def test_phases_can_run_alone_and_a_run_can_name_its_traces(
    admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    chosen = agent_trace(admin, agent, message(1, "use metric units"))
    other = agent_trace(admin, agent, message(1, "prefer short answers"))

    run = wait_run(
        admin,
        admin.dream.run(agent_id=agent, trace_ids=[chosen], phases=["per_trace_reflect"]).run_id,
    )
    assert (run.status, run.trace_ids, run.phases) == ("done", [chosen], ["per_trace_reflect"])
    assert run.counts["reflections_written"] == 1 and run.counts["reflections_consumed"] == 0
    assert trace_of(admin, chosen).unconsumed_reflections == 1
    assert reflections(admin, other) == []
    assert dream_llm.prompts["integrate"] == []

    run = wait_run(
        admin, admin.dream.run(trace_ids=[chosen], phases=["cross_trace_integrate"]).run_id
    )
    assert run.agent_id == agent  # the traces' agent
    assert (run.status, run.counts["reflections_consumed"], run.counts["llm_calls"]) == (
        "done",
        1,
        1,
    )
    assert trace_of(admin, chosen).unconsumed_reflections == 0


# ---- The plan validator and the LLM's failures ----------------------------------------------


@pytest.mark.parametrize(
    "path, problem",
    [
        ("../bot-other/notes.md", "leaves the agent's memory namespace ('..')"),
        ("notes/../../secrets.md", "leaves the agent's memory namespace ('..')"),
        ("/etc/passwd", "is outside the agent's memory namespace (an absolute path)"),
        ("C:/notes.md", "is outside the agent's memory namespace (an absolute path)"),
        ("~/notes.md", "is outside the agent's memory namespace (an absolute path)"),
        (".hidden.md", "must not be empty or start with a dot"),
        ("notes//a.md", "must not be empty or start with a dot"),
    ],
)
def test_a_plan_with_a_path_outside_the_namespace_is_refused_whole(
    admin: KnowHub, dream_llm: DreamLLM, path: str, problem: str
) -> None:
    agent = new_agent()
    trace_id = agent_trace(admin, agent, message(1, "my name is Bo"))
    dream_llm.integrate = lambda prompt: plan(("fine.md", "kept?"), (path, "escape"))

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert run.status == "failed"
    [failure] = run.failures
    assert (failure.phase, failure.trace_id) == ("cross_trace_integrate", "")
    assert failure.reason.startswith("the plan was refused, nothing written: updates[1].path: ")
    assert problem in failure.reason
    assert run.reason.startswith("cross_trace_integrate failed for the agent: the plan was")
    assert list(admin.dream.documents(agent_id=agent)) == []
    assert run.counts["reflections_written"] == 1  # phase 1 stands
    assert run.counts["reflections_consumed"] == 0
    assert trace_of(admin, trace_id).unconsumed_reflections == 1


def test_every_rule_a_plan_breaks_is_reported(admin: KnowHub, dream_llm: DreamLLM) -> None:
    agent = new_agent()
    agent_trace(admin, agent, message(1, "hello"))
    dream_llm.integrate = lambda prompt: json.dumps(
        {
            "updates": [
                {"path": "a.md", "new_content": "x" * 20_001},
                {"path": "b.md", "new_content": " "},
                {"path": "a.md", "new_content": "again"},
                "not an object",
                {"path": 7},
            ]
        }
    )

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    reason = run.failures[0].reason
    for part in (
        "updates[0].new_content: 20001 characters; a document holds at most 20000",
        "updates[1].new_content: must be a non-empty string",
        "updates[2].path: 'a.md' is updated twice",
        "updates[3]: must be an object with path and new_content",
        "updates[4].path: must be a non-empty string",
    ):
        assert part in reason
    assert list(admin.dream.documents(agent_id=agent)) == []


@pytest.mark.parametrize(
    "reply, reason",
    [
        (Failure(500), "the LLM call failed"),
        ("I would rather not", "the LLM reply holds no JSON"),
        ('{"summary": ""}', 'the reflection reply has no "summary" text'),
    ],
)
def test_a_reflection_the_llm_fails_writes_nothing_for_that_trace(
    admin: KnowHub, dream_llm: DreamLLM, reply: Any, reason: str
) -> None:
    agent = new_agent()
    bad = agent_trace(admin, agent, message(1, "first"))
    good = agent_trace(admin, agent, message(1, "second"))
    default = dream_llm.reflect
    dream_llm.reflect = lambda trace, prompt: reply if trace == bad else default(trace, prompt)

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert run.status == "failed"
    [failure] = run.failures
    assert (failure.phase, failure.trace_id) == ("per_trace_reflect", bad)
    assert reason in failure.reason and reason in run.reason
    assert (run.counts["traces_reflected"], run.counts["traces_failed"]) == (1, 1)
    assert reflections(admin, bad) == []
    assert trace_of(admin, bad).reflected_at_sequence == 0
    [kept] = reflections(admin, good)  # the other trace went on, through phase 2
    assert kept["consumed_at"] and run.counts["reflections_consumed"] == 1


@pytest.mark.parametrize(
    "reply, reason",
    [
        (Failure(503), "the LLM call failed"),
        ("no plan today", "the LLM reply holds no JSON"),
        ('{"changes": []}', "the LLM's reply is not a plan"),
        ('["notes.md"]', "the LLM's reply is not a plan"),
    ],
)
def test_an_integration_the_llm_fails_writes_and_consumes_nothing(
    admin: KnowHub, dream_llm: DreamLLM, reply: Any, reason: str
) -> None:
    agent = new_agent()
    trace_id = agent_trace(admin, agent, message(1, "likes jazz"))
    dream_llm.integrate = lambda prompt: reply

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert run.status == "failed" and reason in run.failures[0].reason
    assert run.failures[0].phase == "cross_trace_integrate"
    assert list(admin.dream.documents(agent_id=agent)) == []
    assert trace_of(admin, trace_id).unconsumed_reflections == 1

    dream_llm.integrate = lambda prompt: plan(("music.md", "Likes jazz."))
    retried = wait_run(admin, admin.dream.run(agent_id=agent).run_id)
    assert retried.status == "done" and retried.counts["reflections_consumed"] == 1
    assert trace_of(admin, trace_id).unconsumed_reflections == 0


def test_an_empty_plan_consumes_the_reflections_and_writes_nothing(
    admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    trace_id = agent_trace(admin, agent, message(1, "nothing worth keeping"))
    dream_llm.integrate = lambda prompt: '```json\n{"updates": []}\n```'

    run = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    assert run.status == "done" and run.counts["reflections_consumed"] == 1
    assert list(admin.dream.documents(agent_id=agent)) == []
    assert trace_of(admin, trace_id).unconsumed_reflections == 0


# ---- Whose traces a run reads ---------------------------------------------------------------


def test_an_agents_run_reads_only_the_requesters_traces(
    dream_server: Harness, dream_llm: DreamLLM
) -> None:
    alice, dave = dream_server.client("alice"), dream_server.client("dave")
    admin = dream_server.client("admin")
    alices, daves = new_trace(), new_trace()
    alice.cognition.append_events(alices, [message(1, "alice's secret plan")])
    dave.cognition.append_events(daves, [message(1, "dave's secret plan")])
    assert trace_of(alice, alices).agent_id == trace_of(dave, daves).agent_id == "alice_bot"

    run = wait_run(alice, alice.dream.run().run_id)

    assert run.agent_id == "alice_bot" and run.requested_by == "user:alice"
    assert len(reflections(alice, alices)) == 1 and reflections(dave, daves) == []
    assert not any("dave's secret plan" in p for p in dream_llm.prompts["reflect"])
    assert not any("dave's secret plan" in p for p in dream_llm.prompts["integrate"])
    assert failure(lambda: dave.dream.get_run(run.run_id)) == (
        "NOT_FOUND",
        f"dream run {run.run_id!r} not found",
    )
    assert alice.dream.get_run(run.run_id) == admin.dream.get_run(run.run_id)
    everyone = wait_run(admin, admin.dream.run(agent_id="alice_bot").run_id)
    assert everyone.status == "done" and len(reflections(dave, daves)) == 1
