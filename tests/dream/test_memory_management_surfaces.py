"""Managing memory over REST (the gateway) and the `knowhub memory` command: following a
job, editing, deleting and undeleting an event, memos, profiles, and an agent's documents;
wrong input answers 400 naming the field and changes nothing."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from knowhub_server.cli import main as knowhub_cli
from tests.conftest import StartHub
from tests.dream.support import memory_settings, private_context
from tests.gateway.conftest import Gateway, gateway_for
from tests.support.harness import Harness


@pytest.fixture
def hub(start_hub: StartHub, redis_url: str, redis_prefix: str) -> Harness:
    return start_hub(
        env={"KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05"},
        **memory_settings(redis_url, redis_prefix),
    )


@pytest.fixture
def gateway(hub: Harness) -> Iterator[Gateway]:
    running = gateway_for(hub)
    yield running
    running.stop()


def ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_memory_is_managed_over_rest(gateway: Gateway, hub: Harness) -> None:
    remembered = ok(
        gateway.rpc(
            "dream",
            "Remember",
            {
                "memo": "talked about pets",
                "observations": ["User 10001 owns a parrot"],
                "context": {"user_id": "10001", "request_type": "REQUEST_TYPE_PRIVATE"},
                "wait_timeout": "20s",
            },
            as_="alice",
        )
    )
    job_id = remembered["job_id"]
    assert remembered["job"]["state"] == "MEMORY_JOB_STATE_DONE"
    job = ok(gateway.rpc("dream", "GetMemoryJob", {"job_id": job_id}, as_="alice"))["job"]
    assert job["decisions"][0]["action"] == "MEMORY_ACTION_ADD"
    event_id = f"{job_id}_0_sender"

    edited = ok(
        gateway.rpc(
            "dream",
            "UpdateEvent",
            {"event_id": event_id, "text": "User 10001 owns a grey parrot"},
            as_="alice",
        )
    )
    assert edited["event"]["text"] == "User 10001 owns a grey parrot"
    bad = gateway.rpc("dream", "UpdateEvent", {"event_id": event_id, "text": ""}, as_="alice")
    assert bad.status_code == 400 and "text" in bad.text
    denied = gateway.rpc("dream", "DeleteEvent", {"event_id": event_id}, as_="carol")
    assert denied.status_code == 403
    deleted = ok(gateway.rpc("dream", "DeleteEvent", {"event_id": event_id}, as_="alice"))
    assert deleted["event"]["state"] == "EVENT_STATE_DELETED" and deleted["event"]["purge_at"]
    found = ok(
        gateway.rpc(
            "dream", "SearchEvents", {"query": "parrot", "target_user_id": "10001"}, as_="alice"
        )
    )
    assert found.get("hits", []) == []
    ok(gateway.rpc("dream", "UndeleteEvent", {"event_id": event_id}, as_="alice"))
    found = ok(
        gateway.rpc(
            "dream", "SearchEvents", {"query": "parrot", "target_user_id": "10001"}, as_="alice"
        )
    )
    assert [h["event"]["text"] for h in found["hits"]] == ["User 10001 owns a grey parrot"]

    conversation = {"request_type": "REQUEST_TYPE_PRIVATE", "user_id": "10001", "job_id": job_id}
    memo = ok(
        gateway.rpc(
            "dream", "UpdateMemo", {**conversation, "text": "talked about birds"}, as_="alice"
        )
    )["memo"]
    assert memo["text"] == "talked about birds" and memo["edited_at"]
    ok(gateway.rpc("dream", "DeleteMemo", conversation, as_="alice"))
    assert hub.client("alice").memory.recent_memos(user_id="10001") == []

    # A profile exists only after a merge, so none without an LLM.
    missing = gateway.rpc(
        "dream",
        "UpdateProfile",
        {
            "entity_type": "ENTITY_TYPE_USER",
            "entity_id": "10001",
            "update_mask": "summary",
            "summary": "x",
        },
        as_="alice",
    )
    assert missing.status_code == 404
    bad_mask = gateway.rpc(
        "dream",
        "UpdateProfile",
        {"entity_type": "ENTITY_TYPE_USER", "entity_id": "10001", "update_mask": "age"},
        as_="alice",
    )
    assert bad_mask.status_code == 400 and "update_mask" in bad_mask.text

    written = ok(
        gateway.rpc(
            "dream",
            "WriteMemoryDocument",
            {"path": "pets.md", "content": "- 10001: parrot"},
            as_="alice",
        )
    )["document"]
    assert (written["revision"], written["written_by"]) == (1, "user:alice")
    appended = ok(
        gateway.rpc(
            "dream",
            "WriteMemoryDocument",
            {"path": "pets.md", "content": "- 10002: dog", "mode": "DOCUMENT_WRITE_MODE_APPEND"},
            as_="alice",
        )
    )["document"]
    assert appended["content"] == "- 10001: parrot\n- 10002: dog"
    stale = gateway.rpc(
        "dream",
        "WriteMemoryDocument",
        {"path": "pets.md", "content": "x", "expected_revision": 1},
        as_="alice",
    )
    assert stale.status_code == 400 and "expected_revision" in stale.text  # precondition
    ok(gateway.rpc("dream", "DeleteMemoryDocument", {"path": "pets.md"}, as_="alice"))
    assert (
        gateway.rpc("dream", "GetMemoryDocument", {"path": "pets.md"}, as_="alice").status_code
        == 404
    )


def cli(
    hub: Harness,
    capsys: pytest.CaptureFixture[str],
    *command: str,
    token: str = "token-alice",
    stdin: str = "",
) -> tuple[int, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO(stdin))
        code = knowhub_cli([*command, "--target", hub.address, "--token", token])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def test_memory_is_managed_from_the_command_line(
    hub: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = hub.client("alice")
    job_id = alice.memory.remember(
        "fed the cat", ["User 10001 owns a cat"], context=private_context(), wait=20
    ).job_id
    code, job = cli(hub, capsys, "memory", "job", job_id)
    assert code == 0 and job["state"] == "done" and len(job["event_ids"]) == 2
    event_id = f"{job_id}_0_sender"
    code, event = cli(
        hub, capsys, "memory", "event", "edit", event_id, "--text", "User 10001 owns two cats"
    )
    assert code == 0 and event["text"] == "User 10001 owns two cats"
    code, event = cli(hub, capsys, "memory", "event", "delete", event_id)
    assert code == 0 and event["state"] == "deleted"
    code, error = cli(hub, capsys, "memory", "event", "edit", event_id, "--text", "x")
    assert code == 1 and "FAILED_PRECONDITION" in error
    code, event = cli(hub, capsys, "memory", "event", "undelete", event_id)
    assert code == 0 and event["state"] == "current"
    code, error = cli(hub, capsys, "memory", "event", "delete", event_id, token="token-carol")
    assert code == 1 and "PERMISSION_DENIED" in error
    code, memo = cli(
        hub, capsys, "memory", "memo", "edit", job_id, "--user", "10001", "--text", "fed both cats"
    )
    assert code == 0 and memo["text"] == "fed both cats"
    code, _ = cli(hub, capsys, "memory", "memo", "delete", job_id, "--user", "10001")
    assert code == 0 and alice.memory.recent_memos(user_id="10001") == []
    code, error = cli(hub, capsys, "memory", "profile", "delete", "user", "10001")
    assert code == 1 and "NOT_FOUND" in error

    code, document = cli(hub, capsys, "memory", "doc", "write", "cats.md", stdin="# Cats")
    assert code == 0 and document["revision"] == 1
    code, document = cli(hub, capsys, "memory", "doc", "append", "cats.md", stdin="- two of them")
    assert code == 0 and document["content"] == "# Cats\n- two of them"
    code, error = cli(
        hub, capsys, "memory", "doc", "write", "cats.md", "--expected-revision", "1", stdin="# Dogs"
    )
    assert code == 1 and "FAILED_PRECONDITION" in error
    code, listed = cli(hub, capsys, "memory", "doc", "list")
    assert code == 0 and [d["path"] for d in listed] == ["cats.md"]
    code, _ = cli(hub, capsys, "memory", "doc", "delete", "cats.md")
    assert code == 0
    code, listed = cli(hub, capsys, "memory", "doc", "list")
    assert code == 0 and listed == []
