"""The embedding endpoint's client: it asks for base64 vectors (float32s, decoded far
faster than JSON numbers) and reads lists of numbers from endpoints that send those."""

from __future__ import annotations

import pytest

from knowhub_server.common.llm.embedding import EndpointEmbedder
from tests.support.openai_stub import OpenAIStub


@pytest.mark.parametrize("as_lists", [False, True], ids=["base64", "lists"])
def test_vectors_arrive_as_base64_or_as_lists(as_lists: bool) -> None:
    stub = OpenAIStub(embedding_dim=8).start()
    stub.embeddings_as_lists = as_lists
    embedder = EndpointEmbedder(stub.base_url, "none", "stub", 8, timeout=5, max_retries=0)
    try:
        texts = ["rotate the logs", "restore the database"]
        vectors = embedder.embed(texts)
        assert stub.embedding_requests[-1]["encoding_format"] == "base64"
        assert vectors == [pytest.approx(v, abs=1e-6) for v in stub.embed_all(texts)]
        assert all(isinstance(x, float) for v in vectors for x in v)
    finally:
        embedder.close()
        stub.stop()
