"""One small interface over a Qdrant collection, with two adapters behind it.

`EdgeCollection` (knowhub_server.common.storage.edge_store) runs the Qdrant engine
in-process through qdrant-edge-py; `RemoteCollection`
(knowhub_server.common.storage.qdrant_store) talks to a Qdrant server through
qdrant-client. Services see only this module's types, so one contract suite
covers both.

Records are addressed by the service's own string key (a knowledge id, a resource path);
adapters map it to a UUID point id. A record's payload is stored with its indexed fields
as native values (for filters and ordering) and everything else as one JSON string, plus
a second one for the schema's bulk fields, which searches leave out: the engine converts
each native value separately, so this keeps writes and reads cheap.

Each record carries a `version` that the adapter manages: `compare_and_set` writes only
if the version is unchanged, then reads the record back to learn whether its own write
won (both engines skip a failed condition silently).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import heapq
import json
import math
import random
import secrets
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qdrant_edge import SparseVector

from knowhub_server.common.base.errors import Aborted, NotFound

if TYPE_CHECKING:
    from knowhub_server.common.storage.sparse_search import SparseSearch

SPARSE = "bm25"
DENSE = "dense"
VERSION_KEY = "_version"
TOKEN_KEY = "_write_token"
KEY_FIELD = "_key"
DOC_FIELD = "_doc"
BULK_FIELD = "_bulk"
RECENT_WRITES_KEY = "_recent_writes"  # inside the bulk JSON
RECENT_WRITES_KEEP = 64

Payload = dict[str, Any]
Vectors = dict[str, Any]  # {"bm25": SparseVector, "dense": list[float]}


@functools.lru_cache(maxsize=65_536)
def point_id(key: str) -> str:
    """The UUID point id of a record key; the same in every adapter."""
    digest = hashlib.blake2b(key.encode(), digest_size=16, person=b"knowhub.key").hexdigest()
    # str(uuid.UUID(bytes=...)) of the digest, without building the UUID.
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"


# ---- Filters -------------------------------------------------------------------------


@dataclass(frozen=True)
class Eq:
    key: str
    value: str | int


@dataclass(frozen=True)
class AnyOf:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Range:
    key: str
    gte: float | None = None
    lte: float | None = None
    gt: float | None = None
    lt: float | None = None


@dataclass(frozen=True)
class HasKey:
    keys: tuple[str, ...]


@dataclass(frozen=True)
class HasPoint:
    """Records with one of these point ids (as search hits name them: `Hit.point_id`, or
    the engine's own `Hit.engine_id`)."""

    point_ids: tuple[object, ...]


@dataclass(frozen=True)
class Missing:
    """Records without the field (or with it empty)."""

    key: str


Condition = Eq | AnyOf | Range | HasKey | HasPoint | Missing


@dataclass(frozen=True)
class Where:
    """All of `must`, none of `must_not`, and at least one of `should` when given."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.must or self.must_not or self.should)

    def __hash__(self) -> int:
        """Computed once: a search looks up kept readings by (filter, term) many times."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.must, self.must_not, self.should))
            object.__setattr__(self, "_hash", cached)
        return cached


# ---- Schema and results ---------------------------------------------------------------


@dataclass(frozen=True)
class CollectionSchema:
    """What a service's collection holds and indexes."""

    name: str
    dense_dim: int | None = None
    embedding_model: str | None = None
    keyword_fields: tuple[str, ...] = ()
    integer_fields: tuple[str, ...] = ()
    float_fields: tuple[str, ...] = ()
    bulk_fields: tuple[str, ...] = ()  # top-level payload keys searches leave out
    # The keyword field most searches filter on (who may see a record): the engine keeps
    # its records together on disk and links them in the HNSW graph of their own.
    tenant_field: str | None = None

    @property
    def indexed_fields(self) -> tuple[str, ...]:
        """Top-level payload keys kept as native values, for filters and ordering."""
        return self.keyword_fields + self.integer_fields + self.float_fields

    @functools.cached_property
    def stored_apart(self) -> frozenset[str]:
        """Top-level payload keys kept out of the record's main JSON document."""
        return frozenset(self.indexed_fields + self.bulk_fields)

    def manifest(self) -> dict[str, Any]:
        """What a store must have been built with to be opened with this schema."""
        return {
            "format": 1,
            "sparse": "bm25-multilingual-v1",
            "embedding_model": self.embedding_model if self.dense_dim else None,
            "dense_dim": self.dense_dim,
        }


@dataclass(frozen=True)
class IndexTuning:
    """How the engine indexes dense vectors (the KNOWHUB_VECTOR_* settings).

    Segments whose vectors take more than `indexing_threshold_kb` get an HNSW graph;
    smaller ones, and filters that leave fewer vectors than `full_scan_threshold_kb`
    holds, are searched exhaustively (exact)."""

    hnsw_m: int = 16
    hnsw_ef_construct: int = 100
    hnsw_ef: int = 256  # candidates a dense search keeps while walking the graph
    # ACORN for filters that leave under 40% of a segment's vectors (and more than a full
    # scan takes): it walks neighbours of neighbours, so few matches still connect.
    acorn: bool = True
    # Int8 copies of the dense vectors walk the graph (about a third faster); the best
    # candidates are then rescored with the vectors themselves, so scores stay exact.
    quantize_dense: bool = True
    full_scan_threshold_kb: int = 10_000
    indexing_threshold_kb: int = 10_000
    # Segments stop growing by merges past this: a merge rebuilds the merged graph.
    max_segment_size_kb: int = 32_000
    # Embedded engine only: records written since the last optimisation after which the
    # process optimises (a Qdrant server optimises on its own).
    optimize_after_writes: int = 10_000
    # Embedded engine only: seconds without writes after which a collection indexes what
    # was written since its last optimisation, when that is enough dense vectors for a
    # graph (more than `indexing_threshold_kb`); 0: only after `optimize_after_writes`.
    optimize_when_idle_seconds: float = 60.0
    # BM25's term statistics from the records a search can see (its corpus), or from the
    # whole collection: faster, but then scores move with other tenants' words.
    tenant_idf: bool = True
    # Embedded engine only: threads of each collection's search pool, which reads a
    # query's segments in parallel (0: one per CPU, the engine's default).
    search_threads: int = 1


DEFAULT_TUNING = IndexTuning()
QUANTILE = 0.99  # int8 steps of quantized vectors span this share of the values
# A quantized search rescores this many times the records it returns with the vectors.
OVERSAMPLING = 2.0


class StoreMismatch(RuntimeError):
    """The collection on disk was built with another embedding model or size."""


class EmbeddingChanged(StoreMismatch):
    """The settings ask for other vectors than the collection holds: `problem` says which,
    the message adds the two ways out."""

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"{problem}. Run `knowhub reindex` to rebuild its vectors, or "
            "restore the embedding settings it was built with."
        )
        self.problem = problem


def check_manifest(schema: CollectionSchema, found: dict[str, Any], where: str) -> None:
    expected = schema.manifest()
    if found == expected:
        return

    def describe(m: dict[str, Any]) -> str:
        if not m.get("dense_dim"):
            return "BM25 only (no embedding model)"
        return f"embedding model {m.get('embedding_model')!r} with {m.get('dense_dim')} dimensions"

    raise EmbeddingChanged(
        f"the {schema.name} store at {where} was built with "
        f"{describe(found)}, but the settings ask for {describe(expected)}"
    )


@dataclass
class Record:
    key: str
    payload: Payload
    version: int = 0
    vectors: Vectors = field(default_factory=dict)
    write_token: int = 0
    # The write tokens of the last compare_and_set writes, oldest first (this one last).
    recent_writes: tuple[int, ...] = ()


class Hit:
    """One search result. `fields` holds the record's indexed fields, readable at once;
    `record` decodes the whole record on first use (None when the search asked for no
    payload); `vectors` is empty unless the search asked for them.

    A plain class with slots: a hybrid search makes a hundred or more of them, and a
    frozen dataclass's construction and `functools.cached_property` cost several times
    as much."""

    __slots__ = ("_record", "engine_id", "score", "stored", "vectors")

    def __init__(
        self,
        engine_id: object,  # the point id as the engine returned it (a UUID or its text)
        score: float,
        stored: Payload | None = None,  # the payload as the engine returned it
        vectors: Vectors | None = None,
    ) -> None:
        self.engine_id = engine_id
        self.score = score
        self.stored = stored
        self.vectors: Vectors = {} if vectors is None else vectors
        self._record: Record | None = None

    @property
    def point_id(self) -> str:
        """The point id as text; converted when asked, since most searches never ask."""
        return str(self.engine_id)

    @property
    def fields(self) -> Payload:
        return {k: v for k, v in (self.stored or {}).items() if not k.startswith("_")}

    @property
    def record(self) -> Record | None:
        """The whole record, decoded on first use."""
        if self._record is None and self.stored is not None:
            self._record = record_from_payload(dict(self.stored))
        return self._record


@dataclass(frozen=True)
class Order:
    """Scroll in the order of a float payload field, resuming after `start_from`."""

    key: str
    descending: bool = True
    start_from: float | None = None


@dataclass(frozen=True)
class SearchQuery:
    """Nearest records to one vector: BM25 (`sparse`) or dense, never both.

    BM25's term statistics (IDF) come from the records of `corpus` (by default `where`):
    never from records the search cannot return, so no caller's scores tell anything of
    records it cannot see (another tenant's words)."""

    where: Where
    limit: int
    sparse: SparseVector | None = None
    dense: Sequence[float] | None = None
    with_payload: bool = True
    with_bulk: bool = False  # include the schema's bulk fields in the hits
    with_vectors: bool = False
    corpus: Where | None = None
    # Set by `VectorCollection.search_batch` alone: the engine takes the statistics of the
    # whole collection (the query's term weights already carry its corpus's, if wanted).
    collection_idf: bool = False

    def __post_init__(self) -> None:
        if (self.sparse is None) == (self.dense is None):
            raise ValueError("a search takes exactly one of a sparse or a dense vector")

    @property
    def idf_corpus(self) -> Where:
        """The records BM25's statistics come from; a search's records are among them."""
        return self.where if self.corpus is None else self.corpus


class WriteGate:
    """The writes of one store's collections pass through it; a backup closes it to read
    every collection as of one instant. Closing waits for the writes under way; writes
    that come while it is closed wait until it opens (reads go on)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._writing = 0
        self._closed = False

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._closed)
            self._writing += 1
        try:
            yield
        finally:
            with self._changed:
                self._writing -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def closed(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._closed)
            self._closed = True
            self._changed.wait_for(lambda: self._writing == 0)
        try:
            yield
        finally:
            with self._changed:
                self._closed = False
                self._changed.notify_all()


# ---- The interface --------------------------------------------------------------------


class VectorCollection(ABC):
    """A service's records, their vectors and payload, in one Qdrant collection."""

    schema: CollectionSchema
    gate: WriteGate  # the store's: every write of this collection passes through it
    sparse: SparseSearch  # plans BM25 searches; set by the adapter

    @abstractmethod
    def _write(
        self, records: Sequence[Record], *, if_version: int | None, insert_only: bool
    ) -> None:
        """Upserts records as they are (version and token already in the payload)."""

    @abstractmethod
    def retrieve_points(
        self, point_ids: Sequence[str], *, with_vectors: bool = False, with_bulk: bool = True
    ) -> list[Record]:
        """The records that exist among these point ids, in no particular order."""

    @abstractmethod
    def _write_tokens(self, keys: Sequence[str]) -> dict[str, int]:
        """The write token of each existing record among `keys`."""

    @abstractmethod
    def _delete(self, keys: Sequence[str]) -> None: ...

    @abstractmethod
    def _set_fields(self, changes: Sequence[tuple[Record, Payload]]) -> None:
        """Sets the fields of each record that still has the record's write token."""

    def set_fields(self, changes: Sequence[tuple[Record, Payload]]) -> None:
        """Sets indexed fields of records as they were read: a record written since (its
        write token changed) or deleted is left as it is. Its other fields, vectors,
        version and write token stay: for fields derived from the record, which every
        write computes again."""
        for _, fields in changes:
            unindexed = set(fields) - set(self.schema.indexed_fields)
            if unindexed:
                raise ValueError(f"set_fields sets indexed fields only, not {sorted(unindexed)}")
        if changes:
            with self.gate.writing():
                self._set_fields(changes)

    def delete(self, keys: Sequence[str]) -> None:
        with self.gate.writing():
            self._delete(keys)
        self.sparse.wrote(len(keys), None)

    def _gated_write(
        self, records: Sequence[Record], *, if_version: int | None, insert_only: bool
    ) -> None:
        with self.gate.writing():
            self._write(records, if_version=if_version, insert_only=insert_only)
        self.sparse.wrote(
            len(records), set().union(*(v.indices for r in records if (v := r.vectors.get(SPARSE))))
        )

    @abstractmethod
    def _search_batch(self, queries: Sequence[SearchQuery]) -> list[list[Hit]]:
        """The searches as given: BM25 with the statistics of the whole collection when
        `collection_idf`, else of the query's corpus."""

    def search_batch(self, queries: Sequence[SearchQuery]) -> list[list[Hit]]:
        """Several searches planned together; one list of hits per query, best first."""
        return self.sparse.search(self, queries)

    def search_bounded(
        self, queries: Sequence[SearchQuery], where: Where, sparse: SparseVector
    ) -> tuple[list[list[Hit]], list[float]]:
        """`search_batch`, and for each of `sparse`'s terms the best score one record of
        `where` gets on that term alone (0 where none holds it), in as few engine calls
        as the two allow."""
        return self.sparse.search_bounded(self, queries, where, sparse)

    @abstractmethod
    def estimate(self, where: Where) -> int:
        """About how many records match, from the indexes' statistics (fast)."""

    @abstractmethod
    def segments(self) -> int:
        """The segments the collection's records are in: a search visits each, and a
        filter naming points looks each point up in each."""

    @abstractmethod
    def scroll(
        self,
        where: Where,
        limit: int,
        *,
        order: Order | None = None,
        cursor: str | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[Record], str | None]:
        """A page of records and the cursor of the next page (None at the end).

        Without `order`, pages follow the point ids and `cursor` resumes them. With
        `order`, records come sorted by that field; resume with `order.start_from` and
        exclude the ties already seen with `where` (the cursor is then always None).
        """

    @abstractmethod
    def count(self, where: Where) -> int: ...

    @abstractmethod
    def flush(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    # -- Shared logic built on the primitives above --

    def retrieve(self, keys: Sequence[str], *, with_vectors: bool = False) -> list[Record]:
        """The records that exist among `keys`, in no particular order."""
        return self.retrieve_points([point_id(k) for k in keys], with_vectors=with_vectors)

    def search(self, query: SearchQuery) -> list[Hit]:
        return self.search_batch([query])[0]

    def get(self, key: str, *, with_vectors: bool = False) -> Record | None:
        found = self.retrieve([key], with_vectors=with_vectors)
        return found[0] if found else None

    def put(self, records: Sequence[Record]) -> None:
        """Writes records unconditionally, each as version 1 or its given version."""
        self._gated_write(
            [_stamped(r, max(r.version, 1)) for r in records], if_version=None, insert_only=False
        )

    def insert(self, records: Sequence[Record]) -> list[bool]:
        """Creates records whose keys do not exist yet; True for each this call created,
        also when another write has changed it since (a save of a new resource racing
        another's)."""
        if not records:
            return []  # a Qdrant server refuses an empty write
        stamped = [_stamped(r, 1) for r in records]
        if not self.exclusive:  # kept among its recent writes by writes built on it
            for record in stamped:
                record.recent_writes = (record.write_token,)
        with self._write_guard():
            self._gated_write(stamped, if_version=None, insert_only=True)
            tokens = self._write_tokens([r.key for r in stamped])
        return [self._created(r, tokens.get(r.key)) for r in stamped]

    def _created(self, stamped: Record, token: int | None) -> bool:
        """Whether an insert created the record whose write token is now `token`. With
        other processes writing, one may have built on it before the read-back: its
        token is then among the record's recent writes."""
        if token == stamped.write_token:
            return True
        if self.exclusive or token is None:
            return False
        found = self.get(stamped.key)
        return found is not None and stamped.write_token in found.recent_writes

    def compare_and_set(
        self, key: str, change: Callable[[Record], Record], *, attempts: int = 200
    ) -> Record:
        """Applies `change` to the current record until the write wins a race.

        `change` gets a freshly read record (with vectors) and returns the new one; it may
        raise to give up. Several processes may do this on one record at once.
        """
        for attempt in range(attempts):
            current = self.get(key, with_vectors=True)
            if current is None:
                raise NotFound(f"{self.schema.name} {key!r} does not exist")
            stamped = _stamped(change(current), current.version + 1)
            stamped.recent_writes = (*current.recent_writes, stamped.write_token)[
                -RECENT_WRITES_KEEP:
            ]
            with self._write_guard():
                self._gated_write([stamped], if_version=current.version, insert_only=False)
                if self._won(stamped):
                    return stamped
            time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
        raise Aborted(f"{self.schema.name} {key!r} is changing too often; try again")

    # True when no other process can write the store (Edge, a local-mode client): the
    # adapter's `_write_guard` then holds off this process's other writers until the
    # read-back, which makes the read-back exact.
    exclusive: bool = False

    def _write_guard(self) -> contextlib.AbstractContextManager[Any]:
        """Held from a conditional write to its read-back; a lock when `exclusive`."""
        return contextlib.nullcontext()

    def _won(self, stamped: Record) -> bool:
        """Whether this write applied. With other processes writing, the current token is
        not enough: another writer may already have built on this write, and retrying
        would apply the change twice; so each record keeps its recent write tokens."""
        if self._write_tokens([stamped.key]).get(stamped.key) == stamped.write_token:
            return True
        if self.exclusive:
            return False  # nobody wrote since: the condition failed
        found = self.get(stamped.key)
        if found is None:
            return False
        if stamped.write_token in found.recent_writes:
            return True
        if found.version - len(found.recent_writes) >= stamped.version:
            raise Aborted(
                f"{self.schema.name} {stamped.key!r} changed too often to tell "
                "whether this write applied; read it and retry if needed"
            )
        return False


def _stamped(record: Record, version: int) -> Record:
    return Record(
        key=record.key,
        payload=record.payload,
        version=version,
        vectors=record.vectors,
        write_token=secrets.randbits(62),
    )


# Compact, as json.dumps(ensure_ascii=False, separators=(",", ":")) writes, without
# building an encoder per call.
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dump_json(value: Any) -> str:
    return _COMPACT_JSON.encode(value)


def _load_json(text: str) -> Any:
    """Reads any stored document: those json wrote, and those an earlier version wrote
    through orjson (the same JSON; ones it left to json lead with a space)."""
    return json.loads(text)


def stored_payload(record: Record, schema: CollectionSchema) -> Payload:
    """The payload as written: indexed fields native, the rest as JSON, and bookkeeping."""
    payload = record.payload
    stored = {k: payload[k] for k in schema.indexed_fields if k in payload}
    apart = schema.stored_apart
    doc = {k: v for k, v in payload.items() if k not in apart}
    doc[KEY_FIELD] = record.key
    stored[DOC_FIELD] = _dump_json(doc)
    bulk = {k: payload[k] for k in schema.bulk_fields if payload.get(k)}
    if record.recent_writes:
        bulk[RECENT_WRITES_KEY] = record.recent_writes
    if bulk:
        stored[BULK_FIELD] = _dump_json(bulk)
    stored[VERSION_KEY] = record.version
    stored[TOKEN_KEY] = record.write_token
    return stored


def record_from_payload(stored: Payload, vectors: Vectors | None = None) -> Record:
    """Rebuilds a Record from a stored payload."""
    version = stored.pop(VERSION_KEY, 0)
    token = stored.pop(TOKEN_KEY, 0)
    payload = _load_json(stored.pop(DOC_FIELD))
    key = payload.pop(KEY_FIELD)
    bulk = stored.pop(BULK_FIELD, None)
    payload.update(stored)
    recent: tuple[int, ...] = ()
    if bulk:
        bulk_fields = _load_json(bulk)
        recent = tuple(bulk_fields.pop(RECENT_WRITES_KEY, ()))
        payload.update(bulk_fields)
    return Record(
        key=key,
        payload=payload,
        version=version,
        vectors=vectors or {},
        write_token=token,
        recent_writes=recent,
    )


class VectorStore(ABC):
    """Opens a service's collections, checking they match the schema."""

    gate: WriteGate  # shared by the collections it opens

    @abstractmethod
    def open(self, schema: CollectionSchema) -> VectorCollection: ...

    @abstractmethod
    def rebuild(
        self,
        schema: CollectionSchema,
        revectorize: Callable[[list[Record]], list[Vectors]],
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Copies every record into a collection built with `schema`, replacing the old one.

        Returns the number of records copied. The old collection stays intact until the
        new one is complete.
        """

    @abstractmethod
    def opened(self) -> list[VectorCollection]:
        """The collections this process opened, one per name (what a backup copies)."""

    @abstractmethod
    def close(self) -> None: ...


@dataclass(frozen=True)
class HybridFusion:
    """BM25 and dense search fused into one relevance in 0..1 that depends on the query
    and the record alone, never on which other records were recalled:

        (1 - dense_weight) * BM25 / bound + dense_weight * cosine (clipped to 0..1)

    `bound` is the best BM25 score the query can reach among the searched records: the
    sum, over the query's terms, of the best score any one record gets on that term
    alone. Scaling by the best or worst candidate instead (min-max) stretches a flat,
    uninformative list as far as a decisive one; these scores keep how good a match is.
    """

    pool: int  # candidates: the top `pool` of each search
    dense_weight: float

    def search(
        self,
        collection: VectorCollection,
        where: Where,
        sparse: SparseVector,
        dense: Sequence[float],
        limit: int,
    ) -> list[tuple[str, float]]:
        """The `limit` most relevant records as (point id, relevance), best first.

        A candidate only one search found gets its score in the other from one more call
        (no BM25 score: no shared term), unless even its best possible relevance (that
        score at the last of the other search's pool) cannot reach the `limit` best."""
        pool = max(limit, self.pool)
        (bm25, cosine), per_term = collection.search_bounded(
            [
                SearchQuery(where, pool, sparse=sparse, with_payload=False),
                SearchQuery(where, pool, dense=dense, with_payload=False),
            ],
            where,
            sparse,
        )
        bound = sum(per_term)

        def relevance(bm25_score: float, cosine_score: float) -> float:
            lexical = bm25_score / bound if bound else 0.0
            return (1.0 - self.dense_weight) * lexical + self.dense_weight * min(
                max(cosine_score, 0.0), 1.0
            )

        # Keyed by the engine's ids (`_id_key`): text is made for the `limit` returned alone.
        engine_ids = {_id_key(h.engine_id): h.engine_id for h in (*bm25, *cosine)}
        bm25_of = {_id_key(h.engine_id): h.score for h in bm25}
        cosine_of = {_id_key(h.engine_id): h.score for h in cosine}
        lexical_only = [p for p in bm25_of if p not in cosine_of]
        dense_only = [p for p in cosine_of if p not in bm25_of]
        if len(bm25) < pool:  # every record sharing a term is in the BM25 pool
            bm25_of.update(dict.fromkeys(dense_only, 0.0))
            dense_only = []
        # The relevance the `limit`-th best candidate reaches at least (an unknown score 0).
        lowest = sorted(
            (
                relevance(bm25_of.get(p, 0.0), cosine_of.get(p, 0.0))
                for p in {**bm25_of, **cosine_of}
            ),
            reverse=True,
        )
        needed = lowest[limit - 1] if len(lowest) >= limit else -math.inf
        cosine_floor = cosine[-1].score if len(cosine) == pool else 1.0
        bm25_floor = bm25[-1].score if len(bm25) == pool else 0.0
        lexical_only = [p for p in lexical_only if relevance(bm25_of[p], cosine_floor) >= needed]
        dense_only = [p for p in dense_only if relevance(bm25_floor, cosine_of[p]) >= needed]
        _score_the_rest(
            collection,
            where,
            sparse,
            dense,
            bm25_of,
            cosine_of,
            tuple(engine_ids[p] for p in lexical_only),
            tuple(engine_ids[p] for p in dense_only),
        )
        known = [
            (p, relevance(bm25_of[p], cosine_of[p])) for p in bm25_of.keys() & cosine_of.keys()
        ]
        # Equal relevance in point id order, so both adapters answer alike (a UUID's
        # number sorts as its text does).
        best = heapq.nsmallest(limit, known, key=lambda item: (-item[1], item[0]))
        return [(str(engine_ids[p]), score) for p, score in best]


def bounded_bm25(
    collection: VectorCollection, where: Where, sparse: SparseVector, limit: int
) -> list[tuple[Hit, float]]:
    """BM25 alone as a similarity in 0..1 that depends on the query and the record, never
    on which other records were recalled: the score over the query's bound. The `limit`
    best records as (hit with payload, similarity), best first.

    The bound is `HybridFusion`'s, except for query terms no record holds: each counts as
    much as the best-scoring term some record holds (a term no record holds is rarer than
    any of those, so a record holding it would score at least as much on it). Otherwise
    a query whose other words no record holds would give its one weak match 1.0.
    """
    (hits,), per_term = collection.search_bounded(
        [SearchQuery(where, limit, sparse=sparse)], where, sparse
    )
    best = [score for score in per_term if score > 0]
    bound = sum(best) + (len(per_term) - len(best)) * max(best, default=0.0)
    return [(h, min(h.score / bound, 1.0) if bound > 0 else 0.0) for h in hits]


def _score_the_rest(
    collection: VectorCollection,
    where: Where,
    sparse: SparseVector,
    dense: Sequence[float],
    bm25_of: dict[object, float],
    cosine_of: dict[object, float],
    lexical_only: tuple[object, ...],
    dense_only: tuple[object, ...],
) -> None:
    """Adds the cosine of `lexical_only` and the BM25 score of `dense_only` candidates
    (0 for one without a shared term) to the two maps (keyed by `_id_key`), in one call."""
    queries = []
    if dense_only:  # the same term statistics as the first search: over `where`
        queries.append(
            SearchQuery(
                among(where, dense_only),
                len(dense_only),
                sparse=sparse,
                with_payload=False,
                corpus=where,
            )
        )
        bm25_of.update(dict.fromkeys(map(_id_key, dense_only), 0.0))
    if lexical_only:
        queries.append(
            SearchQuery(
                among(where, lexical_only), len(lexical_only), dense=dense, with_payload=False
            )
        )
        cosine_of.update(dict.fromkeys(map(_id_key, lexical_only), 0.0))  # one without a vector
    for query, hits in zip(
        queries, collection.search_batch(queries) if queries else [], strict=True
    ):
        (bm25_of if query.sparse is not None else cosine_of).update(
            (_id_key(h.engine_id), h.score) for h in hits
        )


def _id_key(engine_id: object) -> object:
    """A point id as fusion keys its maps: a UUID's number (hashing a UUID runs Python
    code, hashing its number does not; it sorts as the UUID's text does), any other id
    as it is."""
    return engine_id.int if isinstance(engine_id, uuid.UUID) else engine_id


def among(where: Where, point_ids: tuple[object, ...]) -> Where:
    return Where(
        must=(*where.must, HasPoint(point_ids)), must_not=where.must_not, should=where.should
    )


def copy_records(
    source: VectorCollection,
    target: VectorCollection,
    revectorize: Callable[[list[Record]], list[Vectors]],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Copies every record page by page with freshly computed vectors; keeps versions.
    `progress` gets the records copied so far and the total."""
    copied, cursor = 0, None
    total = source.count(Where()) if progress else 0
    while True:
        page, cursor = source.scroll(Where(), 256, cursor=cursor)
        if page:
            for record, vectors in zip(page, revectorize(page), strict=True):
                record.vectors = vectors
            target.put(page)
            copied += len(page)
            if progress:
                progress(copied, max(total, copied))
        if cursor is None:
            return copied


def rewrite_payloads(
    collection: VectorCollection, change: Callable[[Payload], Payload | None]
) -> int:
    """Rewrites the payload of every record `change` gives a new one for (None: leave
    it), keeping its vectors, each write a compare-and-set; returns how many changed."""
    changed, cursor = 0, None
    while True:
        page, cursor = collection.scroll(Where(), 256, cursor=cursor)
        for record in page:
            if change(record.payload) is None:
                continue

            def apply(current: Record) -> Record:
                payload = change(current.payload)
                return Record(
                    key=current.key, payload=payload or current.payload, vectors=current.vectors
                )

            collection.compare_and_set(record.key, apply)
            changed += 1
        if cursor is None:
            return changed
