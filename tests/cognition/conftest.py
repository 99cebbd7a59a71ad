"""A cognition server per test module, on the session's Redis under a key prefix of its
own, and helpers that build events."""

from __future__ import annotations

import json
import queue
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, Trigger

from tests.conftest import StartHub
from tests.support.harness import Harness, write_tokens_file
from tests.support.shared import running_hub

WAIT_SECONDS = 20.0


def write_tokens(directory: Path) -> Path:
    """The tests' tokens plus `token-eval`, an evaluator in alice's organisation, and
    `token-dream`, a dreamer (the dream service's role)."""
    path = write_tokens_file(directory)
    document = json.loads(path.read_text())
    document["tokens"].append(
        {"token": "token-eval", "user_id": "evalbot", "org_id": "acme", "roles": ["evaluator"]}
    )
    document["tokens"].append({"token": "token-dream", "user_id": "dreamsvc", "roles": ["dreamer"]})
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Harness]:
    """Every service, with the tests' tokens and no LLM; tests use traces of their own."""
    directory = tmp_path_factory.mktemp("cognition")
    with running_hub(
        directory,
        tokens=write_tokens(directory),
        redis_url=redis_url,
        redis_prefix=f"test-{uuid.uuid4().hex[:12]}:",
    ) as harness:
        yield harness


@pytest.fixture
def start_redis_hub(
    start_hub: StartHub, redis_url: str, redis_prefix: str, tokens_file: Path
) -> StartHub:
    """start_hub on the session's Redis under this test's prefix, with the evaluator."""
    write_tokens(tokens_file.parent)  # start_hub's tokens file, evaluator added

    def start(env: dict[str, str] | None = None, **settings: Any) -> Harness:
        return start_hub(env, redis_url=redis_url, redis_prefix=redis_prefix, **settings)

    return start


class Watcher:
    """Reads a WatchTriggers stream on a thread, so a test can wait with a time limit."""

    def __init__(self, client: KnowHub, **options: Any) -> None:
        self._stream = client.cognition.watch_triggers(**options)
        self._received: queue.Queue[Trigger | BaseException | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for trigger in self._stream:
                self._received.put(trigger)
            self._received.put(None)  # the stream ended cleanly
        except BaseException as error:
            self._received.put(error)

    def next(self) -> Trigger | BaseException | None:
        return self._received.get(timeout=WAIT_SECONDS)

    def stop(self) -> None:
        self._stream.cancel()


def new_trace() -> str:
    return f"trace-{uuid.uuid4().hex[:12]}"


def query_event(
    sequence: int, *knowledge: Knowledge | str, text: str = "how to log in", goal_id: str = "g1"
) -> dict[str, Any]:
    """A query event that returned these records (or ids)."""
    sources = [
        {"id": k, "task": "", "content": ""}
        if isinstance(k, str)
        else {"id": k.id, "task": k.task, "content": k.content}
        for k in knowledge
    ]
    return {
        "type": "query",
        "sequence": sequence,
        "goal_id": goal_id,
        "query": text,
        "response": "",
        "source_ids": [s["id"] for s in sources],
        "sources": sources,
    }


def save_knowledge(
    client: KnowHub,
    task: str = "log in to the supplier portal",
    content: str = "use the saved cookie",
    **fields: Any,
) -> Knowledge:
    """A new record each call: tests sharing a hub get records of their own even with the
    same text (a save equal to an existing record would return that one)."""
    values: dict[str, Any] = {
        "types": ["strategy"],
        "scopes": ["org:acme"],
        "allow_duplicate": True,
        **fields,
    }
    return client.knowledge.save(task=task, content=content, **values)


def payload(**fields: Any) -> dict[str, Any]:
    """An extraction payload (a knowledge save's arguments)."""
    return {
        "task": "rotate the API keys",
        "content": "monthly, revoking the old ones",
        "types": ["strategy"],
        "scopes": ["org:acme"],
        **fields,
    }
