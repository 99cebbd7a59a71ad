"""Cognition events, traces and extractions: their rules and input validation.

An event is a dict in the log file's JSON shape: {"type": ..., <the type's fields>,
"timestamp": ISO 8601}, plus "event_id" once stored. Validators take the body (the type's
fields, every field present) and return it normalized.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.scopes import ENTITY_ID_RULE, is_valid_entity_id
from knowhub_server.common.llm.chat import LLMError, parse_json_reply
from knowhub_server.common.security.auth import Principal

Event = dict[str, Any]
Body = dict[str, Any]

# An agent runtime's events (trace-event-schema v0.9): what each node of a job did.
STEP_TYPES = (
    "node_started",
    "node_finished",
    "agent_thought_recorded",
    "decision_made",
    "tool_selected",
    "tool_result_summarized",
)
PLAN_TYPES = ("plan_generated", "decision_snapshot")
RUNTIME_TYPES = STEP_TYPES + PLAN_TYPES
EVENT_TYPES = (
    "query",
    "evaluation",
    "extraction_pending",
    "extraction_reviewed",
    "extraction_committed",
    "reflection",
    "memory_read",
    "memory_write",
    "plan_evolution",
    "message",
    *RUNTIME_TYPES,
    "feedback_refused",
    "evaluation_failed",
)
# What AppendEvents takes; evaluations and extractions go through their own RPCs, which
# keep the knowledge and the review state in step with the log.
APPENDABLE_TYPES = (
    "query",
    "message",
    "reflection",
    "memory_read",
    "memory_write",
    "plan_evolution",
    *RUNTIME_TYPES,
)
EVAL_STATUSES = ("helpful", "harmful", "neutral", "unused", "irrelevant")
COUNTED_STATUSES = ("helpful", "harmful")  # the ones that change knowledge counters
TRIGGERS = ("goal_completion", "compression", "task_completion")
DECISIONS = ("approve", "edit", "discard")
STATE_AFTER = {"approve": "approved", "edit": "edited", "discard": "discarded"}
EXTRACTION_STATES = ("pending", "approved", "edited", "discarded", "committed")
COMMITTABLE_STATES = ("approved", "edited")
MEMORY_TYPES = ("working", "long_term", "episodic")
ROLES = ("system", "user", "assistant", "tool")
NODE_STATES = ("ok", "failed", "retryable")  # node_finished's; empty means ok

# Limits, documented in the docs (docs/concepts) and in cognition.proto.
MAX_SEQUENCE = 2**53 - 1  # sequences stay exact through JSON and Lua numbers
QUERY_TEXT_MAX = 4_000
TASK_TEXT_MAX = 4_000
SOURCE_TASK_MAX = 2_000
SOURCE_CONTENT_KEPT = 500  # sources are logged with their content cut to 500
SOURCES_MAX = 100
LONG_TEXT_MAX = 65_536
MESSAGE_MAX = 262_144
KEY_OR_SCOPE_MAX = 1_024
SUMMARY_MAX = 4_000
ATTEMPT_MAX = 1_000_000
TASK_NODES_MAX = 500
TASK_EDGES_MAX = 2_000
MEMORY_KEYS_MAX = 100
EVENTS_PER_CALL_MAX = 500
IDS_PER_CALL_MAX = 500
RAW_TEXT_MAX = 1_000_000
QUERY_EVALUATIONS_MAX = 100
ASSESSMENTS_MAX = 1_000
ANSWER_EXCERPT_MAX = 1_000  # of an unreadable evaluation answer, kept in the log
FAILED_QUERIES_KEPT = 500  # pending queries an evaluation_failed event names
DELIVERIES_MAX = 1_000_000
LOG_PAGE_MAX, DEFAULT_LOG_PAGE = 1_000, 100
# A trace view or an export covers one window of the log: at most this many events, and
# the events of at most this many bytes (as stored; at least one event), so a call's work
# and memory stay bounded however long the trace.
VIEW_WINDOW_MAX, DEFAULT_VIEW_WINDOW = 5_000, 1_000
EXPORT_PAGE_MAX, DEFAULT_EXPORT_PAGE = 5_000, 1_000
WINDOW_BYTES_MAX = 2 * 1024 * 1024
LIST_PAGE_MAX, DEFAULT_LIST_PAGE = 100, 20
DEFAULT_GROUP = "evaluators"

_ISO_TIME = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(\.\d+)?(Z|z|[+-]\d\d:\d\d)?")


@dataclass(frozen=True)
class TraceRef:
    """A trace as stored: each owner (`user:ID`) names its own traces, so two users may
    each have a `trace-1`. `key` ("user:ID/trace-1") names it in Redis; "/" is in neither
    an owner nor a trace id."""

    owner: str
    trace_id: str

    @property
    def key(self) -> str:
        return f"{self.owner}/{self.trace_id}"

    @classmethod
    def of_key(cls, key: str) -> TraceRef:
        owner, _, trace_id = key.partition("/")
        return cls(owner, trace_id)


@dataclass
class Trace:
    trace_id: str
    owner: str
    agent_id: str = ""
    task: str = ""
    last_sequence: int = 0
    reflected_at_sequence: int = 0
    auto_commit: bool = False
    event_count: int = 0
    pending_evaluations: int = 0
    unconsumed_reflections: int = 0
    last_trigger: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    abandoned_evaluations: int = 0  # pending queries an evaluator gave up on

    @property
    def ref(self) -> TraceRef:
        return TraceRef(self.owner, self.trace_id)


@dataclass
class Extraction:
    trace_id: str
    owner: str
    extraction_id: str
    state: str
    sequence: int
    goal_id: str
    branch_id: str
    payload: Body
    edited_payload: Body | None
    decision: str
    knowledge_id: str
    created_at: float
    reviewed_at: float
    committed_at: float

    @property
    def commit_payload(self) -> Body:
        """What a commit saves: the edited payload when the latest review is an edit."""
        return (
            self.edited_payload if self.decision == "edit" and self.edited_payload else self.payload
        )


@dataclass(frozen=True)
class Assessment:
    """One knowledge id of one query, as the evaluator rated it."""

    query_sequence: int
    knowledge_id: str
    status: str
    reason: str
    field: str  # where it came from in the request, for error messages
    query_field: str  # where its query_sequence came from


@dataclass
class CommitFailure:
    """Why one extraction was not committed."""

    extraction_id: str
    code: str
    message: str


@dataclass
class Committed:
    """One committed extraction and the knowledge it became."""

    extraction_id: str
    knowledge_id: str
    linked: bool = False  # the knowledge already existed: linked, nothing saved


@dataclass
class FeedbackRecord:
    """Where one evaluated (query_sequence, knowledge_id) pair stands."""

    status: str
    reason: str
    feedback: str  # none, deferred, applied, refused or imported
    detail: str = ""


def iso_seconds(value: str) -> float:
    """Seconds since the epoch of an ISO 8601 time such as
    "2026-03-20T10:00:00" (UTC when it names no zone). Raises ValueError."""
    match = _ISO_TIME.fullmatch(value.strip())
    if not match:
        raise ValueError(f"{value[:40]!r} is not an ISO 8601 time")
    day_time, fraction, zone = match.groups()
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    zone = "+00:00" if zone in (None, "Z", "z") else zone
    return datetime.fromisoformat(f"{day_time}.{micros}{zone}").timestamp()


def pair_key(query_sequence: int, knowledge_id: str) -> str:
    """An evaluated pair as stored: "sequence|knowledge_id"."""
    return f"{query_sequence}|{knowledge_id}"


def split_pair(pair: str) -> tuple[int, str]:
    sequence, _, knowledge_id = pair.partition("|")
    return int(sequence), knowledge_id


# ---- Ids ---------------------------------------------------------------------------------


def validate_entity_name(value: str, field: str) -> str:
    """Group, consumer and extraction ids: an entity id (no colon)."""
    if not is_valid_entity_id(value):
        raise InvalidArgument(field, f"{value[:140]!r} must be {ENTITY_ID_RULE}")
    return value


def new_extraction_id(trace_id: str, request_id: str) -> str:
    """`pending-{16 hex}`: derived from the request id when there is one, so a retried
    save names the same extraction."""
    if request_id:
        digest = hashlib.sha256(f"{trace_id}\n{request_id}".encode()).hexdigest()
        return f"pending-{digest[:16]}"
    return f"pending-{secrets.token_hex(8)}"


def bounded_request_id(kind: str, *parts: object) -> str:
    """A deterministic idempotency key for a call to the knowledge service, readable when
    it fits the knowledge service's 256 characters, else hashed."""
    readable = ":".join([kind, *map(str, parts)])
    if len(readable) <= check.NAME_MAX:
        return readable
    return f"{kind}:sha256:{hashlib.sha256(readable.encode()).hexdigest()}"


def _trace_in_request_id(ref: TraceRef, caller: str) -> str:
    """How a request id to the knowledge service names a trace: by its id for its owner's
    own calls (the ids keys had before traces were named per owner), by owner and id for
    another caller's, whose keys would otherwise meet for two owners' `trace-1`."""
    return ref.trace_id if caller == ref.owner else ref.key


def evaluation_request_id(
    ref: TraceRef, caller: str, query_sequence: int, knowledge_id: str
) -> str:
    return bounded_request_id(
        "eval", _trace_in_request_id(ref, caller), query_sequence, knowledge_id
    )


def extraction_request_id(ref: TraceRef, caller: str, extraction_id: str) -> str:
    return bounded_request_id("extraction", _trace_in_request_id(ref, caller), extraction_id)


# ---- Event validation --------------------------------------------------------------------


def validate_event(event_type: str, body: Body, prefix: str) -> Body:
    """The body of one event, checked and normalized; raises InvalidArgument naming the
    field as `<prefix>.<type>.<field>`."""
    return _VALIDATORS[event_type](body, f"{prefix}.{event_type}")


def validate_extraction(body: Body) -> Body:
    """The fields of a SavePendingExtraction request (named as the request names them)."""
    return _extraction_pending(body, "")


def _at(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _sequence(value: int, field: str) -> int:
    if not 0 <= value <= MAX_SEQUENCE:
        raise InvalidArgument(field, f"must be between 0 and {MAX_SEQUENCE}, got {value}")
    return value


def one_of(value: str, allowed: tuple[str, ...], field: str, *, required: bool = True) -> str:
    if not value and not required:
        return value
    if value not in allowed:
        raise InvalidArgument(field, f"{value[:60]!r} is not one of {', '.join(allowed)}")
    return value


def choices(values: list[str], allowed: tuple[str, ...], field: str) -> list[str]:
    """A filter list: each value one of `allowed`, no repeats."""
    check.items(values, field, len(allowed))
    for index, value in enumerate(values):
        one_of(value, allowed, f"{field}[{index}]")
    return values


def objects(value: object, field: str, problem: str) -> list[tuple[str, dict[str, Any]]]:
    """A JSON list of objects, each with where it stands (`field[i]`)."""
    if not isinstance(value, list):
        raise InvalidArgument(field, "must be a list")
    found = []
    for index, item in enumerate(value):
        where = f"{field}[{index}]"
        if not isinstance(item, dict):
            raise InvalidArgument(where, problem)
        found.append((where, item))
    return found


def _name(value: str, field: str, *, required: bool = False) -> str:
    return check.text(value, field, check.NAME_MAX, required=required)


def _query(body: Body, p: str) -> Body:
    _sequence(body["sequence"], _at(p, "sequence"))
    _name(body["goal_id"], _at(p, "goal_id"))
    check.text(body["query"], _at(p, "query"), QUERY_TEXT_MAX, required=True)
    check.text(body["response"], _at(p, "response"), LONG_TEXT_MAX)
    check.items(body["source_ids"], _at(p, "source_ids"), SOURCES_MAX)
    for index, value in enumerate(body["source_ids"]):
        _name(value, _at(p, f"source_ids[{index}]"), required=True)
    check.count(len(body["sources"]), _at(p, "sources"), SOURCES_MAX)
    for index, source in enumerate(body["sources"]):
        where = _at(p, f"sources[{index}]")
        _name(source["id"], f"{where}.id", required=True)
        check.text(source["task"], f"{where}.task", SOURCE_TASK_MAX)
        source["content"] = check.text(
            source["content"][:SOURCE_CONTENT_KEPT], f"{where}.content", SOURCE_CONTENT_KEPT
        )
        if body["source_ids"] and source["id"] not in body["source_ids"]:
            raise InvalidArgument(f"{where}.id", f"{source['id']!r} is not in source_ids")
    if not body["source_ids"]:
        body["source_ids"] = list(dict.fromkeys(s["id"] for s in body["sources"]))
    return body


def _evaluation(body: Body, p: str) -> Body:
    _sequence(body["query_sequence"], _at(p, "query_sequence"))
    _name(body["knowledge_id"], _at(p, "knowledge_id"), required=True)
    result = body.get("eval_result") or {"status": "", "reason": ""}
    one_of(result.get("status", ""), EVAL_STATUSES, _at(p, "eval_result.status"))
    check.text(result.get("reason", ""), _at(p, "eval_result.reason"), check.CASE_TEXT_MAX)
    body["eval_result"] = {"status": result["status"], "reason": result.get("reason", "")}
    one_of(body["evaluated_at_trigger"], TRIGGERS, _at(p, "evaluated_at_trigger"), required=False)
    return body


def _feedback_refused(body: Body, p: str) -> Body:
    _sequence(body["query_sequence"], _at(p, "query_sequence"))
    _name(body["knowledge_id"], _at(p, "knowledge_id"), required=True)
    one_of(body["status"], COUNTED_STATUSES, _at(p, "status"))
    _name(body["code"], _at(p, "code"), required=True)
    check.text(body["message"], _at(p, "message"), check.CASE_TEXT_MAX)
    return body


def _evaluation_failed(body: Body, p: str) -> Body:
    check.count(len(body["query_sequences"]), _at(p, "query_sequences"), FAILED_QUERIES_KEPT)
    for index, sequence in enumerate(body["query_sequences"]):
        _sequence(sequence, _at(p, f"query_sequences[{index}]"))
    check.text(body["reason"], _at(p, "reason"), SUMMARY_MAX)
    check.text(body["answer_excerpt"], _at(p, "answer_excerpt"), ANSWER_EXCERPT_MAX)
    _name(body["trigger_id"], _at(p, "trigger_id"))
    check.int_range(body["deliveries"], _at(p, "deliveries"), 0, DELIVERIES_MAX)
    return body


def _extraction_pending(body: Body, p: str) -> Body:
    validate_entity_name(body["extraction_id"], _at(p, "extraction_id"))
    _sequence(body["sequence"], _at(p, "sequence"))
    _name(body["goal_id"], _at(p, "goal_id"))
    _name(body["branch_id"], _at(p, "branch_id"))
    if not body.get("payload"):
        raise InvalidArgument(_at(p, "payload"), "is required")
    # Its fields are the knowledge service's to check (KnowledgeClient.resolve).
    return body


def _extraction_reviewed(body: Body, p: str) -> Body:
    validate_entity_name(body["extraction_id"], _at(p, "extraction_id"))
    validate_review(body["decision"], body.get("edited_payload"), p)
    return body


def _extraction_committed(body: Body, p: str) -> Body:
    validate_entity_name(body["extraction_id"], _at(p, "extraction_id"))
    _name(body["knowledge_id"], _at(p, "knowledge_id"), required=True)
    return body


def _reflection(body: Body, p: str) -> Body:
    span = body["sequence_range"]
    if len(span) != 2:
        raise InvalidArgument(
            _at(p, "sequence_range"), f"needs exactly [start, end], got {len(span)} values"
        )
    if not 0 <= span[0] <= span[1]:
        raise InvalidArgument(_at(p, "sequence_range"), f"needs 0 <= start <= end, got {span}")
    check.text(body["summary"], _at(p, "summary"), LONG_TEXT_MAX, required=True)
    return body


def _memory(body: Body, p: str) -> Body:
    one_of(body["memory_type"], MEMORY_TYPES, _at(p, "memory_type"))
    check.text(body["key_or_scope"], _at(p, "key_or_scope"), KEY_OR_SCOPE_MAX)
    check.text(body["summary"], _at(p, "summary"), SUMMARY_MAX)
    _place(body, p)
    return body


def _plan_evolution(body: Body, p: str) -> Body:
    _sequence(body["plan_version"], _at(p, "plan_version"))
    check.text(body["diff_summary"], _at(p, "diff_summary"), LONG_TEXT_MAX)
    _name(body["job_id"], _at(p, "job_id"))
    return body


# ---- Runtime events (trace-event-schema v0.9) ----------------------------------------------


def _place(body: Body, p: str, *, node_required: bool = False) -> None:
    """The job, node and step an event names."""
    _name(body["job_id"], _at(p, "job_id"))
    _name(body["node_id"], _at(p, "node_id"), required=node_required)
    _sequence(body["step_index"], _at(p, "step_index"))


def _attempt(value: int, field: str) -> int:
    return check.int_range(value, field, 0, ATTEMPT_MAX)


def _node_started(body: Body, p: str) -> Body:
    _place(body, p, node_required=True)
    _attempt(body["attempt"], _at(p, "attempt"))
    _name(body["worker_id"], _at(p, "worker_id"))
    return body


def _node_finished(body: Body, p: str) -> Body:
    _place(body, p, node_required=True)
    body["state"] = one_of(body["state"] or "ok", NODE_STATES, _at(p, "state"))
    _attempt(body["attempt"], _at(p, "attempt"))
    _sequence(body["duration_ms"], _at(p, "duration_ms"))
    check.text(body["reason"], _at(p, "reason"), SUMMARY_MAX)
    return body


def _agent_thought(body: Body, p: str) -> Body:
    _place(body, p)
    check.text(body["content"], _at(p, "content"), LONG_TEXT_MAX, required=True)
    _name(body["role"], _at(p, "role"))
    return body


def _decision_made(body: Body, p: str) -> Body:
    _place(body, p)
    check.text(body["content"], _at(p, "content"), LONG_TEXT_MAX, required=True)
    _name(body["kind"], _at(p, "kind"))
    return body


def _tool_selected(body: Body, p: str) -> Body:
    _place(body, p)
    _name(body["tool_name"], _at(p, "tool_name"), required=True)
    check.text(body["reason"], _at(p, "reason"), SUMMARY_MAX)
    check.text(body["input_summary"], _at(p, "input_summary"), LONG_TEXT_MAX)
    return body


def _tool_result(body: Body, p: str) -> Body:
    _place(body, p, node_required=True)
    _name(body["tool_name"], _at(p, "tool_name"), required=True)
    check.text(body["summary"], _at(p, "summary"), LONG_TEXT_MAX)
    check.text(body["error"], _at(p, "error"), SUMMARY_MAX)
    _name(body["external_id"], _at(p, "external_id"))
    return body


def _plan(body: Body, p: str) -> None:
    """The fields plan_generated and decision_snapshot share."""
    _name(body["job_id"], _at(p, "job_id"))
    _sequence(body["plan_version"], _at(p, "plan_version"))
    check.text(body["goal"], _at(p, "goal"), TASK_TEXT_MAX)
    graph = body.get("task_graph")
    if graph is not None:
        body["task_graph"] = validate_task_graph(graph, _at(p, "task_graph"))


def _plan_generated(body: Body, p: str) -> Body:
    _plan(body, p)
    return body


def _decision_snapshot(body: Body, p: str) -> Body:
    _plan(body, p)
    for name in ("task_graph_summary", "reasoning_summary", "memory_summary"):
        check.text(body[name], _at(p, name), LONG_TEXT_MAX)
    check.items(body["memory_keys"], _at(p, "memory_keys"), MEMORY_KEYS_MAX)
    for index, key in enumerate(body["memory_keys"]):
        check.text(key, _at(p, f"memory_keys[{index}]"), KEY_OR_SCOPE_MAX, required=True)
    _name(body["plan_hash"], _at(p, "plan_hash"))
    return body


def validate_task_graph(graph: Body, field: str) -> Body:
    """Nodes with unique ids; edges between two of them, each once, without a cycle."""
    nodes, edges = graph.get("nodes", []), graph.get("edges", [])
    check.count(len(nodes), f"{field}.nodes", TASK_NODES_MAX)
    check.count(len(edges), f"{field}.edges", TASK_EDGES_MAX)
    ids: set[str] = set()
    for index, node in enumerate(nodes):
        where = f"{field}.nodes[{index}]"
        _name(node["id"], f"{where}.id", required=True)
        if node["id"] in ids:
            raise InvalidArgument(f"{where}.id", f"repeats node {node['id']!r}")
        ids.add(node["id"])
        for name in ("type", "tool_name", "workflow"):
            _name(node[name], f"{where}.{name}")
        check.text(node["description"], f"{where}.description", SUMMARY_MAX)
    successors: dict[str, set[str]] = {node_id: set() for node_id in ids}
    for index, edge in enumerate(edges):
        where = f"{field}.edges[{index}]"
        start, end = edge["from_node"], edge["to_node"]
        for name, node_id in (("from_node", start), ("to_node", end)):
            if node_id not in ids:
                raise InvalidArgument(
                    f"{where}.{name}", f"{node_id[:60]!r} is not a node of the graph"
                )
        if end in successors[start]:
            raise InvalidArgument(where, f"repeats the edge {start!r} -> {end!r}")
        if start == end or _reaches(successors, end, start):
            raise InvalidArgument(where, f"the edge {start!r} -> {end!r} closes a cycle")
        successors[start].add(end)
    return {"nodes": nodes, "edges": edges}


def _reaches(successors: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether `goal` can be reached from `start` along the edges so far."""
    seen, frontier = {start}, [start]
    while frontier:
        for following in successors[frontier.pop()]:
            if following == goal:
                return True
            if following not in seen:
                seen.add(following)
                frontier.append(following)
    return False


def _message(body: Body, p: str) -> Body:
    _sequence(body["sequence"], _at(p, "sequence"))
    one_of(body["role"], ROLES, _at(p, "role"))
    check.text(body["content"], _at(p, "content"), MESSAGE_MAX)
    return body


_VALIDATORS: dict[str, Callable[[Body, str], Body]] = {
    "query": _query,
    "evaluation": _evaluation,
    "extraction_pending": _extraction_pending,
    "extraction_reviewed": _extraction_reviewed,
    "extraction_committed": _extraction_committed,
    "reflection": _reflection,
    "memory_read": _memory,
    "memory_write": _memory,
    "plan_evolution": _plan_evolution,
    "message": _message,
    "node_started": _node_started,
    "node_finished": _node_finished,
    "agent_thought_recorded": _agent_thought,
    "decision_made": _decision_made,
    "tool_selected": _tool_selected,
    "tool_result_summarized": _tool_result,
    "plan_generated": _plan_generated,
    "decision_snapshot": _decision_snapshot,
    "feedback_refused": _feedback_refused,
    "evaluation_failed": _evaluation_failed,
}


def event_sequence(event: Event) -> int | None:
    """The message sequence (step) an event belongs to, if it names one directly. A memory
    event's step is a message sequence unless it names a runtime job or node."""
    kind = event["type"]
    sequence: int | None = None
    if kind in ("query", "message", "extraction_pending"):
        sequence = event["sequence"]
    elif kind in ("evaluation", "feedback_refused"):
        sequence = event["query_sequence"]
    elif (
        kind in ("memory_read", "memory_write")
        and event["step_index"]
        and not (event.get("job_id") or event.get("node_id"))
    ):
        sequence = event["step_index"]
    return sequence


def validate_review(decision: str, edited_payload: Body | None, prefix: str) -> None:
    one_of(decision, DECISIONS, _at(prefix, "decision"))
    field = _at(prefix, "edited_payload")
    if decision == "edit" and not edited_payload:
        raise InvalidArgument(field, "is required when the decision is edit")
    if decision != "edit" and edited_payload:
        raise InvalidArgument(field, "is only allowed when the decision is edit")


# ---- Evaluation answers --------------------------------------------------------------------


class Unparsed(Exception):
    """An evaluator's answer that is no evaluation at all: it holds no JSON, or JSON
    without an evaluations list. Logged as a failure, never raised to the caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_evaluation_reply(text: str) -> list[Assessment]:
    """The evaluation JSON from an LLM answer, read with parse_json_reply's fallbacks, in
    either spelling (source_id / knowledge_id, status / eval_status). Raises Unparsed
    when there is none, and InvalidArgument for an evaluation that breaks a rule."""
    check.text(text, "raw_text", RAW_TEXT_MAX, required=True)
    try:
        document = parse_json_reply(text)
    except LLMError:
        raise Unparsed(
            "the answer holds no JSON (read as a whole, as a ```json block and as a bare {...})"
        ) from None
    evaluations = document.get("evaluations") if isinstance(document, dict) else document
    if not isinstance(evaluations, list):
        raise Unparsed('the answer\'s JSON has no "evaluations" list')
    check.count(len(evaluations), "raw_text.evaluations", QUERY_EVALUATIONS_MAX)
    found = []
    for index, item in enumerate(evaluations):
        found += _read_query_evaluation(item, f"raw_text.evaluations[{index}]")
    return found


def _read_query_evaluation(item: object, where: str) -> list[Assessment]:
    if not isinstance(item, dict):
        raise InvalidArgument(where, "must be an object with query_sequence and assessments")
    sequence = _read_int(item.get("query_sequence"), f"{where}.query_sequence")
    found = []
    for field, entry in objects(
        item.get("assessments"), f"{where}.assessments", "must be an object"
    ):
        knowledge_id = _read_either(entry, ("source_id", "knowledge_id"), field)
        status = _read_either(entry, ("status", "eval_status"), field).strip().lower()
        reason = entry.get("reason") or ""
        if not isinstance(reason, str):
            raise InvalidArgument(f"{field}.reason", "must be a string")
        found.append(
            Assessment(sequence, knowledge_id, status, reason, field, f"{where}.query_sequence")
        )
    return found


def _read_int(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidArgument(field, "must be an integer")
    try:
        return int(value)
    except ValueError:
        raise InvalidArgument(field, f"{value!r} is not an integer") from None


def _read_either(entry: dict[str, Any], names: tuple[str, str], field: str) -> str:
    value = entry.get(names[0], entry.get(names[1]))
    if not isinstance(value, str) or not value:
        raise InvalidArgument(f"{field}.{names[0]}", f"is required (or {names[1]}) as a string")
    return value


def validate_assessments(assessments: list[Assessment]) -> list[Assessment]:
    """Each status known, each text within its limit, no pair rated twice."""
    check.count(len(assessments), "evaluations", ASSESSMENTS_MAX, required=True)
    seen: set[tuple[int, str]] = set()
    for item in assessments:
        _sequence(item.query_sequence, item.query_field)
        _name(item.knowledge_id, f"{item.field}.knowledge_id", required=True)
        one_of(item.status, EVAL_STATUSES, f"{item.field}.status")
        check.text(item.reason, f"{item.field}.reason", check.CASE_TEXT_MAX)
        pair = (item.query_sequence, item.knowledge_id)
        if pair in seen:
            raise InvalidArgument(
                f"{item.field}.knowledge_id",
                f"rates {item.knowledge_id!r} for query {item.query_sequence} a second time",
            )
        seen.add(pair)
    return assessments


def validate_query_links(
    assessments: list[Assessment], queries: dict[int, Event], trace_id: str
) -> None:
    """Each assessment names a query of the trace and one of that query's sources."""
    for item in assessments:
        query = queries.get(item.query_sequence)
        if query is None:
            raise InvalidArgument(
                item.query_field,
                f"trace {trace_id!r} has no query at sequence {item.query_sequence}",
            )
        if item.knowledge_id not in query["source_ids"]:
            raise InvalidArgument(
                f"{item.field}.knowledge_id",
                f"{item.knowledge_id!r} is "
                f"not a source of the query at sequence "
                f"{item.query_sequence}",
            )


# The knowledge payloads an event may carry (extraction_pending, extraction_reviewed).
PAYLOAD_FIELDS = ("payload", "edited_payload")


def shown_payload(payload: Body, viewer: Principal) -> Body:
    """A payload as the viewer reads it: its agent and resource names bare when of the
    viewer's own org (the payload keeps them qualified, see knowledge_client.resolve)."""
    shown = {**payload}
    for name, show in (("scopes", viewer.show_scope), ("resource_ids", viewer.show)):
        if isinstance(payload.get(name), list):
            shown[name] = [show(v) for v in payload[name]]
    for name, show in (("owner", viewer.show_scope), ("agent_id", viewer.show)):
        if isinstance(payload.get(name), str):
            shown[name] = show(payload[name])
    return shown


def shown_payloads(body: Body, viewer: Principal) -> Body:
    """An event's body with its knowledge payloads as the viewer reads them."""
    return {
        **body,
        **{
            name: shown_payload(body[name], viewer)
            for name in PAYLOAD_FIELDS
            if isinstance(body.get(name), dict)
        },
    }
