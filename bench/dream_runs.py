"""Dream run speed, through gRPC against a `knowhub up` process with a zero-latency
scripted LLM: RunDream and GetDreamRun latency, and how fast one run worker reflects an
agent's traces (phase 1) and integrates the reflections (phase 2).

Runs have no target; the figures show the service's own cost per trace
(reading its log through cognition, the prompt, appending the reflection) and per
integration step, apart from the LLM's time.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc, dream_pb2, dream_pb2_grpc

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process, timed_ms
from knowhub_server.dream.runs import prompts
from tests.support.openai_stub import OpenAIStub

METADATA = (("authorization", f"Bearer {BENCH_TOKEN}"),)
AGENT = "bench_agent"


def instant_llm(request: dict[str, Any]) -> str:
    """A reflection or a one-document plan, at once."""
    if request["messages"][0]["content"] == prompts.REFLECT_SYSTEM:
        return json.dumps({"summary": "The user prefers concise answers with examples."})
    return json.dumps(
        {"updates": [{"path": "notes.md", "new_content": "# Notes\nConcise answers, examples."}]}
    )


def add_traces(
    cognition: cognition_pb2_grpc.CognitionServiceStub, traces: int, messages: int
) -> None:
    text = TextGenerator(seed=11)
    for index in range(traces):
        events = [
            cognition_pb2.Event(
                message=cognition_pb2.MessageEvent(
                    sequence=n, role="user" if n % 2 else "assistant", content=text.words(40)
                )
            )
            for n in range(1, messages + 1)
        ]
        cognition.AppendEvents(
            cognition_pb2.AppendEventsRequest(
                trace_id=f"bench-trace-{index}", events=events, agent_id=AGENT
            ),
            metadata=METADATA,
        )


def run_to_end(
    dream: dream_pb2_grpc.DreamServiceStub, phases: list[int]
) -> tuple[float, dream_pb2.DreamRun]:
    started = time.perf_counter()
    run = dream.RunDream(
        dream_pb2.RunDreamRequest(agent_id=AGENT, phases=phases), metadata=METADATA
    ).run
    while run.status in (dream_pb2.DREAM_RUN_STATUS_QUEUED, dream_pb2.DREAM_RUN_STATUS_RUNNING):
        time.sleep(0.01)
        run = dream.GetDreamRun(
            dream_pb2.GetDreamRunRequest(run_id=run.run_id), metadata=METADATA
        ).run
    return time.perf_counter() - started, run


def measure(tmp: Path, traces: int, messages: int, calls: int) -> dict[str, Any]:
    llm = OpenAIStub().start()
    llm.responder = instant_llm
    env = {
        "KNOWHUB_LLM_BASE_URL": llm.base_url,
        "KNOWHUB_LLM_MAX_RETRIES": "0",
        "KNOWHUB_DREAM_SERVICE_TOKEN": BENCH_TOKEN,
        "KNOWHUB_HISTORIAN_WORKERS": "0",
        "KNOWHUB_DREAM_POLL_INTERVAL_SECONDS": "0.05",
        "KNOWHUB_DREAM_INTEGRATE_MAX_REFLECTIONS": "50",
    }
    try:
        with (
            server_process(tmp / "data", env) as (_process, port),
            grpc.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            cognition = cognition_pb2_grpc.CognitionServiceStub(channel)
            dream = dream_pb2_grpc.DreamServiceStub(channel)
            add_traces(cognition, traces, messages)
            reflect_s, reflected = run_to_end(dream, [dream_pb2.DREAM_PHASE_PER_TRACE_REFLECT])
            integrate_s, integrated = run_to_end(
                dream, [dream_pb2.DREAM_PHASE_CROSS_TRACE_INTEGRATE]
            )
            idle_s, _ = run_to_end(dream, [])
            run_id = integrated.run_id
            get_ms = timed_ms(
                lambda: dream.GetDreamRun(
                    dream_pb2.GetDreamRunRequest(run_id=run_id), metadata=METADATA
                ),
                calls,
            )
            # An empty agent: each RunDream queues a run that finds nothing to do.
            run_ms = timed_ms(
                lambda: dream.RunDream(
                    dream_pb2.RunDreamRequest(agent_id="bench_idle"), metadata=METADATA
                ),
                calls,
            )
        return {
            "reflect_s": reflect_s,
            "reflected": reflected,
            "integrate_s": integrate_s,
            "integrated": integrated,
            "idle_s": idle_s,
            "get": percentiles(get_ms),
            "run": percentiles(run_ms),
            "llm_calls": len(llm.chat_requests),
        }
    finally:
        llm.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=500, help="traces of the agent")
    parser.add_argument("--messages", type=int, default=20, help="messages per trace")
    parser.add_argument("--calls", type=int, default=1000, help="timed RPCs per kind")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="knowhub-bench-dream-runs-") as name:
        figures = measure(Path(name), args.traces, args.messages, args.calls)
    reflected, integrated = figures["reflected"], figures["integrated"]
    print(
        f"\n== dream runs through gRPC, one worker, zero-latency scripted LLM "
        f"({args.traces} traces x {args.messages} messages) =="
    )
    print(
        f"phase 1: {reflected.counts.reflections_written} reflections in "
        f"{figures['reflect_s']:.2f} s = "
        f"{reflected.counts.traces_reflected / figures['reflect_s']:.0f} traces/s   "
        "(no target)"
    )
    print(
        f"phase 2: {integrated.counts.reflections_consumed} reflections integrated in "
        f"{integrated.counts.llm_calls} steps, {figures['integrate_s']:.2f} s   "
        "(no target)"
    )
    print(f"a run with nothing to do (both phases): {figures['idle_s'] * 1000:.0f} ms")
    for name, label in (("run", "RunDream (queue a run)"), ("get", "GetDreamRun")):
        latency = figures[name]
        print(
            f"{label:>22}: p50 {latency['p50']:.3f} ms   p95 {latency['p95']:.3f} ms   "
            f"p99 {latency['p99']:.3f} ms"
        )


if __name__ == "__main__":
    main()
