"""Bounded work per call: the memory of a `knowhub up` server while twelve clients at once
read the views of a 100,000-event trace (GetTraceView) and export it (ExportLog), each
paging through the whole log a window at a time.

The trace is an agent runtime's: 20,000 nodes, each started, thought about, a tool selected
and its result summarized, and finished, with a knowledge query and a message every tenth
node. Figures: the server process's resident memory (VmRSS) when idle and its peak
(VmHWM, reset before each phase) while the twelve clients run, with the time each client
took. `--baseline-root` runs the same against another checkout's server first (e.g. main,
whose views and exports answer the whole trace in one response) and prints both side by
side.

    .venv/bin/python -m bench.trace_views                          # this checkout
    .venv/bin/python -m bench.trace_views --baseline-root /work/main
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from bench.common import BENCH_TOKEN, ROOT, TextGenerator, server_process

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
BATCH = 500  # events per AppendEvents
EVENTS_PER_NODE = 5
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1)]
DEADLINE_SECONDS = 3_600


def node_events(index: int, text: TextGenerator) -> list[cognition_pb2.Event]:
    node, job = f"n{index}", "job-1"
    place = {"job_id": job, "node_id": node, "step_index": index + 1}
    return [
        cognition_pb2.Event(node_started=cognition_pb2.NodeStartedEvent(**place, attempt=1)),
        cognition_pb2.Event(
            agent_thought_recorded=cognition_pb2.AgentThoughtEvent(**place, content=text.words(40))
        ),
        cognition_pb2.Event(
            tool_selected=cognition_pb2.ToolSelectedEvent(
                **place, tool_name="search", input_summary=text.words(12)
            )
        ),
        cognition_pb2.Event(
            tool_result_summarized=cognition_pb2.ToolResultEvent(
                **place, tool_name="search", summary=text.words(40)
            )
        ),
        cognition_pb2.Event(
            node_finished=cognition_pb2.NodeFinishedEvent(
                **place, state="ok", attempt=1, duration_ms=120
            )
        ),
    ]


def conversation_events(index: int, text: TextGenerator) -> list[cognition_pb2.Event]:
    ids = [f"knowledge-20260101-{index:06d}{n:06d}" for n in range(3)]
    query = cognition_pb2.QueryEvent(
        sequence=index,
        query=text.words(10),
        response=text.words(40),
        source_ids=ids,
        sources=[cognition_pb2.QuerySource(id=i, task=text.words(8)) for i in ids],
    )
    return [
        cognition_pb2.Event(query=query),
        cognition_pb2.Event(
            message=cognition_pb2.MessageEvent(
                sequence=index, role="assistant", content=text.words(40)
            )
        ),
    ]


def runtime_events() -> Iterator[cognition_pb2.Event]:
    text, node = TextGenerator(seed=3), 0
    while True:
        yield from node_events(node, text)
        if node % 10 == 0:
            yield from conversation_events(node, text)
        node += 1


def fill(stub: cognition_pb2_grpc.CognitionServiceStub, trace_id: str, events: int) -> None:
    """A runtime trace of `events` events, appended BATCH at a time."""
    stream = itertools.islice(runtime_events(), events)
    while batch := list(itertools.islice(stream, BATCH)):
        stub.AppendEvents(
            cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=batch),
            metadata=METADATA,
            timeout=DEADLINE_SECONDS,
        )


def memory_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak(pid: int) -> None:
    """Resets the process's VmHWM to its current size (Linux: clear_refs 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def whole_view(stub: cognition_pb2_grpc.CognitionServiceStub, trace_id: str) -> int:
    """Every window of the trace's views; the events they held."""
    token, seen = "", 0
    while True:
        response = stub.GetTraceView(
            cognition_pb2.GetTraceViewRequest(trace_id=trace_id, page_token=token),
            metadata=METADATA,
            timeout=DEADLINE_SECONDS,
        )
        seen += response.window_events or response.trace.event_count  # an unpaged server
        token = response.next_page_token
        if not token:
            return seen


def whole_export(stub: cognition_pb2_grpc.CognitionServiceStub, trace_id: str) -> int:
    """Every page of the trace's exported log; the bytes of their documents."""
    token, size = "", 0
    while True:
        response = stub.ExportLog(
            cognition_pb2.ExportLogRequest(trace_id=trace_id, page_token=token),
            metadata=METADATA,
            timeout=DEADLINE_SECONDS,
        )
        size += len(response.document)
        token = response.next_page_token
        if not token:
            return size


@dataclass
class Phase:
    name: str
    idle_mib: float
    peak_mib: float
    seconds: list[float]


def concurrently(pid: int, name: str, clients: int, read: Callable[[], int]) -> Phase:
    """`clients` threads each running `read` once, all started together; the server's
    resident memory before and its peak during."""
    idle = memory_mib(pid, "VmRSS")
    reset_peak(pid)
    start = threading.Barrier(clients)

    def one() -> float:
        start.wait()
        began = time.perf_counter()
        read()
        return time.perf_counter() - began

    with ThreadPoolExecutor(clients) as pool:
        seconds = list(pool.map(lambda _n: one(), range(clients)))
    return Phase(name, idle, memory_mib(pid, "VmHWM"), seconds)


def measure(
    root: Path, python: str, events: int, clients: int, data_parent: str | None
) -> list[Phase]:
    with (
        tempfile.TemporaryDirectory(dir=data_parent) as tmp,
        server_process(
            Path(tmp) / "data",
            {"KNOWHUB_COGNITION_MAX_EVENTS_PER_TRACE": str(events)},
            root=root,
            python=python,
        ) as (process, port),
    ):
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=CHANNEL_OPTIONS)
        stub = cognition_pb2_grpc.CognitionServiceStub(channel)
        trace_id = f"bench-{uuid.uuid4().hex[:8]}"
        fill(stub, trace_id, events)
        phases = [
            concurrently(
                process.pid,
                "first window",
                clients,
                lambda: stub.GetTraceView(
                    cognition_pb2.GetTraceViewRequest(trace_id=trace_id),
                    metadata=METADATA,
                    timeout=DEADLINE_SECONDS,
                ).ByteSize(),
            ),
            concurrently(process.pid, "whole view", clients, lambda: whole_view(stub, trace_id)),
            concurrently(
                process.pid, "whole export", clients, lambda: whole_export(stub, trace_id)
            ),
        ]
        channel.close()
    return phases


def show(label: str, phases: list[Phase]) -> None:
    for phase in phases:
        slowest, fastest = max(phase.seconds), min(phase.seconds)
        print(
            f"  {label:<10} {phase.name:<13} idle {phase.idle_mib:7.0f} MiB   peak "
            f"{phase.peak_mib:7.0f} MiB (+{phase.peak_mib - phase.idle_mib:6.0f})   "
            f"per client {fastest:6.1f}-{slowest:6.1f} s"
        )


def run(
    events: int,
    clients: int,
    baseline: Path | None,
    baseline_python: str | None,
    data_parent: str | None,
) -> None:
    print(
        f"trace views: {clients} clients at once, a {events:,}-event trace, server memory "
        "(VmRSS idle, VmHWM peak)"
    )
    if baseline is not None:
        python = baseline_python or str(baseline / ".venv" / "bin" / "python")
        show(
            baseline.name or str(baseline), measure(baseline, python, events, clients, data_parent)
        )
    show("this", measure(ROOT, sys.executable, events, clients, data_parent))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000, help="events in the trace")
    parser.add_argument("--clients", type=int, default=12, help="clients at once")
    parser.add_argument(
        "--baseline-root",
        type=Path,
        help="another checkout whose server to measure first, e.g. /work/main",
    )
    parser.add_argument("--baseline-python", help="its interpreter (default: its .venv's)")
    parser.add_argument("--data-parent", help="where the data directories go")
    args = parser.parse_args(argv)
    run(args.events, args.clients, args.baseline_root, args.baseline_python, args.data_parent)


if __name__ == "__main__":
    main()
