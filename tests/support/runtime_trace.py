"""A trace an agent runtime logs with the v0.9 events: an incident triage job whose plan
branches (logs and metrics in parallel), where one node is retried (log search timed out,
then worked), one fails (metrics refused) and two replans follow (dashboards replace the
metrics; a notification is added), with memory reads and writes along the way.

The same trace feeds the cognition view tests, the OpenTelemetry export tests and the
console's screenshots. Each event is appended on its own, so each has its own time.
"""

from __future__ import annotations

from typing import Any

from knowhub import KnowHub

JOB = "job-incident-7"
GOAL = "Triage incident INC-7 on checkout and file a ticket"
TICKET = "JIRA-4711"

Event = dict[str, Any]


def node(node_id: str, kind: str, description: str, tool: str = "") -> Event:
    return {"id": node_id, "type": kind, "tool_name": tool, "description": description}


def edge(start: str, end: str) -> Event:
    return {"from": start, "to": end}  # the runtime's own spelling of TaskEdge


PLAN = node("plan", "llm", "Plan the triage")
SEARCH_LOGS = node("search_logs", "tool", "Search the checkout logs", "log_search")
READ_METRICS = node("read_metrics", "tool", "Read the checkout metrics", "metrics_query")
READ_DASHBOARDS = node("read_dashboards", "tool", "Read the checkout dashboards", "grafana_query")
ANALYZE = node("analyze", "llm", "Find the root cause")
FILE_TICKET = node("file_ticket", "tool", "File the incident ticket", "jira_create")
NOTIFY = node("notify", "tool", "Tell the on-call", "slack_post")

GRAPH_V1 = {
    "nodes": [PLAN, SEARCH_LOGS, READ_METRICS, ANALYZE, FILE_TICKET],
    "edges": [
        edge("plan", "search_logs"),
        edge("plan", "read_metrics"),
        edge("search_logs", "analyze"),
        edge("read_metrics", "analyze"),
        edge("analyze", "file_ticket"),
    ],
}
GRAPH_V2 = {
    "nodes": [PLAN, SEARCH_LOGS, READ_DASHBOARDS, ANALYZE, FILE_TICKET],
    "edges": [
        edge("plan", "search_logs"),
        edge("plan", "read_dashboards"),
        edge("search_logs", "analyze"),
        edge("read_dashboards", "analyze"),
        edge("analyze", "file_ticket"),
    ],
}
GRAPH_V3 = {
    "nodes": [*GRAPH_V2["nodes"], NOTIFY],
    "edges": [*GRAPH_V2["edges"], edge("file_ticket", "notify")],
}
V3_DIFF = "added notify after file_ticket: the on-call asked for a heads-up"


def at(node_id: str, step: int, event_type: str, **fields: Any) -> Event:
    return {"type": event_type, "job_id": JOB, "node_id": node_id, "step_index": step, **fields}


def started(node_id: str, step: int, attempt: int = 1) -> Event:
    return at(node_id, step, "node_started", attempt=attempt, worker_id="worker-1")


def finished(
    node_id: str,
    step: int,
    state: str = "ok",
    attempt: int = 1,
    reason: str = "",
    duration_ms: int = 0,
) -> Event:
    return at(
        node_id,
        step,
        "node_finished",
        state=state,
        attempt=attempt,
        reason=reason,
        duration_ms=duration_ms,
    )


def tool_call(
    node_id: str,
    step: int,
    tool: str,
    given: str,
    *,
    summary: str = "",
    error: str = "",
    external_id: str = "",
) -> list[Event]:
    return [
        at(
            node_id,
            step,
            "tool_selected",
            tool_name=tool,
            input_summary=given,
            reason=f"{tool} answers this",
        ),
        at(
            node_id,
            step,
            "tool_result_summarized",
            tool_name=tool,
            summary=summary,
            error=error,
            external_id=external_id,
            idempotent=not external_id,
        ),
    ]


def memory(
    kind: str, memory_type: str, key: str, summary: str, node_id: str = "", step: int = 0
) -> Event:
    return {
        "type": f"memory_{kind}",
        "job_id": JOB,
        "node_id": node_id,
        "step_index": step,
        "memory_type": memory_type,
        "key_or_scope": key,
        "summary": summary,
    }


EVENTS: list[Event] = [
    {"type": "plan_generated", "job_id": JOB, "goal": GOAL, "task_graph": GRAPH_V1},
    {
        "type": "decision_snapshot",
        "job_id": JOB,
        "goal": GOAL,
        "reasoning_summary": "Logs and metrics together locate the fault",
        "memory_summary": "three similar incidents last month",
        "memory_keys": ["incidents:*"],
    },
    memory("read", "long_term", "incidents:similar", "read 3 similar incidents"),
    started("plan", 1),
    at("plan", 1, "agent_thought_recorded", content="Look at logs and metrics in parallel"),
    at("plan", 1, "decision_made", content="fan out to logs and metrics", kind="plan"),
    finished("plan", 1, duration_ms=800),
    started("search_logs", 2),
    *tool_call(
        "search_logs", 2, "log_search", "service=checkout since=1h", error="timeout after 30s"
    ),
    finished("search_logs", 2, "retryable", reason="the log store timed out"),
    started("search_logs", 2, attempt=2),
    *tool_call(
        "search_logs",
        2,
        "log_search",
        "service=checkout since=1h limit=500",
        summary="412 errors: connection pool exhausted",
    ),
    finished("search_logs", 2, attempt=2),
    started("read_metrics", 3),
    *tool_call("read_metrics", 3, "metrics_query", "checkout p99 latency", error="403 forbidden"),
    finished("read_metrics", 3, "failed", reason="no access to the metrics API"),
    memory("write", "working", "triage:blockers", "metrics unavailable", "read_metrics", 3),
    {
        "type": "decision_snapshot",
        "job_id": JOB,
        "goal": GOAL,
        "task_graph": GRAPH_V2,
        "reasoning_summary": "The metrics API refused; the dashboards show the same signal",
    },
    started("read_dashboards", 4),
    *tool_call(
        "read_dashboards",
        4,
        "grafana_query",
        "checkout latency board",
        summary="p99 latency 4.2s since 10:05",
        external_id="dash-checkout",
    ),
    finished("read_dashboards", 4),
    started("analyze", 5),
    memory("read", "episodic", "runbooks:checkout", "read the checkout runbook", step=5),
    at(
        "analyze",
        5,
        "agent_thought_recorded",
        content="The pool ran out right after the 10:02 deploy",
    ),
    at(
        "analyze",
        5,
        "decision_made",
        content="root cause: pool size halved by the deploy",
        kind="answer",
    ),
    finished("analyze", 5),
    {
        "type": "decision_snapshot",
        "job_id": JOB,
        "plan_version": 3,
        "goal": GOAL,
        "task_graph": GRAPH_V3,
        "reasoning_summary": "The on-call wants a heads-up",
    },
    {"type": "plan_evolution", "job_id": JOB, "plan_version": 3, "diff_summary": V3_DIFF},
    started("file_ticket", 6),
    at("file_ticket", 6, "decision_made", content="file a P2 ticket", kind="tool_call"),
    *tool_call(
        "file_ticket",
        6,
        "jira_create",
        "P2: checkout pool exhausted",
        summary="created the INC-7 ticket",
        external_id=TICKET,
    ),
    finished("file_ticket", 6),
    memory("write", "long_term", "incidents:INC-7", "root cause and ticket", "file_ticket", 6),
    started("notify", 7),
    *tool_call(
        "notify",
        7,
        "slack_post",
        "#oncall: INC-7 filed",
        summary="posted",
        external_id="slack-msg-99",
    ),
    finished("notify", 7),
]


def append_runtime_trace(client: KnowHub, trace_id: str) -> list[str]:
    """Appends the trace event by event (its agent is the token's); returns the event
    ids."""
    ids = []
    for index, event in enumerate(EVENTS):
        task = {"task": "triage INC-7"} if index == 0 else {}
        ids += client.cognition.append_events(trace_id, [event], **task).event_ids
    return ids
