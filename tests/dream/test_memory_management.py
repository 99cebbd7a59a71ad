"""Managing memory through the SDK: jobs you can follow, facts that supersede each other
(add / update / delete / no-op), event edits, deletes and their undo window, memo and
profile edits, and an agent's own memory documents."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from knowhub import KnowHub, errors
from pydantic import ValidationError

from knowhub_server.dream.memory import historian as historian_module
from knowhub_server.dream.memory.config import MemorySettings
from tests.conftest import StartHub
from tests.dream.support import (
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
    wait_until,
)
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub, ToolCalls

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class Historian:
    """A responder: rewrites pass the observation through; each reconcile answers the next
    queued decision (add when none is queued); profile merges answer the next queued calls
    (none when none are queued)."""

    def __init__(self) -> None:
        self.decisions: list[ToolCalls] = []
        self.merges: list[ToolCalls] = []

    def __call__(self, request: dict[str, Any]) -> ToolCalls:
        tool = tool_of(request)
        if tool == REWRITE:
            observation = prompt_of(request).split("Observation to rewrite:\n", 1)[1]
            return rewrite(observation.split("\n\n", 1)[0])
        if tool == RECONCILE:
            return self.decisions.pop(0) if self.decisions else decide("add")
        return self.merges.pop(0) if self.merges else ToolCalls([])


@pytest.fixture
def historian(llm: OpenAIStub) -> Historian:
    llm.responder = responder = Historian()
    return responder


@pytest.fixture
def hub_with(
    start_hub: StartHub, llm: OpenAIStub, redis_url: str, redis_prefix: str
) -> Callable[..., Harness]:
    def start(env: dict[str, str] | None = None, with_llm: bool = True) -> Harness:
        return start_hub(
            env={"KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05", **(env or {})},
            **memory_settings(redis_url, redis_prefix, llm if with_llm else None),
        )

    return start


def remember(kh: KnowHub, observation: str, at: float, user: str = "10001", **options: Any) -> Any:
    result = kh.memory.remember(
        "", [observation], wait=20, context=private_context(user, timestamp=at), **options
    )
    assert result.job is not None and result.job.state == "done", result
    return result


def texts(hits: Any) -> list[str]:
    return [h.event.text for h in hits]


# ---- Jobs you can follow ---------------------------------------------------------------------


def test_a_job_tells_its_state_events_and_decisions(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    hub = hub_with()
    alice = hub.client("alice")
    result = alice.memory.remember(
        "helped with a bot", ["Null (QQ 10001) writes QQ bots"], context=group_context(), wait=20
    )
    job = result.job
    assert job is not None and job.state == "done" and job.error == ""
    assert sorted(job.event_ids) == sorted(
        f"{result.job_id}_0_{p}" for p in ("group", "sender", "global")
    )
    assert [(d.observation_index, d.action, d.event_id) for d in job.decisions] == [
        (0, "add", f"{result.job_id}_0_sender")
    ]
    assert job.deliveries == 1 and job.scope == "org:acme"
    assert alice.memory.job(result.job_id) == job
    # Without a wait, the call returns at once; the job is followed by its id.
    quick = alice.memory.remember("", ["Null (QQ 10001) owns a cat"], context=group_context())
    assert quick.job is None
    wait_until(lambda: alice.memory.job(quick.job_id).state == "done", what="the job")


def test_a_job_is_read_only_by_those_who_see_its_scope(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    hub = hub_with()
    job_id = (
        hub.client("alice")
        .memory.remember("", ["User 10001 plays go"], context=private_context(), scope="user:alice")
        .job_id
    )
    for stranger in ("bob", "carol"):
        with pytest.raises(errors.NotFound, match="not found"):
            hub.client(stranger).memory.job(job_id)
    assert hub.client("admin").memory.job(job_id).job_id == job_id
    with pytest.raises(errors.NotFound):
        hub.client("alice").memory.job("no-such-job")
    with pytest.raises(errors.InvalidArgument, match="job_id"):
        hub.client("alice").memory.job("")


def test_a_failing_job_reads_failed_with_its_error_then_pending_on_retry(
    start_hub: StartHub, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = start_hub(
        env={
            "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
            "KNOWHUB_HISTORIAN_JOB_MAX_RETRIES": "0",
        },
        redis_url=redis_url,
        redis_prefix=redis_prefix,
    )
    alice = hub.client("alice")
    # An embeddings outage no longer fails a job (its vectors are written later): a fault
    # injected into the job's processing does.
    assert hub.server is not None
    [historian] = [
        t for t in hub.server.runtime.background if isinstance(t, historian_module.Historian)
    ]
    processor = historian._processor
    process = processor.process

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(processor, "process", failing)
    result = alice.memory.remember(
        "", ["User 10001 keeps bees"], context=private_context(), wait=20
    )
    assert result.job is not None and result.job.state == "failed"
    assert "injected failure" in result.job.error and result.job.event_ids == []
    assert alice.memory.job(result.job_id).state == "failed"
    monkeypatch.setattr(processor, "process", process)
    # The worker takes the job back and finishes it before the retry's call returns: the
    # retry writes nothing after the move that would turn the done job back to pending.
    queue = historian._queue
    move_back = queue._move_back

    def moved_back_and_finished(entry_id: str, fields: dict[str, str]) -> bool:
        moved = move_back(entry_id, fields)
        wait_until(lambda: alice.memory.job(result.job_id).state == "done", what="the retry")
        return moved

    monkeypatch.setattr(queue, "_move_back", moved_back_and_finished)
    alice.memory.retry_failed_job(result.job_id)
    job = alice.memory.job(result.job_id)
    assert job.state == "done" and job.error == ""


def test_a_wait_is_bounded_and_checked(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    alice = hub_with({"KNOWHUB_HISTORIAN_WORKERS": "0"}).client("alice")
    result = alice.memory.remember("", ["User 10001 waits"], context=private_context(), wait=0.3)
    assert result.job is not None and result.job.state == "pending"
    with pytest.raises(errors.InvalidArgument, match="wait_timeout"):
        alice.memory.remember("", ["x"], context=private_context(), wait=61)


# ---- Facts that stay consistent --------------------------------------------------------------


def test_without_an_llm_an_exact_duplicate_is_a_no_op(hub_with: Callable[..., Harness]) -> None:
    alice = hub_with(with_llm=False).client("alice")
    first = remember(alice, "User 10001 lives in Paris", T0)
    again = remember(alice, "user 10001  lives in Paris.", T0 + DAY)
    assert [(d.action, d.target_event_id) for d in again.job.decisions] == [
        ("noop", f"{first.job_id}_0_sender")
    ]
    assert again.job.event_ids == []
    restated = alice.memory.get_event(f"{first.job_id}_0_sender")
    assert restated.confirmed_at is not None  # counts as recent as its restatement
    assert restated.confirmed_at.timestamp() == pytest.approx(T0 + DAY)
    other = remember(alice, "User 10001 moved to Berlin", T0 + 2 * DAY)
    assert other.job.decisions[0].action == "add"  # no LLM: a change is a new fact
    assert sorted(texts(alice.memory.search_events("User 10001", target_user_id="10001"))) == [
        "User 10001 lives in Paris",
        "User 10001 moved to Berlin",
    ]


def test_a_changed_fact_supersedes_the_old_one_from_its_time(
    hub_with: Callable[..., Harness], historian: Historian, llm: OpenAIStub
) -> None:
    alice = hub_with().client("alice")
    paris = remember(alice, "User 10001 lives in Paris", T0)
    historian.decisions.append(decide("update", 1, "a new city"))
    berlin = remember(alice, "User 10001 lives in Berlin", T0 + 30 * DAY)
    decision = berlin.job.decisions[0]
    assert (decision.action, decision.target_event_id, decision.reason) == (
        "update",
        f"{paris.job_id}_0_sender",
        "a new city",
    )
    prompt = prompt_of(next(r for r in llm.chat_requests if tool_of(r) == RECONCILE))
    assert "1. (2026-01-01T00:00:00+00:00) User 10001 lives in Paris" in prompt
    assert "User 10001 lives in Berlin" in prompt.split("Existing facts", 1)[0]

    now = alice.memory.search_events("where does user 10001 live", target_user_id="10001")
    assert texts(now) == ["User 10001 lives in Berlin"]
    assert now[0].event.supersedes == f"{paris.job_id}_0_sender"
    history = alice.memory.search_events(
        "where does user 10001 live", target_user_id="10001", include_history=True
    )
    assert sorted(texts(history)) == ["User 10001 lives in Berlin", "User 10001 lives in Paris"]
    for perspective in ("sender", "global"):  # every copy of the old fact follows
        old = alice.memory.get_event(f"{paris.job_id}_0_{perspective}")
        assert old.state == "superseded"
        assert old.superseded_by == f"{berlin.job_id}_0_sender"
        assert old.superseded_at is not None
        assert old.superseded_at.timestamp() == pytest.approx(T0 + 30 * DAY)
    assert texts(alice.memory.search_events("Paris")) == []
    listed = alice.memory.list_events(target_user_id="10001")
    assert [e.text for e in listed] == ["User 10001 lives in Berlin"]
    listed = alice.memory.list_events(target_user_id="10001", include_history=True)
    assert [(e.text, e.state) for e in listed] == [
        ("User 10001 lives in Berlin", "current"),
        ("User 10001 lives in Paris", "superseded"),
    ]


def test_a_redelivered_update_keeps_its_decision(
    hub_with: Callable[..., Harness], historian: Historian, redis_url: str, redis_prefix: str
) -> None:
    queue = Queue(redis_url, redis_prefix)
    producer = hub_with({"KNOWHUB_HISTORIAN_WORKERS": "0"})
    alice = producer.client("alice")
    paris = alice.memory.remember(
        "", ["User 10001 lives in Paris"], context=private_context(timestamp=T0)
    ).job_id
    berlin = alice.memory.remember(
        "", ["User 10001 lives in Berlin"], context=private_context(timestamp=T0 + DAY)
    ).job_id
    queue.client.xadd(queue.jobs, queue.entries()[-1])  # Berlin's job again, redelivered
    producer.stop()
    historian.decisions.append(decide("update", 1))
    alice = hub_with({"KNOWHUB_HISTORIAN_WORKERS": "1"}).client("alice")
    queue.wait_drained()
    job = alice.memory.job(berlin)
    assert [(d.action, d.target_event_id) for d in job.decisions] == [
        ("update", f"{paris}_0_sender")
    ]
    assert alice.memory.get_event(f"{berlin}_0_sender").supersedes == f"{paris}_0_sender"
    assert alice.memory.get_event(f"{paris}_0_sender").superseded_by == f"{berlin}_0_sender"


def test_a_retraction_supersedes_without_storing_and_a_noop_stores_nothing(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    alice = hub_with().client("alice")
    cat = remember(alice, "User 10001 owns a cat named Tom", T0)
    historian.decisions.append(decide("noop", 1, "already known"))
    same = remember(alice, "User 10001 has a cat called Tom", T0 + DAY)
    assert (same.job.decisions[0].action, same.job.event_ids) == ("noop", [])
    historian.decisions.append(decide("delete", 1, "the cat is gone"))
    gone = remember(alice, "User 10001 no longer owns the cat Tom", T0 + 2 * DAY)
    assert (gone.job.decisions[0].action, gone.job.event_ids) == ("delete", [])
    old = alice.memory.get_event(f"{cat.job_id}_0_sender")
    assert (old.state, old.superseded_by) == ("superseded", "")
    assert texts(alice.memory.search_events("cat Tom", target_user_id="10001")) == []


def test_an_unusable_decision_adds_the_event(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    alice = hub_with().client("alice")
    remember(alice, "User 10001 drinks tea", T0)
    historian.decisions.append(decide("update", 7))  # no fact 7
    second = remember(alice, "User 10001 drinks green tea", T0 + DAY)
    assert second.job.decisions[0].action == "add"
    assert "reconcile failed" in second.job.decisions[0].reason
    assert len(alice.memory.search_events("tea", target_user_id="10001")) == 2


def test_profiles_follow_the_decisions(
    hub_with: Callable[..., Harness], historian: Historian, llm: OpenAIStub
) -> None:
    alice = hub_with().client("alice")
    historian.merges.append(ToolCalls([profile_update("user", "10001", "Lives in Paris.")]))
    remember(alice, "User 10001 lives in Paris", T0)
    historian.decisions.append(decide("update", 1))
    historian.merges.append(ToolCalls([profile_update("user", "10001", "Lives in Berlin.")]))
    remember(alice, "User 10001 lives in Berlin", T0 + DAY)
    merge = [r for r in llm.chat_requests if tool_of(r) == PROFILE][-1]
    assert "User 10001 lives in Berlin (this replaces an earlier fact)" in prompt_of(merge)
    assert alice.memory.get_profile("user", "10001").summary == "Lives in Berlin."
    merges = len([r for r in llm.chat_requests if tool_of(r) == PROFILE])
    remember(alice, "User 10001 lives in Berlin", T0 + 2 * DAY)  # a duplicate: no merge
    assert len([r for r in llm.chat_requests if tool_of(r) == PROFILE]) == merges


# ---- Editing and deleting events -------------------------------------------------------------


def test_an_event_is_corrected_in_every_copy(hub_with: Callable[..., Harness]) -> None:
    alice = hub_with(with_llm=False).client("alice")
    job_id = alice.memory.remember(
        "", ["Null likes Pyhton"], context=group_context(), wait=20
    ).job_id
    edited = alice.memory.update_event(f"{job_id}_0_group", "Null (QQ 10001) likes Python")
    assert edited.text == "Null (QQ 10001) likes Python" and edited.is_absolute
    assert edited.edited_at is not None and edited.warning == ""
    for perspective in ("group", "sender", "global"):
        assert alice.memory.get_event(f"{job_id}_0_{perspective}").text == edited.text
    assert texts(alice.memory.search_events("Python", target_group_id="20002")) == [edited.text]
    assert texts(alice.memory.search_events("Pyhton", target_group_id="20002")) == []
    relative = alice.memory.update_event(f"{job_id}_0_sender", "He likes Python")
    assert not relative.is_absolute and "pronoun" in relative.warning


def test_a_delete_hides_the_event_until_undone(hub_with: Callable[..., Harness]) -> None:
    alice = hub_with(with_llm=False).client("alice")
    job_id = remember(alice, "User 10001 collects stamps", T0).job_id
    event_id = f"{job_id}_0_sender"
    deleted = alice.memory.delete_event(event_id)
    assert deleted.state == "deleted" and deleted.deleted_at and deleted.purge_at
    assert (deleted.purge_at - deleted.deleted_at).total_seconds() == pytest.approx(72 * 3600)
    for history in (False, True):
        assert (
            texts(
                alice.memory.search_events(
                    "stamps", target_user_id="10001", include_history=history
                )
            )
            == []
        )
    assert alice.memory.delete_event(event_id).state == "deleted"  # safe to repeat
    with pytest.raises(errors.FailedPrecondition, match="undelete"):
        alice.memory.update_event(event_id, "User 10001 collects coins")
    restored = alice.memory.undelete_event(event_id)
    assert restored.state == "current" and restored.deleted_at is None
    assert texts(alice.memory.search_events("stamps", target_user_id="10001")) == [
        "User 10001 collects stamps"
    ]
    with pytest.raises(errors.FailedPrecondition, match="not deleted"):
        alice.memory.undelete_event(event_id)


def test_deleted_events_are_purged_after_the_retention_window(
    hub_with: Callable[..., Harness],
) -> None:
    alice = hub_with(
        {
            "KNOWHUB_MEMORY_DELETE_RETENTION_HOURS": "0.0003",
            "KNOWHUB_HISTORIAN_FAILED_CLEANUP_INTERVAL": "1",
        },
        with_llm=False,
    ).client("alice")
    job_id = remember(alice, "User 10001 hides a key", T0).job_id
    kept = remember(alice, "User 10001 keeps a diary", T0).job_id
    alice.memory.delete_event(f"{job_id}_0_sender")

    def purged() -> bool:
        try:
            alice.memory.get_event(f"{job_id}_0_global")
        except errors.NotFound:
            return True
        return False

    wait_until(purged, what="the purge")
    with pytest.raises(errors.NotFound):
        alice.memory.undelete_event(f"{job_id}_0_sender")
    assert alice.memory.get_event(f"{kept}_0_sender").state == "current"


def test_only_the_rememberer_or_an_admin_changes_an_event(hub_with: Callable[..., Harness]) -> None:
    hub = hub_with(with_llm=False)
    alice, carol, bob = hub.client("alice"), hub.client("carol"), hub.client("bob")
    event_id = f"{remember(alice, 'User 10001 sings', T0).job_id}_0_sender"
    with pytest.raises(errors.PermissionDenied, match="remembered"):
        carol.memory.delete_event(event_id)  # same org: sees it, may not change it
    assert carol.memory.get_event(event_id).text == "User 10001 sings"
    with pytest.raises(errors.NotFound):
        bob.memory.update_event(event_id, "x")  # another org: as if it did not exist
    with pytest.raises(errors.NotFound):
        alice.memory.get_event(event_id, scope="user:alice")
    assert (
        hub.client("admin").memory.update_event(event_id, "User 10001 sings opera").text
        == "User 10001 sings opera"
    )
    for call, field in (
        (lambda: alice.memory.update_event(event_id, ""), "text"),
        (lambda: alice.memory.update_event(event_id, "x" * 2001), "text"),
        (lambda: alice.memory.delete_event(""), "event_id"),
    ):
        with pytest.raises(errors.InvalidArgument, match=field):
            call()
    with pytest.raises(errors.NotFound):
        alice.memory.delete_event("nope_0_sender")
    assert alice.memory.get_event(event_id).text == "User 10001 sings opera"


# ---- Memos and profiles ----------------------------------------------------------------------


def test_memos_are_corrected_and_removed(hub_with: Callable[..., Harness]) -> None:
    hub = hub_with(with_llm=False)
    alice = hub.client("alice")
    first = alice.memory.remember("explaind asyncio", context=group_context()).job_id
    second = alice.memory.remember("answered a Rust question", context=group_context()).job_id
    memo = alice.memory.update_memo(first, "explained asyncio", group_id="20002")
    assert memo.text == "explained asyncio" and memo.edited_at is not None
    assert [m.text for m in alice.memory.recent_memos(group_id="20002")] == [
        "explained asyncio",
        "answered a Rust question",
    ]
    with pytest.raises(errors.PermissionDenied):
        hub.client("carol").memory.delete_memo(second, group_id="20002")
    assert alice.memory.delete_memo(second, group_id="20002") == second
    assert [m.job_id for m in alice.memory.recent_memos(group_id="20002")] == [first]
    with pytest.raises(errors.NotFound):
        alice.memory.delete_memo(second, group_id="20002")
    with pytest.raises(errors.InvalidArgument, match="text"):
        alice.memory.update_memo(first, "", group_id="20002")
    with pytest.raises(errors.InvalidArgument, match="group_id"):
        alice.memory.update_memo(first, "x", request_type="group")


def test_profiles_are_edited_with_a_mask_and_deleted(
    hub_with: Callable[..., Harness], historian: Historian
) -> None:
    alice = hub_with().client("alice")
    historian.merges.append(
        ToolCalls([profile_update("user", "10001", "Writes Go.", name="Null", tags=["Go"])])
    )
    remember(alice, "User 10001 writes Go", T0)
    edited = alice.memory.update_profile("user", "10001", summary="Writes Go and Rust.")
    assert (edited.revision, edited.name, edited.tags, edited.summary) == (
        2,
        "Null",
        ["Go"],
        "Writes Go and Rust.",
    )
    assert edited.reason == "edit by user:alice"
    assert alice.memory.profile_revisions("user", "10001")[0].profile.summary == "Writes Go."
    retagged = alice.memory.update_profile("user", "10001", tags=["Go", "Rust"], name="N")
    assert (retagged.revision, retagged.tags, retagged.name) == (3, ["Go", "Rust"], "N")
    assert [h.profile.entity_id for h in alice.memory.search_profiles("Rust")] == ["10001"]
    assert alice.memory.search_profiles("violin") == []  # no match, no zero-score padding
    with pytest.raises(errors.InvalidArgument, match="update_mask"):
        alice.memory.update_profile("user", "10001")
    with pytest.raises(errors.InvalidArgument, match="summary"):
        alice.memory.update_profile("user", "10001", summary=" ")
    assert alice.memory.delete_profile("user", "10001") == retagged
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "10001")
    with pytest.raises(errors.NotFound):
        alice.memory.delete_profile("user", "10001")


# ---- Memory documents ------------------------------------------------------------------------


def test_an_agent_reads_appends_and_rewrites_its_own_documents(
    hub_with: Callable[..., Harness],
) -> None:
    hub = hub_with(with_llm=False)
    alice = hub.client("alice")  # agent alice_bot
    created = alice.dream.write_document("notes/people.md", "# People", expected_revision=0)
    assert (created.revision, created.content, created.written_by, created.run_id) == (
        1,
        "# People",
        "user:alice",
        "",
    )
    appended = alice.dream.write_document("notes/people.md", "- Null likes Go", append=True)
    assert (appended.revision, appended.content) == (2, "# People\n- Null likes Go")
    with pytest.raises(errors.FailedPrecondition, match="revision 2"):
        alice.dream.write_document("notes/people.md", "# Stale", expected_revision=1)
    rewritten = alice.dream.write_document(
        "notes/people.md", "# People\n- Null: Go, Rust", expected_revision=2
    )
    document = alice.dream.document("notes/people.md")
    assert (document.revision, document.content) == (3, rewritten.content)
    assert [r.revision for r in document.revisions] == [2, 1]
    assert alice.dream.document("notes/people.md", revision=1).content == "# People"
    with pytest.raises(errors.PermissionDenied):
        alice.dream.write_document("x.md", "mine now", agent_id="bob_bot")
    with pytest.raises(errors.PermissionDenied):
        hub.client("carol").dream.delete_document("notes/people.md", agent_id="alice_bot")
    for path in ("../up.md", "/abs.md", ".hidden"):
        with pytest.raises(errors.InvalidArgument, match="path"):
            alice.dream.write_document(path, "x")
    with pytest.raises(errors.InvalidArgument, match="content"):
        alice.dream.write_document("big.md", "x" * 50_001)
    alice.dream.write_document("big.md", "y" * 49_999)
    with pytest.raises(errors.InvalidArgument, match="50000"):
        alice.dream.write_document("big.md", "zz", append=True)
    assert alice.dream.delete_document("notes/people.md") == "notes/people.md"
    with pytest.raises(errors.NotFound):
        alice.dream.document("notes/people.md")
    assert [d.path for d in alice.dream.documents()] == ["big.md"]
    assert re.fullmatch(r"y{49999}", alice.dream.document("big.md").content)


def test_the_rerank_multiplier_is_at_least_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWHUB_MEMORY_RERANK_CANDIDATE_MULTIPLIER", "1")
    with pytest.raises(ValidationError, match="memory_rerank_candidate_multiplier"):
        MemorySettings()
    monkeypatch.setenv("KNOWHUB_MEMORY_RERANK_CANDIDATE_MULTIPLIER", "2")
    assert MemorySettings().memory_rerank_candidate_multiplier == 2
