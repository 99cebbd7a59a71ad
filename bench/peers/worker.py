"""One peer system in its own virtualenv, driven by bench.peers over stdin/stdout (one JSON
object per line each way). Runs with the peer's interpreter, so it imports only the
standard library and that peer's package.

Requests: {"op": "open", "store": NAME} (a new, empty store), {"op": "load", "records":
[{"id", "text", "tenant"}]}, {"op": "search", "query", "tenant", "mode"} -> {"ids", "ms"}
with the milliseconds of the library call alone (and "engine_ms", the engine's query
alone, where the system tells it), {"op": "close"} (the store), {"op": "exit"}. Every
dense vector comes from the benchmark's embeddings endpoint (`Embeddings`): the same
vectors for every system, one call per search.

    python worker.py mem0|chromadb|txtai|qdrant-edge WORKDIR EMBEDDINGS_URL MODEL DIM
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

TOP_K = 10


class Embeddings:
    """An OpenAI-compatible /embeddings endpoint over one keep-alive connection."""

    def __init__(self, base_url: str, model: str) -> None:
        url = urllib.parse.urlsplit(base_url)
        self._path = url.path.rstrip("/") + "/embeddings"
        self._connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        self.model = model

    def __call__(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": texts})
        self._connection.request("POST", self._path, body, {"Content-Type": "application/json"})
        answer = json.loads(self._connection.getresponse().read())
        return [item["embedding"] for item in sorted(answer["data"], key=lambda d: d["index"])]


class Mem0:
    """mem0's Memory as its quickstart runs it: its default local Qdrant store, the OpenAI
    embedder pointed at the benchmark's endpoint, raw memories (infer=False: no LLM)."""

    def __init__(self, workdir: Path, url: str, model: str, dim: int) -> None:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("OPENAI_API_KEY", "none")
        from mem0 import Memory

        self._workdir, self._url, self._model, self._dim = workdir, url, model, dim
        self._memory_class = Memory
        self.memory: Any = None

    def open(self, store: str) -> None:
        where = self._workdir / store
        self.memory = self._memory_class.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "bench",
                        "path": str(where / "qdrant"),
                        "embedding_model_dims": self._dim,
                        "on_disk": True,
                    },
                },
                "embedder": {
                    "provider": "openai",
                    "config": {
                        "model": self._model,
                        "api_key": "none",
                        "openai_base_url": self._url,
                        "embedding_dims": self._dim,
                    },
                },
                # Never called: memories are stored as given (infer=False).
                "llm": {
                    "provider": "openai",
                    "config": {
                        "model": "none",
                        "api_key": "none",
                        "openai_base_url": "http://127.0.0.1:9/v1",
                    },
                },
                "history_db_path": str(where / "history.db"),
            }
        )
        self._ids: dict[str, str] = {}

    def load(self, records: list[dict[str, str]]) -> None:
        for record in records:
            added = self.memory.add(
                record["text"],
                user_id=record["tenant"],
                infer=False,
                metadata={"rid": record["id"]},
            )
            for result in added["results"]:
                self._ids[result["id"]] = record["id"]

    def search(self, query: str, tenant: str, _mode: str) -> list[str]:
        found = self.memory.search(query, top_k=TOP_K, filters={"user_id": tenant}, threshold=0.0)
        return [
            self._ids.get(r["id"], r.get("metadata", {}).get("rid", "")) for r in found["results"]
        ]

    def close(self) -> None:
        self.memory = None


class Chroma:
    """chromadb's PersistentClient, one collection per tenant, the vectors of an embedding
    function calling the benchmark's endpoint (chromadb's own model is a download)."""

    def __init__(self, workdir: Path, url: str, model: str, _dim: int) -> None:
        import chromadb
        from chromadb.api.types import EmbeddingFunction

        embed = Embeddings(url, model)

        class Function(EmbeddingFunction):  # type: ignore[misc]
            def __init__(self) -> None:
                pass

            def __call__(self, input: list[str]) -> list[list[float]]:
                return embed(list(input))

            @staticmethod
            def name() -> str:
                return "knowhub-bench"

            def get_config(self) -> dict[str, Any]:
                return {}

            @staticmethod
            def build_from_config(_config: dict[str, Any]) -> Function:
                return Function()

        self._chromadb, self._function, self._workdir = chromadb, Function(), workdir
        self.client: Any = None
        self._collections: dict[str, Any] = {}

    def open(self, store: str) -> None:
        self.client = self._chromadb.PersistentClient(path=str(self._workdir / store))
        self._collections = {}

    def _collection(self, tenant: str) -> Any:
        if tenant not in self._collections:
            self._collections[tenant] = self.client.get_or_create_collection(
                tenant,
                embedding_function=self._function,
                configuration={"hnsw": {"space": "cosine"}},
            )
        return self._collections[tenant]

    def load(self, records: list[dict[str, str]]) -> None:
        by_tenant: dict[str, list[dict[str, str]]] = {}
        for record in records:
            by_tenant.setdefault(record["tenant"], []).append(record)
        for tenant, items in by_tenant.items():
            for start in range(0, len(items), 500):
                batch = items[start : start + 500]
                self._collection(tenant).add(
                    ids=[r["id"] for r in batch], documents=[r["text"] for r in batch]
                )

    def search(self, query: str, tenant: str, _mode: str) -> list[str]:
        found = self._collection(tenant).query(query_texts=[query], n_results=TOP_K)
        return list(found["ids"][0])

    def close(self) -> None:
        self.client = None


class Txtai:
    """txtai's Embeddings with hybrid search (its BM25 scoring plus dense vectors from a
    transform function calling the benchmark's endpoint: `method: external`), one index
    per tenant, content stored."""

    def __init__(self, workdir: Path, url: str, model: str, _dim: int) -> None:
        import numpy as np
        from txtai import Embeddings as TxtaiEmbeddings

        embed = Embeddings(url, model)
        self._transform = lambda texts: np.array(embed(list(texts)), dtype=np.float32)
        self._class = TxtaiEmbeddings
        self._indexes: dict[str, Any] = {}

    def open(self, _store: str) -> None:
        self._indexes = {}

    def load(self, records: list[dict[str, str]]) -> None:
        by_tenant: dict[str, list[dict[str, str]]] = {}
        for record in records:
            by_tenant.setdefault(record["tenant"], []).append(record)
        for tenant, items in by_tenant.items():
            index = self._class(
                method="external", transform=self._transform, hybrid=True, content=True
            )
            index.index([(r["id"], r["text"], None) for r in items])
            self._indexes[tenant] = index

    def search(self, query: str, tenant: str, _mode: str) -> list[str]:
        return [hit["id"] for hit in self._indexes[tenant].search(query, TOP_K)]

    def close(self) -> None:
        self._indexes = {}


class QdrantEdge:
    """The raw engine KnowHub embeds (qdrant-edge-py): one shard, BM25 (the engine's
    tokenizer) and dense vectors from the benchmark's endpoint; modes bm25, dense and
    hybrid (the engine's RRF fusion of both)."""

    def __init__(self, workdir: Path, url: str, model: str, dim: int) -> None:
        import qdrant_edge as qe

        self._qe, self._workdir, self._dim = qe, workdir, dim
        self._embed = Embeddings(url, model)
        self._bm25 = qe.Bm25(qe.Bm25Config())
        self.shard: Any = None
        self._ids: list[str] = []
        self.engine_ms: float | None = None

    def open(self, store: str) -> None:
        qe = self._qe
        config = qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=self._dim, distance=qe.Distance.Cosine)},
            sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        self.shard = qe.EdgeShard.create(str(self._workdir / store), config)
        self.shard.update(
            qe.UpdateOperation.create_field_index("tenant", qe.PayloadSchemaType.Keyword)
        )
        self._ids = []

    def load(self, records: list[dict[str, str]]) -> None:
        qe = self._qe
        for start in range(0, len(records), 500):
            batch = records[start : start + 500]
            vectors = self._embed([r["text"] for r in batch])
            points = []
            for record, vector in zip(batch, vectors, strict=True):
                points.append(
                    qe.Point(
                        len(self._ids),
                        {"bm25": self._bm25.embed_document(record["text"]), "dense": vector},
                        {"tenant": record["tenant"]},
                    )
                )
                self._ids.append(record["id"])
            self.shard.update(qe.UpdateOperation.upsert_points(points))

    def search(self, query: str, tenant: str, mode: str) -> list[str]:
        qe = self._qe
        where = qe.Filter(must=[qe.FieldCondition(key="tenant", match=qe.MatchValue(value=tenant))])
        legs = []
        if mode in ("bm25", "hybrid"):
            legs.append(qe.Query.Nearest(self._bm25.embed_query(query), using="bm25"))
        if mode in ("dense", "hybrid"):
            legs.append(qe.Query.Nearest(self._embed([query])[0], using="dense"))
        if len(legs) == 1:
            request = qe.QueryRequest(limit=TOP_K, query=legs[0], filter=where)
        else:
            request = qe.QueryRequest(
                limit=TOP_K,
                query=qe.Fusion.Rrf(k=60),
                prefetches=[qe.Prefetch(limit=5 * TOP_K, query=leg, filter=where) for leg in legs],
            )
        started = time.perf_counter()
        points = self.shard.query(request)
        self.engine_ms = (time.perf_counter() - started) * 1000
        return [self._ids[int(point.id)] for point in points]

    def settle(self) -> None:
        """Indexes what was loaded: the engine has no optimiser thread of its own."""
        self.shard.optimize()

    def close(self) -> None:
        if self.shard is not None:
            self.shard.close()
        self.shard = None


SYSTEMS = {"mem0": Mem0, "chromadb": Chroma, "txtai": Txtai, "qdrant-edge": QdrantEdge}


def main() -> None:
    name, workdir, url, model, dim = sys.argv[1:6]
    system = SYSTEMS[name](Path(workdir), url, model, int(dim))
    answer = sys.stdout
    sys.stdout = sys.stderr  # whatever a library prints stays out of the replies
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        started = time.perf_counter()
        reply: dict[str, Any] = {}
        if op == "open":
            system.open(request["store"])
        elif op == "load":
            system.load(request["records"])
        elif op == "settle":
            getattr(system, "settle", lambda: None)()
        elif op == "search":
            reply["ids"] = system.search(
                request["query"], request["tenant"], request.get("mode", "")
            )
        elif op == "close":
            system.close()
        reply["ms"] = (time.perf_counter() - started) * 1000
        if op == "search" and getattr(system, "engine_ms", None) is not None:
            reply["engine_ms"] = system.engine_ms
        answer.write(json.dumps(reply) + "\n")
        answer.flush()
        if op == "exit":
            return


if __name__ == "__main__":
    main()
