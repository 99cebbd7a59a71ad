"""The model lane: the slots that calls to the LLM and the embedding endpoint take while an
RPC is handled (security/fairness.py limits each caller's calls beside it).

Calls that wait on the model take one of KNOWHUB_MODEL_CALLS_MAX slots, or wait for one
among at most KNOWHUB_MODEL_CALLS_QUEUE others; beyond, RESOURCE_EXHAUSTED (`Busy`, whose
trailing metadata `grpc-retry-pushback-ms` says when to try again). However slow the model
and however many callers ask it, at most slots + queue threads of a server's pool wait on
it: the rest serves everything else, and reads never queue behind a model. Background
work (the historian, dream runs, the evaluator) has worker pools of its own and takes no
slot: only model calls made while an RPC is handled do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from knowhub_server.common.base.calls import current_call
from knowhub_server.common.base.errors import Busy

# What a refused caller is told to wait: about one model call.
MODEL_RETRY_MS = 2_000


class ModelLane:
    """Slots for the calls to the LLM and the embedding endpoint made while an RPC is
    handled (0 slots: no limit)."""

    def __init__(self, slots: int, queue: int) -> None:
        self._slots = slots
        self._queue = queue
        self._free = threading.Semaphore(slots)
        self._waiting = 0
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Holds a slot for the block, after waiting for one if the queue has room;
        raises Busy when it has none."""
        if not self._slots or current_call.get() is None:
            yield
            return
        if not self._free.acquire(blocking=False):
            self._wait_for_slot()
        try:
            yield
        finally:
            self._free.release()

    def _wait_for_slot(self) -> None:
        with self._lock:
            if self._waiting >= self._queue:
                raise Busy(
                    f"the model is busy: {self._slots} calls wait on it and "
                    f"{self._waiting} more for their turn (KNOWHUB_MODEL_CALLS_MAX, "
                    "KNOWHUB_MODEL_CALLS_QUEUE)",
                    MODEL_RETRY_MS,
                )
            self._waiting += 1
        try:
            self._free.acquire()
        finally:
            with self._lock:
                self._waiting -= 1
