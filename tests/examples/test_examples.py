"""The examples of `examples/`, each run as a user runs it — the virtualenv's Python in
the folder where `knowhub up` runs — against the embedded hub. The model is the scripted
OpenAI-compatible endpoint of tests/support, both for the hub (KNOWHUB_LLM_BASE_URL) and
for the examples (OPENAI_BASE_URL); with KNOWHUB_EXAMPLES_OPENAI_BASE_URL (and
KNOWHUB_EXAMPLES_OPENAI_API_KEY, KNOWHUB_EXAMPLES_OPENAI_MODEL) set, they run against that
real endpoint as well."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.hub_process import HubProcess, run_python, running
from tests.support.openai_stub import OpenAIStub
from tests.support.scripted_model import respond

KNOWLEDGE_ID = re.compile(r"knowledge-\d{8}-[0-9a-f]+")


@dataclass
class Endpoint:
    base_url: str
    api_key: str
    model: str

    @property
    def scripted(self) -> bool:
        return self.model == "scripted"

    def for_examples(self) -> dict[str, str]:
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": self.api_key,
            "OPENAI_MODEL": self.model,
        }

    def for_the_hub(self) -> dict[str, str]:
        return {
            "KNOWHUB_LLM_BASE_URL": self.base_url,
            "KNOWHUB_LLM_API_KEY": self.api_key,
            "KNOWHUB_LLM_MODEL": self.model,
        }


def real_endpoint() -> Endpoint | None:
    base_url = os.environ.get("KNOWHUB_EXAMPLES_OPENAI_BASE_URL")
    if not base_url:
        return None
    return Endpoint(
        base_url,
        os.environ.get("KNOWHUB_EXAMPLES_OPENAI_API_KEY", "none"),
        os.environ.get("KNOWHUB_EXAMPLES_OPENAI_MODEL", "gpt-4o-mini"),
    )


@pytest.fixture(scope="module", params=["scripted", "real"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[Endpoint]:
    if request.param == "real":
        real = real_endpoint()
        if real is None:
            pytest.skip(
                "no real endpoint: set KNOWHUB_EXAMPLES_OPENAI_BASE_URL to run "
                "the examples against one"
            )
        yield real
        return
    stub = OpenAIStub().start()
    stub.responder = respond
    try:
        yield Endpoint(stub.base_url, "none", "scripted")
    finally:
        stub.stop()


@pytest.fixture(scope="module")
def hub(endpoint: Endpoint, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    # On ports of its own: the docs' hub, perhaps in another test worker, takes the defaults.
    with running(
        tmp_path_factory.mktemp("examples-hub"), endpoint.for_the_hub(), default_ports=False
    ) as hub:
        yield hub


def run_example(hub: HubProcess, endpoint: Endpoint, *args: str) -> str:
    done = run_python(hub, *args, env=endpoint.for_examples())
    assert done.returncode == 0, f"{args} exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_agent_loop_searches_the_hub_and_answers(hub: HubProcess, endpoint: Endpoint) -> None:
    out = run_example(hub, endpoint, "examples/agent_openai_tools.py", "How do I log in to site A?")
    assert "answer: " in out
    if endpoint.scripted:
        assert "tool knowledge_search(" in out
        answer = out.split("answer: ", 1)[1]
        assert KNOWLEDGE_ID.search(answer), out  # it cites the record the search found
        assert "undetected_chromedriver" in answer


def test_the_cognition_loop_evaluates_commits_and_dreams(
    hub: HubProcess, endpoint: Endpoint
) -> None:
    out = run_example(hub, endpoint, "examples/cognition_loop.py")
    assert "committed {'pending-" in out, out
    assert "dream run " in out
    if endpoint.scripted:
        assert re.search(r"evaluated knowledge-\S+ helpful applied", out), out
        assert "dream run done" in out, out
        assert "notes.md # Notes" in out, out  # the memory document the run wrote


def test_memory_remembers_and_the_historian_writes_events_and_a_profile(
    hub: HubProcess, endpoint: Endpoint
) -> None:
    out = run_example(hub, endpoint, "examples/memory.py")
    assert "historian job " in out
    assert "memos ['explained asyncio.gather']" in out, out
    assert "event " in out, out
    if endpoint.scripted:
        assert "event User 10001: started learning asyncio. absolute" in out, out
        assert "entity_id: " in out and "learning asyncio" in out, out  # the profile


def test_the_mcp_configuration_starts_a_server_a_client_can_use(
    hub: HubProcess, endpoint: Endpoint
) -> None:
    config = "examples/mcp/claude_desktop_config.json"
    if not hub.on_default_ports:  # another hub holds the default ports on this machine
        document = json.loads((hub.folder / config).read_text(encoding="utf-8"))
        document["mcpServers"]["knowhub"]["env"]["KNOWHUB_TARGET"] = hub.target
        config = "mcp_config.json"
        (hub.folder / config).write_text(json.dumps(document), encoding="utf-8")
    # as its docstring says: in the folder where the hub runs, the configuration as shipped
    out = run_example(hub, endpoint, "examples/mcp/use_the_tools.py", config)
    tools = out.split("tools: ", 1)[1].splitlines()[0].split(", ")
    assert {"knowledge_search", "knowledge_save", "resource_get"} <= set(tools)
    saved = re.search(r"saved: (knowledge-\S+)", out)
    assert saved, out
    assert saved.group(1) in out.split("found: ", 1)[1], out


def test_every_example_is_tested() -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    tested = Path(__file__).read_text(encoding="utf-8")
    for example in examples.rglob("*.py"):
        assert f"examples/{example.relative_to(examples).as_posix()}" in tested, example


@pytest.mark.parametrize(
    "example", ["examples/agent_openai_tools.py", "examples/cognition_loop.py"]
)
def test_an_example_without_a_model_says_what_to_set(hub: HubProcess, example: str) -> None:
    """Run with no endpoint configured (examples/agent_model.py), an example says in one line
    what to set, before it writes anything to the hub."""
    done = run_python(hub, example, env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "OPENAI_BASE_URL" in done.stderr and done.stdout == ""
