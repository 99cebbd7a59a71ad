"""The fingerprint saves look their duplicates up by, over both store adapters: records
stored without one (by an earlier version) get it from the backfill, which a record
written meanwhile leaves alone, and the lookup finds them, oldest first."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from knowhub_server.common.security.auth import Principal
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.qdrant_store import RemoteStore
from knowhub_server.common.storage.vectors import Missing, VectorCollection, VectorStore, Where
from knowhub_server.knowledge.config import KnowledgeSettings
from knowhub_server.knowledge.domain import Draft, Knowledge, fingerprint, new_knowledge
from knowhub_server.knowledge.store import (
    FINGERPRINT,
    KnowledgeStore,
    KnowledgeVectors,
)

ALICE = Principal(user_id="alice", agent_id="alice_bot", org_id="acme")
WITHOUT = Where(must=(Missing(FINGERPRINT),))


@pytest.fixture(params=["edge", "remote"])
def vector_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    store: VectorStore = (
        EdgeStore(tmp_path / "qdrant")
        if request.param == "edge"
        else RemoteStore.connect(":memory:")
    )
    yield store
    store.close()


def record(task: str, at: float) -> Knowledge:
    draft = Draft(task=task, content="use the staging account", types=["strategy"])
    return new_knowledge(draft, ALICE, at)


def opened_knowledge(store: VectorStore) -> VectorCollection:
    """The knowledge collection the KnowledgeStore opened."""
    return next(c for c in store.opened() if c.schema.name == "knowledge")


def strip_fingerprints(collection: VectorCollection) -> None:
    """Stores every record as a version without fingerprints stored it."""
    page, _ = collection.scroll(Where(), 100, with_vectors=True)
    for stored in page:
        del stored.payload[FINGERPRINT]
    collection.put(page)


def test_the_backfill_gives_old_records_their_fingerprint(
    vector_store: VectorStore, caplog: pytest.LogCaptureFixture
) -> None:
    knowledge = KnowledgeStore(vector_store, KnowledgeVectors(None), KnowledgeSettings())
    old, twin, other = record("log in", 1.0), record("  LOG in ", 2.0), record("log out", 3.0)
    knowledge.insert([twin, old, other])
    collection = opened_knowledge(vector_store)
    strip_fingerprints(collection)
    assert collection.count(WITHOUT) == 3
    assert knowledge.with_fingerprints([fingerprint(old)]) == {}

    with caplog.at_level(logging.INFO, logger="knowhub_server.knowledge.store"):
        assert knowledge.add_missing_fingerprints() == 3
    assert "adding fingerprints to 3 knowledge records" in caplog.text
    assert collection.count(WITHOUT) == 0
    assert knowledge.add_missing_fingerprints() == 0  # nothing left: a later start is quick

    found = knowledge.with_fingerprints([fingerprint(old), fingerprint(other)])
    assert [k.id for k in found[fingerprint(old)]] == [old.id, twin.id]  # oldest first
    assert [k.id for k in found[fingerprint(other)]] == [other.id]


def test_the_backfill_leaves_a_record_written_since_it_was_read(
    vector_store: VectorStore,
) -> None:
    knowledge = KnowledgeStore(vector_store, KnowledgeVectors(None), KnowledgeSettings())
    first = record("log in", 1.0)
    knowledge.insert([first])
    collection = opened_knowledge(vector_store)
    strip_fingerprints(collection)
    read = collection.get(first.id)
    assert read is not None
    edited = knowledge.update(first.id, lambda k: replace(k, task="sign in"))

    collection.set_fields([(read, {FINGERPRINT: fingerprint(first)})])  # as read: stale

    assert knowledge.with_fingerprints([fingerprint(first)]) == {}
    assert [
        k.id for k in knowledge.with_fingerprints([fingerprint(edited)])[fingerprint(edited)]
    ] == [first.id]
