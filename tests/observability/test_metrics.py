"""/metrics over HTTP after real calls: RPCs by method and status code, the Redis stream
gauges (also while Redis is down), and the LLM and embedding calls."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from knowhub import KnowHub, Trigger, errors
from knowhub_contracts.v1 import (
    cognition_pb2,
    cognition_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)

from knowhub_server.common.storage.redis_store import EmbeddedRedis
from tests.conftest import StartHub
from tests.observability.support import Samples, names, scrape, value
from tests.support.harness import Harness
from tests.support.openai_stub import Failure, OpenAIStub
from tests.support.shared import bearer

KNOWLEDGE = "knowhub.v1.KnowledgeService"
COGNITION = "knowhub.v1.CognitionService"
MODEL = "gpt-4o-mini"  # KNOWHUB_LLM_MODEL's default
EMBEDDING_MODEL = "text-embedding-3-small"
FAST_TRIGGERS = {"KNOWHUB_COGNITION_TRIGGER_POLL_SECONDS": "0.05"}


def calls(
    samples: Samples, service: str, method: str, code: str, kind: str = "unary"
) -> float | None:
    return value(
        samples, "knowhub_rpc_calls_total", service=service, method=method, type=kind, code=code
    )


def timed(samples: Samples, service: str, method: str, code: str) -> float | None:
    return value(
        samples, "knowhub_rpc_duration_seconds_count", service=service, method=method, code=code
    )


def scrape_until(
    harness: Harness, ready: Callable[[Samples], bool], timeout: float = 10.0
) -> Samples:
    deadline = time.monotonic() + timeout
    samples = scrape(harness)
    while not ready(samples) and time.monotonic() < deadline:
        time.sleep(0.05)
        samples = scrape(harness)
    return samples


def save(client: KnowHub) -> str:
    return client.knowledge.save(
        task="rotate the logs", content="use logrotate", types=["tool"], allow_duplicate=True
    ).id


# ---- RPCs -------------------------------------------------------------------------------


def test_every_call_is_counted_and_timed_by_method_and_status(start_hub: StartHub) -> None:
    hub = start_hub(env=FAST_TRIGGERS, metrics_port=0)
    quiet = start_hub(metrics_port=0)  # a second server in this process counts apart
    alice, admin = hub.client("alice"), hub.client("admin")
    knowledge_id = save(alice)
    alice.knowledge.get(knowledge_id)
    with pytest.raises(errors.NotFound):
        alice.knowledge.get("no-such-record")
    with pytest.raises(errors.InvalidArgument):
        alice.knowledge.save(task="", content="", types=["tool"])
    channel = grpc.insecure_channel(hub.address)
    with pytest.raises(grpc.RpcError) as anonymous:
        knowledge_pb2_grpc.KnowledgeServiceStub(channel).GetKnowledge(
            knowledge_pb2.GetKnowledgeRequest(id=knowledge_id), timeout=10
        )
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as refused:  # a server stream, refused at once
        list(
            cognition_pb2_grpc.CognitionServiceStub(channel).WatchTriggers(
                cognition_pb2.WatchTriggersRequest(), metadata=bearer("alice"), timeout=10
            )
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    channel.close()
    watch = admin.cognition.watch_triggers(group="ops")  # a stream the caller cancels
    time.sleep(0.2)
    watch.cancel()

    samples = scrape_until(
        hub,
        lambda s: calls(s, COGNITION, "WatchTriggers", "CANCELLED", "server_stream") is not None,
    )
    expected = [
        (KNOWLEDGE, "SaveKnowledge", "OK", "unary"),
        (KNOWLEDGE, "SaveKnowledge", "INVALID_ARGUMENT", "unary"),
        (KNOWLEDGE, "GetKnowledge", "OK", "unary"),
        (KNOWLEDGE, "GetKnowledge", "NOT_FOUND", "unary"),
        (KNOWLEDGE, "GetKnowledge", "UNAUTHENTICATED", "unary"),
        (COGNITION, "WatchTriggers", "PERMISSION_DENIED", "server_stream"),
        (COGNITION, "WatchTriggers", "CANCELLED", "server_stream"),
    ]
    for service, method, code, kind in expected:
        assert calls(samples, service, method, code, kind) == 1, (method, code)
        assert timed(samples, service, method, code) == 1, (method, code)
    assert (
        value(
            samples,
            "knowhub_rpc_duration_seconds_sum",
            service=KNOWLEDGE,
            method="SaveKnowledge",
            code="OK",
        )
        > 0
    )
    assert calls(samples, KNOWLEDGE, "GetKnowledge", "UNKNOWN") is None

    again = scrape(hub)  # counters only grow: scraping does not reset them
    assert calls(again, KNOWLEDGE, "GetKnowledge", "OK") == 1
    assert not any(name == "knowhub_rpc_calls_total" for name in names(scrape(quiet)))


def test_metrics_are_off_unless_a_port_is_set(hub: Harness) -> None:
    assert hub.server is not None and hub.server.metrics_port is None


def test_a_metrics_port_in_use_stops_the_start_with_a_clear_error(
    start_hub: StartHub, tmp_path: Path
) -> None:
    first = start_hub(metrics_port=0)
    assert first.server is not None
    taken = first.server.metrics_port
    with pytest.raises(RuntimeError, match=f"cannot serve metrics on 127.0.0.1:{taken}"):
        start_hub(metrics_port=taken)


# ---- Streams ------------------------------------------------------------------------------


def test_stream_lengths_and_lags_are_read_when_scraped(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_hub(
        env={"KNOWHUB_HISTORIAN_WORKERS": "0", **FAST_TRIGGERS},
        metrics_port=0,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
    )
    alice, admin = hub.client("alice"), hub.client("admin")
    empty = scrape(hub)
    assert value(empty, "knowhub_redis_up") == 1
    assert value(empty, "knowhub_stream_length", stream="historian:jobs") == 0
    assert value(empty, "knowhub_stream_oldest_entry_age_seconds", stream="historian:jobs") == 0

    for n in range(3):
        assert alice.memory.remember(
            observations=[f"User 1000{n} likes tea"], context={"user_id": f"1000{n}"}
        ).enqueued
    signalled = signal(alice)
    watch = admin.cognition.watch_triggers(group="ops", consumer="one")
    first = next(iter(watch))  # delivered to the group, not acknowledged
    assert isinstance(first, Trigger) and first.trace_id == signalled
    watch.cancel()
    time.sleep(0.3)  # the watch has ended on the server too
    signal(alice)  # waits: nobody reads the group now
    time.sleep(0.05)

    samples = scrape(hub)
    assert value(samples, "knowhub_stream_length", stream="historian:jobs") == 3
    lag = value(samples, "knowhub_stream_oldest_entry_age_seconds", stream="historian:jobs")
    assert lag is not None and 0 < lag < 60
    assert value(samples, "knowhub_stream_length", stream="historian:failed") == 0
    assert value(samples, "knowhub_stream_length", stream="cognition:triggers:evaluation") == 2
    assert (
        value(
            samples,
            "knowhub_stream_group_pending",
            stream="cognition:triggers:evaluation",
            group="ops",
        )
        == 1
    )
    waiting = value(
        samples,
        "knowhub_stream_group_lag_seconds",
        stream="cognition:triggers:evaluation",
        group="ops",
    )
    assert waiting is not None and 0 < waiting < 60  # the second trigger, not yet read
    assert value(samples, "knowhub_stream_length", stream="dream:runs") == 0
    assert value(samples, "knowhub_stream_length", stream="audit") == 0


def signal(client: KnowHub) -> str:
    """A new trace with one pending query, signalled: one trigger on the stream."""
    trace_id = f"trace-{uuid.uuid4().hex[:12]}"
    client.cognition.append_events(
        trace_id,
        [
            {
                "type": "query",
                "sequence": 1,
                "goal_id": "g1",
                "query": "how to log in",
                "response": "",
                "source_ids": ["k1"],
                "sources": [{"id": "k1", "task": "", "content": ""}],
            }
        ],
    )
    assert client.cognition.signal_trigger(trace_id, "compression").published
    return trace_id


def test_metrics_answer_while_redis_is_down(start_hub: StartHub, tmp_path: Path) -> None:
    redis_server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        hub = start_hub(
            env={"KNOWHUB_HISTORIAN_WORKERS": "0"}, metrics_port=0, redis_url=redis_server.url
        )
        alice = hub.client("alice")
        alice.memory.remember(observations=["User 10001 likes tea"], context={"user_id": "10001"})
        assert value(scrape(hub), "knowhub_stream_length", stream="historian:jobs") == 1
    finally:
        redis_server.stop()

    with pytest.raises(errors.Unavailable):
        alice.memory.remember(
            observations=["User 10001 likes coffee"], context={"user_id": "10001"}
        )
    samples = scrape(hub)
    assert value(samples, "knowhub_redis_up") == 0
    assert "knowhub_stream_length" not in names(samples)
    assert (
        value(
            samples,
            "knowhub_rpc_calls_total",
            service="knowhub.v1.DreamService",
            method="Remember",
            type="unary",
            code="UNAVAILABLE",
        )
        == 1
    )


# ---- LLM and embeddings ----------------------------------------------------------------------


def test_llm_and_embedding_calls_are_counted_by_purpose_model_and_outcome(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(
        metrics_port=0,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=5,
        embedding_base_url=llm.base_url,
        embedding_dim=llm.embedding_dim,
    )
    alice = hub.client("alice")
    knowledge_id = save(alice)
    llm.script({"content": "use logrotate with compress"}, Failure(500))
    alice.knowledge.update(knowledge_id, evolve_feedback="compress the old logs")
    with pytest.raises(errors.Unavailable):
        alice.knowledge.update(knowledge_id, evolve_feedback="keep a week")

    samples = scrape(hub)
    assert (
        value(samples, "knowhub_llm_calls_total", purpose="evolve", model=MODEL, outcome="ok") == 1
    )
    assert (
        value(samples, "knowhub_llm_calls_total", purpose="evolve", model=MODEL, outcome="error")
        == 1
    )
    assert value(samples, "knowhub_llm_duration_seconds_count", purpose="evolve", model=MODEL) == 2
    embedded = value(samples, "knowhub_embedding_calls_total", model=EMBEDDING_MODEL, outcome="ok")
    assert embedded is not None and embedded == len(llm.embedding_requests)
    assert value(samples, "knowhub_embedding_texts_total", model=EMBEDDING_MODEL) >= embedded
    assert (
        value(samples, "knowhub_embedding_calls_total", model=EMBEDDING_MODEL, outcome="error")
        is None
    )

    llm.embeddings_down = True
    save(alice)  # saved at once, its vector owed
    samples = scrape(hub)
    assert (
        value(samples, "knowhub_embedding_calls_total", model=EMBEDDING_MODEL, outcome="error") == 1
    )
    assert (
        value(samples, "knowhub_embedding_duration_seconds_count", model=EMBEDDING_MODEL)
        == embedded + 1
    )
    assert value(samples, "knowhub_embedding_backlog", collection="knowledge") == 1


def test_no_label_carries_text_a_caller_chose(start_hub: StartHub, llm: OpenAIStub) -> None:
    """Forty model names of a caller's choosing, and calls of methods that do not exist,
    leave /metrics as it was: only the operator's model names a series."""
    hub = start_hub(
        metrics_port=0, llm_base_url=llm.base_url, llm_max_retries=0, llm_timeout_seconds=5
    )
    alice = hub.client("alice")
    llm.responder = lambda _body: '{"task": "rotate the logs", "content": "use logrotate"}'
    for n in range(40):
        save(alice)
        save(alice)  # a near-duplicate for slim to merge
        with pytest.raises(errors.InvalidArgument):
            alice.knowledge.slim(model=f"caller-model-{n}")
    channel = grpc.insecure_channel(hub.address)
    for n in range(5):
        with pytest.raises(grpc.RpcError) as unknown:
            channel.unary_unary(f"/{KNOWLEDGE}/CallerMethod{n}")(
                b"", metadata=bearer("alice"), timeout=10
            )
        assert unknown.value.code() == grpc.StatusCode.UNIMPLEMENTED
    channel.close()
    labels = {v for _, pairs in scrape(hub) for _, v in pairs}
    assert not any(v.startswith(("caller-model-", "CallerMethod")) for v in labels)
    assert llm.chat_requests == []


def _search_requests(llm: OpenAIStub, query: str) -> int:
    """Embedding calls whose input was exactly this one query text."""
    return sum(1 for body in llm.embedding_requests if body.get("input") in (query, [query]))


def test_a_repeated_query_skips_the_embedding_call_and_the_cache_counts_hits(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(
        metrics_port=0, embedding_base_url=llm.base_url, embedding_dim=llm.embedding_dim
    )
    alice = hub.client("alice")
    save(alice)
    first = alice.knowledge.search("rotate logs", top_k=3)
    again = [alice.knowledge.search("rotate logs", top_k=3) for _ in range(2)]
    alice.knowledge.search("compress logs", top_k=3)

    assert _search_requests(llm, "rotate logs") == 1
    assert _search_requests(llm, "compress logs") == 1
    ranked = [[(h.knowledge.id, h.relevance) for h in r] for r in (first, *again)]
    assert ranked[0] and ranked == [ranked[0]] * 3
    samples = scrape(hub)
    assert (
        value(
            samples,
            "knowhub_embedding_query_cache_lookups_total",
            model=EMBEDDING_MODEL,
            result="hit",
        )
        == 2
    )
    assert (
        value(
            samples,
            "knowhub_embedding_query_cache_lookups_total",
            model=EMBEDDING_MODEL,
            result="miss",
        )
        == 2
    )


def test_without_a_query_cache_every_search_calls_the_endpoint(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    hub = start_hub(
        metrics_port=0,
        embedding_base_url=llm.base_url,
        embedding_dim=llm.embedding_dim,
        embedding_query_cache_size=0,
    )
    alice = hub.client("alice")
    save(alice)
    for _ in range(3):
        alice.knowledge.search("rotate logs", top_k=3)

    assert _search_requests(llm, "rotate logs") == 3
    assert (
        value(
            scrape(hub),
            "knowhub_embedding_query_cache_lookups_total",
            model=EMBEDDING_MODEL,
            result="miss",
        )
        is None
    )
