"""REST gateway speed: knowledge search p50/p99 through HTTP — the REST
GET /api/knowledge/search and the generic POST /api/v1/knowledge/SearchKnowledge — next
to the same searches through gRPC, against `knowhub up` in its own process (the gateway
is a thread of that process and calls the gRPC port on loopback, as deployed).

Each HTTP call goes client → gateway (HTTP/1.1 keep-alive, JSON) → gRPC → the service and
back, so it costs one gRPC call plus the gateway's own work; the bare round trips of
each protocol are printed for scale.
"""

from __future__ import annotations

import argparse
import http.client
import json
import tempfile
import urllib.parse
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process, timed_calls

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
HEADERS = {"Authorization": f"Bearer {BENCH_TOKEN}", "Content-Type": "application/json"}
TOP_K = 5


class Http:
    """One keep-alive HTTP/1.1 connection to the gateway."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self._connection = http.client.HTTPConnection(parsed.hostname, parsed.port)

    def call(self, method: str, path: str, body: bytes | None = None, expect: int = 200) -> bytes:
        self._connection.request(method, path, body=body, headers=HEADERS)
        response = self._connection.getresponse()
        data = response.read()
        if response.status != expect:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return data


def _gateway_url(process: object) -> str:
    line = process.stdout.readline()  # type: ignore[attr-defined]
    if "gateway listening on " not in line:
        raise RuntimeError(f"no gateway line: {line!r}")
    return line.split("gateway listening on ", 1)[1].split()[0]


def _seed(stub: knowledge_pb2_grpc.KnowledgeServiceStub, text: TextGenerator, records: int) -> None:
    for start in range(0, records, 500):
        requests = [
            knowledge_pb2.SaveKnowledgeRequest(
                task=text.words(10), content=text.words(40), types=["tool"], score=4
            )
            for _ in range(min(500, records - start))
        ]
        stub.BatchSaveKnowledge(
            knowledge_pb2.BatchSaveKnowledgeRequest(requests=requests),
            metadata=METADATA,
            timeout=600,
        )


def run(records: int, searches: int) -> None:
    text = TextGenerator(seed=23)
    queries = [text.query() for _ in range(256)]
    warmup = max(50, searches // 10)
    with (
        tempfile.TemporaryDirectory(prefix="knowhub-bench-") as tmp,
        server_process(Path(tmp) / "data") as (process, port),
    ):
        gateway = Http(_gateway_url(process))
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        _seed(stub, text, records)

        def grpc_search(n: int) -> object:
            return stub.SearchKnowledge(
                knowledge_pb2.SearchKnowledgeRequest(
                    query=queries[n % 256], top_k=TOP_K, min_score=3
                ),
                metadata=METADATA,
            )

        def rest_search(n: int) -> object:
            query = urllib.parse.urlencode({"q": queries[n % 256], "top_k": TOP_K})
            return gateway.call("GET", f"/api/knowledge/search?{query}")

        def generic_search(n: int) -> object:
            body = json.dumps({"query": queries[n % 256], "top_k": TOP_K, "min_score": 3})
            return gateway.call("POST", "/api/v1/knowledge/SearchKnowledge", body.encode())

        def bare_grpc(_n: int) -> object:
            return health.Check(health_pb2.HealthCheckRequest())

        def bare_http(_n: int) -> object:  # answered by the gateway alone
            return gateway.call("GET", "/api/nothing", expect=404)

        grpc_row = percentiles(timed_calls(grpc_search, searches, warmup))
        rows = [
            ("SearchKnowledge through gRPC", grpc_row),
            ("GET /api/knowledge/search", percentiles(timed_calls(rest_search, searches, warmup))),
            (
                "POST /api/v1/knowledge/SearchKnowledge",
                percentiles(timed_calls(generic_search, searches, warmup)),
            ),
        ]
        bare = [
            (
                "bare gRPC round trip (health check)",
                percentiles(timed_calls(bare_grpc, searches, warmup)),
            ),
            (
                "bare HTTP round trip (a 404 of the gateway)",
                percentiles(timed_calls(bare_http, searches, warmup)),
            ),
        ]
        channel.close()
    print(
        f"\nREST gateway: knowledge search (BM25, top_k {TOP_K}) over {records} records, "
        f"{searches} calls each"
    )
    print(f"{'call':<46} {'p50 ms':>8} {'p99 ms':>8} {'p50 ÷ gRPC':>11} {'p99 ÷ gRPC':>11}")
    for name, row in rows:
        print(
            f"{name:<46} {row['p50']:8.2f} {row['p99']:8.2f} "
            f"{row['p50'] / grpc_row['p50']:11.2f} {row['p99'] / grpc_row['p99']:11.2f}"
        )
    for name, row in bare:
        print(f"{name:<46} {row['p50']:8.2f} {row['p99']:8.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=2000)
    args = parser.parse_args(argv)
    run(args.records, args.searches)


if __name__ == "__main__":
    main()
