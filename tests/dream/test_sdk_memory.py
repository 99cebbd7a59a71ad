"""`kh.memory` in the SDK: the context object, the asyncio client, typed results,
and a dream service at its own address."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from knowhub import AsyncKnowHub, KnowHub, RememberResult
from knowhub.memory import auto_inject_query, context_to_proto
from knowhub_contracts.v1 import dream_pb2

from tests.conftest import StartHub
from tests.dream.support import FAST_HISTORIAN, Queue, memory_settings, private_context

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def test_the_context_object_takes_a_chat_messages_fields() -> None:
    message = context_to_proto(
        {
            "user_id": 10001,
            "group_id": "20002",
            "recent_messages": ["a", "b"],
            "timestamp": 1_700_000_000,
        }
    )
    assert (message.user_id, message.request_type) == ("10001", dream_pb2.REQUEST_TYPE_GROUP)
    assert list(message.recent_messages) == ["a", "b"]
    assert message.timestamp.seconds == 1_700_000_000
    assert context_to_proto({"user_id": "1"}).request_type == dream_pb2.REQUEST_TYPE_PRIVATE
    with pytest.raises(ValueError, match="unknown context field"):
        context_to_proto({"user_id": "1", "chat_id": "2"})
    with pytest.raises(ValueError, match="request_type"):
        context_to_proto({"user_id": "1", "request_type": "channel"})


def test_the_async_client_remembers_and_reads_like_the_blocking_one(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_hub(
        env={"KNOWHUB_HISTORIAN_WORKERS": "0"}, **memory_settings(redis_url, redis_prefix)
    )

    async def scenario() -> tuple[RememberResult, RememberResult, list[str]]:
        async with AsyncKnowHub(hub.address, token="token-alice") as kh:
            result = await kh.memory.remember(
                "async memo", context=private_context(), request_id="async-turn-1"
            )
            retry = await kh.memory.remember(
                "async memo", context=private_context(), request_id="async-turn-1"
            )
            memos = await kh.memory.recent_memos(user_id="10001")
            return result, retry, [m.text for m in memos]

    result, retry, memos = asyncio.run(scenario())
    assert result.enqueued and memos == ["async memo"]
    assert retry.job_id == result.job_id
    assert [m.job_id for m in hub.client("alice").memory.recent_memos(user_id="10001")] == [
        result.job_id
    ]


def test_results_convert_to_json_with_utc_epoch_and_local_times(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_hub(env=FAST_HISTORIAN, **memory_settings(redis_url, redis_prefix))
    # The dream service reached at its own address, as under compose.
    with KnowHub("127.0.0.1:1", dream=hub.address, token="token-alice") as kh:
        kh.memory.remember(
            "",
            ["User 10001 sings in a choir"],
            context=private_context(timestamp="2026-01-02T03:04:05Z"),
        )
        Queue(redis_url, redis_prefix).wait_drained()
        found: dict[str, Any] = kh.memory.search_events("choir").to_dict()
    assert found["count"] == 1 and found["warnings"] == []
    event = found["results"][0]["event"]
    assert (event["timestamp_utc"], event["timestamp_epoch"]) == (
        "2026-01-02T03:04:05Z",
        1767323045,
    )
    assert event["timestamp_local"] == "2026-01-02T03:04:05+00:00"  # UTC by default
    assert found["results"][0]["score"] >= found["results"][0]["similarity"] > 0


# ---- Auto-injection's query --------------------------------------------------------------------

FRAME = '<history>...</history><message sender="Null"><content>{}</content></message>'


@pytest.mark.parametrize(
    ("question", "context", "mentioned", "language", "expected"),
    [
        (
            FRAME.format("what did we decide about the quokka scheduler rollout?"),
            {"user_id": "10001", "group_id": "20002"},
            False,
            "en",
            "what did we decide about the quokka scheduler rollout?",
        ),
        (
            "no frame here, so the whole question is the query",
            {"user_id": "10001"},
            False,
            "en",
            "no frame here, so the whole question is the query",
        ),
        (
            FRAME.format("that one &amp; this"),
            {
                "user_id": "10001",
                "group_id": "20002",
                "group_name": "Python",
                "sender_id": "10001",
                "sender_name": "Null",
            },
            True,
            "en",
            "that one & this\n(group chat Python, the bot was mentioned, sender Null 10001)",
        ),
        (
            FRAME.format("那个呢?"),
            {"user_id": "10001", "sender_name": "Null"},
            False,
            "zh",
            "那个呢?\n(私聊, 发送者 Null)",
        ),
    ],
)
def test_the_auto_inject_query_is_the_message_with_context_when_short(
    question: str, context: dict[str, Any], mentioned: bool, language: str, expected: str
) -> None:
    assert (
        auto_inject_query(question, context, mentioned=mentioned, language_name=language)
        == expected
    )


def test_search_for_prompt_finds_the_conversations_events_by_the_frame(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    hub = start_hub(env=FAST_HISTORIAN, **memory_settings(redis_url, redis_prefix))
    alice = hub.client("alice")
    for group in ("20002", "20003"):
        alice.memory.remember(
            "",
            ["User 10001 leads the quokka scheduler rollout"],
            context={"user_id": "10001", "group_id": group},
        )
    Queue(redis_url, redis_prefix).wait_drained()
    question = FRAME.format("who leads the quokka scheduler rollout?")
    hits = alice.memory.search_for_prompt(question, {"user_id": "10001", "group_id": "20002"})
    assert [(h.event.group_id, h.event.perspective) for h in hits] == [("20002", "group")]
