"""`knowhub migrate-names`: data stored before agent and resource names had organisations
(all in one shared namespace, as tokens without an org still store them) moves into the
organisations the tokens file now gives its writers, and is found there as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import errors

from knowhub_server.cli import main as knowhub_cli
from tests.dream.dreaming import FAST, DreamLLM, message, wait_run
from tests.support.harness import Harness, write_tokens_file
from tests.support.openai_stub import OpenAIStub

SECRET = "curl-token-123"


def tenants(with_orgs: bool) -> dict[str, dict[str, Any]]:
    """Two users whose tokens list the same agent; with_orgs: in acme and globex."""
    users = {"alice": "acme", "bob": "globex"}
    principals = {
        name: {
            "user_id": name,
            "agent_id": "research_agent",
            **({"org_id": org} if with_orgs else {}),
        }
        for name, org in users.items()
    }
    return {**principals, "dream": {"user_id": "dreamsvc", "roles": ["dreamer"]}}


@pytest.fixture
def llm() -> Iterator[OpenAIStub]:
    stub = OpenAIStub().start()
    stub.responder = DreamLLM()
    yield stub
    stub.stop()


@pytest.fixture
def started() -> Iterator[list[Harness]]:
    """The hubs a test starts, stopped at its end whatever happened."""
    hubs: list[Harness] = []
    yield hubs
    for hub in hubs:
        hub.stop()


def start(hubs: list[Harness], data_dir: Path, tokens: Path, llm: OpenAIStub) -> Harness:
    hub = Harness(
        data_dir,
        tokens_file=tokens,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=10,
    ).start()
    hubs.append(hub)
    return hub


def write_before(hub: Harness) -> dict[str, str]:
    """What alice and bob stored in the shared namespace."""
    alice, bob = hub.client("alice"), hub.client("bob")
    alice.resources.save("tools/curl", "acme's curl", "curl -fsSL", secure_body=SECRET)
    bob.resources.save("tools/wget", "globex's wget", "wget -q")
    record = alice.knowledge.save(
        task="fetching release notes",
        content="use the curl tool",
        types=["tool"],
        scopes=["agent:research_agent"],
        resource_ids=["tools/curl"],
    )
    trace_id = "trace-before-orgs"
    alice.cognition.append_events(trace_id, [message(1, "fetch the notes")], task="fetch")
    assert wait_run(alice, alice.dream.run().run_id).status == "done"
    return {"knowledge": record.id, "trace": trace_id}


def test_data_stored_before_names_had_orgs_moves_into_its_writers_orgs(
    tmp_path: Path,
    llm: OpenAIStub,
    started: list[Harness],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in {**FAST, "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream"}.items():
        monkeypatch.setenv(name, value)
    data_dir = tmp_path / "data"
    before = start(
        started, data_dir, write_tokens_file(_directory(tmp_path / "v1"), tenants(False)), llm
    )
    stored = write_before(before)
    before.stop()

    orgs = write_tokens_file(_directory(tmp_path / "v2"), tenants(True))
    unmigrated = start(started, data_dir, orgs, llm)
    with pytest.raises(errors.NotFound):  # alice's id now names an acme resource
        unmigrated.client("alice").resources.get("tools/curl")
    unmigrated.stop()

    monkeypatch.setenv("KNOWHUB_TOKENS_FILE", str(orgs))
    assert knowhub_cli(["migrate-names", "--data-dir", str(data_dir)]) == 0
    report = capsys.readouterr().out
    assert "resources: 2 moved" in report
    assert "settle with --agent-org AGENT=ORG): research_agent" in report  # two orgs list it
    assert (
        knowhub_cli(
            ["migrate-names", "--data-dir", str(data_dir), "--agent-org", "research_agent=acme"]
        )
        == 0
    )
    assert "resources: 0 moved" in capsys.readouterr().out  # done already: nothing again

    after = start(started, data_dir, orgs, llm)
    alice, bob = after.client("alice"), after.client("bob")
    assert alice.resources.get("tools/curl", include_secure=True).secure_body == SECRET
    assert bob.resources.get("tools/wget").title == "globex's wget"
    for client, other in ((alice, "tools/wget"), (bob, "tools/curl")):
        with pytest.raises(errors.NotFound):
            client.resources.get(other)

    record = alice.knowledge.get(stored["knowledge"])
    assert (record.scopes, record.owner, record.resource_ids) == (
        ["agent:research_agent"],
        "agent:research_agent",
        ["tools/curl"],
    )
    [hit] = alice.knowledge.search("fetching release notes")
    assert hit.unavailable_resources == []
    with pytest.raises(errors.NotFound):  # globex's research_agent is another agent
        bob.knowledge.get(stored["knowledge"])

    assert [t.trace_id for t in alice.cognition.list_traces(agent_id="research_agent")] == [
        stored["trace"]
    ]
    assert bob.cognition.list_traces(agent_id="research_agent") == []
    [notes] = alice.dream.documents(include_content=True)
    assert notes.path == "notes.md" and stored["trace"] in notes.content
    assert list(bob.dream.documents()) == []


def test_without_a_tokens_file_there_is_nothing_to_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KNOWHUB_TOKENS_FILE", raising=False)
    assert knowhub_cli(["migrate-names", "--data-dir", str(tmp_path)]) == 1
    assert "KNOWHUB_TOKENS_FILE" in capsys.readouterr().err


def _directory(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
