"""The in-process embedding model (KNOWHUB_EMBEDDING_MODEL_PATH, the `embed` extra): the
same interface and query cache as an endpoint, its size taken from the model, and
settings it cannot use refused in one line. (A hub searching with it:
tests/test_first_run.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.embedding import DenseEmbedder, LocalEmbedder
from tests.support.real_embeddings import DIM, MODEL_NAME, embed_texts, model_path


def lookups(metrics: Metrics, result: str) -> float | None:
    return metrics.registry.get_sample_value(
        "knowhub_embedding_query_cache_lookups_total", {"model": MODEL_NAME, "result": result}
    )


def test_the_settings_make_a_cached_in_process_model_of_the_models_size(tmp_path: Path) -> None:
    settings = CommonSettings(
        data_dir=tmp_path,
        embedding_model_path=model_path(),
        embedding_model=MODEL_NAME,
        embedding_query_cache_size=8,
    )
    metrics = Metrics()
    embedder = DenseEmbedder.from_settings(settings, metrics)
    assert isinstance(embedder, LocalEmbedder)
    assert (embedder.model, embedder.dim) == (MODEL_NAME, DIM)

    query = "how do I refresh an expiring https cert"
    first, again = embedder.embed_query(query), embedder.embed_query(query)
    assert first == pytest.approx(again, abs=1e-6) and len(first) == DIM
    assert (lookups(metrics, "miss"), lookups(metrics, "hit")) == (1, 1)
    # the vectors the tests' endpoint serves are this model's too
    assert embedder.embed([query])[0] == pytest.approx(embed_texts([query])[0], abs=1e-5)
    assert embedder.embed([]) == []


def test_the_model_is_named_by_its_folder_unless_named() -> None:
    assert LocalEmbedder(model_path()).model == model_path().name


def test_a_size_the_model_does_not_make_is_refused() -> None:
    with pytest.raises(
        ValueError,
        match=f"KNOWHUB_EMBEDDING_DIM is 1536, but the model at "
        f"{model_path()} makes vectors of {DIM} dimensions",
    ):
        LocalEmbedder(model_path(), dim=1536)


def test_a_folder_with_no_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="there is no sentence-transformers model at"):
        LocalEmbedder(tmp_path)


def test_a_model_and_an_endpoint_at_once_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="keep one"):
        CommonSettings(
            data_dir=tmp_path,
            embedding_model_path=model_path(),
            embedding_base_url="http://127.0.0.1:1/v1",
        )
