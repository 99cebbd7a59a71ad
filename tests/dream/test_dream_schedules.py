"""ScheduleDream, ListSchedules, DeleteSchedule, and the scheduler: each due slot fires
once however many dream processes tick, and a scheduled run keeps its creator's
visibility."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub

from knowhub_server.common.storage.redis_store import connect, keyspace
from knowhub_server.dream.runs.domain import DreamRun
from knowhub_server.dream.runs.scheduler import Scheduler
from tests.conftest import StartHub
from tests.dream.dreaming import (
    FAST,
    DreamLLM,
    message,
    new_trace,
    wait_run,
    write_dream_tokens,
)
from tests.dream.support import wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def schedule_ids(client: KnowHub, **options: Any) -> list[str]:
    return [s.schedule_id for s in client.dream.schedules(limit=100, **options)]


# ---- The RPCs ----------------------------------------------------------------------------------


def test_each_schedule_rule_is_enforced_and_a_refused_schedule_adds_nothing(
    dream_server: Harness,
) -> None:
    alice, bob = dream_server.client("alice"), dream_server.client("bob")
    before = schedule_ids(alice)
    for call, field, problem in [
        (
            lambda: alice.dream.schedule(),
            "every_minutes",
            "give exactly one of every_minutes and cron",
        ),
        (lambda: alice.dream.schedule(5, "* * * * *"), "every_minutes", "give exactly one"),
        (lambda: alice.dream.schedule(-1), "every_minutes", "must be between 1 and 527040"),
        (lambda: alice.dream.schedule(527_041), "every_minutes", "must be between"),
        (lambda: alice.dream.schedule(cron="* 25 * * *"), "cron", "bad hour"),
        (lambda: alice.dream.schedule(cron="* * *"), "cron", "has 3 fields"),
        (lambda: alice.dream.schedule(cron="x" * 201), "cron", "is 201 characters"),
        (
            lambda: alice.dream.schedule(cron="0 3 * * *", time_zone="Mars/Olympus"),
            "time_zone",
            "'Mars/Olympus' is not an IANA time zone",
        ),
        (
            lambda: alice.dream.schedule(30, time_zone="UTC"),
            "time_zone",
            "applies to cron expressions only",
        ),
        (
            lambda: alice.dream.schedule(30, start_time=time.time() + 400 * 86_400),
            "start_time",
            "is more than a year ahead",
        ),
        (
            lambda: alice.dream.schedule(30, phases=["cross_trace_integrate"] * 2),
            "phases[1]",
            "repeats",
        ),
    ]:
        code, text = failure(call)
        assert code == "INVALID_ARGUMENT" and text.startswith(f"{field}: ") and problem in text, (
            text
        )
    assert failure(lambda: bob.dream.schedule(30, agent_id="alice_bot"))[0] == "PERMISSION_DENIED"
    assert schedule_ids(alice) == before


def test_schedules_are_their_creators_and_the_admins(dream_server: Harness) -> None:
    alice, dave, admin = (dream_server.client(p) for p in ("alice", "dave", "admin"))
    mine = alice.dream.schedule(
        cron="0 3 * * 1-5", time_zone="Asia/Shanghai", phases=["per_trace_reflect"]
    )
    assert (mine.agent_id, mine.requested_by, mine.time_zone) == (
        "alice_bot",
        "user:alice",
        "Asia/Shanghai",
    )
    assert mine.phases == ["per_trace_reflect"] and mine.last_run_id == ""
    assert mine.next_run_at is not None and mine.next_run_at.minute == 0
    daves = dave.dream.schedule(90)
    assert daves.next_run_at is not None and daves.start_time == daves.next_run_at

    assert mine.schedule_id in schedule_ids(alice)
    assert daves.schedule_id not in schedule_ids(alice)
    assert {mine.schedule_id, daves.schedule_id} <= set(schedule_ids(admin))
    assert schedule_ids(admin, agent_id="bot-none") == []
    assert failure(lambda: dave.dream.delete_schedule(mine.schedule_id)) == (
        "NOT_FOUND",
        f"dream schedule {mine.schedule_id!r} not found",
    )
    assert alice.dream.delete_schedule(mine.schedule_id) == mine.schedule_id
    assert mine.schedule_id not in schedule_ids(admin)
    assert failure(lambda: alice.dream.delete_schedule(mine.schedule_id))[0] == "NOT_FOUND"
    assert admin.dream.delete_schedule(daves.schedule_id) == daves.schedule_id
    assert failure(lambda: alice.dream.delete_schedule(""))[0] == "INVALID_ARGUMENT"


def test_an_equal_schedule_is_returned_rather_than_added(dream_server: Harness) -> None:
    alice, dave = dream_server.client("alice"), dream_server.client("dave")
    first = alice.dream.schedule(cron="30 2 * * *", time_zone="Europe/Paris")
    again = alice.dream.schedule(cron="30 2 * * *", time_zone="Europe/Paris")
    told = alice.dream.schedule_unless_exists(cron="30 2 * * *", time_zone="Europe/Paris")
    assert again.schedule_id == first.schedule_id == told.schedule.schedule_id
    assert told.existing is True
    others = [
        alice.dream.schedule(cron="30 2 * * *"),  # another time zone
        alice.dream.schedule(
            cron="30 2 * * *", time_zone="Europe/Paris", phases=["per_trace_reflect"]
        ),
        dave.dream.schedule(cron="30 2 * * *", time_zone="Europe/Paris"),  # another
        alice.dream.schedule(cron="30 2 * * *", time_zone="Europe/Paris", allow_duplicate=True),
    ]
    ids = {first.schedule_id, *(s.schedule_id for s in others)}
    assert len(ids) == 5
    for schedule_id in ids:
        dream_server.client("admin").dream.delete_schedule(schedule_id)


def test_schedules_page_and_are_limited_per_agent(dream_server: Harness) -> None:
    admin = dream_server.client("admin")
    made = [
        admin.dream.schedule(60, agent_id="bot-many", allow_duplicate=True).schedule_id
        for _ in range(20)
    ]
    code, text = failure(
        lambda: admin.dream.schedule(60, agent_id="bot-many", allow_duplicate=True)
    )
    assert code == "RESOURCE_EXHAUSTED" and "the limit is 20" in text

    listed, token = [], ""
    while True:
        page = admin.dream.schedules(agent_id="bot-many", limit=7, page_token=token)
        listed += [s.schedule_id for s in page]
        token = page.next_page_token
        if not token:
            break
    assert listed == made
    first = admin.dream.schedules(agent_id="bot-many", limit=7)
    assert (
        failure(lambda: admin.dream.schedules(page_token=first.next_page_token))[1]
        == "page_token: belongs to a list with other filters"
    )
    for schedule_id in made:
        admin.dream.delete_schedule(schedule_id)


# ---- Firing once --------------------------------------------------------------------------------


@pytest.fixture
def two(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str
) -> tuple[KnowHub, list[Scheduler]]:
    """Alice's client and the schedulers of two dream processes' worth of services on one
    Redis (their own tickers off, so only the test's ticks fire)."""
    write_dream_tokens(tokens_file.parent)
    hubs = [
        start_hub(
            env={**FAST, "KNOWHUB_DREAM_SCHEDULER_ENABLED": "false", "KNOWHUB_DREAM_WORKERS": "0"},
            redis_url=redis_url,
            redis_prefix=redis_prefix,
        )
        for _ in range(2)
    ]
    schedulers = []
    for hub in hubs:
        assert hub.server is not None
        schedulers += [b for b in hub.server.runtime.background if isinstance(b, Scheduler)]
    return hubs[0].client("alice"), schedulers


def tick_together(schedulers: list[Scheduler], at: float, threads: int = 2) -> list[DreamRun]:
    """Every scheduler ticks at `at` from several threads at once."""
    barrier = threading.Barrier(len(schedulers) * threads)
    created: list[DreamRun] = []

    def tick(scheduler: Scheduler) -> None:
        barrier.wait(10)
        created.extend(scheduler.tick(at))

    workers = [threading.Thread(target=tick, args=(s,)) for s in schedulers for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    return created


def test_each_slot_fires_once_among_schedulers(
    two: tuple[KnowHub, list[Scheduler]], redis_url: str, redis_prefix: str
) -> None:
    alice, schedulers = two
    start = time.time()
    made = alice.dream.schedule(10, start_time=start)

    fired = []
    for k in range(4):
        created = tick_together(schedulers, start + k * 600 + 5)
        assert len(created) == 1, f"slot {k} fired {len(created)} times"
        assert tick_together(schedulers, start + k * 600 + 300) == []  # between slots
        fired += created
    runs = [alice.dream.get_run(r.run_id) for r in fired]
    assert {(r.schedule_id, r.agent_id, r.requested_by, r.status) for r in runs} == {
        (made.schedule_id, "alice_bot", "user:alice", "queued")
    }
    [listed] = alice.dream.schedules()
    assert listed.last_run_id == fired[-1].run_id
    assert listed.last_fired_at is not None
    assert listed.last_fired_at.timestamp() == pytest.approx(start + 3 * 600, abs=1e-3)
    assert connect(redis_url).xlen(f"{keyspace(redis_prefix, 'dream')}runs") == 4
    assert tick_together(schedulers, start + 5) == []  # a slot already passed stays fired


def test_a_cron_schedule_fires_its_latest_slot_once(two: tuple[KnowHub, list[Scheduler]]) -> None:
    alice, schedulers = two
    alice.dream.schedule(cron="*/5 * * * *")
    soon = (time.time() // 300 + 2) * 300  # a five-minute boundary ahead

    assert tick_together(schedulers, soon - 1) != []  # the boundary before it
    assert tick_together(schedulers, soon - 1) == []
    assert len(tick_together(schedulers, soon + 7)) == 1
    assert tick_together(schedulers, soon + 299) == []
    # Long down: only the latest missed slot fires, once.
    assert len(tick_together(schedulers, soon + 3_000)) == 1
    assert alice.dream.schedules()[0].last_fired_at.timestamp() == soon + 3_000


def test_a_deleted_schedule_fires_no_more(two: tuple[KnowHub, list[Scheduler]]) -> None:
    alice, schedulers = two
    start = time.time()
    made = alice.dream.schedule(10, start_time=start)
    assert len(tick_together(schedulers, start + 1)) == 1
    alice.dream.delete_schedule(made.schedule_id)
    assert tick_together(schedulers, start + 601) == []


def test_two_dream_processes_run_a_due_schedule_once_with_its_creators_visibility(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    llm.responder = scripted
    write_dream_tokens(tokens_file.parent)
    hubs = [
        start_hub(
            env=FAST,
            redis_url=redis_url,
            redis_prefix=redis_prefix,
            llm_base_url=llm.base_url,
            llm_max_retries=0,
        )
        for _ in range(2)
    ]
    alice, dave = hubs[0].client("alice"), hubs[1].client("dave")
    alices, daves = new_trace(), new_trace()
    alice.cognition.append_events(alices, [message(1, "alice likes sailing")])
    dave.cognition.append_events(daves, [message(1, "dave likes chess")])

    made = alice.dream.schedule(60, start_time=time.time() - 1)
    wait_until(lambda: alice.dream.schedules()[0].last_run_id, what="the slot to fire")
    run = wait_run(alice, alice.dream.schedules()[0].last_run_id)
    time.sleep(0.5)  # ten more ticks of each scheduler

    assert (run.status, run.schedule_id, run.requested_by) == (
        "done",
        made.schedule_id,
        "user:alice",
    )
    runs = [k for k in connect(redis_url).scan_iter(f"{keyspace(redis_prefix, 'dream')}run:*")]
    assert len(runs) == 1, "the slot fired once"
    assert len(scripted.prompts["reflect"]) == 1
    assert "alice likes sailing" in scripted.prompts["reflect"][0]
    assert dave.cognition.get_log(daves).trace.reflected_at_sequence == 0
