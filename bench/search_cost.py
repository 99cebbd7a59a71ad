"""What a change costs SearchKnowledge, paired: the same records in two servers, one run
from another checkout (`--before`, e.g. the main branch's) and one from this one, and the
same queries asked of both in turn (before, after, before, after, ...), so a machine whose
speed drifts during the run slows both alike. Reports each side's p50 and p99 and the
median of the per-query differences (after - before).

The records are LoCoMo turns (`--records`), the queries its questions. BM25 alone, and
hybrid when KNOWHUB_EMBEDDING_BASE_URL, KNOWHUB_EMBEDDING_MODEL and KNOWHUB_EMBEDDING_DIM
name an endpoint (both servers then read the same cached embeddings).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from knowhub import KnowHub

from bench.common import BENCH_TOKEN, ROOT, percentiles, server_process
from bench.embedding_cache import search_kinds
from bench.locomo_recall import default_data, load


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def paired(
    before: Path,
    records: list[tuple[str, str]],
    queries: list[str],
    env: dict[str, str],
    directory: Path,
) -> tuple[list[float], list[float]]:
    """Milliseconds of each query on the before and the after server, asked in turn."""
    with ExitStack() as stack:
        sides = []
        for name, root in (("before", before), ("after", ROOT)):
            python = str(root / ".venv" / "bin" / "python")
            _process, port = stack.enter_context(
                server_process(directory / name / "data", env, root=root, python=python)
            )
            kh = KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN)
            stack.callback(kh.close)
            for start in range(0, len(records), 200):
                kh.knowledge.save_many(
                    [
                        {"task": t, "content": c, "types": ["usecase"]}
                        for t, c in records[start : start + 200]
                    ]
                )
            sides.append(kh)
        for query in queries[:20]:  # warm both: connections, caches of term statistics
            for kh in sides:
                kh.knowledge.search(query, top_k=5, min_score=1)
        before_ms, after_ms = [], []
        for query in queries[20:]:
            before_ms.append(
                timed(lambda q=query: sides[0].knowledge.search(q, top_k=5, min_score=1))
            )
            after_ms.append(
                timed(lambda q=query: sides[1].knowledge.search(q, top_k=5, min_score=1))
            )
    return before_ms, after_ms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--before", type=Path, required=True, help="the other checkout (with its own .venv)"
    )
    parser.add_argument("--records", type=int, default=2760, help="LoCoMo turns held")
    parser.add_argument("--queries", type=int, default=520, help="questions asked")
    args = parser.parse_args(argv)
    turns, questions = load(default_data())
    records = [(t.task, t.content) for t in turns[: args.records]]
    queries = [q.text for q in questions[: args.queries]]
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-cost-")))
        kinds = search_kinds(stack)
        commits = [
            subprocess.run(
                ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            for root in (args.before, ROOT)
        ]
        print(
            f"== SearchKnowledge, paired: {args.before} at {commits[0]} (before) against "
            f"{ROOT} at {commits[1]} (after); "
            f"{len(records)} records, {len(queries) - 20} queries, top_k 5 =="
        )
        print(
            f"{'':8}{'before p50':>12}{'after p50':>11}{'before p99':>12}{'after p99':>11}"
            f"{'median after-before':>22}"
        )
        for name, env in kinds.items():
            before, after = paired(args.before, records, queries, env, tmp / name)
            b, a = percentiles(before), percentiles(after)
            delta = statistics.median(y - x for x, y in zip(before, after, strict=True))
            print(
                f"{name:8}{b['p50']:10.2f}ms{a['p50']:9.2f}ms{b['p99']:10.2f}ms"
                f"{a['p99']:9.2f}ms{delta:+20.2f}ms"
            )


if __name__ == "__main__":
    main()
