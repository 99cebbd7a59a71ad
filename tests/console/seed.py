"""The data the console tests look at, saved through the SDK into a real hub: knowledge
with helpful and harmful cases and an evolved version, a resource with a secret, a trace
with events and pending extractions, an agent runtime's trace (tests/support/
runtime_trace.py), a dream run, a schedule, a profile with revisions and a failed
historian job."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from knowhub import KnowHub

from knowhub_server.knowledge import prompts as knowledge_prompts
from tests.dream.dreaming import DreamLLM, message, wait_run
from tests.dream.support import (
    RECONCILE,
    REWRITE,
    Queue,
    decide,
    private_context,
    profile_update,
    prompt_of,
    rewrite,
    tool_of,
    wait_until,
)
from tests.support.openai_stub import ToolCalls
from tests.support.runtime_trace import append_runtime_trace

SECRET = "hunter2-console-secret"
TRACE = "trace-console-1"
RUNTIME_TRACE = "trace-console-runtime"
EVOLVED = "Open the staging console with the shared login; rotate it after use."
ORIGINAL = "Open the staging console with the shared login."
ANSWER = "Log in with the shared login, then rotate it."


class ConsoleLLM:
    """The scripted LLM for every service: knowledge evolve and ask, the historian's rewrites,
    decisions (queued; each new fact an add when none is) and profile merges (queued), and
    dream reflections and plans."""

    def __init__(self) -> None:
        self.dream = DreamLLM()
        self.merges: list[ToolCalls] = []
        self.decisions: list[ToolCalls] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        system = request["messages"][0]["content"]
        if system == knowledge_prompts.EVOLVE_SYSTEM:
            return json.dumps({"content": EVOLVED})
        if system == knowledge_prompts.ASK_SYSTEM["en"]:  # cite the first record given
            cited = re.search(r"^\[([^\]]+)\]", request["messages"][1]["content"], re.M)
            return f"{ANSWER} [{cited.group(1) if cited else 'none'}]"
        if request.get("tools"):
            if tool_of(request) == REWRITE:
                observation = prompt_of(request).split("Observation to rewrite:\n", 1)[1]
                return rewrite(observation.split("\n\n", 1)[0])
            if tool_of(request) == RECONCILE:
                return self.decisions.pop(0) if self.decisions else decide("add")
            return self.merges.pop(0) if self.merges else ToolCalls([])
        return self.dream(request)


@dataclass
class Seeded:
    knowledge_id: str
    resource_id: str
    trace_id: str
    runtime_trace_id: str
    extraction_ids: list[str]
    run_id: str
    schedule_id: str
    failed_job_count: int


def seed(alice: KnowHub, llm: ConsoleLLM, queue: Queue) -> Seeded:
    resource = alice.resources.save(
        "creds/console/staging",
        "Staging console login",
        "user: deploy-bot on https://staging.example",
        secure_body=SECRET,
        content_type="credential",
    )
    record = alice.knowledge.save(
        "log in to the staging console", ORIGINAL, ["tool"], resource_ids=[resource.id], score=4
    )
    for number, (outcome, helpful) in enumerate(
        (("logged in first try", True), ("login expired", False), ("logged in again", True))
    ):
        # Each from a deploy of its own: a user's cases count once per trace.
        case = {
            "task": "deploy to staging",
            "outcome": outcome,
            "reason": f"because {outcome}",
            "trace_id": f"trace-console-deploy-{number}",
        }
        alice.knowledge.update(
            record.id, **{"add_helpful_case" if helpful else "add_harmful_case": case}
        )
    alice.knowledge.update(record.id, evolve_feedback="say to rotate the login")

    trace_events(alice, record.id)
    append_runtime_trace(alice, RUNTIME_TRACE)
    extraction_ids = [
        alice.cognition.save_pending(
            TRACE, task, content, ["strategy"], sequence=4, goal_id="g1"
        ).extraction.extraction_id
        for task, content in (
            ("deploy on fridays", "Deploy before noon on Fridays; nobody watches later."),
            ("name release branches", "Name release branches release/YYYY-MM-DD."),
            ("retry flaky tests", "Retry a flaky test five times before reporting it."),
        )
    ]

    for summary, said in (("Likes tea.", "tea"), ("Likes green tea, no sugar.", "green tea")):
        llm.merges.append(ToolCalls([profile_update("user", "10001", summary, name="Null")]))
        alice.memory.remember("", [f"User 10001 talked about {said}"], context=private_context())
        queue.wait_drained()
    queue.client.xadd(queue.jobs, {"garbage": "not a job"})
    wait_until(lambda: queue.failed_count() == 1, what="the failed job")

    run = alice.dream.run(agent_id="alice_bot", trace_ids=[TRACE])
    wait_run(alice, run.run_id)
    schedule = alice.dream.schedule(every_minutes=600, agent_id="alice_bot")
    return Seeded(
        record.id,
        resource.id,
        TRACE,
        RUNTIME_TRACE,
        extraction_ids,
        run.run_id,
        schedule.schedule_id,
        queue.failed_count(),
    )


def trace_events(alice: KnowHub, knowledge_id: str) -> None:
    alice.cognition.append_events(
        TRACE,
        [
            message(1, "Deploy the console build to staging"),
            {"type": "plan_evolution", "plan_version": 1, "diff_summary": "build, then deploy"},
            {
                "type": "memory_read",
                "memory_type": "long_term",
                "key_or_scope": "deploy:staging",
                "summary": "read the staging deploy notes",
                "step_index": 2,
            },
            {
                "type": "query",
                "sequence": 2,
                "goal_id": "g1",
                "query": "how to log in to staging",
                "response": "use the shared login",
                "source_ids": [knowledge_id],
            },
            message(3, "logged in with the shared login", role="tool"),
            {
                "type": "memory_write",
                "memory_type": "working",
                "key_or_scope": "deploy:status",
                "summary": "staging login worked",
                "step_index": 3,
            },
            {"type": "plan_evolution", "plan_version": 2, "diff_summary": "skip the build, reuse"},
            message(4, "Deployed.", role="assistant"),
        ],
        task="deploy the console build",
    )
    gone = alice.knowledge.save("log in to the old staging", "use the old VPN", ["tool"]).id
    alice.cognition.append_events(
        TRACE,
        [
            {
                "type": "query",
                "sequence": 5,
                "goal_id": "g1",
                "query": "old staging login",
                "source_ids": [gone],
            }
        ],
    )
    alice.knowledge.delete(gone)  # its verdict below cannot land: a feedback_refused event
    alice.cognition.submit_evaluation(
        TRACE,
        evaluations=[
            {
                "query_sequence": 2,
                "assessments": [
                    {
                        "knowledge_id": knowledge_id,
                        "status": "helpful",
                        "reason": "the login worked",
                    }
                ],
            },
            {
                "query_sequence": 5,
                "assessments": [
                    {"knowledge_id": gone, "status": "helpful", "reason": "it was right"}
                ],
            },
        ],
        trigger="task_completion",
    )
