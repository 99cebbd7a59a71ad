"""What dream runs and the evaluator ask the LLM, and how they read the JSON answers.

Every reader raises LLMError on an unusable answer, so callers can take their fallback.
"""

from __future__ import annotations

from knowhub_server.common.llm.chat import LLMError, parse_json_reply
from knowhub_server.dream.runs.cognition_client import Event
from knowhub_server.dream.runs.domain import (
    REFLECTION_SUMMARY_MAX,
    MemoryDocument,
    Reflection,
    Stretch,
)

REFLECT_SYSTEM = (
    "You are an AI agent's dream: you reflect on one stretch of one of its runs (a trace) "
    "for its long-term memory. Read the messages, the knowledge the agent queried, how that "
    "knowledge was rated, and the knowledge it proposed to save. Write what is worth "
    "remembering beyond this run: what the user wanted and prefers, what worked, what failed "
    "and why, which knowledge helped or misled, and lessons for similar tasks. Be concise "
    "and concrete; write in the language of the conversation. Answer only with JSON: "
    '{"summary": "..."}.'
)

INTEGRATE_SYSTEM = (
    "You maintain an AI agent's memory: Markdown documents, each at a path relative to the "
    "agent's memory namespace (e.g. user_preferences.md, projects/billing.md). Integrate the "
    "reflections of the agent's recent runs into them: update the documents they concern, "
    "create a document when a new subject deserves one, keep what is still true, drop what "
    "the reflections show to be wrong, merge duplicates. A path is relative: segments of "
    "letters, digits, _ - . separated by /; never absolute, never '..'. Answer only with "
    'JSON {"updates": [{"path": "...", "new_content": "<the whole new document>"}]} listing '
    'only the documents that change; {"updates": []} when nothing is worth keeping.'
)

EVALUATOR_SYSTEM = (
    "You evaluate how the knowledge an AI agent retrieved worked out in its "
    "task. Answer only with the JSON the message asks for."
)

_TEXT_KEPT = 4_000  # characters of one message or payload text shown to the LLM


def _cut(value: str, limit: int = _TEXT_KEPT) -> str:
    return value if len(value) <= limit else value[:limit] + " …[cut]"


def event_text(event: Event) -> str:
    """One trace event as a line of the reflection prompt."""
    kind = event["type"]
    if kind == "message":
        return f"[{event['sequence']}] {event['role']}: {_cut(event['content'])}"
    if kind == "query":
        sources = ", ".join(
            f"{s['id']} ({_cut(s['task'], 200)})" for s in event["sources"]
        ) or ", ".join(event["source_ids"])
        return (
            f"[{event['sequence']}] knowledge query: {_cut(event['query'])}; answer: "
            f"{_cut(event['response'], 1_000)}; sources: {sources or 'none'}"
        )
    if kind == "evaluation":
        result = event["eval_result"]
        return (
            f"[{event['query_sequence']}] knowledge {event['knowledge_id']} rated "
            f"{result['status']}: {_cut(result['reason'], 1_000)}"
        )
    if kind == "extraction_pending":
        payload = event["payload"]
        return (
            f"[{event['sequence']}] proposed to save knowledge {event['extraction_id']}: "
            f"{_cut(payload['task'], 500)} — {_cut(payload['content'])}"
        )
    if kind == "extraction_reviewed":
        return f"review of {event['extraction_id']}: {event['decision']}"
    return f"{event['extraction_id']} saved as knowledge {event['knowledge_id']}"


def reflect_prompt(trace_id: str, task: str, stretch: Stretch) -> str:
    events = "\n".join(stretch.lines) or "(no messages)"
    return (
        f"Trace: {trace_id}\nMission: {task or '(not given)'}\n\n"
        f"Messages and events of sequences {stretch.start} to {stretch.end}, in order "
        f"([sequence] first):\n{events}"
    )


def read_reflection(reply: str) -> str:
    """The summary of a reflection reply; LLMError when it holds none."""
    answer = parse_json_reply(reply)
    summary = answer.get("summary") if isinstance(answer, dict) else None
    if not isinstance(summary, str) or not summary.strip():
        raise LLMError('the reflection reply has no "summary" text')
    if len(summary) > REFLECTION_SUMMARY_MAX:
        raise LLMError(
            f"the reflection summary is {len(summary)} characters; at most {REFLECTION_SUMMARY_MAX}"
        )
    return summary.strip()


def integrate_prompt(
    agent_id: str,
    documents: dict[str, MemoryDocument],
    reflections: list[Reflection],
    *,
    max_chars: int,
    max_documents: int,
) -> str:
    shown = (
        "\n\n".join(
            f"### {path} (revision {d.revision})\n{d.content}"
            for path, d in sorted(documents.items())
        )
        or "(none yet)"
    )
    items = "\n".join(
        f"- trace {r.trace_id}, sequences {r.start}-{r.end}: {r.summary}" for r in reflections
    )
    return (
        f"Agent: {agent_id}\nLimits: at most {max_documents} documents of at most "
        f"{max_chars} characters each.\n\nCurrent memory documents:\n{shown}\n\n"
        f"New reflections, oldest first:\n{items}"
    )
