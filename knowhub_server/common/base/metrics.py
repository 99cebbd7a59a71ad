"""Prometheus metrics of one server process, served over HTTP at /metrics.

Every server has a registry of its own (not prometheus_client's global one), so several
servers in one process, as in the tests, count apart. RPCs are counted by the
interceptor (observe.py), LLM and embedding calls by their clients, and the Redis streams
are read at scrape time by `StreamGauges`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

import redis
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

# LLM calls take seconds, not milliseconds: buckets up to the longest timeouts.
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
OK, ERROR = "ok", "error"


class Metrics:
    """The registry of one server process and the metrics the code records into."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.rpc_calls = Counter(
            "knowhub_rpc_calls",
            "RPCs handled, by service, method, type and status code.",
            ["service", "method", "type", "code"],
            registry=self.registry,
        )
        self.rpc_seconds = Histogram(
            "knowhub_rpc_duration_seconds",
            "Time to handle an RPC (a stream: until it ends).",
            ["service", "method", "code"],
            registry=self.registry,
        )
        self.llm_calls = Counter(
            "knowhub_llm_calls",
            "Chat LLM calls, by purpose, model and outcome (ok, error).",
            ["purpose", "model", "outcome"],
            registry=self.registry,
        )
        self.llm_seconds = Histogram(
            "knowhub_llm_duration_seconds",
            "Time of a chat LLM call, retries included.",
            ["purpose", "model"],
            buckets=LLM_BUCKETS,
            registry=self.registry,
        )
        self.embedding_calls = Counter(
            "knowhub_embedding_calls",
            "Embedding endpoint calls, by model and outcome.",
            ["model", "outcome"],
            registry=self.registry,
        )
        self.embedding_texts = Counter(
            "knowhub_embedding_texts",
            "Texts sent to the embedding endpoint.",
            ["model"],
            registry=self.registry,
        )
        self.embedding_seconds = Histogram(
            "knowhub_embedding_duration_seconds",
            "Time of an embedding call.",
            ["model"],
            buckets=LLM_BUCKETS,
            registry=self.registry,
        )
        self.embedding_query_cache = Counter(
            "knowhub_embedding_query_cache_lookups",
            "Search queries looked up in the query "
            "embedding cache, by model and result (hit: no embedding call; miss: one). The "
            "hit rate is hit / (hit + miss).",
            ["model", "result"],
            registry=self.registry,
        )
        self.embedding_backlog = Gauge(
            "knowhub_embedding_backlog",
            "Records stored without their dense vector while "
            "the embedding model failed, by collection; a background task writes the "
            "vectors when the model answers again.",
            ["collection"],
            registry=self.registry,
        )
        self.feedback_verdicts = Counter(
            "knowhub_feedback_verdicts",
            "Helpful and harmful verdicts of evaluations, by "
            "what became of them on the knowledge: applied, deferred (tried again later) or "
            "refused (never applied; a feedback_refused event on the trace says why).",
            ["outcome"],
            registry=self.registry,
        )
        self.streams = StreamGauges()
        self.registry.register(self.streams)
        self._http: WSGIServer | None = None

    def llm_call(self, purpose: str, model: str) -> AbstractContextManager[None]:
        """Times and counts one LLM call; an exception out of the block counts as error."""
        return _counted(self.llm_calls, self.llm_seconds, purpose, model)

    def embedding_call(self, model: str, texts: int) -> AbstractContextManager[None]:
        self.embedding_texts.labels(model).inc(texts)
        return _counted(self.embedding_calls, self.embedding_seconds, model)

    def serve(self, host: str, port: int) -> int:
        """Serves /metrics on host:port (0 picks a free port); returns the bound port."""
        try:
            self._http, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise RuntimeError(f"cannot serve metrics on {host}:{port}: {exc}") from exc
        bound = self._http.server_port
        log.info("metrics at http://%s:%d/metrics", host, bound)
        return bound

    def close(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None


@contextmanager
def _counted(calls: Counter, seconds: Histogram, *labels: str) -> Iterator[None]:
    """Observes the block's duration and counts it by outcome: ok when it completed,
    error when an exception left it."""
    outcome, started = ERROR, time.perf_counter()
    try:
        yield
        outcome = OK
    finally:
        seconds.labels(*labels).observe(time.perf_counter() - started)
        calls.labels(*labels, outcome).inc()


@dataclass(frozen=True)
class WatchedStream:
    key: str  # the Redis key
    name: str  # the metric label: the key without the deployment's prefix


class StreamGauges(Collector):
    """Lengths and lags of the watched Redis streams, read when /metrics is scraped.

    A service watches its streams when it registers. When Redis cannot be read, the
    scrape still answers: knowhub_redis_up is 0 and the stream gauges are left out.
    """

    def __init__(self) -> None:
        self._streams: list[WatchedStream] = []
        self._client: Callable[[], redis.Redis | None] = lambda: None

    def watch(self, client: Callable[[], redis.Redis | None], prefix: str, *keys: str) -> None:
        """Adds streams. `client` is the process's Redis client (the same for every
        service); it returns None while Redis holds nothing yet."""
        self._client = client
        # The label drops the prefix and the hash tag's braces: `historian:jobs`.
        self._streams += [
            WatchedStream(key, key.replace("{", "").replace("}", "").removeprefix(prefix))
            for key in keys
        ]

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # the families depend on what is watched; built at scrape time

    def collect(self) -> Iterator[GaugeMetricFamily]:
        if not self._streams:
            return
        up = GaugeMetricFamily(
            "knowhub_redis_up", "1 when the stream gauges could be read from Redis, else 0."
        )
        families = _stream_families()
        try:
            client = self._client()
            for stream in self._streams:
                _read_stream(client, stream, families)
        except redis.RedisError as exc:
            log.warning("metrics: cannot read the streams from Redis: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families.values()


def _stream_families() -> dict[str, GaugeMetricFamily]:
    stream, group = ["stream"], ["stream", "group"]
    return {
        "length": GaugeMetricFamily(
            "knowhub_stream_length", "Entries in the stream.", labels=stream
        ),
        "oldest": GaugeMetricFamily(
            "knowhub_stream_oldest_entry_age_seconds",
            "Age of the stream's oldest entry (0 when empty). Job streams delete done "
            "jobs, so on historian:jobs this is the historian's lag.",
            labels=stream,
        ),
        "pending": GaugeMetricFamily(
            "knowhub_stream_group_pending",
            "Entries delivered to the consumer group and not yet acknowledged.",
            labels=group,
        ),
        "lag": GaugeMetricFamily(
            "knowhub_stream_group_lag_seconds",
            "Age of the oldest entry not yet delivered to the consumer group (0 when it "
            "has read everything).",
            labels=group,
        ),
    }


def _read_stream(
    client: redis.Redis | None, stream: WatchedStream, families: dict[str, GaugeMetricFamily]
) -> None:
    now_ms = time.time() * 1000
    if client is None:  # the embedded Redis has never run: every stream is empty
        families["length"].add_metric([stream.name], 0)
        families["oldest"].add_metric([stream.name], 0)
        return
    families["length"].add_metric([stream.name], client.xlen(stream.key))
    first = client.xrange(stream.key, count=1)
    families["oldest"].add_metric([stream.name], _age_seconds(first, now_ms))
    try:
        groups = client.xinfo_groups(stream.key)
    except redis.ResponseError:  # no such key: no groups either
        groups = []
    for group in groups:
        name = _text(group["name"])
        families["pending"].add_metric([stream.name, name], int(group["pending"]))
        undelivered = client.xrange(
            stream.key, min=f"({_text(group['last-delivered-id'])}", count=1
        )
        families["lag"].add_metric([stream.name, name], _age_seconds(undelivered, now_ms))


def _age_seconds(
    entries: Sequence[tuple[bytes | str | None, object]] | None, now_ms: float
) -> float:
    """Age of the first entry, from the milliseconds of its stream id."""
    if not entries or entries[0][0] is None:
        return 0.0
    entry_ms = int(_text(entries[0][0]).split("-")[0])
    return max(0.0, (now_ms - entry_ms) / 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
