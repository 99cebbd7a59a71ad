"""MCP server overhead: knowledge_search and resource_get p50/p95 through `knowhub mcp`
(stdio and streamable HTTP, with the mcp package's own client) next to the same calls
through the SDK, against `knowhub up` in its own process. The MCP server adds a JSON-RPC
hop, argument checks and a worker thread per call; no target is set, the figures show
the cost."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from knowhub import KnowHub, tools
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process
from tests.support.ports import free_port

KNOWHUB = str(Path(sys.executable).parent / "knowhub")
CALLS: dict[str, dict[str, Any]] = {
    "knowledge_search": {"query": "", "top_k": 5},
    "resource_get": {"id": "code/bench/snippet"},
}


def _seed(kh: KnowHub, records: int) -> list[str]:
    text = TextGenerator(seed=5)
    for start in range(0, records, 500):
        kh.knowledge.save_many(
            [
                {"task": text.words(12), "content": text.words(40), "types": ["strategy"]}
                for _ in range(start, min(records, start + 500))
            ]
        )
    kh.resources.save("code/bench/snippet", "A snippet", text.words(80), content_type="code")
    return [text.query() for _ in range(64)]


def _arguments(name: str, n: int, queries: list[str]) -> dict[str, Any]:
    return {**CALLS[name], "query": queries[n % 64]} if name == "knowledge_search" else CALLS[name]


async def _timed(call: Callable[[int], Awaitable[object]], count: int) -> list[float]:
    for n in range(max(10, count // 10)):
        await call(n)
    samples = []
    for n in range(count):
        started = time.perf_counter()
        await call(n)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _through_mcp(client: Client, count: int, queries: list[str]) -> dict[str, list[float]]:
    async def call(name: str, n: int) -> None:
        result = await client.call_tool(name, _arguments(name, n, queries))
        assert not result.is_error, result.content

    return {name: await _timed(lambda n, name=name: call(name, n), count) for name in CALLS}


def _through_sdk(kh: KnowHub, count: int, queries: list[str]) -> dict[str, list[float]]:
    async def call(name: str, n: int) -> None:
        tools.run_tool(kh, name, _arguments(name, n, queries))

    return {name: anyio.run(_timed, lambda n, name=name: call(name, n), count) for name in CALLS}


def _http_server(target: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [KNOWHUB, "mcp", "--transport", "http", "--port", str(port), "--target", target],
        env={**os.environ, "KNOWHUB_LOG_LEVEL": "WARNING"},
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("knowhub mcp --transport http did not start")


def run(records: int, count: int) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="knowhub-bench-") as tmp,
        server_process(Path(tmp) / "data") as (_process, port),
    ):
        target = f"127.0.0.1:{port}"
        with KnowHub(target, token=BENCH_TOKEN) as kh:
            queries = _seed(kh, records)
            rows = {"SDK (gRPC)": _through_sdk(kh, count, queries)}
        stdio = StdioServerParameters(
            command=KNOWHUB,
            args=["mcp"],
            env={
                **os.environ,
                "KNOWHUB_TARGET": target,
                "KNOWHUB_TOKEN": BENCH_TOKEN,
                "KNOWHUB_LOG_LEVEL": "WARNING",
            },
        )

        async def over_stdio() -> dict[str, list[float]]:
            async with Client(stdio) as client:
                return await _through_mcp(client, count, queries)

        rows["MCP stdio"] = anyio.run(over_stdio)
        http_port = free_port()
        server = _http_server(target, http_port)
        try:

            async def over_http() -> dict[str, list[float]]:
                http = create_mcp_http_client({"Authorization": f"Bearer {BENCH_TOKEN}"})
                url = f"http://127.0.0.1:{http_port}/mcp"
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return await _through_mcp(client, count, queries)

            rows["MCP streamable HTTP"] = anyio.run(over_http)
        finally:
            server.terminate()
            server.wait(timeout=30)

    print(f"\nMCP tool calls, {records} knowledge records, {count} calls each (ms)")
    print(f"{'path':<22} {'tool':<18} {'p50':>7} {'p95':>7}")
    for path, samples in rows.items():
        for name, values in samples.items():
            figures = percentiles(values)
            print(f"{path:<22} {name:<18} {figures['p50']:>7.2f} {figures['p95']:>7.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args(argv)
    run(args.records, args.count)


if __name__ == "__main__":
    main()
