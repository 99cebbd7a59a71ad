"""The dream service's scripts run by SHA (EVALSHA) and are sent again when the server
has forgotten them (NOSCRIPT: a restarted or failed-over Redis): against the tests' real
Redis, standalone and Cluster."""

from __future__ import annotations

import pytest

from knowhub_server.common.storage.redis_store import connect
from knowhub_server.dream.runs.domain import MemoryDocument
from knowhub_server.dream.runs.store import DreamStore

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def test_a_script_the_server_forgot_is_loaded_again(redis_url: str, redis_prefix: str) -> None:
    client = connect(redis_url)
    store = DreamStore(lambda: client, redis_prefix)

    def write(content: str, expected: int) -> MemoryDocument | str:
        return store.write_document(
            "agent-1",
            "notes.md",
            content,
            mode="append",
            expected=expected,
            at=1.0,
            keep=3,
            writer="user:alice",
            max_chars=1000,
        )

    assert isinstance(write("first", 0), MemoryDocument)
    client.script_flush()  # every master forgets every script
    second = write("second", 1)

    assert isinstance(second, MemoryDocument)
    assert (second.content, second.revision) == ("first\nsecond", 2)
    assert len(store.revisions("agent-1", "notes.md")) == 1
