"""Resources in two Qdrant collections: one head per resource, one record per version.

The head (key: the resource id) holds the latest version's public fields, its BM25
vector (title and body only), the resource's creator and the list of kept versions with
their deleted marks; it is what List, Search and a plain Get read, and every change to a
resource is one compare-and-set on it. A version record (key: `<id>@<version>.<nonce>`)
holds that version's fields and its sealed secure_body; it is written once, before the
head that names it, and changes afterwards only when rotation re-wraps its data key.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from knowhub_server.common.base.errors import Aborted
from knowhub_server.common.base.scopes import ORG_SEPARATOR, qualified, qualified_scope
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.security.auth import LegacyNames
from knowhub_server.common.storage.vectors import (
    SPARSE,
    AnyOf,
    CollectionSchema,
    Condition,
    Eq,
    Range,
    Record,
    SearchQuery,
    VectorCollection,
    VectorStore,
    Where,
    point_id,
)
from knowhub_server.resource.crypto import Envelope, Keyring
from knowhub_server.resource.domain import Content, Head, VersionInfo, path_prefixes

HEADS = "resources"
VERSIONS = "resource_versions"
# The expiry of a resource that never expires: later than any time a caller may give.
NEVER = 1e15

HEADS_SCHEMA = CollectionSchema(
    name=HEADS,
    keyword_fields=("scopes", "prefixes", "content_type"),
    tenant_field="scopes",
    integer_fields=("deleted",),
    float_fields=("expiry",),
    # A batch read for reference checks skips the bodies; searches ask for them.
    bulk_fields=("body", "older_versions"),
)
VERSIONS_SCHEMA = CollectionSchema(
    name=VERSIONS, keyword_fields=("resource_id", "key_id"), integer_fields=("encrypted",)
)


@dataclass
class VersionRecord:
    """One stored version: its content and its sealed secure_body, if any."""

    key: str
    resource_id: str
    version: int
    content: Content
    envelope: Envelope | None


def _content_payload(content: Content) -> dict[str, Any]:
    return {
        "title": content.title,
        "body": content.body,
        "content_type": content.content_type,
        "metadata": content.metadata,
        "scopes": content.scopes,
        "owner": content.owner,
        "expires_at": content.expires_at,
    }


def _content(payload: dict[str, Any]) -> Content:
    return Content(
        title=payload["title"],
        body=payload.get("body", ""),
        content_type=payload["content_type"],
        metadata=payload["metadata"],
        scopes=payload["scopes"],
        owner=payload["owner"],
        expires_at=payload["expires_at"],
    )


def head_payload(head: Head) -> dict[str, Any]:
    expires_at = head.content.expires_at
    return {
        "id": head.id,
        **_content_payload(head.content),
        "creator": head.creator,
        "created_at": head.created_at,
        "latest": vars(head.latest),
        "older_versions": [vars(v) for v in head.versions[1:]],
        # Native copies for the filters of List and Search.
        "prefixes": path_prefixes(head.id),
        "deleted": int(head.latest.deleted_at > 0),
        "expiry": NEVER if expires_at is None else expires_at,
    }


def head_from_payload(payload: dict[str, Any]) -> Head:
    """A head; without its bulk fields (a basic read) `versions` holds the latest only."""
    versions = [VersionInfo(**v) for v in [payload["latest"], *payload.get("older_versions", ())]]
    return Head(
        id=payload["id"],
        content=_content(payload),
        creator=payload["creator"],
        created_at=payload["created_at"],
        versions=versions,
    )


def version_payload(record: VersionRecord) -> dict[str, Any]:
    envelope = record.envelope
    return {
        "resource_id": record.resource_id,
        "version": record.version,
        **_content_payload(record.content),
        "envelope": envelope.to_payload() if envelope else None,
        "key_id": envelope.key_id if envelope else "",
        "encrypted": int(bool(envelope)),
    }


def version_from_record(record: Record) -> VersionRecord:
    payload = record.payload
    envelope = payload["envelope"]
    return VersionRecord(
        key=record.key,
        resource_id=payload["resource_id"],
        version=payload["version"],
        content=_content(payload),
        envelope=Envelope.from_payload(envelope) if envelope else None,
    )


def _moved_version(
    record: VersionRecord, new_id: str, namespace: str, keyring: Keyring
) -> VersionRecord:
    """A version record of a resource moving to `new_id` (already moved: as it is)."""
    if record.resource_id == new_id:
        return record
    envelope = record.envelope
    if envelope is not None:
        secret = keyring.open(envelope, record.resource_id, record.version)
        envelope = keyring.seal(secret, new_id, record.version)
    return replace(
        record,
        resource_id=new_id,
        envelope=envelope,
        content=_qualified_content(record.content, namespace),
    )


def heads_where(
    visible_scopes: frozenset[str],
    *,
    now: float,
    prefix: str = "",
    content_type: str = "",
    include_expired: bool = False,
    show_deleted: bool = False,
) -> Where:
    must: list[Condition] = [AnyOf("scopes", tuple(sorted(visible_scopes)))]
    if prefix:
        must.append(Eq("prefixes", prefix))
    if content_type:
        must.append(Eq("content_type", content_type))
    if not include_expired:
        must.append(Range("expiry", gt=now))
    if not show_deleted:
        must.append(Eq("deleted", 0))
    return Where(must=tuple(must))


class ResourceStore:
    """Reads and writes heads and version records."""

    def __init__(self, store: VectorStore) -> None:
        self._heads: VectorCollection = store.open(HEADS_SCHEMA)
        self._versions: VectorCollection = store.open(VERSIONS_SCHEMA)
        self._bm25 = Bm25Encoder()

    @property
    def shared(self) -> bool:
        """Whether other processes may write these collections (a Qdrant server)."""
        return not self._heads.exclusive

    def _head_record(self, head: Head) -> Record:
        text = f"{head.content.title}\n{head.content.body}"
        return Record(
            key=head.id, payload=head_payload(head), vectors={SPARSE: self._bm25.document(text)}
        )

    # -- heads --

    def head(self, resource_id: str) -> Head | None:
        record = self._heads.get(resource_id)
        return head_from_payload(record.payload) if record else None

    def heads(self, resource_ids: Sequence[str], *, with_body: bool) -> dict[str, Head]:
        """The heads that exist among the ids; without body (and kept versions but the
        latest) unless `with_body`."""
        records = self._heads.retrieve_points(
            [point_id(i) for i in resource_ids], with_bulk=with_body
        )
        return {r.key: head_from_payload(r.payload) for r in records}

    def create_head(self, head: Head) -> bool:
        """Writes a new resource's head; False when the id exists (nothing written)."""
        return self._heads.insert([self._head_record(head)])[0]

    def update_head(self, resource_id: str, change: Callable[[Head], Head]) -> Head:
        """Applies `change` with optimistic concurrency (raises NotFound when the head is
        gone); BM25 is recomputed when the title or body changed."""

        def apply(current: Record) -> Record:
            before = head_from_payload(current.payload)
            after = change(before)
            text_changed = (after.content.title, after.content.body) != (
                before.content.title,
                before.content.body,
            )
            if text_changed or not current.vectors:
                return self._head_record(after)
            return Record(key=resource_id, payload=head_payload(after), vectors=current.vectors)

        return head_from_payload(self._heads.compare_and_set(resource_id, apply).payload)

    def delete_head(self, resource_id: str) -> None:
        self._heads.delete([resource_id])

    def page(
        self, where: Where, page_size: int, cursor: str | None
    ) -> tuple[list[Head], str | None]:
        records, next_cursor = self._heads.scroll(where, page_size, cursor=cursor)
        return [head_from_payload(r.payload) for r in records], next_cursor

    def search(self, query: str, where: Where, limit: int) -> list[tuple[Head, float]]:
        hits = self._heads.search(
            SearchQuery(where, limit, sparse=self._bm25.query(query), with_bulk=True)
        )
        return [
            (head_from_payload(h.record.payload), h.score) for h in hits if h.record is not None
        ]

    def owned_by(self, owner: str) -> list[Head]:
        """Every resource `owner` owns, deleted or expired ones included."""
        heads, cursor = [], None
        while True:
            page, cursor = self._heads.scroll(Where(), 256, cursor=cursor)
            heads += [
                h
                for h in map(head_from_payload, (r.payload for r in page))
                if h.content.owner == owner
            ]
            if cursor is None:
                return heads

    # -- moving a resource stored under a bare id --

    def bare_ids(self) -> list[str]:
        """The ids of resources stored before ids had organisations."""
        ids, cursor = [], None
        while True:
            page, cursor = self._heads.scroll(Where(), 256, cursor=cursor)
            ids += [r.key for r in page if ORG_SEPARATOR not in r.key]
            if cursor is None:
                return ids

    def free_for(self, head: Head, new_id: str) -> bool:
        """Whether `new_id` names no resource but `head` (moved there before)."""
        there = self.head(new_id)
        return there is None or there.latest.key == head.latest.key

    def move(self, head: Head, new_id: str, namespace: str, keyring: Keyring) -> str:
        """The resource under `new_id`, every step of it safe to repeat: the version
        records first (sealed for the new id), then the new head, then the old one goes."""
        for key in self.version_keys(head.id):
            self.update_version(
                key, lambda record: _moved_version(record, new_id, namespace, keyring)
            )
        self.create_head(
            replace(head, id=new_id, content=_qualified_content(head.content, namespace))
        )
        self.delete_head(head.id)
        return new_id

    # -- version records --

    def add_version(self, record: VersionRecord) -> None:
        if not self._versions.insert([Record(key=record.key, payload=version_payload(record))])[0]:
            raise Aborted(f"version key {record.key!r} was taken; try again")

    def version(self, key: str) -> VersionRecord | None:
        record = self._versions.get(key)
        return version_from_record(record) if record else None

    def update_version(
        self, key: str, change: Callable[[VersionRecord], VersionRecord]
    ) -> VersionRecord:
        def apply(current: Record) -> Record:
            changed = change(version_from_record(current))
            return Record(key=key, payload=version_payload(changed))

        return version_from_record(self._versions.compare_and_set(key, apply))

    def delete_versions(self, keys: Sequence[str]) -> None:
        if keys:
            self._versions.delete(list(keys))

    def version_keys(self, resource_id: str) -> list[str]:
        """Every version record of a resource, kept or left over."""
        return [r.key for r in self._scan_versions(Where(must=(Eq("resource_id", resource_id),)))]

    def versions_under_keys(self, key_ids: Collection[str]) -> Iterator[VersionRecord]:
        """Version records whose secure_body is wrapped by one of these master keys."""
        if not key_ids:
            return iter(())
        where = Where(must=(AnyOf("key_id", tuple(sorted(key_ids))),))
        return (version_from_record(r) for r in self._scan_versions(where))

    def count_encrypted(self, *, except_key: str = "") -> int:
        must_not = (Eq("key_id", except_key),) if except_key else ()
        return self._versions.count(Where(must=(Eq("encrypted", 1),), must_not=must_not))

    def _scan_versions(self, where: Where) -> Iterator[Record]:
        cursor = None
        while True:
            page, cursor = self._versions.scroll(where, 256, cursor=cursor)
            yield from page
            if cursor is None:
                return


# ---- Names from before resource ids had organisations -------------------------------------


def qualify_legacy_ids(
    resources: ResourceStore, keyring: Keyring, names: LegacyNames
) -> dict[str, str]:
    """Moves each resource stored under a bare id into its creator's org: its versions'
    secure_body sealed again for the new id, its agent scopes and owner qualified, its
    head written under the new id and the old one removed. Safe to run again after an
    interruption. Returns old id -> new id for every resource moved; a resource whose new
    id its org has used since stays where it is (old id -> "")."""
    moved = {}
    for resource_id in resources.bare_ids():
        head = resources.head(resource_id)
        namespace = names.of_writer(head.creator) if head else ""
        if head is None or not namespace:
            continue
        new_id = qualified(namespace, resource_id)
        moved[resource_id] = (
            resources.move(head, new_id, namespace, keyring)
            if resources.free_for(head, new_id)
            else ""
        )
    return moved


def _qualified_content(content: Content, namespace: str) -> Content:
    return replace(
        content,
        scopes=[qualified_scope(namespace, s) for s in content.scopes],
        owner=qualified_scope(namespace, content.owner),
    )
