"""Helpers of the dream run tests: the tokens (with the dream service's), settings, a
scripted dream LLM, traces built through cognition's RPCs, and waiting for runs."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knowhub import DreamRun, KnowHub

from knowhub_server.dream.runs import prompts
from tests.dream.support import wait_until
from tests.support.harness import write_tokens_file
from tests.support.openai_stub import Failure

# The dream service's token (dreamer and evaluator, in acme) and dave, a second user of
# alice's agent.
DREAM_TOKENS = [
    {
        "token": "token-dream",
        "user_id": "dreamsvc",
        "org_id": "acme",
        "roles": ["dreamer", "evaluator"],
    },
    {"token": "token-dave", "user_id": "dave", "agent_id": "alice_bot", "org_id": "acme"},
]
FAST = {
    "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream",
    "KNOWHUB_DREAM_POLL_INTERVAL_SECONDS": "0.05",
    "KNOWHUB_DREAM_SCHEDULER_INTERVAL_SECONDS": "0.05",
    "KNOWHUB_HISTORIAN_WORKERS": "0",
}


def write_dream_tokens(directory: Path) -> Path:
    path = write_tokens_file(directory)
    document = json.loads(path.read_text())
    document["tokens"] += DREAM_TOKENS
    path.write_text(json.dumps(document))
    return path


def new_agent() -> str:
    return f"bot-{uuid.uuid4().hex[:10]}"


def new_trace() -> str:
    return f"trace-{uuid.uuid4().hex[:12]}"


def message(sequence: int, content: str, role: str = "user") -> dict[str, Any]:
    return {"type": "message", "sequence": sequence, "role": role, "content": content}


def wait_run(client: KnowHub, run_id: str, timeout: float = 30.0) -> DreamRun:
    found: list[DreamRun] = []

    def finished() -> bool:
        found[:] = [client.dream.get_run(run_id)]
        return found[0].finished

    wait_until(finished, timeout, f"run {run_id} to finish")
    return found[0]


def system_of(request: dict[str, Any]) -> str:
    return request["messages"][0]["content"]


def prompt_of(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


Reply = str | Failure


class DreamLLM:
    """The scripted LLM's answers by kind of request: reflections (by trace), plans and
    evaluations, each a fixed reply or a function of the prompt. Records the prompts."""

    def __init__(self) -> None:
        self.reflect: Callable[[str, str], Reply] = lambda trace, prompt: json.dumps(
            {"summary": f"what {trace} taught"}
        )
        self.integrate: Callable[[str], Reply] = lambda prompt: json.dumps(
            {
                "updates": [
                    {"path": "notes.md", "new_content": "# Notes\n" + _reflection_lines(prompt)}
                ]
            }
        )
        self.evaluate: Callable[[str], Reply] = lambda prompt: Failure(500)
        self.prompts: dict[str, list[str]] = {"reflect": [], "integrate": [], "evaluate": []}
        self.gate: threading.Event | None = None  # reflections wait for it when set

    def __call__(self, request: dict[str, Any]) -> Reply:
        system, prompt = system_of(request), prompt_of(request)
        if system == prompts.REFLECT_SYSTEM:
            self.prompts["reflect"].append(prompt)
            if self.gate is not None:
                self.gate.wait(30)
            trace = re.search(r"^Trace: (\S+)", prompt, re.MULTILINE)
            return self.reflect(trace.group(1) if trace else "", prompt)
        if system == prompts.INTEGRATE_SYSTEM:
            self.prompts["integrate"].append(prompt)
            return self.integrate(prompt)
        self.prompts["evaluate"].append(prompt)
        return self.evaluate(prompt)


def _reflection_lines(prompt: str) -> str:
    return "\n".join(line for line in prompt.splitlines() if line.startswith("- trace "))


def plan(*updates: tuple[str, str]) -> str:
    return json.dumps({"updates": [{"path": p, "new_content": c} for p, c in updates]})
