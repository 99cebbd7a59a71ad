"""Relevance first on LoCoMo: evidence recall@10 with realistic author scores, and the
relevance floor tuned on one half of the conversations and judged on the other.

Every turn is a knowledge record as in `bench.locomo_recall`. Two score runs: every
record at score 3 (uniform), and scores drawn from 3 to 5 (mixed, seeded): quality must
not push answering turns out of the top 10. Each run searches every question (categories
1-4) with top_k=10 at each relevance floor of `--floors` (the request's min_relevance),
and also asks each conversation `OFF_TOPIC` questions it cannot answer: the fraction of
those answered with nothing is the floor's rejection rate.

The floor is tuned on half A: the highest floor whose recall@10 on A stays within
`--tolerance` (0.01) of no floor at all; its recall and rejection are then reported on
half B. BM25 alone and hybrid (with an embedding endpoint: KNOWHUB_EMBEDDING_BASE_URL,
KNOWHUB_EMBEDDING_MODEL, KNOWHUB_EMBEDDING_DIM) are tuned apart: their relevances are
different numbers (KNOWHUB_SEARCH_MIN_RELEVANCE_BM25 and KNOWHUB_SEARCH_MIN_RELEVANCE).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from knowhub import KnowHub

from bench.common import ROOT, server_process
from bench.embedding_cache import search_kinds
from bench.locomo_recall import DEFAULT_SPLIT, TOP_K, Question, Turn, default_data, load, mean

DEFAULT_FLOORS = "0,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.5"
OFF_TOPIC = [
    "how do I renew a TLS certificate with certbot on nginx",
    "what is the boiling point of liquid nitrogen",
    "configure BGP peering on a Juniper router",
    "why is my kubernetes pod stuck in CrashLoopBackOff",
    "what is the derivative of the arctangent function",
    "how do zebrafish regenerate their fins",
    "tune the PostgreSQL autovacuum thresholds",
    "what is the half-life of carbon-14",
    "set the MTU of a WireGuard interface",
    "which enzyme unwinds DNA during replication",
    "compile a Rust crate for an ARM microcontroller",
    "what do zebrafish eat in an aquarium",
    "explain the CAP theorem for distributed databases",
    "how many moons does Neptune have",
    "rotate the AWS IAM access keys of a service account",
    "what is the torque spec for a bicycle crank bolt",
    "how to flash a new BIOS on a Supermicro server",
    "what is the Laplace transform of a step function",
    "migrate a Terraform state file to an S3 backend",
    "what is the melting point of tungsten",
]

Run = dict[float, list[list[str]]]  # floor -> per question, the dia_ids found


def knowhub_run(
    turns: list[Turn],
    questions: list[Question],
    directory: Path,
    settings: dict[str, str],
    scores: dict[str, int],
    floors: Sequence[float],
    root: Path = ROOT,
) -> tuple[Run, Run]:
    """Every question, and every off-topic question per conversation, at each floor."""
    samples = sorted({t.sample for t in turns})
    tokens = [{"token": f"locomo-{s}", "user_id": s} for s in samples]
    directory.mkdir(parents=True)
    (directory / "locomo-tokens.json").write_text(json.dumps({"tokens": tokens}))
    env = {
        "KNOWHUB_EMBEDDING_TIMEOUT_SECONDS": "300",
        **settings,
        "KNOWHUB_TOKENS_FILE": str(directory / "locomo-tokens.json"),
    }
    with server_process(
        directory / "data", env, root=root, python=str(root / ".venv" / "bin" / "python")
    ) as (_process, port):
        clients = {s: KnowHub(f"127.0.0.1:{port}", token=f"locomo-{s}") for s in samples}
        by_sample: dict[str, list[Turn]] = defaultdict(list)
        for turn in turns:
            by_sample[turn.sample].append(turn)
        for sample, items in by_sample.items():
            for start in range(0, len(items), 100):
                clients[sample].knowledge.save_many(
                    [
                        {
                            "task": t.task,
                            "content": t.content,
                            "types": ["usecase"],
                            "tags": {"dia_id": t.dia_id},
                            "score": scores[f"{t.sample}/{t.dia_id}"],
                        }
                        for t in items[start : start + 100]
                    ]
                )

        def found(sample: str, text: str, floor: float) -> list[str]:
            hits = clients[sample].knowledge.search(
                text, top_k=TOP_K, min_score=1, min_relevance=floor
            )
            return [h.knowledge.tags["dia_id"] for h in hits]

        answers = {f: [found(q.sample, q.text, f) for q in questions] for f in floors}
        off_topic = {f: [found(s, text, f) for s in samples for text in OFF_TOPIC] for f in floors}
        for client in clients.values():
            client.close()
    return answers, off_topic


def recall_of(questions: list[Question], found: list[list[str]]) -> list[float]:
    return [
        sum(1 for e in q.evidence if e in set(ids[:TOP_K])) / len(q.evidence)
        for q, ids in zip(questions, found, strict=True)
    ]


def rejected(off_topic: list[list[str]], samples: list[str], half: Sequence[str]) -> float:
    """The fraction of the half's off-topic questions answered with nothing."""
    per_sample = len(OFF_TOPIC)
    picked = [ids for index, ids in enumerate(off_topic) if samples[index // per_sample] in half]
    return sum(1 for ids in picked if not ids) / len(picked)


def tuned_floor(
    answers: Run, questions: list[Question], half: Sequence[str], tolerance: float
) -> float:
    """The highest floor whose recall on `half` is within `tolerance` of no floor."""
    base = mean(recall_of(questions, answers[min(answers)]), questions, half)
    return max(
        f
        for f in answers
        if mean(recall_of(questions, answers[f]), questions, half) >= base - tolerance
    )


def report(
    name: str,
    uniform: tuple[Run, Run],
    mixed: tuple[Run, Run],
    questions: list[Question],
    samples: list[str],
    halves: dict[str, list[str]],
    tolerance: float,
) -> None:
    half_a, half_b = halves["A"], halves["B"]
    print(f"\n-- {name}: recall@{TOP_K} and off-topic questions answered with nothing --")
    print(
        f"{'floor':>6}{'uniform A':>11}{'uniform B':>11}{'mixed A':>9}{'mixed B':>9}"
        f"{'rejected A':>12}{'rejected B':>12}"
    )
    for floor in sorted(uniform[0]):
        cells = [
            mean(recall_of(questions, run[0][floor]), questions, half)
            for run in (uniform, mixed)
            for half in (half_a, half_b)
        ]
        print(
            f"{floor:6.2f}"
            + "".join(f"{c:11.3f}" if i < 2 else f"{c:9.3f}" for i, c in enumerate(cells))
            + f"{rejected(uniform[1][floor], samples, half_a):12.2f}"
            + f"{rejected(uniform[1][floor], samples, half_b):12.2f}"
        )
    floor = tuned_floor(uniform[0], questions, half_a, tolerance)
    zero = min(uniform[0])

    def on_b(run: Run, at: float) -> float:
        return mean(recall_of(questions, run[at]), questions, half_b)

    print(
        f"tuned on A (recall within {tolerance} of no floor): floor {floor:.2f}; on B: "
        f"recall@{TOP_K} uniform {on_b(uniform[0], floor):.3f} (no floor "
        f"{on_b(uniform[0], zero):.3f}), mixed {on_b(mixed[0], floor):.3f} (no floor "
        f"{on_b(mixed[0], zero):.3f}), off-topic rejected "
        f"{rejected(uniform[1][floor], samples, half_b):.2f} (no floor "
        f"{rejected(uniform[1][zero], samples, half_b):.2f})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=default_data(), help="LoCoMo JSON file")
    parser.add_argument(
        "--split", default=DEFAULT_SPLIT, help=f"sample ids of half A (default {DEFAULT_SPLIT})"
    )
    parser.add_argument(
        "--floors",
        default=DEFAULT_FLOORS,
        help=f"relevance floors to try (default {DEFAULT_FLOORS})",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.01,
        help="recall a floor may cost on half A (default 0.01)",
    )
    parser.add_argument("--seed", type=int, default=7, help="of the mixed scores")
    parser.add_argument(
        "--server",
        type=Path,
        default=ROOT,
        help="the checkout whose server to run (with its own .venv), e.g. "
        "an earlier version's; one without min_relevance ignores the "
        "floors (use --floors 0)",
    )
    args = parser.parse_args(argv)
    turns, questions = load(args.data)
    samples = sorted({t.sample for t in turns})
    half_a = [s for s in args.split.split(",") if s]
    halves = {"A": half_a, "B": [s for s in samples if s not in half_a]}
    floors = sorted({float(f) for f in args.floors.split(",") if f} | {0.0})
    rng = random.Random(args.seed)
    keys = [f"{t.sample}/{t.dia_id}" for t in turns]
    uniform = dict.fromkeys(keys, 3)
    mixed = {k: rng.randint(3, 5) for k in keys}
    started = time.perf_counter()
    print(
        f"== LoCoMo: {len(turns)} turns, {len(questions)} questions; half A "
        f"{', '.join(half_a)}, half B {', '.join(halves['B'])}; mixed scores 3-5 "
        f"(seed {args.seed}) =="
    )
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-floor-")))
        kinds = search_kinds(stack)
        for name, settings in kinds.items():
            runs = [
                knowhub_run(
                    turns, questions, tmp / f"{name}-{label}", settings, scores, floors, args.server
                )
                for label, scores in (("uniform", uniform), ("mixed", mixed))
            ]
            report(name, runs[0], runs[1], questions, samples, halves, args.tolerance)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
