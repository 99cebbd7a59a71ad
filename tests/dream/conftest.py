"""A dream server per test module for the dream run tests: every service on the session's
Redis under a prefix of its own, the dream service's token, and the scripted LLM."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.dream.dreaming import FAST, DreamLLM, write_dream_tokens
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import running_hub


@pytest.fixture(scope="module")
def dream_stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def dream_server(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, dream_stub: OpenAIStub
) -> Iterator[Harness]:
    directory = tmp_path_factory.mktemp("dream-runs")
    with pytest.MonkeyPatch.context() as env:
        for name, value in FAST.items():
            env.setenv(name, value)
        with running_hub(
            directory,
            tokens=write_dream_tokens(directory),
            redis_url=redis_url,
            redis_prefix=f"test-{uuid.uuid4().hex[:12]}:",
            llm_base_url=dream_stub.base_url,
            llm_max_retries=0,
            llm_timeout_seconds=10,
        ) as harness:
            yield harness


@pytest.fixture
def dream_llm(dream_stub: OpenAIStub) -> DreamLLM:
    """The module server's LLM, scripted afresh for this test."""
    scripted = DreamLLM()
    dream_stub.responder = scripted
    return scripted
