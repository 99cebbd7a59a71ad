"""An agent loop with OpenAI function calling over the KnowHub agent tools.

The model gets the hub's tools (`knowhub.tools.openai_tools()`); each tool call it makes
runs against the hub (`knowhub.tools.call_tool`) and the result goes back to it, until it
answers. Any OpenAI-compatible endpoint works: set OPENAI_BASE_URL, OPENAI_API_KEY and
OPENAI_MODEL. Run it in the folder where `knowhub up` runs, so the SDK finds the local
hub's token (or set KNOWHUB_TOKEN):

    OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5 \
        .venv/bin/python examples/agent_openai_tools.py "How do I log in to site A?"
"""

from __future__ import annotations

import json
import sys
from typing import Any

from agent_model import MODEL, agent_model
from knowhub import KnowHub, tools
from openai import OpenAI

SYSTEM = (
    "You are an agent that shares a knowledge hub with other agents. Before you "
    "answer, search the hub with knowledge_search and use what helps; cite the ids "
    "of the records you used."
)
MAX_TURNS = 6


def run_agent(question: str, kh: KnowHub, llm: OpenAI, model: str) -> str:
    """The model's answer to `question`, after the tool calls it chose to make."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    schemas = tools.openai_tools()
    for _ in range(MAX_TURNS):
        reply = (
            llm.chat.completions.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]
                tools=schemas,
            )
            .choices[0]
            .message
        )  # type: ignore[arg-type]
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        for call in reply.tool_calls:
            result = tools.call_tool(kh, call.function.name, call.function.arguments)
            print(
                f"tool {call.function.name}({call.function.arguments}) -> "
                f"{json.dumps(result, ensure_ascii=False)[:200]}"
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps(result, ensure_ascii=False),
                }
            )
    return f"(no answer after {MAX_TURNS} turns)"


def main() -> None:
    question = " ".join(sys.argv[1:]) or "How do I log in to site A with Selenium?"
    llm = agent_model()
    kh = KnowHub()
    # Something for the agent to find: what another agent learned earlier.
    kh.knowledge.save(
        task="Log in to site A with Selenium",
        content="Use undetected_chromedriver and add random delays "
        "between the steps; site A blocks plain chromedriver.",
        types=["tool", "strategy"],
        tags={"domain": "crawling"},
        score=4,
    )
    answer = run_agent(question, kh, llm, MODEL)
    print(f"answer: {answer}")


if __name__ == "__main__":
    main()
