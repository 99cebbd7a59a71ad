"""Profiles: the merge by tool call, Markdown with front matter, revisions and restore,
search, isolation and validation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import grpc
import pytest
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    PROFILE,
    RECONCILE,
    REWRITE,
    Queue,
    decide,
    group_context,
    memory_settings,
    private_context,
    profile_update,
    prompt_of,
    rewrite,
    tool_of,
)
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub, ToolCalls
from tests.support.shared import bearer, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


class Merges:
    """A responder: every rewrite passes the observation through (the tests write
    absolute observations), every new fact is added; each profile merge answers the next
    queued tool calls."""

    def __init__(self) -> None:
        self.answers: list[ToolCalls] = []

    def __call__(self, request: dict[str, Any]) -> ToolCalls:
        if tool_of(request) == REWRITE:
            observation = prompt_of(request).split("Observation to rewrite:\n", 1)[1]
            return rewrite(observation.split("\n\n", 1)[0])
        if tool_of(request) == RECONCILE:
            return decide("add")
        return self.answers.pop(0) if self.answers else ToolCalls([])


@pytest.fixture
def merges(llm: OpenAIStub) -> Merges:
    llm.responder = merges = Merges()
    return merges


@pytest.fixture
def hub(start_hub: StartHub, llm: OpenAIStub, redis_url: str, redis_prefix: str) -> Harness:
    return start_hub(
        env={**FAST_HISTORIAN, "KNOWHUB_MEMORY_PROFILE_REVISION_KEEP": "3"},
        **memory_settings(redis_url, redis_prefix, llm),
    )


@pytest.fixture
def queue(redis_url: str, redis_prefix: str) -> Queue:
    return Queue(redis_url, redis_prefix)


@pytest.fixture
def alice(hub: Harness) -> KnowHub:
    return hub.client("alice")


def observe(
    kh: KnowHub,
    queue: Queue,
    merges: Merges,
    observation: str,
    *calls: tuple[str, dict[str, Any]],
    context: dict[str, Any] | None = None,
    **options: Any,
) -> str:
    """Remembers one observation whose profile merge answers `calls`; returns the job id."""
    merges.answers.append(ToolCalls(list(calls)))
    result = kh.memory.remember("", [observation], context=context or group_context(), **options)
    queue.wait_drained()
    return result.job_id


def test_a_merge_creates_profiles_as_markdown_with_front_matter(
    alice: KnowHub, queue: Queue, merges: Merges, llm: OpenAIStub
) -> None:
    job = observe(
        alice,
        queue,
        merges,
        "Null (QQ 10001) writes QQ bots in Python",
        profile_update(
            "user",
            "10001",
            "Null writes QQ bots in Python.",
            name="Null",
            tags=["Python", "QQ机器人"],
        ),
        profile_update("group", "20002", "A group of bot developers.", name="Bot Dev"),
    )
    user = alice.memory.get_profile("user", "10001")
    assert (user.name, user.tags, user.summary) == (
        "Null",
        ["Python", "QQ机器人"],
        "Null writes QQ bots in Python.",
    )
    assert (user.revision, user.reason, user.scope) == (1, "merge", "org:acme")
    assert user.source_event_id == f"{job}_0_sender"
    lines = user.markdown.split("\n")
    stamp = lines.pop(7)
    assert lines == [
        "---",
        "entity_type: user",
        'entity_id: "10001"',
        'name: "Null"',
        "tags:",
        '  - "Python"',
        '  - "QQ机器人"',
        f'source_event_id: "{job}_0_sender"',
        "---",
        "Null writes QQ bots in Python.",
    ]
    written = datetime.fromisoformat(stamp.removeprefix('updated_at: "').rstrip('"Z'))
    assert abs(written.replace(tzinfo=timezone.utc) - user.updated_at) < timedelta(milliseconds=1)
    group = alice.memory.get_profile("group", "20002")
    assert (group.name, group.source_event_id) == ("Bot Dev", f"{job}_0_group")
    merge = next(r for r in llm.chat_requests if tool_of(r) == PROFILE)
    assert "### user 10001\n(no profile yet)" in prompt_of(merge)
    assert "### group 20002\n(no profile yet)" in prompt_of(merge)
    assert "Null (QQ 10001) writes QQ bots in Python" in prompt_of(merge)


def test_each_update_keeps_the_previous_revision(
    alice: KnowHub, queue: Queue, merges: Merges, llm: OpenAIStub
) -> None:
    for n in range(1, 6):
        observe(
            alice,
            queue,
            merges,
            f"Null (QQ 10001) finished project number {n}",
            profile_update("user", "10001", f"Finished {n} projects.", tags=[f"t{n}"]),
        )
    current = alice.memory.get_profile("user", "10001")
    assert (current.revision, current.summary) == (5, "Finished 5 projects.")
    revisions = alice.memory.profile_revisions("user", "10001")
    assert [r.profile.revision for r in revisions] == [4, 3, 2]  # the last 3 kept
    assert [r.profile.summary for r in revisions] == [f"Finished {n} projects." for n in (4, 3, 2)]
    assert all(r.replaced_at is not None for r in revisions)
    last_merge = [r for r in llm.chat_requests if tool_of(r) == PROFILE][-1]
    assert "Finished 4 projects." in prompt_of(last_merge), "the LLM saw the current profile"


def test_restore_brings_back_a_revision_and_keeps_the_replaced_one(
    alice: KnowHub, queue: Queue, merges: Merges
) -> None:
    for summary in ("Likes tea.", "Likes coffee.", "Likes nothing (a wrong merge)."):
        observe(
            alice,
            queue,
            merges,
            f"User 10001 talked about drinks: {summary}",
            profile_update("user", "10001", summary, tags=[summary[:5]]),
            context=private_context(),
        )
    restored = alice.memory.restore_profile("user", "10001", revision=2)
    assert (restored.revision, restored.summary, restored.reason) == (
        4,
        "Likes coffee.",
        "restore of revision 2",
    )
    assert alice.memory.get_profile("user", "10001") == restored
    revisions = alice.memory.profile_revisions("user", "10001")
    assert [(r.profile.revision, r.profile.summary) for r in revisions] == [
        (3, "Likes nothing (a wrong merge)."),
        (2, "Likes coffee."),
        (1, "Likes tea."),
    ]
    again = alice.memory.restore_profile("user", "10001", revision=3)
    assert (again.revision, again.summary) == (5, "Likes nothing (a wrong merge).")


def test_restore_refusals_change_nothing(
    alice: KnowHub, queue: Queue, merges: Merges, hub: Harness
) -> None:
    observe(
        alice,
        queue,
        merges,
        "User 10001 likes chess",
        profile_update("user", "10001", "Plays chess."),
        context=private_context(),
    )
    before = alice.memory.get_profile("user", "10001")
    with pytest.raises(errors.NotFound, match="revision 7"):
        alice.memory.restore_profile("user", "10001", revision=7)
    with pytest.raises(errors.InvalidArgument, match="revision: is required"):
        alice.memory.restore_profile("user", "10001", revision=0)
    with pytest.raises(errors.NotFound):
        alice.memory.restore_profile("user", "99999", revision=1)
    with pytest.raises(errors.NotFound):  # another tenant sees no such profile
        hub.client("bob").memory.restore_profile("user", "10001", revision=1)
    assert alice.memory.get_profile("user", "10001") == before


def test_no_tool_call_leaves_the_profile_as_it_is(
    alice: KnowHub, queue: Queue, merges: Merges
) -> None:
    observe(
        alice,
        queue,
        merges,
        "User 10001 likes jazz",
        profile_update("user", "10001", "Likes jazz."),
        context=private_context(),
    )
    observe(alice, queue, merges, "User 10001 said hello", context=private_context())
    assert alice.memory.get_profile("user", "10001").revision == 1


def test_calls_for_profiles_the_job_does_not_concern_are_ignored(
    alice: KnowHub, queue: Queue, merges: Merges
) -> None:
    observe(
        alice,
        queue,
        merges,
        "User 10001 likes opera",
        profile_update("group", "20002", "Opera fans."),
        profile_update("user", "66666", "Someone else."),
        profile_update("user", "10001", "Likes opera."),
        context=private_context(),
    )
    assert alice.memory.get_profile("user", "10001").summary == "Likes opera."
    for entity_type, entity_id in (("group", "20002"), ("user", "66666")):
        with pytest.raises(errors.NotFound):
            alice.memory.get_profile(entity_type, entity_id)


def test_profiles_are_found_by_search_within_visible_scopes(
    hub: Harness, alice: KnowHub, queue: Queue, merges: Merges
) -> None:
    observe(
        alice,
        queue,
        merges,
        "Null (QQ 10001) maintains a Rust compiler",
        profile_update("user", "10001", "Maintains a Rust compiler.", tags=["Rust"]),
        profile_update("group", "20002", "Talks about Rust compilers.", tags=["Rust"]),
    )
    bob = hub.client("bob")
    observe(
        bob,
        queue,
        merges,
        "User 10001 of globex likes Rust too",
        profile_update("user", "10001", "Globex's Rust fan.", tags=["Rust"]),
    )
    hits = alice.memory.search_profiles("Rust compiler")
    assert {(h.profile.entity_type, h.profile.scope) for h in hits} == {
        ("user", "org:acme"),
        ("group", "org:acme"),
    }
    users = alice.memory.search_profiles("Rust", entity_type="user")
    assert [(h.profile.entity_id, h.profile.summary) for h in users] == [
        ("10001", "Maintains a Rust compiler.")
    ]
    assert len(alice.memory.search_profiles("Rust", top_k=1)) == 1
    assert [h.profile.summary for h in bob.memory.search_profiles("Rust")] == ["Globex's Rust fan."]
    assert bob.memory.get_profile("user", "10001").summary == "Globex's Rust fan."
    with pytest.raises(errors.PermissionDenied):
        bob.memory.get_profile("user", "10001", scope="org:acme")
    assert (
        hub.client("admin").memory.get_profile("user", "10001", scope="org:globex").summary
        == "Globex's Rust fan."
    )


# ---- Validation ---------------------------------------------------------------------------------


@pytest.fixture
def stub(hub: Harness) -> Iterator[dream_pb2_grpc.DreamServiceStub]:
    with grpc.insecure_channel(hub.address) as channel:
        yield dream_pb2_grpc.DreamServiceStub(channel)


USER = dream_pb2.ENTITY_TYPE_USER
INVALID = [
    ("GetProfile", dream_pb2.GetProfileRequest(entity_id="1"), "entity_type"),
    ("GetProfile", dream_pb2.GetProfileRequest(entity_type=7, entity_id="1"), "entity_type"),
    ("GetProfile", dream_pb2.GetProfileRequest(entity_type=USER), "entity_id"),
    ("GetProfile", dream_pb2.GetProfileRequest(entity_type=USER, entity_id="a b"), "entity_id"),
    (
        "GetProfile",
        dream_pb2.GetProfileRequest(entity_type=USER, entity_id="1", scope="x"),
        "scope",
    ),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query=""), "query"),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query="q" * 2001), "query"),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query="q", top_k=0), "top_k"),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query="q", top_k=101), "top_k"),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query="q", entity_type=9), "entity_type"),
    ("SearchProfiles", dream_pb2.SearchProfilesRequest(query="q", scope="nope"), "scope"),
    ("ListProfileRevisions", dream_pb2.ListProfileRevisionsRequest(entity_id="1"), "entity_type"),
    ("ListProfileRevisions", dream_pb2.ListProfileRevisionsRequest(entity_type=USER), "entity_id"),
    ("RestoreProfileRevision", dream_pb2.RestoreProfileRevisionRequest(revision=1), "entity_type"),
]


@pytest.mark.parametrize(
    ("method", "request_message", "field"),
    INVALID,
    ids=[f"{m}-{f}-{i}" for i, (m, _, f) in enumerate(INVALID)],
)
def test_profile_validation(
    stub: dream_pb2_grpc.DreamServiceStub, method: str, request_message: Any, field: str
) -> None:
    call: Callable[..., Any] = getattr(stub, method)
    code, message = failure(lambda: call(request_message, metadata=bearer("alice")))
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", field), message


def test_profiles_are_listed_page_by_page_within_visible_scopes(
    hub: Harness, alice: KnowHub, queue: Queue, merges: Merges
) -> None:
    observe(
        alice,
        queue,
        merges,
        "Null (QQ 10001) maintains a Rust compiler",
        profile_update("user", "10001", "Maintains a Rust compiler."),
        profile_update("group", "20002", "Talks about Rust compilers."),
    )
    observe(
        hub.client("bob"),
        queue,
        merges,
        "User 10001 of globex likes Rust too",
        profile_update("user", "10001", "Globex's Rust fan."),
    )
    listed, token = [], ""
    while True:
        page = alice.memory.list_profiles(limit=1, page_token=token)
        assert len(page) <= 1
        listed += page
        token = page.next_page_token
        if not token:
            break
    assert sorted((p.entity_type, p.entity_id, p.summary) for p in listed) == [
        ("group", "20002", "Talks about Rust compilers."),
        ("user", "10001", "Maintains a Rust compiler."),
    ]
    users = alice.memory.list_profiles(entity_type="user", limit=100)
    assert [p.entity_id for p in users] == ["10001"]
    assert [p.summary for p in hub.client("bob").memory.list_profiles()] == ["Globex's Rust fan."]
    with pytest.raises(errors.PermissionDenied):
        hub.client("bob").memory.list_profiles(scope="org:acme")
    with pytest.raises(errors.InvalidArgument, match="page_token"):
        alice.memory.list_profiles(entity_type="user", page_token=page_after(alice))


def page_after(alice: KnowHub) -> str:
    """A token of the unfiltered listing (other filters: refused)."""
    return alice.memory.list_profiles(limit=1).next_page_token


LIST_INVALID = [
    (dream_pb2.ListProfilesRequest(entity_type=9), "entity_type"),
    (dream_pb2.ListProfilesRequest(page_size=101), "page_size"),
    (dream_pb2.ListProfilesRequest(page_token="nonsense"), "page_token"),
    (dream_pb2.ListProfilesRequest(scope="nope"), "scope"),
]


@pytest.mark.parametrize(
    ("request_message", "field"), LIST_INVALID, ids=[f for _, f in LIST_INVALID]
)
def test_list_profiles_validation(
    stub: dream_pb2_grpc.DreamServiceStub, request_message: Any, field: str
) -> None:
    code, message = failure(lambda: stub.ListProfiles(request_message, metadata=bearer("alice")))
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", field), message
