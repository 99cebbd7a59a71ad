"""The historian with the scripted LLM: absolutization, the gate and its retries, force,
degrade paths, memo-only jobs, perspectives and metadata, and exactly-once effect."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors

from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    PROFILE,
    REWRITE,
    Queue,
    group_context,
    memory_settings,
    private_context,
    profile_update,
    prompt_of,
    rewrite,
    tool_of,
    wait_until,
)
from tests.support.harness import Harness
from tests.support.openai_stub import Failure, OpenAIStub, ToolCalls

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

NO_PROFILE_CHANGE = ToolCalls([])


@pytest.fixture
def hub_with(
    start_hub: StartHub, llm: OpenAIStub, redis_url: str, redis_prefix: str
) -> Callable[..., Harness]:
    """Starts a hub with the scripted LLM on the test's Redis; env overrides settings."""

    def start(env: dict[str, str] | None = None, with_llm: bool = True) -> Harness:
        return start_hub(
            env={**FAST_HISTORIAN, **(env or {})},
            **memory_settings(redis_url, redis_prefix, llm if with_llm else None),
        )

    return start


@pytest.fixture
def queue(redis_url: str, redis_prefix: str) -> Queue:
    return Queue(redis_url, redis_prefix)


def only_hit(kh: KnowHub, query: str, **targets: Any) -> Any:
    hits = kh.memory.search_events(query, **targets)
    assert len(hits) == 1, [h.event.to_dict() for h in hits]
    return hits[0].event


def rewrite_requests(llm: OpenAIStub) -> list[dict[str, Any]]:
    return [r for r in llm.chat_requests if tool_of(r) == REWRITE]


# ---- Absolutization -------------------------------------------------------------------------


def test_an_observation_becomes_an_absolute_event_per_perspective(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(rewrite("Null (QQ 10001) started learning Rust on 2026-03-02."), NO_PROFILE_CHANGE)
    alice = hub_with().client("alice")
    result = alice.memory.remember(
        "explained Rust lifetimes",
        ["我今天开始学 Rust"],
        context=group_context(
            source_message="我今天开始学 Rust 了",
            recent_messages=["10002: 谁在学 Rust?"],
            sender_name="Null",
            timestamp="2026-03-02T04:00:00Z",
        ),
    )
    queue.wait_drained()
    text = "Null (QQ 10001) started learning Rust on 2026-03-02."
    in_group = only_hit(alice, "Rust", target_group_id="20002")
    assert in_group.to_dict() == {
        "event_id": f"{result.job_id}_0_group",
        "text": text,
        "user_id": "10001",
        "group_id": "20002",
        "sender_id": "10001",
        "timestamp_utc": "2026-03-02T04:00:00Z",
        "timestamp_local": "2026-03-02T04:00:00+00:00",
        "request_type": "group",
        "perspective": "group",
        "is_absolute": True,
        "schema_version": "final_v1",
        "scope": "org:acme",
        "warning": "",
        "job_id": result.job_id,
        "state": "current",
        "superseded_at": None,
        "superseded_by": "",
        "supersedes": "",
        "deleted_at": None,
        "purge_at": None,
        "edited_at": None,
        "confirmed_at": None,
        "timestamp_epoch": 1772424000,
    }
    sender = only_hit(alice, "Rust", target_user_id="10001")
    assert (sender.perspective, sender.text, sender.event_id) == (
        "sender",
        text,
        f"{result.job_id}_0_sender",
    )
    assert only_hit(alice, "Rust").perspective == "global"
    request = rewrite_requests(llm)[0]
    assert request["tool_choice"] == {"type": "function", "function": {"name": REWRITE}}
    prompt = prompt_of(request)
    for part in (
        "我今天开始学 Rust 了",
        "- 10002: 谁在学 Rust?",
        "Null",
        "20002",
        "explained Rust lifetimes",
        "Time of the conversation (UTC): 2026-03-02T04:00:00+00:00",
    ):
        assert part in prompt


def test_the_memory_time_zone_sets_local_times_and_the_historians_clock(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(rewrite("Null (QQ 10001) started learning Rust on 2026-03-02."), NO_PROFILE_CHANGE)
    alice = hub_with(env={"KNOWHUB_MEMORY_TIMEZONE": "Asia/Shanghai"}).client("alice")
    alice.memory.remember(
        "", ["我今天开始学 Rust"], context=group_context(timestamp="2026-03-02T20:00:00Z")
    )
    queue.wait_drained()
    event = only_hit(alice, "Rust", target_group_id="20002")
    assert (event.to_dict()["timestamp_utc"], event.timestamp_local) == (
        "2026-03-02T20:00:00Z",
        "2026-03-03T04:00:00+08:00",
    )
    assert "Time of the conversation (Asia/Shanghai): 2026-03-03T04:00:00+08:00" in prompt_of(
        rewrite_requests(llm)[0]
    )


def test_the_gate_rejects_a_rewrite_and_the_retry_passes(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(
        rewrite("他昨天在这里买了一台 ThinkPad"),
        rewrite("Zhang San (QQ 10001) bought a ThinkPad in Hangzhou on 2026-03-01."),
        NO_PROFILE_CHANGE,
    )
    alice = hub_with().client("alice")
    alice.memory.remember("", ["他昨天在这里买了一台 ThinkPad"], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "ThinkPad", target_user_id="10001")
    assert (event.is_absolute, event.warning) == (True, "")
    assert event.text.startswith("Zhang San (QQ 10001) bought")
    retry = prompt_of(rewrite_requests(llm)[1])
    assert "rejected by the absolutization gate" in retry
    assert "pronoun: 他" in retry and "relative time: 昨天" in retry
    assert "relative place: 这里" in retry


def test_a_rewrite_that_keeps_failing_the_gate_is_stored_with_a_warning(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(
        rewrite("She moved here last week."),
        rewrite("She moved to Berlin recently."),
        NO_PROFILE_CHANGE,
    )
    alice = hub_with(env={"KNOWHUB_HISTORIAN_REWRITE_MAX_RETRY": "1"}).client("alice")
    alice.memory.remember("", ["She moved here last week"], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "Berlin", target_user_id="10001")
    assert event.is_absolute is False
    assert event.text == "She moved to Berlin recently."
    assert "the gate rejected 2 rewrites" in event.warning and "She" in event.warning
    assert len(rewrite_requests(llm)) == 2


def test_a_rewrite_that_loses_an_entity_id_is_stored_as_written(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    observation = "User 30003 lent User 10001 a copy of SICP"
    llm.script(
        *[rewrite("Li Si lent Null (QQ 10001) a copy of SICP on 2026-03-01.")] * 3,
        NO_PROFILE_CHANGE,
    )
    alice = hub_with().client("alice")
    alice.memory.remember("", [observation], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "SICP", target_user_id="10001")
    assert (event.text, event.is_absolute) == (observation, False)
    assert "missing entity ids: 30003" in event.warning
    assert "30003" in prompt_of(rewrite_requests(llm)[1])


def test_force_stores_a_gate_failing_rewrite_without_retrying(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(rewrite("User 30003 said the Here & Now café is closing."), NO_PROFILE_CHANGE)
    alice = hub_with().client("alice")
    alice.memory.remember(
        "",
        ["User 30003 said the Here & Now café is closing"],
        context=private_context(),
        force=True,
    )
    queue.wait_drained()
    event = only_hit(alice, "café", target_user_id="10001")
    assert event.text == "User 30003 said the Here & Now café is closing."
    assert event.is_absolute is False and event.warning.startswith("force:")
    assert len(rewrite_requests(llm)) == 1


def test_force_does_not_excuse_a_lost_entity_id(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    observation = "User 30003 is moving to Chengdu"
    llm.script(*[rewrite("Li Si is moving to Chengdu on 2026-04-01.")] * 3, NO_PROFILE_CHANGE)
    alice = hub_with().client("alice")
    alice.memory.remember("", [observation], context=private_context(), force=True)
    queue.wait_drained()
    event = only_hit(alice, "Chengdu", target_user_id="10001")
    assert (event.text, event.is_absolute) == (observation, False)
    assert len(rewrite_requests(llm)) == 3  # rewrite_max_retry (2) + 1


# ---- Degrade paths: nothing is lost -------------------------------------------------------


def test_a_failing_llm_stores_the_observation_as_written(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(Failure(500), Failure(503))
    alice = hub_with().client("alice")
    alice.memory.remember("", ["User 10001 prefers green tea"], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "green tea", target_user_id="10001")
    assert (event.text, event.is_absolute) == ("User 10001 prefers green tea", False)
    assert event.warning.startswith("rewrite failed, stored as written")
    assert queue.failed_count() == 0
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "10001")


def test_garbage_answers_store_as_written_and_leave_profiles_alone(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(
        "Sure! Here is the rewrite: User 10001 likes go.",
        ToolCalls([(PROFILE, "{not json"), (PROFILE, {"entity_type": "user"})]),
    )
    alice = hub_with().client("alice")
    alice.memory.remember("", ["User 10001 likes the game of go"], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "game of go", target_user_id="10001")
    assert (event.text, event.is_absolute) == ("User 10001 likes the game of go", False)
    assert f"did not call {REWRITE}" in event.warning
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "10001")
    assert queue.failed_count() == 0


def test_without_an_llm_events_are_stored_as_written(
    hub_with: Callable[..., Harness], queue: Queue
) -> None:
    alice = hub_with(with_llm=False).client("alice")
    alice.memory.remember(
        "chatted", ["User 10001 owns a corgi named Mochi"], context=group_context()
    )
    queue.wait_drained()
    event = only_hit(alice, "corgi", target_group_id="20002")
    assert (event.is_absolute, event.warning) == (False, "no LLM configured: stored as written")
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "10001")


def test_a_memo_alone_becomes_an_event_without_a_profile_merge(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    llm.script(
        rewrite(
            "The assistant recommended the book Fluent Python to Null (QQ 10001) on 2026-03-01."
        )
    )
    alice = hub_with().client("alice")
    result = alice.memory.remember("recommended Fluent Python", [], context=private_context())
    queue.wait_drained()
    event = only_hit(alice, "Fluent Python", target_user_id="10001")
    assert event.event_id == f"{result.job_id}_m_sender" and event.is_absolute
    assert [tool_of(r) for r in llm.chat_requests] == [REWRITE]


def test_the_workers_of_an_embedded_redis_start_with_the_first_job(
    start_hub: StartHub, tmp_path: Path
) -> None:
    hub = start_hub(env=FAST_HISTORIAN)
    assert not (hub.data_dir / "redis").exists(), "no redis-server for a stack never used"
    alice = hub.client("alice")
    alice.memory.remember("", ["User 10001 collects stamps"], context=private_context())
    wait_until(lambda: alice.memory.search_events("stamps"), what="the event")
    hub.restart()  # the workers start at once now that the embedded Redis holds data
    alice = hub.client("alice")
    alice.memory.remember("", ["User 10001 collects coins"], context=private_context())
    wait_until(lambda: alice.memory.search_events("coins"), what="the second event")


# ---- Exactly once in effect ------------------------------------------------------------------


def test_a_job_delivered_twice_overwrites_its_events_and_merges_once(
    hub_with: Callable[..., Harness], llm: OpenAIStub, queue: Queue
) -> None:
    def answer(request: dict[str, Any]) -> ToolCalls:
        if tool_of(request) == REWRITE:
            return rewrite("Null (QQ 10001) adopted a cat named Tofu on 2026-03-01.")
        return ToolCalls(
            [
                profile_update("user", "10001", "Has a cat named Tofu."),
                profile_update("group", "20002", "Members talk about pets."),
            ]
        )

    llm.responder = answer
    producer = hub_with(env={"KNOWHUB_HISTORIAN_WORKERS": "0"})
    result = producer.client("alice").memory.remember(
        "", ["User 10001 adopted a cat named Tofu"], context=group_context()
    )
    [entry] = queue.entries()
    queue.client.xadd(queue.jobs, entry)  # the same job again, as a redelivery would
    producer.stop()

    alice = hub_with(env={"KNOWHUB_HISTORIAN_WORKERS": "1"}).client("alice")
    queue.wait_drained()
    hits = alice.memory.search_events("cat Tofu", top_k=10)
    assert [h.event.event_id for h in hits] == [f"{result.job_id}_0_global"]
    assert len(alice.memory.search_events("cat Tofu", target_group_id="20002")) == 1
    assert alice.memory.get_profile("user", "10001").revision == 1
    assert alice.memory.get_profile("group", "20002").revision == 1
    assert alice.memory.profile_revisions("user", "10001") == []
    # The redelivery finds the events stored: no second rewrite, the profiles merged once.
    assert [tool_of(r) for r in llm.chat_requests] == [REWRITE, PROFILE]
    assert json.loads(entry["job"])["job_id"] == result.job_id
