"""Fixtures: real servers on loopback over temporary stores, and the scripted LLM."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowhub_server.common.storage.redis_store import EmbeddedRedis
from tests.support.harness import Harness, write_tokens_file
from tests.support.openai_stub import OpenAIStub
from tests.support.real_embeddings import real_embedding_stub
from tests.support.redis_cluster import LocalCluster

RAM_DISK = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    """Temporary directories on a RAM disk when the machine has one: the Edge engine
    syncs each payload index it creates, which makes a server start take most of a
    second on an ordinary disk and milliseconds on tmpfs. The stores are just as real."""
    if config.option.basetemp is None and RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK):
        config.option.basetemp = tempfile.mkdtemp(prefix="knowhub-pytest-", dir=RAM_DISK)
        config.stash[_RAM_BASETEMP] = config.option.basetemp


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked `redis_cluster` (whole modules, by `pytestmark`) run on the session's
    standalone Redis and again on its Redis Cluster; the others on the standalone one."""
    if "redis_backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        "redis_cluster"
    ):
        metafunc.parametrize(
            "redis_backend", ["standalone", "cluster"], indirect=True, scope="session"
        )


# Markers by folder, so that `-m "not slow and not browser"` picks the quick tests.
_MARKS_BY_PATH = {
    "tests/console/": ("browser",),
    "tests/docs/": ("docs",),
    "tests/test_docs.py": ("docs",),
    "tests/examples/": ("docs",),
    "tests/reliability/": ("slow",),
    "tests/deploy/": ("slow",),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        where = Path(str(item.path)).relative_to(root).as_posix()
        for prefix, marks in _MARKS_BY_PATH.items():
            if where.startswith(prefix):
                for mark in marks:
                    item.add_marker(mark)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RAM_BASETEMP in config.stash:
        shutil.rmtree(config.stash[_RAM_BASETEMP], ignore_errors=True)


_RAM_BASETEMP = pytest.StashKey[str]()


@pytest.fixture
def llm() -> Iterator[OpenAIStub]:
    stub = OpenAIStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    return write_tokens_file(tmp_path)


StartHub = Callable[..., Harness]


@pytest.fixture
def start_hub(
    tmp_path: Path, tokens_file: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StartHub]:
    """Starts servers with the tests' tokens: `start_hub(env={...}, **settings)` sets the
    KNOWHUB_* variables first (services read theirs when the server starts)."""
    started: list[Harness] = []

    def start(env: dict[str, str] | None = None, **settings: Any) -> Harness:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        harness = Harness(
            tmp_path / f"hub{len(started)}", tokens_file=tokens_file, **settings
        ).start()
        started.append(harness)
        return harness

    yield start
    for harness in started:
        harness.stop()


@pytest.fixture
def hub(tmp_path: Path, tokens_file: Path) -> Iterator[Harness]:
    """A server with the tests' tokens and no LLM."""
    harness = Harness(tmp_path / "data", tokens_file=tokens_file).start()
    yield harness
    harness.stop()


@pytest.fixture
def llm_hub(tmp_path: Path, tokens_file: Path, llm: OpenAIStub) -> Iterator[Harness]:
    """A server with the tests' tokens and the scripted LLM (no embeddings)."""
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens_file,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=5,
    ).start()
    yield harness
    harness.stop()


@pytest.fixture
def hybrid_hub(tmp_path: Path, tokens_file: Path, llm: OpenAIStub) -> Iterator[Harness]:
    """A server with the tests' tokens, dense embeddings from the stub, and no LLM."""
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens_file,
        embedding_base_url=llm.base_url,
        embedding_model="stub-embed",
        embedding_dim=llm.embedding_dim,
        llm_max_retries=0,
    ).start()
    yield harness
    harness.stop()


@pytest.fixture
def minilm() -> Iterator[OpenAIStub]:
    """The scripted LLM whose embeddings come from a real model (all-MiniLM-L6-v2), for
    tests where meaning matters; `tests.support.real_embeddings.hub_embedding_env` gives
    the settings that point a hub at it."""
    stub = real_embedding_stub()
    yield stub
    stub.stop()


@pytest.fixture
def minilm_hub(tmp_path: Path, tokens_file: Path, minilm: OpenAIStub) -> Iterator[Harness]:
    """A server with the tests' tokens, dense embeddings from the real model, and no LLM."""
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens_file,
        embedding_base_url=minilm.base_url,
        embedding_model="all-MiniLM-L6-v2",
        embedding_dim=minilm.embedding_dim,
        llm_max_retries=0,
    ).start()
    yield harness
    harness.stop()


@pytest.fixture(scope="session")
def redis_backend(request: pytest.FixtureRequest) -> str:
    """standalone, or cluster for the second run of a test marked `redis_cluster`."""
    return str(getattr(request, "param", "standalone"))


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A real Redis Cluster for the session: 3 masters, 3 replicas, on loopback."""
    cluster = LocalCluster(tmp_path_factory.mktemp("redis-cluster")).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def redis_url(
    tmp_path_factory: pytest.TempPathFactory, redis_backend: str, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The session's Redis Cluster for `redis_backend` cluster; else the Redis named by
    KNOWHUB_TEST_REDIS_URL, else an embedded server for the session."""
    if redis_backend == "cluster":
        yield request.getfixturevalue("redis_cluster").url
        return
    if os.environ.get("KNOWHUB_TEST_REDIS_URL"):
        yield os.environ["KNOWHUB_TEST_REDIS_URL"]
        return
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix of this test's own, so tests sharing one Redis never meet."""
    return f"test-{uuid.uuid4().hex[:12]}:"
