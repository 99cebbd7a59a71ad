"""Memory that stays current: people move, change jobs and change their tastes over months;
what share of "where / what is X now" questions get the current fact first?

A generated set of people (`--people`, default 24), each remembered (as private-chat
observations, oldest first, months apart) with three cities, three jobs and three favourite
drinks, the latest fact of each restated once later word for word, and two facts that
never change. Each person is asked three questions ("Where does <name> live now?", "What
is <name>'s job now?", "What does <name> like to drink now?") with SearchEvents on their
memory (top_k 5); a question counts when its current fact ranks first.

Three hubs, each `knowhub up` in its own process with the real embedding endpoint (dense +
BM25 hybrid; KNOWHUB_EMBEDDING_BASE_URL, default http://127.0.0.1:8765/v1, all-MiniLM-L6-v2):

- before: every observation stored (reconciliation off, as before it existed);
- no LLM: reconciliation on without an LLM (exact duplicates are no-ops, nothing else);
- scripted LLM: reconciliation on with a deterministic stand-in for the LLM that knows
  which attribute each generated fact is about and answers `update` against the person's
  earlier fact of the same attribute, `noop` for a restatement and `add` otherwise. It
  measures the mechanism (supersede, filter, search) given right decisions, not a real
  model's judgement.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowhub import KnowHub

from bench.common import BENCH_TOKEN, server_process
from tests.support.openai_stub import OpenAIStub, ToolCalls

DAY = 86_400
START = 1_735_689_600  # 2025-01-01T00:00:00Z
FIRST = [
    "Alice",
    "Bruno",
    "Chen",
    "Dana",
    "Emil",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
]
LAST = ["Novak", "Okafor", "Silva", "Tanaka", "Weber", "Haddad", "Kowalski", "Moreau"]
CITIES = [
    "Paris",
    "Berlin",
    "Lisbon",
    "Madrid",
    "Vienna",
    "Oslo",
    "Prague",
    "Dublin",
    "Warsaw",
    "Athens",
    "Zurich",
    "Helsinki",
]
JOBS = [
    ("nurse", "St Mary's Hospital"),
    ("data analyst", "Acme Corp"),
    ("teacher", "Riverside School"),
    ("software engineer", "Globex"),
    ("chef", "Le Petit Bistro"),
    ("architect", "Studio Nord"),
    ("accountant", "Initech"),
    ("pilot", "Blue Sky Airlines"),
    ("journalist", "The Morning Post"),
    ("pharmacist", "GreenCross Pharmacy"),
]
DRINKS = [
    "green tea",
    "black coffee",
    "orange juice",
    "sparkling water",
    "hot chocolate",
    "oolong tea",
    "espresso",
    "lemonade",
    "matcha latte",
    "ginger beer",
]
HOBBIES = [
    "plays chess on weekends",
    "keeps a vegetable garden",
    "runs marathons",
    "collects vinyl records",
    "paints watercolours",
    "sings in a choir",
]
PETS = ["a grey cat", "a beagle", "two goldfish", "a parrot", "a rabbit", "no pets"]
QUESTIONS = {
    "city": "Where does {name} live now?",
    "job": "What is {name}'s job now?",
    "drink": "What does {name} like to drink now?",
}
SETUPS = ("before", "no LLM", "scripted LLM")


@dataclass
class Fact:
    user_id: str
    attribute: str  # city, job, drink; "" for facts that never change
    text: str
    at: float


def city_fact(name: str, city: str, first: bool) -> str:
    return f"{name} lives in {city}." if first else f"{name} moved to {city}."


def job_fact(name: str, job: tuple[str, str], first: bool) -> str:
    role, employer = job
    return (
        f"{name} works as a {role} at {employer}."
        if first
        else f"{name} started a new job as a {role} at {employer}."
    )


def drink_fact(name: str, drink: str, first: bool) -> str:
    return (
        f"{name}'s favourite drink is {drink}."
        if first
        else f"{name} switched to {drink} as favourite drink."
    )


def people(
    count: int, seed: int = 11
) -> tuple[list[Fact], dict[tuple[str, str], str], dict[str, str]]:
    """Every person's facts in time order, each (user, attribute)'s current fact, and each
    user's name."""
    rng = random.Random(seed)
    facts: list[Fact] = []
    current: dict[tuple[str, str], str] = {}
    names: dict[str, str] = {}
    for n in range(count):
        name = f"{FIRST[n % len(FIRST)]} {LAST[(n // len(FIRST) + n) % len(LAST)]}"
        user = str(100_000 + n)
        names[user] = name
        values = {
            "city": rng.sample(CITIES, 3),
            "job": rng.sample(JOBS, 3),
            "drink": rng.sample(DRINKS, 3),
        }
        writers = {"city": city_fact, "job": job_fact, "drink": drink_fact}
        timeline = [("", f"{name} {rng.choice(HOBBIES)}."), ("", f"{name} has {rng.choice(PETS)}.")]
        for version in range(3):  # the attributes change in turn, months apart
            for attribute in rng.sample(list(QUESTIONS), 3):
                timeline.append(
                    (attribute, writers[attribute](name, values[attribute][version], version == 0))
                )  # type: ignore[operator]
        at = START + rng.randrange(30) * DAY
        for attribute, text in timeline:
            facts.append(Fact(user, attribute, text, at))
            if attribute:
                current[(user, attribute)] = text
            at += rng.randrange(20, 70) * DAY
        for attribute in QUESTIONS:  # the current facts restated once, word for word
            facts.append(Fact(user, attribute, current[(user, attribute)], at))
            at += rng.randrange(5, 20) * DAY
    return facts, current, names


class ScriptedHistorian:
    """The deterministic stand-in for the LLM: rewrites keep the observation, profiles stay
    as they are, and reconciliation follows the generated attributes."""

    def __init__(self, facts: list[Fact]) -> None:
        self._attribute = {f.text: (f.user_id, f.attribute) for f in facts}

    def __call__(self, request: dict[str, Any]) -> ToolCalls:
        tool = request["tools"][0]["function"]["name"]
        prompt = request["messages"][-1]["content"]
        if tool == "submit_rewrite":
            observation = prompt.split("Observation to rewrite:\n", 1)[1].split("\n\n", 1)[0]
            return ToolCalls([(tool, {"text": observation})])
        if tool == "decide_memory":
            return ToolCalls([(tool, self._decide(prompt))])
        return ToolCalls([])

    def _decide(self, prompt: str) -> dict[str, Any]:
        new = prompt.split("\n", 2)[1]
        existing = re.findall(r"^(\d+)\. \([^)]*\) (.*)$", prompt, re.MULTILINE)
        key = self._attribute.get(new)
        for number, text in existing:
            if text == new:
                return {"action": "noop", "target": int(number)}
            if key and key[1] and self._attribute.get(text) == key:
                return {"action": "update", "target": int(number), "reason": key[1]}
        return {"action": "add"}


def run_setup(
    setup: str,
    facts: list[Fact],
    current: dict[tuple[str, str], str],
    names: dict[str, str],
    embedding: dict[str, str],
) -> dict[str, float]:
    env = {**embedding, "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05"}
    llm = None
    if setup == "before":
        env["KNOWHUB_MEMORY_RECONCILE_CANDIDATES"] = "0"
    if setup == "scripted LLM":
        llm = OpenAIStub().start()
        llm.responder = ScriptedHistorian(facts)
        env.update(
            KNOWHUB_LLM_BASE_URL=llm.base_url,
            KNOWHUB_LLM_API_KEY="bench",
            KNOWHUB_LLM_MODEL="scripted",
        )
    try:
        with (
            tempfile.TemporaryDirectory() as folder,
            server_process(Path(folder) / "data", env) as (_process, port),
            KnowHub(f"127.0.0.1:{port}", token=BENCH_TOKEN, timeout=120) as kh,
        ):
            stored = 0
            for fact in facts:
                result = kh.memory.remember(
                    "",
                    [fact.text],
                    wait=60,
                    context={
                        "user_id": fact.user_id,
                        "request_type": "private",
                        "timestamp": fact.at,
                    },
                )
                assert result.job is not None and result.job.state == "done", result
                stored += sum(1 for d in result.job.decisions if d.action in ("add", "update"))
            first = top3 = history = 0
            for (user, attribute), answer in current.items():
                question = QUESTIONS[attribute].format(name=names[user])
                hits = kh.memory.search_events(question, target_user_id=user, top_k=5)
                ranked = [h.event.text for h in hits]
                first += bool(ranked) and ranked[0] == answer
                top3 += answer in ranked[:3]
                history += len(
                    kh.memory.search_events(
                        question, target_user_id=user, top_k=20, include_history=True
                    )
                )
            questions = len(current)
            return {
                "first": first / questions,
                "top3": top3 / questions,
                "stored": stored,
                "history": history / questions,
            }
    finally:
        if llm is not None:
            llm.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=24)
    parser.add_argument(
        "--setups",
        default=",".join(SETUPS),
        help=f"which of {', '.join(SETUPS)} to run (comma-separated)",
    )
    args = parser.parse_args(argv)
    setups = [s for s in SETUPS if s in args.setups.split(",")]
    facts, current, names = people(args.people)
    embedding = {
        "KNOWHUB_EMBEDDING_BASE_URL": os.environ.get(
            "KNOWHUB_EMBEDDING_BASE_URL", "http://127.0.0.1:8765/v1"
        ),
        "KNOWHUB_EMBEDDING_MODEL": os.environ.get("KNOWHUB_EMBEDDING_MODEL", "all-MiniLM-L6-v2"),
        "KNOWHUB_EMBEDDING_DIM": os.environ.get("KNOWHUB_EMBEDDING_DIM", "384"),
        "KNOWHUB_EMBEDDING_API_KEY": "bench",
    }
    results = {setup: run_setup(setup, facts, current, names, embedding) for setup in setups}
    model = embedding["KNOWHUB_EMBEDDING_MODEL"]
    print(
        f"\nchanging facts: {args.people} people, {len(facts)} observations over months, "
        f"{len(current)} 'now' questions; hybrid search with {model}"
    )
    print(f"{'':36}" + "".join(f"{s:>15}" for s in setups))
    for label, key, form in (
        ("current fact ranked first", "first", "{:>14.1%} "),
        ("current fact in the top 3", "top3", "{:>14.1%} "),
        ("events stored (one copy each)", "stored", "{:>14.0f} "),
        ("hits with include_history (mean)", "history", "{:>14.1f} "),
    ):
        print(f"{label:36}" + "".join(form.format(results[s][key]) for s in setups))


if __name__ == "__main__":
    main()
