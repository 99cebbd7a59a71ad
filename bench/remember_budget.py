"""Remember against its budget: a `knowhub up` process (historian off) on an embedded
Redis with `appendfsync always`; each client makes, call after call, a Remember (a group
turn: memo, one observation, 12 recent messages), a bare gRPC round trip (Health.Check)
and a raw XADD of a job-sized entry to the same Redis, so the machine's drift affects the
three alike. Printed side by side: p50 / p95 of each, Remember's p95 over the round
trip's, and the load average; with several clients (one process each, all at once) also
the Remembers per second, which shows whether Redis fsyncs concurrent writes together.
`--server-root DIR` adds a server run from another checkout on the same Redis, called in
turn with this one's in every iteration (A B A B), to compare a change.

Target: Remember's p95 within twice the bare round trip's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub_contracts.v1 import dream_pb2_grpc

from bench.common import ROOT, TextGenerator, percentiles, server_process
from bench.dream_memory import METADATA, remember_request
from knowhub_server.common.storage.redis_store import EmbeddedRedis, connect, writable

RAW_STREAM = "bench:raw-xadd"
REMEMBER, ROUND_TRIP, XADD = "Remember", "round trip", "raw XADD"
Samples = dict[str, list[float]]  # by "<server> <kind>"


def client_run(servers: list[tuple[str, int]], redis_url: str, calls: int, seed: int) -> Samples:
    """One client's calls: per iteration, each server's Remember and round trip (the
    servers in turn first), then a raw XADD; milliseconds of each after a warm-up of a
    fifth as many iterations."""
    warmup = calls // 5
    text, rng = TextGenerator(seed=seed), random.Random(seed)
    requests = [remember_request(text, rng, 1) for _ in range(calls + warmup)]
    entry = {"job": requests[0].SerializeToString().hex()}
    client = connect(redis_url)
    samples: Samples = {}
    with ExitStack() as stack:
        stubs = []
        for name, port in servers:
            channel = stack.enter_context(grpc.insecure_channel(f"127.0.0.1:{port}"))
            stubs.append(
                (
                    name,
                    dream_pb2_grpc.DreamServiceStub(channel).Remember,
                    health_pb2_grpc.HealthStub(channel).Check,
                )
            )
        ping = health_pb2.HealthCheckRequest()
        for n, request in enumerate(requests):
            timed: list[tuple[str, float]] = []
            turn = n % len(stubs)  # each server first in every other iteration
            for name, remember, check in stubs[turn:] + stubs[:turn]:
                started = time.perf_counter()
                remember(request, metadata=METADATA)
                remembered = time.perf_counter()
                check(ping)
                timed += [
                    (f"{name} {REMEMBER}", remembered - started),
                    (f"{name} {ROUND_TRIP}", time.perf_counter() - remembered),
                ]
            started = time.perf_counter()
            client.xadd(RAW_STREAM, writable(entry), maxlen=1000, approximate=True)
            timed.append((XADD, time.perf_counter() - started))
            if n >= warmup:
                for key, seconds in timed:
                    samples.setdefault(key, []).append(seconds * 1000)
    client.close()
    return samples


def concurrent_run(
    servers: list[tuple[str, int]], redis_url: str, clients: int, calls: int
) -> tuple[Samples, float]:
    """`clients` processes at once: their samples pooled, and the iterations per second."""
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        started = time.perf_counter()
        runs = pool.starmap(
            client_run, [(servers, redis_url, calls, 100 + c) for c in range(clients)]
        )
        elapsed = time.perf_counter() - started
    pooled: Samples = {key: [x for run in runs for x in run[key]] for key in runs[0]}
    return pooled, clients * (calls + calls // 5) / elapsed


def report(servers: list[str], clients: int, samples: Samples, per_second: float) -> None:
    def cell(key: str) -> str:
        figures = percentiles(samples[key])
        return f"{figures['p50']:.3f} / {figures['p95']:.3f}"

    for name in servers:
        remember = percentiles(samples[f"{name} {REMEMBER}"])["p95"]
        ratio = remember / percentiles(samples[f"{name} {ROUND_TRIP}"])["p95"]
        print(
            f"{clients:>7} | {name:>13} | {cell(f'{name} {REMEMBER}'):>15} | "
            f"{cell(f'{name} {ROUND_TRIP}'):>15} | {cell(XADD):>15} | {ratio:9.2f} | "
            f"{per_second:6.0f}"
        )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per client")
    parser.add_argument("--clients", default="1,4", help="comma-separated client counts")
    parser.add_argument(
        "--server-root", type=Path, help="another checkout whose server is measured in turn"
    )
    args = parser.parse_args(argv)
    roots = [("this", ROOT)] + ([("other", args.server_root.resolve())] if args.server_root else [])
    with (
        tempfile.TemporaryDirectory(prefix="knowhub-bench-remember-") as name,
        ExitStack() as stack,
    ):
        tmp = Path(name)
        redis_server = EmbeddedRedis(tmp / "redis").start()
        stack.callback(redis_server.stop)
        servers = []
        for label, root in roots:
            env = {
                "KNOWHUB_REDIS_URL": redis_server.url,
                "KNOWHUB_REDIS_PREFIX": f"bench-{label}:",
                "KNOWHUB_HISTORIAN_WORKERS": "0",
            }
            _process, port = stack.enter_context(server_process(tmp / label, env, root=root))
            servers.append((label, port))
        print(
            "\n== Remember against the bare gRPC round trip and a raw XADD to the same Redis "
            "(appendfsync always; p50 / p95 ms) =="
        )
        if args.server_root:
            print(f"this: {ROOT}   other: {args.server_root}")
        print(f"load average at start: {load()}")
        print(
            f"{'clients':>7} | {'server':>13} | {REMEMBER:>15} | {ROUND_TRIP:>15} | "
            f"{XADD:>15} | p95 ratio | iterations/s"
        )
        for clients in (int(c) for c in args.clients.split(",")):
            if clients == 1:
                started = time.perf_counter()
                samples = client_run(servers, redis_server.url, args.calls, 1)
                rate = (args.calls + args.calls // 5) / (time.perf_counter() - started)
            else:
                samples, rate = concurrent_run(servers, redis_server.url, clients, args.calls)
            report([label for label, _ in servers], clients, samples, rate)
        print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
