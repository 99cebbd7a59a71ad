"""The chat LLM through the `openai` package, and tolerant parsing of its JSON replies."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import openai

from knowhub_server.common.base import json_input
from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.lane import ModelLane
from knowhub_server.common.llm.retry import within

log = logging.getLogger(__name__)

_FENCED_JSON = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class LLMError(RuntimeError):
    """The LLM could not be reached, timed out, or answered something unusable."""


QUOTE = "> "


def quoted(text: str, indent: str = "") -> list[str]:
    """Text a prompt holds as data (a record's task or content), as quoted lines: every
    line, split at any line break a reader may honour (\\r and U+2028 among them),
    starts with the quote mark, so no line of it can read as an entry or an instruction
    of the prompt around it."""
    return [f"{indent}{QUOTE}{line}".rstrip() for line in text.splitlines() or [""]]


def parse_json_reply(text: str) -> Any:
    """Reads JSON from an LLM reply: the whole text, else a ```json block, else the
    outermost {...} or [...] in it. Raises LLMError."""
    candidates = [text.strip()]
    candidates += [block.strip() for block in _FENCED_JSON.findall(text)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json_input.loads(candidate)
        except ValueError:  # not JSON, or JSON no caller needs (NaN, too deep)
            continue
    raise LLMError(f"the LLM reply holds no JSON: {text[:200]!r}")


@dataclass(frozen=True)
class ToolCall:
    """One function call of a reply: the function's name and its JSON object arguments."""

    name: str
    arguments: dict[str, Any]


def _json_object(arguments: str, name: str) -> dict[str, Any] | None:
    try:
        value = json_input.loads(arguments)
    except (ValueError, TypeError):
        value = None
    if not isinstance(value, dict):
        log.warning("dropped a %s call whose arguments are not a JSON object", name)
        return None
    return value


class LLM:
    """A chat model that answers in JSON, or with function calls. Calls made while an RPC
    is handled wait for a slot of the model lane (common/llm/lane.py)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        max_retries: int,
        metrics: Metrics | None = None,
        allowed_models: Sequence[str] = (),
        lane: ModelLane | None = None,
    ) -> None:
        self.model = model
        self.allowed_models = frozenset({model, *allowed_models})
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        self._max_retries = max_retries
        self._metrics = metrics or Metrics()
        self._lane = lane or ModelLane(0, 0)

    @classmethod
    def from_settings(
        cls, settings: CommonSettings, metrics: Metrics | None = None, lane: ModelLane | None = None
    ) -> LLM | None:
        if not settings.llm_base_url:
            return None
        return cls(
            settings.llm_base_url,
            settings.llm_api_key,
            settings.llm_model,
            settings.llm_timeout_seconds,
            settings.llm_max_retries,
            metrics,
            settings.llm_allowed_models,
            lane,
        )

    def model_for(self, requested: str | None, field: str = "model") -> str:
        """The model a call runs: `requested` when the operator allows it (the configured
        one when empty); any other is INVALID_ARGUMENT naming `field`."""
        if not requested:
            return self.model
        if requested not in self.allowed_models:
            raise InvalidArgument(
                field,
                f"{requested[:64]!r} is not a model this hub "
                f"allows; choose one of {', '.join(sorted(self.allowed_models))}"
                " (KNOWHUB_LLM_ALLOWED_MODELS)",
            )
        return requested

    def complete(
        self,
        system: str,
        user: str,
        *,
        purpose: str = "other",
        model: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """The text of one chat completion. Raises LLMError on any failure, Busy when the
        model lane is full. `purpose` labels the call in the metrics. `timeout` bounds the
        whole call, its retries included (without it, each try gets the client's own)."""
        model = self.model_for(model)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        with self._lane.slot(), self._metrics.llm_call(purpose, model):
            try:
                if timeout is None:
                    response = self._client.chat.completions.create(
                        model=model,
                        messages=messages,  # type: ignore[arg-type]
                        temperature=0,
                    )
                else:
                    client = self._client.with_options(max_retries=0)
                    response = within(
                        timeout,
                        self._max_retries,
                        lambda left: client.chat.completions.create(
                            model=model,
                            messages=messages,  # type: ignore[arg-type]
                            temperature=0,
                            timeout=left,
                        ),
                    )
            except openai.OpenAIError as exc:
                raise LLMError(f"the LLM call failed: {exc}") from exc
            if not response.choices or response.choices[0].message.content is None:
                raise LLMError("the LLM returned no content")
            return response.choices[0].message.content

    def call_tools(
        self,
        system: str,
        user: str,
        tools: Sequence[dict[str, Any]],
        *,
        purpose: str = "other",
        force: str | None = None,
        model: str | None = None,
        timeout: float | None = None,
    ) -> list[ToolCall]:
        """The function calls of one chat completion offered `tools` (OpenAI `tools`
        schemas); `force` names a function the model must call. Calls whose arguments are
        not a JSON object are left out. Raises LLMError when the call fails, Busy when the
        model lane is full."""
        model = self.model_for(model)
        with self._lane.slot(), self._metrics.llm_call(purpose, model):
            functions = self._function_calls(system, user, tools, force, model, timeout)
        parsed = [(name, _json_object(arguments, name)) for name, arguments in functions]
        return [ToolCall(name, arguments) for name, arguments in parsed if arguments is not None]

    def _function_calls(
        self,
        system: str,
        user: str,
        tools: Sequence[dict[str, Any]],
        force: str | None,
        model: str,
        timeout: float | None,
    ) -> list[tuple[str, str]]:
        """The (name, JSON arguments) of each function call of one completion."""
        body: dict[str, Any] = {
            "model": model,
            "temperature": 0,
            "tools": list(tools),
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        if force is not None:
            body["tool_choice"] = {"type": "function", "function": {"name": force}}
        options: openai.RequestOptions = {} if timeout is None else {"timeout": timeout}
        try:
            # The client's plain post (its way to reach any endpoint) sends the body as it
            # is and returns the JSON: the typed create() spends twice the CPU on walking
            # the typed parameters and building models, which bounds the historian's rate.
            reply = cast(
                dict[str, Any],
                self._client.post("/chat/completions", cast_to=object, body=body, options=options),
            )
        except openai.OpenAIError as exc:
            raise LLMError(f"the LLM call failed: {exc}") from exc
        try:
            calls = reply["choices"][0]["message"].get("tool_calls") or []
            return [
                (c["function"]["name"], c["function"].get("arguments") or "{}")
                for c in calls
                if c.get("type", "function") == "function"
            ]
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"the LLM reply is not a chat completion: {str(reply)[:200]}") from exc

    def close(self) -> None:
        self._client.close()
