"""Knowledge records in their Qdrant collection: payload layout, filters, recall, paging."""

from __future__ import annotations

import functools
import hashlib
import heapq
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from qdrant_edge import SparseVector

from knowhub_server.common.base import paging
from knowhub_server.common.base.errors import AlreadyExists, Busy, InvalidArgument, Unavailable
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.base.scopes import qualified, qualified_scope
from knowhub_server.common.llm.embedding import Bm25Encoder, DenseEmbedder
from knowhub_server.common.runtime.vector_backlog import (
    PENDING,
    VectorBacklog,
    marked,
    vectors_now_or_later,
)
from knowhub_server.common.security.auth import LegacyNames
from knowhub_server.common.storage.vectors import (
    DENSE,
    SPARSE,
    AnyOf,
    CollectionSchema,
    Condition,
    HasKey,
    Hit,
    HybridFusion,
    Missing,
    Order,
    Range,
    Record,
    SearchQuery,
    VectorCollection,
    Vectors,
    VectorStore,
    Where,
    bounded_bm25,
    point_id,
    rewrite_payloads,
)
from knowhub_server.knowledge.config import KnowledgeSettings
from knowhub_server.knowledge.domain import (
    Case,
    Eval,
    Knowledge,
    KnowledgeVersion,
    Source,
    fingerprint,
    quality_score,
)

log = logging.getLogger(__name__)

COLLECTION = "knowledge"
REQUESTS = "knowledge_requests"  # SaveKnowledge idempotency keys -> the ids they created
DELETED = "knowledge_deleted"  # soft-deleted records until their purge time
DELETED_SCHEMA = CollectionSchema(name=DELETED, float_fields=("purge_at",))
ORDER_FIELDS = {"updated": "updated_at", "confidence": "rank_confidence"}
# `domain.fingerprint` of the record (owner, scopes, task and content): a save finds the
# records it would duplicate by one keyword lookup.
FINGERPRINT = "fingerprint"
PROGRESS_SECONDS = 10.0  # how often a long fingerprint backfill logs its progress


def knowledge_schema(embedder: DenseEmbedder | None) -> CollectionSchema:
    return CollectionSchema(
        name=COLLECTION,
        dense_dim=embedder.dim if embedder else None,
        embedding_model=embedder.model if embedder else None,
        keyword_fields=("scopes", "types", "voted_by", FINGERPRINT),
        tenant_field="scopes",
        integer_fields=("score", "helpful", "harmful", PENDING),
        float_fields=tuple(ORDER_FIELDS.values()),
        # Search results carry the eval counters only.
        bulk_fields=(
            "helpful_history",
            "harmful_history",
            "versions",
            "applied_requests",
            "absorbed_ids",
            "ballots",
        ),
    )


def confidence_rank(record: Knowledge) -> float:
    """One sortable number for "confidence, then helpful" (the order user profiles are read in).

    Confidence to 4 decimals, then helpful (capped at 999,999), then 18 bits from the id
    to break ties; the product stays below 2**53, so floats keep it exact.
    """
    tiebreak = int(hashlib.blake2b(record.id.encode(), digest_size=4).hexdigest(), 16) % 2**18
    primary = round(record.eval.confidence * 10_000) * 1_000_000 + min(record.eval.helpful, 999_999)
    return float(primary * 2**18 + tiebreak)


def to_payload(record: Knowledge) -> dict[str, Any]:
    evaluation = record.eval
    payload = {
        "id": record.id,
        "task": record.task,
        "content": record.content,
        "types": record.types,
        "scopes": record.scopes,
        "owner": record.owner,
        "creator": record.creator,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "tags": record.tags,
        "message_id": record.message_id,
        "resource_ids": record.resource_ids,
        "source": vars(record.source),
        "eval": {
            "score": evaluation.score,
            "helpful": evaluation.helpful,
            "harmful": evaluation.harmful,
            "confidence": evaluation.confidence,
            "votes": evaluation.votes,
        },
        # Native copies: stage 2 ranks on them without decoding the record.
        "score": evaluation.score,
        "helpful": evaluation.helpful,
        "harmful": evaluation.harmful,
        "rank_confidence": confidence_rank(record),
        "helpful_history": [vars(c) for c in evaluation.helpful_history],
        "harmful_history": [vars(c) for c in evaluation.harmful_history],
        "versions": [vars(v) for v in record.versions],
        "applied_requests": record.applied_requests,
        "absorbed_ids": record.absorbed_ids,
        "ballots": record.ballots,
        FINGERPRINT: fingerprint(record),
    }
    # The communities whose cases count apart (Eval.votes): a search by anyone else
    # decodes the record to leave them out. Left out when none (the engine converts
    # each value it is given, an empty list too).
    voted_by = sorted(k for k, v in evaluation.votes.items() if any(v))
    if voted_by:
        payload["voted_by"] = voted_by
    return payload


def from_payload(payload: dict[str, Any]) -> Knowledge:
    evaluation = payload["eval"]
    return Knowledge(
        id=payload["id"],
        task=payload["task"],
        content=payload["content"],
        types=payload["types"],
        scopes=payload["scopes"],
        owner=payload["owner"],
        creator=payload["creator"],
        created_at=payload["created_at"],
        updated_at=payload["updated_at"],
        tags=payload["tags"],
        message_id=payload["message_id"],
        resource_ids=payload["resource_ids"],
        source=Source(**payload["source"]),
        eval=Eval(
            score=evaluation["score"],
            helpful=evaluation["helpful"],
            harmful=evaluation["harmful"],
            confidence=evaluation["confidence"],
            helpful_history=[Case(**c) for c in payload.get("helpful_history", ())],
            harmful_history=[Case(**c) for c in payload.get("harmful_history", ())],
            votes=evaluation.get("votes", {}),
        ),
        versions=[KnowledgeVersion(**v) for v in payload.get("versions", ())],
        applied_requests=payload.get("applied_requests", []),
        absorbed_ids=payload.get("absorbed_ids", []),
        ballots=payload.get("ballots", {}),
    )


def _decoded_later(payload: dict[str, Any]) -> Callable[[], Knowledge]:
    return lambda: from_payload(payload)


def _hit_decoded_later(hit: Hit) -> Callable[[], Knowledge]:
    # bounded_bm25 reads payloads: every hit has its record
    return lambda: from_payload(cast(Record, hit.record).payload)


@dataclass
class DeletedKnowledge:
    record: Knowledge
    deleted_at: float
    purge_at: float


class Candidate:
    """A recalled record: what stage 2 ranks it by, and the record itself on demand.

    A plain class with slots: a search makes dozens, and `functools.cached_property`
    takes a lock on each first use."""

    __slots__ = ("_knowledge", "_load", "fields", "quality_score", "relevance")

    def __init__(
        self,
        fields: dict[str, Any],  # the indexed fields (scopes, types, score, helpful, harmful)
        relevance: float,
        load: Callable[[], Knowledge],
    ) -> None:
        self.fields = fields
        self.relevance = relevance
        self._load = load
        self._knowledge: Knowledge | None = None
        # From the indexed fields, without decoding the record.
        self.quality_score: float = quality_score(
            fields["score"], fields["helpful"], fields["harmful"]
        )

    @property
    def knowledge(self) -> Knowledge:
        """The record, decoded on first use."""
        if self._knowledge is None:
            self._knowledge = self._load()
        return self._knowledge

    def seen_by(self, voters: str) -> Candidate:
        """The candidate as `voters` rank it: its helpful and harmful fields without the
        cases other communities added (`counted_by`). Only a record that has such cases
        is decoded."""
        if all(v == voters for v in self.fields.get("voted_by") or ()):
            return self
        counters = self.knowledge.eval.seen_by(voters)
        return Candidate(
            {**self.fields, "helpful": counters.helpful, "harmful": counters.harmful},
            self.relevance,
            lambda: self.knowledge,
        )

    @property
    def scopes(self) -> list[str]:
        scopes: list[str] = self.fields["scopes"]
        return scopes

    @property
    def is_user_profile(self) -> bool:
        """A user profile ranks before other knowledge of equal quality."""
        return "user_profile" in self.fields["types"]


def visible_where(
    visible_scopes: frozenset[str] | Sequence[str],
    *,
    types: Sequence[str] = (),
    min_score: int | None = None,
) -> Where:
    """Records in at least one of the scopes, of at least one of the types, scored enough."""
    return _visible_where(frozenset(visible_scopes), tuple(types), min_score)


@functools.lru_cache(maxsize=1024)
def _visible_where(
    visible_scopes: frozenset[str], types: tuple[str, ...], min_score: int | None
) -> Where:
    """Cached: a caller's few filters recur on every search."""
    must: list[Condition] = [AnyOf("scopes", tuple(sorted(visible_scopes)))]
    if types:
        must.append(AnyOf("types", tuple(types)))
    if min_score is not None:
        must.append(Range("score", gte=min_score))
    return Where(must=tuple(must))


@dataclass
class Recall:
    """Stage 1's candidates, best first, and how their relevance was computed."""

    candidates: list[Candidate]
    # BM25 alone because the embedding model failed or was slow (it is configured).
    degraded: bool = False
    # Relevance is BM25 over the query's bound (no dense model, or degraded), not hybrid.
    lexical: bool = True


class KnowledgeVectors:
    """The vectors of a record's text: BM25 always, dense when an embedder is configured."""

    def __init__(self, embedder: DenseEmbedder | None, bm25: Bm25Encoder | None = None) -> None:
        self.embedder = embedder
        self._bm25 = bm25 or Bm25Encoder()

    def for_records(self, records: Sequence[Knowledge]) -> list[Vectors]:
        texts = [r.indexed_text for r in records]
        vectors: list[Vectors] = [{SPARSE: self._bm25.document(t)} for t in texts]
        if self.embedder is not None:
            for item, dense in zip(vectors, self.embedder.embed(texts), strict=True):
                item[DENSE] = dense
        return vectors

    def for_saving(self, records: Sequence[Knowledge]) -> list[Vectors]:
        """As `for_records`, but without the dense vectors when the model fails within
        its timeout: the record is saved at once and its vector written later."""
        texts = [r.indexed_text for r in records]
        return vectors_now_or_later(
            self.embedder, [{SPARSE: self._bm25.document(t)} for t in texts], texts
        )

    def stored_payload(self, record: Knowledge, vectors: Vectors) -> dict[str, Any]:
        return marked(to_payload(record), vectors, self.embedder)

    def for_stored(self, records: list[Record]) -> list[Vectors]:
        return self.for_records([from_payload(dict(r.payload)) for r in records])

    def for_query(self, query: str) -> tuple[SparseVector, list[float] | None]:
        """The query's BM25 vector and its dense one (None without a model); Unavailable
        or Busy when the model cannot give it now."""
        dense = self.embedder.embed_query(query) if self.embedder is not None else None
        return self._bm25.query(query), dense

    def bm25_query(self, text: str) -> SparseVector:
        return self._bm25.query(text)

    def token_set(self, record: Knowledge) -> frozenset[int]:
        """The record's distinct BM25 tokens, for near-duplicate detection."""
        return frozenset(self._bm25.document(record.indexed_text).indices)


def reindex(
    store: VectorStore,
    embedder: DenseEmbedder | None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Rebuilds the knowledge collection's vectors with the configured embedding model."""
    vectors = KnowledgeVectors(embedder)
    return store.rebuild(knowledge_schema(embedder), vectors.for_stored, progress)


def qualify_legacy_names(
    store: VectorStore,
    embedder: DenseEmbedder | None,
    names: LegacyNames,
    resource_keys: Mapping[str, str],
) -> int:
    """Moves the bare agent names of records stored before names had organisations into
    their creator's org, and their resource references to where those resources moved
    (`resource_keys`, old id -> new); returns how many records changed."""

    def moved(payload: dict[str, Any]) -> dict[str, Any] | None:
        namespace = names.of_writer(payload["creator"])
        if not namespace:
            return None
        record = from_payload(payload)
        after = replace(
            record,
            scopes=[qualified_scope(namespace, s) for s in record.scopes],
            owner=qualified_scope(namespace, record.owner),
            source=replace(record.source, agent_id=qualified(namespace, record.source.agent_id)),
            resource_ids=[resource_keys.get(r, r) for r in record.resource_ids],
        )
        if after == record:
            return None
        rewritten = to_payload(after)
        if PENDING in payload:  # its vector is still owed: rewrite_payloads keeps the vectors
            rewritten[PENDING] = payload[PENDING]
        return rewritten

    return rewrite_payloads(store.open(knowledge_schema(embedder)), moved)


class KnowledgeStore:
    """Reads and writes Knowledge records; keeps their vectors in step with their text."""

    def __init__(
        self, store: VectorStore, vectors: KnowledgeVectors, settings: KnowledgeSettings
    ) -> None:
        self.vectors = vectors
        self._settings = settings
        self._fusion = HybridFusion(settings.search_hybrid_pool, settings.search_dense_weight)
        self._collection: VectorCollection = store.open(knowledge_schema(vectors.embedder))
        self._requests: VectorCollection = store.open(CollectionSchema(name=REQUESTS))
        self._deleted: VectorCollection = store.open(DELETED_SCHEMA)

    def backlog(self, metrics: Metrics) -> VectorBacklog | None:
        """The task that writes the dense vectors saves could not get in time."""
        if self.vectors.embedder is None:
            return None
        return VectorBacklog(
            COLLECTION,
            self._collection,
            self.vectors.embedder,
            lambda payload: from_payload(payload).indexed_text,
            metrics,
        )

    # -- writes --

    def insert(self, records: Sequence[Knowledge]) -> list[bool]:
        """Creates the records; False for any whose id already existed (nothing written)."""
        vectors = self.vectors.for_saving(records)
        return self._collection.insert(
            [
                Record(key=r.id, payload=self.vectors.stored_payload(r, v), vectors=v)
                for r, v in zip(records, vectors, strict=True)
            ]
        )

    def claim_request(self, request_key: str, knowledge_id: str) -> str:
        """Binds an idempotency key to the id of the record it creates, once: the id the
        key was first claimed for (this one when the claim is new)."""
        if self._requests.insert([Record(key=request_key, payload={"id": knowledge_id})])[0]:
            return knowledge_id
        claimed = self._requests.get(request_key)
        assert claimed is not None, "a claim is never deleted"
        return str(claimed.payload["id"])

    def update(self, knowledge_id: str, change: Callable[[Knowledge], Knowledge]) -> Knowledge:
        """Applies `change` with optimistic concurrency; re-embeds when the text changed."""

        def apply(current: Record) -> Record:
            before = from_payload(current.payload)
            text_before = before.indexed_text
            after = change(before)
            vectors = current.vectors
            if after.indexed_text != text_before or not vectors:
                vectors = self.vectors.for_saving([after])[0]
            return Record(
                key=knowledge_id,
                payload=self.vectors.stored_payload(after, vectors),
                vectors=vectors,
            )

        return from_payload(self._collection.compare_and_set(knowledge_id, apply).payload)

    def delete(self, knowledge_ids: Sequence[str]) -> None:
        if knowledge_ids:
            self._collection.delete(list(knowledge_ids))

    # -- soft delete --
    # A deleted record moves to its own collection, so no search, list or count sees it.
    # The copy is written before the live record goes (and the live one back before the
    # copy goes), so a crash between the two steps leaves both, never neither: the live
    # record then stands, and repeating the call finishes it.

    def soft_delete(self, record: Knowledge, *, deleted_at: float, purge_at: float) -> None:
        payload = {**to_payload(record), "deleted_at": deleted_at, "purge_at": purge_at}
        self._deleted.put([Record(key=record.id, payload=payload)])
        self._collection.delete([record.id])

    def deleted(self, knowledge_id: str) -> DeletedKnowledge | None:
        found = self._deleted.get(knowledge_id)
        if found is None:
            return None
        payload = dict(found.payload)
        return DeletedKnowledge(from_payload(payload), payload["deleted_at"], payload["purge_at"])

    def restore(self, record: Knowledge) -> Knowledge:
        """Makes a deleted record live again (as it was, if a crash left it live too)."""
        if not self.insert([record])[0]:
            live = self.get(record.id)
            if live is None or live.created_at != record.created_at:
                raise AlreadyExists(
                    f"another record took the id {record.id!r}; the deleted "
                    "one cannot come back under it"
                )
        self._deleted.delete([record.id])
        restored = self.get(record.id)
        assert restored is not None, "just written"
        return restored

    def purge_deleted(self, *, before: float) -> int:
        """Erases the deleted records whose purge time is before `before`."""
        expired = Where(must=(Range("purge_at", lt=before),))
        purged = 0
        while True:
            page, _ = self._deleted.scroll(expired, 256)
            if not page:
                return purged
            self._deleted.delete([r.key for r in page])
            purged += len(page)

    def erase_owned(self, owner: str) -> tuple[int, int]:
        """Erases every record `owner` owns, live and deleted: (live, deleted) counts."""
        counts = []
        for collection in (self._collection, self._deleted):
            keys = [r.key for r in _scan(collection) if r.payload.get("owner") == owner]
            for start in range(0, len(keys), 256):
                collection.delete(keys[start : start + 256])
            counts.append(len(keys))
        return counts[0], counts[1]

    # -- reads --

    def get(self, knowledge_id: str) -> Knowledge | None:
        record = self._collection.get(knowledge_id)
        return from_payload(record.payload) if record else None

    def recall(self, query: str, where: Where, limit: int) -> Recall:
        """The `limit` most relevant records, best first, with their relevance in 0..1.

        Hybrid (`HybridFusion`: BM25 over the query's bound and cosine, weighted) with a
        dense model; BM25 over its bound (`bounded_bm25`) without one, or when the model
        fails or is slow (degraded). The best records are then read in one call.
        """
        sparse = self.vectors.bm25_query(query)
        try:
            _, dense = self.vectors.for_query(query)
        except (Unavailable, Busy) as exc:
            log.warning("search answered from BM25 alone: %s", exc.message)
            return Recall(self._lexical(sparse, where, limit), degraded=True)
        if dense is None:
            return Recall(self._lexical(sparse, where, limit))
        fused = self._fusion.search(self._collection, where, sparse, dense, limit)
        found = {
            point_id(r.key): r
            for r in self._collection.retrieve_points([p for p, _ in fused], with_bulk=False)
        }
        return Recall(
            [
                Candidate(found[p].payload, score, _decoded_later(found[p].payload))
                for p, score in fused
                if p in found
            ],
            lexical=False,
        )

    def _lexical(self, sparse: SparseVector, where: Where, limit: int) -> list[Candidate]:
        feedback = self._settings.search_feedback_docs
        if feedback:
            top = self._collection.search(
                SearchQuery(where, feedback, sparse=sparse, with_payload=False, with_vectors=True)
            )
            sparse = self._expanded(sparse, [h.vectors[SPARSE] for h in top])
        # The stored payload holds the indexed fields: no need to copy them out.
        return [
            Candidate(h.stored or {}, similarity, _hit_decoded_later(h))
            for h, similarity in bounded_bm25(self._collection, where, sparse, limit)
        ]

    def with_fingerprints(self, prints: Iterable[str]) -> dict[str, list[Knowledge]]:
        """The stored records with these fingerprints (`domain.fingerprint`), by
        fingerprint, oldest first: one lookup for all of them."""
        wanted = Where(must=(AnyOf(FINGERPRINT, tuple(sorted(set(prints)))),))
        found: dict[str, list[Knowledge]] = {}
        for record in _scan(self._collection, wanted):
            found.setdefault(record.payload[FINGERPRINT], []).append(from_payload(record.payload))
        for records in found.values():
            records.sort(key=lambda k: (k.created_at, k.id))
        return found

    def add_missing_fingerprints(self) -> int:
        """Gives their fingerprint to records stored before records kept one (until
        then, `with_fingerprints` cannot find them); returns how many got one. A record written
        meanwhile is left alone (the write gave it its fingerprint); stopped at any
        point, the next call goes on with the records still without one."""
        missing = Where(must=(Missing(FINGERPRINT),))
        total = self._collection.count(missing)
        if not total:
            return 0
        log.info("adding fingerprints to %d knowledge records stored without one", total)
        done, cursor, logged = 0, None, time.monotonic()
        while True:
            page, cursor = self._collection.scroll(missing, 256, cursor=cursor)
            self._collection.set_fields(
                [(r, {FINGERPRINT: fingerprint(from_payload(r.payload))}) for r in page]
            )
            done += len(page)
            if cursor is None:
                log.info("added fingerprints to %d knowledge records", done)
                return done
            if time.monotonic() - logged >= PROGRESS_SECONDS:
                log.info("fingerprints: %d of %d knowledge records", done, total)
                logged = time.monotonic()

    def count(self, where: Where) -> int:
        return self._collection.count(where)

    def catalog(self, where: Where, *, first: Sequence[Candidate]) -> list[Candidate]:
        """Every matching record as a candidate: those of `first` (recalled, with their
        relevance) in their order, then the others with relevance 0."""
        seen = {c.knowledge.id for c in first}
        rest = []
        cursor = None
        while True:
            page, cursor = self._collection.scroll(where, 256, cursor=cursor)
            rest += [
                Candidate(r.payload, 0.0, _decoded_later(r.payload))
                for r in page
                if r.key not in seen
            ]
            if cursor is None:
                return [*first, *rest]

    def _expanded(self, query: SparseVector, feedback: list[SparseVector]) -> SparseVector:
        """Pseudo-relevance feedback (RM3-like): the query plus the strongest terms of the
        records it found first, each record's BM25 weights normalised to sum to 1."""
        if not feedback:
            return query
        pooled: dict[int, float] = {}
        for document in feedback:
            values = document.values  # each access converts the engine's list: read once
            total = sum(values) or 1.0
            for term, value in zip(document.indices, values, strict=True):
                pooled[term] = pooled.get(term, 0.0) + value / total
        terms = dict(zip(query.indices, query.values, strict=True))
        scale = self._settings.search_feedback_weight * len(terms) / len(feedback)
        strongest = heapq.nlargest(
            self._settings.search_feedback_terms, pooled.items(), key=lambda item: item[1]
        )
        for term, value in strongest:
            terms[term] = terms.get(term, 0.0) + scale * value
        return SparseVector(list(terms), list(terms.values()))

    def scan(self, where: Where) -> Iterator[Knowledge]:
        """Every matching record, in no particular order."""
        return (from_payload(r.payload) for r in _scan(self._collection, where))

    def page(
        self, where: Where, order: str, page_size: int, page_token: str
    ) -> tuple[list[Knowledge], str]:
        """One page in descending `order` ("updated" or "confidence"), and the next token.

        Tokens are keyset cursors: the last sort value and the ids already returned with
        it, tied to the filter so a token cannot be replayed against another query.
        """
        filters = (where, order)
        start_from, seen = (
            _cursor(paging.read_token(page_token, filters)) if page_token else (None, [])
        )
        field_name = ORDER_FIELDS[order]
        must_not = where.must_not + ((HasKey(tuple(seen)),) if seen else ())
        page, _ = self._collection.scroll(
            Where(must=where.must, must_not=must_not, should=where.should),
            page_size + 1,
            order=Order(field_name, descending=True, start_from=start_from),
        )
        records = [from_payload(r.payload) for r in page[:page_size]]
        if len(page) <= page_size:
            return records, ""
        last_value = _sort_value(records[-1], field_name)
        ties = [r.id for r in records if _sort_value(r, field_name) == last_value]
        if start_from == last_value:
            ties = seen + ties
        return records, paging.write_token({"v": last_value, "ids": ties}, filters)


EVERYTHING = Where()


def _scan(collection: VectorCollection, where: Where = EVERYTHING) -> Iterator[Record]:
    cursor = None
    while True:
        page, cursor = collection.scroll(where, 256, cursor=cursor)
        yield from page
        if cursor is None:
            return


def _sort_value(record: Knowledge, field_name: str) -> float:
    return record.updated_at if field_name == "updated_at" else confidence_rank(record)


def _cursor(cursor: object) -> tuple[float, list[str]]:
    """The last sort value and the ids already returned with it."""
    try:
        return float(cursor["v"]), [str(i) for i in cursor["ids"]]  # type: ignore[index]
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidArgument("page_token", "is not a token this service issued") from exc
