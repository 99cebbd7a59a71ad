"""The resource store's contract, on both adapters: the embedded Edge engine and the
qdrant-client adapter (against `QdrantClient(":memory:")`, the Qdrant server's API)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.qdrant_store import RemoteStore
from knowhub_server.common.storage.vectors import VectorStore
from knowhub_server.resource.crypto import Envelope
from knowhub_server.resource.domain import Content, Head, VersionInfo, version_key
from knowhub_server.resource.store import ResourceStore, VersionRecord, heads_where

VISIBLE = frozenset({"org:acme", "public"})
NOW = 1_800_000_000.0


@pytest.fixture(params=["edge", "remote"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ResourceStore]:
    backend: VectorStore = (
        EdgeStore(tmp_path / "qdrant")
        if request.param == "edge"
        else RemoteStore.connect(":memory:")
    )
    yield ResourceStore(backend)
    backend.close()


def content(
    title: str = "t",
    body: str = "b",
    *,
    content_type: str = "code",
    scopes: tuple[str, ...] = ("org:acme",),
    expires_at: float | None = None,
) -> Content:
    return Content(
        title=title,
        body=body,
        content_type=content_type,
        metadata={"k": [1]},
        scopes=list(scopes),
        owner="user:alice",
        expires_at=expires_at,
    )


def head(resource_id: str, versions: int = 1, deleted: bool = False, **fields: Any) -> Head:
    infos = [
        VersionInfo(
            version=n,
            key=version_key(resource_id, n),
            created_at=NOW + n,
            saved_by="user:alice",
            has_secure_body=n % 2 == 0,
            deleted_at=NOW if deleted and n == versions else 0.0,
        )
        for n in range(versions, 0, -1)
    ]
    return Head(
        id=resource_id,
        content=content(**fields),
        creator="user:alice",
        created_at=NOW,
        versions=infos,
    )


def test_heads_are_created_once_and_read_back_whole(store: ResourceStore) -> None:
    original = head("code/a/one", versions=3)
    assert store.create_head(original) is True
    assert store.create_head(head("code/a/one")) is False
    assert store.head("code/a/one") == original
    assert store.head("code/a/missing") is None


def test_a_basic_read_leaves_out_the_body_and_older_versions(store: ResourceStore) -> None:
    store.create_head(head("code/a/one", versions=3, body="big body"))
    store.create_head(head("code/a/two"))
    full = store.heads(["code/a/one", "code/a/two", "code/a/none"], with_body=True)
    basic = store.heads(["code/a/one", "code/a/none"], with_body=False)
    assert set(full) == {"code/a/one", "code/a/two"} and set(basic) == {"code/a/one"}
    assert full["code/a/one"].content.body == "big body"
    assert len(full["code/a/one"].versions) == 3
    one = basic["code/a/one"]
    assert one.content.body == "" and one.versions == full["code/a/one"].versions[:1]
    assert one.content.title == "t" and one.version == 3


def test_update_head_applies_a_change_and_reindexes_the_text(store: ResourceStore) -> None:
    store.create_head(head("code/a/one", title="walrus"))
    updated = store.update_head(
        "code/a/one", lambda h: replace(h, content=content(title="narwhal"))
    )
    assert updated.content.title == "narwhal"
    where = heads_where(VISIBLE, now=NOW)
    assert [h.id for h, _ in store.search("narwhal", where, 5)] == ["code/a/one"]
    assert store.search("walrus", where, 5) == []


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, {"code/a/one", "code/a/b/two", "cred/x"}),
        ({"prefix": "code"}, {"code/a/one", "code/a/b/two"}),
        ({"prefix": "code/a/b"}, {"code/a/b/two"}),
        ({"prefix": "code/a/one"}, {"code/a/one"}),
        ({"prefix": "cod"}, set()),
        ({"content_type": "credential"}, {"cred/x"}),
        ({"include_expired": True}, {"code/a/one", "code/a/b/two", "cred/x", "code/old"}),
        ({"show_deleted": True}, {"code/a/one", "code/a/b/two", "cred/x", "code/del"}),
    ],
)
def test_list_filters(store: ResourceStore, filters: dict[str, Any], expected: set[str]) -> None:
    store.create_head(head("code/a/one"))
    store.create_head(head("code/a/b/two", expires_at=NOW + 60))
    store.create_head(head("cred/x", content_type="credential", scopes=("public",)))
    store.create_head(head("code/old", expires_at=NOW - 1))
    store.create_head(head("code/del", deleted=True))
    store.create_head(head("code/hidden", scopes=("org:globex",)))
    heads, cursor = store.page(heads_where(VISIBLE, now=NOW, **filters), 100, None)
    assert {h.id for h in heads} == expected and cursor is None


def test_pages_return_each_head_once(store: ResourceStore) -> None:
    for n in range(25):
        store.create_head(head(f"code/p{n:02d}"))
    seen, cursor, pages = [], None, 0
    while True:
        page, cursor = store.page(heads_where(VISIBLE, now=NOW), 10, cursor)
        seen += [h.id for h in page]
        pages += 1
        if cursor is None:
            break
    assert sorted(seen) == [f"code/p{n:02d}" for n in range(25)] and pages == 3


def envelope(key_id: str) -> Envelope:
    return Envelope(key_id, b"\x01" * 60, b"\x02" * 40)


def test_version_records_are_written_once_and_found_by_resource_and_key(
    store: ResourceStore,
) -> None:
    records = [
        VersionRecord(
            version_key("code/v", n),
            "code/v",
            n,
            content(f"v{n}"),
            envelope("key-a") if n < 3 else None,
        )
        for n in (1, 2, 3)
    ]
    records.append(
        VersionRecord(version_key("code/w", 1), "code/w", 1, content(), envelope("key-b"))
    )
    for record in records:
        store.add_version(record)
    assert store.version(records[0].key) == records[0]
    assert sorted(store.version_keys("code/v")) == sorted(r.key for r in records[:3])
    assert {r.key for r in store.versions_under_keys(["key-a"])} == {records[0].key, records[1].key}
    assert list(store.versions_under_keys([])) == []
    assert (store.count_encrypted(), store.count_encrypted(except_key="key-a")) == (3, 1)

    rewrapped = store.update_version(
        records[0].key, lambda r: replace(r, envelope=envelope("key-b"))
    )
    assert store.version(records[0].key) == rewrapped
    assert store.count_encrypted(except_key="key-b") == 1
    store.delete_versions([r.key for r in records[:3]])
    assert store.version_keys("code/v") == []
