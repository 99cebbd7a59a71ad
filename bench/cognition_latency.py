"""Cognition service speed through gRPC against a `knowhub up` process (embedded Redis):
AppendEvents latency, next to a bare gRPC round trip, and SubmitEvaluation throughput with
its knowledge feedback.

Targets: AppendEvents p95 <= 2 ms.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub import KnowHub
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from bench.common import BENCH_TOKEN, TextGenerator, peak_rss_mb, percentiles, server_process

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
SOURCES_PER_QUERY = 3


def _message(sequence: int, text: TextGenerator) -> cognition_pb2.Event:
    return cognition_pb2.Event(
        message=cognition_pb2.MessageEvent(
            sequence=sequence, role="assistant", content=text.words(40)
        )
    )


def _injection(sequence: int, text: TextGenerator) -> list[cognition_pb2.Event]:
    """What inject_knowledge_for_goal appends: a query with 3 sources and a memory_read."""
    ids = [f"knowledge-20260101-{sequence:06d}{n:06d}" for n in range(SOURCES_PER_QUERY)]
    query = cognition_pb2.QueryEvent(
        sequence=sequence,
        goal_id="g1",
        query=text.words(12),
        response=text.words(80),
        source_ids=ids,
        sources=[
            cognition_pb2.QuerySource(id=i, task=text.words(12), content=text.words(60))
            for i in ids
        ],
    )
    memory = cognition_pb2.MemoryEvent(
        memory_type="long_term", key_or_scope="knowledge", summary="3 hits", step_index=sequence
    )
    return [cognition_pb2.Event(query=query), cognition_pb2.Event(memory_read=memory)]


def append_latency(port: int, appends: int) -> dict[str, dict[str, float]]:
    """AppendEvents percentiles for one message and for an injection's two events, each
    next to a bare gRPC round trip measured in alternation with it."""
    text = TextGenerator()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    append = cognition_pb2_grpc.CognitionServiceStub(channel).AppendEvents
    health = health_pb2_grpc.HealthStub(channel)
    results = {}
    for name, build in (
        ("1 message", lambda s: [_message(s, text)]),
        ("query + memory_read", lambda s: _injection(s, text)),
    ):
        trace_id, samples, bare = f"bench-{uuid.uuid4().hex[:8]}", [], []
        for sequence in range(appends * 2):
            request = cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=build(sequence))
            started = time.perf_counter()
            append(request, metadata=METADATA)
            middle = time.perf_counter()
            health.Check(health_pb2.HealthCheckRequest())
            if sequence >= appends:  # the first half warms up
                samples.append((middle - started) * 1000)
                bare.append((time.perf_counter() - middle) * 1000)
        results[name] = {**percentiles(samples), "bare": percentiles(bare)["p50"]}
    channel.close()
    return results


def evaluation_throughput(
    kh: KnowHub, traces: int, threads: int, statuses: tuple[str, ...], *, hot: bool = False
) -> float:
    """SubmitEvaluation calls per second: each rates the 3 sources of one pending query
    (raw LLM text) and applies the helpful / harmful ones to the knowledge. `hot`: every
    trace rates the same 3 records (their updates contend); else each its own 3."""
    text = TextGenerator(seed=11)
    count = SOURCES_PER_QUERY * (1 if hot else traces)
    items = [
        {"task": text.words(8), "content": text.words(30), "types": ["strategy"]}
        for _ in range(count)
    ]
    records = [
        r
        for offset in range(0, count, 500)
        for r in kh.knowledge.save_many(items[offset : offset + 500])
    ]
    prepared = []
    for index in range(traces):
        start = 0 if hot else index * SOURCES_PER_QUERY
        rated = records[start : start + SOURCES_PER_QUERY]
        trace_id = f"eval-{uuid.uuid4().hex[:10]}"
        kh.cognition.append_events(
            trace_id,
            [
                {
                    "type": "query",
                    "sequence": 1,
                    "query": text.words(8),
                    "sources": [{"id": r.id, "task": r.task, "content": r.content} for r in rated],
                }
            ],
        )
        answer = {
            "evaluations": [
                {
                    "query_sequence": 1,
                    "assessments": [
                        {"source_id": r.id, "status": status, "reason": "bench"}
                        for r, status in zip(rated, statuses, strict=True)
                    ],
                }
            ]
        }
        prepared.append((trace_id, f"```json\n{json.dumps(answer)}\n```"))

    def submit(item: tuple[str, str]) -> None:
        kh.cognition.submit_evaluation(item[0], raw_text=item[1])

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(submit, prepared))
    return traces / (time.perf_counter() - started)


def run(appends: int, traces: int, parent: str | None) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="knowhub-bench-", dir=parent) as tmp,
        server_process(Path(tmp) / "data") as (process, port),
    ):
        latency = append_latency(port, appends)
        kh = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN)
        counted = ("helpful", "harmful", "neutral")
        rates = {
            "helpful + harmful + neutral, 1 client": evaluation_throughput(kh, traces, 1, counted),
            "helpful + harmful + neutral, 8 clients": evaluation_throughput(kh, traces, 8, counted),
            "the same, 8 clients, the same 3 records": evaluation_throughput(
                kh, traces, 8, counted, hot=True
            ),
            "neutral x 3 (no feedback), 1 client": evaluation_throughput(
                kh, traces, 1, ("neutral",) * 3
            ),
        }
        rss = peak_rss_mb(process.pid)
        kh.close()
    _report(latency, rates, rss)


def _report(latency: dict[str, dict[str, float]], rates: dict[str, float], rss: float) -> None:
    print("\n== cognition: AppendEvents through gRPC (embedded Redis) ==")
    print(f"{'batch':<22} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'bare p50':>9}")
    for name, row in latency.items():
        print(
            f"{name:<22} {row['p50']:8.3f} {row['p95']:8.3f} {row['p99']:8.3f} {row['bare']:9.3f}"
        )
    print("target: p95 <= 2 ms")
    print("\n== cognition: SubmitEvaluation (raw LLM text, 3 assessments each) ==")
    for name, rate in rates.items():
        print(f"{name:<44} {rate:8.0f} submissions/s")
    print(f"server peak RSS: {rss:.0f} MiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000, help="measured appends per kind")
    parser.add_argument("--traces", type=int, default=300, help="evaluations per throughput run")
    parser.add_argument(
        "--data-parent",
        help="where the data directory goes (default: the "
        "system's temporary directory); Redis fsyncs every write there",
    )
    args = parser.parse_args(argv)
    run(args.appends, args.traces, args.data_parent)


if __name__ == "__main__":
    main()
