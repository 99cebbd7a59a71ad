"""The trace view of one window of a trace's log: the timeline by message
sequence, the memory timeline, how each knowledge record was rated, the extraction funnel,
the evaluation failures, and the views of the agent runtime's job (jobview.py). Pure
functions of the window's events (plus the feedback records for what is deferred)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from knowhub_server.cognition.domain import (
    EVAL_STATUSES,
    EXTRACTION_STATES,
    MEMORY_TYPES,
    STATE_AFTER,
    Event,
    FeedbackRecord,
    Trace,
    event_sequence,
    split_pair,
)
from knowhub_server.cognition.jobview import JobView, build_job_view


@dataclass
class KnowledgeSummary:
    knowledge_id: str
    queried: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    feedback_deferred: int = 0
    feedback_refused: int = 0


@dataclass
class MemoryCount:
    memory_type: str
    reads: int = 0
    writes: int = 0


@dataclass
class Window:
    """The events a view is built from: one window of the log, in log order."""

    events: list[Event]
    continued: bool  # it starts after the log's first event
    next_page_token: str  # "" when it reaches the log's end

    @property
    def whole_log(self) -> bool:
        return not self.continued and not self.next_page_token


@dataclass
class TraceView:
    trace: Trace
    timeline: list[tuple[int, list[Event]]]
    memory_timeline: list[Event]
    memory_counts: list[MemoryCount]
    plan_evolution: list[Event]
    knowledge: list[KnowledgeSummary]
    funnel: dict[str, int]
    reflections: list[Event]
    pending: list[int]
    abandoned: list[int]
    evaluation_failures: list[Event]
    job: JobView
    window_events: int
    next_page_token: str


def build_view(
    trace: Trace,
    window: Window,
    feedback: dict[str, FeedbackRecord],
    pending: list[int],
    abandoned: list[int],
    *,
    job_id: str = "",
    diff_versions: tuple[int | None, int | None] = (None, None),
) -> TraceView:
    """The views of the window; `pending` and `abandoned` are of its queries."""
    events = window.events
    return TraceView(
        trace=trace,
        timeline=timeline(events),
        memory_timeline=[e for e in events if e["type"] in ("memory_read", "memory_write")],
        memory_counts=memory_counts(events),
        plan_evolution=[e for e in events if e["type"] == "plan_evolution"],
        knowledge=knowledge_summaries(events, feedback),
        funnel=extraction_funnel(events),
        reflections=[e for e in events if e["type"] == "reflection"],
        pending=pending,
        abandoned=abandoned,
        evaluation_failures=[e for e in events if e["type"] == "evaluation_failed"],
        job=build_job_view(
            trace, events, job_id, diff_versions, unknown_job_refused=window.whole_log
        ),
        window_events=len(events),
        next_page_token=window.next_page_token,
    )


def timeline(events: list[Event]) -> list[tuple[int, list[Event]]]:
    """Events grouped by the sequence (step) they belong to, steps ascending, events in
    log order. Reviews and commits join their extraction's step."""
    extraction_steps: dict[str, int] = {}
    steps: dict[int, list[Event]] = {}
    for event in events:
        sequence = event_sequence(event)
        if event["type"] == "extraction_pending":
            extraction_steps[event["extraction_id"]] = event["sequence"]
        elif event["type"] in ("extraction_reviewed", "extraction_committed"):
            sequence = extraction_steps.get(event["extraction_id"])
        if sequence is not None:
            steps.setdefault(sequence, []).append(event)
    return sorted(steps.items())


def memory_counts(events: list[Event]) -> list[MemoryCount]:
    counts = {kind: MemoryCount(kind) for kind in MEMORY_TYPES}
    for event in events:
        if event["type"] == "memory_read":
            counts[event["memory_type"]].reads += 1
        elif event["type"] == "memory_write":
            counts[event["memory_type"]].writes += 1
    return [c for c in counts.values() if c.reads or c.writes]


def knowledge_summaries(
    events: list[Event], feedback: dict[str, FeedbackRecord]
) -> list[KnowledgeSummary]:
    """Per knowledge id: how many queries returned it and how it was rated."""
    summaries: dict[str, KnowledgeSummary] = {}

    def summary(knowledge_id: str) -> KnowledgeSummary:
        return summaries.setdefault(knowledge_id, KnowledgeSummary(knowledge_id))

    for event in events:
        if event["type"] == "query":
            for knowledge_id in event["source_ids"]:
                summary(knowledge_id).queried += 1
        elif event["type"] == "evaluation":
            summary(event["knowledge_id"]).statuses[event["eval_result"]["status"]] += 1
    for pair, record in feedback.items():
        if record.feedback == "deferred":
            summary(split_pair(pair)[1]).feedback_deferred += 1
        elif record.feedback == "refused":
            summary(split_pair(pair)[1]).feedback_refused += 1
    for item in summaries.values():
        item.statuses = Counter({s: item.statuses[s] for s in EVAL_STATUSES})
    return sorted(summaries.values(), key=lambda s: s.knowledge_id)


def extraction_funnel(events: list[Event]) -> dict[str, int]:
    """saved, reviewed, and how many are in each state now."""
    states: dict[str, str] = {}
    reviewed: set[str] = set()
    for event in events:
        kind, extraction_id = event["type"], event.get("extraction_id", "")
        if kind == "extraction_pending":
            states[extraction_id] = "pending"
        elif kind == "extraction_reviewed":
            reviewed.add(extraction_id)
            states[extraction_id] = STATE_AFTER[event["decision"]]
        elif kind == "extraction_committed":
            states[extraction_id] = "committed"
    counts = Counter(states.values())
    return {
        "saved": len(states),
        "reviewed": len(reviewed),
        **{state: counts[state] for state in EXTRACTION_STATES},
    }
