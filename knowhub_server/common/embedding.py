"""Text to vectors: BM25 sparse vectors always, dense vectors when an endpoint is set.

Both store adapters get their sparse vectors from this one BM25 function (Qdrant's own
BM25 with the Multilingual tokenizer, so Chinese is segmented too); the engine applies
IDF at query time.
"""

from __future__ import annotations

import logging
import re
import threading
from array import array
from collections.abc import Sequence

import openai
import qdrant_edge as qe
from cachetools import LRUCache

from knowhub_server.common.config import CommonSettings
from knowhub_server.common.errors import Unavailable
from knowhub_server.common.metrics import Metrics

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


class DenseEmbedder:
    """Dense vectors from an OpenAI-compatible /v1/embeddings endpoint.

    Search queries go through a bounded LRU cache of this model's query vectors (kept as
    4-byte floats), since agents repeat their queries; record texts are never cached.
    """

    def __init__(self, base_url: str, api_key: str, model: str, dim: int,
                 timeout: float, max_retries: int, metrics: Metrics | None = None,
                 query_cache_size: int = 0) -> None:
        self.model = model
        self.dim = dim
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                                     max_retries=max_retries)
        self._metrics = metrics or Metrics()
        self._queries: LRUCache[str, array[float]] | None = (
            LRUCache(query_cache_size) if query_cache_size else None)
        self._queries_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: CommonSettings, metrics: Metrics | None = None
                      ) -> DenseEmbedder | None:
        if not settings.embedding_base_url:
            return None
        return cls(settings.embedding_base_url, settings.embedding_api_key,
                   settings.embedding_model, settings.embedding_dim,
                   settings.embedding_timeout_seconds, settings.llm_max_retries, metrics,
                   settings.embedding_query_cache_size)

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query: from the cache when this text was embedded
        lately, else from the endpoint (and then cached)."""
        if self._queries is None:
            return self.embed([text])[0]
        with self._queries_lock:
            cached = self._queries.get(text)
        lookups = self._metrics.embedding_query_cache
        if cached is not None:
            lookups.labels(self.model, "hit").inc()
            return cached.tolist()
        lookups.labels(self.model, "miss").inc()
        vector = self.embed([text])[0]
        with self._queries_lock:
            self._queries[text] = array("f", vector)
        return vector

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._metrics.embedding_call(self.model, len(texts)):
            try:
                response = self._client.embeddings.create(model=self.model, input=list(texts))
            except openai.OpenAIError as exc:
                raise Unavailable(f"the embedding endpoint failed: {exc}") from exc
            vectors = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
            if len(vectors) != len(texts) or any(len(v) != self.dim for v in vectors):
                raise Unavailable(
                    f"the embedding endpoint returned {len(vectors)} vectors of size "
                    f"{len(vectors[0]) if vectors else 0}; expected {len(texts)} of size "
                    f"{self.dim} (check KNOWHUB_EMBEDDING_DIM)"
                )
        return vectors

    def close(self) -> None:
        self._client.close()
