"""Remember and RecentMemos: what is enqueued and recorded, truncation, validation,
permissions, and the degrade paths (Redis down, memory disabled)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub_server.common.storage.redis_store import EmbeddedRedis, keyspace
from tests.conftest import StartHub
from tests.dream.support import Queue, group_context, memory_settings, private_context
from tests.support.harness import Harness
from tests.support.shared import bearer, failure, running_hub

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

ENV = {
    "KNOWHUB_HISTORIAN_WORKERS": "0",
    "KNOWHUB_MEMORY_RECENT_MEMOS_KEEP": "5",
    "KNOWHUB_MEMORY_RECENT_MEMOS_INJECT_K": "3",
    "KNOWHUB_MEMORY_REMEMBER_REQUEST_TTL_HOURS": "2",
}


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}:"


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, prefix: str
) -> Iterator[Harness]:
    """No historian workers: jobs stay on the stream for the tests to read."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ENV.items():
            patch.setenv(name, value)
        with running_hub(
            tmp_path_factory.mktemp("remember"), **memory_settings(redis_url, prefix)
        ) as harness:
            yield harness


@pytest.fixture(scope="module")
def queue(redis_url: str, prefix: str) -> Queue:
    return Queue(redis_url, prefix)


@pytest.fixture
def alice(server: Harness) -> KnowHub:
    return server.client("alice")


def last_job(queue: Queue) -> dict[str, Any]:
    return json.loads(queue.entries()[-1]["job"])


# ---- What Remember records ------------------------------------------------------------------


def test_remember_records_the_memo_and_enqueues_one_job(alice: KnowHub, queue: Queue) -> None:
    before = len(queue.entries())
    result = alice.memory.remember(
        "answered a question about asyncio",
        ["User 10001 uses Python 3.12 at work"],
        context=group_context(
            "21001",
            source_message="which asyncio version?",
            recent_messages=["10001: hi", "10001: which asyncio version?"],
            sender_name="Null",
            group_name="Pythonistas",
        ),
    )
    assert result.enqueued and result.memo_recorded and result.warnings == []
    assert len(queue.entries()) == before + 1
    job = last_job(queue)
    assert job["job_id"] == result.job_id
    assert job["scope"] == "org:acme"  # alice's default scope: her org
    assert job["observations"] == ["User 10001 uses Python 3.12 at work"]
    assert job["context"]["source_message"] == "which asyncio version?"
    assert job["context"]["recent_messages"] == ["10001: hi", "10001: which asyncio version?"]
    assert job["context"]["sender_name"] == "Null"
    memos = alice.memory.recent_memos(group_id="21001")
    assert [(m.text, m.job_id, m.sender_id) for m in memos] == [
        ("answered a question about asyncio", result.job_id, "10001")
    ]


def test_empty_memo_and_no_observations_enqueue_nothing(alice: KnowHub, queue: Queue) -> None:
    before = len(queue.entries())
    result = alice.memory.remember("  ", [], context=private_context("10077"))
    assert (result.job_id, result.enqueued, result.memo_recorded) == ("", False, False)
    assert len(queue.entries()) == before
    assert alice.memory.recent_memos(user_id="10077") == []


def test_observations_without_a_memo_are_enqueued_but_record_no_memo(
    alice: KnowHub, queue: Queue
) -> None:
    result = alice.memory.remember(
        "", ["User 10078 speaks Esperanto"], context=private_context("10078")
    )
    assert result.enqueued and not result.memo_recorded
    assert last_job(queue)["job_id"] == result.job_id
    assert alice.memory.recent_memos(user_id="10078") == []


def test_context_is_truncated_to_the_configured_limits(alice: KnowHub, queue: Queue) -> None:
    recent = [f"line {i} " + "x" * 300 for i in range(20)]
    result = alice.memory.remember(
        "memo",
        [],
        context=private_context("10079", source_message="s" * 1000, recent_messages=recent),
    )
    job = last_job(queue)
    assert job["context"]["source_message"] == "s" * 800
    kept = job["context"]["recent_messages"]
    assert kept == [line[:240] for line in recent[-12:]]
    assert result.warnings == [
        "context.source_message: truncated to 800 characters",
        "context.recent_messages: kept the last 12 of 20",
        "context.recent_messages: lines truncated to 240 characters",
    ]


def test_the_short_term_list_is_bounded_and_read_oldest_first(alice: KnowHub) -> None:
    for i in range(7):
        alice.memory.remember(f"memo {i}", context=private_context("10080"))
    assert [m.text for m in alice.memory.recent_memos(user_id="10080", limit=5)] == [
        f"memo {i}" for i in range(2, 7)
    ]
    # The default limit is KNOWHUB_MEMORY_RECENT_MEMOS_INJECT_K (3 here).
    assert [m.text for m in alice.memory.recent_memos(user_id="10080")] == [
        "memo 4",
        "memo 5",
        "memo 6",
    ]


def test_memos_belong_to_one_conversation_and_one_scope(server: Harness) -> None:
    alice, bob, carol = (server.client(p) for p in ("alice", "bob", "carol"))
    alice.memory.remember("in the group", context=group_context("21002", user_id="10081"))
    alice.memory.remember("in private", context=private_context("10081"))
    assert [m.text for m in alice.memory.recent_memos(group_id="21002")] == ["in the group"]
    assert [m.text for m in alice.memory.recent_memos(user_id="10081")] == ["in private"]
    assert [m.text for m in carol.memory.recent_memos(user_id="10081")] == ["in private"]
    assert bob.memory.recent_memos(user_id="10081") == []  # another org: another tenant


def test_a_memo_can_go_to_a_narrower_visible_scope(server: Harness, queue: Queue) -> None:
    alice, carol = server.client("alice"), server.client("carol")
    alice.memory.remember("just mine", context=private_context("10082"), scope="user:alice")
    assert last_job(queue)["scope"] == "user:alice"
    assert carol.memory.recent_memos(user_id="10082") == []
    assert [m.text for m in alice.memory.recent_memos(user_id="10082", scope="user:alice")] == [
        "just mine"
    ]


def test_a_scope_the_caller_cannot_see_is_refused(server: Harness, queue: Queue) -> None:
    before = len(queue.entries())
    code, message = failure(
        lambda: server.client("alice").memory.remember(
            "x", context=private_context("10083"), scope="org:globex"
        )
    )
    assert (code, "scope" in message) == ("PERMISSION_DENIED", True)
    assert len(queue.entries()) == before
    admin = server.client("admin")
    assert admin.memory.remember(
        "ops note", context=private_context("10083"), scope="org:globex"
    ).enqueued
    assert [m.text for m in server.client("bob").memory.recent_memos(user_id="10083")] == [
        "ops note"
    ]


def test_a_caller_without_a_token_is_unauthenticated(server: Harness) -> None:
    code, _ = failure(
        lambda: KnowHub(server.address, token="").memory.remember("x", context=private_context())
    )
    assert code == "UNAUTHENTICATED"


# ---- Retries with a request_id -------------------------------------------------------------


def _request_key(prefix: str, caller: str, request_id: str) -> str:
    return f"{keyspace(prefix, 'historian')}remember-request:{caller}:{request_id}"


def test_a_retry_with_the_same_request_id_returns_the_first_response(
    alice: KnowHub, queue: Queue
) -> None:
    context = private_context("10100", source_message="s" * 1000)
    first = alice.memory.remember(
        "fixed the build", ["User 10100 uses Bazel"], context=context, request_id="turn-10100"
    )
    entries = len(queue.entries())
    retry = alice.memory.remember(
        "fixed the build", ["User 10100 uses Bazel"], context=context, request_id="turn-10100"
    )
    assert retry == first
    assert retry.warnings == ["context.source_message: truncated to 800 characters"]
    assert len(queue.entries()) == entries
    assert [m.job_id for m in alice.memory.recent_memos(user_id="10100")] == [first.job_id]


def test_a_retry_with_other_content_still_returns_the_first_response(
    alice: KnowHub, queue: Queue
) -> None:
    first = alice.memory.remember(
        "first memo", context=private_context("10101"), request_id="turn-10101"
    )
    entries = len(queue.entries())
    retry = alice.memory.remember(
        "",
        ["User 10101 changed the story"],
        context=private_context("10101"),
        request_id="turn-10101",
    )
    assert (retry.job_id, retry.memo_recorded) == (first.job_id, True)
    assert len(queue.entries()) == entries
    assert [m.text for m in alice.memory.recent_memos(user_id="10101")] == ["first memo"]


def test_the_same_request_id_from_another_caller_is_independent(
    server: Harness, queue: Queue
) -> None:
    alice, carol = server.client("alice"), server.client("carol")  # one org, one scope
    entries = len(queue.entries())
    mine = alice.memory.remember(
        "alice's turn", context=private_context("10102"), request_id="shared-id"
    )
    theirs = carol.memory.remember(
        "carol's turn", context=private_context("10102"), request_id="shared-id"
    )
    assert mine.job_id != theirs.job_id and theirs.enqueued
    assert len(queue.entries()) == entries + 2
    assert [m.text for m in alice.memory.recent_memos(user_id="10102")] == [
        "alice's turn",
        "carol's turn",
    ]


def test_without_a_request_id_every_call_is_recorded(alice: KnowHub, queue: Queue) -> None:
    entries = len(queue.entries())
    calls = [alice.memory.remember("same", context=private_context("10103")) for _ in range(2)]
    assert calls[0].job_id != calls[1].job_id
    assert len(queue.entries()) == entries + 2


def test_a_request_id_is_kept_for_the_configured_time_then_forgotten(
    alice: KnowHub, queue: Queue, prefix: str
) -> None:
    first = alice.memory.remember(
        "kept a while", context=private_context("10104"), request_id="turn-10104"
    )
    key = _request_key(prefix, "user:alice", "turn-10104")
    # KNOWHUB_MEMORY_REMEMBER_REQUEST_TTL_HOURS is 2 here.
    assert 7200 - 60 < queue.client.ttl(key) <= 7200
    assert json.loads(queue.client.get(key))["job_id"] == first.job_id
    queue.client.delete(key)  # what expiry does
    entries = len(queue.entries())
    again = alice.memory.remember(
        "kept a while", context=private_context("10104"), request_id="turn-10104"
    )
    assert again.job_id != first.job_id
    assert len(queue.entries()) == entries + 1


def test_a_refused_call_claims_no_request_id(server: Harness, queue: Queue) -> None:
    alice = server.client("alice")
    code, _ = failure(
        lambda: alice.memory.remember(
            "x", context=private_context("10105"), scope="org:globex", request_id="turn-10105"
        )
    )
    assert code == "PERMISSION_DENIED"
    result = alice.memory.remember("x", context=private_context("10105"), request_id="turn-10105")
    assert result.enqueued and last_job(queue)["job_id"] == result.job_id


# ---- Validation: every rule, nothing written ------------------------------------------------


def _request(**changes: Any) -> dream_pb2.RememberRequest:
    request = dream_pb2.RememberRequest(
        memo="memo",
        observations=["User 10090 likes tea"],
        context=dream_pb2.MemoryContext(
            user_id="10090", group_id="21090", request_type=dream_pb2.REQUEST_TYPE_GROUP
        ),
    )
    for name, value in changes.items():
        target = request.context if name.startswith("context.") else request
        field = name.removeprefix("context.")
        if isinstance(value, list):
            target.ClearField(field)
            getattr(target, field).extend(value)
        elif field == "timestamp":
            target.timestamp.seconds = value
        else:
            setattr(target, field, value)
    return request


INVALID_REMEMBER = [
    ({"memo": "m" * 4001}, "memo"),
    ({"memo": "bad\x00memo"}, "memo"),
    ({"observations": [f"o{i}" for i in range(21)]}, "observations"),
    ({"observations": ["fine", "   "]}, "observations[1]"),
    ({"observations": ["o" * 2001]}, "observations[0]"),
    ({"context.request_type": dream_pb2.REQUEST_TYPE_UNSPECIFIED}, "context.request_type"),
    ({"context.request_type": 9}, "context.request_type"),
    ({"context.user_id": ""}, "context.user_id"),
    ({"context.user_id": "has space"}, "context.user_id"),
    ({"context.user_id": "u" * 129}, "context.user_id"),
    ({"context.group_id": ""}, "context.group_id"),
    ({"context.request_type": dream_pb2.REQUEST_TYPE_PRIVATE}, "context.group_id"),
    ({"context.sender_id": "tab\there"}, "context.sender_id"),
    ({"context.sender_name": "n" * 129}, "context.sender_name"),
    ({"context.group_name": "n" * 129}, "context.group_name"),
    ({"context.timestamp": 4_000_000_000}, "context.timestamp"),
    ({"context.timestamp": -5}, "context.timestamp"),
    ({"scope": "nonsense"}, "scope"),
    ({"scope": "user:bad id"}, "scope"),
    ({"request_id": "r" * 257}, "request_id"),
    ({"request_id": "line\nbreak"}, "request_id"),
    ({"request_id": "nul\x00"}, "request_id"),
]


@pytest.mark.parametrize(
    ("changes", "field"), INVALID_REMEMBER, ids=[f for _, f in INVALID_REMEMBER]
)
def test_remember_validation(
    server: Harness, queue: Queue, changes: dict[str, Any], field: str
) -> None:
    before = len(queue.entries())
    memos_before = server.client("alice").memory.recent_memos(group_id="21090")
    code, message = _raw_failure(
        server, lambda stub: stub.Remember(_request(**changes), metadata=bearer("alice"))
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert len(queue.entries()) == before
    assert server.client("alice").memory.recent_memos(group_id="21090") == memos_before


INVALID_MEMOS = [
    (dict(request_type=0), "request_type"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_PRIVATE), "user_id"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_GROUP), "group_id"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_PRIVATE, user_id="u", group_id="g"), "group_id"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_PRIVATE, user_id="u", limit=6), "limit"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_PRIVATE, user_id="u", limit=-1), "limit"),
    (dict(request_type=dream_pb2.REQUEST_TYPE_PRIVATE, user_id="u", scope="x"), "scope"),
]


@pytest.mark.parametrize(
    ("fields", "field"), INVALID_MEMOS, ids=[f"{f}-{i}" for i, (_, f) in enumerate(INVALID_MEMOS)]
)
def test_recent_memos_validation(server: Harness, fields: dict[str, Any], field: str) -> None:
    code, message = _raw_failure(
        server,
        lambda stub: stub.RecentMemos(
            dream_pb2.RecentMemosRequest(**fields), metadata=bearer("alice")
        ),
    )
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", field), message


def _raw_failure(server: Harness, call: Callable[[Any], object]) -> tuple[str, str]:
    with grpc.insecure_channel(server.address) as channel:
        stub = dream_pb2_grpc.DreamServiceStub(channel)
        return failure(lambda: call(stub))


# ---- Degrade paths -------------------------------------------------------------------------


def test_remember_is_unavailable_while_redis_is_down(start_hub: StartHub, tmp_path: Path) -> None:
    redis_server = EmbeddedRedis(tmp_path / "own-redis").start()
    hub = start_hub(redis_url=redis_server.url, env={"KNOWHUB_HISTORIAN_WORKERS": "0"})
    alice = hub.client("alice")
    assert alice.memory.remember("before", context=private_context()).enqueued
    redis_server.stop()
    with pytest.raises(errors.Unavailable, match="Redis is unavailable"):
        alice.memory.remember("during", context=private_context())
    with pytest.raises(errors.Unavailable):
        alice.memory.recent_memos(user_id="10001")


def test_disabled_memory_refuses_calls_and_keeps_the_queue(
    start_hub: StartHub, redis_url: str, redis_prefix: str
) -> None:
    queue = Queue(redis_url, redis_prefix)
    queue.client.xadd(queue.jobs, {"job": "{}", "attempt": "0"})
    hub = start_hub(
        env={"KNOWHUB_MEMORY_ENABLED": "false"}, **memory_settings(redis_url, redis_prefix)
    )
    with pytest.raises(errors.FailedPrecondition, match="KNOWHUB_MEMORY_ENABLED"):
        hub.client("alice").memory.remember("x", context=private_context())
    with pytest.raises(errors.FailedPrecondition):
        hub.client("alice").memory.search_events("anything")
    assert len(queue.entries()) == 1, "no worker consumed the waiting job"
    assert queue.client.xinfo_groups(queue.jobs) == []
