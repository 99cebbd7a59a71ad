"""Search routing (stage 1): what it adds to a search's latency, and what it finds for
paraphrased queries, with routing off and on, beside the raw engine's BM25.

The fixture is ten topics of three records each, and two paraphrases per topic that
share (almost) no word with its records ("looking after aquarium pets" for records on
zebrafish care), among synthetic distractors. Recall@3 is the share of a query's three
topic records among its three hits.

- Latency: SearchKnowledge p50 / p95 of queries in the distractors' words, with routing
  off (no LLM) and on, against a scripted OpenAI-compatible endpoint on loopback that
  answers at once, so the figure is routing's own cost (the catalog read, the prompt, the
  HTTP round trip, the answer read) without a model's thinking time; at catalogs of 30 to
  1,000 records (above KNOWHUB_SEARCH_ROUTING_CATALOG_MAX the LLM chooses from a recall
  of KNOWHUB_SEARCH_ROUTING_POOL instead).
- Recall: BM25 in the raw engine, the service with routing off (BM25, or hybrid when
  KNOWHUB_EMBEDDING_BASE_URL is set), the service with routing and a scripted router that
  knows each query's topic words (the ceiling routing allows, not a model's figure), and
  with a real model when KNOWHUB_LLM_BASE_URL (and KNOWHUB_LLM_MODEL, KNOWHUB_LLM_API_KEY)
  is set.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from knowhub import KnowHub

from bench.common import BENCH_TOKEN, TextGenerator, percentiles, server_process, timed_ms
from knowhub_server.common.llm.embedding import Bm25Encoder
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import SearchQuery
from knowhub_server.knowledge.store import knowledge_schema, visible_where
from tests.support.openai_stub import OpenAIStub

TOP_K = 3
# topic: (its records (task, content), two paraphrased queries, words a router knows)
TOPICS: dict[str, tuple[list[tuple[str, str]], list[str], list[str]]] = {
    "zebrafish": (
        [
            ("feeding zebrafish larvae", "give paramecia twice a day"),
            ("zebrafish tank water", "keep it at 28 degrees and pH 7.5"),
            ("breeding danio rerio", "separate the pairs with a divider overnight"),
        ],
        ["looking after aquarium pets", "how to keep lab fish healthy"],
        ["zebrafish", "danio"],
    ),
    "tls": (
        [
            ("renew the Let's Encrypt certificate", "run certbot renew from cron"),
            ("reload nginx after a certificate update", "nginx -s reload picks it up"),
            ("watch certificate expiry", "alert 14 days before notAfter"),
        ],
        ["browser warns the padlock has lapsed", "keep https from breaking"],
        ["certificate"],
    ),
    "expenses": (
        [
            ("submit travel receipts in Concur", "photograph each receipt"),
            ("per diem limits for trips", "60 euros a day inside the EU"),
            ("mileage claim form", "0.30 euros per kilometre driven"),
        ],
        ["get money back after a business journey", "reimbursement for travel"],
        ["receipts", "per diem", "mileage"],
    ),
    "sourdough": (
        [
            ("feed the starter", "equal weights of flour and water daily"),
            ("proof dough overnight in the fridge", "cold retard for 12 hours"),
            ("oven temperature for loaves", "250 C with steam, then 230 C"),
        ],
        ["making bread with wild yeast", "baking a crusty country loaf"],
        ["starter", "dough", "loaves"],
    ),
    "postgres": (
        [
            ("index foreign keys", "create an index on every referencing column"),
            ("read plans with EXPLAIN ANALYZE", "look for sequential scans"),
            ("vacuum table bloat", "autovacuum thresholds per table"),
        ],
        ["the database answers sluggishly", "speed up slow sql"],
        ["index", "EXPLAIN", "vacuum"],
    ),
    "kubernetes": (
        [
            ("CrashLoopBackOff", "kubectl logs --previous shows the last run"),
            ("liveness probe timeouts", "raise initialDelaySeconds"),
            ("OOMKilled pods", "raise the memory limit or fix the leak"),
        ],
        ["pod keeps restarting in the cluster", "service dies again and again"],
        ["CrashLoopBackOff", "liveness", "OOMKilled"],
    ),
    "onboarding": (
        [
            ("laptop provisioning checklist", "order it two weeks ahead"),
            ("grant repository access", "add them to the GitHub team"),
            ("first-week buddy", "pair them with a senior engineer"),
        ],
        ["a new colleague starts on Monday", "welcoming a fresh hire"],
        ["laptop", "repository", "buddy"],
    ),
    "houseplants": (
        [
            ("watering succulents", "once every two weeks"),
            ("fern humidity", "mist daily or use a pebble tray"),
            ("yellow leaves from overwatering", "let the soil dry out"),
        ],
        ["keeping indoor greenery alive", "my potted foliage is dying"],
        ["succulents", "fern", "overwatering"],
    ),
    "git": (
        [
            ("resolve conflicts with git mergetool", "pick hunks side by side"),
            ("rebase onto main", "git rebase -i origin/main"),
            ("abort a merge", "git merge --abort restores the branch"),
        ],
        ["two branches changed the same lines", "undo a botched combine of work"],
        ["git"],
    ),
    "tax": (
        [
            ("VAT return before the 10th", "file it on the portal every quarter"),
            ("quarterly estimated payments", "pay a quarter of last year's bill"),
            ("keep invoices for 10 years", "the authority may audit them"),
        ],
        ["paying the government on time", "duties towards the revenue office"],
        ["VAT", "estimated payments", "invoices"],
    ),
}
QUERIES = [(query, topic) for topic, (_, queries, _) in TOPICS.items() for query in queries]


def topic_router(words_of: dict[str, list[str]]) -> Callable[[dict[str, Any]], str]:
    """A scripted routing LLM that knows each query's topic words: the candidates whose
    task holds one of them."""

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        query = prompt.splitlines()[0].removeprefix("Query: ")
        lines = [json.loads(line) for line in prompt.splitlines() if line.startswith("{")]
        wanted = words_of.get(query, [])
        return json.dumps(
            {"ids": [c["id"] for c in lines if any(w.lower() in c["task"].lower() for w in wanted)]}
        )

    return respond


def first_candidates(body: dict[str, Any]) -> str:
    """A scripted routing LLM that answers at once with the first 2·top_k candidates."""
    lines = [
        json.loads(line)
        for line in body["messages"][-1]["content"].splitlines()
        if line.startswith("{")
    ]
    return json.dumps({"ids": [c["id"] for c in lines[: 2 * TOP_K]]})


def save_fixture(kh: KnowHub) -> dict[str, set[str]]:
    """The topics' records; the ids of each topic's."""
    saved = {}
    for topic, (records, _, _) in TOPICS.items():
        made = kh.knowledge.save_many(
            [{"task": t, "content": c, "types": ["strategy"]} for t, c in records]
        )
        saved[topic] = {k.id for k in made}
    return saved


def add_distractors(kh: KnowHub, text: TextGenerator, count: int) -> None:
    for offset in range(0, count, 500):
        kh.knowledge.save_many(
            [
                {"task": text.words(8), "content": text.words(30), "types": ["strategy"]}
                for _ in range(min(500, count - offset))
            ]
        )


def recall(kh: KnowHub, relevant: dict[str, set[str]]) -> float:
    found = [
        len({h.knowledge.id for h in kh.knowledge.search(q, top_k=TOP_K)} & relevant[topic]) / TOP_K
        for q, topic in QUERIES
    ]
    return sum(found) / len(found)


def raw_engine_recall(
    data_dir: Path, relevant: dict[str, set[str]], embedding: dict[str, str]
) -> float:
    """BM25 in the service's own shard, with the engine alone."""
    store = EdgeStore(data_dir / "qdrant")
    model = (
        SimpleNamespace(
            model=embedding["KNOWHUB_EMBEDDING_MODEL"], dim=int(embedding["KNOWHUB_EMBEDDING_DIM"])
        )
        if embedding
        else None
    )
    collection = store.open(knowledge_schema(model))  # type: ignore[arg-type]
    bm25, where = Bm25Encoder(), visible_where({"org:acme"}, min_score=3)
    found = []
    for query, topic in QUERIES:
        hits = collection.search(SearchQuery(where, TOP_K, sparse=bm25.query(query)))
        found.append(len({h.record.key for h in hits if h.record} & relevant[topic]) / TOP_K)
    store.close()
    return sum(found) / len(found)


def service_recall(data_dir: Path, env: dict[str, str], relevant: dict[str, set[str]]) -> float:
    with (
        server_process(data_dir, env) as (_process, port),
        KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN) as kh,
    ):
        return recall(kh, relevant)


def latency(port: int, searches: int, queries: list[str]) -> dict[str, float]:
    with KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN) as kh:
        cycle = iter(queries * (searches // len(queries) + 60))
        return percentiles(
            timed_ms(lambda: kh.knowledge.search(next(cycle), top_k=TOP_K), searches, warmup=20)
        )


def llm_env(stub: OpenAIStub) -> dict[str, str]:
    return {"KNOWHUB_LLM_BASE_URL": stub.base_url, "KNOWHUB_LLM_MAX_RETRIES": "0"}


def embedding_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_EMBEDDING_")}


def run(sizes: list[int], searches: int) -> None:
    stub = OpenAIStub().start()
    text = TextGenerator(seed=11)
    rows: list[tuple[int, dict[str, float], dict[str, float]]] = []
    recalls: list[tuple[str, float]] = []
    real_model = os.environ.get("KNOWHUB_LLM_BASE_URL")
    try:
        with tempfile.TemporaryDirectory(prefix="knowhub-routing-") as tmp:
            data_dir, stored = Path(tmp) / "data", 0
            embedded = embedding_env()
            with (
                server_process(data_dir, embedded) as (_process, port),
                KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN) as kh,
            ):
                relevant = save_fixture(kh)
            stored = 3 * len(TOPICS)
            recalls.append(("raw engine BM25", raw_engine_recall(data_dir, relevant, embedded)))
            recalls.append(
                (
                    "routing off (" + ("hybrid" if embedded else "BM25") + ")",
                    service_recall(data_dir, embedded, relevant),
                )
            )
            stub.responder = topic_router({q: TOPICS[t][2] for q, t in QUERIES})
            recalls.append(
                (
                    "routing, scripted topic router (ceiling)",
                    service_recall(data_dir, {**embedded, **llm_env(stub)}, relevant),
                )
            )
            if real_model:
                model_env = {k: v for k, v in os.environ.items() if k.startswith("KNOWHUB_LLM_")}
                recalls.append(
                    (
                        f"routing, {os.environ.get('KNOWHUB_LLM_MODEL')}",
                        service_recall(data_dir, {**embedded, **model_env}, relevant),
                    )
                )
            report_recall(recalls, real_model is not None)
            stub.responder = first_candidates
            # Words of the distractors, so that above the catalog limit recall fills the pool.
            queries = [text.query() for _ in range(50)]
            for size in sizes:
                with server_process(data_dir, embedded) as (_process, port):
                    with KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN) as kh:
                        add_distractors(kh, text, size - stored)
                    stored = max(stored, size)
                    off = latency(port, searches, queries)
                with server_process(data_dir, {**embedded, **llm_env(stub)}) as (_process, port):
                    on = latency(port, searches, queries)
                rows.append((size, off, on))
    finally:
        stub.stop()
    report_latency(rows)


def report_latency(rows: list[tuple[int, dict[str, float], dict[str, float]]]) -> None:
    print(f"\n== routing: SearchKnowledge latency (top_k={TOP_K}), LLM answering at once ==")
    print(
        f"{'records':>8} {'off p50':>8} {'off p95':>8} {'on p50':>8} {'on p95':>8} "
        f"{'added p50 ms':>13}"
    )
    for size, off, on in rows:
        print(
            f"{size:>8} {off['p50']:8.2f} {off['p95']:8.2f} {on['p50']:8.2f} "
            f"{on['p95']:8.2f} {on['p50'] - off['p50']:13.2f}"
        )


def report_recall(recalls: list[tuple[str, float]], real_model: bool) -> None:
    print(f"\n== routing: recall@{TOP_K} of {len(QUERIES)} paraphrased queries ==")
    for name, value in recalls:
        print(f"{name:<45} {value:6.3f}")
    if not real_model:
        print("(no real model: set KNOWHUB_LLM_BASE_URL, KNOWHUB_LLM_MODEL to measure one)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes",
        default="30,100,300,1000",
        help="catalog sizes for the latency rows, ascending (>= 30)",
    )
    parser.add_argument("--searches", type=int, default=300, help="searches per row")
    args = parser.parse_args(argv)
    run([int(s) for s in args.sizes.split(",")], args.searches)


if __name__ == "__main__":
    main()
