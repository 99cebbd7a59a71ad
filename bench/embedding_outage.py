"""An embeddings outage as users meet it: search and save while the embedding endpoint
is up, then down, then the time until every record saved meanwhile has its vector.

A hub (`knowhub up`, its default settings) holds LoCoMo turns as knowledge records,
embedded by an endpoint (KNOWHUB_EMBEDDING_BASE_URL, KNOWHUB_EMBEDDING_MODEL,
KNOWHUB_EMBEDDING_DIM) served through a switch on loopback that can drop every request.
Up: search p50/p99 (questions it has not seen, so each embeds its query) and save
latency. Down: the same with other questions and other turns, and how many saves
succeeded. Then the switch is closed again and `knowhub health` is polled until no record
waits for its vector: the breaker's pause (KNOWHUB_EMBEDDING_BREAKER_SECONDS, 30 s by
default) and the background pass are in that time.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from knowhub import KnowHub, errors

from bench.common import BENCH_TOKEN, percentiles, server_process
from bench.embedding_cache import CachedEmbeddings, caching_endpoint
from bench.locomo_recall import default_data, load
from knowhub_server.common.runtime.health_probe import check


class Switch:
    """The embeddings of `inner`, or a dropped request while `down`."""

    def __init__(self, inner: CachedEmbeddings) -> None:
        self.model = inner.model
        self._inner = inner
        self.down = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.down:
            raise ConnectionAbortedError("the embedding endpoint is down")
        return self._inner.embed(texts)


def backlog(address: str) -> tuple[str, int]:
    _, line = check(address, "")
    found = re.search(r"embedding model (\w+), (\d+) record", line)
    if not found:
        raise RuntimeError(f"knowhub health says nothing of the embedding model: {line}")
    return found.group(1), int(found.group(2))


def phase(
    kh: KnowHub, questions: Sequence[str], turns: Sequence[tuple[str, str]]
) -> dict[str, object]:
    """Search and save figures: latencies in ms, saves that succeeded, selections seen."""
    searches, selections = [], set()
    for text in questions:
        started = time.perf_counter()
        hits = kh.knowledge.search(text, top_k=10, min_score=1)
        searches.append((time.perf_counter() - started) * 1000)
        selections.add(hits.selection)
    saves, saved = [], 0
    for task, content in turns:
        started = time.perf_counter()
        try:
            kh.knowledge.save(task=task, content=content, types=["usecase"])
            saved += 1
        except errors.KnowHubError:
            pass
        saves.append((time.perf_counter() - started) * 1000)
    return {
        "search": percentiles(searches),
        "save": percentiles(saves),
        "saved": saved,
        "selections": sorted(selections),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=2000, help="records held (≤ 2,360)")
    parser.add_argument("--searches", type=int, default=200, help="searches per phase")
    parser.add_argument("--saves", type=int, default=200, help="saves per phase")
    args = parser.parse_args(argv)
    if not os.environ.get("KNOWHUB_EMBEDDING_BASE_URL"):
        parser.error(
            "set KNOWHUB_EMBEDDING_BASE_URL, KNOWHUB_EMBEDDING_MODEL and KNOWHUB_EMBEDDING_DIM"
        )
    turns, questions = load(default_data())
    texts = [(t.task, t.content) for t in turns]
    held, up_saves = texts[: args.records], texts[args.records : args.records + args.saves]
    down_saves = texts[args.records + args.saves : args.records + 2 * args.saves]
    asked = [q.text for q in questions]
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-outage-")))
        inner = CachedEmbeddings(
            os.environ["KNOWHUB_EMBEDDING_BASE_URL"],
            os.environ["KNOWHUB_EMBEDDING_MODEL"],
            os.environ.get("KNOWHUB_EMBEDDING_API_KEY", "none"),
        )
        stack.callback(inner.close)
        inner.embed([f"{task}\n{content}" for task, content in texts] + asked)  # warm cache
        switch = Switch(inner)
        endpoint = stack.enter_context(caching_endpoint(switch))
        env = {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_EMBEDDING_")}
        env["KNOWHUB_EMBEDDING_BASE_URL"] = endpoint
        _process, port = stack.enter_context(server_process(tmp / "data", env))
        address = f"127.0.0.1:{port}"
        kh = KnowHub(address, token=BENCH_TOKEN)
        stack.callback(kh.close)
        for start in range(0, len(held), 200):
            kh.knowledge.save_many(
                [
                    {"task": t, "content": c, "types": ["usecase"]}
                    for t, c in held[start : start + 200]
                ]
            )
        up = phase(kh, asked[: args.searches], up_saves)
        switch.down = True
        down = phase(kh, asked[args.searches : 2 * args.searches], down_saves)
        state, owed = backlog(address)
        switch.down = False
        restored = time.perf_counter()
        while backlog(address)[1]:
            time.sleep(0.2)
        back = time.perf_counter() - restored
    print(
        f"== Embeddings outage: {len(held)} records, {args.searches} searches and "
        f"{args.saves} saves per phase =="
    )
    print(
        f"{'':22}{'search p50':>12}{'search p99':>12}{'save p50':>10}{'save p99':>10}"
        f"{'saved':>8}  selection"
    )
    for name, figures in (("endpoint up", up), ("endpoint down", down)):
        search, save = figures["search"], figures["save"]
        print(
            f"{name:22}{search['p50']:10.1f}ms{search['p99']:10.1f}ms{save['p50']:8.1f}ms"
            f"{save['p99']:8.1f}ms{figures['saved']:>5}/{args.saves}  "
            f"{', '.join(figures['selections'])}"
        )
    print(
        f"at the end of the outage: model {state}, {owed} record(s) waiting for their "
        f"vector; all written {back:.1f} s after the endpoint came back"
    )


if __name__ == "__main__":
    main()
