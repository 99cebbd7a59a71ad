"""The agent's own model for the examples: any OpenAI-compatible endpoint, named by
OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_MODEL), e.g. a local Ollama or vLLM."""

from __future__ import annotations

import os
import sys

from openai import OpenAI

MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")


def agent_model() -> OpenAI:
    """A client of the configured endpoint; without one, a one-line hint and exit 2."""
    if not os.environ.get("OPENAI_BASE_URL") and not os.environ.get("OPENAI_API_KEY"):
        print(
            "This example needs the agent's model: set OPENAI_API_KEY for OpenAI, or "
            "OPENAI_BASE_URL for any OpenAI-compatible endpoint (e.g. "
            "http://127.0.0.1:11434/v1 for Ollama) and OPENAI_MODEL.",
            file=sys.stderr,
        )
        sys.exit(2)
    # Local endpoints take no key, but the client insists on one.
    return OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "none")
