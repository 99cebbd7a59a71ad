"""The scale-out adapter: a Qdrant server (or `:memory:`) through qdrant-client.

Each service collection is an alias (`knowhub_<name>`) over a physical collection
(`knowhub_<name>__<generation>`), so `knowhub reindex` can build a new generation and
switch the alias in one step while readers keep going. The manifest lives in the
physical collection's metadata.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import grpc
import httpx
import qdrant_edge as qe
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

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


def _field_indexes(schema: CollectionSchema) -> list[tuple[str, Any]]:
    """Each indexed field and its index, as the embedded adapter builds them: only the
    tenant field is a tenant index with HNSW links of its own."""
    indexes: list[tuple[str, Any]] = [
        (
            name,
            qm.KeywordIndexParams(
                type=qm.KeywordIndexType.KEYWORD,
                is_tenant=name == schema.tenant_field,
                enable_hnsw=name == schema.tenant_field,
            ),
        )
        for name in schema.keyword_fields
    ]
    indexes += [
        (
            name,
            qm.IntegerIndexParams(
                type=qm.IntegerIndexType.INTEGER, lookup=True, range=True, enable_hnsw=False
            ),
        )
        for name in schema.integer_fields
    ]
    indexes += [
        (name, qm.FloatIndexParams(type=qm.FloatIndexType.FLOAT, enable_hnsw=False))
        for name in schema.float_fields
    ]
    return indexes


@contextlib.contextmanager
def _reachable(what: str) -> Iterator[None]:
    """Turns "the server is not there" into UNAVAILABLE for the caller."""
    try:
        yield
    except (
        ResponseHandlingException,
        httpx.TransportError,
        grpc.RpcError,
        ConnectionError,
        TimeoutError,
    ) as exc:
        raise Unavailable(f"Qdrant is unavailable ({what}): {exc}") from exc
    except UnexpectedResponse as exc:
        if exc.status_code and exc.status_code >= 500:
            raise Unavailable(f"Qdrant failed ({what}): {exc}") from exc
        raise


class RemoteCollection(VectorCollection):
    def __init__(
        self,
        client: QdrantClient,
        name: str,
        schema: CollectionSchema,
        tuning: IndexTuning = DEFAULT_TUNING,
    ) -> None:
        self._client = client
        self._name = name
        self.schema = schema
        quantization = None
        if tuning.quantize_dense:
            quantization = qm.QuantizationSearchParams(rescore=True, oversampling=OVERSAMPLING)
        self._dense_params = qm.SearchParams(
            hnsw_ef=tuning.hnsw_ef,
            acorn=qm.AcornSearchParams(enable=tuning.acorn),
            quantization=quantization,
        )
        # A local-mode client (":memory:" or a path) is this process's alone.
        options = client.init_options
        self.exclusive = options.get("location") == ":memory:" or bool(options.get("path"))
        self.sparse = SparseSearch(tenant_idf=tuning.tenant_idf, shared=not self.exclusive)
        self._cas_lock = threading.Lock()
        self.gate = WriteGate()  # its store's, once the store opened it

    def _write_guard(self) -> contextlib.AbstractContextManager[Any]:
        return self._cas_lock if self.exclusive else contextlib.nullcontext()

    def _write(
        self, records: Sequence[Record], *, if_version: int | None, insert_only: bool
    ) -> None:
        points = [
            qm.PointStruct(
                id=point_id(r.key),
                vector=_to_client(r.vectors),
                payload=stored_payload(r, self.schema),
            )
            for r in records
        ]
        update_filter = None
        if if_version is not None:
            update_filter = qm.Filter(must=[_condition(Eq("_version", if_version))])
        mode = qm.UpdateMode.INSERT_ONLY if insert_only else None
        with _reachable("write"):
            self._client.upsert(
                self._name, points, wait=True, update_filter=update_filter, update_mode=mode
            )

    def retrieve_points(
        self, point_ids: Sequence[str], *, with_vectors: bool = False, with_bulk: bool = True
    ) -> list[Record]:
        payload: Any = True if with_bulk else qm.PayloadSelectorExclude(exclude=[BULK_FIELD])
        with _reachable("retrieve"):
            found = self._client.retrieve(
                self._name, list(point_ids), with_payload=payload, with_vectors=with_vectors
            )
        return [record_from_payload(dict(p.payload or {}), _from_client(p.vector)) for p in found]

    def _write_tokens(self, keys: Sequence[str]) -> dict[str, int]:
        by_id = {point_id(k): k for k in keys}
        with _reachable("retrieve"):
            found = self._client.retrieve(
                self._name,
                list(by_id),
                with_vectors=False,
                with_payload=qm.PayloadSelectorInclude(include=[TOKEN_KEY]),
            )
        return {by_id[str(p.id)]: (p.payload or {}).get(TOKEN_KEY, 0) for p in found}

    def _delete(self, keys: Sequence[str]) -> None:
        with _reachable("delete"):
            self._client.delete(
                self._name, qm.PointIdsList(points=[point_id(k) for k in keys]), wait=True
            )

    def _set_fields(self, changes: Sequence[tuple[Record, Payload]]) -> None:
        operations: list[Any] = [
            qm.SetPayloadOperation(
                set_payload=qm.SetPayload(
                    payload=dict(fields),
                    filter=qm.Filter(
                        must=[
                            _condition(HasKey((record.key,))),
                            _condition(Eq(TOKEN_KEY, record.write_token)),
                        ]
                    ),
                )
            )
            for record, fields in changes
        ]
        with _reachable("set fields"):
            self._client.batch_update_points(self._name, operations, wait=True)

    def _search_batch(self, queries: Sequence[SearchQuery]) -> list[list[Hit]]:
        with _reachable("search"):
            responses = self._client.query_batch_points(
                self._name, [_request(q, self._dense_params) for q in queries]
            )
        return [
            [_hit(point, query) for point in response.points]
            for query, response in zip(queries, responses, strict=True)
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
            direction = qm.Direction.DESC if order.descending else qm.Direction.ASC
            order_by = qm.OrderBy(key=order.key, direction=direction, start_from=order.start_from)
        with _reachable("scroll"):
            points, next_offset = self._client.scroll(
                self._name,
                scroll_filter=_filter(where),
                limit=limit,
                offset=cursor if order is None else None,
                order_by=order_by,
                with_payload=True,
                with_vectors=with_vectors,
            )
        records = [
            record_from_payload(dict(p.payload or {}), _from_client(p.vector)) for p in points
        ]
        return records, None if order is not None or next_offset is None else str(next_offset)

    def count(self, where: Where) -> int:
        with _reachable("count"):
            return self._client.count(self._name, count_filter=_filter(where), exact=True).count

    def estimate(self, where: Where) -> int:
        with _reachable("count"):
            return self._client.count(self._name, count_filter=_filter(where), exact=False).count

    def segments(self) -> int:
        with _reachable("get_collection"):
            return self._client.get_collection(self._name).segments_count

    def flush(self) -> None:
        """The server makes each acknowledged write durable itself."""

    def close(self) -> None:
        """The client is shared by the store and closed with it."""


def _to_client(vectors: Vectors) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for name, value in vectors.items():
        if isinstance(value, qe.SparseVector):
            converted[name] = qm.SparseVector(
                indices=list(value.indices), values=list(value.values)
            )
        else:
            converted[name] = list(value)
    return converted


def _from_client(raw: object) -> Vectors:
    if not isinstance(raw, dict):
        return {}
    converted: Vectors = {}
    for name, value in raw.items():
        if isinstance(value, qm.SparseVector):
            converted[name] = qe.SparseVector(list(value.indices), list(value.values))
        else:
            converted[name] = list(value)
    return converted


def _request(query: SearchQuery, dense_params: qm.SearchParams) -> qm.QueryRequest:
    if query.sparse is not None:
        vector: Any = qm.SparseVector(
            indices=list(query.sparse.indices), values=list(query.sparse.values)
        )
        using = SPARSE
        corpus = None if query.collection_idf else _filter(query.idf_corpus)
        params = qm.SearchParams(idf=qm.IdfCorpusParams(corpus=corpus) if corpus else None)
    else:
        vector, using, params = list(query.dense or ()), DENSE, dense_params
    payload: Any = query.with_payload
    if query.with_payload and not query.with_bulk:
        payload = qm.PayloadSelectorExclude(exclude=[BULK_FIELD])
    return qm.QueryRequest(
        query=vector,
        using=using,
        filter=_filter(query.where),
        limit=query.limit,
        params=params,
        with_payload=payload,
        with_vector=query.with_vectors,
    )


def _hit(point: qm.ScoredPoint, query: SearchQuery) -> Hit:
    stored = (point.payload or {}) if query.with_payload else None
    vectors = _from_client(point.vector) if query.with_vectors else {}
    return Hit(point.id, point.score, stored, vectors)


def _condition(c: Condition) -> qm.Condition:
    if isinstance(c, Eq):
        return qm.FieldCondition(key=c.key, match=qm.MatchValue(value=c.value))
    if isinstance(c, AnyOf):
        return qm.FieldCondition(key=c.key, match=qm.MatchAny(any=list(c.values)))
    if isinstance(c, Range):
        return qm.FieldCondition(key=c.key, range=qm.Range(gte=c.gte, gt=c.gt, lte=c.lte, lt=c.lt))
    if isinstance(c, HasKey):
        return qm.HasIdCondition(has_id=[point_id(k) for k in c.keys])
    if isinstance(c, HasPoint):
        return qm.HasIdCondition(has_id=list(c.point_ids))
    if isinstance(c, Missing):
        return qm.IsEmptyCondition(is_empty=qm.PayloadField(key=c.key))
    raise TypeError(f"unknown condition {c!r}")


@functools.lru_cache(maxsize=1024)
def _filter(where: Where) -> qm.Filter | None:
    """The client's filter for `where`; cached, since callers repeat the same few."""
    if where.empty:
        return None
    return qm.Filter(
        must=[_condition(c) for c in where.must] or None,
        must_not=[_condition(c) for c in where.must_not] or None,
        should=[_condition(c) for c in where.should] or None,
    )


class RemoteStore(VectorStore):
    """Collections on a Qdrant server, behind aliases so they can be rebuilt in place."""

    def __init__(
        self, client: QdrantClient, prefix: str = "knowhub_", tuning: IndexTuning = DEFAULT_TUNING
    ) -> None:
        self._client = client
        self._opened: dict[str, RemoteCollection] = {}
        self.gate = WriteGate()
        self._prefix = prefix
        self._tuning = tuning

    @classmethod
    def connect(
        cls, url: str, api_key: str | None = None, tuning: IndexTuning = DEFAULT_TUNING
    ) -> RemoteStore:
        if url == ":memory:":
            return cls(QdrantClient(":memory:"), tuning=tuning)
        return cls(QdrantClient(url=url, api_key=api_key, timeout=10), tuning=tuning)

    def open(self, schema: CollectionSchema) -> RemoteCollection:
        alias = self._prefix + schema.name
        with _reachable("open"):
            physical = self._physical(alias)
            created = physical is None and self._create_first(alias, schema)
            physical = self._physical(alias) or f"{alias}__1"
            if not created:
                metadata = self._client.get_collection(physical).config.metadata or {}
                check_manifest(schema, dict(metadata), f"{physical} on the Qdrant server")
            self._ensure_indexes(physical, schema)
        collection = RemoteCollection(self._client, alias, schema, self._tuning)
        collection.gate = self.gate
        self._opened[schema.name] = collection
        return collection

    def opened(self) -> list[VectorCollection]:
        return list(self._opened.values())

    def rebuild(
        self,
        schema: CollectionSchema,
        revectorize: Callable[[list[Record]], list[Vectors]],
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        alias = self._prefix + schema.name
        with _reachable("rebuild"):
            old = self._physical(alias)
            if old is None:
                raise StoreMismatch(f"there is no {schema.name} collection to rebuild")
            generation = int(old.rsplit("__", 1)[1]) + 1
            new = f"{alias}__{generation}"
            if self._client.collection_exists(new):
                self._client.delete_collection(new)
            self._create(new, schema)
            self._ensure_indexes(new, schema)
            copied = copy_records(
                RemoteCollection(self._client, old, schema, self._tuning),
                RemoteCollection(self._client, new, schema, self._tuning),
                revectorize,
                progress,
            )
            self._point_alias(alias, new, old)
            self._client.delete_collection(old)
        return copied

    def close(self) -> None:
        self._client.close()

    def _physical(self, alias: str) -> str | None:
        for item in self._client.get_aliases().aliases:
            if item.alias_name == alias:
                return item.collection_name
        return None

    def _create_first(self, alias: str, schema: CollectionSchema) -> bool:
        """Creates the first generation and points the alias at it; True if this call
        created it. Replicas starting together race here: a loser finds the collection
        (or the alias) the winner made and uses it."""
        physical = f"{alias}__1"
        try:
            self._create(physical, schema)
            created = True
        except (UnexpectedResponse, ValueError):
            if not self._client.collection_exists(physical):
                raise
            created = False
        try:
            self._point_alias(alias, physical, None)
        except (UnexpectedResponse, ValueError):
            if self._physical(alias) is None:
                raise
        return created

    def _create(self, name: str, schema: CollectionSchema) -> None:
        dense = {}
        if schema.dense_dim:
            dense[DENSE] = qm.VectorParams(size=schema.dense_dim, distance=qm.Distance.COSINE)
        tuning = self._tuning
        self._client.create_collection(
            name,
            vectors_config=dense,
            sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
            hnsw_config=qm.HnswConfigDiff(
                m=tuning.hnsw_m,
                ef_construct=tuning.hnsw_ef_construct,
                full_scan_threshold=tuning.full_scan_threshold_kb,
            ),
            optimizers_config=qm.OptimizersConfigDiff(
                indexing_threshold=tuning.indexing_threshold_kb,
                max_segment_size=tuning.max_segment_size_kb,
            ),
            quantization_config=qm.ScalarQuantization(
                scalar=qm.ScalarQuantizationConfig(type=qm.ScalarType.INT8, quantile=QUANTILE)
            )
            if tuning.quantize_dense
            else None,
            metadata=schema.manifest(),
        )

    def _ensure_indexes(self, name: str, schema: CollectionSchema) -> None:
        if self._client.init_options.get("location") == ":memory:":
            return  # local mode keeps no payload indexes and warns about each one
        for field_name, params in _field_indexes(schema):
            self._client.create_payload_index(name, field_name, params, wait=True)

    def _point_alias(self, alias: str, new: str, old: str | None) -> None:
        operations: list[Any] = []
        if old is not None:
            operations.append(
                qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias))
            )
        operations.append(
            qm.CreateAliasOperation(
                create_alias=qm.CreateAlias(collection_name=new, alias_name=alias)
            )
        )
        self._client.update_collection_aliases(operations)
