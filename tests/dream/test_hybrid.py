"""Memory with embeddings: hybrid recall of events and profiles, and `knowhub reindex`
rebuilding the memory's vectors after the embedding model changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.vectors import StoreMismatch
from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    REWRITE,
    Queue,
    memory_settings,
    private_context,
    profile_update,
    prompt_of,
    rewrite,
    tool_of,
)
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub, ToolCalls

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def embedding_settings(llm: OpenAIStub) -> dict[str, object]:
    return {
        "embedding_base_url": llm.base_url,
        "embedding_model": "stub-embed",
        "embedding_dim": llm.embedding_dim,
    }


def passthrough(request: dict[str, object]) -> ToolCalls:
    if tool_of(request) == REWRITE:
        observation = prompt_of(request).split("Observation to rewrite:\n", 1)[1]
        return rewrite(observation.split("\n\n", 1)[0])
    return ToolCalls(
        [profile_update("user", "10001", "Plays the oboe in an orchestra.", tags=["oboe", "music"])]
    )


def test_hybrid_recall_finds_events_and_profiles(
    start_hub: StartHub, llm: OpenAIStub, redis_url: str, redis_prefix: str
) -> None:
    llm.responder = passthrough
    hub = start_hub(
        env=FAST_HISTORIAN,
        **embedding_settings(llm),
        **memory_settings(redis_url, redis_prefix, llm),
    )
    alice = hub.client("alice")
    for observation in (
        "User 10001 plays the oboe in an orchestra",
        "User 10001 repairs vintage radios",
    ):
        alice.memory.remember("", [observation], context=private_context())
    Queue(redis_url, redis_prefix).wait_drained()
    embedded = len(llm.embedding_requests)
    hits = alice.memory.search_events("oboe orchestra", target_user_id="10001")
    assert hits[0].event.text == "User 10001 plays the oboe in an orchestra"
    assert 0.5 < hits[0].similarity <= 1.0 and hits[0].similarity > hits[-1].similarity
    assert len(llm.embedding_requests) == embedded + 1, "the query was embedded"
    [profile] = alice.memory.search_profiles("oboe")
    assert profile.profile.summary == "Plays the oboe in an orchestra."


def test_reindex_rebuilds_the_memory_vectors(
    tmp_path: Path,
    llm: OpenAIStub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm.responder = passthrough
    data = tmp_path / "data"
    settings = {"tokens_file": tokens_file, **memory_settings(redis_url, redis_prefix, llm)}
    for name, value in FAST_HISTORIAN.items():
        monkeypatch.setenv(name, value)
    bm25 = Harness(data, **settings).start()
    bm25.client("alice").memory.remember(
        "", ["User 10001 plays the oboe"], context=private_context()
    )
    Queue(redis_url, redis_prefix).wait_drained()
    bm25.stop()

    hybrid = Harness(data, **settings, **embedding_settings(llm))
    with pytest.raises(StoreMismatch, match="knowhub reindex"):
        hybrid.start()
    hybrid.stop()
    for name, value in embedding_settings(llm).items():
        monkeypatch.setenv(f"KNOWHUB_{name.upper()}", str(value))
    assert knowhub_cli(["reindex", "--data-dir", str(data)]) == 0
    # Two events (the sender's and the global copy) and one profile.
    assert "memory: 3 records re-embedded; done" in capsys.readouterr().out

    hybrid = Harness(data, **settings, **embedding_settings(llm)).start()
    try:
        alice = hybrid.client("alice")
        assert len(alice.memory.search_events("oboe", target_user_id="10001")) == 1
        assert alice.memory.search_profiles("oboe")[0].profile.entity_id == "10001"
    finally:
        hybrid.stop()
