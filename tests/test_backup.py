"""`knowhub backup` of a running hub and `knowhub restore` into an empty data directory:
after the round trip every record, secret, trace, memory event, profile and dream run
reads back the same; the refusals are one line and change nothing."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub

from knowhub_server.cli import main
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import Where
from tests.dream.dreaming import DreamLLM, message, wait_run, write_dream_tokens
from tests.dream.support import (
    PROFILE,
    REWRITE,
    group_context,
    profile_update,
    prompt_of,
    rewrite,
    tool_of,
    wait_until,
)
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub, ToolCalls
from tests.test_vector_store_contract import SCHEMA, record

ENV = {
    "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream",
    "KNOWHUB_DREAM_POLL_INTERVAL_SECONDS": "0.05",
    "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
}


class HubLLM(DreamLLM):
    """Dream runs as DreamLLM scripts them; memory rewrites pass the observation through
    and each profile merge writes the user's profile."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if not request.get("tools"):
            return super().__call__(request)
        if tool_of(request) == REWRITE:
            observation = prompt_of(request).split("Observation to rewrite:\n", 1)[1]
            return rewrite(observation.split("\n\n", 1)[0])
        assert tool_of(request) == PROFILE
        return ToolCalls(
            [
                profile_update(
                    "user", "10001", "Null writes bots in Python.", name="Null", tags=["Python"]
                )
            ]
        )


@pytest.fixture
def hub_settings(
    tmp_path: Path, llm: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    llm.responder = HubLLM()
    return {
        "tokens_file": write_dream_tokens(tmp_path),
        "llm_base_url": llm.base_url,
        "llm_max_retries": 0,
        "llm_timeout_seconds": 10,
    }


def fill(kh: KnowHub) -> None:
    """A bit of everything a hub keeps."""
    for n in range(3):
        kh.knowledge.save(
            task=f"log in to site {n}",
            content=f"use account {n}",
            types=["tool"],
            scopes=["org:acme"],
        )
    kh.resources.save(
        "credentials/site_a",
        "site A account",
        "100 logins a day",
        secure_body="user@example.com / s3cret",
        content_type="credential",
        scopes=["org:acme"],
    )
    kh.resources.save(
        "credentials/site_a",
        "site A account",
        "v2",
        secure_body="user@example.com / n3w",
        content_type="credential",
        scopes=["org:acme"],
    )
    kh.cognition.append_events(
        "trace-1",
        [message(1, "I prefer green tea"), message(2, "noted", role="assistant")],
        agent_id="alice_bot",
        task="make tea",
    )
    kh.memory.remember("", ["Null (QQ 10001) writes bots in Python"], context=group_context())
    wait_until(
        lambda: (
            kh.memory.get_profile("user", "10001").revision == 1 if _profile_exists(kh) else False
        ),
        what="the profile merge",
    )
    run = wait_run(kh, kh.dream.run(agent_id="alice_bot").run_id)
    assert run.status == "done", run


def _profile_exists(kh: KnowHub) -> bool:
    from knowhub import errors

    try:
        kh.memory.get_profile("user", "10001")
    except errors.NotFound:
        return False
    return True


def state(kh: KnowHub) -> dict[str, Any]:
    """What a caller reads back: every kind of thing `fill` made."""
    secret = kh.resources.get("credentials/site_a", include_secure=True)
    old = kh.resources.get("credentials/site_a", include_secure=True, version=1)
    return {
        "knowledge": sorted(
            (k.id, k.task, k.content, k.created_at) for k in kh.knowledge.list(limit=100)
        ),
        # ties may come in another order from rebuilt shards: compare the scores
        "search": {
            h.knowledge.id: round(h.relevance, 6) for h in kh.knowledge.search("site 1 account")
        },
        "secrets": (secret.secure_body, secret.version, old.secure_body),
        "versions": [v.version for v in kh.resources.versions("credentials/site_a")],
        "audit": list(kh.resources.audit_events(resource_id="credentials/site_a")),
        "trace": [e.to_dict() for e in kh.cognition.get_log("trace-1")],
        "traces": [t.trace_id for t in kh.cognition.list_traces()],
        "memory_events": [
            h.event for h in kh.memory.search_events("Python bots", target_group_id="20002")
        ],
        "memos": kh.memory.recent_memos(user_id="10001", group_id="20002"),
        "profile": kh.memory.get_profile("user", "10001"),
        "runs": list(kh.dream.list_runs()),
        "documents": list(kh.dream.documents(agent_id="alice_bot", include_content=True)),
    }


def test_a_backup_of_a_running_hub_restores_every_kind_of_data(
    tmp_path: Path, hub_settings: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    hub = Harness(tmp_path / "hub", **hub_settings).start()
    try:
        admin = hub.client("admin")
        fill(admin)
        before = state(admin)
        backup = tmp_path / "backup"
        assert (
            main(["backup", "--to", str(backup), "--target", hub.address, "--token", "token-admin"])
            == 0
        )
    finally:
        hub.stop()
    assert f"backup written to {backup}: 3 knowledge" in capsys.readouterr().out
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["versions"]["redis"] and manifest["files"] == ["keys/master-keys.json"]

    restored = tmp_path / "restored"
    assert main(["restore", "--from", str(backup), "--data-dir", str(restored)]) == 0
    assert f"restored {backup} into {restored}" in capsys.readouterr().out
    again = Harness(restored, **hub_settings).start()
    try:
        after = state(again.client("admin"))
    finally:
        again.stop()
    assert before["secrets"] == ("user@example.com / n3w", 2, "user@example.com / s3cret")
    assert len(before["knowledge"]) == 3 and before["trace"] and before["memory_events"]
    assert before["runs"] and before["documents"] and len(before["search"]) == 3
    # the restored audit log goes on: newest first, the two reads `state` itself made
    audit = after.pop("audit")
    assert [e.action for e in audit[:2]] == ["read_secure", "read_secure"]
    assert audit[2:] == before.pop("audit")
    assert after == before


def test_backup_refusals(
    tmp_path: Path, hub_settings: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    hub = Harness(tmp_path / "hub", **hub_settings).start()
    taken = tmp_path / "taken"
    (taken / "x").mkdir(parents=True)
    try:
        assert (
            main(
                [
                    "backup",
                    "--to",
                    str(tmp_path / "b"),
                    "--target",
                    hub.address,
                    "--token",
                    "token-alice",
                ]
            )
            == 1
        )
        assert "PERMISSION_DENIED: CreateBackup needs the admin role" in capsys.readouterr().err
        assert (
            main(["backup", "--to", str(taken), "--target", hub.address, "--token", "token-admin"])
            == 1
        )
        assert (
            f"INVALID_ARGUMENT: destination: {taken} exists: give a new directory, "
            "the backup creates it" in capsys.readouterr().err
        )
        assert not (tmp_path / "b").exists() and sorted(taken.iterdir()) == [taken / "x"]
    finally:
        hub.stop()


def test_restore_refuses_a_data_dir_in_use_or_not_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup"
    backup.mkdir()
    (backup / "manifest.json").write_text(json.dumps({"format": 99}))
    assert main(["restore", "--from", str(backup), "--data-dir", str(tmp_path / "d")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"knowhub: {backup} is a backup of format 99; this version restores format 1"
    )
    assert not (tmp_path / "d").exists()

    (backup / "manifest.json").write_text(json.dumps({"format": 1}))
    full = tmp_path / "full"
    (full / "qdrant").mkdir(parents=True)
    assert main(["restore", "--from", str(backup), "--data-dir", str(full)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"knowhub: {full} is not empty: restore into a new or empty data directory (--data-dir)"
    )
    assert [p.name for p in full.iterdir()] == ["qdrant"]


def test_writes_wait_while_a_backup_holds_the_gate_and_reads_go_on(tmp_path: Path) -> None:
    """What makes a backup one instant's: the store's writes wait for the copy."""
    store = EdgeStore(tmp_path / "qdrant")
    things = store.open(SCHEMA)
    written = threading.Event()

    def write() -> None:
        things.put([record("late", "written during the backup")])
        things.delete(["late"])
        written.set()

    try:
        with store.gate.closed():
            writer = threading.Thread(target=write)
            writer.start()
            assert not written.wait(0.3)
            assert things.count(Where()) == 0  # reads answer meanwhile
        assert written.wait(10)
        writer.join()
    finally:
        store.close()


def test_a_failed_restore_leaves_no_half_hub(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup"
    (backup / "collections").mkdir(parents=True)
    schema = {
        "name": "things",
        "dense_dim": None,
        "embedding_model": None,
        "keyword_fields": [],
        "integer_fields": [],
        "float_fields": [],
        "bulk_fields": [],
    }
    (backup / "manifest.json").write_text(
        json.dumps(
            {
                "format": 1,
                "collections": [{"name": "things", "schema": schema, "records": 2}],
                "redis": {"prefix": "knowhub:", "keys": 0},
                "files": [],
            }
        )
    )
    (backup / "collections" / "things.jsonl").write_text(
        json.dumps({"key": "a", "version": 1, "payload": {}, "vectors": {}}) + "\n"
    )
    (backup / "redis.jsonl").write_text("")
    empty = tmp_path / "empty"
    empty.mkdir()
    for data_dir in (tmp_path / "new", empty):
        assert main(["restore", "--from", str(backup), "--data-dir", str(data_dir)]) == 1
        assert capsys.readouterr().err.splitlines()[-1] == (
            "knowhub: collection things: 1 records restored, the backup holds 2"
        )
    assert not (tmp_path / "new").exists() and list(empty.iterdir()) == []
