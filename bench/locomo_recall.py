"""Search quality on LoCoMo: evidence recall@10 of SearchKnowledge next to the raw engine,
on two halves of the conversations, with the hybrid fusion tuned on one half and judged
on the other.

Every turn of each conversation becomes one knowledge record (task = "<speaker> on <session
date>", content = the turn text plus its image caption) saved by that conversation's own
principal, so conversations are isolated by scope. Each question of categories 1-4 is
asked as a search with top_k=10; recall@10 is the fraction of its evidence turns among
the hits. The raw engine gets the same documents in one Edge shard: BM25 with the default
`Bm25Config()`, dense, and BM25 + dense fused by the engine's RRF and DBSF.

The conversations are split in two halves (`--split`, default conv-26,conv-30 against the
rest). KnowHub's hybrid search runs once per dense weight of `--weights`; for each
direction the weight with the best recall on one half is reported on the other, and
leave-one-conversation-out picks a weight on four conversations for the fifth.

Dense and hybrid rows need an embedding endpoint: set KNOWHUB_EMBEDDING_BASE_URL,
KNOWHUB_EMBEDDING_MODEL and KNOWHUB_EMBEDDING_DIM (../shared/tools/embed_server.py serves
all-MiniLM-L6-v2 offline). Embeddings are cached per text under bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import qdrant_edge as qe
from knowhub import KnowHub

from bench.common import ROOT, server_process
from bench.embedding_cache import CachedEmbeddings, caching_endpoint
from knowhub_server.knowledge.config import KnowledgeSettings

DATA_FILE = Path("shared/bench-data/locomo/locomo5-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP_K = 10
DEFAULT_SPLIT = "conv-26,conv-30"
DEFAULT_WEIGHTS = "0.3,0.4,0.5,0.55,0.6,0.65,0.7,0.8"
DEFAULT_WEIGHT: float = KnowledgeSettings.model_fields["search_dense_weight"].default
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def default_data() -> Path:
    """The LoCoMo file under the first folder above the repository that holds it."""
    for folder in ROOT.parents:
        if (folder / DATA_FILE).exists():
            return folder / DATA_FILE
    return ROOT.parent / DATA_FILE


@dataclass
class Turn:
    sample: str
    dia_id: str
    task: str
    content: str

    @property
    def text(self) -> str:
        return f"{self.task}\n{self.content}"


@dataclass
class Question:
    sample: str
    text: str
    category: int
    evidence: list[str]


def load(path: Path) -> tuple[list[Turn], list[Question]]:
    """Turns and the answerable questions, with evidence ids normalised: entries split on
    ';' ',' and spaces, leading zeros dropped, ids naming no stored turn left out."""
    turns, questions = [], []
    for sample in json.loads(path.read_text()):
        conversation, sample_id = sample["conversation"], sample["sample_id"]
        known = set()
        sessions = sorted(
            int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k)
        )
        for number in sessions:
            date = conversation.get(f"session_{number}_date_time", "")
            for turn in conversation[f"session_{number}"]:
                content = turn["text"]
                if turn.get("blip_caption"):
                    content += f" [image: {turn['blip_caption']}]"
                turns.append(
                    Turn(sample_id, turn["dia_id"], f"{turn['speaker']} on {date}", content)
                )
                known.add(turn["dia_id"])
        for qa in sample["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = _normalised(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(sample_id, qa["question"], qa["category"], evidence))
    return turns, questions


def _normalised(entries: list[str], known: set[str]) -> list[str]:
    ids: list[str] = []
    for entry in entries:
        for token in re.split(r"[;,\s]+", str(entry)):
            match = _EVIDENCE.fullmatch(token)
            if match:
                dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia_id in known and dia_id not in ids:
                    ids.append(dia_id)
    return ids


# ---- Scores: one recall@10 per question, averaged over any subset --------------------

Scores = list[float]  # recall@10 of each question, in the order of `questions`


def recall(questions: list[Question], search: Callable[[Question], list[str]]) -> Scores:
    scores = []
    for question in questions:
        found = set(search(question)[:TOP_K])
        scores.append(sum(1 for e in question.evidence if e in found) / len(question.evidence))
    return scores


def mean(
    scores: Scores, questions: list[Question], samples: Sequence[str], category: str = "all"
) -> float:
    """Mean recall over the questions of `samples` (and of one category unless "all")."""
    picked = [
        s
        for s, q in zip(scores, questions, strict=True)
        if q.sample in samples and category in ("all", CATEGORIES[q.category])
    ]
    return sum(picked) / len(picked) if picked else float("nan")


# ---- The raw engine ------------------------------------------------------------------


def raw_engine(
    turns: list[Turn],
    questions: list[Question],
    embeddings: CachedEmbeddings | None,
    directory: Path,
) -> dict[str, Scores]:
    """The engine used directly: one shard, a keyword filter per conversation."""
    dense = embeddings.embed([t.text for t in turns]) if embeddings else []
    config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=len(dense[0]), distance=qe.Distance.Cosine)}
        if dense
        else {},
        sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    shard = qe.EdgeShard.create(str(directory / "raw"), config)
    shard.update(qe.UpdateOperation.create_field_index("sample", qe.PayloadSchemaType.Keyword))
    bm25 = qe.Bm25(qe.Bm25Config())
    points = []
    for index, turn in enumerate(turns):
        vectors = {"bm25": bm25.embed_document(turn.text)}
        if dense:
            vectors["dense"] = dense[index]
        points.append(qe.Point(index, vectors, {"sample": turn.sample, "dia_id": turn.dia_id}))
    shard.update(qe.UpdateOperation.upsert_points(points))
    query_dense = embeddings.embed([q.text for q in questions]) if embeddings else []
    vector_of = {id(q): i for i, q in enumerate(questions)}

    def run(question: Question, legs: list[qe.Query], fusion: qe.Fusion | None = None) -> list[str]:
        where = qe.Filter(
            must=[qe.FieldCondition(key="sample", match=qe.MatchValue(value=question.sample))]
        )
        if fusion is None:
            request = qe.QueryRequest(limit=TOP_K, query=legs[0], filter=where, with_payload=True)
        else:
            request = qe.QueryRequest(
                limit=TOP_K,
                query=fusion,
                with_payload=True,
                prefetches=[qe.Prefetch(limit=2 * TOP_K, query=leg, filter=where) for leg in legs],
            )
        return [p.payload["dia_id"] for p in shard.query(request)]

    def sparse(q: Question) -> qe.Query:
        return qe.Query.Nearest(bm25.embed_query(q.text), using="bm25")

    def nearest(q: Question) -> qe.Query:
        return qe.Query.Nearest(query_dense[vector_of[id(q)]], using="dense")

    results = {"raw engine, BM25": recall(questions, lambda q: run(q, [sparse(q)]))}
    if embeddings:
        results["raw engine, dense"] = recall(questions, lambda q: run(q, [nearest(q)]))
        results["raw engine, hybrid (RRF)"] = recall(
            questions, lambda q: run(q, [sparse(q), nearest(q)], qe.Fusion.Rrf(k=60))
        )
        results["raw engine, hybrid (DBSF)"] = recall(
            questions, lambda q: run(q, [sparse(q), nearest(q)], qe.Fusion.Dbsf())
        )
    shard.close()
    return results


# ---- KnowHub -------------------------------------------------------------------------


def knowhub(
    turns: list[Turn], questions: list[Question], directory: Path, settings: dict[str, str]
) -> Scores:
    """SearchKnowledge through gRPC, one principal per conversation."""
    samples = sorted({t.sample for t in turns})
    tokens = [{"token": f"locomo-{s}", "user_id": s} for s in samples]
    env = {"KNOWHUB_EMBEDDING_TIMEOUT_SECONDS": "300", **settings}
    directory.mkdir(parents=True)
    (directory / "locomo-tokens.json").write_text(json.dumps({"tokens": tokens}))
    env["KNOWHUB_TOKENS_FILE"] = str(directory / "locomo-tokens.json")
    with server_process(directory / "data", env) as (_process, port):
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
                        }
                        for t in items[start : start + 100]
                    ]
                )

        def search(question: Question) -> list[str]:
            hits = clients[question.sample].knowledge.search(
                question.text, top_k=TOP_K, min_score=1
            )
            return [h.knowledge.tags["dia_id"] for h in hits]

        result = recall(questions, search)
        for client in clients.values():
            client.close()
    return result


def tuned_weight(
    by_weight: dict[float, Scores], questions: list[Question], samples: Sequence[str]
) -> float:
    """The dense weight with the best recall on `samples` (the smaller one on a tie)."""
    return max(sorted(by_weight), key=lambda w: mean(by_weight[w], questions, samples))


# ---- Report --------------------------------------------------------------------------


def print_half(
    title: str, rows: dict[str, Scores], questions: list[Question], samples: Sequence[str]
) -> None:
    count = sum(1 for q in questions if q.sample in samples)
    print(f"\n-- {title}: {', '.join(samples)} ({count} questions) --")
    names = ["all", *CATEGORIES.values()]
    print(f"{'':44}" + "".join(f"{n:>12}" for n in names))
    for label, scores in rows.items():
        print(
            f"{label:44}" + "".join(f"{mean(scores, questions, samples, n):12.3f}" for n in names)
        )


def print_tuning(
    by_weight: dict[float, Scores],
    bm25: Scores,
    questions: list[Question],
    halves: dict[str, list[str]],
) -> None:
    (name_a, half_a), (name_b, half_b) = halves.items()
    print("\n-- Dense weight: recall@10 of KnowHub hybrid on each half --")
    print(f"{'weight':>8}{name_a:>10}{name_b:>10}")
    for weight, scores in sorted(by_weight.items()):
        print(
            f"{weight:8.2f}{mean(scores, questions, half_a):10.3f}"
            f"{mean(scores, questions, half_b):10.3f}"
        )
    for (tune_name, tune), (test_name, test) in (
        ((name_a, half_a), (name_b, half_b)),
        ((name_b, half_b), (name_a, half_a)),
    ):
        weight = tuned_weight(by_weight, questions, tune)
        held_out = mean(by_weight[weight], questions, test)
        baseline = mean(bm25, questions, test)
        print(
            f"tuned on {tune_name}: weight {weight:.2f}; on {test_name} hybrid "
            f"{held_out:.3f}, BM25 {baseline:.3f} ({held_out - baseline:+.3f})"
        )
    samples = sorted({q.sample for q in questions})
    held_out_scores: Scores = [0.0] * len(questions)
    picks = []
    for sample in samples:
        weight = tuned_weight(by_weight, questions, [s for s in samples if s != sample])
        picks.append(f"{sample} {weight:.2f}")
        for index, question in enumerate(questions):
            if question.sample == sample:
                held_out_scores[index] = by_weight[weight][index]
    loco, baseline = mean(held_out_scores, questions, samples), mean(bm25, questions, samples)
    print(
        f"leave one conversation out: hybrid {loco:.3f}, BM25 {baseline:.3f} "
        f"({loco - baseline:+.3f}); weight per held-out conversation: {', '.join(picks)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=default_data(), help="LoCoMo JSON file")
    parser.add_argument(
        "--split",
        default=DEFAULT_SPLIT,
        help=f"sample ids of half A, comma-separated; half B is the rest (default {DEFAULT_SPLIT})",
    )
    parser.add_argument(
        "--weights",
        default=DEFAULT_WEIGHTS,
        help=f"dense weights to tune over (default {DEFAULT_WEIGHTS})",
    )
    parser.add_argument(
        "--dense-noise",
        type=float,
        default=0.0,
        help="add a random vector of this length to every embedding (a "
        "weaker model, for a robustness check; default 0)",
    )
    args = parser.parse_args(argv)
    turns, questions = load(args.data)
    samples = sorted({t.sample for t in turns})
    half_a = [s for s in args.split.split(",") if s]
    unknown = sorted(set(half_a) - set(samples))
    if unknown or not half_a or len(half_a) == len(samples):
        parser.error(
            f"--split must name some, not all, of {', '.join(samples)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
        )
    halves = {"A": half_a, "B": [s for s in samples if s not in half_a]}
    weights = sorted({float(w) for w in args.weights.split(",") if w} | {DEFAULT_WEIGHT})
    started = time.perf_counter()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="knowhub-locomo-")))
        embeddings = None
        if os.environ.get("KNOWHUB_EMBEDDING_BASE_URL"):
            embeddings = CachedEmbeddings(
                os.environ["KNOWHUB_EMBEDDING_BASE_URL"],
                os.environ["KNOWHUB_EMBEDDING_MODEL"],
                os.environ.get("KNOWHUB_EMBEDDING_API_KEY", "none"),
                noise=args.dense_noise,
            )
            stack.callback(embeddings.close)
        rows = raw_engine(turns, questions, embeddings, tmp)
        rows["KnowHub, BM25"] = knowhub(turns, questions, tmp / "bm25", {})
        rows["KnowHub, BM25 + feedback"] = knowhub(
            turns, questions, tmp / "feedback", {"KNOWHUB_SEARCH_FEEDBACK_DOCS": "3"}
        )
        by_weight: dict[float, Scores] = {}
        if embeddings:
            endpoint = stack.enter_context(caching_endpoint(embeddings))
            dense = {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_EMBEDDING_")}
            dense["KNOWHUB_EMBEDDING_BASE_URL"] = endpoint
            for weight in weights:
                by_weight[weight] = knowhub(
                    turns,
                    questions,
                    tmp / f"hybrid-{weight}",
                    {**dense, "KNOWHUB_SEARCH_DENSE_WEIGHT": str(weight)},
                )
    noise = f", dense noise {args.dense_noise}" if args.dense_noise else ""
    print(
        f"\n== LoCoMo evidence recall@{TOP_K}: {len(turns)} turns, {len(questions)} "
        f"questions (categories 1-4){noise} =="
    )
    for (name, half), (other_name, other) in zip(
        halves.items(), reversed(halves.items()), strict=True
    ):
        shown = dict(rows)
        if by_weight:
            shown[f"KnowHub, hybrid (default weight {DEFAULT_WEIGHT:.2f})"] = by_weight[
                DEFAULT_WEIGHT
            ]
            weight = tuned_weight(by_weight, questions, other)
            shown[f"KnowHub, hybrid (weight {weight:.2f}, tuned on {other_name})"] = by_weight[
                weight
            ]
        print_half(f"Half {name}", shown, questions, half)
    if by_weight:
        print_tuning(by_weight, rows["KnowHub, BM25"], questions, halves)
    else:
        print("(set KNOWHUB_EMBEDDING_* to add the dense and hybrid rows)")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
