"""The web console in headless Chromium against a real hub behind the gateway: every page
loads without console errors and shows the seeded data, the review flow commits
knowledge, and secure bodies stay hidden until revealed (and the server allows it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub
from selenium.webdriver.support.ui import Select

from tests.console.console import Console
from tests.console.seed import EVOLVED, ORIGINAL, SECRET, Seeded
from tests.dream.dreaming import wait_run
from tests.dream.support import Queue, wait_until
from tests.support.harness import Harness
from tests.support.runtime_trace import GOAL, JOB, TICKET, V3_DIFF


@pytest.fixture
def console(browser: object, gateway: str, seeded: Seeded, artifacts: Path) -> Iterator[Console]:
    yield Console(browser, gateway, artifacts)  # type: ignore[arg-type]


@pytest.fixture
def alice(hub: tuple[Harness, Queue]) -> KnowHub:
    return hub[0].client("alice")


def test_the_review_queue_approves_edits_discards_and_commits(
    console: Console, seeded: Seeded, alice: KnowHub
) -> None:
    console.open("/review", "token-alice")
    friday, branches, flaky = seeded.extraction_ids
    card = console.wait(f'.extraction[data-extraction-id="{friday}"]', "deploy on fridays")
    console.wait(f'.extraction[data-extraction-id="{flaky}"]', "retry flaky tests")
    console.screenshot("review-queue")
    assert console.errors() == []

    console.click("button.approve", within=card)
    console.wait(f'.extraction[data-extraction-id="{friday}"][data-state="approved"]')
    edited = console.wait(f'.extraction[data-extraction-id="{branches}"]')
    console.click("button.edit", within=edited)
    task = console.wait('form.edit input[name="task"]', within=edited)
    task.clear()
    task.send_keys("name release branches by date")
    console.click('form.edit button[type="submit"]', within=edited)
    console.wait(
        f'.extraction[data-extraction-id="{branches}"][data-state="edited"]',
        "name release branches by date",
    )
    console.click(
        "button.discard", within=console.wait(f'.extraction[data-extraction-id="{flaky}"]')
    )
    console.wait(f'.extraction[data-extraction-id="{flaky}"][data-state="discarded"]')

    console.click(f'button.commit[data-trace-id="{seeded.trace_id}"]')
    report = console.wait("#commit-report", "2 committed, 0 failed")
    committed = {
        row.find_elements("css selector", "td")[0].text: row.find_elements("css selector", "td")[
            1
        ].text
        for row in report.find_elements("css selector", "tr.committed")
    }
    console.screenshot("review-commit-report")
    assert set(committed) == {friday, branches}
    assert "name release branches by date" in report.text  # the edited task
    assert console.errors() == []

    assert alice.knowledge.get(committed[friday]).content == (
        "Deploy before noon on Fridays; nobody watches later."
    )
    assert alice.knowledge.get(committed[branches]).task == "name release branches by date"
    states = {
        e.extraction_id: (e.state, e.knowledge_id)
        for e in alice.cognition.list_extractions(seeded.trace_id, limit=100)
    }
    assert states[friday] == ("committed", committed[friday])
    assert states[branches] == ("committed", committed[branches])
    assert states[flaky] == ("discarded", "")

    console.click("a", committed[friday], within=report)  # the report links the record
    console.wait(".record-task", "deploy on fridays")


def test_the_knowledge_page_lists_and_searches(console: Console, seeded: Seeded) -> None:
    console.open("/knowledge", "token-alice")
    row = console.wait(
        f'.knowledge-row[data-knowledge-id="{seeded.knowledge_id}"]',
        "log in to the staging console",
    )
    assert "4 / 1" in row.text  # helpful: the first + 2 cases + 1 evaluation; harmful: 1
    console.screenshot("knowledge-list")
    query = console.wait("#knowledge-query")
    query.send_keys("staging console login")
    console.click('button[type="submit"]', "Search")
    console.wait("#knowledge-results p", "hit(s)")
    hits = console.find_all("#knowledge-results .knowledge-row")
    assert hits and hits[0].get_attribute("data-knowledge-id") == seeded.knowledge_id
    console.screenshot("knowledge-search")
    assert console.errors() == []


def test_a_record_shows_its_eval_history_versions_and_resources(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/knowledge/{seeded.knowledge_id}", "token-alice")
    console.wait(".record-content", EVOLVED)
    history = console.wait("#eval-history", "Eval history")
    cases = console.find_all("#eval-history tr.case")
    assert [c.get_attribute("class").split()[-1] for c in cases] == [
        "case-helpful",
        "case-harmful",
        "case-helpful",
        "case-helpful",
    ]
    assert "the login worked" in cases[-1].text and seeded.trace_id in cases[-1].text
    assert console.find_all("#eval-history svg.chart")
    assert "Helpful\n4" in history.text and "Harmful\n1" in history.text
    version = console.wait("#versions .version", ORIGINAL)
    assert "say to rotate the login" in version.text and "evolve" in version.text

    resource = console.wait(
        f'.resource[data-resource-id="{seeded.resource_id}"]', "Staging console login"
    )
    assert "deploy-bot" in resource.text
    console.wait(".secure-hidden", "Secure body hidden", within=resource)
    assert SECRET not in console.page_source()
    console.screenshot("knowledge-record")
    assert console.errors() == []

    console.click("button.reveal", within=resource)
    assert console.wait(".secure-body", SECRET, within=resource)
    console.screenshot("knowledge-record-revealed")
    console.click("button", "Hide", within=resource)
    console.wait(".secure-hidden", within=resource)
    assert SECRET not in console.page_source()
    assert console.errors() == []


def test_reveal_shows_the_servers_refusal_to_a_viewer_it_does_not_allow(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/knowledge/{seeded.knowledge_id}", "token-carol")  # same org, not owner
    resource = console.wait(
        f'.resource[data-resource-id="{seeded.resource_id}"]', "Staging console login"
    )
    console.click("button.reveal", within=resource)
    console.wait(".error", "PERMISSION_DENIED", within=resource)
    assert SECRET not in console.page_source()


def test_the_trace_page_shows_its_view_tabs(console: Console, seeded: Seeded) -> None:
    console.open("/trace", "token-alice")
    console.click(f'.trace-row[data-trace-id="{seeded.trace_id}"] a')
    console.wait("h1 .trace-id", seeded.trace_id)
    console.wait('.job-field[data-field="status"]', "no runtime events")
    expected = {
        "timeline": ("Step 2", "how to log in to staging"),
        "tree": ("Knowledge decisions", "how to log in to staging"),
        "plan": ("v2", "skip the build, reuse"),
        "tools": (
            seeded.knowledge_id,
            "logged in with the shared login",
            "NOT_FOUND",
            "was not applied",
        ),
        "memory": ("long_term", "staging login worked"),
        "events": ("extraction_pending", "Deploy the console build to staging"),
    }
    for tab, texts in expected.items():
        console.click(f'.tabs a[data-tab="{tab}"]')
        body = console.wait(f'.tab[data-tab="{tab}"]')
        for text in texts:
            console.wait(f'.tab[data-tab="{tab}"]', text)
        if tab == "tree":  # the knowledge choices, drawn: step -> query -> rated record
            rated = console.wait(
                f'.graph-knowledge-tree .graph-node[data-node-id="knowledge-2-'
                f'{seeded.knowledge_id}"]'
            )
            assert "rating-helpful" in (rated.get_attribute("class") or "")
            rated.click()
            console.wait('.node-details[data-graph="knowledge-tree"]', "the login worked")
        console.screenshot(f"trace-{tab}")
        assert body.is_displayed()
    assert console.errors() == []


def test_a_runtime_trace_shows_its_header_and_reasoning_steps(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}", "token-alice")
    header = {
        name: console.wait(f'.job-field[data-field="{name}"]').text
        for name in ("job", "agent", "goal", "status", "cursor", "plan")
    }
    assert JOB in header["job"] and "alice_bot" in header["agent"]
    assert GOAL in header["goal"] and "completed" in header["status"]
    assert "notify (step 7)" in header["cursor"] and "v3" in header["plan"]
    retried = console.wait('.reasoning-step[data-node-id="search_logs"]', "2 attempts")
    assert "#1 retryable (the log store timed out) → #2 ok" in retried.text
    assert [m.text.split(" (")[0] for m in console.find_all(".plan-marker")] == [
        "Plan v1",
        "Plan v2",
        "Plan v3",
    ]
    analyze = console.wait('.reasoning-step[data-node-id="analyze"]')
    assert "runbooks:checkout" in console.wait(".step-memory", within=analyze).text
    cards = [c.text.split("\n")[0] for c in analyze.find_elements("css selector", ".card-title")]
    assert cards == ["THOUGHT", "DECISION", "MEMORY"]
    console.wait('.reasoning-step[data-node-id="file_ticket"]', TICKET)
    console.screenshot("trace-runtime-timeline")
    assert console.errors() == []


def test_the_decision_tree_is_a_graph_with_clickable_nodes(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}/tree", "token-alice")
    tree = ".graph-decision-tree"
    plan = console.wait(f'{tree} .graph-node[data-node-id="plan"]')
    assert "branch" in (plan.get_attribute("class") or "")
    failed = console.wait(f'{tree} .graph-node[data-node-id="read_metrics"]')
    assert {"state-failed", "leaf", "dropped"} <= set((failed.get_attribute("class") or "").split())
    assert len(console.find_all(f"{tree} .graph-node")) == 7
    assert len(console.find_all(f"{tree} .graph-edge")) == 7
    assert "#3" in console.wait(f'{tree} .graph-edge[data-to="read_metrics"]').text
    failed.click()
    details = console.wait('.node-details[data-graph="decision-tree"]', "read_metrics")
    assert "a replan dropped it" in details.text and "metrics_query" in details.text
    console.click(f'{tree} .graph-node[data-node-id="search_logs"]')
    console.wait('.node-details[data-graph="decision-tree"]', "Attempts\n2")
    console.click(f'{tree} .graph-node[data-node-id="file_ticket"]')
    console.wait('.node-details[data-graph="decision-tree"]', "file a P2 ticket")
    console.screenshot("trace-runtime-tree")
    assert console.errors() == []


def test_the_plan_tab_draws_the_dag_and_two_versions_side_by_side(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}/plan", "token-alice")
    console.wait(".plan-row")
    rows = [r.text for r in console.find_all(".plan-row")]
    assert len(rows) == 3 and "added read_dashboards" in rows[1] and "(computed)" in rows[1]
    assert V3_DIFF in rows[2]
    current = '.graph-plan-current .graph-node[data-node-id="notify"]'
    assert "state-ok" in (console.wait(current).get_attribute("class") or "")
    console.click(current)
    console.wait('.node-details[data-graph="plan-current"]', "Tell the on-call")

    diff = console.wait('.plan-diff[data-from="2"][data-to="3"]', V3_DIFF)
    assert console.find_all('.plan-side-to .graph-node.diff-added[data-node-id="notify"]')
    Select(console.wait("#plan-diff-from")).select_by_value("1")
    console.click("#plan-diff-compare")
    diff = console.wait('.plan-diff[data-from="1"][data-to="3"]', "computed from the task graphs")
    assert "added read_dashboards (grafana_query), notify (slack_post)" in diff.text
    assert console.find_all('.plan-side-from .graph-node.diff-removed[data-node-id="read_metrics"]')
    assert console.find_all('.plan-side-to .graph-node.diff-added[data-node-id="read_dashboards"]')
    assert console.find_all(
        '.plan-side-from .graph-edge.diff-removed[data-from="plan"][data-to="read_metrics"]'
    )
    console.click('.plan-side-to .graph-node[data-node-id="read_dashboards"]')
    console.wait('.node-details[data-graph="plan-to"]', "added")
    console.screenshot("trace-runtime-plan")
    assert console.errors() == []


def test_the_tools_tab_draws_the_tool_graph_with_call_details(
    console: Console, seeded: Seeded
) -> None:
    console.open(f"/trace/{seeded.runtime_trace_id}/tools", "token-alice")
    graph = ".graph-tool-graph"
    console.wait(f"{graph} .graph-node")
    kinds = {
        node.get_attribute("data-node-id"): "kind-tool" in (node.get_attribute("class") or "")
        for node in console.find_all(f"{graph} .graph-node")
    }
    assert {node for node, tool in kinds.items() if not tool} == {"plan", "analyze"}
    console.click(f'{graph} .graph-node[data-node-id="file_ticket"]')
    details = console.wait('.node-details[data-graph="tool-graph"]', TICKET)
    assert "P2: checkout pool exhausted" in details.text
    assert "created the INC-7 ticket" in details.text
    assert "result in " in details.text
    console.click(f'{graph} .graph-node[data-node-id="search_logs"]')
    calls = console.wait('.node-details[data-graph="tool-graph"]', "timeout after 30s")
    assert len(calls.find_elements("css selector", '.tool-call[data-tool="log_search"]')) == 2
    console.screenshot("trace-runtime-tools")

    console.click('.tabs a[data-tab="memory"]')
    Select(console.wait("#memory-filter")).select_by_value("long_term")
    console.wait(".memory-timeline", "incidents:INC-7")
    assert "runbooks:checkout" not in console.wait(".memory-timeline").text
    console.screenshot("trace-runtime-memory")
    console.click('.tabs a[data-tab="events"]')
    Select(console.wait("#event-type")).select_by_value("node_finished")
    console.wait(".raw-events", "retryable")
    console.screenshot("trace-runtime-events")
    assert console.errors() == []


def test_the_dream_page_shows_runs_schedules_failed_jobs_and_documents(
    console: Console, seeded: Seeded, hub: tuple[Harness, Queue]
) -> None:
    console.open("/dream", "token-admin")
    console.wait(f'.schedule-row[data-schedule-id="{seeded.schedule_id}"]', "every 600 min")
    job = console.wait(".failed-job", "not a historian job")
    run = console.wait(f'#run-list .run-row[data-run-id="{seeded.run_id}"]', "done")
    assert "traces reflected: 1" in run.text and "documents created: 1" in run.text
    assert "alice_bot" in run.text and "by user:alice" in run.text

    Select(console.wait("#run-status")).select_by_value("DREAM_RUN_STATUS_FAILED")
    console.wait("#run-list", "No runs match.")
    Select(console.wait("#run-status")).select_by_value("DREAM_RUN_STATUS_DONE")
    console.wait(f'#run-list .run-row[data-run-id="{seeded.run_id}"]')

    admin = hub[0].client("admin")
    paging = [admin.dream.run(agent_id="paging_bot").run_id for _ in range(20)]
    for run_id in paging:
        wait_run(admin, run_id)
    console.click("#runs button", "Refresh")
    wait_until(lambda: run_ids(console) == paging[::-1], what="the first page of runs")
    console.click("#runs button.more-runs", "More")
    wait_until(
        lambda: run_ids(console) == [*paging[::-1], seeded.run_id], what="the second page of runs"
    )
    assert not console.wait("#runs button.more-runs").is_displayed()

    console.wait('#runs input[name="run"]').send_keys(seeded.run_id)
    console.click("#runs button", "Show")
    console.wait(f'#run-lookup .run-row[data-run-id="{seeded.run_id}"]', "done")

    Select(console.wait("#run-status")).select_by_value("")
    console.wait('#runs input[name="agent"]').send_keys("alice_bot")
    console.click("#runs button", "Run dream")  # alice_bot's traces, as admin
    shown = [*paging, seeded.run_id]
    wait_until(
        lambda: run_ids(console)[:1] not in ([], *([r] for r in shown)),
        what="the new run at the top of the list",
    )  # (the list is empty reloading)

    Select(console.wait("#documents-agent")).select_by_value("alice_bot")  # known from its runs
    console.wait("#documents .document")
    console.screenshot("dream")
    assert console.errors() == []

    console.click("button.retry", within=job)
    console.wait(".failed-job", "requeued")
    assert console.errors() == []


def run_ids(console: Console) -> list[str]:
    """The runs listed, read in one go in the page (a reloading list replaces its rows)."""
    return list(
        console.driver.execute_script(
            "return [...document.querySelectorAll('#run-list .run-row')]"
            ".map((row) => row.dataset.runId)"
        )
    )
