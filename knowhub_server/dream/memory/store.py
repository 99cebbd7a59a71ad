"""Memory events and profiles in their Qdrant collections: payload layout, filters,
recall with a similarity in 0..1, and profile revisions under optimistic concurrency."""

from __future__ import annotations

import functools
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from qdrant_edge import SparseVector

from knowhub_server.common.base import paging
from knowhub_server.common.base.errors import Busy, InvalidArgument, Unavailable
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.embedding import Bm25Encoder, DenseEmbedder
from knowhub_server.common.runtime.vector_backlog import (
    PENDING,
    VectorBacklog,
    marked,
    vectors_now_or_later,
)
from knowhub_server.common.storage.vectors import (
    DENSE,
    SPARSE,
    AnyOf,
    CollectionSchema,
    Condition,
    Eq,
    HasKey,
    Hit,
    HybridFusion,
    Order,
    Payload,
    Range,
    Record,
    StoreMismatch,
    VectorCollection,
    Vectors,
    VectorStore,
    Where,
    bounded_bm25,
    point_id,
)
from knowhub_server.dream.memory.domain import (
    DELETED,
    PERSPECTIVE_SENDER,
    SUPERSEDED,
    CognitiveEvent,
    Isolation,
    Profile,
    ProfileRecord,
    ProfileRevision,
    profile_key,
)

EVENTS = "memory_events"
PROFILES = "memory_profiles"


def events_schema(embedder: DenseEmbedder | None) -> CollectionSchema:
    return CollectionSchema(
        name=EVENTS,
        dense_dim=embedder.dim if embedder else None,
        embedding_model=embedder.model if embedder else None,
        keyword_fields=("scope", "user_id", "sender_id", "group_id", "perspective", "state"),
        tenant_field="scope",
        integer_fields=(PENDING,),
        float_fields=("timestamp_epoch", "confirmed_at"),
        bulk_fields=("observation",),
    )


def profiles_schema(embedder: DenseEmbedder | None) -> CollectionSchema:
    return CollectionSchema(
        name=PROFILES,
        dense_dim=embedder.dim if embedder else None,
        embedding_model=embedder.model if embedder else None,
        keyword_fields=("scope", "entity_type"),
        tenant_field="scope",
        integer_fields=(PENDING,),
        bulk_fields=("revisions", "merged_jobs"),
    )


class MemoryVectors:
    """BM25 vectors always, dense ones too when an embedder is configured."""

    def __init__(self, embedder: DenseEmbedder | None) -> None:
        self.embedder = embedder
        self._bm25 = Bm25Encoder()

    def for_texts(self, texts: Sequence[str]) -> list[Vectors]:
        vectors: list[Vectors] = [{SPARSE: self._bm25.document(t)} for t in texts]
        if self.embedder is not None and texts:
            for item, dense in zip(vectors, self.embedder.embed(texts), strict=True):
                item[DENSE] = dense
        return vectors

    def for_saving(self, texts: Sequence[str]) -> list[Vectors]:
        """As `for_texts`, but without the dense vectors when the model fails within its
        timeout: the record is stored at once and its vector written later."""
        return vectors_now_or_later(
            self.embedder, [{SPARSE: self._bm25.document(t)} for t in texts], texts
        )

    def stored(self, key: str, payload: dict[str, Any], vectors: Vectors) -> Record:
        return Record(key=key, payload=marked(payload, vectors, self.embedder), vectors=vectors)

    def for_query(self, query: str) -> tuple[SparseVector, list[float] | None]:
        """The query's BM25 vector, and its dense one unless there is no model or it
        cannot give it now (search then goes by BM25 alone)."""
        try:
            dense = self.embedder.embed_query(query) if self.embedder is not None else None
        except (Unavailable, Busy):
            dense = None
        return self._bm25.query(query), dense


@dataclass
class Recalled:
    """A recalled record: its indexed fields and similarity at once, the record itself
    decoded on first use (a search ranks its candidates and decodes only the winners)."""

    fields: dict[str, Any]
    similarity: float
    _load: Callable[[], Record]

    @functools.cached_property
    def record(self) -> Record:
        return self._load()


def recall(
    collection: VectorCollection,
    vectors: MemoryVectors,
    fusion: HybridFusion,
    query: str,
    where: Where,
    limit: int,
) -> list[Recalled]:
    """The `limit` most similar records, best first, each with a similarity in 0..1 that
    does not depend on the other records recalled (so time decay's similarity gate means
    something): `bounded_bm25`, or with embeddings the `HybridFusion` relevance."""
    sparse, dense = vectors.for_query(query)
    if dense is None:
        return [
            Recalled(h.fields, similarity, _record_of(h))
            for h, similarity in bounded_bm25(collection, where, sparse, limit)
        ]
    best = fusion.search(collection, where, sparse, dense, limit)
    found = {
        point_id(r.key): r
        for r in collection.retrieve_points([p for p, _ in best], with_bulk=False)
    }
    return [Recalled(found[p].payload, score, _given(found[p])) for p, score in best if p in found]


def _record_of(hit: Hit) -> Callable[[], Record]:
    # bounded_bm25 reads payloads: every hit has its record
    return lambda: cast(Record, hit.record)


def _given(record: Record) -> Callable[[], Record]:
    return lambda: record


def reindex(
    store: VectorStore,
    embedder: DenseEmbedder | None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Rebuilds the events' and profiles' vectors with the configured embedding model."""
    vectors = MemoryVectors(embedder)
    copied = 0
    texts: list[tuple[CollectionSchema, Callable[[Payload], str]]] = [
        (events_schema(embedder), lambda p: p["text"]),
        (profiles_schema(embedder), lambda p: _profile_record(p).profile.indexed_text),
    ]
    for schema, text in texts:
        try:
            copied += store.rebuild(schema, _revectorizer(vectors, text), _after(progress, copied))
        except StoreMismatch:
            continue  # the collection was never created: nothing to rebuild
    return copied


def _revectorizer(
    vectors: MemoryVectors, text: Callable[[Payload], str]
) -> Callable[[list[Record]], list[Vectors]]:
    return lambda page: vectors.for_texts([text(r.payload) for r in page])


def _after(
    progress: Callable[[int, int], None] | None, done: int
) -> Callable[[int, int], None] | None:
    """`progress` of a collection copied after `done` records of others."""
    if progress is None:
        return None
    return lambda n, total: progress(done + n, done + total)


# ---- Events ------------------------------------------------------------------------------


def event_from_payload(payload: dict[str, Any]) -> CognitiveEvent:
    """The event a stored payload holds (without the mark of an owed vector)."""
    return CognitiveEvent(**{k: v for k, v in payload.items() if k != PENDING})


class EventCandidate:
    """A recalled event: similarity and time at once, the event decoded on first use."""

    def __init__(self, recalled: Recalled) -> None:
        self._recalled = recalled
        self.similarity = recalled.similarity
        # A fact restated later counts as recent as its last restatement.
        self.timestamp: float = max(
            recalled.fields["timestamp_epoch"], recalled.fields.get("confirmed_at") or 0.0
        )

    @functools.cached_property
    def event(self) -> CognitiveEvent:
        return event_from_payload(self._recalled.record.payload)


def event_where(
    scopes: Sequence[str],
    isolation: Isolation,
    time_from: float | None,
    time_to: float | None,
    *,
    include_history: bool = False,
) -> Where:
    """The events a search may see; current facts only unless `include_history` (events
    written before states existed have none, and are current)."""
    must: list[Condition] = [
        AnyOf("scope", tuple(scopes)),
        Eq("perspective", isolation.perspective),
    ]
    if isolation.group_id:
        must.append(Eq("group_id", isolation.group_id))
    if isolation.user_id:
        must.append(Eq("user_id", isolation.user_id))
    if time_from is not None or time_to is not None:
        must.append(Range("timestamp_epoch", gte=time_from, lte=time_to))
    hidden = (DELETED,) if include_history else (SUPERSEDED, DELETED)
    return Where(must=tuple(must), must_not=(AnyOf("state", hidden),))


def subject_where(scope: str, user_id: str) -> Where:
    """A subject's current facts: the sender copies of what they said, in one scope."""
    return Where(
        must=(Eq("scope", scope), Eq("perspective", PERSPECTIVE_SENDER), Eq("user_id", user_id)),
        must_not=(AnyOf("state", (SUPERSEDED, DELETED)),),
    )


class EventStore:
    def __init__(self, store: VectorStore, vectors: MemoryVectors, fusion: HybridFusion) -> None:
        self._vectors = vectors
        self._fusion = fusion
        self._collection = store.open(events_schema(vectors.embedder))

    def put(self, events: Sequence[CognitiveEvent]) -> None:
        """Writes the events, replacing any with the same ids (a redelivered job's)."""
        texts = list(dict.fromkeys(e.text for e in events))
        by_text = dict(zip(texts, self._vectors.for_saving(texts), strict=True))
        self._collection.put(
            [self._vectors.stored(e.event_id, dict(vars(e)), by_text[e.text]) for e in events]
        )

    def backlog(self, metrics: Metrics) -> VectorBacklog | None:
        """The task that writes the dense vectors of events stored without them."""
        if self._vectors.embedder is None:
            return None
        return VectorBacklog(
            EVENTS,
            self._collection,
            self._vectors.embedder,
            lambda payload: payload["text"],
            metrics,
        )

    def recall(self, query: str, where: Where, limit: int) -> list[EventCandidate]:
        return [
            EventCandidate(r)
            for r in recall(self._collection, self._vectors, self._fusion, query, where, limit)
        ]

    def get(self, event_ids: Sequence[str]) -> list[CognitiveEvent]:
        """The events that exist among `event_ids`, in that order."""
        found = {
            r.key: event_from_payload(r.payload) for r in self._collection.retrieve(list(event_ids))
        }
        return [found[i] for i in event_ids if i in found]

    def change(
        self, event_ids: Sequence[str], change: Callable[[CognitiveEvent], CognitiveEvent]
    ) -> list[CognitiveEvent]:
        """Applies `change` to each existing event with optimistic concurrency; new
        vectors when the text changed. Returns the changed events."""
        changed = []
        for key in [e.event_id for e in self.get(event_ids)]:

            def apply(current: Record) -> Record:
                after = change(event_from_payload(current.payload))
                vectors = (
                    current.vectors
                    if after.text == current.payload["text"]
                    else self._vectors.for_saving([after.text])[0]
                )
                return self._vectors.stored(current.key, dict(vars(after)), vectors)

            changed.append(event_from_payload(self._collection.compare_and_set(key, apply).payload))
        return changed

    def in_state(self, state: str) -> Iterator[CognitiveEvent]:
        cursor = None
        while True:
            page, cursor = self._collection.scroll(
                Where(must=(Eq("state", state),)), 256, cursor=cursor
            )
            yield from (event_from_payload(r.payload) for r in page)
            if cursor is None:
                return

    def delete(self, event_ids: Sequence[str]) -> None:
        self._collection.delete(list(event_ids))

    def erase_about(self, people: frozenset[str], scopes: frozenset[str] | None) -> int:
        """Erases the events whose user or sender is one of `people`, in `scopes` (every
        scope when None); returns how many."""
        return erase_matching(
            self._collection,
            scopes,
            lambda payload: bool(
                people.intersection((payload.get("user_id"), payload.get("sender_id")))
            ),
        )

    def page(
        self, where: Where, page_size: int, page_token: str
    ) -> tuple[list[CognitiveEvent], str]:
        """One page newest first, and the next token: a keyset cursor (the last timestamp
        and the events already returned with it), tied to the filter."""
        start_from, seen = (
            _event_cursor(paging.read_token(page_token, where)) if page_token else (None, [])
        )
        must_not = where.must_not + ((HasKey(tuple(seen)),) if seen else ())
        page, _ = self._collection.scroll(
            Where(must=where.must, must_not=must_not, should=where.should),
            page_size + 1,
            order=Order("timestamp_epoch", descending=True, start_from=start_from),
        )
        events = [event_from_payload(r.payload) for r in page[:page_size]]
        if len(page) <= page_size:
            return events, ""
        last = events[-1].timestamp_epoch
        ties = [e.event_id for e in events if e.timestamp_epoch == last]
        if start_from == last:
            ties = seen + ties
        return events, paging.write_token({"v": last, "ids": ties}, where)


def _point_cursor(cursor: object) -> str:
    """An unordered listing's cursor: the point id (a UUID) the engine resumes at."""
    try:
        return str(uuid.UUID(cursor))  # type: ignore[arg-type]
    except (TypeError, ValueError, AttributeError) as exc:
        raise InvalidArgument("page_token", "is not a token this service issued") from exc


def _event_cursor(cursor: object) -> tuple[float, list[str]]:
    try:
        value, ids = float(cursor["v"]), [str(i) for i in cursor["ids"]]  # type: ignore[index]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidArgument("page_token", "is not a token this service issued") from exc
    if not math.isfinite(value):
        raise InvalidArgument("page_token", "is not a token this service issued")
    return value, ids


# ---- Profiles ----------------------------------------------------------------------------


def _profile_payload(record: ProfileRecord) -> dict[str, Any]:
    # vars(), not asdict(): these records are flat, and asdict's deep copies are slow.
    return {
        **vars(record.profile),
        "revisions": [
            {"profile": vars(r.profile), "replaced_at": r.replaced_at} for r in record.revisions
        ],
        "merged_jobs": record.merged_jobs,
    }


def _profile_record(payload: dict[str, Any]) -> ProfileRecord:
    fields = dict(payload)
    fields.pop(PENDING, None)
    revisions = [
        ProfileRevision(Profile(**r["profile"]), r["replaced_at"])
        for r in fields.pop("revisions", ())
    ]
    merged = fields.pop("merged_jobs", [])
    return ProfileRecord(Profile(**fields), revisions, merged)


def erase_matching(
    collection: VectorCollection,
    scopes: frozenset[str] | None,
    matches: Callable[[dict[str, Any]], bool],
) -> int:
    """Deletes the records in `scopes` (all when None) whose payload `matches`."""
    where = Where(must=(AnyOf("scope", tuple(sorted(scopes))),)) if scopes is not None else Where()
    keys, cursor = [], None
    while True:
        page, cursor = collection.scroll(where, 256, cursor=cursor)
        keys += [r.key for r in page if matches(r.payload)]
        if cursor is None:
            break
    for start in range(0, len(keys), 256):
        collection.delete(keys[start : start + 256])
    return len(keys)


def profile_where(scopes: Sequence[str], entity_type: str) -> Where:
    must: list[Condition] = [AnyOf("scope", tuple(scopes))]
    if entity_type:
        must.append(Eq("entity_type", entity_type))
    return Where(must=tuple(must))


class ProfileMoved(Exception):
    """The profile changed since the merge read it."""


class ProfileStore:
    def __init__(self, store: VectorStore, vectors: MemoryVectors, fusion: HybridFusion) -> None:
        self._vectors = vectors
        self._fusion = fusion
        self._collection = store.open(profiles_schema(vectors.embedder))

    def get(self, scope: str, entity_type: str, entity_id: str) -> ProfileRecord | None:
        record = self._collection.get(profile_key(scope, entity_type, entity_id))
        return _profile_record(record.payload) if record else None

    def create(self, record: ProfileRecord) -> bool:
        """Writes a first revision; False when the profile exists already."""
        return self._collection.insert([self._record(record)])[0]

    def update(
        self,
        scope: str,
        entity_type: str,
        entity_id: str,
        change: Callable[[ProfileRecord], ProfileRecord],
    ) -> ProfileRecord:
        """Applies `change` with optimistic concurrency (it may raise to give up)."""

        def apply(current: Record) -> Record:
            return self._record(change(_profile_record(current.payload)))

        key = profile_key(scope, entity_type, entity_id)
        return _profile_record(self._collection.compare_and_set(key, apply).payload)

    def recall(self, query: str, where: Where, limit: int) -> list[tuple[Profile, float]]:
        """The matching profiles, best first; a profile sharing nothing with the query
        (similarity 0) is no match."""
        return [
            (_profile_record(r.record.payload).profile, r.similarity)
            for r in recall(self._collection, self._vectors, self._fusion, query, where, limit)
            if r.similarity > 0
        ]

    def delete(self, scope: str, entity_type: str, entity_id: str) -> bool:
        """Removes the profile with its revisions; False when there was none."""
        key = profile_key(scope, entity_type, entity_id)
        if self._collection.get(key) is None:
            return False
        self._collection.delete([key])
        return True

    def backlog(self, metrics: Metrics) -> VectorBacklog | None:
        """The task that writes the dense vectors of profiles stored without them."""
        if self._vectors.embedder is None:
            return None
        return VectorBacklog(
            PROFILES,
            self._collection,
            self._vectors.embedder,
            lambda payload: _profile_record(payload).profile.indexed_text,
            metrics,
        )

    def erase_of(self, entity_ids: frozenset[str], scopes: frozenset[str] | None) -> int:
        """Erases the user profiles of `entity_ids` (with their revisions) in `scopes`
        (every scope when None); returns how many."""
        return erase_matching(
            self._collection,
            scopes,
            lambda payload: (
                payload.get("entity_type") == "user" and payload.get("entity_id") in entity_ids
            ),
        )

    def page(self, where: Where, page_size: int, page_token: str) -> tuple[list[Profile], str]:
        """One page in the store's own stable order, and the next token."""
        cursor = _point_cursor(paging.read_token(page_token, where)) if page_token else None
        page, after = self._collection.scroll(where, page_size, cursor=cursor)
        return (
            [_profile_record(r.payload).profile for r in page],
            paging.write_token(after, where) if after else "",
        )

    def _record(self, record: ProfileRecord) -> Record:
        profile = record.profile
        return self._vectors.stored(
            profile_key(profile.scope, profile.entity_type, profile.entity_id),
            _profile_payload(record),
            self._vectors.for_saving([profile.indexed_text])[0],
        )
