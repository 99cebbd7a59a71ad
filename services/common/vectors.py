"""One small interface over a Qdrant collection, with two adapters behind it.

`EdgeCollection` (services.common.edge_store) runs the Qdrant engine in-process through
qdrant-edge-py; `RemoteCollection` (services.common.qdrant_store) talks to a Qdrant server
through qdrant-client. Services see only this module's types, so one contract suite
covers both.

Records are addressed by the service's own string key (a knowledge id, a resource path);
adapters map it to a UUID point id. Each record carries a `version` that the adapter
manages: `compare_and_set` writes only if the version is unchanged, then reads the record
back to learn whether its own write won (both engines skip a failed condition silently).
"""

from __future__ import annotations

import random
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qdrant_edge import SparseVector

from services.common.errors import Aborted, NotFound

SPARSE = "bm25"
DENSE = "dense"
VERSION_KEY = "_version"
TOKEN_KEY = "_write_token"
KEY_FIELD = "_key"
_KEY_NAMESPACE = uuid.UUID("6f0b7d8e-8a4e-4a39-9a55-1f3c7e0d2b61")

Payload = dict[str, Any]
Vectors = dict[str, Any]  # {"bm25": SparseVector, "dense": list[float]}


def point_id(key: str) -> str:
    """The UUID point id of a record key; the same in every adapter."""
    return str(uuid.uuid5(_KEY_NAMESPACE, key))


# ---- Filters -------------------------------------------------------------------------

@dataclass(frozen=True)
class Eq:
    key: str
    value: str | int | bool


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


Condition = Eq | AnyOf | Range | HasKey


@dataclass(frozen=True)
class Where:
    """All of `must`, none of `must_not`, and at least one of `should` when given."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.must or self.must_not or self.should)


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

    def manifest(self) -> dict[str, Any]:
        """What a store must have been built with to be opened with this schema."""
        return {
            "format": 1,
            "sparse": "bm25-multilingual-v1",
            "embedding_model": self.embedding_model if self.dense_dim else None,
            "dense_dim": self.dense_dim,
        }


class StoreMismatch(RuntimeError):
    """The collection on disk was built with another embedding model or size."""


def check_manifest(schema: CollectionSchema, found: dict[str, Any], where: str) -> None:
    expected = schema.manifest()
    if found == expected:
        return
    def describe(m: dict[str, Any]) -> str:
        if not m.get("dense_dim"):
            return "BM25 only (no embedding model)"
        return f"embedding model {m.get('embedding_model')!r} with {m.get('dense_dim')} dimensions"
    raise StoreMismatch(
        f"the {schema.name} store at {where} was built with {describe(found)}, but the "
        f"settings ask for {describe(expected)}. Run `knowhub reindex` to rebuild its vectors, "
        "or restore the KNOWHUB_EMBEDDING_* settings it was built with."
    )


@dataclass
class Record:
    key: str
    payload: Payload
    version: int = 0
    vectors: Vectors = field(default_factory=dict)
    write_token: str = ""


@dataclass(frozen=True)
class Hit:
    key: str
    score: float
    payload: Payload


@dataclass(frozen=True)
class Order:
    """Scroll in the order of a float payload field, resuming after `start_from`."""

    key: str
    descending: bool = True
    start_from: float | None = None


@dataclass(frozen=True)
class SearchQuery:
    """Recall by BM25, dense, or both fused with reciprocal rank fusion."""

    where: Where
    limit: int
    sparse: SparseVector | None = None
    dense: Sequence[float] | None = None
    prefetch_limit: int = 0
    rrf_k: int = 60
    weights: tuple[float, float] | None = None  # (sparse, dense) for weighted RRF
    with_vectors: bool = False
    payload_exclude: tuple[str, ...] = ()  # payload paths the hits leave out


# ---- The interface --------------------------------------------------------------------

class VectorCollection(ABC):
    """A service's records, their vectors and payload, in one Qdrant collection."""

    schema: CollectionSchema

    @abstractmethod
    def _write(self, records: Sequence[Record], *, if_version: int | None,
               insert_only: bool) -> None:
        """Upserts records as they are (version and token already in the payload)."""

    @abstractmethod
    def retrieve(self, keys: Sequence[str], *, with_vectors: bool = False) -> list[Record]:
        """The records that exist among `keys`, in no particular order."""

    @abstractmethod
    def delete(self, keys: Sequence[str]) -> None: ...

    @abstractmethod
    def search(self, query: SearchQuery) -> list[Hit]: ...

    @abstractmethod
    def scroll(self, where: Where, limit: int, *, order: Order | None = None,
               cursor: str | None = None,
               with_vectors: bool = False) -> tuple[list[Record], str | None]:
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

    def get(self, key: str, *, with_vectors: bool = False) -> Record | None:
        found = self.retrieve([key], with_vectors=with_vectors)
        return found[0] if found else None

    def put(self, records: Sequence[Record]) -> None:
        """Writes records unconditionally, each as version 1 or its given version."""
        self._write([_stamped(r, max(r.version, 1)) for r in records],
                    if_version=None, insert_only=False)

    def insert(self, records: Sequence[Record]) -> list[bool]:
        """Creates records whose keys do not exist yet; True for each this call created."""
        stamped = [_stamped(r, 1) for r in records]
        self._write(stamped, if_version=None, insert_only=True)
        tokens = {r.key: r.write_token for r in self.retrieve([r.key for r in stamped])}
        return [tokens.get(r.key) == r.write_token for r in stamped]

    def compare_and_set(self, key: str, change: Callable[[Record], Record], *,
                        attempts: int = 200) -> Record:
        """Applies `change` to the current record until the write wins a race.

        `change` gets a freshly read record (with vectors) and returns the new one; it may
        raise to give up. Several processes may do this on one record at once.
        """
        for attempt in range(attempts):
            current = self.get(key, with_vectors=True)
            if current is None:
                raise NotFound(f"{self.schema.name} {key!r} does not exist")
            proposed = change(current)
            stamped = _stamped(proposed, current.version + 1)
            self._write([stamped], if_version=current.version, insert_only=False)
            if self._won(stamped):
                return stamped
            time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
        raise Aborted(f"{self.schema.name} {key!r} is changing too often; try again")

    def _won(self, stamped: Record) -> bool:
        found = self.get(stamped.key)
        return found is not None and found.write_token == stamped.write_token


def _stamped(record: Record, version: int) -> Record:
    return Record(key=record.key, payload=record.payload, version=version,
                  vectors=record.vectors, write_token=uuid.uuid4().hex)


def stored_payload(record: Record) -> Payload:
    """The payload as written: the service's fields plus the adapter's bookkeeping."""
    return {**record.payload, KEY_FIELD: record.key, VERSION_KEY: record.version,
            TOKEN_KEY: record.write_token}


def record_from_payload(payload: Payload, vectors: Vectors | None = None) -> Record:
    """Rebuilds a Record from a stored payload, taking the adapter's fields out."""
    key = payload.pop(KEY_FIELD)
    version = payload.pop(VERSION_KEY, 0)
    token = payload.pop(TOKEN_KEY, "")
    return Record(key=key, payload=payload, version=version, vectors=vectors or {},
                  write_token=token)


class VectorStore(ABC):
    """Opens a service's collections, checking they match the schema."""

    @abstractmethod
    def open(self, schema: CollectionSchema) -> VectorCollection: ...

    @abstractmethod
    def rebuild(self, schema: CollectionSchema,
                revectorize: Callable[[list[Record]], list[Vectors]],
                progress: Callable[[int], None] | None = None) -> int:
        """Copies every record into a collection built with `schema`, replacing the old one.

        Returns the number of records copied. The old collection stays intact until the
        new one is complete.
        """

    @abstractmethod
    def close(self) -> None: ...


def copy_records(source: VectorCollection, target: VectorCollection,
                 revectorize: Callable[[list[Record]], list[Vectors]],
                 progress: Callable[[int], None] | None = None) -> int:
    """Copies every record page by page with freshly computed vectors; keeps versions."""
    copied, cursor = 0, None
    while True:
        page, cursor = source.scroll(Where(), 256, cursor=cursor)
        if page:
            for record, vectors in zip(page, revectorize(page), strict=True):
                record.vectors = vectors
            target.put(page)
            copied += len(page)
            if progress:
                progress(copied)
        if cursor is None:
            return copied
