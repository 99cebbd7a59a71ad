"""The chat LLM through the `openai` package, and tolerant parsing of its JSON replies."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai

from services.common.config import CommonSettings

log = logging.getLogger(__name__)

_FENCED_JSON = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class LLMError(RuntimeError):
    """The LLM could not be reached, timed out, or answered something unusable."""


def parse_json_reply(text: str) -> Any:
    """Reads JSON from an LLM reply: the whole text, else a ```json block, else the
    outermost {...} or [...] in it (seed 000's three fallbacks). Raises LLMError."""
    candidates = [text.strip()]
    candidates += [block.strip() for block in _FENCED_JSON.findall(text)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise LLMError(f"the LLM reply holds no JSON: {text[:200]!r}")


@dataclass(frozen=True)
class ToolCall:
    """One function call of a reply: the function's name and its JSON object arguments."""

    name: str
    arguments: dict[str, Any]


class LLM:
    """A chat model that answers in JSON, or with tool calls."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout: float,
                 max_retries: int) -> None:
        self.model = model
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                                     max_retries=max_retries)

    @classmethod
    def from_settings(cls, settings: CommonSettings) -> LLM | None:
        if not settings.llm_base_url:
            return None
        return cls(settings.llm_base_url, settings.llm_api_key, settings.llm_model,
                   settings.llm_timeout_seconds, settings.llm_max_retries)

    def complete(self, system: str, user: str, *, model: str | None = None,
                 timeout: float | None = None) -> str:
        """The text of one chat completion. Raises LLMError on any failure."""
        response = self._chat(system, user, model=model, timeout=timeout)
        if not response.choices or response.choices[0].message.content is None:
            raise LLMError("the LLM returned no content")
        return response.choices[0].message.content

    def _chat(self, system: str, user: str, *, model: str | None, timeout: float | None,
              **extra: Any) -> Any:
        options: dict[str, Any] = dict(extra)
        if timeout is not None:
            options["timeout"] = timeout
        try:
            return self._client.chat.completions.create(
                model=model or self.model,
                messages=[{"role": "system", "content": system},
                          {"role": "user", "content": user}],
                temperature=0,
                **options,
            )
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM call failed: {exc}") from exc

    def call_tools(self, system: str, user: str, tools: Sequence[dict[str, Any]], *,
                   force: str | None = None, model: str | None = None,
                   timeout: float | None = None) -> list[ToolCall]:
        """The function calls of one chat completion offered `tools` (OpenAI `tools`
        schemas); `force` names a function the model must call. Calls whose arguments are
        not a JSON object are left out. Raises LLMError when the call fails."""
        body: dict[str, Any] = {"tools": list(tools)}
        if force is not None:
            body["tool_choice"] = {"type": "function", "function": {"name": force}}
        # As extra_body, the schemas go out as they are: the client's per-call walk over
        # typed `tools` costs about a millisecond, a third of a call to a fast endpoint.
        response = self._chat(system, user, model=model, timeout=timeout, extra_body=body)
        if not response.choices:
            raise LLMError("the LLM returned no choices")
        calls = []
        for call in response.choices[0].message.tool_calls or ():
            function = getattr(call, "function", None)
            if function is None:
                continue
            try:
                arguments = json.loads(function.arguments or "{}")
            except json.JSONDecodeError:
                log.warning("dropped a %s call with unreadable arguments", function.name)
                continue
            if isinstance(arguments, dict):
                calls.append(ToolCall(function.name, arguments))
        return calls

    def complete_json(self, system: str, user: str, *, model: str | None = None,
                      timeout: float | None = None) -> Any:
        return parse_json_reply(self.complete(system, user, model=model, timeout=timeout))

    def close(self) -> None:
        self._client.close()
