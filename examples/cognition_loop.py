"""The cognition loop of one agent run: log a goal, search, evaluate, review, commit,
dream.

1. On goal focus the agent asks the hub for knowledge; the query and what it returned
   are logged on the run's trace, and the agent gets a block to put in its prompt.
2. When the goal completes, the agent's own model evaluates the knowledge it was given
   (helpful, harmful, ...), which flows back into the records' counters.
3. What the agent learned is saved as pending knowledge; a person reviews it (here:
   approves it) and commits it, and it becomes searchable knowledge.
4. A dream run reflects on the agent's traces and writes its memory documents.

The agent's model is any OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY,
OPENAI_MODEL); the dream run uses the hub's own model (KNOWHUB_LLM_BASE_URL) and is
skipped, with the reason, when the hub has none. Run it in the folder where `knowhub up`
runs:

    .venv/bin/python examples/cognition_loop.py
"""

from __future__ import annotations

import time
import uuid

from agent_model import MODEL, agent_model
from knowhub import DreamRun, KnowHub
from openai import OpenAI

AGENT = "docs-crawler"
GOAL = "log in to site A"


def ask_model(llm: OpenAI, prompt: str) -> str:
    reply = llm.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content or ""


def wait_for(kh: KnowHub, run: DreamRun, timeout: float = 60.0) -> DreamRun:
    deadline = time.monotonic() + timeout
    while not run.finished and time.monotonic() < deadline:
        time.sleep(0.2)
        run = kh.dream.get_run(run.run_id)
    return run


def main() -> None:
    llm = agent_model()
    kh = KnowHub()
    trace = f"trace-{uuid.uuid4().hex[:12]}"
    kh.knowledge.save(
        task="Log in to site A", content="Use undetected_chromedriver.", types=["tool"], score=4
    )

    # 1. The run starts: its mission, and the goal coming into focus.
    kh.cognition.append_events(
        trace,
        [{"type": "message", "sequence": 1, "role": "user", "content": "Crawl site A."}],
        task="crawl site A",
        agent_id=AGENT,
    )
    injected = kh.cognition.inject_knowledge_for_goal(trace, "g1", GOAL, sequence=2)
    print(injected.text)

    # 2. The goal completed: the agent's model rates what it was given.
    kh.cognition.signal_trigger(trace, "goal_completion")
    prompt = kh.cognition.evaluation_prompt(trace, goal=GOAL).prompt
    report = kh.cognition.submit_evaluation(trace, raw_text=ask_model(llm, prompt))
    for outcome in report.outcomes:
        print("evaluated", outcome.knowledge_id, outcome.status, outcome.feedback)

    # 3. What it learned waits for review; a reviewer approves it and commits.
    pending = kh.cognition.save_pending(
        trace,
        task="Log in to site A",
        types=["tool"],
        sequence=3,
        content="Add random delays of 1-3 s between the login steps.",
    )
    kh.cognition.review_extraction(trace, pending.extraction.extraction_id, "approve")
    commit = kh.cognition.commit_extractions(trace)
    print("committed", commit.committed)  # extraction id -> new knowledge id

    # 4. Dream: reflect on the agent's traces and update its memory documents.
    run = wait_for(kh, kh.dream.run(agent_id=AGENT))
    print("dream run", run.status, run.reason or "", run.counts)
    for document in kh.dream.documents(agent_id=AGENT, include_content=True):
        print(document.path, document.content)


if __name__ == "__main__":
    main()
