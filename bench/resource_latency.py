"""Resource service speed: SaveResource and GetResource p50/p95 through gRPC, with and
without a secure_body, against `knowhub up` in its own process (Qdrant Edge, the
embedded Redis with `appendfsync always` for the audit stream, a key file).

A save with a secure_body seals it (a fresh AES-256-GCM data key, wrapped by the master
key) and writes two audit records; a secure get reads the version record, opens the
envelope and writes one audit record before answering. Resources have no latency target;
the bare gRPC round trip is printed next to the figures for scale.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub_contracts.v1 import resource_pb2, resource_pb2_grpc

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process, timed_calls

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
SECRET = "user: bench@example.com\npassword: correct-horse-battery-staple-0000"


def run(count: int) -> None:
    text = TextGenerator(seed=11)
    titles = [text.words(8) for _ in range(64)]
    bodies = [text.words(60) for _ in range(64)]
    warmup = max(20, count // 10)
    rows: list[tuple[str, dict[str, float]]] = []
    with (
        tempfile.TemporaryDirectory(prefix="knowhub-bench-") as tmp,
        server_process(Path(tmp) / "data") as (_process, port),
    ):
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = resource_pb2_grpc.ResourceServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)

        def save(prefix: str, secure: str) -> Callable[[int], object]:
            return lambda n: stub.SaveResource(
                resource_pb2.SaveResourceRequest(
                    id=f"{prefix}/r{n + warmup}",
                    title=titles[n % 64],
                    body=bodies[n % 64],
                    secure_body=secure,
                    content_type=resource_pb2.RESOURCE_CONTENT_TYPE_CREDENTIAL,
                ),
                metadata=METADATA,
            )

        def get(prefix: str, secure: bool) -> Callable[[int], object]:
            return lambda n: stub.GetResource(
                resource_pb2.GetResourceRequest(
                    id=f"{prefix}/r{abs(n) % count + warmup}", include_secure=secure
                ),
                metadata=METADATA,
            )

        def new_version(n: int) -> object:
            return stub.SaveResource(
                resource_pb2.SaveResourceRequest(
                    id=f"secret/r{abs(n) % 50 + warmup}",
                    title="rotated",
                    body=bodies[n % 64],
                    secure_body=f"{SECRET}-{n}",
                ),
                metadata=METADATA,
            )

        rows.append(
            (
                "SaveResource, new, no secure_body",
                percentiles(timed_calls(save("public", ""), count, warmup)),
            )
        )
        rows.append(
            (
                "SaveResource, new, with secure_body",
                percentiles(timed_calls(save("secret", SECRET), count, warmup)),
            )
        )
        rows.append(
            (
                "SaveResource, new version (secure)",
                percentiles(timed_calls(new_version, count, warmup)),
            )
        )
        rows.append(
            (
                "GetResource, without secure_body",
                percentiles(timed_calls(get("secret", False), count * 2, warmup)),
            )
        )
        rows.append(
            (
                "GetResource, include_secure",
                percentiles(timed_calls(get("secret", True), count * 2, warmup)),
            )
        )
        bare = percentiles(
            timed_calls(lambda _n: health.Check(health_pb2.HealthCheckRequest()), count, warmup)
        )
        channel.close()
    _report(rows, bare["p50"], count)


def _report(rows: list[tuple[str, dict[str, float]]], bare_p50: float, count: int) -> None:
    print(f"\n== resource: latency through gRPC ({count} saves / {count * 2} gets each) ==")
    print(f"{'call':<38} {'p50 ms':>8} {'p95 ms':>8}")
    for name, figures in rows:
        print(f"{name:<38} {figures['p50']:8.3f} {figures['p95']:8.3f}")
    print(
        f"bare gRPC round trip p50: {bare_p50:.3f} ms. Targets: none (a "
        "save writes 2 audit records and a secure get 1, each fsynced by Redis)."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--count", type=int, default=1000, help="saves per row (gets: twice as many)"
    )
    args = parser.parse_args(argv)
    run(args.count)


if __name__ == "__main__":
    main()
