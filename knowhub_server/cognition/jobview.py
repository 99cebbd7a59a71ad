"""The views of an agent runtime's job, from its events (trace-event-schema v0.9): the
reasoning step timeline, the decision tree, plan evolution (see plans.py), the tool
dependency graph and the header of the debug view.

A step is a node (events name it by node_id) or, for events that name only a step_index
no node has, that step. The graphs are the current plan's TaskGraph, plus the nodes that
ran under an earlier plan and a replan dropped, hanging from their old predecessors only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowhub_server.cognition.domain import (
    RUNTIME_TYPES,
    STEP_TYPES,
    Body,
    Event,
    Trace,
)
from knowhub_server.cognition.plans import PlanDiff, PlanSnapshot, chosen_diff, plan_snapshots
from knowhub_server.common.base.errors import InvalidArgument

MEMORY_TYPES = ("memory_read", "memory_write")
# The events of one job: the runtime's, and the memory and plan events that may name it.
JOB_TYPES = (*RUNTIME_TYPES, *MEMORY_TYPES, "plan_evolution")
CHOICE_TYPES = ("decision_made", "tool_selected")
StepKey = tuple[str, str | int]


@dataclass
class Attempt:
    attempt: int
    state: str  # running, ok, failed or retryable
    started_at: str = ""
    finished_at: str = ""
    duration_ms: int = 0
    reason: str = ""
    worker_id: str = ""
    step_index: int = 0


@dataclass
class ToolCall:
    tool_name: str
    attempt: int
    reason: str = ""
    input_summary: str = ""
    output_summary: str = ""
    error: str = ""
    external_id: str = ""
    idempotent: bool = False
    rollback_available: bool = False
    selected_event_id: str = ""
    result_event_id: str = ""
    selected_at: str = ""
    finished_at: str = ""


@dataclass
class Step:
    node_id: str
    step_index: int
    plan_version: int
    attempts: list[Attempt] = field(default_factory=list)
    cards: list[Event] = field(default_factory=list)
    memory: list[Event] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    last_finish: int = -1  # the log position of its last node_finished

    @property
    def state(self) -> str:
        return self.attempts[-1].state if self.attempts else ""

    @property
    def current_attempt(self) -> int:
        return self.attempts[-1].attempt if self.attempts else 0

    def start(self, event: Event) -> None:
        number = event["attempt"] or max((a.attempt for a in self.attempts), default=0) + 1
        self.attempts.append(
            Attempt(
                number,
                "running",
                started_at=event["timestamp"],
                worker_id=event["worker_id"],
                step_index=event["step_index"],
            )
        )

    def finish(self, event: Event, position: int) -> None:
        number = event["attempt"] or next(
            (a.attempt for a in reversed(self.attempts) if a.state == "running"),
            max((a.attempt for a in self.attempts), default=0) + 1,
        )
        attempt = next(
            (a for a in reversed(self.attempts) if a.attempt == number and a.state == "running"),
            None,
        )
        if attempt is None:
            attempt = Attempt(number, "", step_index=event["step_index"])
            self.attempts.append(attempt)
        attempt.state, attempt.finished_at = event["state"] or "ok", event["timestamp"]
        attempt.duration_ms, attempt.reason = event["duration_ms"], event["reason"]
        attempt.step_index = attempt.step_index or event["step_index"]
        self.last_finish = position

    def add_card(self, event: Event) -> None:
        self.cards.append(event)
        if event["type"] == "tool_selected":
            self.calls.append(
                ToolCall(
                    event["tool_name"],
                    self.current_attempt,
                    reason=event["reason"],
                    input_summary=event["input_summary"],
                    selected_event_id=event["event_id"],
                    selected_at=event["timestamp"],
                )
            )
        elif event["type"] == "tool_result_summarized":
            call = next(
                (
                    c
                    for c in self.calls
                    if c.tool_name == event["tool_name"] and not c.result_event_id
                ),
                None,
            )
            if call is None:
                call = ToolCall(event["tool_name"], self.current_attempt)
                self.calls.append(call)
            call.output_summary, call.error = event["summary"], event["error"]
            call.external_id, call.idempotent = event["external_id"], event["idempotent"]
            call.rollback_available = event["rollback_available"]
            call.result_event_id, call.finished_at = event["event_id"], event["timestamp"]


@dataclass
class GraphNode:
    node_id: str
    task: Body | None  # its TaskNode in the plan that names it, if any
    step: Step | None
    in_current_plan: bool
    state: str
    successors: int = 0
    predecessors: int = 0
    finish_order: int = 0

    @property
    def choices(self) -> list[Event]:
        return [e for e in self.step.cards if e["type"] in CHOICE_TYPES] if self.step else []

    @property
    def tool_node(self) -> bool:
        planned = self.task is not None and (
            self.task["type"] == "tool" or bool(self.task["tool_name"])
        )
        return planned or bool(self.step and self.step.calls)

    def task_field(self, name: str) -> str:
        return self.task[name] if self.task is not None else ""


@dataclass
class GraphEdge:
    from_node_id: str
    to_node_id: str
    execution_order: int


@dataclass
class JobGraph:
    """The nodes and edges the decision tree and the tool graph share."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    plan_version: int

    @property
    def roots(self) -> list[str]:
        return [n.node_id for n in self.nodes if not n.predecessors]


@dataclass
class Header:
    job_id: str = ""
    job_ids: list[str] = field(default_factory=list)
    agent_id: str = ""
    goal: str = ""
    status: str = ""  # running, completed, failed; "" without runtime events
    cursor_node_id: str = ""
    cursor_step_index: int = 0
    plan_version: int = 0


@dataclass
class JobView:
    header: Header
    steps: list[Step]
    graph: JobGraph
    plans: list[PlanSnapshot]
    plan_diff: PlanDiff


def build_job_view(
    trace: Trace,
    events: list[Event],
    job_id: str,
    diff_versions: tuple[int | None, int | None],
    *,
    unknown_job_refused: bool = True,
) -> JobView:
    """The views of job `job_id` (the latest job when empty) of a trace's events. A job
    the events do not name is INVALID_ARGUMENT when `unknown_job_refused` (the events are
    the whole log), else its views are empty."""
    job_ids = list(
        dict.fromkeys(e["job_id"] for e in events if e["type"] in JOB_TYPES and e.get("job_id"))
    )
    if job_id and job_id not in job_ids and unknown_job_refused:
        raise InvalidArgument(
            "job_id",
            f"trace {trace.trace_id!r} has no job {job_id!r} "
            f"(it has: {', '.join(job_ids) or 'none'})",
        )
    chosen = job_id or (job_ids[-1] if job_ids else "")
    scoped = [e for e in events if e["type"] in JOB_TYPES and e.get("job_id", "") in ("", chosen)]
    plans = plan_snapshots(scoped)
    steps = reasoning_steps(scoped, plans)
    graph = job_graph(plans, steps)
    header = Header(
        job_id=chosen,
        job_ids=job_ids,
        agent_id=trace.agent_id,
        goal=next((p.goal for p in reversed(plans) if p.goal), trace.task),
        status=job_status(graph, steps, scoped),
        plan_version=plans[-1].plan_version if plans else 0,
    )
    header.cursor_node_id, header.cursor_step_index = cursor(scoped)
    return JobView(header, steps, graph, plans, chosen_diff(plans, diff_versions))


# ---- The reasoning step timeline ----------------------------------------------------------


def reasoning_steps(events: list[Event], plans: list[PlanSnapshot]) -> list[Step]:
    """Steps in the order they began, each with its attempts, cards and memory use, and
    the plan version in force when it began."""
    node_at_index = {
        e["step_index"]: e["node_id"] for e in events if e.get("node_id") and e.get("step_index")
    }
    version_at = {position: p.plan_version for p in plans for position in p.positions}
    steps: dict[StepKey, Step] = {}
    in_force = 0
    for position, event in enumerate(events):
        in_force = version_at.get(position, in_force)
        key = _step_key(event, node_at_index)
        if event["type"] not in STEP_TYPES or key is None:
            continue
        step = steps.get(key)
        if step is None:
            node_id = key[1] if key[0] == "node" else ""
            step = steps[key] = Step(str(node_id), event["step_index"], in_force)
        step.step_index = step.step_index or event["step_index"]
        if event["type"] == "node_started":
            step.start(event)
        elif event["type"] == "node_finished":
            step.finish(event, position)
        else:
            step.add_card(event)
    for event in events:
        if event["type"] in MEMORY_TYPES and _names_runtime(event):
            key = _step_key(event, node_at_index)
            if key in steps:
                steps[key].memory.append(event)
    return list(steps.values())


def _names_runtime(event: Event) -> bool:
    """A memory event belongs to the runtime's steps when it names a job or a node; one
    that names only a step index counts it in message sequences (the knowledge timeline)."""
    return bool(event.get("job_id") or event.get("node_id"))


def _step_key(event: Event, node_at_index: dict[int, str]) -> StepKey | None:
    node_id, index = event.get("node_id", ""), event.get("step_index", 0)
    if node_id:
        return ("node", node_id)
    if index in node_at_index:
        return ("node", node_at_index[index])
    return ("step", index) if index else None


# ---- The graphs: the decision tree and the tool dependency graph --------------------------


def job_graph(plans: list[PlanSnapshot], steps: list[Step]) -> JobGraph:
    graphs = [p for p in plans if p.task_graph is not None]
    current = graphs[-1] if graphs else None
    ran = {s.node_id: s for s in steps if s.node_id}
    nodes: dict[str, GraphNode] = {}
    pairs: list[tuple[str, str]] = []
    if current is not None and current.task_graph is not None:
        for task in current.task_graph["nodes"]:
            nodes[task["id"]] = _graph_node(task, ran.get(task["id"]), in_current_plan=True)
        pairs += [(e["from_node"], e["to_node"]) for e in current.task_graph["edges"]]
    dropped: dict[str, Body] = {}  # node id -> the most recent earlier graph with it
    for earlier in reversed(graphs[:-1]):
        assert earlier.task_graph is not None
        for task in earlier.task_graph["nodes"]:
            if task["id"] in ran and task["id"] not in nodes and task["id"] not in dropped:
                dropped[task["id"]] = earlier.task_graph
                nodes[task["id"]] = _graph_node(task, ran[task["id"]], in_current_plan=False)
    for node_id, graph in dropped.items():
        pairs += [
            (e["from_node"], node_id)
            for e in graph["edges"]
            if e["to_node"] == node_id and e["from_node"] in nodes
        ]
    for node_id, step in ran.items():
        if node_id not in nodes:
            nodes[node_id] = _graph_node(None, step, in_current_plan=current is None)
    return JobGraph(
        list(nodes.values()),
        _edges(nodes, pairs, steps),
        current.plan_version if current is not None else 0,
    )


def _graph_node(task: Body | None, step: Step | None, *, in_current_plan: bool) -> GraphNode:
    state = (
        step.state
        if step is not None and step.attempts
        else ("pending" if in_current_plan and task is not None else "")
    )
    return GraphNode(
        task["id"] if task is not None else step.node_id if step else "",
        task,
        step,
        in_current_plan,
        state,
    )


def _edges(
    nodes: dict[str, GraphNode], pairs: list[tuple[str, str]], steps: list[Step]
) -> list[GraphEdge]:
    """Edges once each, with the order their target started in; counts each node's
    successors and predecessors, and its finish order."""
    started = [s.node_id for s in steps if s.node_id and s.attempts]
    start_order = {node_id: index + 1 for index, node_id in enumerate(started)}
    finished = sorted(
        (s for s in steps if s.node_id and s.last_finish >= 0), key=lambda s: s.last_finish
    )
    for index, step in enumerate(finished):
        nodes[step.node_id].finish_order = index + 1
    edges = []
    for start, end in dict.fromkeys(pairs):
        nodes[start].successors += 1
        nodes[end].predecessors += 1
        edges.append(GraphEdge(start, end, start_order.get(end, 0)))
    return edges


# ---- The header ---------------------------------------------------------------------------


def job_status(graph: JobGraph, steps: list[Step], events: list[Event]) -> str:
    """running, completed or failed, from the latest attempts of the current plan's nodes
    ("" when the events hold no runtime event)."""
    if not any(e["type"] in RUNTIME_TYPES for e in events):
        return ""
    if any(s.state == "running" for s in steps):
        return "running"
    current = [n.state for n in graph.nodes if n.in_current_plan]
    if "failed" in current:
        return "failed"
    return "completed" if current and all(s == "ok" for s in current) else "running"


def cursor(events: list[Event]) -> tuple[str, int]:
    """The node that last finished ok, and its step."""
    for event in reversed(events):
        if event["type"] == "node_finished" and event["state"] in ("", "ok"):
            return event["node_id"], event["step_index"]
    return "", 0
