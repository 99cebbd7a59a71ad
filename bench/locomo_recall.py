"""Search quality on LoCoMo: evidence recall@10 of SearchKnowledge next to the raw engine.

Every turn of each conversation becomes one knowledge record (task = "<speaker> on <session
date>", content = the turn text plus its image caption) saved by that conversation's own
principal, so conversations are isolated by scope. Each question of categories 1-4 is
asked as a search with top_k=10; recall@10 is the fraction of its evidence turns among
the hits. The raw engine gets the same documents in one Edge shard: BM25 with the default
`Bm25Config()`, and BM25 + dense fused by the engine's RRF when embeddings are configured.

Dense and hybrid rows need an embedding endpoint: set KNOWHUB_EMBEDDING_BASE_URL,
KNOWHUB_EMBEDDING_MODEL and KNOWHUB_EMBEDDING_DIM (../shared/tools/embed_server.py serves
all-MiniLM-L6-v2 offline).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import openai
import qdrant_edge as qe
from knowhub import KnowHub

from bench.common import server_process

DATA = Path(__file__).resolve().parent.parent.parent / "shared/bench-data/locomo/locomo5-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP_K = 10
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


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
        sessions = sorted(int(k.split("_")[1]) for k in conversation
                          if re.fullmatch(r"session_\d+", k))
        for number in sessions:
            date = conversation.get(f"session_{number}_date_time", "")
            for turn in conversation[f"session_{number}"]:
                content = turn["text"]
                if turn.get("blip_caption"):
                    content += f" [image: {turn['blip_caption']}]"
                turns.append(Turn(sample_id, turn["dia_id"], f"{turn['speaker']} on {date}",
                                  content))
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


def recall(questions: list[Question], search: Callable[[Question], list[str]]
           ) -> dict[str, float]:
    """Mean recall@10 overall and per category."""
    by_category: dict[str, list[float]] = defaultdict(list)
    for question in questions:
        found = set(search(question)[:TOP_K])
        score = sum(1 for e in question.evidence if e in found) / len(question.evidence)
        by_category["all"].append(score)
        by_category[CATEGORIES[question.category]].append(score)
    return {name: sum(v) / len(v) for name, v in by_category.items()}


class Embeddings:
    def __init__(self) -> None:
        self.model = os.environ["KNOWHUB_EMBEDDING_MODEL"]
        self._client = openai.OpenAI(base_url=os.environ["KNOWHUB_EMBEDDING_BASE_URL"],
                                     api_key=os.environ.get("KNOWHUB_EMBEDDING_API_KEY", "none"))

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for start in range(0, len(texts), 256):
            response = self._client.embeddings.create(model=self.model,
                                                      input=texts[start:start + 256])
            vectors += [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
        return vectors


def raw_engine(turns: list[Turn], questions: list[Question], embeddings: Embeddings | None,
               directory: Path) -> dict[str, dict[str, float]]:
    """The engine used directly: one shard, a keyword filter per conversation."""
    dense_size = len(embeddings.embed(["probe"])[0]) if embeddings else 0
    config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=dense_size, distance=qe.Distance.Cosine)}
        if embeddings else {},
        sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    shard = qe.EdgeShard.create(str(directory / "raw"), config)
    shard.update(qe.UpdateOperation.create_field_index("sample", qe.PayloadSchemaType.Keyword))
    bm25 = qe.Bm25(qe.Bm25Config())
    dense = embeddings.embed([t.text for t in turns]) if embeddings else []
    points = []
    for index, turn in enumerate(turns):
        vectors = {"bm25": bm25.embed_document(turn.text)}
        if embeddings:
            vectors["dense"] = dense[index]
        points.append(qe.Point(index, vectors, {"sample": turn.sample, "dia_id": turn.dia_id}))
    shard.update(qe.UpdateOperation.upsert_points(points))
    query_dense = embeddings.embed([q.text for q in questions]) if embeddings else []
    vector_of = {id(q): i for i, q in enumerate(questions)}

    def run(question: Question, legs: list[qe.Query]) -> list[str]:
        where = qe.Filter(must=[qe.FieldCondition(key="sample",
                                                  match=qe.MatchValue(value=question.sample))])
        if len(legs) == 1:
            request = qe.QueryRequest(limit=TOP_K, query=legs[0], filter=where,
                                      with_payload=True)
        else:
            request = qe.QueryRequest(
                limit=TOP_K, query=qe.Fusion.Rrf(k=60), with_payload=True,
                prefetches=[qe.Prefetch(limit=2 * TOP_K, query=leg, filter=where)
                            for leg in legs])
        return [p.payload["dia_id"] for p in shard.query(request)]

    def sparse(q: Question) -> qe.Query:
        return qe.Query.Nearest(bm25.embed_query(q.text), using="bm25")

    def nearest(q: Question) -> qe.Query:
        return qe.Query.Nearest(query_dense[vector_of[id(q)]], using="dense")

    results = {"raw engine, BM25": recall(questions, lambda q: run(q, [sparse(q)]))}
    if embeddings:
        results["raw engine, dense"] = recall(questions, lambda q: run(q, [nearest(q)]))
        results["raw engine, hybrid (RRF)"] = recall(
            questions, lambda q: run(q, [sparse(q), nearest(q)]))
    shard.close()
    return results


def knowhub(turns: list[Turn], questions: list[Question], directory: Path,
            settings: dict[str, str]) -> dict[str, float]:
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
                clients[sample].knowledge.save_many([
                    {"task": t.task, "content": t.content, "types": ["usecase"],
                     "tags": {"dia_id": t.dia_id}} for t in items[start:start + 100]])

        def search(question: Question) -> list[str]:
            hits = clients[question.sample].knowledge.search(question.text, top_k=TOP_K,
                                                             min_score=1)
            return [h.knowledge.tags["dia_id"] for h in hits]

        result = recall(questions, search)
        for client in clients.values():
            client.close()
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo JSON file")
    args = parser.parse_args(argv)
    turns, questions = load(args.data)
    embeddings = Embeddings() if os.environ.get("KNOWHUB_EMBEDDING_BASE_URL") else None
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="knowhub-locomo-") as tmp:
        rows = raw_engine(turns, questions, embeddings, Path(tmp))
        rows["KnowHub, BM25"] = knowhub(turns, questions, Path(tmp) / "bm25", {})
        rows["KnowHub, BM25 + feedback"] = knowhub(
            turns, questions, Path(tmp) / "feedback", {"KNOWHUB_SEARCH_FEEDBACK_DOCS": "3"})
        if embeddings:
            dense = {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_EMBEDDING_")}
            rows["KnowHub, hybrid"] = knowhub(turns, questions, Path(tmp) / "hybrid", dense)
    print(f"\n== LoCoMo evidence recall@{TOP_K}: {len(turns)} turns, {len(questions)} "
          f"questions (categories 1-4) ==")
    names = ["all", *CATEGORIES.values()]
    print(f"{'':28}" + "".join(f"{n:>13}" for n in names))
    for label, scores in rows.items():
        print(f"{label:28}" + "".join(f"{scores.get(n, 0):13.3f}" for n in names))
    if not embeddings:
        print("(set KNOWHUB_EMBEDDING_* to add the dense and hybrid rows)")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
