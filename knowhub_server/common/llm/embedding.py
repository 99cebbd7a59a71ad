"""Text to vectors: BM25 sparse vectors always, dense vectors when an endpoint is set.

Both store adapters get their sparse vectors from this one BM25 function (Qdrant's own
BM25 with the Multilingual tokenizer, so Chinese is segmented too); the engine applies
IDF at query time.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import re
import socket
import sys
import threading
import time
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import qdrant_edge as qe
from cachetools import LRUCache

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.errors import Unavailable
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.lane import ModelLane
from knowhub_server.common.llm.retry import within

log = logging.getLogger(__name__)


# A run of digits not glued to a letter or digit before it: "2023", "429", "8" in "8:30".
# The look-behind follows the first digit so that the engine can skip to digits quickly.
_STANDALONE_NUMBER = re.compile(r"\d(?<![^\W_]\d)\d*")


def keep_numbers(text: str) -> str:
    """Marks standalone numbers ("429" -> "n429") so the Multilingual tokenizer, which
    drops pure numbers, keeps error codes, years and versions searchable."""
    return _STANDALONE_NUMBER.sub(lambda m: "n" + m.group(), text)


class Bm25Encoder:
    """Sparse BM25 vectors for documents and queries.

    Qdrant's BM25 with the Multilingual tokenizer (so Chinese is segmented) and its
    default English stemming and stopwords, with numbers kept (see `keep_numbers`).
    """

    def __init__(self) -> None:
        self._model = qe.Bm25(qe.Bm25Config(tokenizer=qe.TokenizerType.Multilingual))

    def document(self, text: str) -> qe.SparseVector:
        return self._model.embed_document(keep_numbers(text))

    def query(self, text: str) -> qe.SparseVector:
        return self._model.embed_query(keep_numbers(text))


class Breaker:
    """After a failure, fails every call at once for `cooldown` seconds, so that while a
    model is down no caller waits for it; the first call after that tries it again."""

    def __init__(self, cooldown: float) -> None:
        self._cooldown = cooldown
        self._open_until = 0.0
        self._last_error = ""
        self.failing = False  # whether the last call failed

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    def check(self) -> None:
        if self.open:
            raise Unavailable(
                f"the embedding model is failing ({self._last_error}); "
                f"not asked again for {self._open_until - time.monotonic():.0f} s"
            )

    def failed(self, error: str) -> None:
        self._last_error = error[:200]
        self._open_until = time.monotonic() + self._cooldown
        self.failing = True

    def succeeded(self) -> None:
        self._open_until = 0.0
        self.failing = False


class DenseEmbedder:
    """Dense vectors of one embedding model: from an OpenAI-compatible /v1/embeddings
    endpoint (`EndpointEmbedder`), or computed in this process (`LocalEmbedder`).

    Search queries go through a bounded LRU cache of this model's query vectors (kept as
    4-byte floats), since agents repeat their queries; record texts are never cached.
    Calls made while an RPC is handled wait for a slot of the model lane. After a failed
    call the model is not asked again for `breaker_seconds` (`Breaker`): callers fall back
    (search to BM25, saves to writing the vector later) at once.
    """

    def __init__(
        self,
        model: str,
        dim: int,
        metrics: Metrics | None = None,
        query_cache_size: int = 0,
        lane: ModelLane | None = None,
        breaker_seconds: float = 0.0,
        query_timeout: float | None = None,
    ) -> None:
        self.model = model
        self.dim = dim
        self.breaker = Breaker(breaker_seconds)
        self._query_timeout = query_timeout
        self._metrics = metrics or Metrics()
        self._queries: LRUCache[str, array[float]] | None = (
            LRUCache(query_cache_size) if query_cache_size else None
        )
        self._queries_lock = threading.Lock()
        self._lane = lane or ModelLane(0, 0)

    @classmethod
    def from_settings(
        cls, settings: CommonSettings, metrics: Metrics | None = None, lane: ModelLane | None = None
    ) -> DenseEmbedder | None:
        """The model of KNOWHUB_EMBEDDING_MODEL_PATH, else the endpoint at
        KNOWHUB_EMBEDDING_BASE_URL, else none (BM25 only)."""
        cache = settings.embedding_query_cache_size
        if settings.embedding_model_path is not None:
            named = "embedding_model" in settings.model_fields_set
            return LocalEmbedder(
                settings.embedding_model_path,
                settings.embedding_model if named else None,
                settings.embedding_dim if "embedding_dim" in settings.model_fields_set else None,
                metrics,
                cache,
                lane=lane,
            )
        if settings.embedding_base_url:
            return EndpointEmbedder(
                settings.embedding_base_url,
                settings.embedding_api_key,
                settings.embedding_model,
                settings.embedding_dim,
                settings.embedding_timeout_seconds,
                settings.llm_max_retries,
                metrics,
                cache,
                lane,
                breaker_seconds=settings.embedding_breaker_seconds,
                query_timeout=settings.embedding_query_timeout_seconds,
            )
        return None

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query: from the cache when this text was embedded
        lately, else from the model (and then cached)."""
        if self._queries is None:
            return self.embed([text], timeout=self._query_timeout)[0]
        with self._queries_lock:
            cached = self._queries.get(text)
        lookups = self._metrics.embedding_query_cache
        if cached is not None:
            lookups.labels(self.model, "hit").inc()
            return cached.tolist()
        lookups.labels(self.model, "miss").inc()
        vector = self.embed([text], timeout=self._query_timeout)[0]
        with self._queries_lock:
            self._queries[text] = array("f", vector)
        return vector

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[list[float]]:
        """The texts' vectors, in order; Unavailable when the model cannot give them
        within `timeout` seconds (the configured timeout when None), or failed lately."""
        if not texts:
            return []
        self.breaker.check()
        try:
            with self._lane.slot(), self._metrics.embedding_call(self.model, len(texts)):
                vectors = self._vectors(list(texts), timeout)
                if len(vectors) != len(texts) or any(len(v) != self.dim for v in vectors):
                    raise Unavailable(
                        f"the embedding model returned {len(vectors)} vectors of size "
                        f"{len(vectors[0]) if vectors else 0}; expected {len(texts)} of size "
                        f"{self.dim} (check KNOWHUB_EMBEDDING_DIM)"
                    )
        except Unavailable as exc:
            self.breaker.failed(exc.message)
            raise
        self.breaker.succeeded()
        return vectors

    def _vectors(self, texts: list[str], timeout: float | None) -> list[list[float]]:
        raise NotImplementedError

    def close(self) -> None:
        """Releases what the model holds (an HTTP client)."""


def _embedding(value: str | list[float]) -> list[float]:
    """A vector as an endpoint sends it: base64 of little-endian float32s, or a list."""
    if not isinstance(value, str):
        return value
    vector = array("f", base64.b64decode(value))
    if sys.byteorder == "big":
        vector.byteswap()
    return vector.tolist()


class EndpointFailure(Exception):
    """An embedding call that a retry may cure: the endpoint unreachable, too slow,
    overloaded or failing inside."""


# Statuses a retry may cure: too slow, rate limited, failing inside.
_RETRY_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class EndpointEmbedder(DenseEmbedder):
    """Dense vectors from an OpenAI-compatible /v1/embeddings endpoint, over kept-alive
    HTTP/1.1 connections (one per concurrent call, reused): a search's embedding call
    costs the endpoint's time and little more (a general-purpose client added about
    2.5 ms a call)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        dim: int,
        timeout: float,
        max_retries: int,
        metrics: Metrics | None = None,
        query_cache_size: int = 0,
        lane: ModelLane | None = None,
        *,
        breaker_seconds: float = 0.0,
        query_timeout: float | None = None,
    ) -> None:
        super().__init__(
            model, dim, metrics, query_cache_size, lane, breaker_seconds, query_timeout
        )
        url = urlsplit(base_url)
        self._secure = url.scheme == "https"
        self._host = url.hostname or "localhost"
        self._port = url.port
        self._path = url.path.rstrip("/") + "/embeddings"
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {api_key}",
        }
        self._idle: list[http.client.HTTPConnection] = []
        self._idle_lock = threading.Lock()
        self._timeout = timeout
        self._max_retries = max_retries

    def _vectors(self, texts: list[str], timeout: float | None) -> list[list[float]]:
        # Base64 (little-endian float32s, as OpenAI sends them) decodes in a fraction of
        # the time a JSON list of numbers parses in; an endpoint may answer lists anyway.
        body = json.dumps(
            {"model": self.model, "input": texts, "encoding_format": "base64"}
        ).encode()
        try:
            data = within(
                timeout or self._timeout,
                self._max_retries,
                lambda left: self._post(body, left),
                retryable=(EndpointFailure,),
            )
            return [
                _embedding(item["embedding"])
                for item in sorted(data["data"], key=lambda d: d["index"])
            ]
        except EndpointFailure as exc:
            raise Unavailable(f"the embedding endpoint failed: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise Unavailable(
                f"the embedding endpoint answered what is not a list of embeddings: {exc!r}"
            ) from exc

    def _post(self, body: bytes, timeout: float) -> Any:
        """One POST within `timeout` seconds; a kept-alive connection the endpoint has
        closed meanwhile is replaced once at no cost to the retries."""
        connection, reused = self._connection()
        try:
            try:
                status, payload = self._exchange(connection, body, timeout)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                connection.close()
                connection, _ = self._connection(fresh=True)
                status, payload = self._exchange(connection, body, timeout)
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            problem = "timed out" if isinstance(exc, socket.timeout) else repr(exc)
            raise EndpointFailure(f"{self._host}:{self._port}: {problem}") from exc
        with self._idle_lock:
            self._idle.append(connection)
        if status == 200:
            return json.loads(payload)
        message = f"HTTP {status}: {payload[:200].decode(errors='replace')}"
        if status in _RETRY_STATUSES:
            raise EndpointFailure(message)
        raise Unavailable(f"the embedding endpoint failed: {message}")

    def _exchange(
        self, connection: http.client.HTTPConnection, body: bytes, timeout: float
    ) -> tuple[int, bytes]:
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.request("POST", self._path, body, self._headers)
        response = connection.getresponse()
        return response.status, response.read()

    def _connection(self, *, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection (and True), else a new one."""
        if not fresh:
            with self._idle_lock:
                if self._idle:
                    return self._idle.pop(), True
        kind = http.client.HTTPSConnection if self._secure else http.client.HTTPConnection
        return kind(self._host, self._port, timeout=self._timeout), False

    def close(self) -> None:
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


EMBED_EXTRA = (
    "KNOWHUB_EMBEDDING_MODEL_PATH needs sentence-transformers: install KnowHub "
    "with its `embed` extra (pip install 'knowhub[embed]'; in a clone, "
    ".venv/bin/pip install -e '.[embed]')"
)


class LocalEmbedder(DenseEmbedder):
    """Dense vectors from a sentence-transformers model on this machine, computed in this
    process (on the CPU, or a GPU when torch has one): hybrid search with no endpoint.

    The model is named `model`, else by its folder's name: that name and the vectors' size
    are recorded with the stored vectors, so an endpoint serving the same model under the
    same name can take its place without a reindex. Vectors are unit length.
    """

    def __init__(
        self,
        path: Path,
        model: str | None = None,
        dim: int | None = None,
        metrics: Metrics | None = None,
        query_cache_size: int = 0,
        device: str | None = None,
        lane: ModelLane | None = None,
    ) -> None:
        self._model = _load_sentence_transformer(path, device)
        size = self._model.get_embedding_dimension()
        if dim is not None and dim != size:
            raise ValueError(
                f"KNOWHUB_EMBEDDING_DIM is {dim}, but the model at {path} makes "
                f"vectors of {size} dimensions: set it to {size}, or unset it"
            )
        super().__init__(model or path.name, size, metrics, query_cache_size, lane)
        self._lock = threading.Lock()  # one encode at a time: the model is not thread-safe
        log.info(
            "embedding model %s (%d dimensions) loaded in-process from %s", self.model, size, path
        )

    def _vectors(self, texts: list[str], timeout: float | None) -> list[list[float]]:
        try:
            with self._lock:
                vectors = self._model.encode(
                    texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
                )
        except (RuntimeError, ValueError) as exc:  # torch's failures (out of memory, ...)
            raise Unavailable(f"the in-process embedding model failed: {exc}") from exc
        return cast(list[list[float]], vectors.tolist())


def _load_sentence_transformer(path: Path, device: str | None) -> Any:
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ValueError(
            f"there is no sentence-transformers model at {path} "
            "(KNOWHUB_EMBEDDING_MODEL_PATH: a folder with its modules.json)"
        )
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise ValueError(EMBED_EXTRA) from exc
    transformers_logging.disable_progress_bar()  # no loading bars among the log lines
    # local_files_only: a model folder, never a download
    return SentenceTransformer(str(path), device=device, local_files_only=True)
