"""ListDreamRuns: the runs a caller may read (its own; every run for admins), newest
first, filtered by agent and status, a page at a time; its validation; scheduled runs
listed too; runs stored before the run indexes existed; the SDK, sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import grpc
import pytest
from knowhub import AsyncKnowHub, DreamRunPage, KnowHub
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub_server.common.storage.redis_store import connect
from knowhub_server.dream.runs.domain import new_run
from knowhub_server.dream.runs.store import DreamStore
from tests.dream.dreaming import DreamLLM, message, new_agent, new_trace, wait_run
from tests.dream.support import wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import Failure
from tests.support.shared import bearer, every_item, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


@pytest.fixture
def admin(dream_server: Harness) -> KnowHub:
    return dream_server.client("admin")


def listed(client: KnowHub, **filters: object) -> list[str]:
    """Every run id the caller lists with these filters, following the pages."""
    runs = every_item(lambda token: client.dream.list_runs(limit=100, page_token=token, **filters))
    return [run.run_id for run in runs]


def raw_list(harness: Harness, principal: str, **fields: object) -> object:
    with grpc.insecure_channel(harness.address) as channel:
        stub = dream_pb2_grpc.DreamServiceStub(channel)
        return stub.ListDreamRuns(
            dream_pb2.ListDreamRunsRequest(**fields), metadata=bearer(principal)
        )


# ---- Listing, paging, filters ---------------------------------------------------------------


def test_runs_are_listed_newest_first_a_page_at_a_time(admin: KnowHub, dream_llm: DreamLLM) -> None:
    agent = new_agent()
    made = [admin.dream.run(agent_id=agent).run_id for _ in range(5)]
    for run_id in made:
        wait_run(admin, run_id)

    pages: list[DreamRunPage] = [admin.dream.list_runs(agent_id=agent, limit=2)]
    while pages[-1].next_page_token:
        pages.append(
            admin.dream.list_runs(agent_id=agent, limit=2, page_token=pages[-1].next_page_token)
        )

    assert [len(p) for p in pages] == [2, 2, 1]
    assert [run.run_id for page in pages for run in page] == made[::-1]
    first = pages[0][0]
    assert first == admin.dream.get_run(first.run_id)
    assert (first.agent_id, first.status, first.requested_by) == (agent, "done", "user:root")
    assert first.created_at is not None and first.finished_at is not None
    created = [run.created_at for page in pages for run in page]
    assert created == sorted(created, reverse=True)


def test_runs_filter_by_status_and_agent(admin: KnowHub, dream_llm: DreamLLM) -> None:
    agent, other = new_agent(), new_agent()
    admin.cognition.append_events(new_trace(), [message(1, "likes jazz")], agent_id=agent)
    dream_llm.integrate = lambda prompt: Failure(500)
    failed = wait_run(admin, admin.dream.run(agent_id=agent).run_id)
    dream_llm.integrate = DreamLLM().integrate
    done = wait_run(admin, admin.dream.run(agent_id=agent).run_id)
    others = wait_run(admin, admin.dream.run(agent_id=other).run_id)
    gate = threading.Event()
    dream_llm.gate = gate
    try:
        admin.cognition.append_events(new_trace(), [message(1, "likes blues")], agent_id=agent)
        running = admin.dream.run(agent_id=agent).run_id
        wait_until(
            lambda: admin.dream.get_run(running).status == "running", what="the run to start"
        )

        assert (failed.status, done.status, others.status) == ("failed", "done", "done")
        assert listed(admin, agent_id=agent) == [running, done.run_id, failed.run_id]
        assert listed(admin, agent_id=agent, status="failed") == [failed.run_id]
        assert listed(admin, agent_id=agent, status="running") == [running]
        assert listed(admin, agent_id=agent, status="queued") == []
        assert listed(admin, agent_id=other) == [others.run_id]
        everyone_done = listed(admin, status="done")
        assert done.run_id in everyone_done and others.run_id in everyone_done
        assert failed.run_id not in everyone_done and running not in everyone_done
    finally:
        gate.set()
        dream_llm.gate = None
    assert wait_run(admin, running).status == "done"
    assert listed(admin, agent_id=agent, status="running") == []


def test_a_caller_lists_the_runs_it_could_read(
    dream_server: Harness, admin: KnowHub, dream_llm: DreamLLM
) -> None:
    alice, dave, bob = (dream_server.client(p) for p in ("alice", "dave", "bob"))
    alices = wait_run(alice, alice.dream.run().run_id).run_id
    daves = wait_run(dave, dave.dream.run().run_id).run_id
    by_admin = wait_run(admin, admin.dream.run(agent_id="alice_bot").run_id).run_id

    assert alices in listed(alice) and alices in listed(alice, agent_id="alice_bot")
    for caller in (alice, dave):
        for run in caller.dream.list_runs(limit=100):
            assert run == caller.dream.get_run(run.run_id)
    assert {alices, daves, by_admin} & set(listed(alice)) == {alices}
    assert {alices, daves, by_admin} & set(listed(dave)) == {daves}
    assert {alices, daves, by_admin} <= set(listed(admin, agent_id="alice_bot"))
    assert listed(bob, agent_id="alice_bot") == []
    assert failure(lambda: bob.dream.get_run(alices))[0] == "NOT_FOUND"


def test_scheduled_runs_are_listed_with_their_schedule(admin: KnowHub, dream_llm: DreamLLM) -> None:
    agent = new_agent()
    made = admin.dream.schedule(60, agent_id=agent, start_time=time.time() - 1)
    try:
        wait_until(lambda: admin.dream.list_runs(agent_id=agent), what="the slot to fire")
        [run] = admin.dream.list_runs(agent_id=agent)
        assert run.schedule_id == made.schedule_id
        assert run.run_id == admin.dream.schedules(agent_id=agent)[0].last_run_id
    finally:
        admin.dream.delete_schedule(made.schedule_id)


# ---- Validation ------------------------------------------------------------------------------


def test_bad_requests_are_refused_naming_the_field(
    dream_server: Harness, admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    for _ in range(2):
        admin.dream.run(agent_id=agent)
    token = admin.dream.list_runs(agent_id=agent, limit=1).next_page_token
    assert token
    cases = [
        (lambda: admin.dream.list_runs(limit=-1), "page_size"),
        (lambda: admin.dream.list_runs(limit=101), "page_size"),
        (lambda: admin.dream.list_runs(agent_id="no spaces"), "agent_id"),
        (lambda: admin.dream.list_runs(page_token="not-a-token"), "page_token"),
        (lambda: admin.dream.list_runs(page_token=token), "page_token"),  # other filters
        (
            lambda: admin.dream.list_runs(agent_id=agent, status="done", page_token=token),
            "page_token",
        ),
        (lambda: raw_list(dream_server, "admin", status=99), "status"),
    ]
    for call, field in cases:
        code, text = failure(call)
        assert (code, text.split(":")[0]) == ("INVALID_ARGUMENT", field), text
    code, text = failure(lambda: dream_server.client("alice").dream.list_runs(page_token=token))
    assert (code, text.split(":")[0]) == ("INVALID_ARGUMENT", "page_token")
    with pytest.raises(ValueError, match="unknown run status 'finished'"):
        admin.dream.list_runs(status="finished")
    assert failure(lambda: raw_list(dream_server, None))[0] == "UNAUTHENTICATED"


def test_the_async_client_lists_runs(
    dream_server: Harness, admin: KnowHub, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    made = wait_run(admin, admin.dream.run(agent_id=agent).run_id)

    async def scenario() -> DreamRunPage:
        async with AsyncKnowHub(dream_server.address, token="token-admin") as kh:
            return await kh.dream.list_runs(agent_id=agent, status="done")

    page = asyncio.run(scenario())
    assert list(page) == [made] and page.next_page_token == ""


# ---- The run indexes in Redis ----------------------------------------------------------------


@pytest.fixture
def store(redis_url: str) -> DreamStore:
    return DreamStore(lambda: connect(redis_url), f"test-{uuid.uuid4().hex[:12]}:")


def store_run(store: DreamStore, agent: str, requester: str, at: float) -> str:
    run = new_run(agent, [], ["per_trace_reflect"], requester, False, at)
    store.create_run(run)
    return run.run_id


def test_runs_stored_before_the_indexes_existed_are_indexed_once(
    store: DreamStore, redis_url: str
) -> None:
    runs = [store_run(store, "bot-a", f"user:u{i % 3}", 1_000.0 + i) for i in range(250)]
    prefix = store.stream[: -len("runs")]
    client = connect(redis_url)
    old = [k for k in client.scan_iter(f"{prefix}runs-by*")]
    assert len(old) == 4
    client.delete(*old)  # as a store before ListDreamRuns left them

    fresh = DreamStore(lambda: connect(redis_url), prefix[1 : -len("dream}:")])
    assert [r.run_id for r in fresh.runs_newest_first("", None)] == runs[::-1]
    assert [r.run_id for r in fresh.runs_newest_first("user:u1", None)] == runs[1::3][::-1]
    assert client.exists(f"{prefix}runs-indexed")
    newer = store_run(fresh, "bot-a", "user:u1", 2_000.0)
    assert next(fresh.runs_newest_first("user:u1", None)).run_id == newer


def test_listing_drops_the_index_entries_of_expired_runs_and_keeps_order_on_ties(
    store: DreamStore, redis_url: str
) -> None:
    tied = sorted(store_run(store, "bot-a", "user:u", 1_500.0) for _ in range(230))
    older = store_run(store, "bot-a", "user:u", 1_000.0)
    expired = tied[7]
    prefix = store.stream[: -len("runs")]
    client = connect(redis_url)
    client.delete(f"{prefix}run:{expired}")

    found = [r.run_id for r in store.runs_newest_first("user:u", None)]
    assert found == [*[t for t in tied[::-1] if t != expired], older]
    assert client.zscore(f"{prefix}runs-by:user:u", expired) is None
    after = (1_500.0, tied[100])
    assert [r.run_id for r in store.runs_newest_first("user:u", after)] == [
        *[t for t in tied[:100][::-1] if t != expired],
        older,
    ]
