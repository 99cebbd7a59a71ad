"""Jobs on a Redis stream, worked by the threads of a consumer group: what the historian's
jobs and the dream runs share.

A job is pending until a worker acknowledges it; a worker's unacknowledged job is taken
over by another after the stale timeout (XAUTOCLAIM); a worker touches its job while it
works on it, so a slow one is not taken over. Moves between streams are MULTI
transactions, so a job is never in neither place. A worker acknowledges a finished job and
takes the next in one transaction: with `appendfsync always` each write round trip costs
Redis an fsync, so a job costs one rather than two.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import redis
from redis.commands.core import Script

from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.storage.redis_store import (
    BLOCK_MAX_SECONDS,
    lua_source,
    single_connection,
    writable,
)

log = logging.getLogger("knowhub.streams")

Checkpoint = Callable[[], None]  # called between a job's long steps; may raise to stop it
STOP_SECONDS = 10.0  # how long stop() waits for a worker to finish its job
SWITCH_INTERVAL_SECONDS = 0.001


@dataclass
class Delivery:
    """A job entry handed to a worker; `deliveries` counts every delivery of the job,
    including those of the entries it was requeued from (the entry's `attempt` field)."""

    entry_id: str
    fields: dict[str, str]
    deliveries: int

    @classmethod
    def of(cls, entry_id: bytes | str, raw: dict[bytes, bytes], times_delivered: int) -> Delivery:
        fields = decoded(raw)
        earlier = int(fields.get("attempt", "0")) if fields.get("attempt", "").isdigit() else 0
        return cls(text(entry_id), fields, earlier + times_delivered)


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def decoded(raw: dict[bytes, bytes]) -> dict[str, str]:
    return {text(k): text(v) for k, v in raw.items()}


# An XREADGROUP reply to a client that does not decode (redis-py types it for every client).
GroupRead = (
    list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] | dict[bytes, list[list[Any]]] | None
)


def _new_deliveries(reply: GroupRead) -> list[Delivery]:
    """The entries of an XREADGROUP reply, each delivered for the first time. Inside a
    cluster transaction redis-py leaves the reply unparsed: a map of stream to
    [id, [field, value, ...]] entries."""
    if isinstance(reply, dict):
        return [
            Delivery.of(entry_id, dict(zip(flat[::2], flat[1::2], strict=True)), 1)
            for entries in reply.values()
            for entry_id, flat in entries
        ]
    return [
        Delivery.of(entry_id, raw, 1)
        for _stream, entries in reply or ()
        for entry_id, raw in entries
    ]


class JobStream:
    """One job stream and its consumer group."""

    def __init__(self, client: Callable[[], redis.Redis], stream: str, group: str) -> None:
        self._client = client
        self.stream = stream
        self.group = group
        self._scripts: dict[tuple[str, str], Script] = {}

    def _script(self, package: str, name: str) -> Script:
        """`package`'s Lua script lua/<name>.lua, registered once (later calls send its
        SHA only, and the script again when the server answers NOSCRIPT)."""
        if (package, name) not in self._scripts:
            self._scripts[package, name] = self._client().register_script(lua_source(package, name))
        return self._scripts[package, name]

    def blocking_client(self) -> redis.Redis:
        """A client holding one connection of its own to the stream's server (on a
        cluster: its master), for a worker's blocking reads."""
        return single_connection(self._client(), self.stream)

    @staticmethod
    def unblock(client: redis.Redis, client_id: int) -> None:
        """Ends the blocking read of connection `client_id` of `client`'s server at once
        (as if it timed out)."""
        redis.Redis(connection_pool=client.connection_pool).client_unblock(client_id)

    def ensure_group(self) -> None:
        """Creates the consumer group; from the stream's start, so jobs enqueued before
        any worker existed are read too."""
        try:
            self._client().xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def read(self, client: redis.Redis, consumer: str, block_ms: int) -> list[Delivery]:
        """The next new job, waiting up to `block_ms` for one."""
        return _new_deliveries(
            cast(
                GroupRead,
                client.xreadgroup(
                    self.group, consumer, {self.stream: ">"}, count=1, block=block_ms
                ),
            )
        )

    def reclaim(self, consumer: str, min_idle_ms: int) -> list[Delivery]:
        """Takes over one job another worker was given `min_idle_ms` or more ago and has
        neither finished nor touched since (its worker died or stalled)."""
        client = self._client()
        reply = client.xautoclaim(
            self.stream, self.group, consumer, min_idle_ms, start_id="0-0", count=1
        )
        claimed = []
        for entry_id, raw in reply[1] if len(reply) > 1 else ():
            entry_id = text(entry_id)
            if not raw:  # deleted from the stream meanwhile: nothing left to do
                client.xack(self.stream, self.group, entry_id)
                continue
            pending = client.xpending_range(self.stream, self.group, entry_id, entry_id, 1)
            times = int(pending[0]["times_delivered"]) if pending else 1
            claimed.append(Delivery.of(entry_id, raw, times))
        return claimed

    def touch(self, consumer: str, entry_id: str) -> None:
        """Resets the job's idle time, so nobody takes it over while it is worked on."""
        self._client().xclaim(self.stream, self.group, consumer, 0, [entry_id], justid=True)

    def done(self, delivery: Delivery, next_for: str = "") -> list[Delivery]:
        """Acknowledges and deletes the finished job; with `next_for`, also delivers that
        consumer's next new job (if one waits) in the same transaction: one round trip,
        and one AOF fsync, instead of two."""
        pipe = self._client().pipeline(transaction=True)
        pipe.xack(self.stream, self.group, delivery.entry_id)
        pipe.xdel(self.stream, delivery.entry_id)
        if next_for:
            pipe.xreadgroup(self.group, next_for, {self.stream: ">"}, count=1)
        replies = pipe.execute()
        return _new_deliveries(replies[2]) if next_for else []

    def move(self, delivery: Delivery, stream: str, fields: dict[str, str]) -> None:
        """Adds `fields` to `stream` (this one: the job goes back to the end) and removes
        the delivered entry, in one transaction."""
        pipe = self._client().pipeline(transaction=True)
        pipe.xadd(stream, writable(fields))
        pipe.xack(self.stream, self.group, delivery.entry_id)
        pipe.xdel(self.stream, delivery.entry_id)
        pipe.execute()

    def drop_consumers(self, idle_ms: int, only: str | None = None) -> None:
        """Removes consumers (all, or `only` one) idle for `idle_ms` with no pending job:
        workers that stopped or died. One with pending jobs stays, since deleting it would
        drop its jobs from the group's view."""
        client = self._client()
        for info in client.xinfo_consumers(self.stream, self.group):
            name = text(info["name"])
            if info["pending"] == 0 and info["idle"] >= idle_ms and only in (None, name):
                client.xgroup_delconsumer(self.stream, self.group, name)


class PoolThread(threading.Thread):
    """A thread of a WorkerPool; `unblock` ends a wait it may be in when the pool stops."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, daemon=True)

    def unblock(self) -> None:
        """Nothing to end by default: the thread waits on the pool's stopping event."""


class StreamWorker(PoolThread, ABC):
    """One consumer of a job stream: reads new jobs, and now and then takes over a stale
    one; `handle` does a job and settles its entry."""

    def __init__(
        self,
        name: str,
        stream: JobStream,
        *,
        poll_seconds: float,
        stale_seconds: float,
        stopping: threading.Event,
    ) -> None:
        super().__init__(name)
        self.consumer = f"{socket.gethostname()}-{os.getpid()}-{name}-{secrets.token_hex(3)}"
        self._stream = stream
        self._poll_seconds = poll_seconds
        self._stale_ms = int(stale_seconds * 1000)
        self._stopping = stopping
        self._blocking: tuple[redis.Redis, int] | None = None  # client, its connection id
        self._next_reclaim = 0.0
        self._following: list[Delivery] = []  # delivered with the last acknowledgement

    @abstractmethod
    def handle(self, delivery: Delivery) -> None: ...

    def periodic(self) -> None:
        """Housekeeping at each poll, besides the reclaim."""

    def run(self) -> None:
        while not self._stopping.is_set():
            client = None
            try:  # connecting may fail too (a frozen Redis): the worker must live on
                # First through the shared client, which waits out a failover and learns
                # the stream's master; then a connection of its own to that master.
                self._stream.ensure_group()
                client = self._stream.blocking_client()
                self._blocking = (client, client.client_id())
                self._consume(client)
            except redis.RedisError as exc:
                log.warning(
                    "%s: Redis failed (%s); retrying in %.1fs",
                    self.consumer,
                    exc,
                    self._poll_seconds,
                )
                self._stopping.wait(self._poll_seconds)
            finally:
                if client is not None:
                    client.close()
        with contextlib.suppress(redis.RedisError):  # a leftover is swept by the others
            self._stream.drop_consumers(0, only=self.consumer)

    def unblock(self) -> None:
        if self._blocking is not None:
            with contextlib.suppress(redis.RedisError):  # else it wakes at its next poll
                self._stream.unblock(*self._blocking)

    def _consume(self, client: redis.Redis) -> None:
        block_ms = int(min(self._poll_seconds, BLOCK_MAX_SECONDS) * 1000)
        # A job delivered along with the last one's acknowledgement is handled even when
        # the process began stopping meanwhile: it is this consumer's now.
        while self._following or not self._stopping.is_set():
            if not self._stopping.is_set():
                self._housekeeping()
            batch = self._following or self._stream.read(client, self.consumer, block_ms)
            self._following = []
            for delivery in batch:
                self.handle(delivery)

    def done(self, delivery: Delivery) -> None:
        """Settles a finished job and, unless the process is stopping, takes the next one
        in the same round trip (handled at the next turn of the loop)."""
        next_for = "" if self._stopping.is_set() else self.consumer
        self._following += self._stream.done(delivery, next_for)

    def _housekeeping(self) -> None:
        if time.monotonic() >= self._next_reclaim:
            self._next_reclaim = time.monotonic() + self._poll_seconds
            for delivery in self._stream.reclaim(self.consumer, self._stale_ms):
                log.warning(
                    "%s took over stale entry %s (delivery %d)",
                    self.consumer,
                    delivery.entry_id,
                    delivery.deliveries,
                )
                self.handle(delivery)
        self.periodic()

    def keeper(self, delivery: Delivery, released: type[Exception]) -> Checkpoint:
        """A checkpoint for the job's long steps: raises `released` once the process is
        stopping, and touches the job when a quarter of the stale timeout has passed."""
        touched = time.monotonic()  # delivering or claiming the job reset its idle time

        def checkpoint() -> None:
            nonlocal touched
            if self._stopping.is_set():
                raise released
            if time.monotonic() - touched >= self._stale_ms / 4000:
                self._stream.touch(self.consumer, delivery.entry_id)
                touched = time.monotonic()

        return checkpoint


class WorkerPool(ABC):
    """A service's worker threads in this process; a Background of the runtime.

    Workers start with the server, except over an embedded Redis that has never run in
    the data directory: nothing can be queued there yet, so they start with the first
    job (`wake`) rather than start a redis-server for a stack that never uses them.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._stopping = threading.Event()
        self._workers: list[PoolThread] = []
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @property
    @abstractmethod
    def wanted(self) -> bool: ...

    @abstractmethod
    def _new_workers(self) -> list[PoolThread]: ...

    def start(self) -> None:
        if self.wanted and self._runtime.redis_may_hold_data:
            self._spawn()

    def wake(self) -> None:
        """Work was enqueued: make sure this process's workers run."""
        if self.wanted and not self._workers:
            self._spawn()

    def _spawn(self) -> None:
        with self._lock:
            if self._workers or self._stopped:
                return
            # Workers share the interpreter with the RPC threads: hand the GIL over
            # within a millisecond (not Python's 5 ms) so RPCs stay fast while they run.
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_SECONDS))
            self._workers = self._new_workers()
            for worker in self._workers:
                worker.start()

    def stop(self) -> None:
        """Lets each worker finish or release its job, then returns."""
        with self._lock:
            self._stopped = True
        self._stopping.set()
        for worker in self._workers:
            worker.unblock()
        deadline = time.monotonic() + STOP_SECONDS
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                log.warning(
                    "%s still busy at shutdown; its work will be taken over after "
                    "the stale timeout",
                    worker.name,
                )
