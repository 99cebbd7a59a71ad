"""The feedback learning curve: does search follow real use?

Each topic has one record with the right answer and look-alike decoys: the same task,
the same words, a wrong answer. Each round, simulated agents of one organisation (acme)
each search for a random topic in their own words, use the first hit and mark it
helpful (the right record) or harmful (a decoy), as an evaluation would; a share of the
verdicts is wrong on purpose (`--noise`). Each agent's use is a trace of its own. The
figure is top-1 precision per round: over every topic's queries, the share whose first
hit is the right record, measured after the round. Round 0 is before any feedback.

Beside it runs an attacker: agents of another organisation (globex, a publisher) that
see the same `public` records and mark every hit the opposite way (decoys helpful, right
answers harmful), three times as often. Votes count for the voter's organisation,
so acme's curve is what it would be without them, and globex's own searches follow
globex's votes.

The server is `knowhub up` in its own process with the real embedding model
(all-MiniLM-L6-v2 behind an OpenAI-compatible endpoint: KNOWHUB_EMBEDDING_BASE_URL, by
default http://127.0.0.1:8765/v1) and no LLM, so stage 1 is hybrid recall.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

from knowhub import KnowHub

from bench.common import BENCH_TOKEN, ROOT, server_process

ATTACKER_TOKEN = "bench-globex-token"
# topic: (the task every record of it shares, the right answer, decoys, agents' queries)
TOPICS: dict[str, tuple[str, str, list[str], list[str]]] = {
    "tls": (
        "renew the TLS certificate of the edge proxy",
        "run certbot renew, then reload nginx so it serves the new certificate",
        [
            "delete the old certificate and restart nginx, it issues a new one itself",
            "turn off certificate checks in the clients until the certificate renews",
        ],
        [
            "the https certificate of our proxy expires next week",
            "how do I renew the proxy's TLS certificate",
        ],
    ),
    "migrations": (
        "run database migrations for a release",
        "run the migrations before starting the new web containers",
        [
            "start the new web containers first, migrations run on first request",
            "drop the tables and let the new version recreate them",
        ],
        [
            "when do schema migrations run during a deploy",
            "order of migrations and container start on release",
        ],
    ),
    "backup": (
        "restore the postgres backup",
        "stop writes, restore with pg_restore into a fresh database, then switch over",
        [
            "restore with pg_restore over the live database while it serves traffic",
            "copy the data directory of the backup over the running server's files",
        ],
        [
            "how to bring back yesterday's postgres dump",
            "steps to restore a database backup safely",
        ],
    ),
    "oom": (
        "pod killed with OOMKilled",
        "raise the container memory limit or fix the leak the heap profile shows",
        [
            "lower the memory limit so the scheduler places the pod elsewhere",
            "add more replicas, each will need less memory",
        ],
        ["kubernetes pod keeps getting OOMKilled", "container runs out of memory and restarts"],
    ),
    "secrets": (
        "store the API key for the payment provider",
        "put it in the secret store and read it from the environment at start",
        [
            "commit it to the repository in config.yaml so every deploy has it",
            "paste it into the README so the team can find it",
        ],
        ["where should the payment API key live", "handling the payment provider credentials"],
    ),
    "timezone": (
        "store timestamps in the database",
        "store them in UTC and convert to the user's zone only for display",
        [
            "store them in the server's local time zone",
            "store them as formatted strings in the user's zone",
        ],
        ["which time zone to keep timestamps in", "saving dates and times in the database"],
    ),
    "retries": (
        "retry failed calls to the payment API",
        "retry with exponential backoff and jitter, with an idempotency key",
        [
            "retry immediately in a tight loop until it succeeds",
            "never retry, report the failure to the user at once",
        ],
        [
            "payment API call failed, should we retry",
            "how to retry requests to the payment provider",
        ],
    ),
    "cache": (
        "invalidate the product cache after a price change",
        "delete the product's cache key in the same transaction's after-commit hook",
        [
            "wait for the cache to expire by itself after a day",
            "flush the whole cache cluster on every price change",
        ],
        ["prices show stale values after an update", "product cache keeps old price"],
    ),
    "logs": (
        "debug a crash that only happens in production",
        "read the structured logs around the crash's request id and its trace",
        [
            "attach a debugger to the production process and step through",
            "add print statements and redeploy until it shows up",
        ],
        [
            "crash happens only in prod, how to find the cause",
            "investigate a production-only failure",
        ],
    ),
    "dns": (
        "move the domain to a new server",
        "lower the DNS TTL a day ahead, then switch the A record and keep the old server",
        [
            "switch the A record and shut the old server down at once",
            "raise the TTL before switching so clients cache the new address longer",
        ],
        [
            "migrating the website to another server without downtime",
            "change the domain's IP address to the new host",
        ],
    ),
    "sourdough": (
        "feed the sourdough starter",
        "feed it equal weights of flour and water once a day at room temperature",
        [
            "feed it only water, the flour already in it is enough",
            "keep it in the freezer between feedings",
        ],
        ["how often to feed a bread starter", "keeping the sourdough culture alive"],
    ),
    "zebrafish": (
        "feed zebrafish larvae",
        "give them paramecia twice a day from five days after fertilisation",
        [
            "give them adult flake food from the first day",
            "do not feed them during the first two weeks",
        ],
        ["what do zebrafish larvae eat", "feeding young zebrafish in the lab"],
    ),
}


def write_tokens(directory: Path) -> Path:
    """acme's agents (the bench token) and globex's attacker, both may publish."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "feedback-tokens.json"  # server_process writes tokens.json
    path.write_text(
        json.dumps(
            {
                "tokens": [
                    {
                        "token": BENCH_TOKEN,
                        "user_id": "bench",
                        "agent_id": "bench_agent",
                        "org_id": "acme",
                        "roles": ["publisher"],
                    },
                    {
                        "token": ATTACKER_TOKEN,
                        "user_id": "mallory",
                        "agent_id": "mallory_bot",
                        "org_id": "globex",
                        "roles": ["publisher"],
                    },
                ]
            }
        )
    )
    return path


def seed(kh: KnowHub, rng: random.Random) -> dict[str, str]:
    """Saves every topic's records (in a shuffled order); record id -> its topic, with
    the right ones marked "<topic>:right"."""
    items = []
    for topic, (task, right, decoys, _queries) in TOPICS.items():
        items += [(f"{topic}:right", task, right)] + [(topic, task, d) for d in decoys]
    rng.shuffle(items)
    saved = kh.knowledge.save_many(
        [
            {"task": task, "content": content, "types": ["strategy"], "scopes": ["public"]}
            for _label, task, content in items
        ]
    )
    return {record.id: label for record, (label, _, _) in zip(saved, items, strict=True)}


def use(
    kh: KnowHub,
    query: str,
    labels: dict[str, str],
    rng: random.Random,
    *,
    top_k: int,
    judged: int,
    noise: float,
    honest: bool,
) -> bool:
    """One agent's use in a trace of its own: search, then a verdict on each of the first
    `judged` hits (the ones it used). True when the first hit was the right record."""
    hits = list(kh.knowledge.search(query, top_k=top_k))
    trace_id = f"trace-{uuid.uuid4().hex[:16]}"
    for hit in hits[:judged]:
        right = labels[hit.knowledge.id].endswith(":right")
        helpful = right if honest else not right
        if rng.random() < noise:
            helpful = not helpful
        case = {
            "task": query,
            "outcome": "worked" if helpful else "misled the agent",
            "trace_id": trace_id,
        }
        kh.knowledge.update(
            hit.knowledge.id, **{"add_helpful_case" if helpful else "add_harmful_case": case}
        )
    return bool(hits) and labels[hits[0].knowledge.id].endswith(":right")


def precision(kh: KnowHub, labels: dict[str, str], top_k: int) -> float:
    """Top-1 precision of the searches the agents make, over every topic's queries,
    without giving feedback."""
    queries = [q for _t, _r, _d, qs in TOPICS.values() for q in qs]
    right = 0
    for query in queries:
        hits = list(kh.knowledge.search(query, top_k=top_k))
        right += bool(hits) and labels[hits[0].knowledge.id].endswith(":right")
    return right / len(queries)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument(
        "--agents",
        type=int,
        default=8,
        help="acme uses per round, each of a random query (default 8)",
    )
    parser.add_argument(
        "--attackers",
        type=int,
        default=24,
        help="globex uses per round, each judging every hit the opposite way (default 24; 0: none)",
    )
    parser.add_argument("--top-k", type=int, default=3, help="hits each agent is given")
    parser.add_argument(
        "--judged",
        type=int,
        default=1,
        help="hits an acme agent uses and judges (default 1: the first)",
    )
    parser.add_argument(
        "--noise",
        type=float,
        default=0.1,
        help="share of the agents' verdicts that are wrong (default 0.1)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--server-root",
        type=Path,
        default=ROOT,
        help="run the server of another checkout (its .venv), to compare",
    )
    args = parser.parse_args(argv)
    embedding = {
        "KNOWHUB_EMBEDDING_BASE_URL": os.environ.get(
            "KNOWHUB_EMBEDDING_BASE_URL", "http://127.0.0.1:8765/v1"
        ),
        "KNOWHUB_EMBEDDING_MODEL": os.environ.get("KNOWHUB_EMBEDDING_MODEL", "all-MiniLM-L6-v2"),
        "KNOWHUB_EMBEDDING_DIM": os.environ.get("KNOWHUB_EMBEDDING_DIM", "384"),
    }
    rng = random.Random(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="knowhub-feedback-") as tmp:
        env = {**embedding, "KNOWHUB_TOKENS_FILE": str(write_tokens(Path(tmp)))}
        root = args.server_root.resolve()
        python = str(root / ".venv" / "bin" / "python") if root != ROOT else sys.executable
        with server_process(Path(tmp) / "data", env, root=root, python=python) as (_p, port):
            target = f"127.0.0.1:{port}"
            with (
                KnowHub(target, token=BENCH_TOKEN) as acme,
                KnowHub(target, token=ATTACKER_TOKEN) as globex,
            ):
                labels = seed(acme, rng)
                rows = run_rounds(acme, globex, labels, rng, args)
    records = len(labels)
    queries = sum(len(qs) for _t, _r, _d, qs in TOPICS.values())
    server = "" if args.server_root.resolve() == ROOT else f" (server: {args.server_root})"
    print(
        f"\n== Feedback learning curve{server}: {len(TOPICS)} topics, {records} records "
        f"({records - len(TOPICS)} look-alike decoys), {queries} queries; "
        f"all-MiniLM-L6-v2 hybrid, no LLM =="
    )
    print(
        f"acme: {args.agents} uses per round (a random query each, top {args.judged} of "
        f"{args.top_k} hits judged, {args.noise:.0%} of verdicts wrong); globex: "
        f"{args.attackers} uses per round judging all {args.top_k} the opposite way"
    )
    print(f"{'round':>5}  {'acme uses: top-1':>16}  {'acme top-1':>10}  {'globex top-1':>12}")
    for number, (uses, acme_p, globex_p) in enumerate(rows):
        shown = "-" if uses is None else f"{uses:.3f}"
        print(f"{number:>5}  {shown:>16}  {acme_p:>10.3f}  {globex_p:>12.3f}")
    print(f"({time.perf_counter() - started:.0f} s)")


def run_rounds(
    acme: KnowHub,
    globex: KnowHub,
    labels: dict[str, str],
    rng: random.Random,
    args: argparse.Namespace,
) -> list[tuple[float | None, float, float]]:
    """Per round: the share of acme's uses whose first hit was right (None for round 0),
    then acme's and globex's top-1 precision after the round's feedback."""

    def measure() -> tuple[float, float]:
        return precision(acme, labels, args.top_k), precision(globex, labels, args.top_k)

    rows: list[tuple[float | None, float, float]] = [(None, *measure())]
    queries = [q for _t, _r, _d, qs in TOPICS.values() for q in qs]
    # The attacker draws from its own generator: acme's uses are the same with or without it.
    attacker_rng = random.Random(args.seed + 1)
    for _ in range(args.rounds):
        right = 0
        for _agent in range(args.agents):
            right += use(
                acme,
                rng.choice(queries),
                labels,
                rng,
                top_k=args.top_k,
                judged=args.judged,
                noise=args.noise,
                honest=True,
            )
        for _attacker in range(args.attackers):
            use(
                globex,
                attacker_rng.choice(queries),
                labels,
                attacker_rng,
                top_k=args.top_k,
                judged=args.top_k,
                noise=0.0,
                honest=False,
            )
        rows.append((right / args.agents, *measure()))
    return rows


if __name__ == "__main__":
    main()
