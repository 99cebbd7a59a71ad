"""Plan evolution: the versions of a job's plan, read from its
plan_generated, decision_snapshot and plan_evolution events, and what changed from one
version to another.

A plan_generated or decision_snapshot event names its version, or is given one: a
decision_snapshot that carries no task graph (or the latest plan's graph again) describes
the latest version, as a runtime writes one right after each plan; anything else is the
next version. A plan_evolution event describes its version (without one: the latest
version while that has no diff_summary yet, else the next).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from knowhub_server.cognition.domain import PLAN_TYPES, Body, Event
from knowhub_server.common.base.errors import InvalidArgument

NODE_FIELDS = ("type", "tool_name", "workflow", "description")
_TEXTS = ("task_graph_summary", "reasoning_summary", "memory_summary", "plan_hash")


@dataclass
class PlanSnapshot:
    plan_version: int
    source: str  # the type of its first event
    timestamp: str
    event_ids: list[str] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # its events' places in the log
    goal: str = ""
    task_graph: Body | None = None
    task_graph_summary: str = ""
    reasoning_summary: str = ""
    memory_summary: str = ""
    memory_keys: list[str] = field(default_factory=list)
    plan_hash: str = ""
    given_diff: str = ""  # a plan_evolution's diff_summary
    diff_summary: str = ""
    diff_computed: bool = False


@dataclass
class NodeChange:
    node_id: str
    changes: list[str]


@dataclass
class PlanDiff:
    from_version: int = 0
    to_version: int = 0
    summary: str = ""
    computed: bool = False
    goal_changed: bool = False
    added_nodes: list[Body] = field(default_factory=list)
    removed_nodes: list[Body] = field(default_factory=list)
    changed_nodes: list[NodeChange] = field(default_factory=list)
    added_edges: list[Body] = field(default_factory=list)
    removed_edges: list[Body] = field(default_factory=list)


def plan_snapshots(events: list[Event]) -> list[PlanSnapshot]:
    """The plan versions the events describe, ascending, each with its diff_summary (given
    by a plan_evolution, else computed from the previous version's graph)."""
    versions: dict[int, PlanSnapshot] = {}
    latest: PlanSnapshot | None = None
    for position, event in enumerate(events):
        kind = event["type"]
        if kind in PLAN_TYPES:
            version = event["plan_version"] or _implied_version(event, latest, versions)
        elif kind == "plan_evolution":
            version = event["plan_version"] or (
                latest.plan_version
                if latest is not None and not latest.given_diff
                else max(versions, default=0) + 1
            )
        else:
            continue
        snapshot = versions.setdefault(version, PlanSnapshot(version, kind, event["timestamp"]))
        snapshot.event_ids.append(event.get("event_id", ""))
        snapshot.positions.append(position)
        _merge(snapshot, event)
        latest = snapshot
    ordered = [versions[v] for v in sorted(versions)]
    for previous, snapshot in pairwise(ordered):
        if not snapshot.given_diff and _comparable(previous, snapshot):
            snapshot.diff_summary = plan_diff(previous, snapshot).summary
            snapshot.diff_computed = True
    for snapshot in ordered:
        snapshot.diff_summary = snapshot.diff_summary or snapshot.given_diff
    return ordered


def _implied_version(
    event: Event, latest: PlanSnapshot | None, versions: dict[int, PlanSnapshot]
) -> int:
    graph = event.get("task_graph")
    if (
        event["type"] == "decision_snapshot"
        and latest is not None
        and (graph is None or graph == latest.task_graph)
    ):
        return latest.plan_version
    return max(versions, default=0) + 1


def _merge(snapshot: PlanSnapshot, event: Event) -> None:
    """What the event says about its version; later events win."""
    if event["type"] == "plan_evolution":
        snapshot.given_diff = event["diff_summary"] or snapshot.given_diff
        return
    snapshot.goal = event["goal"] or snapshot.goal
    if event.get("task_graph") is not None:
        snapshot.task_graph = event["task_graph"]
    if event["type"] == "decision_snapshot":
        for name in _TEXTS:
            setattr(snapshot, name, event[name] or getattr(snapshot, name))
        snapshot.memory_keys = event["memory_keys"] or snapshot.memory_keys


def _comparable(before: PlanSnapshot, after: PlanSnapshot) -> bool:
    return before.task_graph is not None and after.task_graph is not None


def chosen_diff(snapshots: list[PlanSnapshot], versions: tuple[int | None, int | None]) -> PlanDiff:
    """The diff between the two requested versions, or the last two; INVALID_ARGUMENT
    naming the field when only one is given or the trace has no such version."""
    start, end = versions
    if (start is None) != (end is None):
        missing = "plan_diff_to" if end is None else "plan_diff_from"
        raise InvalidArgument(missing, "is required when the other plan version is given")
    by_version = {s.plan_version: s for s in snapshots}
    if start is None or end is None:
        return plan_diff(snapshots[-2], snapshots[-1]) if len(snapshots) > 1 else PlanDiff()
    for name, version in (("plan_diff_from", start), ("plan_diff_to", end)):
        if version not in by_version:
            known = ", ".join(map(str, by_version)) or "none"
            raise InvalidArgument(name, f"the job has no plan version {version} (it has: {known})")
    return plan_diff(by_version[start], by_version[end], follows=_follows(snapshots, start, end))


def _follows(snapshots: list[PlanSnapshot], start: int, end: int) -> bool:
    versions = [s.plan_version for s in snapshots]
    return versions.index(end) == versions.index(start) + 1


def plan_diff(before: PlanSnapshot, after: PlanSnapshot, *, follows: bool = True) -> PlanDiff:
    """What changed from `before` to `after`. The summary is `after`'s given diff_summary
    when it directly follows `before` (`follows`), else computed from the graphs."""
    diff = PlanDiff(
        before.plan_version,
        after.plan_version,
        goal_changed=bool(before.goal and after.goal and before.goal != after.goal),
    )
    if _comparable(before, after):
        assert before.task_graph is not None and after.task_graph is not None
        _graph_changes(diff, before.task_graph, after.task_graph)
    if follows and after.given_diff:
        diff.summary = after.given_diff
    elif _comparable(before, after):
        diff.summary, diff.computed = describe(diff), True
    return diff


def _graph_changes(diff: PlanDiff, before: Body, after: Body) -> None:
    old = {node["id"]: node for node in before["nodes"]}
    new = {node["id"]: node for node in after["nodes"]}
    diff.added_nodes = [node for node_id, node in new.items() if node_id not in old]
    diff.removed_nodes = [node for node_id, node in old.items() if node_id not in new]
    for node_id, node in new.items():
        if node_id in old:
            changes = [
                f"{name}: {old[node_id][name] or '(none)'} -> {node[name] or '(none)'}"
                for name in NODE_FIELDS
                if old[node_id][name] != node[name]
            ]
            if changes:
                diff.changed_nodes.append(NodeChange(node_id, changes))
    old_edges = {_edge_key(e) for e in before["edges"]}
    new_edges = {_edge_key(e) for e in after["edges"]}
    diff.added_edges = [e for e in after["edges"] if _edge_key(e) not in old_edges]
    diff.removed_edges = [e for e in before["edges"] if _edge_key(e) not in new_edges]


def _edge_key(edge: Body) -> tuple[str, str]:
    return edge["from_node"], edge["to_node"]


def describe(diff: PlanDiff) -> str:
    """One line saying what changed, e.g. "added read_dashboards; removed read_metrics;
    2 edges added, 2 removed"."""
    parts = []
    if diff.goal_changed:
        parts.append("goal changed")
    if diff.added_nodes:
        parts.append("added " + ", ".join(_node_label(n) for n in diff.added_nodes))
    if diff.removed_nodes:
        parts.append("removed " + ", ".join(n["id"] for n in diff.removed_nodes))
    for change in diff.changed_nodes:
        parts.append(f"changed {change.node_id} ({'; '.join(change.changes)})")
    if diff.added_edges or diff.removed_edges:
        parts.append(f"{len(diff.added_edges)} edges added, {len(diff.removed_edges)} removed")
    return "; ".join(parts) or "no change"


def _node_label(node: Body) -> str:
    detail = node["tool_name"] or node["type"]
    return f"{node['id']} ({detail})" if detail else node["id"]
