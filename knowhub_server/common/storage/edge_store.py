"""The embedded adapter: the Qdrant engine in-process through qdrant-edge-py.

One EdgeShard directory per collection under `<data_dir>/qdrant/`, with a
`knowhub-manifest.json` beside the engine's files recording how its vectors were built.

The embedded engine runs no optimiser of its own: writes pile up in one appendable
segment, searched exhaustively, until `EdgeShard.optimize` turns it into indexed segments
(an HNSW graph for dense vectors, a compact inverted index for BM25, both memory-mapped).
So each collection optimises when it is opened and, in a background thread, after every
`IndexTuning.optimize_after_writes` records written, or once writes stop for
`IndexTuning.optimize_when_idle_seconds` with enough dense vectors unindexed for a graph.
The engine holds the GIL while it optimises: the process pauses for the length of one
optimisation (seconds per tens of thousands of dense vectors), the price of searches that
stay flat as the store grows.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import qdrant_edge as qe

from knowhub_server.common.base.errors import Unavailable
from knowhub_server.common.storage.sparse_search import SparseSearch
from knowhub_server.common.storage.vectors import (
    BULK_FIELD,
    DEFAULT_TUNING,
    DENSE,
    OVERSAMPLING,
    QUANTILE,
    SPARSE,
    TOKEN_KEY,
    AnyOf,
    CollectionSchema,
    Condition,
    Eq,
    HasKey,
    HasPoint,
    Hit,
    IndexTuning,
    Missing,
    Order,
    Payload,
    Range,
    Record,
    SearchQuery,
    StoreMismatch,
    VectorCollection,
    Vectors,
    VectorStore,
    Where,
    WriteGate,
    check_manifest,
    copy_records,
    point_id,
    record_from_payload,
    stored_payload,
)

log = logging.getLogger(__name__)

MANIFEST_FILE = "knowhub-manifest.json"
ENGINE_CONFIG_FILE = "edge_config.json"  # the engine's own record of the shard's layout
PAUSE_WARNING_SECONDS = 5.0
# How often the store looks for collections gone idle: a quarter of the idle time, within
# these bounds.
IDLE_CHECK_SECONDS = (0.05, 5.0)


class EdgeCollection(VectorCollection):
    def __init__(
        self, shard: qe.EdgeShard, schema: CollectionSchema, tuning: IndexTuning = DEFAULT_TUNING
    ) -> None:
        self._shard = shard
        self.schema = schema
        self.gate = WriteGate()  # its store's, once the store opened it
        # Only this process can open the shard (the engine locks it).
        self.exclusive = True
        self._cas_lock = threading.Lock()
        self._optimize_after = tuning.optimize_after_writes
        self._index_when_idle = _unindexed_worth_a_graph(schema, tuning)
        self._last_write = time.monotonic()
        self._dense_params = dense_search_params(tuning)
        self.sparse = SparseSearch(tenant_idf=tuning.tenant_idf, shared=False)
        self._unoptimized = 0  # records written since the last optimisation began
        self._optimizer: threading.Thread | None = None
        self._optimizer_lock = threading.Lock()

    def _write_guard(self) -> threading.Lock:
        return self._cas_lock

    def _write(
        self, records: Sequence[Record], *, if_version: int | None, insert_only: bool
    ) -> None:
        points = [
            qe.Point(point_id(r.key), r.vectors, stored_payload(r, self.schema)) for r in records
        ]
        condition = None
        if if_version is not None:
            condition = qe.Filter(must=[_condition(Eq("_version", if_version))])
        mode = qe.UpdateMode.InsertOnly if insert_only else None
        self._shard.update(qe.UpdateOperation.upsert_points(points, condition, mode))
        self._written(len(points))

    def retrieve_points(
        self, point_ids: Sequence[str], *, with_vectors: bool = False, with_bulk: bool = True
    ) -> list[Record]:
        payload = True if with_bulk else qe.PayloadSelector.Exclude([BULK_FIELD])
        found = self._shard.retrieve(list(point_ids), payload, with_vectors)
        return [record_from_payload(dict(p.payload or {}), _vectors(p.vector)) for p in found]

    def _write_tokens(self, keys: Sequence[str]) -> dict[str, int]:
        by_id = {point_id(k): k for k in keys}
        found = self._shard.retrieve(list(by_id), qe.PayloadSelector.Include([TOKEN_KEY]), False)
        return {by_id[str(p.id)]: (p.payload or {}).get(TOKEN_KEY, 0) for p in found}

    def _delete(self, keys: Sequence[str]) -> None:
        self._shard.update(qe.UpdateOperation.delete_points([point_id(k) for k in keys]))
        self._written(len(keys))

    def _set_fields(self, changes: Sequence[tuple[Record, Payload]]) -> None:
        for record, fields in changes:
            self._shard.update(
                qe.UpdateOperation.set_payload_by_filter(_as_read(record), dict(fields))
            )
        # The engine changes a record of an indexed segment by moving it to the appendable
        # one: to be indexed again, as a write.
        self._written(len(changes))

    def optimize(self, reason: str = "") -> bool:
        """Indexes what was written since the last optimisation and merges small
        segments; True when there was anything to do. Blocks (and holds the GIL).
        `reason`, for the log: what made it index now."""
        started = time.perf_counter()
        changed = self._shard.optimize()
        if changed:
            # The engine removes the segments it replaced only when it next flushes: without
            # this a long-running process keeps every one of them on disk.
            self._shard.flush()
            took = time.perf_counter() - started
            log.log(
                logging.WARNING if took >= PAUSE_WARNING_SECONDS else logging.INFO,
                "indexed the %s store%s in %.1f s (the process pauses meanwhile)",
                self.schema.name,
                f", {reason}," if reason else "",
                took,
            )
        return changed

    def _written(self, count: int) -> None:
        """Starts a background optimisation once enough records were written."""
        with self._optimizer_lock:
            self._unoptimized += count
            self._last_write = time.monotonic()
            if self._unoptimized >= self._optimize_after:
                self._start_optimizer(f"after {self._unoptimized:,} writes")

    def index_if_idle(self, idle_seconds: float) -> None:
        """Starts a background optimisation when no record was written for `idle_seconds`
        and those written since the last one are enough dense vectors for a graph (fewer
        are scanned however they are segmented)."""
        with self._optimizer_lock:
            if self._index_when_idle is None or self._unoptimized < self._index_when_idle:
                return
            if time.monotonic() - self._last_write >= idle_seconds:
                self._start_optimizer(f"{idle_seconds:g} s after its last write")

    def _start_optimizer(self, reason: str) -> None:
        """With the optimizer lock held: a background optimisation, unless one runs."""
        if self._optimizer is not None and self._optimizer.is_alive():
            return
        self._unoptimized = 0
        self._optimizer = threading.Thread(
            target=self.optimize,
            args=(reason,),
            daemon=True,
            name=f"optimize-{self.schema.name}",
        )
        self._optimizer.start()

    def _wait_for_optimizer(self) -> None:
        with self._optimizer_lock:
            optimizer = self._optimizer
        if optimizer is not None:
            optimizer.join()

    def _search_batch(self, queries: Sequence[SearchQuery]) -> list[list[Hit]]:
        requests = [_request(q, self._dense_params) for q in queries]
        if len(requests) == 1:
            results = [self._shard.query(requests[0])]
        else:
            results = self._shard.query_batch(qe.QueryBatchRequest(requests))
        return [
            [_hit(point, query) for point in points]
            for query, points in zip(queries, results, strict=True)
        ]

    def scroll(
        self,
        where: Where,
        limit: int,
        *,
        order: Order | None = None,
        cursor: str | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[Record], str | None]:
        order_by = None
        if order is not None:
            direction = qe.Direction.Desc if order.descending else qe.Direction.Asc
            order_by = qe.OrderBy(order.key, direction, order.start_from)
        points, next_offset = self._shard.scroll(
            qe.ScrollRequest(
                offset=cursor if order is None else None,
                limit=limit,
                filter=_filter(where),
                with_payload=True,
                with_vector=with_vectors,
                order_by=order_by,
            )
        )
        records = [record_from_payload(dict(p.payload or {}), _vectors(p.vector)) for p in points]
        return records, None if order is not None or next_offset is None else str(next_offset)

    def count(self, where: Where) -> int:
        return self._shard.count(qe.CountRequest(exact=True, filter=_filter(where)))

    def estimate(self, where: Where) -> int:
        return self._shard.count(qe.CountRequest(exact=False, filter=_filter(where)))

    def segments(self) -> int:
        return self._shard.info().segments_count

    def flush(self) -> None:
        self._shard.flush()

    def close(self) -> None:
        self._wait_for_optimizer()
        self._shard.flush()
        self._shard.close()


def _unindexed_worth_a_graph(schema: CollectionSchema, tuning: IndexTuning) -> int | None:
    """Records whose dense vectors pass the indexing threshold (a segment of fewer is
    scanned, indexed or not); None for a store without dense vectors (its BM25 postings
    are searched as fast before an optimisation as after)."""
    if not schema.dense_dim:
        return None
    return max(1, math.ceil(tuning.indexing_threshold_kb * 1024 / (schema.dense_dim * 4)))


def _vectors(raw: object) -> Vectors:
    return dict(raw) if isinstance(raw, dict) else {}


def _request(query: SearchQuery, dense_params: qe.SearchParams) -> qe.QueryRequest:
    if query.sparse is not None:
        nearest = qe.Query.Nearest(query.sparse, using=SPARSE)
        corpus = None if query.collection_idf else _filter(query.idf_corpus)
        params = qe.SearchParams(idf=qe.IdfParams(corpus=corpus) if corpus else None)
    else:
        nearest = qe.Query.Nearest(list(query.dense or ()), using=DENSE)
        params = dense_params
    payload: bool | qe.PayloadSelector = query.with_payload
    if query.with_payload and not query.with_bulk:
        payload = qe.PayloadSelector.Exclude([BULK_FIELD])
    return qe.QueryRequest(
        limit=query.limit,
        query=nearest,
        filter=_filter(query.where),
        params=params,
        with_payload=payload,
        with_vector=query.with_vectors,
    )


def _hit(point: qe.ScoredPoint, query: SearchQuery) -> Hit:
    stored = (point.payload or {}) if query.with_payload else None
    return Hit(
        point.id, point.score, stored, _vectors(point.vector) if query.with_vectors else None
    )


def _as_read(record: Record) -> qe.Filter:
    """The record, if it still has the write token it was read with."""
    return qe.Filter(
        must=[_condition(HasKey((record.key,))), _condition(Eq(TOKEN_KEY, record.write_token))]
    )


def _condition(c: Condition) -> qe.ConditionType:
    if isinstance(c, Eq):
        return qe.FieldCondition(key=c.key, match=qe.MatchValue(value=c.value))
    if isinstance(c, AnyOf):
        return qe.FieldCondition(key=c.key, match=qe.MatchAny(any=list(c.values)))
    if isinstance(c, Range):
        return qe.FieldCondition(
            key=c.key, range=qe.RangeFloat(gte=c.gte, gt=c.gt, lte=c.lte, lt=c.lt)
        )
    if isinstance(c, HasKey):
        return qe.HasIdCondition({point_id(k) for k in c.keys})
    if isinstance(c, HasPoint):
        # the ids hits named: record keys' point ids or the engine's own
        return qe.HasIdCondition(set(cast("tuple[qe.PointId, ...]", c.point_ids)))
    if isinstance(c, Missing):
        return qe.IsEmptyCondition(c.key)
    raise TypeError(f"unknown condition {c!r}")


@functools.lru_cache(maxsize=1024)
def _filter(where: Where) -> qe.Filter | None:
    """The engine's filter for `where`; cached, since callers repeat the same few."""
    if where.empty:
        return None
    return qe.Filter(
        must=[_condition(c) for c in where.must] or None,
        must_not=[_condition(c) for c in where.must_not] or None,
        should=[_condition(c) for c in where.should] or None,
    )


def dense_search_params(tuning: IndexTuning) -> qe.SearchParams:
    """How a dense search walks the graph: `hnsw_ef` candidates, ACORN for narrow
    filters, quantized vectors first and the originals to rescore."""
    quantization = (
        qe.QuantizationSearchParams(rescore=True, oversampling=OVERSAMPLING)
        if tuning.quantize_dense
        else None
    )
    return qe.SearchParams(
        hnsw_ef=tuning.hnsw_ef,
        acorn=qe.AcornSearchParams(enable=tuning.acorn),
        quantization=quantization,
    )


def _edge_config(schema: CollectionSchema, tuning: IndexTuning) -> qe.EdgeConfig:
    """The shard's layout. Indexed segments keep their vectors, graph, BM25 index,
    payload, payload indexes and point ids memory-mapped (the page cache holds what
    searches touch, and gives it back under pressure); the appendable segment lives on
    the heap. Indexed dense vectors get int8 copies (`IndexTuning.quantize_dense`), mapped
    the same way."""
    dense = {}
    if schema.dense_dim:
        quantization = None
        if tuning.quantize_dense:
            quantization = qe.ScalarQuantizationConfig(
                qe.ScalarType.Int8, quantile=QUANTILE, memory=qe.Memory.Cached
            )
        dense[DENSE] = qe.EdgeVectorParams(
            size=schema.dense_dim,
            distance=qe.Distance.Cosine,
            memory=qe.Memory.Cached,
            quantization_config=quantization,
        )
    return qe.EdgeConfig(
        vectors=dense,
        sparse_vectors={
            SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=qe.Memory.Cached)
        },
        hnsw_config=qe.HnswIndexConfig(
            m=tuning.hnsw_m,
            ef_construct=tuning.hnsw_ef_construct,
            full_scan_threshold=tuning.full_scan_threshold_kb,
            memory=qe.Memory.Cached,
        ),
        optimizers=qe.EdgeOptimizersConfig(
            indexing_threshold=tuning.indexing_threshold_kb,
            max_segment_size=tuning.max_segment_size_kb,
        ),
        max_search_threads=tuning.search_threads or os.cpu_count() or 1,
        payload_memory=qe.Memory.Cold,
        id_tracker_memory=qe.Memory.Cached,
    )


def _field_indexes(schema: CollectionSchema) -> list[tuple[str, qe.PayloadSchemaParams]]:
    """Each indexed field and its index. Only the tenant field gets HNSW links of its
    own: graphs per value of every field would multiply the indexing time."""
    mapped = qe.Memory.Cached  # in indexed segments: memory-mapped, in the page cache
    indexes: list[tuple[str, qe.PayloadSchemaParams]] = [
        (
            name,
            qe.KeywordIndexParams(
                is_tenant=name == schema.tenant_field,
                enable_hnsw=name == schema.tenant_field,
                memory=mapped,
            ),
        )
        for name in schema.keyword_fields
    ]
    indexes += [
        (name, qe.IntegerIndexParams(lookup=True, range=True, enable_hnsw=False, memory=mapped))
        for name in schema.integer_fields
    ]
    indexes += [
        (name, qe.FloatIndexParams(enable_hnsw=False, memory=mapped))
        for name in schema.float_fields
    ]
    return indexes


def _create_indexes(shard: qe.EdgeShard, schema: CollectionSchema) -> None:
    """Creates the schema's payload indexes the shard lacks, and the tenant index over
    the plain keyword index of a store an earlier version wrote."""
    existing = shard.info().payload_schema
    for field_name, params in _field_indexes(schema):
        found = existing.get(field_name)
        outdated = (
            found is not None
            and field_name == schema.tenant_field
            and not getattr(found.params, "is_tenant", False)
        )
        if found is None or outdated:
            shard.update(qe.UpdateOperation.create_field_index(field_name, params))


class EdgeStore(VectorStore):
    """Collections as EdgeShard directories under one root."""

    def __init__(self, root: Path, tuning: IndexTuning = DEFAULT_TUNING) -> None:
        self.root = root
        self.tuning = tuning
        self._open: list[EdgeCollection] = []
        self.gate = WriteGate()
        self._idle_indexer: threading.Thread | None = None
        self._closing = threading.Event()

    def open(self, schema: CollectionSchema) -> EdgeCollection:
        path = self.root / schema.name
        manifest_path = path / MANIFEST_FILE
        if manifest_path.exists():
            check_manifest(schema, json.loads(manifest_path.read_text()), str(path))
            if _gains_int8_copies(path, schema, self.tuning):
                log.warning(
                    "the %s store gets int8 copies of its dense vectors "
                    "(KNOWHUB_VECTOR_QUANTIZE_DENSE): opening it takes longer this "
                    "once, about 15 s per 100,000 records",
                    schema.name,
                )
            shard = _load_shard(path, _edge_config(schema, self.tuning))
        else:
            shard = _create_shard(path, schema, self.tuning)
        _create_indexes(shard, schema)
        collection = EdgeCollection(shard, schema, self.tuning)
        collection.optimize("on opening")  # what an earlier run wrote since then
        self._open.append(collection)
        collection.gate = self.gate
        self._watch_for_idle_collections()
        return collection

    def _watch_for_idle_collections(self) -> None:
        """One thread for all the store's collections, asking each in turn to index what
        was written to it once writes stop (`IndexTuning.optimize_when_idle_seconds`)."""
        idle = self.tuning.optimize_when_idle_seconds
        if idle <= 0 or self._idle_indexer is not None:
            return
        self._closing = threading.Event()
        self._idle_indexer = threading.Thread(
            target=self._index_idle_collections, args=(idle,), daemon=True, name="index-idle"
        )
        self._idle_indexer.start()

    def _index_idle_collections(self, idle: float) -> None:
        shortest, longest = IDLE_CHECK_SECONDS
        while not self._closing.wait(min(max(idle / 4, shortest), longest)):
            for collection in list(self._open):
                collection.index_if_idle(idle)

    def rebuild(
        self,
        schema: CollectionSchema,
        revectorize: Callable[[list[Record]], list[Vectors]],
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        path = self.root / schema.name
        staging = self.root / f"{schema.name}.rebuild"
        shutil.rmtree(staging, ignore_errors=True)
        if not (path / MANIFEST_FILE).exists():
            raise StoreMismatch(f"there is no {schema.name} store at {path} to rebuild")
        old = EdgeCollection(_load_shard(path), schema)
        new_shard = _create_shard(staging, schema, self.tuning)
        _create_indexes(new_shard, schema)
        new = EdgeCollection(new_shard, schema, self.tuning)
        copied = copy_records(old, new, revectorize, progress)
        new.optimize()
        old.close()
        new.close()
        retired = self.root / f"{schema.name}.old"
        shutil.rmtree(retired, ignore_errors=True)
        path.rename(retired)
        staging.rename(path)
        shutil.rmtree(retired)
        return copied

    def compact(self, name: str) -> int:
        """Rewrites collection `name` (not open in any process) with its live records
        only: deleted records leave no trace in its segments or its write-ahead log, which
        otherwise keep them until later writes push them out. Returns the records kept."""
        path = self.root / name
        staging = self.root / f"{name}.compact"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        shutil.copy(path / ENGINE_CONFIG_FILE, staging / ENGINE_CONFIG_FILE)
        old = _load_shard(path)
        new = qe.EdgeShard.load(str(staging), None)  # empty, with the same layout
        for field_name, info in old.info().payload_schema.items():
            params = info.params if info.params is not None else info.data_type
            new.update(qe.UpdateOperation.create_field_index(field_name, params))
        kept, offset = 0, None
        while True:
            points, offset = old.scroll(
                qe.ScrollRequest(offset=offset, limit=256, with_payload=True, with_vector=True)
            )
            if points:
                new.update(
                    qe.UpdateOperation.upsert_points(
                        [qe.Point(p.id, _vectors(p.vector), p.payload) for p in points]
                    )
                )
                kept += len(points)
            if offset is None:
                break
        new.optimize()
        old.close()
        new.close()
        shutil.copy(path / MANIFEST_FILE, staging / MANIFEST_FILE)
        retired = self.root / f"{name}.old"
        shutil.rmtree(retired, ignore_errors=True)
        path.rename(retired)
        staging.rename(path)
        shutil.rmtree(retired)
        return kept

    def collection_names(self) -> list[str]:
        """The collections stored under the root."""
        return (
            sorted(p.name for p in self.root.iterdir() if (p / MANIFEST_FILE).exists())
            if self.root.is_dir()
            else []
        )

    def opened(self) -> list[VectorCollection]:
        return list({c.schema.name: c for c in self._open}.values())

    def close(self) -> None:
        self._closing.set()
        if self._idle_indexer is not None:
            self._idle_indexer.join()
            self._idle_indexer = None
        for collection in self._open:
            collection.close()
        self._open.clear()


def _gains_int8_copies(path: Path, schema: CollectionSchema, tuning: IndexTuning) -> bool:
    """Whether this opening adds int8 copies to a store indexed without them (a one-time
    wait while each indexed segment gets its copies)."""
    if not (tuning.quantize_dense and schema.dense_dim):
        return False
    try:
        dense = json.loads((path / ENGINE_CONFIG_FILE).read_text())["vectors"][DENSE]
    except (OSError, ValueError, KeyError, TypeError):
        return False  # a layout this engine version does not record: nothing to tell
    return not dense.get("quantization_config")


def _load_shard(path: Path, config: qe.EdgeConfig | None = None) -> qe.EdgeShard:
    try:
        return qe.EdgeShard.load(str(path), config)
    except Exception as exc:  # the engine reports a held lock as a generic runtime error
        if "WouldBlock" in str(exc):
            raise Unavailable(
                f"{path} is in use by another KnowHub process; stop it first"
            ) from exc
        raise


def _create_shard(path: Path, schema: CollectionSchema, tuning: IndexTuning) -> qe.EdgeShard:
    path.mkdir(parents=True, exist_ok=True)
    shard = qe.EdgeShard.create(str(path), _edge_config(schema, tuning))
    (path / MANIFEST_FILE).write_text(json.dumps(schema.manifest()))
    return shard
