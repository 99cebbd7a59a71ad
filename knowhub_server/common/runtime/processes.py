"""`knowhub up` over several processes: the child processes.

Which services leave the main process is the command line's choice
(knowhub_server.composition). The main process serves the one public port and passes
calls for the others on (see forward.py); those run as children (`knowhub serve ...`).

Every child shares the main process's data directory (its local token), Redis and
delegation key, listens on loopback only, and dies with the main process: it asks the
kernel for SIGTERM when its parent goes (PR_SET_PDEATHSIG), so even a SIGKILLed parent
leaves no child behind. A child that exits on its own stops the whole hub.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from knowhub_server.common.base.config import CommonSettings

log = logging.getLogger(__name__)

START_SECONDS = 60.0
STOP_SECONDS = 20.0
_LISTENING = re.compile(r"listening on (\S+?)(?: |$)")
_PR_SET_PDEATHSIG = 1
# Settings a child on loopback must not inherit: it serves the main process only, in
# plaintext, with no metrics port of its own to collide on.
_NOT_INHERITED = (
    "KNOWHUB_TLS_CERT_FILE",
    "KNOWHUB_TLS_KEY_FILE",
    "KNOWHUB_TLS_CA_FILE",
    "KNOWHUB_METRICS_PORT",
    "KNOWHUB_HOST",
    "KNOWHUB_PORT",
)


def die_with_parent(parent_pid: int) -> None:
    """Called first thing in a child: SIGTERM when the parent goes, and at once if it has
    gone already."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    else:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        threading.Event().wait(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


class ChildProcess:
    """A `knowhub serve <what>` child, started and stopped with the hub (a Companion).
    Its environment is made when it starts (once the main process listens), and
    `reached` learns where the child listens before the hub announces itself."""

    def __init__(
        self,
        what: str,
        argv: list[str],
        env: Callable[[], Mapping[str, str]],
        reached: Callable[[str], None] | None = None,
        note: Callable[[str], str | None] | None = None,
    ) -> None:
        self.what = what
        self.address = ""
        self.failed = False
        self._argv = argv
        self._env = env
        self._reached = reached
        self._note = note  # a further line to print, given the child's address
        self._process: subprocess.Popen[str] | None = None
        self._stopping = threading.Event()

    def start(self, _hub_port: int = 0) -> str:
        """Starts the child and waits for its listening line; returns the line to print."""
        command = [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "serve",
            *self._argv,
            "--parent-pid",
            str(os.getpid()),
        ]
        # A session of its own: a terminal's Ctrl-C reaches the main process alone, which
        # then stops its children in order.
        self._process = subprocess.Popen(
            command,
            env=dict(self._env()),
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        line, self.address = self._await_listening()
        if self._reached is not None:
            self._reached(self.address)
        threading.Thread(target=self._watch, name=f"knowhub-{self.what}", daemon=True).start()
        note = self._note(self.address) if self._note is not None else None
        line = f"{line.rstrip()} (process {self._process.pid})"
        return f"{line}\n{note}" if note else line

    def _await_listening(self) -> tuple[str, str]:
        """The child's listening line and the address in it."""
        assert self._process is not None and self._process.stdout is not None
        timer = threading.Timer(START_SECONDS, self._process.kill)
        timer.start()
        try:
            for line in self._process.stdout:
                match = _LISTENING.search(line)
                if match:
                    return line, match.group(1)
        finally:
            timer.cancel()
        code = self._process.wait()
        raise RuntimeError(
            f"the {self.what} process exited at start (status {code}); see its log above"
        )

    def _watch(self) -> None:
        """Reads the child's further output (its log goes to the shared stderr), and stops
        the hub if the child ends while the hub is not stopping."""
        assert self._process is not None and self._process.stdout is not None
        for _line in self._process.stdout:
            pass  # what it prints after its listening line repeats what the hub printed
        code = self._process.wait()
        if not self._stopping.is_set():
            self.failed = True
            log.error("the %s process exited (status %s): stopping KnowHub", self.what, code)
            os.kill(os.getpid(), signal.SIGTERM)

    def stop(self) -> None:
        self._stopping.set()
        if self._process is None or self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            log.warning(
                "the %s process did not stop within %.0f s: killed", self.what, STOP_SECONDS
            )
            self._process.kill()
            self._process.wait()


def child_env(settings: CommonSettings, **overrides: str) -> dict[str, str]:
    """This process's environment for a child on loopback: the same data directory,
    Redis, tokens and delegation key, with `overrides` (KNOWHUB_* names) on top."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env["KNOWHUB_DATA_DIR"] = str(Path(settings.data_dir).resolve())
    env["KNOWHUB_DELEGATION_KEY_FILE"] = str(settings.delegation_key_file)
    if settings.redis_url:
        env["KNOWHUB_REDIS_URL"] = settings.redis_url
    env.update(overrides)
    return env
