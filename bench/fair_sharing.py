"""Fair sharing: another tenant's reads while one tenant floods a slow model with asks.

`knowhub up` in its own process, with an LLM that takes `--model-seconds` (10) to answer
every chat call. One user of globex keeps 64 AskKnowledge calls going (each thread asks
again as soon as its call ends, refused or not); meanwhile one user of acme lists its
knowledge, one call after another. Printed side by side: acme's ListKnowledge p50/p99
with no flood, during the flood with fair sharing off (KNOWHUB_CALLS_PER_CALLER_MAX=0,
KNOWHUB_MODEL_CALLS_MAX=0: the old server, where every call shared one pool of 32
threads), and during the flood with the default limits; and what became of the asks.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from knowhub import KnowHub, errors

from bench.common import percentiles, server_process
from tests.support.openai_stub import OpenAIStub

FLOODER, READER = "token-flooder", "token-reader"
SETTINGS = {
    "fair sharing off": {"KNOWHUB_CALLS_PER_CALLER_MAX": "0", "KNOWHUB_MODEL_CALLS_MAX": "0"},
    "fair sharing on (defaults)": {},
}


def tokens_file(directory: Path) -> Path:
    path = directory / "tenants.json"
    path.write_text(
        json.dumps(
            {
                "tokens": [
                    {"token": FLOODER, "user_id": "flooder", "org_id": "globex"},
                    {"token": READER, "user_id": "reader", "org_id": "acme"},
                ]
            }
        )
    )
    return path


def slow_model(seconds: float) -> OpenAIStub:
    stub = OpenAIStub()

    def answer(_body: dict[str, Any]) -> str:
        time.sleep(seconds)
        return "Drain the node, deploy, then verify."

    stub.responder = answer
    return stub.start()


class Flood:
    """`clients` threads asking in a loop until stopped; counts what became of each ask."""

    def __init__(self, address: str, clients: int) -> None:
        self._kh = KnowHub(address, token=FLOODER, timeout=120)
        self._stop = threading.Event()
        self.outcomes: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._ask) for _ in range(clients)]

    def _ask(self) -> None:
        while not self._stop.is_set():
            try:
                self._kh.knowledge.ask("deploy checklist")
                outcome = "answered"
            except errors.KnowHubError as error:
                outcome = error.code
                if isinstance(error, errors.ResourceExhausted):
                    self._stop.wait(0.05)  # an attacker hardly waits
            with self._lock:
                self.outcomes[outcome] += 1

    def start(self) -> Flood:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._kh.close()


def reads_ms(address: str, seconds: float) -> list[float]:
    """ListKnowledge one after another for `seconds`; each call's milliseconds."""
    samples = []
    with KnowHub(address, token=READER, timeout=180) as reader:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            started = time.perf_counter()
            reader.knowledge.list(limit=10)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def measure(
    work: Path, env: dict[str, str], clients: int, seconds: float, baseline: bool
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with server_process(work / "data", env) as (_process, port):
        address = f"127.0.0.1:{port}"
        with (
            KnowHub(address, token=FLOODER, timeout=60) as flooder,
            KnowHub(address, token=READER, timeout=60) as reader,
        ):
            flooder.knowledge.save(
                task="deploy checklist", content="drain, deploy, verify", types=["plan"]
            )
            for n in range(20):
                reader.knowledge.save(
                    task=f"runbook {n}", content="acme's own notes", types=["plan"]
                )
        if baseline:
            figures["no flood"] = reads_ms(address, min(seconds, 5.0))
        flood = Flood(address, clients).start()
        time.sleep(2)  # the flood fills the server
        figures["flood"] = reads_ms(address, seconds)
        flood.stop()
        figures["asks"] = flood.outcomes
    return figures


def row(name: str, samples: list[float]) -> str:
    shape = percentiles(samples)
    return (
        f"  {name:<38} p50 {shape['p50']:9.1f} ms   p99 {shape['p99']:9.1f} ms   "
        f"({len(samples)} calls)"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=64, help="concurrent asks")
    parser.add_argument("--model-seconds", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=30.0, help="reads during a flood")
    args = parser.parse_args(argv)
    model = slow_model(args.model_seconds)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            llm = {
                "KNOWHUB_TOKENS_FILE": str(tokens_file(work)),
                "KNOWHUB_LLM_BASE_URL": model.base_url,
                "KNOWHUB_LLM_MAX_RETRIES": "0",
            }
            results = {
                name: measure(
                    work / str(index),
                    {**llm, **settings},
                    args.clients,
                    args.seconds,
                    baseline=index == 0,
                )
                for index, (name, settings) in enumerate(SETTINGS.items())
            }
    finally:
        model.stop()
    print(
        f"fair sharing: acme's ListKnowledge while globex keeps {args.clients} "
        f"AskKnowledge calls going, model {args.model_seconds:g} s per call"
    )
    print(row("no flood", results["fair sharing off"]["no flood"]))
    for name, figures in results.items():
        print(row(f"flood, {name}", figures["flood"]))
    for name, figures in results.items():
        outcomes = ", ".join(
            f"{count} {outcome.lower()}" for outcome, count in sorted(figures["asks"].items())
        )
        print(f"  asks, {name}: {outcomes}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
