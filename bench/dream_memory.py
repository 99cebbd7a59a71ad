"""Dream service memory speed, through gRPC against `knowhub up` processes: Remember
latency, historian throughput per worker with a zero-latency scripted LLM, and
SearchEvents latency over 50k events.

Targets: Remember p95 <= 2 ms; historian >= 200 jobs/s per worker with a
zero-latency LLM; SearchEvents p50 reported at 50k events.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process
from knowhub_server.common.storage.redis_store import EmbeddedRedis, connect
from tests.support.openai_stub import OpenAIStub, ToolCalls

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
PREFIX = "bench:"
GROUPS = 50
USERS = 500


@contextmanager
def dream_stub(port: int) -> Iterator[tuple[dream_pb2_grpc.DreamServiceStub, Any]]:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield dream_pb2_grpc.DreamServiceStub(channel), health_pb2_grpc.HealthStub(channel)
    finally:
        channel.close()


def remember_request(
    text: TextGenerator, rng: random.Random, observations: int
) -> dream_pb2.RememberRequest:
    """A group turn: a memo, observations, the source message and 12 recent messages."""
    user = str(10_000 + rng.randrange(USERS))
    return dream_pb2.RememberRequest(
        memo=f"answered {text.words(8)}",
        observations=[f"User {user} {text.words(14)}" for _ in range(observations)],
        context=dream_pb2.MemoryContext(
            user_id=user,
            group_id=str(20_000 + rng.randrange(GROUPS)),
            request_type=dream_pb2.REQUEST_TYPE_GROUP,
            source_message=text.words(20),
            recent_messages=[f"{user}: {text.words(10)}" for _ in range(12)],
            timestamp={"seconds": int(time.time()) - rng.randrange(90 * 86_400)},
        ),
    )


def wait_drained(client: redis.Redis, timeout: float = 3600) -> None:
    deadline = time.monotonic() + timeout
    while client.xlen(f"{PREFIX}historian:jobs") and time.monotonic() < deadline:
        time.sleep(0.05)


# ---- Remember latency and SearchEvents at 50k events --------------------------------------


def remember_latency(
    stub: dream_pb2_grpc.DreamServiceStub, health: Any, requests: list[dream_pb2.RememberRequest]
) -> tuple[list[float], float]:
    """Remember latencies (ms) after a warm-up, and the bare gRPC round trip's p50,
    measured in alternation so that the machine's drift affects both alike."""
    for request in requests[:200]:
        stub.Remember(request, metadata=METADATA)
    latencies, bare = [], []
    for request in requests[200:]:
        started = time.perf_counter()
        stub.Remember(request, metadata=METADATA)
        middle = time.perf_counter()
        health.Check(health_pb2.HealthCheckRequest())
        latencies.append((middle - started) * 1000)
        bare.append((time.perf_counter() - middle) * 1000)
    return latencies, percentiles(bare)["p50"]


def remember_and_search(
    tmp: Path, redis_url: str, calls: int, events: int, searches: int
) -> dict[str, Any]:
    """Remember with the historian off, then with it consuming the backlog at the same
    time; then more jobs up to `events` events, and searches over them."""
    text, rng = TextGenerator(seed=11), random.Random(11)
    client = connect(redis_url)
    env = {"KNOWHUB_REDIS_URL": redis_url, "KNOWHUB_REDIS_PREFIX": PREFIX}
    data_dir = tmp / "search-data"
    figures: dict[str, Any] = {}
    for workers in ("0", "1"):
        with (
            server_process(data_dir, {**env, "KNOWHUB_HISTORIAN_WORKERS": workers}) as (
                _process,
                port,
            ),
            dream_stub(port) as (stub, health),
        ):
            requests = [remember_request(text, rng, 1) for _ in range(calls + 200)]
            latencies, bare = remember_latency(stub, health, requests)
            figures[f"remember_{workers}"] = {**percentiles(latencies), "bare": bare}
            if workers == "0":
                continue
            stored = 2 * (calls + 200) * 3  # one observation: group, sender, global events
            per_job = 5
            jobs = max(0, (events - stored) // (per_job * 3))
            started = time.perf_counter()
            for _ in range(jobs):
                stub.Remember(remember_request(text, rng, per_job), metadata=METADATA)
            wait_drained(client)
            figures["ingest_events_per_s"] = jobs * per_job * 3 / (time.perf_counter() - started)
            figures["events"] = stored + jobs * per_job * 3
            figures["search"] = search_latency(stub, text, rng, searches)
    return figures


def search_latency(
    stub: dream_pb2_grpc.DreamServiceStub, text: TextGenerator, rng: random.Random, searches: int
) -> dict[str, dict[str, float]]:
    kinds = {
        "group": lambda q: dream_pb2.SearchEventsRequest(
            query=q, target_group_id=str(20_000 + rng.randrange(GROUPS))
        ),
        "private": lambda q: dream_pb2.SearchEventsRequest(
            query=q, target_user_id=str(10_000 + rng.randrange(USERS))
        ),
        "untargeted": lambda q: dream_pb2.SearchEventsRequest(query=q),
    }
    results = {}
    for kind, build in kinds.items():
        requests = [build(text.query()) for _ in range(searches)]
        for request in requests[:100]:
            stub.SearchEvents(request, metadata=METADATA)
        samples = []
        for request in requests:
            started = time.perf_counter()
            stub.SearchEvents(request, metadata=METADATA)
            samples.append((time.perf_counter() - started) * 1000)
        results[kind] = percentiles(samples)
    return results


# ---- Historian throughput -------------------------------------------------------------------


def instant_llm(request: dict[str, Any]) -> ToolCalls:
    """Answers at once: an absolute rewrite, then an update of the sender's profile."""
    if request["tools"][0]["function"]["name"] == "submit_rewrite":
        return ToolCalls(
            [
                (
                    "submit_rewrite",
                    {
                        "text": "Zhang San (QQ 10001) switched to a mechanical keyboard "
                        "on 2026-03-01."
                    },
                )
            ]
        )
    prompt = request["messages"][-1]["content"]
    sender = prompt.split("sender_id: ", 1)[1].split()[0]
    return ToolCalls(
        [
            (
                "update_profile",
                {
                    "entity_type": "user",
                    "entity_id": sender,
                    "name": f"user {sender}",
                    "tags": ["keyboards"],
                    "summary": "Types on a mechanical keyboard.",
                },
            )
        ]
    )


def historian_throughput(tmp: Path, redis_url: str, jobs: int, with_llm: bool) -> tuple[float, int]:
    """Jobs per second of one worker draining a backlog; and LLM calls made."""
    text, rng = TextGenerator(seed=5), random.Random(5)
    client = connect(redis_url)
    llm = OpenAIStub().start()
    llm.responder = instant_llm
    env = {
        "KNOWHUB_REDIS_URL": redis_url,
        "KNOWHUB_REDIS_PREFIX": PREFIX,
        "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
    }
    if with_llm:
        env |= {"KNOWHUB_LLM_BASE_URL": llm.base_url, "KNOWHUB_LLM_MAX_RETRIES": "0"}
    data_dir = tmp / ("llm-data" if with_llm else "plain-data")
    try:
        with (
            server_process(data_dir, {**env, "KNOWHUB_HISTORIAN_WORKERS": "0"}) as (_p, port),
            dream_stub(port) as (stub, _health),
        ):
            for _ in range(jobs):
                stub.Remember(remember_request(text, rng, 1), metadata=METADATA)
        with server_process(data_dir, {**env, "KNOWHUB_HISTORIAN_WORKERS": "1"}):
            backlog, started = client.xlen(f"{PREFIX}historian:jobs"), time.perf_counter()
            wait_drained(client)
            rate = backlog / (time.perf_counter() - started)
        return rate, len(llm.chat_requests)
    finally:
        llm.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--remembers", type=int, default=2000, help="timed Remember calls")
    parser.add_argument("--events", type=int, default=50_000, help="events to search over")
    parser.add_argument("--searches", type=int, default=1000, help="searches per kind")
    parser.add_argument("--jobs", type=int, default=2000, help="historian backlog size")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-dream-") as name:
        tmp = Path(name)
        server = EmbeddedRedis(tmp / "redis").start()
        try:
            with_llm, llm_calls = historian_throughput(tmp, server.url, args.jobs, True)
            connect(server.url).flushall()
            without_llm, _ = historian_throughput(tmp, server.url, args.jobs, False)
            connect(server.url).flushall()
            figures = remember_and_search(
                tmp, server.url, args.remembers, args.events, args.searches
            )
        finally:
            server.stop()
    report(figures, with_llm, without_llm, llm_calls, args.jobs)


def report(
    figures: dict[str, Any], with_llm: float, without_llm: float, llm_calls: int, jobs: int
) -> None:
    print("\n== dream: Remember through gRPC (memo + 1 observation + 12 recent messages) ==")
    for workers, label in (("0", "historian off"), ("1", "historian consuming")):
        latency = figures[f"remember_{workers}"]
        print(
            f"{label:>19}: p50 {latency['p50']:.3f} ms   p95 {latency['p95']:.3f} ms   "
            f"p99 {latency['p99']:.3f} ms   (bare gRPC p50 {latency['bare']:.3f} ms)   "
            "target p95 <= 2 ms"
        )
    print("\n== dream: historian, one worker draining a backlog (group turns, 1 observation) ==")
    print(
        f"zero-latency scripted LLM:  {with_llm:7.0f} jobs/s   target >= 200   "
        f"({llm_calls / jobs:.1f} LLM calls per job: rewrite + profile merge)"
    )
    print(f"no LLM (stored as written): {without_llm:7.0f} jobs/s")
    print(
        f"\n== dream: SearchEvents through gRPC at {figures['events']} events "
        f"(ingest with one worker, no LLM: {figures['ingest_events_per_s']:.0f} "
        "events/s) =="
    )
    for kind, latency in figures["search"].items():
        print(
            f"{kind:>11}: p50 {latency['p50']:.3f} ms   p95 {latency['p95']:.3f} ms   "
            f"p99 {latency['p99']:.3f} ms"
        )


if __name__ == "__main__":
    main()
