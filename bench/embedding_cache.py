"""Embeddings cached on disk per (model, text), and an endpoint that serves them.

Recall benchmarks embed the same few thousand texts on every run; on a CPU model that is
most of their time. `CachedEmbeddings` asks the endpoint only for texts it has not seen,
and `caching_endpoint` serves the same cache as an OpenAI-compatible /v1/embeddings on
loopback, for a KnowHub server process to use in place of the real endpoint. The cache
lives under bench/results/ (git-ignored).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import random
import sqlite3
import threading
from array import array
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Protocol

import openai

CACHE = Path(__file__).resolve().parent / "results" / "embeddings.sqlite"
BATCH = 256


class CachedEmbeddings:
    """An embeddings endpoint behind a disk cache; safe to share between threads.

    With `noise`, each vector gets a random one of length `noise` added (the same for the
    same text) and is scaled back to unit length: a weaker model's vectors, to see how a
    search holds up when the dense side matters less than on the data it was tuned on.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "none",
        path: Path = CACHE,
        noise: float = 0.0,
    ) -> None:
        self.model = model
        self.noise = noise
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=600)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors "
            "(model TEXT, digest TEXT, vector BLOB, PRIMARY KEY (model, digest))"
        )
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        digests = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        found = self._cached(set(digests))
        missing = list(
            {d: t for d, t in zip(digests, texts, strict=True) if d not in found}.items()
        )
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            response = self._client.embeddings.create(model=self.model, input=[t for _, t in batch])
            vectors = [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
            self._store([(d, v) for (d, _), v in zip(batch, vectors, strict=True)])
            found.update((d, v) for (d, _), v in zip(batch, vectors, strict=True))
        return [self._perturbed(d, found[d]) for d in digests]

    def put(self, texts: Sequence[str], vectors: Sequence[list[float]]) -> None:
        """Caches the given vectors as those of the texts."""
        self._store(
            [
                (hashlib.sha256(t.encode()).hexdigest(), v)
                for t, v in zip(texts, vectors, strict=True)
            ]
        )

    def _perturbed(self, digest: str, vector: list[float]) -> list[float]:
        if not self.noise:
            return vector
        rng = random.Random(digest)
        offset = [rng.gauss(0.0, 1.0) for _ in vector]
        scale = self.noise / math.sqrt(sum(x * x for x in offset))
        noisy = [v + scale * x for v, x in zip(vector, offset, strict=True)]
        length = math.sqrt(sum(x * x for x in noisy))
        return [x / length for x in noisy]

    def _cached(self, digests: set[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        wanted = list(digests)
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = self._db.execute(
                    f"SELECT digest, vector FROM vectors WHERE model = ? AND digest IN "
                    f"({','.join('?' * len(chunk))})",
                    [self.model, *chunk],
                )
                found.update((d, array("f", v).tolist()) for d, v in rows)
        return found

    def _store(self, items: list[tuple[str, list[float]]]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(self.model, d, array("f", v).tobytes()) for d, v in items],
            )

    def close(self) -> None:
        self._client.close()
        self._db.close()


def _base64(vector: list[float]) -> str:
    return base64.b64encode(array("f", vector).tobytes()).decode()


class Embeddings(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@contextmanager
def caching_endpoint(embeddings: Embeddings) -> Iterator[str]:
    """Serves `embeddings` as /v1/embeddings on a loopback port; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            # The OpenAI client asks for base64 (4-byte floats), which it decodes much
            # faster than a JSON list of numbers.
            encode = _base64 if body.get("encoding_format") == "base64" else list
            data = [
                {"object": "embedding", "index": i, "embedding": encode(v)}
                for i, v in enumerate(embeddings.embed(inputs))
            ]
            raw = json.dumps(
                {
                    "object": "list",
                    "model": embeddings.model,
                    "data": data,
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def search_kinds(stack: ExitStack) -> dict[str, dict[str, str]]:
    """The hub settings of each kind of search to measure: BM25 alone, and hybrid when
    KNOWHUB_EMBEDDING_BASE_URL, _MODEL and _DIM name an endpoint, whose embeddings every
    server then reads through one caching endpoint that lives as long as `stack`."""
    kinds: dict[str, dict[str, str]] = {"BM25": {}}
    if os.environ.get("KNOWHUB_EMBEDDING_BASE_URL"):
        embeddings = CachedEmbeddings(
            os.environ["KNOWHUB_EMBEDDING_BASE_URL"],
            os.environ["KNOWHUB_EMBEDDING_MODEL"],
            os.environ.get("KNOWHUB_EMBEDDING_API_KEY", "none"),
        )
        stack.callback(embeddings.close)
        endpoint = stack.enter_context(caching_endpoint(embeddings))
        dense = {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_EMBEDDING_")}
        kinds["hybrid"] = {**dense, "KNOWHUB_EMBEDDING_BASE_URL": endpoint}
    return kinds
