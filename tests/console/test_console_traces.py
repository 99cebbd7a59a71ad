"""The console's trace pages in headless Chromium: a trace is deleted from its page, an
evaluator's give-up shows on the trace and review pages and is retried from there, a long
trace is viewed a window at a time and exported whole, and an admin opens another user's
trace of the same id as the owner's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub

from tests.console.console import Console
from tests.console.seed import Seeded
from tests.dream.support import Queue
from tests.support.harness import Harness
from tests.support.shared import failure


@pytest.fixture
def console(browser: object, gateway: str, seeded: Seeded, artifacts: Path) -> Iterator[Console]:
    yield Console(browser, gateway, artifacts)  # type: ignore[arg-type]


@pytest.fixture
def hub_harness(hub: tuple[Harness, Queue]) -> Harness:
    return hub[0]


def new_trace() -> str:
    return f"trace-console-{uuid.uuid4().hex[:8]}"


def messages(start: int, count: int) -> list[dict[str, object]]:
    return [{"type": "message", "sequence": n, "role": "user", "content": f"message {n}"}
            for n in range(start, start + count)]


def test_a_trace_is_deleted_from_its_page(console: Console, hub_harness: Harness) -> None:
    alice: KnowHub = hub_harness.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, messages(1, 3), task="to be deleted")
    console.open(f"/trace/{trace_id}?owner=user:alice", "token-alice")
    console.wait("h1 .trace-id", trace_id)
    console.click("button.delete-trace")
    console.screenshot("trace-delete-confirm")
    console.click("button.confirm-delete", "Delete for good")
    console.wait("#trace-list table")
    assert not console.find_all(f'.trace-row[data-trace-id="{trace_id}"]')
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"
    assert console.errors() == []


def test_a_given_up_evaluation_shows_and_is_retried(console: Console,
                                                   hub_harness: Harness) -> None:
    alice: KnowHub = hub_harness.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [{"type": "query", "sequence": 3,
                                              "query": "how to deploy",
                                              "source_ids": ["knowledge-x1", "knowledge-x2"]}])
    alice.cognition.submit_evaluation(trace_id, raw_text="All of them were fine.")
    assert alice.cognition.signal_trigger(trace_id, "goal_completion").published
    hub_harness.client("dream").cognition.abandon_evaluation(
        trace_id, "the answer held no JSON three times", deliveries=3, owner="user:alice")

    console.open("/review", "token-alice")
    row = console.wait(f'tr.given-up-trace[data-trace-id="{trace_id}"]', "1 queries")
    console.screenshot("review-given-up")
    row.find_element("css selector", "a").click()
    panel = console.wait('.evaluation-state[data-abandoned="1"]', "evaluator gave up")
    console.wait("tr.evaluation-failure.gave-up", "the answer held no JSON three times")
    console.wait("tr.evaluation-failure", "All of them were fine.")
    console.screenshot("trace-given-up")
    console.click("button.retry-evaluation", within=panel)
    console.wait(".retry-result", "published again")
    assert alice.cognition.get_log(trace_id).trace.abandoned_evaluations == 0
    assert alice.cognition.pending_evaluations(trace_id).last_trigger == "goal_completion"
    console.open("/trace", "token-alice")
    console.wait(f'.trace-row[data-trace-id="{trace_id}"]')
    assert console.errors() == []


def test_a_long_trace_is_viewed_a_window_at_a_time_and_exported_whole(
        console: Console, hub_harness: Harness) -> None:
    alice: KnowHub = hub_harness.client("alice")
    trace_id = new_trace()
    for start in range(1, 2_501, 500):
        alice.cognition.append_events(trace_id, messages(start, 500))
    console.open(f"/trace/{trace_id}", "token-alice")
    console.wait(".window-bar", "events 1–1000 of 2500")
    console.wait('.timeline .step[data-sequence="1000"]')
    assert not console.find_all('.timeline .step[data-sequence="1001"]')
    console.click(".window-bar a", "next window")
    console.wait(".window-bar", "events 1001–2000 of 2500")
    console.wait('.timeline .step[data-sequence="1001"]')
    console.click(".window-bar a", "next window")
    bar = console.wait(".window-bar", "events 2001–2500 of 2500")
    assert "next window" not in bar.text
    console.click('.tabs a[data-tab="events"]')  # the tab keeps the window
    console.wait(".window-bar", "events 2001–2500 of 2500")
    console.click("button", "Export log (JSON)")
    console.wait("a[download]", f"download {trace_id}.json (2500 events)")
    console.click(".window-bar a", "first window")
    console.wait(".window-bar", "events 1–1000 of 2500")
    assert console.errors() == []


def test_an_admin_opens_the_owners_trace_of_a_shared_name(console: Console,
                                                          hub_harness: Harness) -> None:
    alice, bob = hub_harness.client("alice"), hub_harness.client("bob")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, messages(1, 1), task="alice's task")
    bob.cognition.append_events(trace_id, messages(1, 1), task="bob's task")
    console.open("/trace", "token-admin")
    console.click(f'.trace-row[data-trace-id="{trace_id}"][data-owner="user:bob"] a')
    console.wait("h1 .trace-id", trace_id)
    console.wait('.job-field[data-field="goal"]', "bob's task")
    console.click('.tabs a[data-tab="events"]')
    console.wait(".raw-events", "message")
    assert console.errors() == []
