"""The cognition use cases around the log itself: append, read, list, triggers, the trace
view, export and import. Evaluations and extractions build on TraceAccess (see
evaluations.py and extractions.py)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from knowhub_server.cognition.config import CognitionSettings
from knowhub_server.cognition.domain import (
    APPENDABLE_TYPES,
    DEFAULT_EXPORT_PAGE,
    DEFAULT_GROUP,
    DEFAULT_VIEW_WINDOW,
    EVENT_TYPES,
    EVENTS_PER_CALL_MAX,
    EXPORT_PAGE_MAX,
    IDS_PER_CALL_MAX,
    LIST_PAGE_MAX,
    LOG_PAGE_MAX,
    MAX_SEQUENCE,
    TASK_TEXT_MAX,
    TRIGGERS,
    VIEW_WINDOW_MAX,
    Body,
    Event,
    Trace,
    TraceRef,
    choices,
    one_of,
    pair_key,
    validate_entity_name,
    validate_event,
)
from knowhub_server.cognition.knowledge_client import KnowledgeClient
from knowhub_server.cognition.logfile import LogDocument, export_document
from knowhub_server.cognition.store import (
    AppendCall,
    Appended,
    CognitionStore,
    Deleted,
    Delivered,
    Refused,
    Rekey,
    Replayed,
)
from knowhub_server.cognition.view import TraceView, Window, build_view
from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
)
from knowhub_server.common.base.paging import read_token, write_token
from knowhub_server.common.base.scopes import validate_agent_name, validate_owner
from knowhub_server.common.base.times import iso, now
from knowhub_server.common.security.auth import DREAMER_ROLE, EVALUATOR_ROLE, Principal
from knowhub_server.common.security.forget import forget_subject, subject_parts

log = logging.getLogger(__name__)

STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
FieldOf = Callable[[int], str]


def _events_field(index: int) -> str:
    return f"events[{index}]"


AGENTS_CACHED = 10_000
# An append whose guess of the trace's agent was wrong calls again with the right one; the
# agent is set once, so one more call suffices (two, when the trace was deleted meanwhile).
REKEYS_MAX = 2
FORGET_PAGE = 256  # traces a forget deletes per round
FORGET_ATTEMPTS = 5  # deletes of one changing trace before a forget gives up


class TraceAccess:
    """Which trace a call names, who may read and write it, and the one way events are
    appended."""

    def __init__(self, store: CognitionStore, settings: CognitionSettings) -> None:
        self.store = store
        self.settings = settings
        # The agents of traces seen lately, so an append needs no read first.
        self._agents: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def ref(
        principal: Principal, trace_id: str, owner: str = "", *, role: str | None = None
    ) -> TraceRef:
        """The trace a call names: `owner`'s `trace_id`, the caller's own when `owner` is
        empty. Only admins (and a caller with `role`) name another owner's traces; for
        anyone else such a trace is NOT_FOUND, exactly as one that does not exist."""
        check.trace_id(trace_id)
        if not owner or owner == principal.user_scope:
            return TraceRef(principal.user_scope, trace_id)
        validate_trace_owner(owner, "owner")
        if not (principal.is_admin or (role is not None and principal.has_role(role))):
            raise not_found(trace_id)
        return TraceRef(owner, trace_id)

    def readable(
        self, principal: Principal, trace_id: str, owner: str = "", *, role: str | None = None
    ) -> Trace:
        """The trace, if it exists and the caller may see it; NOT_FOUND either way."""
        trace = self.store.trace(self.ref(principal, trace_id, owner, role=role))
        if trace is None:
            raise not_found(trace_id)
        return trace

    def append(
        self,
        principal: Principal,
        ref: TraceRef,
        events: list[Event],
        *,
        agent_id: str = "",
        task: str = "",
        auto_commit: bool | None = None,
        request_id: str = "",
        digest: str = "",
        imported: bool = False,
        field_of: FieldOf = _events_field,
    ) -> Appended | Replayed:
        """Appends events (already validated and stamped) with their index updates. The
        caller creates its own traces; another owner's trace (named through `ref`, which
        checked who may) is written only when it exists."""
        own = ref.owner == principal.user_scope
        # Another owner's trace keeps its agent: only a named one is set on it.
        acting = principal.acting_agent(agent_id) if own or agent_id else ""
        with self._lock:
            agent = self._agents.get(ref.key, acting)
        for _ in range(REKEYS_MAX + 1):
            call = AppendCall(
                ref,
                agent,
                acting,
                now(),
                self.settings.cognition_max_events_per_trace,
                self.settings.cognition_request_ids_kept,
                task=task,
                auto_commit=auto_commit,
                request_id=request_id,
                digest=digest,
                imported=imported,
                existing_only=not own,
            )
            try:
                result = self.store.append(call, events)
            except Refused as refused:
                raise self._refusal(ref, refused, events, field_of) from None
            if not isinstance(result, Rekey):
                break
            agent = result.agent_id
        else:
            raise Aborted(f"trace {ref.trace_id!r} kept changing its agent; try again")
        if isinstance(result, Appended) and result.trace.agent_id:
            self._remember(ref, result.trace.agent_id)
        return result

    def _remember(self, ref: TraceRef, agent: str) -> None:
        with self._lock:
            self._agents[ref.key] = agent
            self._agents.move_to_end(ref.key)
            while len(self._agents) > AGENTS_CACHED:
                self._agents.popitem(last=False)

    def forget(self, ref: TraceRef) -> None:
        """A deleted trace: its id may name a new trace of another agent."""
        with self._lock:
            self._agents.pop(ref.key, None)

    def _refusal(
        self, ref: TraceRef, refused: Refused, events: list[Event], field_of: FieldOf
    ) -> ServiceError:
        trace_id = ref.trace_id
        if refused.reason == "exists":
            return AlreadyExists(f"trace {trace_id!r} already exists; import into a new trace_id")
        if refused.reason == "missing":
            return not_found(trace_id)
        if refused.reason == "limit":
            return ResourceExhausted(
                f"trace {trace_id!r} holds {refused.detail} events; the "
                f"limit is {self.settings.cognition_max_events_per_trace}"
            )
        where = f"{field_of(refused.index)}.{events[refused.index]['type']}"
        if refused.reason == "duplicate_query":
            return InvalidArgument(
                f"{where}.sequence",
                f"trace {trace_id!r} already has a query at sequence {refused.detail}",
            )
        if refused.reason == "duplicate_extraction":
            return AlreadyExists(
                f"extraction {refused.detail!r} already exists in trace {trace_id!r}"
            )
        if refused.reason == "no_extraction":
            return InvalidArgument(
                f"{where}.extraction_id",
                f"trace {trace_id!r} has no extraction {refused.detail!r} before this event",
            )
        return FailedPrecondition(
            f"extraction {refused.detail!r} is already committed; it can no longer be reviewed"
        )


def not_found(trace_id: str) -> NotFound:
    return NotFound(f"trace {trace_id!r} not found")


def validate_trace_owner(owner: str, field: str) -> str:
    """A trace's owner: a user, `user:ID`."""
    kind, _, _ = validate_owner(owner, field).partition(":")
    if kind != "user":
        raise InvalidArgument(
            field, f"{owner!r} is not a trace owner: traces belong to users (user:ID)"
        )
    return owner


def stamped(events: list[tuple[str, Body]], at: float) -> list[Event]:
    moment = iso(at)
    return [{"type": kind, **body, "timestamp": moment} for kind, body in events]


@dataclass
class LogPage:
    events: list[Event]
    next_page_token: str
    trace: Trace


@dataclass
class ExportPage:
    document: str
    next_page_token: str


class LogOperations:
    def __init__(self, access: TraceAccess, knowledge: KnowledgeClient) -> None:
        self._access = access
        self._store = access.store
        self._knowledge = knowledge

    def append(
        self,
        principal: Principal,
        trace_id: str,
        events: list[tuple[str, Body]],
        *,
        owner: str = "",
        request_id: str = "",
        task: str = "",
        agent_id: str = "",
        auto_commit: bool | None = None,
    ) -> tuple[list[str], Trace]:
        """Appends a batch, all or none; a replayed request_id returns the first answer."""
        check.trace_id(trace_id)
        check.count(len(events), "events", EVENTS_PER_CALL_MAX)
        check.text(request_id, "request_id", check.NAME_MAX)
        check.text(task, "task", TASK_TEXT_MAX)
        if agent_id:
            validate_agent_name(agent_id, "agent_id")
            principal.acting_agent(agent_id, "agent_id")
        if not events and not task and not agent_id and auto_commit is None:
            raise InvalidArgument(
                "events", "is empty: give events, or set task, agent_id or auto_commit"
            )
        for index, (kind, body) in enumerate(events):
            if kind not in APPENDABLE_TYPES:
                raise InvalidArgument(
                    f"events[{index}]",
                    f"{kind} events are written by {_WRITER[kind]}, not AppendEvents",
                )
            validate_event(kind, body, f"events[{index}]")
        digest = _digest(events, task, agent_id, auto_commit) if request_id else ""
        # A dreamer may add reflections to anyone's trace, and nothing else.
        role = (
            DREAMER_ROLE
            if events
            and not task
            and not agent_id
            and auto_commit is None
            and all(kind == "reflection" for kind, _ in events)
            else None
        )
        ref = self._access.ref(principal, trace_id, owner, role=role)
        result = self._access.append(
            principal,
            ref,
            stamped(events, now()),
            agent_id=agent_id,
            task=task,
            auto_commit=auto_commit,
            request_id=request_id,
            digest=digest,
        )
        if isinstance(result, Replayed):
            if result.digest != digest:
                raise InvalidArgument(
                    "request_id", f"{request_id!r} was used before for another request"
                )
            return result.event_ids, self._access.readable(principal, trace_id, owner, role=role)
        return result.event_ids, result.trace

    def get_log(
        self,
        principal: Principal,
        trace_id: str,
        *,
        owner: str,
        types: list[str],
        since: float | None,
        page_size: int,
        page_token: str,
    ) -> LogPage:
        check.int_range(page_size, "page_size", 1, LOG_PAGE_MAX)
        choices(types, EVENT_TYPES, "types")
        trace = self._access.readable(principal, trace_id, owner, role=DREAMER_ROLE)
        filters = ("log", trace.ref.key, sorted(types), since)
        start = "-" if since is None else f"{int(since * 1000)}-0"
        if page_token:
            start = _continue_after(page_token, filters)
        events, after = self._store.log_page(
            trace.ref, start=start, types=frozenset(types), size=page_size
        )
        return LogPage(events, write_token(after, filters) if after else "", trace)

    def list_traces(
        self,
        principal: Principal,
        *,
        agent_id: str,
        owner: str,
        updated_since: float | None,
        page_size: int,
        page_token: str,
    ) -> tuple[list[Trace], str]:
        """The caller's traces (every trace, or `owner`'s, for an admin or a dreamer), most
        recently updated first."""
        check.int_range(page_size, "page_size", 1, LIST_PAGE_MAX)
        if agent_id:
            agent_id = principal.qualify(validate_agent_name(agent_id, "agent_id"))
        if owner:
            validate_owner(owner, "owner")
        listed: str | None  # None: every owner's
        if principal.has_role(DREAMER_ROLE):
            listed = owner or None
        elif owner and owner != principal.user_scope:
            raise PermissionDenied(f"owner: only admins list the traces of {owner!r}")
        else:
            listed = principal.user_scope
        filters = ("traces", listed, agent_id, updated_since)
        cursor = read_cursor(page_token, filters) if page_token else None
        refs, after = self._store.trace_page(
            listed, agent_id or None, updated_since, cursor, page_size
        )
        token = write_token(list(after), filters) if after else ""
        return self._store.traces(refs), token

    def delete(self, principal: Principal, trace_id: str, owner: str) -> Deleted:
        """Deletes a trace with its log, extractions and evaluation state: its owner's call,
        or an admin's."""
        ref = self._access.ref(principal, trace_id, owner)
        try:
            deleted = self._store.delete(ref)
        except Refused:
            raise Aborted(
                f"trace {trace_id!r} kept changing while being deleted; try again"
            ) from None
        if deleted is None:
            raise not_found(trace_id)
        self._access.forget(ref)
        log.info(
            "trace %s of %s deleted by %s: %d events, %d extractions",
            trace_id,
            ref.owner,
            principal.user_scope,
            deleted.events,
            deleted.extractions,
        )
        return deleted

    def forget(self, principal: Principal, subject: str) -> dict[str, int]:
        """Deletes every trace of a subject: a user's own traces, or every trace of an
        agent, as `delete` does each."""
        stored = forget_subject(principal, subject)
        kind, entity_id = subject_parts(stored)
        owner, agent = (stored, None) if kind == "user" else (None, entity_id)
        erased = {"traces": 0, "events": 0, "extractions": 0}
        tried: set[TraceRef] = set()
        while True:
            refs, _ = self._store.trace_page(owner, agent, None, None, FORGET_PAGE)
            refs = [r for r in refs if r not in tried]
            if not refs:
                return erased
            for ref in refs:
                tried.add(ref)
                deleted = self._delete_retrying(ref)
                if deleted is not None:
                    self._access.forget(ref)
                    erased["traces"] += 1
                    erased["events"] += deleted.events
                    erased["extractions"] += deleted.extractions

    def _delete_retrying(self, ref: TraceRef) -> Deleted | None:
        for _ in range(FORGET_ATTEMPTS):
            try:
                return self._store.delete(ref)
            except Refused:
                continue
        raise Aborted(f"trace {ref.trace_id!r} kept changing while being forgotten; try again")

    def consume_reflections(
        self, principal: Principal, trace_id: str, owner: str, event_ids: list[str]
    ) -> int:
        check.items(event_ids, "event_ids", IDS_PER_CALL_MAX, required=True)
        for index, event_id in enumerate(event_ids):
            if not STREAM_ID.fullmatch(event_id):
                raise InvalidArgument(
                    f"event_ids[{index}]", f"{event_id[:40]!r} is not an event id"
                )
        trace = self._access.readable(principal, trace_id, owner, role=DREAMER_ROLE)
        try:
            return self._store.consume_reflections(trace.ref, event_ids, iso(now()))
        except Refused as refused:
            problem = (
                "is not an event of this trace"
                if refused.reason == "missing"
                else "is not a reflection event"
            )
            raise InvalidArgument(f"event_ids[{refused.index}]", problem) from None

    def view(
        self,
        principal: Principal,
        trace_id: str,
        *,
        owner: str = "",
        job_id: str = "",
        diff_versions: tuple[int | None, int | None] = (None, None),
        page_size: int = DEFAULT_VIEW_WINDOW,
        page_token: str = "",
    ) -> TraceView:
        """The views of one window of the trace's log: at most `page_size` events (and
        WINDOW_BYTES_MAX of them) from `page_token` on; the runtime views of `job_id` (the
        window's latest job when empty), with plan versions `diff_versions` (or the last
        two) compared."""
        if job_id:
            check.text(job_id, "job_id", check.NAME_MAX)
        for name, version in zip(("plan_diff_from", "plan_diff_to"), diff_versions, strict=True):
            if version is not None:
                check.int_range(version, name, 0, MAX_SEQUENCE)
        check.int_range(page_size, "page_size", 1, VIEW_WINDOW_MAX)
        trace = self._access.readable(principal, trace_id, owner)
        filters = ("view", trace.ref.key, page_size)
        start = _continue_after(page_token, filters) if page_token else "-"
        events, after = self._store.log_page(
            trace.ref, start=start, types=frozenset(), size=page_size
        )
        pairs = [
            pair_key(e["query_sequence"], e["knowledge_id"])
            for e in events
            if e["type"] == "evaluation"
        ]
        queried = [e["sequence"] for e in events if e["type"] == "query"]
        window = Window(events, bool(page_token), write_token(after, filters) if after else "")
        return build_view(
            trace,
            window,
            self._store.feedback_records(trace.ref, pairs),
            self._store.pending_among(trace.ref, queried),
            self._store.abandoned_among(trace.ref, queried),
            job_id=job_id,
            diff_versions=diff_versions,
        )

    def export(
        self,
        principal: Principal,
        trace_id: str,
        *,
        owner: str = "",
        page_size: int = DEFAULT_EXPORT_PAGE,
        page_token: str = "",
    ) -> ExportPage:
        """One page of the trace's log file: at most `page_size` events (and
        WINDOW_BYTES_MAX of them), a document of its own."""
        check.int_range(page_size, "page_size", 1, EXPORT_PAGE_MAX)
        trace = self._access.readable(principal, trace_id, owner)
        filters = ("export", trace.ref.key, page_size)
        start = _continue_after(page_token, filters) if page_token else "-"
        events, after = self._store.log_page(
            trace.ref, start=start, types=frozenset(), size=page_size
        )
        return ExportPage(
            export_document(trace, events, principal), write_token(after, filters) if after else ""
        )

    def import_log(
        self,
        principal: Principal,
        trace_id: str,
        document: LogDocument,
        events: list[tuple[str, Body, str]],
    ) -> tuple[Trace, int]:
        """Creates one of the caller's traces from a log file's events (type, body,
        timestamp or "")."""
        trace_id = trace_id or document.trace_id
        if not trace_id:
            raise InvalidArgument("trace_id", "is required: the file names none")
        ref = self._access.ref(principal, trace_id)
        check.text(document.task, "document.task", TASK_TEXT_MAX)
        if document.agent_id:
            validate_agent_name(document.agent_id, "document.agent_id")
            principal.acting_agent(document.agent_id, "document.agent_id")
        limit = self._access.settings.cognition_max_events_per_trace
        if len(events) > limit:
            raise ResourceExhausted(
                f"document: holds {len(events)} events; a trace holds at most {limit}"
            )
        fallback = iso(now())
        written = []
        for (where, _), (kind, body, moment) in zip(document.events, events, strict=True):
            validate_event(kind, body, where)
            self._resolve_payloads(principal, kind, body, f"{where}.{kind}")
            written.append({"type": kind, **body, "timestamp": moment or fallback})
        if self._store.trace(ref) is not None:
            raise AlreadyExists(f"trace {trace_id!r} already exists; import into a new trace_id")
        result = self._access.append(
            principal,
            ref,
            written,
            agent_id=document.agent_id,
            task=document.task,
            imported=True,
            field_of=lambda index: document.events[index][0],
        )
        assert isinstance(result, Appended)
        return result.trace, len(written)

    def _resolve_payloads(self, principal: Principal, kind: str, body: Body, where: str) -> None:
        """An imported extraction's payload is checked as the importer's own save, as
        SavePendingExtraction and ReviewExtraction check theirs."""
        for name in ("payload", "edited_payload"):
            if kind.startswith("extraction_") and body.get(name):
                body[name] = self._knowledge.resolve(principal, body[name], f"{where}.{name}")


def _continue_after(page_token: str, filters: object) -> str:
    """The exclusive stream start of a log page token."""
    after = str(read_token(page_token, filters))
    if not STREAM_ID.fullmatch(after):
        raise InvalidArgument("page_token", "is not a token this service issued")
    return f"({after}"


_WRITER = {
    "evaluation": "SubmitEvaluation",
    "feedback_refused": "SubmitEvaluation",
    "evaluation_failed": "SubmitEvaluation and AbandonEvaluation",
    "extraction_pending": "SavePendingExtraction",
    "extraction_reviewed": "ReviewExtraction",
    "extraction_committed": "CommitExtractions",
}


def _digest(
    events: list[tuple[str, Body]], task: str, agent_id: str, auto_commit: bool | None
) -> str:
    raw = json.dumps([events, task, agent_id, auto_commit], sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


def read_cursor(page_token: str, filters: object) -> tuple[float, str]:
    """The (score, member) keyset cursor of a list token."""
    try:
        score, member = read_token(page_token, filters)
        return float(score), str(member)
    except (TypeError, ValueError):
        raise InvalidArgument("page_token", "is not a token this service issued") from None


class TriggerOperations:
    """Evaluation triggers on a Redis stream, delivered through consumer groups."""

    def __init__(self, access: TraceAccess) -> None:
        self._access = access
        self._store = access.store
        self._settings = access.settings
        self._watchers = threading.BoundedSemaphore(self._settings.cognition_max_watchers)

    def pending(self, principal: Principal, trace_id: str, owner: str) -> tuple[list[Event], str]:
        """The pending query events by sequence, and the trace's last trigger."""
        trace = self._access.readable(principal, trace_id, owner, role=EVALUATOR_ROLE)
        sequences = self._store.pending(trace.ref)
        queries = self._store.query_events(trace.ref, sequences)
        return [queries[s] for s in sequences if s in queries], trace.last_trigger

    def signal(
        self, principal: Principal, trace_id: str, owner: str, trigger: str
    ) -> tuple[list[int], bool, str]:
        """(pending sequences, published now, the trigger id for this pending set). A set
        is published once, and again after an evaluator gave up on it."""
        check.trace_id(trace_id)
        one_of(trigger, TRIGGERS, "trigger")
        trace = self._access.readable(principal, trace_id, owner)
        state, trigger_id, sequences = self._store.signal(
            trace, trigger, iso(now()), self._settings.cognition_trigger_stream_max
        )
        if state == "published":
            log.info("evaluation trigger %s for trace %s: queries %s", trigger, trace_id, sequences)
        return sequences, state == "published", trigger_id

    def watch(
        self, principal: Principal, group: str, consumer: str, live: Callable[[], bool]
    ) -> Iterator[Delivered]:
        """Triggers for `consumer` of `group` until `live()` turns false: first those other
        consumers left unacknowledged past the visibility timeout, then new ones."""
        group, consumer = self._group(principal, group), consumer or f"watch-{uuid.uuid4().hex}"
        validate_entity_name(consumer, "consumer")
        if not self._watchers.acquire(blocking=False):
            limit = self._settings.cognition_max_watchers
            raise ResourceExhausted(
                f"this server already serves {limit} WatchTriggers "
                "streams (KNOWHUB_COGNITION_MAX_WATCHERS)"
            )
        try:
            self._store.ensure_group(group)
            idle_ms = round(self._settings.cognition_trigger_visibility_seconds * 1000)
            block_ms = max(1, round(self._settings.cognition_trigger_poll_seconds * 1000))
            while live():
                batch = self._store.claim_stale(
                    group, consumer, idle_ms, count=10
                ) or self._store.read_new(group, consumer, count=10, block_ms=block_ms)
                yield from batch
        finally:
            self._watchers.release()

    def ack(self, principal: Principal, group: str, trigger_ids: list[str]) -> int:
        group = self._group(principal, group)
        check.items(trigger_ids, "trigger_ids", IDS_PER_CALL_MAX, required=True)
        for index, trigger_id in enumerate(trigger_ids):
            if not STREAM_ID.fullmatch(trigger_id):
                raise InvalidArgument(
                    f"trigger_ids[{index}]", f"{trigger_id[:40]!r} is not a trigger id"
                )
        return self._store.ack(group, trigger_ids)

    def _group(self, principal: Principal, group: str) -> str:
        if not principal.has_role(EVALUATOR_ROLE):
            raise PermissionDenied(
                f"triggers are for evaluators: the caller needs the "
                f"{EVALUATOR_ROLE!r} role (or admin)"
            )
        return validate_entity_name(group or DEFAULT_GROUP, "group")
