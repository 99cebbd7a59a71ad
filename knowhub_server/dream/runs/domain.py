"""Dream runs (reflection, then integration), their schedules and the memory documents they
write: the records, their rules, and the validation of requests and of the LLM's plans."""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.scopes import validate_agent_name

PER_TRACE_REFLECT, CROSS_TRACE_INTEGRATE = "per_trace_reflect", "cross_trace_integrate"
PHASES = (PER_TRACE_REFLECT, CROSS_TRACE_INTEGRATE)
QUEUED, RUNNING, DONE, SKIPPED, FAILED = "queued", "running", "done", "skipped", "failed"
FINISHED = (DONE, SKIPPED, FAILED)
COUNTS = (
    "traces_considered",
    "traces_reflected",
    "traces_failed",
    "reflections_written",
    "reflections_integrated",
    "reflections_consumed",
    "documents_created",
    "documents_updated",
    "llm_calls",
)

# Limits, documented in the docs (docs/concepts) and in dream.proto.
TRACE_IDS_MAX = 100
ID_MAX = 128  # run and schedule ids
PAGE_SIZE_MAX, DEFAULT_PAGE_SIZE = 100, 20
EVERY_MINUTES_MAX = 366 * 24 * 60
CRON_MAX = 200
START_AHEAD_MAX_SECONDS = 366 * 86_400
SCHEDULES_PER_AGENT_MAX = 20
PATH_MAX = 200
PATH_DEPTH_MAX = 8
DOCUMENT_MAX = 50_000  # characters of a document an agent or admin writes
REPLACE, APPEND = "replace", "append"
REFLECTION_SUMMARY_MAX = 65_536  # cognition's limit of a reflection's summary
_PATH_SEGMENT = re.compile(r"(?!\.)[\w.\-]+")


# ---- Runs ----------------------------------------------------------------------------------


@dataclass
class Failure:
    """What went wrong in one phase, for one trace ("" for the agent's integration)."""

    phase: str
    trace_id: str
    reason: str


@dataclass
class DreamRun:
    run_id: str
    agent_id: str
    trace_ids: list[str]
    phases: list[str]
    # The visibility the run acts with: the requester's own traces (`user:ID`), or every
    # trace of the agent when the requester is an admin.
    requested_by: str
    sees_all: bool
    created_at: float
    schedule_id: str = ""
    status: str = QUEUED
    reason: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0
    attempts: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)

    @property
    def owner_filter(self) -> str:
        """The owner whose traces the run reads; "" for every owner."""
        return "" if self.sees_all else self.requested_by

    def definition(self) -> str:
        """The parts fixed at creation, as stored."""
        return json.dumps(
            {
                "agent_id": self.agent_id,
                "trace_ids": self.trace_ids,
                "phases": self.phases,
                "requested_by": self.requested_by,
                "sees_all": self.sees_all,
                "created_at": self.created_at,
                "schedule_id": self.schedule_id,
            },
            separators=(",", ":"),
        )


def new_run(
    agent_id: str,
    trace_ids: list[str],
    phases: list[str],
    requested_by: str,
    sees_all: bool,
    at: float,
    schedule_id: str = "",
) -> DreamRun:
    return DreamRun(
        run_id=f"dream-{uuid.uuid4().hex}",
        agent_id=agent_id,
        trace_ids=trace_ids,
        phases=phases,
        requested_by=requested_by,
        sees_all=sees_all,
        created_at=at,
        schedule_id=schedule_id,
    )


def run_from_fields(run_id: str, fields: dict[str, str]) -> DreamRun:
    """A run from its stored hash: the definition, then the status fields."""
    run = DreamRun(run_id=run_id, **json.loads(fields["definition"]))
    run.status = fields.get("status", QUEUED)
    run.reason = fields.get("reason", "")
    run.started_at = float(fields.get("started_at", 0))
    run.finished_at = float(fields.get("finished_at", 0))
    run.attempts = int(fields.get("attempts", 0))
    run.counts = {name: int(fields.get(f"count:{name}", 0)) for name in COUNTS}
    run.failures = [Failure(**f) for f in json.loads(fields.get("failures", "[]"))]
    return run


def summary_reason(failures: list[Failure]) -> str:
    """One line for a failed run: how many parts failed and the first reason."""
    first = failures[0]
    where = f"trace {first.trace_id}" if first.trace_id else "the agent"
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return f"{first.phase} failed for {where}: {first.reason}{more}"


# ---- Phase 1: what a reflection reads --------------------------------------------------------

# The events a reflection reads: the messages, and the query, evaluation and extraction
# events.
REFLECTED_TYPES = [
    "message",
    "query",
    "evaluation",
    "extraction_pending",
    "extraction_reviewed",
    "extraction_committed",
]


@dataclass
class Stretch:
    """The sequences [start, end] of a trace that one reflection covers, and its lines."""

    start: int
    end: int
    lines: list[str]


def event_steps(events: list[dict[str, Any]]) -> list[int | None]:
    """The message sequence each event belongs to: its own, its query's (evaluations) or
    its extraction's (reviews and commits; None when that is unknown)."""
    extractions = {
        e["extraction_id"]: e["sequence"] for e in events if e["type"] == "extraction_pending"
    }
    steps: list[int | None] = []
    for event in events:
        kind = event["type"]
        if kind in ("message", "query", "extraction_pending"):
            steps.append(event["sequence"])
        elif kind == "evaluation":
            steps.append(event["query_sequence"])
        else:
            steps.append(extractions.get(event.get("extraction_id", "")))
    return steps


def stretches(
    lines: list[tuple[int | None, str]], reflected: int, last: int, budget: int
) -> list[Stretch]:
    """The lines of the steps after `reflected` up to `last`, in step order, cut into
    stretches of about `budget` characters (a longer step is cut short); the stretches
    cover reflected+1 to `last` without gaps."""
    wanted = sorted(
        ((s, t) for s, t in lines if s is not None and reflected < s <= last),
        key=lambda item: item[0],
    )
    found: list[Stretch] = []
    current: list[str] = []
    start, size, previous = reflected + 1, 0, reflected
    for step, group in groupby(wanted, key=lambda item: item[0]):
        texts = [t for _, t in group]
        length = sum(len(t) + 1 for t in texts)
        if current and size + length > budget:
            found.append(Stretch(start, previous, current))
            start, current, size = previous + 1, [], 0
        if length > budget:
            texts, length = ["\n".join(texts)[:budget] + " …[cut]"], budget
        current += texts
        size += length
        previous = step
    found.append(Stretch(start, last, current))
    return found


# ---- Phase 2: the reflections an integration reads ------------------------------------------


@dataclass
class Reflection:
    trace_id: str
    owner: str  # of its trace: each owner names its own traces
    event_id: str
    start: int
    end: int
    summary: str
    timestamp: float


def unconsumed(trace_id: str, owner: str, events: list[dict[str, Any]]) -> list[Reflection]:
    return [
        Reflection(
            trace_id,
            owner,
            e["event_id"],
            e["sequence_range"][0],
            e["sequence_range"][1],
            e["summary"],
            e["timestamp"],
        )
        for e in events
        if e["type"] == "reflection" and not e.get("consumed_at")
    ]


def integration_batch(reflections: list[Reflection], limit: int, budget: int) -> list[Reflection]:
    """The oldest reflections, at most `limit` and about `budget` characters (at least
    one)."""
    batch: list[Reflection] = []
    size = 0
    for reflection in sorted(reflections, key=lambda r: (r.timestamp, r.event_id)):
        if batch and (len(batch) == limit or size + len(reflection.summary) > budget):
            break
        batch.append(reflection)
        size += len(reflection.summary)
    return batch


# ---- Schedules -----------------------------------------------------------------------------


@dataclass
class Schedule:
    schedule_id: str
    agent_id: str
    phases: list[str]
    requested_by: str
    sees_all: bool
    created_at: float
    start_time: float  # no slot before it
    every_minutes: int = 0
    cron: str = ""
    time_zone: str = "UTC"

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Schedule:
        return cls(**json.loads(raw))

    def latest_slot(self, now: float) -> float | None:
        """The latest time at or before `now` the schedule fires at, if any."""
        if now < self.start_time:
            return None
        if self.every_minutes:
            period = self.every_minutes * 60
            return self.start_time + math.floor((now - self.start_time) / period) * period
        # Slots are whole minutes, and cron looks strictly before its start: start at the
        # next whole second to find a slot at `now` itself.
        slot = _cron_slot(self.cron, self.time_zone, math.floor(now) + 1, reverse=True)
        return slot if slot is not None and slot >= self.start_time else None

    def next_slot(self, after: float) -> float | None:
        """The first time after `after` the schedule fires at."""
        if after < self.start_time:
            after = self.start_time - 1e-6
        if self.every_minutes:
            period = self.every_minutes * 60
            return self.start_time + (math.floor((after - self.start_time) / period) + 1) * period
        return _cron_slot(self.cron, self.time_zone, after, reverse=False)


def same_schedule(a: Schedule, b: Schedule, compare_start: bool) -> bool:
    """Whether two schedules of one agent and requester fire alike: cadence, time zone and
    phases (and start time when `compare_start`)."""
    return (a.every_minutes, a.cron, a.time_zone, sorted(a.phases)) == (
        b.every_minutes,
        b.cron,
        b.time_zone,
        sorted(b.phases),
    ) and (not compare_start or a.start_time == b.start_time)


def next_run(schedule: Schedule, fired: Fired | None, at: float) -> float | None:
    """When the schedule runs next: its due slot if that has not fired yet (the next tick
    fires it), else its first slot after `at`."""
    due = schedule.latest_slot(at)
    if due is not None and (fired is None or due > fired.slot):
        return due
    return schedule.next_slot(at)


def _cron_slot(expression: str, time_zone: str, start: float, *, reverse: bool) -> float | None:
    """The first minute the expression names strictly after (or before) `start`, in the
    time zone's wall clock; a minute that a clock change skips fires when the clock
    resumes, as cron does."""
    moment = datetime.fromtimestamp(start, ZoneInfo(time_zone))
    found = next(CronSim(expression, moment, reverse=reverse), None)
    return found.timestamp() if found is not None else None


def validate_cron(expression: str, field: str = "cron") -> str:
    """Five fields, `minute hour day-of-month month day-of-week` (numbers, ranges, steps,
    lists, month and weekday names; both day fields restricted match either day)."""
    check.text(expression, field, CRON_MAX)
    fields = expression.split()
    if len(fields) != 5:
        raise InvalidArgument(
            field,
            f"{expression[:100]!r} has {len(fields)} fields; a cron "
            "expression has 5: minute hour day-of-month month day-of-week",
        )
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as error:
        raise InvalidArgument(
            field,
            f"{expression[:100]!r}: {str(error).lower()} (a "
            "field is outside its range, malformed, or names a day that "
            "never comes)",
        ) from None
    return expression


def new_schedule_id() -> str:
    return f"schedule-{uuid.uuid4().hex[:16]}"


@dataclass
class Fired:
    """The last slot a schedule fired, and the run it created."""

    slot: float
    run_id: str


# ---- Memory documents ----------------------------------------------------------------------


@dataclass
class MemoryDocument:
    agent_id: str
    path: str
    content: str
    revision: int
    updated_at: float
    run_id: str
    written_by: str = ""  # `user:ID` for WriteMemoryDocument, empty for dream


@dataclass
class DocumentRevision:
    """A document as it was before an update replaced it."""

    document: MemoryDocument
    replaced_at: float


@dataclass
class DocumentUpdate:
    path: str
    new_content: str


class PlanRefused(Exception):
    """The integration plan breaks a rule; `reasons` names each entry at fault."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def path_problem(path: object) -> str:
    """Why `path` is no document path inside the agent's memory namespace ("" if it is
    one): relative, `/`-separated segments of letters, digits, `_ - .` (not starting with
    a dot), no `..`, at most 200 characters and 8 segments."""
    if not isinstance(path, str) or not path:
        return "must be a non-empty string"
    if path.startswith(("/", "~")) or "\\" in path or ":" in path:
        return f"{path[:80]!r} is outside the agent's memory namespace (an absolute path)"
    segments = path.split("/")
    if ".." in segments:
        return f"{path[:80]!r} leaves the agent's memory namespace ('..')"
    if len(path) > PATH_MAX or len(segments) > PATH_DEPTH_MAX:
        return f"{path[:80]!r} is longer than {PATH_MAX} characters or {PATH_DEPTH_MAX} segments"
    for segment in segments:
        if not _PATH_SEGMENT.fullmatch(segment):
            return (
                f"{path[:80]!r}: segment {segment!r} may hold only letters, digits and "
                "_ - . and must not be empty or start with a dot"
            )
    return ""


def validate_plan(
    plan: Any,
    current: dict[str, MemoryDocument],
    *,
    max_updates: int,
    max_chars: int,
    max_documents: int,
) -> list[DocumentUpdate]:
    """The updates of an LLM's {"updates": [{"path", "new_content"}]} that change a
    document. Raises ValueError when the reply is not such a plan, PlanRefused (with every
    reason) when any entry breaks a rule: the whole plan is refused then."""
    updates = plan.get("updates") if isinstance(plan, dict) else None
    if not isinstance(updates, list):
        raise ValueError('the reply is not a plan {"updates": [{"path", "new_content"}]}')
    reasons = []
    if len(updates) > max_updates:
        reasons.append(f"updates: {len(updates)} entries; a plan makes at most {max_updates}")
    accepted: dict[str, DocumentUpdate] = {}
    for index, entry in enumerate(updates):
        where = f"updates[{index}]"
        if not isinstance(entry, dict):
            reasons.append(f"{where}: must be an object with path and new_content")
            continue
        path, content = entry.get("path"), entry.get("new_content")
        problem = path_problem(path)
        if problem:
            reasons.append(f"{where}.path: {problem}")
        elif path in accepted:
            reasons.append(f"{where}.path: {path!r} is updated twice")
        if not isinstance(content, str) or not content.strip():
            reasons.append(f"{where}.new_content: must be a non-empty string")
        elif len(content) > max_chars or "\x00" in content:
            reasons.append(
                f"{where}.new_content: {len(content)} characters; a document "
                f"holds at most {max_chars} (and no NUL)"
            )
        if not problem and isinstance(content, str) and isinstance(path, str):
            accepted[path] = DocumentUpdate(path, content)
    created = [p for p in accepted if p not in current]
    if len(current) + len(created) > max_documents:
        reasons.append(
            f"updates: would make {len(current) + len(created)} documents; an "
            f"agent holds at most {max_documents}"
        )
    if reasons:
        raise PlanRefused(reasons)
    return [
        u
        for u in accepted.values()
        if u.path not in current or current[u.path].content != u.new_content
    ]


# ---- Request validation ----------------------------------------------------------------------


def validate_agent_id(value: str, field_name: str = "agent_id") -> str:
    return validate_agent_name(value, field_name)


def validate_phases(phases: list[str]) -> list[str]:
    """The phases asked for, in the order they run; both when none are named."""
    check.items(phases, "phases", len(PHASES))
    return [p for p in PHASES if p in phases] if phases else list(PHASES)


def validate_time_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidArgument(
            "time_zone", f"{value[:60]!r} is not an IANA time zone (e.g. UTC, Asia/Shanghai)"
        ) from None
    return value


def validate_cadence(every_minutes: int, cron_expression: str, time_zone: str) -> None:
    """Exactly one of every_minutes and cron; a time zone only with cron."""
    if bool(every_minutes) == bool(cron_expression):
        raise InvalidArgument("every_minutes", "give exactly one of every_minutes and cron")
    if every_minutes:
        check.int_range(every_minutes, "every_minutes", 1, EVERY_MINUTES_MAX)
        if time_zone:
            raise InvalidArgument("time_zone", "applies to cron expressions only")
        return
    validate_cron(cron_expression)
    validate_time_zone(time_zone or "UTC")


def outbox_key(reflection: Reflection) -> str:
    """How the integration outbox names a reflection's trace: "owner/trace_id"."""
    return f"{reflection.owner}/{reflection.trace_id}"


def outbox_trace(key: str, requested_by: str) -> tuple[str, str]:
    """(owner, trace_id) of an outbox key; a key written before traces were named per
    owner is a bare trace id of the run's requester."""
    owner, _, trace_id = key.rpartition("/")
    return owner or requested_by, trace_id
