"""A scripted model for the OpenAI-compatible stub that answers every kind of request the
hub and the examples make, the way a cooperative model would, so the docs and examples
run end to end without a real endpoint:

- the historian: rewrites an observation by naming the speaker (`submit_rewrite`) and
  writes the speaker's profile (`update_profile`);
- dream runs: a reflection summary, then a plan writing `notes.md`;
- search routing: the candidates in the order given; ask: an answer citing the records;
- an evaluation prompt: every source of every query rated helpful;
- an agent with the hub's tools: one `knowledge_search` for the user's question, then an
  answer citing what it found.
"""

from __future__ import annotations

import json
import re
from typing import Any

from knowhub_server.dream.runs import prompts as dream_prompts
from knowhub_server.knowledge import prompts as knowledge_prompts
from tests.support.openai_stub import ToolCalls

KNOWLEDGE_ID = re.compile(r"knowledge-\d{8}-[0-9a-f]+")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else json.dumps(content)


def _tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def _field(prompt: str, name: str) -> str:
    found = re.search(rf"^{name}: (\S+)", prompt, re.MULTILINE)
    return found.group(1) if found else ""


def _rewrite(prompt: str) -> ToolCalls:
    observation = prompt.split("Observation to rewrite:\n", 1)[-1].split("\n\n")[0].strip()
    speaker = _field(prompt, "sender_id") or _field(prompt, "user_id")
    # A rewrite the gate accepts: the speaker by id, no pronoun, no relative time.
    words = re.sub(r"\b(I|today|now)\b", "", observation).split()
    return ToolCalls([("submit_rewrite", {"text": f"User {speaker}: {' '.join(words)}."})])


def _profile(prompt: str) -> ToolCalls:
    speaker = _field(prompt, "sender_id") or _field(prompt, "user_id")
    events = prompt.split("New events:\n", 1)[-1].split("\n\n")[0].replace("- ", "").strip()
    return ToolCalls(
        [
            (
                "update_profile",
                {
                    "entity_type": "user",
                    "entity_id": speaker,
                    "name": f"user {speaker}",
                    "tags": ["learner"],
                    "summary": events,
                },
            )
        ]
    )


def _agent(request: dict[str, Any]) -> str | ToolCalls:
    messages = request["messages"]
    results = [_text(m) for m in messages if m.get("role") == "tool"]
    if not results:
        question = next(_text(m) for m in messages if m.get("role") == "user")
        return ToolCalls([("knowledge_search", {"query": question, "top_k": 3})])
    hits = json.loads(results[-1]).get("results") or []
    return " ".join(f"{hit['content']} [{hit['id']}]" for hit in hits) or "Nothing found."


def queries_of(prompt: str) -> list[tuple[int, list[str]]]:
    """(query sequence, its source ids) of each query of an evaluation prompt."""
    queries = []
    for block in prompt.split("### ")[1:]:
        sequence = re.search(r"query_sequence=(\d+)", block)
        if sequence is not None:
            queries.append((int(sequence.group(1)), re.findall(r"source_id: (\S+)", block)))
    return queries


def _evaluation(prompt: str) -> str:
    return json.dumps(
        {
            "evaluations": [
                {
                    "query_sequence": sequence,
                    "assessments": [
                        {"source_id": source, "status": "helpful", "reason": "it worked"}
                        for source in sources
                    ],
                }
                for sequence, sources in queries_of(prompt)
            ]
        }
    )


def respond(request: dict[str, Any]) -> str | ToolCalls:
    """The scripted model's answer to one chat completion request."""
    tools = _tool_names(request)
    system = _text(request["messages"][0])
    prompt = _text(request["messages"][-1])
    if "submit_rewrite" in tools:
        return _rewrite(prompt)
    if "update_profile" in tools:
        return _profile(prompt)
    if "knowledge_search" in tools:
        return _agent(request)
    if system == dream_prompts.REFLECT_SYSTEM:
        return json.dumps({"summary": "Site A needs undetected_chromedriver and delays."})
    if system == dream_prompts.INTEGRATE_SYSTEM:
        return json.dumps(
            {
                "updates": [
                    {
                        "path": "notes.md",
                        "new_content": "# Notes\n\n- Site A: undetected_chromedriver.",
                    }
                ]
            }
        )
    if system == knowledge_prompts.ROUTING_SYSTEM:
        return json.dumps({"ids": KNOWLEDGE_ID.findall(prompt)})
    if "query_sequence=" in prompt:
        return _evaluation(prompt)
    cited = KNOWLEDGE_ID.findall(prompt)
    if cited:  # ask: an answer citing the records it was given
        return f"Use what the hub knows [{cited[0]}]."
    return "{}"
