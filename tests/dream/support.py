"""Helpers of the dream tests: settings for a hub on the test Redis, waiting for the
historian, the job stream seen from Redis, and scripted historian replies."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import redis

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.support.openai_stub import OpenAIStub, ToolCalls

REWRITE = "submit_rewrite"
PROFILE = "update_profile"
RECONCILE = "decide_memory"


def memory_settings(
    redis_url: str, redis_prefix: str, llm: OpenAIStub | None = None, **extra: Any
) -> dict[str, Any]:
    """Harness settings: the test's Redis and prefix, the scripted LLM if given."""
    settings: dict[str, Any] = {"redis_url": redis_url, "redis_prefix": redis_prefix, **extra}
    if llm is not None:
        settings.update(llm_base_url=llm.base_url, llm_max_retries=0, llm_timeout_seconds=10)
    return settings


FAST_HISTORIAN = {"KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05"}


def wait_until(
    condition: Callable[[], object], timeout: float = 20.0, what: str = "the condition"
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Queue:
    """The historian's streams as Redis holds them."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        self.client: redis.Redis = connect(redis_url)
        self.jobs = f"{keyspace(prefix, 'historian')}jobs"
        self.failed = f"{keyspace(prefix, 'historian')}failed"

    def drained(self) -> bool:
        return self.client.xlen(self.jobs) == 0

    def wait_drained(self, timeout: float = 20.0) -> None:
        wait_until(self.drained, timeout, "the historian to finish its jobs")

    def entries(self) -> list[dict[str, str]]:
        return [
            {k.decode(): v.decode() for k, v in fields.items()}
            for _id, fields in self.client.xrange(self.jobs)
        ]

    def failed_count(self) -> int:
        return self.client.xlen(self.failed)


def rewrite(text: str) -> ToolCalls:
    return ToolCalls([(REWRITE, {"text": text})])


def decide(action: str, target: int | None = None, reason: str = "") -> ToolCalls:
    """The historian's reconcile answer: add, update, delete or noop (target: the number
    of the existing fact in its prompt)."""
    arguments: dict[str, Any] = {"action": action, "reason": reason}
    if target is not None:
        arguments["target"] = target
    return ToolCalls([(RECONCILE, arguments)])


def profile_update(
    entity_type: str, entity_id: str, summary: str, *, name: str = "", tags: list[str] | None = None
) -> tuple[str, dict[str, Any]]:
    return (
        PROFILE,
        {
            "entity_type": entity_type,
            "entity_id": entity_id,
            "name": name or entity_id,
            "tags": tags or [],
            "summary": summary,
        },
    )


def tool_of(request: dict[str, Any]) -> str:
    return request["tools"][0]["function"]["name"]


def prompt_of(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


def group_context(group_id: str = "20002", user_id: str = "10001", **extra: Any) -> dict[str, Any]:
    return {"user_id": user_id, "group_id": group_id, "request_type": "group", **extra}


def private_context(user_id: str = "10001", **extra: Any) -> dict[str, Any]:
    return {"user_id": user_id, "request_type": "private", **extra}
