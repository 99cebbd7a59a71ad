"""One hub per data directory: the embedded stores (Qdrant shards, the redis-server it
starts) belong to the hub that opened them. A hub may run in several processes: those the
holding process starts itself are part of it."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from knowhub_server.common.base.environment import variable_set

LOCK_FILE = "knowhub.lock"
# What the holding process tells the processes it starts: "<its pid>:<data dir>".
HOLDER_ENV = "KNOWHUB_DATA_DIR_HOLDER"


class DataDirInUse(RuntimeError):
    """Another process holds the data directory."""


@contextlib.contextmanager
def hold_data_dir(data_dir: Path, purpose: str) -> Iterator[None]:
    """Holds `<data_dir>/knowhub.lock` (an advisory lock the kernel drops when the process
    ends, even on SIGKILL) for as long as the block runs; raises DataDirInUse, naming the
    holder, when another process has it. A process whose parent holds it goes on: it was
    started as part of the same hub."""
    if os.environ.get(HOLDER_ENV) == f"{os.getppid()}:{data_dir.resolve()}":
        yield
        return
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 200, 0).decode(errors="replace").strip()
            raise DataDirInUse(
                f"{data_dir} is in use by another KnowHub process ({holder or 'unknown'}); "
                f"stop it first, or give another --data-dir"
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"pid {os.getpid()}: {purpose}\n".encode(), 0)
        with variable_set(HOLDER_ENV, f"{os.getpid()}:{data_dir.resolve()}"):
            yield
    finally:
        os.close(descriptor)  # releases the lock
