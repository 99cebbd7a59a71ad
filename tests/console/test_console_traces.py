"""The console's trace pages in headless Chromium: a trace is deleted from its page, an
evaluator's give-up shows on the trace and review pages and is retried from there, a long
trace is viewed a window at a time and exported whole, an admin opens another user's
trace of the same id as the owner's, graphs zoom and pan with their edge labels off the
lines, the trace list filters as you type, and the events tab lays each event out in
columns."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub
from selenium.webdriver.common.action_chains import ActionChains

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
    return [
        {"type": "message", "sequence": n, "role": "user", "content": f"message {n}"}
        for n in range(start, start + count)
    ]


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


def test_a_given_up_evaluation_shows_and_is_retried(console: Console, hub_harness: Harness) -> None:
    alice: KnowHub = hub_harness.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(
        trace_id,
        [
            {
                "type": "query",
                "sequence": 3,
                "query": "how to deploy",
                "source_ids": ["knowledge-x1", "knowledge-x2"],
            }
        ],
    )
    alice.cognition.submit_evaluation(trace_id, raw_text="All of them were fine.")
    assert alice.cognition.signal_trigger(trace_id, "goal_completion").published
    hub_harness.client("dream").cognition.abandon_evaluation(
        trace_id, "the answer held no JSON three times", deliveries=3, owner="user:alice"
    )

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
    console: Console, hub_harness: Harness
) -> None:
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


def test_an_admin_opens_the_owners_trace_of_a_shared_name(
    console: Console, hub_harness: Harness
) -> None:
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


def view_box(console: Console, css: str) -> list[float]:
    found = console.driver.execute_script(
        "return arguments[0].getAttribute('viewBox')", console.wait(css)
    )
    return [float(n) for n in found.split()]


def test_graphs_zoom_and_pan_and_labels_sit_beside_their_lines(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}/tree", "token-alice")
    svg = "svg.graph-decision-tree"
    whole = view_box(console, svg)
    console.click(".graph-box button.zoom-in")
    zoomed = view_box(console, svg)
    assert zoomed[2] < whole[2] and zoomed[3] < whole[3]  # a smaller part, drawn larger
    box = console.wait(svg)
    corner = (5 - box.size["width"] // 2, 5 - box.size["height"] // 2)  # offsets from the centre
    ActionChains(console.driver).move_to_element_with_offset(
        box, *corner
    ).click_and_hold().move_by_offset(
        60, 40
    ).release().perform()  # drag from a corner (no node there)
    panned = view_box(console, svg)
    assert panned[2:] == zoomed[2:] and panned[:2] != zoomed[:2]
    console.click(".graph-box button.zoom-fit")
    assert view_box(console, svg) == whole
    # An edge's label is beside its line, not on it: right of the line's middle point.
    edge = console.wait(f'{svg} .graph-edge[data-to="analyze"][data-from="search_logs"]')
    overlap = console.driver.execute_script(
        """
        const edge = arguments[0], label = edge.querySelector('text').getBBox();
        const path = edge.querySelector('path'), length = path.getTotalLength();
        for (let at = 0; at <= length; at += 1) {
          const p = path.getPointAtLength(at);
          if (p.x >= label.x && p.x <= label.x + label.width
              && p.y >= label.y && p.y <= label.y + label.height) return true;
        }
        return false;""",
        edge,
    )
    assert overlap is False
    assert console.errors() == []


def test_the_trace_list_filters_as_you_type(console: Console, seeded: Seeded) -> None:
    console.open("/trace", "token-alice")
    console.wait(f'.trace-row[data-trace-id="{seeded.runtime_trace_id}"]')
    total = len(console.find_all(".trace-row"))
    console.wait("#trace-filter").send_keys("runtime")
    console.wait("#trace-count", f"1 of {total} traces")
    shown = [row for row in console.find_all(".trace-row") if row.is_displayed()]
    assert [row.get_attribute("data-trace-id") for row in shown] == [seeded.runtime_trace_id]
    console.screenshot("trace-list-filtered")
    console.wait("#trace-filter").clear()
    console.wait("#trace-filter").send_keys("x")  # clear() fires no input event: type
    console.wait("#trace-filter").send_keys("\b")
    console.wait("#trace-count", f"{total} of {total} traces")
    assert console.errors() == []


def test_the_events_tab_shows_each_event_in_columns(console: Console, seeded: Seeded) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}/events", "token-alice")
    row = console.wait(".raw-event summary", "plan_generated")
    parts = [
        row.find_element("css selector", css).text
        for css in (".event-id", ".kind", ".event-text", ".event-time")
    ]
    assert parts[1] == "plan_generated" and parts[0] and parts[2] and parts[3]
    tops = [
        row.find_element("css selector", css).location["y"]
        for css in (".event-id", ".kind", ".event-text")
    ]
    assert max(tops) - min(tops) < 6, tops  # side by side on one line, not stacked
    lefts = [
        row.find_element("css selector", css).location["x"]
        for css in (".event-id", ".kind", ".event-text")
    ]
    assert lefts == sorted(lefts) and lefts[1] - lefts[0] >= 150  # columns, with room
    assert console.errors() == []
