"""Forgetting a subject: one call erases what every service holds about a user or an
agent, answers counts per service, is safe to repeat, leaves everyone else's data, and,
once the stores are compacted, leaves none of the subject's text in the data directory.
Principals: tests/support/harness.py (carol and alice of acme, bob of globex, admin)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub, errors

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.redis_store import connect
from knowhub_server.common.storage.vectors import HybridFusion
from knowhub_server.dream.memory.domain import Profile, ProfileRecord
from knowhub_server.dream.memory.store import MemoryVectors, ProfileStore
from knowhub_server.dream.runs.domain import DocumentUpdate
from knowhub_server.dream.runs.store import DreamStore
from tests.dream.dreaming import write_dream_tokens
from tests.dream.support import FAST_HISTORIAN, private_context, wait_until
from tests.support.harness import Harness

CAROLS = "xylocarpa"  # a word only carol's data holds
ALICES = "quillwort"  # a word only alice's data holds


def carols_data(carol: KnowHub) -> str:
    """Something about carol in every service."""
    kept = carol.knowledge.save(
        f"{CAROLS} onboarding", f"carol's {CAROLS} checklist", types=["plan"]
    )
    deleted = carol.knowledge.save(
        f"{CAROLS} draft", f"an old {CAROLS} draft", types=["plan"], scopes=["user:carol"]
    )
    carol.knowledge.delete(deleted.id)
    carol.knowledge.edit(kept.id, content=f"carol's {CAROLS} checklist, v2")
    carol.resources.save(
        f"notes/{CAROLS}", f"{CAROLS} notes", f"the {CAROLS} body", secure_body=f"{CAROLS} secret"
    )
    carol.cognition.append_events(
        "trace-carol",
        [{"type": "message", "sequence": 1, "role": "user", "content": f"{CAROLS} question"}],
    )
    job_id = carol.memory.remember(
        f"{CAROLS} memo", [f"carol keeps a {CAROLS} garden"], context=private_context("carol")
    ).job_id
    carol.dream.schedule(60, agent_id="carol_bot")
    return job_id


def alices_data(alice: KnowHub) -> str:
    record = alice.knowledge.save(f"{ALICES} setup", f"alice's {ALICES} steps", types=["plan"])
    alice.memory.remember(
        f"{ALICES} memo", [f"alice grows {ALICES}"], context=private_context("alice")
    )
    return record.id


def carol_is_gone(hub: Harness) -> None:
    carol, admin = hub.client("carol"), hub.client("admin")
    assert [h for h in carol.knowledge.search(CAROLS, min_score=1)] == []
    assert [k for k in carol.knowledge.list(limit=100) if k.owner == "user:carol"] == []
    assert [r for r in carol.resources.list() if r.owner == "user:carol"] == []
    with pytest.raises(errors.NotFound):
        carol.resources.get(f"notes/{CAROLS}")
    assert list(carol.cognition.list_traces()) == []
    with pytest.raises(errors.NotFound):
        carol.cognition.get_log("trace-carol")
    assert carol.memory.search_events(CAROLS) == []
    assert admin.memory.search_events(CAROLS) == []
    assert list(carol.memory.recent_memos(user_id="carol")) == []
    assert list(carol.dream.schedules()) == []


def grep(directory: Path, word: str) -> list[str]:
    found = subprocess.run(["grep", "-rla", word, str(directory)], capture_output=True, text=True)
    return found.stdout.split()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """A hub whose dream service has its token (so schedules can be made) and whose
    historian polls often."""
    for name, value in {**FAST_HISTORIAN, "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream"}.items():
        monkeypatch.setenv(name, value)
    harness = Harness(tmp_path / "data", tokens_file=write_dream_tokens(tmp_path)).start()
    yield harness
    harness.stop()


def test_a_user_forgets_itself_everywhere(hub: Harness) -> None:
    carol, alice = hub.client("carol"), hub.client("alice")
    carols_job = carols_data(carol)
    alices_id = alices_data(alice)
    wait_until(
        lambda: carol.memory.search_events(CAROLS) and alice.memory.search_events(ALICES),
        what="the historian",
    )

    erasure = carol.admin.forget("user:carol")

    assert erasure.counts == {
        "knowledge": {"knowledge": 1, "deleted_knowledge": 1},
        "resource": {"resources": 1, "versions": 1, "audit_tombstones": 1},
        "cognition": {"traces": 1, "events": 1, "extractions": 0},
        "dream": {
            "memos": 1,
            "jobs": 0,
            "events": 2,
            "profiles": 0,
            "documents": 0,
            "schedules": 1,
        },
    }
    carol_is_gone(hub)
    with pytest.raises(errors.NotFound):  # the job's status (its decisions) went too
        hub.client("admin").memory.job(carols_job)
    # Everyone else's data stays.
    assert alice.knowledge.get(alices_id).task == f"{ALICES} setup"
    assert alice.memory.search_events(ALICES)
    assert [m.text for m in alice.memory.recent_memos(user_id="alice")] == [f"{ALICES} memo"]

    # Safe to repeat: nothing more to erase.
    again = carol.admin.forget("user:carol")
    assert again.total == 0 and set(again.counts) == {"knowledge", "resource", "cognition", "dream"}

    # Nothing of carol's text stays on disk once the stores are compacted; alice's does.
    hub.stop()
    assert knowhub_cli(["compact", "--data-dir", str(hub.data_dir)]) == 0
    assert grep(hub.data_dir, CAROLS) == []
    assert grep(hub.data_dir, ALICES)
    hub.start()
    carol_is_gone(hub)
    assert hub.client("alice").knowledge.get(alices_id).content == f"alice's {ALICES} steps"


def test_only_an_admin_forgets_someone_else(hub: Harness) -> None:
    carol, bob, admin = hub.client("carol"), hub.client("bob"), hub.client("admin")
    record = bob.knowledge.save("bob's task", "bob's content", types=["plan"], owner="user:bob")
    with pytest.raises(errors.PermissionDenied, match="subject"):
        carol.admin.forget("user:bob")
    with pytest.raises(errors.PermissionDenied, match="subject"):
        carol.admin.forget("agent:carol_bot")  # an agent is forgotten by an admin
    assert bob.knowledge.get(record.id).id == record.id
    for wrong in ("", "bob", "team:t1", "user:", "agent:a b"):
        with pytest.raises(errors.InvalidArgument, match="subject"):
            admin.admin.forget(wrong)
    erased = admin.admin.forget("user:bob")
    assert erased.counts["knowledge"] == {"knowledge": 1, "deleted_knowledge": 0}
    with pytest.raises(errors.NotFound):
        bob.knowledge.get(record.id)


def test_an_admin_forgets_an_agent(hub: Harness) -> None:
    alice, admin = hub.client("alice"), hub.client("admin")
    bots = alice.knowledge.save("bot task", "what alice_bot learned", types=["tool"])
    own = alice.knowledge.save(
        "alice task", "what alice learned", types=["tool"], owner="user:alice"
    )
    alice.dream.schedule(30)  # for alice_bot, her token's agent
    alice.cognition.append_events(
        "trace-bot", [{"type": "message", "sequence": 1, "role": "user", "content": "hello"}]
    )

    erased = admin.admin.forget("agent:alice_bot")

    assert erased.counts["knowledge"]["knowledge"] == 1
    assert erased.counts["dream"]["schedules"] == 1
    assert erased.counts["cognition"]["traces"] == 1
    with pytest.raises(errors.NotFound):
        alice.knowledge.get(bots.id)
    assert alice.knowledge.get(own.id).id == own.id
    assert list(alice.dream.schedules()) == []


def test_the_command_line_manages_knowledge_and_forgets(
    hub: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    carol = hub.client("carol")
    record = carol.knowledge.save("renew the cert", "use certbot", types=["tool"])
    as_carol = ["--target", hub.address, "--token", "token-carol"]

    assert (
        knowhub_cli(
            [
                "knowledge",
                "edit",
                record.id,
                "--content",
                "use certbot renew",
                "--tag",
                "domain=ops",
                "--note",
                "the subcommand",
                *as_carol,
            ]
        )
        == 0
    )
    assert f"{record.id} edited" in capsys.readouterr().out
    assert carol.knowledge.get(record.id).tags == {"domain": "ops"}
    assert knowhub_cli(["knowledge", "versions", record.id, *as_carol]) == 0
    assert "edit of content, tags by user:carol: the subcommand" in capsys.readouterr().out
    assert knowhub_cli(["knowledge", "delete", record.id, *as_carol]) == 0
    assert "knowhub knowledge undelete" in capsys.readouterr().out
    assert knowhub_cli(["knowledge", "undelete", record.id, *as_carol]) == 0
    assert carol.knowledge.get(record.id).content == "use certbot renew"
    assert knowhub_cli(["knowledge", "edit", record.id, "--type", "recipe", *as_carol]) == 1
    assert "knowledge.types[0]" in capsys.readouterr().err

    with pytest.raises(SystemExit):  # --yes is required
        knowhub_cli(["forget", "user:carol", *as_carol])
    assert knowhub_cli(["forget", "user:alice", "--yes", *as_carol]) == 1
    assert "PERMISSION_DENIED" in capsys.readouterr().err
    assert knowhub_cli(["forget", "user:carol", "--yes", *as_carol]) == 0
    out = capsys.readouterr().out
    assert "knowledge: 0 deleted_knowledge, 1 knowledge" in out and "1 items erased" in out
    with pytest.raises(errors.NotFound):
        carol.knowledge.get(record.id)


def test_forgetting_an_agent_erases_its_memory_documents(redis_url: str, redis_prefix: str) -> None:
    """The documents dream integration wrote, with their kept revisions and the outbox;
    another agent's stay."""
    store = DreamStore(lambda: connect(redis_url), redis_prefix)
    for agent in ("night_crawler", "day_crawler"):
        for revision in range(2):
            seen = store.documents(agent)
            store.apply_plan(
                agent,
                f"run-{revision}",
                [
                    DocumentUpdate("MEMORY.md", f"{agent} notes, revision {revision}"),
                    DocumentUpdate("people/bob.md", f"bob, as {agent} knows him"),
                ],
                seen,
                at=1_000.0 + revision,
                keep=5,
                outbox_field=f"run-{revision}:0",
                outbox={"trace-1": ["1-0"]},
            )
    assert store.revisions("night_crawler", "MEMORY.md")

    assert store.erase_documents("night_crawler") == 2
    assert store.documents("night_crawler") == {}
    assert store.revisions("night_crawler", "MEMORY.md") == []
    assert store.outbox("night_crawler") == {}
    assert set(store.documents("day_crawler")) == {"MEMORY.md", "people/bob.md"}
    assert store.erase_documents("night_crawler") == 0


def test_forgetting_a_user_erases_its_profiles_in_the_scopes_asked(tmp_path: Path) -> None:
    """A user's profile in every scope (an admin's forget) or in the caller's scopes (its
    own); a group's profile and another user's stay."""
    vectors = EdgeStore(tmp_path / "qdrant")
    memory = MemoryVectors(None)
    profiles = ProfileStore(vectors, memory, HybridFusion(10, 0.5))

    def profile(scope: str, entity_type: str, entity_id: str) -> ProfileRecord:
        return ProfileRecord(
            Profile(
                scope,
                entity_type,
                entity_id,
                entity_id,
                ["tea"],
                f"{entity_id} likes green tea",
                1.0,
                "e-1",
            )
        )

    for scope in ("org:acme", "org:globex", "user:carol"):
        assert profiles.create(profile(scope, "user", "carol"))
    assert profiles.create(profile("org:acme", "user", "alice"))
    assert profiles.create(profile("org:acme", "group", "carol"))  # a group named so

    assert profiles.erase_of(frozenset({"carol"}), frozenset({"org:acme", "user:carol"})) == 2
    assert profiles.get("org:globex", "user", "carol") is not None
    assert profiles.erase_of(frozenset({"carol"}), None) == 1
    assert [profiles.get(s, "user", "carol") for s in ("org:acme", "org:globex")] == [None] * 2
    assert profiles.get("org:acme", "user", "alice") is not None
    assert profiles.get("org:acme", "group", "carol") is not None
    vectors.close()
