"""The views of an agent runtime's job, through GetTraceView on a real server: the
reasoning step timeline, the decision tree, plan evolution with diffs, the tool
dependency graph, the memory timeline and the header — for a job with a branching plan,
a retried and a failed node, two replans and memory reads and writes. And how runtime
events are validated, exported and imported."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from knowhub import KnowHub, TraceView
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from tests.cognition.conftest import new_trace, query_event
from tests.support.harness import Harness
from tests.support.runtime_trace import (
    EVENTS,
    GOAL,
    JOB,
    TICKET,
    V3_DIFF,
    append_runtime_trace,
    finished,
    started,
)
from tests.support.shared import bearer, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


@pytest.fixture(scope="module")
def runtime_trace(server: Harness) -> tuple[str, list[str]]:
    trace_id = new_trace()
    return trace_id, append_runtime_trace(server.client("alice"), trace_id)


@pytest.fixture(scope="module")
def view(server: Harness, runtime_trace: tuple[str, list[str]]) -> TraceView:
    return server.client("alice").cognition.trace_view(runtime_trace[0])


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


# ---- The header ----------------------------------------------------------------------------


def test_the_header_names_the_job_its_goal_status_and_cursor(view: TraceView) -> None:
    header = view.header
    assert (header.job_id, header.job_ids, header.agent_id) == (JOB, [JOB], "alice_bot")
    assert (header.goal, header.status, header.plan_version) == (GOAL, "completed", 3)
    assert (header.cursor_node_id, header.cursor_step_index) == ("notify", 7)


# ---- The reasoning step timeline ----------------------------------------------------------


def test_steps_come_in_the_order_they_began_with_attempts_and_the_plan_in_force(
    view: TraceView,
) -> None:
    steps = view.reasoning_steps
    assert [(s.node_id, s.step_index, s.state, s.plan_version) for s in steps] == [
        ("plan", 1, "ok", 1),
        ("search_logs", 2, "ok", 1),
        ("read_metrics", 3, "failed", 1),
        ("read_dashboards", 4, "ok", 2),
        ("analyze", 5, "ok", 2),
        ("file_ticket", 6, "ok", 3),
        ("notify", 7, "ok", 3),
    ]
    retried = steps[1].attempts
    assert [(a.attempt, a.state, a.reason) for a in retried] == [
        (1, "retryable", "the log store timed out"),
        (2, "ok", ""),
    ]
    assert all(a.started_at and a.finished_at and a.started_at <= a.finished_at for a in retried)
    assert steps[0].attempts[0].duration_ms == 800
    assert steps[0].attempts[0].worker_id == "worker-1"


def test_each_step_holds_its_thought_decision_tool_and_result_cards(view: TraceView) -> None:
    steps = {s.node_id: s for s in view.reasoning_steps}
    assert types(steps["plan"].cards) == ["agent_thought_recorded", "decision_made"]
    assert steps["plan"].cards[0]["content"] == "Look at logs and metrics in parallel"
    assert types(steps["file_ticket"].cards) == [
        "decision_made",
        "tool_selected",
        "tool_result_summarized",
    ]
    assert types(steps["search_logs"].cards) == ["tool_selected", "tool_result_summarized"] * 2
    assert steps["file_ticket"].cards[2]["external_id"] == TICKET


def test_memory_reads_and_writes_sit_beside_their_step(view: TraceView) -> None:
    beside = {
        s.node_id: [(e.type, e["key_or_scope"]) for e in s.memory]
        for s in view.reasoning_steps
        if s.memory
    }
    # The analyze read names only its step (5); the first read names no step at all.
    assert beside == {
        "read_metrics": [("memory_write", "triage:blockers")],
        "analyze": [("memory_read", "runbooks:checkout")],
        "file_ticket": [("memory_write", "incidents:INC-7")],
    }
    assert [e["key_or_scope"] for e in view.memory_timeline] == [
        "incidents:similar",
        "triage:blockers",
        "runbooks:checkout",
        "incidents:INC-7",
    ]
    assert {(c.memory_type, c.reads, c.writes) for c in view.memory_counts} == {
        ("long_term", 1, 1),
        ("working", 0, 1),
        ("episodic", 1, 0),
    }
    assert view.timeline == []  # runtime steps are not message sequences


# ---- The decision tree --------------------------------------------------------------------


def test_the_decision_tree_branches_and_ends_in_marked_leaves(view: TraceView) -> None:
    tree = view.decision_tree
    nodes = {n.node_id: n for n in tree.nodes}
    assert tree.root_node_ids == ["plan"] and tree.plan_version == 3
    assert list(nodes) == [
        "plan",
        "search_logs",
        "read_dashboards",
        "analyze",
        "file_ticket",
        "notify",
        "read_metrics",
    ]
    assert [n for n, item in nodes.items() if item.branch] == ["plan"]
    assert {n: item.state for n, item in nodes.items() if item.leaf} == {
        "notify": "ok",
        "read_metrics": "failed",
    }
    dropped = nodes["read_metrics"]
    assert not dropped.in_current_plan and dropped.node_type == "tool"
    assert nodes["search_logs"].attempts == 2
    assert [
        (c.type, c.data.get("content") or c["tool_name"]) for c in nodes["file_ticket"].choices
    ] == [("decision_made", "file a P2 ticket"), ("tool_selected", "jira_create")]
    assert nodes["plan"].choices[0]["content"] == "fan out to logs and metrics"


def test_edges_follow_the_plan_and_carry_the_execution_order(view: TraceView) -> None:
    edges = {(e.from_node_id, e.to_node_id): e.execution_order for e in view.decision_tree.edges}
    assert edges == {
        ("plan", "search_logs"): 2,
        ("plan", "read_dashboards"): 4,
        ("search_logs", "analyze"): 5,
        ("read_dashboards", "analyze"): 5,
        ("analyze", "file_ticket"): 6,
        ("file_ticket", "notify"): 7,
        # the dropped node hangs from its old predecessor only
        ("plan", "read_metrics"): 3,
    }


# ---- Plan evolution ---------------------------------------------------------------------


def test_plan_versions_are_snapshots_with_given_or_computed_diffs(
    view: TraceView, runtime_trace: tuple[str, list[str]]
) -> None:
    plans = view.plan_snapshots
    assert [(p.plan_version, p.source, len(p.event_ids)) for p in plans] == [
        (1, "plan_generated", 2),
        (2, "decision_snapshot", 1),
        (3, "decision_snapshot", 2),
    ]
    first, second, third = plans
    ids = runtime_trace[1]
    assert first.event_ids == ids[:2]  # the plan and the snapshot written right after it
    assert first.reasoning_summary == "Logs and metrics together locate the fault"
    assert first.memory_keys == ["incidents:*"] and first.goal == GOAL
    assert first.task_graph is not None and len(first.task_graph.nodes) == 5
    assert (first.diff_summary, first.diff_computed) == ("", False)
    assert second.diff_computed and second.diff_summary == (
        "added read_dashboards (grafana_query); removed read_metrics; 2 edges added, 2 removed"
    )
    assert (third.diff_summary, third.diff_computed) == (V3_DIFF, False)
    assert [e.type for e in view.plan_evolution] == ["plan_evolution"]


def test_the_plan_diff_compares_the_last_two_versions_or_any_two(
    server: Harness, runtime_trace: tuple[str, list[str]], view: TraceView
) -> None:
    last = view.plan_diff
    assert (last.from_version, last.to_version, last.summary, last.computed) == (
        2,
        3,
        V3_DIFF,
        False,
    )
    assert [n.id for n in last.added_nodes] == ["notify"] and last.removed_nodes == []
    assert [(e.from_node, e.to_node) for e in last.added_edges] == [("file_ticket", "notify")]

    across = (
        server.client("alice").cognition.trace_view(runtime_trace[0], plan_diff=(1, 3)).plan_diff
    )
    assert (across.from_version, across.to_version, across.computed) == (1, 3, True)
    assert [n.id for n in across.added_nodes] == ["read_dashboards", "notify"]
    assert [n.id for n in across.removed_nodes] == ["read_metrics"]
    assert {(e.from_node, e.to_node) for e in across.removed_edges} == {
        ("plan", "read_metrics"),
        ("read_metrics", "analyze"),
    }
    assert across.summary.startswith("added read_dashboards (grafana_query), notify (slack_post)")


def test_a_changed_node_and_goal_show_in_the_diff(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    graph = {"nodes": [{"id": "a", "type": "llm"}], "edges": []}
    changed = {"nodes": [{"id": "a", "type": "tool", "tool_name": "search"}], "edges": []}
    alice.cognition.append_events(
        trace_id,
        [
            {"type": "plan_generated", "job_id": "j", "goal": "one", "task_graph": graph},
            {"type": "plan_generated", "job_id": "j", "goal": "two", "task_graph": changed},
        ],
    )
    diff = alice.cognition.trace_view(trace_id).plan_diff
    assert diff.goal_changed and [(c.node_id, c.changes) for c in diff.changed_nodes] == [
        ("a", ["type: llm -> tool", "tool_name: (none) -> search"])
    ]
    assert diff.summary == (
        "goal changed; changed a (type: llm -> tool; tool_name: (none) -> search)"
    )


@pytest.mark.parametrize(
    ("versions", "field", "problem"),
    [
        ((1, None), "plan_diff_to", "is required"),
        ((None, 2), "plan_diff_from", "is required"),
        ((1, 9), "plan_diff_to", "no plan version 9"),
        ((-1, 2), "plan_diff_from", "between 0"),
    ],
)
def test_a_bad_plan_diff_request_is_refused_naming_the_field(
    server: Harness,
    runtime_trace: tuple[str, list[str]],
    versions: tuple[int | None, int | None],
    field: str,
    problem: str,
) -> None:
    request = cognition_pb2.GetTraceViewRequest(
        trace_id=runtime_trace[0], plan_diff_from=versions[0], plan_diff_to=versions[1]
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = cognition_pb2_grpc.CognitionServiceStub(channel)
        code, message = failure(lambda: stub.GetTraceView(request, metadata=bearer("alice")))
    assert code == "INVALID_ARGUMENT" and field in message and problem in message


# ---- The tool dependency graph ----------------------------------------------------------


def test_the_tool_graph_tells_tool_nodes_from_llm_nodes_with_their_calls(view: TraceView) -> None:
    graph = view.tool_graph
    nodes = {n.node_id: n for n in graph.nodes}
    assert {n for n, item in nodes.items() if not item.tool_node} == {"plan", "analyze"}
    assert [(n, item.finish_order) for n, item in nodes.items()] == [
        ("plan", 1),
        ("search_logs", 2),
        ("read_dashboards", 4),
        ("analyze", 5),
        ("file_ticket", 6),
        ("notify", 7),
        ("read_metrics", 3),
    ]
    ticket = nodes["file_ticket"].calls
    assert [
        (c.tool_name, c.input_summary, c.output_summary, c.external_id, c.attempt) for c in ticket
    ] == [("jira_create", "P2: checkout pool exhausted", "created the INC-7 ticket", TICKET, 1)]
    assert ticket[0].selected_event_id and ticket[0].result_event_id
    assert [(c.attempt, c.error, c.output_summary) for c in nodes["search_logs"].calls] == [
        (1, "timeout after 30s", ""),
        (2, "", "412 errors: connection pool exhausted"),
    ]
    assert nodes["read_metrics"].calls[0].error == "403 forbidden"
    assert graph.edges == view.decision_tree.edges


# ---- Status, jobs, partial logs --------------------------------------------------------------


def test_the_status_follows_the_current_plans_nodes(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    plan = {
        "type": "plan_generated",
        "job_id": "j1",
        "task_graph": {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"from": "a", "to": "b"}]},
    }
    steps: list[tuple[dict[str, Any], str]] = [
        (started("a", 1), "running"),
        (finished("a", 1, "failed"), "failed"),
        (started("a", 1, attempt=2), "running"),
        (finished("a", 1, attempt=2), "running"),  # b is still to run
        (started("b", 2), "running"),
        (finished("b", 2), "completed"),
    ]
    alice.cognition.append_events(trace_id, [plan])
    for event, status in steps:
        alice.cognition.append_events(trace_id, [{**event, "job_id": "j1"}])
        assert alice.cognition.trace_view(trace_id).header.status == status


def test_a_trace_of_two_jobs_shows_the_latest_or_the_one_asked_for(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(
        trace_id,
        [
            {**started("a", 1), "job_id": "first"},
            {**finished("a", 1, "failed"), "job_id": "first"},
            {**started("a", 1), "job_id": "second"},
            {"type": "memory_read", "memory_type": "working", "node_id": "a"},  # every job's
        ],
    )
    latest = alice.cognition.trace_view(trace_id)
    assert (latest.header.job_id, latest.header.job_ids) == ("second", ["first", "second"])
    assert [(s.node_id, s.state, len(s.memory)) for s in latest.reasoning_steps] == [
        ("a", "running", 1)
    ]
    first = alice.cognition.trace_view(trace_id, job_id="first")
    assert (first.header.status, first.reasoning_steps[0].state) == ("failed", "failed")

    code, message = failure(lambda: alice.cognition.trace_view(trace_id, job_id="third"))
    assert code == "INVALID_ARGUMENT" and "job_id" in message and "first, second" in message


def test_a_memory_event_of_no_job_or_node_stays_a_message_step(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(
        trace_id,
        [started("a", 3), {"type": "memory_read", "memory_type": "working", "step_index": 3}],
    )
    view = alice.cognition.trace_view(trace_id)
    assert [(s.node_id, s.memory) for s in view.reasoning_steps] == [("a", [])]
    assert [(s.sequence, types(s.events)) for s in view.timeline] == [(3, ["memory_read"])]


def test_a_trace_without_runtime_events_keeps_its_views_empty(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(
        trace_id,
        [
            query_event(1, "knowledge-a"),
            {"type": "plan_evolution", "plan_version": 1, "diff_summary": "first plan"},
            {"type": "memory_read", "memory_type": "working", "step_index": 1},
        ],
        task="chat",
    )
    view = alice.cognition.trace_view(trace_id)
    assert (view.header.status, view.header.job_id, view.header.goal) == ("", "", "chat")
    assert view.reasoning_steps == [] and view.decision_tree.nodes == []
    assert view.tool_graph.nodes == []
    assert [(p.plan_version, p.source, p.diff_summary) for p in view.plan_snapshots] == [
        (1, "plan_evolution", "first plan")
    ]
    assert [s.sequence for s in view.timeline] == [1]  # the memory read joins message 1
    assert types(view.timeline[0].events) == ["query", "memory_read"]


def test_events_without_plan_or_node_events_still_make_steps(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(
        trace_id,
        [
            {"type": "agent_thought_recorded", "step_index": 1, "content": "think"},
            {
                "type": "tool_result_summarized",
                "node_id": "n",
                "step_index": 2,
                "tool_name": "calc",
                "summary": "4",
            },
        ],
    )
    view = alice.cognition.trace_view(trace_id)
    assert [(s.node_id, s.step_index, s.state, types(s.cards)) for s in view.reasoning_steps] == [
        ("", 1, "", ["agent_thought_recorded"]),
        ("n", 2, "", ["tool_result_summarized"]),
    ]
    (tool,) = view.tool_graph.nodes
    assert tool.tool_node and tool.calls[0].output_summary == "4"
    assert view.header.status == "running"


# ---- Validation, export, import --------------------------------------------------------------

GRAPH = {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"from": "a", "to": "b"}]}


@pytest.mark.parametrize(
    ("event", "field", "problem"),
    [
        ({"type": "node_started", "step_index": 1}, "events[0].node_started.node_id", "required"),
        (
            {"type": "node_finished", "node_id": "a", "state": "done"},
            "events[0].node_finished.state",
            "not one of ok, failed, retryable",
        ),
        (
            {"type": "node_finished", "node_id": "a", "duration_ms": -1},
            "events[0].node_finished.duration_ms",
            "between 0",
        ),
        (
            {"type": "node_started", "node_id": "a", "attempt": -2},
            "events[0].node_started.attempt",
            "between 0",
        ),
        (
            {"type": "agent_thought_recorded", "content": " "},
            "events[0].agent_thought_recorded.content",
            "required",
        ),
        (
            {"type": "decision_made", "content": "x" * 70_000},
            "events[0].decision_made.content",
            "limit is 65536",
        ),
        (
            {"type": "tool_selected", "node_id": "a"},
            "events[0].tool_selected.tool_name",
            "required",
        ),
        (
            {"type": "tool_result_summarized", "tool_name": "t"},
            "events[0].tool_result_summarized.node_id",
            "required",
        ),
        (
            {
                "type": "tool_result_summarized",
                "node_id": "a",
                "tool_name": "t",
                "external_id": "e" * 300,
            },
            "events[0].tool_result_summarized.external_id",
            "limit",
        ),
        (
            {"type": "node_started", "node_id": "a", "job_id": "j" * 300},
            "events[0].node_started.job_id",
            "limit",
        ),
        (
            {"type": "plan_generated", "task_graph": {"nodes": [{"id": "a"}, {"id": "a"}]}},
            "events[0].plan_generated.task_graph.nodes[1].id",
            "repeats",
        ),
        (
            {"type": "plan_generated", "task_graph": {"nodes": [{"id": ""}]}},
            "events[0].plan_generated.task_graph.nodes[0].id",
            "required",
        ),
        (
            {
                "type": "plan_generated",
                "task_graph": {**GRAPH, "edges": [{"from": "a", "to": "c"}]},
            },
            "events[0].plan_generated.task_graph.edges[0].to_node",
            "not a node",
        ),
        (
            {
                "type": "plan_generated",
                "task_graph": {
                    **GRAPH,
                    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}],
                },
            },
            "events[0].plan_generated.task_graph.edges[1]",
            "closes a cycle",
        ),
        (
            {
                "type": "plan_generated",
                "task_graph": {**GRAPH, "edges": [{"from": "a", "to": "a"}]},
            },
            "events[0].plan_generated.task_graph.edges[0]",
            "closes a cycle",
        ),
        (
            {
                "type": "decision_snapshot",
                "task_graph": {
                    **GRAPH,
                    "edges": [{"from": "a", "to": "b"}, {"from": "a", "to": "b"}],
                },
            },
            "events[0].decision_snapshot.task_graph.edges[1]",
            "repeats",
        ),
        (
            {
                "type": "decision_snapshot",
                "task_graph": {"nodes": [{"id": f"n{i}"} for i in range(501)]},
            },
            "events[0].decision_snapshot.task_graph.nodes",
            "limit is 500",
        ),
        (
            {"type": "decision_snapshot", "memory_keys": ["k", "k"]},
            "events[0].decision_snapshot.memory_keys[1]",
            "repeats",
        ),
        (
            {"type": "plan_evolution", "job_id": "j" * 300},
            "events[0].plan_evolution.job_id",
            "limit",
        ),
        (
            {"type": "memory_write", "memory_type": "working", "node_id": "n" * 300},
            "events[0].memory_write.node_id",
            "limit",
        ),
    ],
)
def test_a_bad_runtime_event_is_refused_naming_the_field_and_changes_nothing(
    server: Harness, event: dict[str, Any], field: str, problem: str
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    code, message = failure(lambda: alice.cognition.append_events(trace_id, [event]))
    assert code == "INVALID_ARGUMENT" and field in message and problem in message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


def test_node_finished_without_a_state_is_ok(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [{"type": "node_finished", "node_id": "a"}])
    (event,) = alice.cognition.get_log(trace_id)
    assert event["state"] == "ok"


def test_runtime_events_filter_export_and_import_as_they_were(
    server: Harness, runtime_trace: tuple[str, list[str]], view: TraceView
) -> None:
    alice: KnowHub = server.client("alice")
    trace_id = runtime_trace[0]
    tools = alice.cognition.get_log(trace_id, types=["tool_result_summarized"], limit=100)
    assert len(tools) == sum(e["type"] == "tool_result_summarized" for e in EVENTS)

    document = alice.cognition.export_log(trace_id)
    exported = json.loads(document)["events"]
    assert [e["type"] for e in exported] == [e["type"] for e in EVENTS]
    copy = new_trace()
    assert alice.cognition.import_log(document, trace_id=copy).imported == len(EVENTS)
    imported = alice.cognition.trace_view(copy)
    assert tree_shape(imported) == tree_shape(view)
    assert imported.plan_diff == view.plan_diff and imported.header == view.header
    assert [p.task_graph for p in imported.plan_snapshots] == [
        p.task_graph for p in view.plan_snapshots
    ]
    assert [[(c.tool_name, c.external_id) for c in n.calls] for n in imported.tool_graph.nodes] == [
        [(c.tool_name, c.external_id) for c in n.calls] for n in view.tool_graph.nodes
    ]


def tree_shape(view: TraceView) -> list[Any]:
    """The decision tree without event ids (an import gives its events new ones)."""
    return [
        [
            (n.node_id, n.state, n.attempts, n.branch, n.leaf, n.in_current_plan, types(n.choices))
            for n in view.decision_tree.nodes
        ],
        view.decision_tree.edges,
        view.decision_tree.root_node_ids,
    ]


def test_the_runtimes_own_edge_spelling_is_read(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [{"type": "plan_generated", "task_graph": GRAPH}])
    (event,) = alice.cognition.get_log(trace_id)
    assert event["task_graph"]["edges"] == [{"from_node": "a", "to_node": "b"}]
