"""A stream worker acknowledges a job and takes the next in one transaction: against the
tests' real Redis, with a worker that records what it handles."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import redis

from knowhub_server.common.storage.redis_store import connect
from knowhub_server.dream.streams import Delivery, JobStream, StreamWorker

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


class Recorder(StreamWorker):
    """Handles each job by noting its number; `after(number)` runs once it is done."""

    def __init__(
        self, stream: JobStream, stopping: threading.Event, after: Callable[[str], None]
    ) -> None:
        super().__init__("recorder", stream, poll_seconds=0.05, stale_seconds=60, stopping=stopping)
        self.handled: list[str] = []
        self._after = after

    def handle(self, delivery: Delivery) -> None:
        self.handled.append(delivery.fields["n"])
        self.done(delivery)
        self._after(delivery.fields["n"])


class CountingStream(JobStream):
    """A JobStream counting the worker's own reads (those not riding on an ack)."""

    reads = 0

    def read(self, client: redis.Redis, consumer: str, block_ms: int) -> list[Delivery]:
        self.reads += 1
        return super().read(client, consumer, block_ms)


def stream_of(redis_url: str, redis_prefix: str, jobs: int) -> tuple[CountingStream, redis.Redis]:
    client = connect(redis_url)
    stream = CountingStream(lambda: client, f"{redis_prefix}jobs", "workers")
    stream.ensure_group()
    for n in range(1, jobs + 1):
        client.xadd(stream.stream, {"n": str(n)})
    return stream, client


def test_each_job_is_done_and_the_next_delivered_in_one_step(
    redis_url: str, redis_prefix: str
) -> None:
    stream, client = stream_of(redis_url, redis_prefix, 3)
    stopping = threading.Event()
    worker = Recorder(stream, stopping, after=lambda n: n == "3" and stopping.set())
    worker.run()

    assert worker.handled == ["1", "2", "3"]
    assert stream.reads == 1  # jobs 2 and 3 came with the acknowledgements of 1 and 2
    assert client.xlen(stream.stream) == 0
    assert client.xpending(stream.stream, "workers")["pending"] == 0


def test_a_job_delivered_with_the_last_acknowledgement_is_handled_before_stopping(
    redis_url: str, redis_prefix: str
) -> None:
    """Stopping after job 1 was acknowledged (and job 2 delivered with it): job 2 is
    handled, not left pending until the stale timeout; job 3 stays for another worker."""
    stream, client = stream_of(redis_url, redis_prefix, 3)
    stopping = threading.Event()
    worker = Recorder(stream, stopping, after=lambda n: stopping.set())
    worker.run()

    assert worker.handled == ["1", "2"]
    assert [fields[b"n"] for _id, fields in client.xrange(stream.stream)] == [b"3"]
    assert client.xpending(stream.stream, "workers")["pending"] == 0
