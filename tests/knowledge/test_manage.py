"""Managing knowledge through the SDK: edits by field mask kept as versions with who and
why, soft delete that can be undone until the purge, saves idempotent by content, and
source.trace_id. Principals: tests/support/harness.py (alice and carol of acme, bob of
globex, admin)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, errors
from knowhub_contracts.v1 import knowledge_pb2 as pb

from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import Missing, Where
from knowhub_server.knowledge.store import DELETED_SCHEMA, FINGERPRINT, knowledge_schema
from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub

TASK = "log in to the quetzal portal"
CONTENT = "use the staging account and the one-time code from the vault"


def save(client: KnowHub, **fields: Any) -> Knowledge:
    values: dict[str, Any] = {
        "task": TASK,
        "content": CONTENT,
        "types": ["strategy"],
        "scopes": ["org:acme"],
    }
    values.update(fields)
    return client.knowledge.save(**values)


def found_ids(client: KnowHub, query: str) -> list[str]:
    return [h.knowledge.id for h in client.knowledge.search(query, top_k=20, min_score=1)]


# ---- Edits -------------------------------------------------------------------------------


def test_an_edit_writes_the_masked_fields_and_keeps_the_state_before(hub: Harness) -> None:
    alice = hub.client("alice")
    record = save(alice, tags={"domain": "auth"})
    edited = alice.knowledge.edit(
        record.id,
        content="use the production account with a hardware key",
        tags={"domain": "security"},
        types=["strategy", "tool"],
        note="staging was retired",
    )

    assert edited.id == record.id
    assert edited.content.startswith("use the production account")
    assert edited.tags == {"domain": "security"} and edited.types == ["strategy", "tool"]
    assert edited.task == TASK and edited.scopes == ["org:acme"]  # outside the mask
    assert edited.eval.helpful == record.eval.helpful
    assert alice.knowledge.get(record.id).content == edited.content

    (version,) = alice.knowledge.versions(record.id)
    assert version.reason == "edit" and version.feedback == "staging was retired"
    assert version.changed_by == "agent:alice_bot"  # alice's token acts for her agent
    assert version.changed_fields == ["content", "tags", "types"]
    assert (version.content, version.task, version.tags, version.types, version.scopes) == (
        CONTENT,
        TASK,
        {"domain": "auth"},
        ["strategy"],
        ["org:acme"],
    )

    # Search follows the new text, not the old.
    assert record.id in found_ids(alice, "hardware key production")
    assert record.id not in found_ids(alice, "staging vault one-time")


def test_an_edit_that_changes_nothing_keeps_no_version(hub: Harness) -> None:
    alice = hub.client("alice")
    record = save(alice)
    alice.knowledge.edit(record.id, task=TASK, content=CONTENT)
    assert alice.knowledge.versions(record.id) == []


def test_scopes_and_resource_links_can_be_edited(hub: Harness) -> None:
    alice, bob = hub.client("alice"), hub.client("bob")
    alice.resources.save(
        "code/quetzal/login",
        "login script",
        "print('hi')",
        content_type="code",
        scopes=["org:acme"],
    )
    record = save(alice)
    moved = alice.knowledge.edit(
        record.id, scopes=["user:alice", "project:p1"], resource_ids=["code/quetzal/login"]
    )
    assert moved.scopes == ["user:alice", "project:p1"]
    assert moved.resource_ids == ["code/quetzal/login"]
    carol = hub.client("carol")  # of acme, but not of user:alice or project p1
    with pytest.raises(errors.NotFound):
        carol.knowledge.get(record.id)
    with pytest.raises(errors.NotFound):
        bob.knowledge.get(record.id)
    assert alice.knowledge.edit(record.id, resource_ids=[]).resource_ids == []


@pytest.mark.parametrize(
    ("edit", "error", "field"),
    [
        ({"scopes": ["org:globex"]}, errors.PermissionDenied, "knowledge.scopes[0]"),
        ({"scopes": []}, errors.InvalidArgument, "knowledge.scopes"),
        ({"types": ["recipe"]}, errors.InvalidArgument, "knowledge.types[0]"),
        ({"task": "  "}, errors.InvalidArgument, "knowledge.task"),
        ({"content": "x" * 65_537}, errors.InvalidArgument, "knowledge.content"),
        ({"resource_ids": ["code/none/here"]}, errors.InvalidArgument, "knowledge.resource_ids[0]"),
        ({"tags": {"": "empty key"}}, errors.InvalidArgument, "knowledge.tags"),
        ({"task": "new", "note": "n" * 4001}, errors.InvalidArgument, "change_note"),
    ],
)
def test_a_wrong_edit_is_refused_naming_the_field_and_changes_nothing(
    hub: Harness, edit: dict[str, Any], error: type[errors.KnowHubError], field: str
) -> None:
    alice = hub.client("alice")
    record = save(alice)
    with pytest.raises(error, match=re.escape(field)):
        alice.knowledge.edit(record.id, **edit)
    assert alice.knowledge.get(record.id) == record
    assert alice.knowledge.versions(record.id) == []


def test_the_mask_is_checked_and_only_the_owner_may_edit(hub: Harness) -> None:
    alice, carol, admin = hub.client("alice"), hub.client("carol"), hub.client("admin")
    record = save(alice)
    stub = alice.knowledge._stub  # raw requests, for masks the SDK never builds

    def update(**fields: Any) -> pb.UpdateKnowledgeResponse:
        return stub.UpdateKnowledge(
            pb.UpdateKnowledgeRequest(id=record.id, **fields),
            metadata=(("authorization", "Bearer token-alice"),),
        )

    for request, field in [
        (
            {"knowledge": pb.Knowledge(owner="user:bob"), "update_mask": {"paths": ["owner"]}},
            "update_mask.paths[0]",
        ),
        (
            {
                "knowledge": pb.Knowledge(id="knowledge-other", task="t"),
                "update_mask": {"paths": ["task"]},
            },
            "knowledge.id",
        ),
        ({"update_mask": {"paths": []}}, "update_mask"),
        (
            {
                "knowledge": pb.Knowledge(content="new"),
                "update_mask": {"paths": ["content"]},
                "evolve_feedback": "shorter",
            },
            "update_mask",
        ),
        ({"change_note": "why"}, "change_note"),
    ]:
        with pytest.raises(Exception) as refused:
            update(**request)
        assert refused.value.code().name == "INVALID_ARGUMENT", request  # type: ignore[attr-defined]
        assert field in refused.value.details(), request  # type: ignore[attr-defined]

    # Without a mask, the fields `knowledge` sets are written (AIP-134).
    update(knowledge=pb.Knowledge(task="log in to the quetzal portal, v2"))
    assert alice.knowledge.get(record.id).task == "log in to the quetzal portal, v2"

    with pytest.raises(errors.PermissionDenied, match="only the owner"):
        carol.knowledge.edit(record.id, content="carol's version")
    edited = admin.knowledge.edit(record.id, content="the admin's fix", note="typo")
    assert alice.knowledge.versions(record.id)[0].changed_by == "user:root"
    assert edited.content == "the admin's fix"


def test_an_evolve_version_says_who_and_what(llm_hub: Harness, llm: OpenAIStub) -> None:
    alice = llm_hub.client("alice")
    record = save(alice)
    llm.script({"content": "evolved content"})
    alice.knowledge.update(record.id, evolve_feedback="mention the hardware key")
    (version,) = alice.knowledge.versions(record.id)
    assert (version.reason, version.feedback, version.changed_fields, version.content) == (
        "evolve",
        "mention the hardware key",
        ["content"],
        CONTENT,
    )
    assert version.changed_by == "agent:alice_bot"


# ---- Delete, undelete, purge -------------------------------------------------------------


def test_a_deleted_record_is_gone_until_undeleted_whole(hub: Harness) -> None:
    alice, bob, carol = hub.client("alice"), hub.client("bob"), hub.client("carol")
    record = save(alice)
    alice.knowledge.update(record.id, add_helpful_case={"task": "it worked"})
    alice.knowledge.edit(record.id, content="use the production account", note="moved")
    before = alice.knowledge.get(record.id)

    purge_time = alice.knowledge.delete(record.id)
    assert purge_time is not None and purge_time.timestamp() > time.time() + 29 * 86_400
    with pytest.raises(errors.NotFound):
        alice.knowledge.get(record.id)
    assert record.id not in found_ids(alice, "production account quetzal")
    assert record.id not in [k.id for k in alice.knowledge.list(limit=100)]
    with pytest.raises(errors.NotFound):
        alice.knowledge.delete(record.id)  # twice
    with pytest.raises(errors.NotFound):
        bob.knowledge.undelete(record.id)  # not his to see
    with pytest.raises(errors.PermissionDenied):
        carol.knowledge.undelete(record.id)  # sees org:acme, but does not own it

    restored = alice.knowledge.undelete(record.id)
    assert restored == before
    assert len(alice.knowledge.versions(record.id)) == 1
    assert record.id in found_ids(alice, "production account quetzal")
    with pytest.raises(errors.FailedPrecondition, match="is not deleted"):
        alice.knowledge.undelete(record.id)
    with pytest.raises(errors.NotFound):
        alice.knowledge.undelete("knowledge-20990101-0123456789ab")


def test_deleted_records_are_purged_after_the_retention(start_hub: StartHub) -> None:
    hub = start_hub(
        env={
            "KNOWHUB_KNOWLEDGE_RETENTION_HOURS": "0",
            "KNOWHUB_KNOWLEDGE_PURGE_INTERVAL_SECONDS": "0.2",
        }
    )
    alice = hub.client("alice")
    record = save(alice)
    alice.knowledge.delete(record.id)
    with pytest.raises(errors.NotFound, match="purged"):
        alice.knowledge.undelete(record.id)
    time.sleep(2)  # ten sweeps
    hub.stop()
    store = EdgeStore(hub.data_dir / "qdrant")
    try:
        assert store.open(DELETED_SCHEMA).get(record.id) is None
    finally:
        store.close()


# ---- Idempotent saves --------------------------------------------------------------------


def test_saving_the_same_knowledge_again_returns_the_record(hub: Harness) -> None:
    alice = hub.client("alice")
    first = save(alice)
    again = alice.knowledge.save_unless_exists(
        f"  {TASK.upper()} ", CONTENT.replace(" ", "  "), types=["strategy"], scopes=["org:acme"]
    )
    assert again.existing and again.knowledge.id == first.id
    assert save(alice).id == first.id
    assert len(alice.knowledge.list(limit=100)) == 1

    duplicate = save(alice, allow_duplicate=True)
    assert duplicate.id != first.id
    other_scope = save(alice, scopes=["user:alice"])
    other_text = save(alice, content=CONTENT + " twice")
    assert len({first.id, duplicate.id, other_scope.id, other_text.id}) == 4

    # A batch says which of its records existed.
    saved = alice.knowledge.save_many(
        [
            {"task": TASK, "content": CONTENT, "types": ["strategy"], "scopes": ["user:alice"]},
            {"task": "a new task", "content": "new", "types": ["plan"]},
        ]
    )
    assert saved.existing == [True, False]
    assert saved[0].id == other_scope.id


def test_a_batch_saves_the_same_knowledge_once(hub: Harness) -> None:
    alice = hub.client("alice")
    item = {"task": TASK, "content": CONTENT, "types": ["strategy"], "scopes": ["org:acme"]}
    twice = alice.knowledge.save_many([item, {**item, "task": f" {TASK.upper()}"}])
    assert twice.existing == [False, True]
    assert twice[0].id == twice[1].id
    # A later batch finds it stored; one that allows a duplicate saves a second record.
    again = alice.knowledge.save_many([item, {**item, "allow_duplicate": True}, item])
    assert again.existing == [True, False, True]
    assert again[0].id == again[2].id == twice[0].id != again[1].id
    assert len(alice.knowledge.list(limit=100)) == 2


def test_the_same_text_of_another_owner_or_organisation_is_not_a_duplicate(
    hub: Harness,
) -> None:
    alice, bob = hub.client("alice"), hub.client("bob")
    mine = save(alice, scopes=["public"], owner="user:alice")
    my_agents = save(alice, scopes=["public"], owner="agent:alice_bot")
    globex = save(bob, scopes=["public"], owner="agent:bob_bot")
    assert len({mine.id, my_agents.id, globex.id}) == 3
    assert save(bob, scopes=["public"], owner="agent:bob_bot").id == globex.id


def test_records_stored_without_a_fingerprint_get_one_at_startup(start_hub: StartHub) -> None:
    hub = start_hub()
    first = save(hub.client("alice"))
    hub.stop()
    store = EdgeStore(hub.data_dir / "qdrant")
    try:  # as an earlier version stored it: no fingerprint
        knowledge = store.open(knowledge_schema(None))
        stored = knowledge.get(first.id, with_vectors=True)
        assert stored is not None and stored.payload.pop(FINGERPRINT)
        knowledge.put([stored])
        assert knowledge.count(Where(must=(Missing(FINGERPRINT),))) == 1
    finally:
        store.close()
    hub.start()
    again = hub.client("alice").knowledge.save_unless_exists(
        TASK, CONTENT, types=["strategy"], scopes=["org:acme"]
    )
    assert again.existing and again.knowledge.id == first.id


def test_source_trace_id_is_kept(hub: Harness) -> None:
    alice = hub.client("alice")
    record = save(alice, trace_id="trace-42")
    assert record.source.trace_id == "trace-42"
    assert alice.knowledge.get(record.id).source.trace_id == "trace-42"
    with pytest.raises(errors.InvalidArgument, match=re.escape("source.trace_id")):
        save(alice, trace_id="no spaces allowed", content="other")
