"""Fixtures of the resource tests: servers whose tokens add a `secure_reader`, over the
session's Redis with a key prefix of their own."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub

from tests.resource.support import write_tokens
from tests.support.harness import Harness
from tests.support.shared import running_hub

Principals = dict[str, KnowHub]


@pytest.fixture(scope="module")
def module_redis(redis_url: str) -> dict[str, str]:
    """Redis settings for a server shared by a module: the session's Redis, own prefix."""
    return {"redis_url": redis_url, "redis_prefix": f"test-{uuid.uuid4().hex[:12]}:"}


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, module_redis: dict[str, str]
) -> Iterator[Harness]:
    directory = tmp_path_factory.mktemp("resources")
    with running_hub(directory, tokens=write_tokens(directory), **module_redis) as harness:
        yield harness


@pytest.fixture(scope="module")
def clients(server: Harness) -> Principals:
    return {name: server.client(name) for name in ("alice", "carol", "bob", "admin", "reader")}


StartResourceHub = Callable[..., Harness]


@pytest.fixture
def start_resource_hub(
    tmp_path: Path, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StartResourceHub]:
    """Starts servers on this test's own data directory (one at a time), with the
    secure_reader tokens and this test's Redis prefix: `start(env={...}, **settings)`."""
    started: list[Harness] = []
    tokens = write_tokens(tmp_path)

    def start(env: dict[str, str] | None = None, **settings: Any) -> Harness:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        given = {"redis_url": redis_url, "redis_prefix": redis_prefix, **settings}
        harness = Harness(
            tmp_path / "data",
            tokens_file=tokens,
            **{k: v for k, v in given.items() if v is not None},
        ).start()
        started.append(harness)
        return harness

    yield start
    for harness in started:
        harness.stop()
