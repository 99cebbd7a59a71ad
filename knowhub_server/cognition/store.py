"""Cognition logs in Redis: one stream per trace, a small trace record, and the indexes
that answer the service's questions without reading logs.

A trace is named by its owner and its id (TraceRef), and stored under its key R =
"user:ID/trace-id". Every key starts with `{<redis_prefix>cognition}:`, the trigger stream
`{<redis_prefix>cognition}:triggers:evaluation` too: one hash tag, so on a Redis Cluster the
scripts (lua/*.lua), which touch a trace's keys, the cross-trace indexes and the trigger
stream at once, find them in one slot. Per trace:
  trace:R          hash   the trace record (owner, agent_id, task, sequences, counters)
  log:R            stream the events, fields t (type) and e (the event as JSON)
  queries:R        hash   query sequence -> event id
  pending:R        zset   query sequences with a source that has no verdict yet
  awaiting:R       hash   query sequence -> its sources without a verdict (JSON list)
  evaluated:R      hash   "sequence|knowledge_id" -> its FeedbackRecord as JSON
  feedback:R       set    evaluated pairs whose helpful / harmful case is not yet applied
  abandoned:R      set    pending query sequences an evaluator gave up on
  extractions:R    zset   extraction ids by creation time
  extraction:R|X   hash   extraction X's state
  consumed:R       hash   reflection event id -> consumed_at
  requests:R       hash   AppendEvents request id -> "digest ids", with request-order:R
Across traces (members R): traces (zset, by updated_at), traces:owner:O, traces:agent:A,
traces:owner-agent:O|A; extractions-by-state:S and extractions-by-state:S:O (members
"R|X", by creation time).

Each write goes through one script that checks, appends and updates every index in one
atomic step, so the indexes never disagree with the log. The agent's index keys are passed
for the agent the caller expects; when the trace has another, the script writes nothing
and names it (Rekey), and the caller calls again with its keys: so an append needs no read
first.

Traces stored before they were named per owner (under their bare id) are moved to their
owner's name once, when the store first connects (`_move_legacy_traces`).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import redis
from redis.commands.core import Script

from knowhub_server.cognition.domain import (
    COUNTED_STATUSES,
    EXTRACTION_STATES,
    STATE_AFTER,
    WINDOW_BYTES_MAX,
    Event,
    Extraction,
    FeedbackRecord,
    Trace,
    TraceRef,
    iso_seconds,
    pair_key,
)
from knowhub_server.common.base.scopes import ORG_SEPARATOR, qualified
from knowhub_server.common.security.auth import LegacyNames
from knowhub_server.common.storage.redis_store import (
    NO_WAIT,
    ReplicaWait,
    glob_escaped,
    keyspace,
    lua_source,
    raw,
    raw_fields,
    raw_members,
    raw_scored,
    reachable,
    stream_entries,
    stream_reads,
    write_acknowledged,
)

log = logging.getLogger(__name__)

TRACE_KINDS = (
    "trace",
    "log",
    "queries",
    "pending",
    "awaiting",
    "evaluated",
    "feedback",
    "abandoned",
    "extractions",
    "consumed",
    "requests",
    "request-order",
)
# The kinds a trace stored under its bare id may have; "evaluated-seqs" is dropped.
LEGACY_KINDS = (
    "trace",
    "log",
    "queries",
    "pending",
    "evaluated",
    "feedback",
    "extractions",
    "consumed",
    "requests",
    "request-order",
)
LEGACY_DROPPED = ("evaluated-seqs",)
LAYOUT_MARKER = "key-layout"  # in the cognition keyspace: set once legacy traces moved
LAYOUT = "per-owner"
DELETE_ATTEMPTS = 5  # a trace that keeps gaining extractions while being deleted
SCAN_COUNT = 500
CHUNK_EVENTS = 100  # events read per XRANGE: bounds one reply's size
LUA = "knowhub_server.cognition"  # the package whose lua/<name>.lua holds each script
SCRIPTS = ("append", "signal", "consume", "delete", "migrate")
# The names (in a script call's `keys`) of the cross-trace indexes a trace is a member of,
# and of the extraction-state indexes its extractions are members of.
TRACE_INDEXES = ("traces", "traces-owner", "traces-agent", "traces-owner-agent")
STATE_INDEXES = tuple(
    f"{scope}:{state}" for state in EXTRACTION_STATES for scope in ("state", "owner-state")
)


class ScriptKeys:
    """The keys one script call declares, and the place of each named one in Lua's KEYS
    (1-based), which the script reads from its call's `keys`."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, key: str, name: str = "") -> int:
        self.keys.append(key)
        if name:
            self.index[name] = len(self.keys)
        return len(self.keys)


@dataclass(frozen=True)
class AppendCall:
    """One append: the trace, what the caller expects of it, what to set, and the limits."""

    trace: TraceRef
    agent: str  # the trace's agent as the caller expects it (its index keys are passed)
    acting_agent: str  # the agent to set when the trace has none yet
    now: float
    max_events: int
    requests_kept: int
    task: str = ""
    auto_commit: bool | None = None
    request_id: str = ""
    digest: str = ""
    imported: bool = False  # an import: only into a new trace, its feedback recorded only
    existing_only: bool = False  # only into a trace that exists (another owner's)

    def script_argument(self, keys: ScriptKeys, ops: list[dict[str, Any]]) -> str:
        return json.dumps(
            {
                "keys": keys.index,
                "ops": ops,
                "ref": self.trace.key,
                "trace_id": self.trace.trace_id,
                "owner": self.trace.owner,
                "agent": self.agent,
                "acting_agent": self.acting_agent,
                "now": repr(self.now),
                "task": self.task,
                "auto_commit": "" if self.auto_commit is None else str(int(self.auto_commit)),
                "request_id": self.request_id,
                "digest": self.digest,
                "create_only": self.imported,
                "existing_only": self.existing_only,
                "max_events": self.max_events,
                "requests_kept": self.requests_kept,
            },
            ensure_ascii=False,
        )


@dataclass
class Appended:
    event_ids: list[str]  # "" where an event was skipped (already evaluated / committed)
    trace: Trace


@dataclass
class Replayed:
    digest: str
    event_ids: list[str]


@dataclass
class Rekey:
    """The trace's agent differs from the one the append's keys were built for: nothing
    was written; append again with this one."""

    agent_id: str


@dataclass
class Deleted:
    """What a trace deletion removed."""

    events: int
    extractions: int


@dataclass(frozen=True)
class TraceDeletion:
    """A trace as the delete script expects to find it: its agent (whose index keys are
    passed) and its extractions, in creation order."""

    trace: TraceRef
    agent: str
    extraction_ids: list[str]

    def script_argument(self, keys: ScriptKeys, extraction_keys: list[int]) -> str:
        return json.dumps(
            {
                "keys": keys.index,
                "ref": self.trace.key,
                "agent": self.agent,
                "extractions": [
                    {"id": x, "key": k}
                    for x, k in zip(self.extraction_ids, extraction_keys, strict=True)
                ],
                "trace_keys": list(TRACE_KINDS),
                "indexes": list(TRACE_INDEXES),
                "state_indexes": list(STATE_INDEXES),
            },
            ensure_ascii=False,
        )


class Refused(Exception):
    """A script refused the call: `reason` for the event at `index` (-1: the whole call),
    with `detail`."""

    def __init__(self, index: int, reason: str, detail: str) -> None:
        super().__init__(f"{reason} at {index}: {detail}")
        self.index, self.reason, self.detail = index, reason, detail


@dataclass
class Delivered:
    """A trigger as read from the stream."""

    trigger_id: str
    fields: dict[str, str]
    delivery_count: int


@dataclass
class LegacyTrace:
    """A trace under its bare id, as the move to its owner's name needs it."""

    trace_id: str
    ref: TraceRef
    agent: str
    extraction_ids: list[str]
    awaiting: dict[str, list[str]] = field(default_factory=dict)  # sequence -> sources

    def script_argument(self, keys: ScriptKeys, extraction_keys: list[tuple[int, int]]) -> str:
        """`extraction_keys`: each extraction's (old, new) key indexes."""
        return json.dumps(
            {
                "keys": keys.index,
                "kinds": list(LEGACY_KINDS),
                "dropped": list(LEGACY_DROPPED),
                "legacy_id": self.trace_id,
                "ref": self.ref.key,
                "owner": self.ref.owner,
                "extractions": [
                    {"id": x, "old": old, "new": new}
                    for x, (old, new) in zip(self.extraction_ids, extraction_keys, strict=True)
                ],
                "awaiting": [{"seq": s, "sources": v} for s, v in self.awaiting.items()],
                "indexes": list(TRACE_INDEXES),
                "state_indexes": list(STATE_INDEXES),
            },
            ensure_ascii=False,
        )


class CognitionStore:
    def __init__(
        self, connect: Callable[[], redis.Redis], prefix: str, wait: ReplicaWait = NO_WAIT
    ) -> None:
        self._connect = connect  # Redis is reached (and an embedded one started) on first use
        self._base = keyspace(prefix, "cognition")
        self.triggers_key = f"{self._base}triggers:evaluation"
        self._wait = wait  # for evaluation claims: the first verdict on a pair wins

    @functools.cached_property
    def _redis(self) -> redis.Redis:
        client = self._connect()
        self._move_legacy_traces(client)
        return client

    @functools.cached_property
    def _scripts(self) -> dict[str, Script]:
        return {name: self._redis.register_script(lua_source(LUA, name)) for name in SCRIPTS}

    # -- keys --

    def _key(self, kind: str, ref: TraceRef) -> str:
        return f"{self._base}{kind}:{ref.key}"

    def _extraction_key(self, ref: TraceRef, extraction_id: str) -> str:
        return f"{self._base}extraction:{ref.key}|{extraction_id}"

    def _traces_key(self, owner: str | None, agent: str | None) -> str:
        if owner and agent:
            return f"{self._base}traces:owner-agent:{owner}|{agent}"
        if owner:
            return f"{self._base}traces:owner:{owner}"
        if agent:
            return f"{self._base}traces:agent:{agent}"
        return f"{self._base}traces"

    def _state_key(self, state: str, owner: str | None) -> str:
        suffix = f":{owner}" if owner else ""
        return f"{self._base}extractions-by-state:{state}{suffix}"

    def _add_trace_indexes(self, keys: ScriptKeys, owner: str, agent: str) -> None:
        """The cross-trace indexes a trace of `owner` and `agent` is a member of, and the
        extraction-state indexes (all, and the owner's)."""
        keys.add(self._traces_key(None, None), "traces")
        keys.add(self._traces_key(owner, None), "traces-owner")
        keys.add(self._traces_key(None, agent or "-"), "traces-agent")
        keys.add(self._traces_key(owner, agent or "-"), "traces-owner-agent")
        for state in EXTRACTION_STATES:
            keys.add(self._state_key(state, None), f"state:{state}")
            keys.add(self._state_key(state, owner), f"owner-state:{state}")

    # -- names from before agent ids had organisations --

    def qualify_legacy_agents(self, names: LegacyNames) -> int:
        """Moves the bare agent of each trace stored before agent ids had organisations
        into its owner's org, and the trace in the agent indexes with it; returns how many
        traces moved."""
        moved = 0
        for member in raw_members(self._redis.zrange(self._traces_key(None, None), 0, -1)):
            ref = TraceRef.of_key(member.decode())
            agent = raw(self._redis.hget(self._key("trace", ref), "agent_id") or b"").decode()
            namespace = names.of_writer(ref.owner)
            if agent and ORG_SEPARATOR not in agent and namespace:
                self._move_agent(ref, agent, qualified(namespace, agent))
                moved += 1
        return moved

    def _move_agent(self, ref: TraceRef, agent: str, new: str) -> None:
        with self._redis.pipeline(transaction=True) as moving:
            moving.hset(self._key("trace", ref), "agent_id", new)
            for old_key, new_key in (
                (self._traces_key(None, agent), self._traces_key(None, new)),
                (self._traces_key(ref.owner, agent), self._traces_key(ref.owner, new)),
            ):
                score = self._redis.zscore(old_key, ref.key)
                if score is not None:
                    moving.zadd(new_key, {ref.key: score})
                    moving.zrem(old_key, ref.key)
            moving.execute()

    # -- writes --

    def append(self, call: AppendCall, events: list[Event]) -> Appended | Replayed | Rekey:
        """Appends `events` and updates their indexes in one atomic step; Rekey when the
        trace's agent is not `call.agent`. Raises Refused."""
        keys = ScriptKeys()
        for kind in TRACE_KINDS:
            keys.add(self._key(kind, call.trace), kind)
        self._add_trace_indexes(keys, call.trace.owner, call.agent)
        extraction_keys: dict[str, int] = {}
        ops, stored = [], []
        for event in events:
            op = _index_entry(event, call.imported)
            stored.append(
                json.dumps(
                    {k: v for k, v in event.items() if k != "consumed_at"}, ensure_ascii=False
                )
            )
            if "eid" in op:
                if op["eid"] not in extraction_keys:
                    extraction_keys[op["eid"]] = keys.add(
                        self._extraction_key(call.trace, op["eid"])
                    )
                op["xk"] = extraction_keys[op["eid"]]
            ops.append(op)
        args = [call.script_argument(keys, ops), *stored]
        claims = any(op["t"] == "evaluation" for op in ops)
        with reachable("appending to a cognition log"):
            script = self._scripts["append"]
            if claims and self._wait.replicas:
                (result,) = write_acknowledged(
                    self._redis,
                    keys.keys[0],
                    lambda pipe: script(keys=keys.keys, args=args, client=pipe),
                    self._wait,
                    "an evaluation",
                )
            else:
                result = script(keys=keys.keys, args=args)
        status = result[0].decode()
        if status == "replay":
            digest_seen, _, ids = result[1].decode().partition(" ")
            return Replayed(digest_seen, ids.split(",") if ids else [])
        if status == "error":
            raise Refused(int(result[1]), result[2].decode(), result[3].decode())
        if status == "rekey":
            return Rekey(result[1].decode())
        fields = dict(zip(result[2][::2], result[2][1::2], strict=True))
        return Appended(
            [i.decode() for i in result[1]], _trace(fields, int(result[3]), int(result[4]))
        )

    def signal(
        self, trace: Trace, trigger: str, at: str, stream_max: int
    ) -> tuple[str, str, list[int]]:
        """(published | same | none, trigger id, pending sequences)."""
        ref = trace.ref
        with reachable("signalling an evaluation trigger"):
            state, trigger_id, sequences = self._scripts["signal"](
                keys=[
                    self._key("trace", ref),
                    self._key("pending", ref),
                    self.triggers_key,
                    self._key("abandoned", ref),
                ],
                args=[trace.trace_id, trigger, at, stream_max, trace.owner, trace.agent_id],
            )
        return state.decode(), trigger_id.decode(), [int(s) for s in sequences]

    def consume_reflections(self, ref: TraceRef, event_ids: list[str], at: str) -> int:
        """Marks reflection events consumed; raises Refused for an id that is not one."""
        with reachable("marking reflections consumed"):
            result = self._scripts["consume"](
                keys=[self._key("trace", ref), self._key("log", ref), self._key("consumed", ref)],
                args=[at, *event_ids],
            )
        if result[0] == b"error":
            raise Refused(int(result[1]), result[2].decode(), "")
        return int(result[1])

    def settle_feedback(self, ref: TraceRef, records: dict[str, FeedbackRecord]) -> None:
        """Records how applying each pair's case ended (applied or refused) and takes the
        pairs off the outbox, in one transaction."""
        with reachable("recording feedback"):
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(
                self._key("evaluated", ref),
                mapping={pair: json.dumps(vars(record)) for pair, record in records.items()},
            )
            pipe.srem(self._key("feedback", ref), *records)
            pipe.execute()

    def delete(self, ref: TraceRef) -> Deleted | None:
        """Deletes the trace, its log, its extractions and every index entry of it in one
        atomic step; None when there is no such trace. Any owner's trace: callers check
        who may. Deleting every trace of an owner is this, for each trace of
        `trace_page(owner, ...)`."""
        for _ in range(DELETE_ATTEMPTS):
            with reachable("deleting a trace"):
                deletion = self._deletion(ref)
                keys = ScriptKeys()
                for kind in TRACE_KINDS:
                    keys.add(self._key(kind, ref), kind)
                self._add_trace_indexes(keys, ref.owner, deletion.agent)
                extraction_keys = [
                    keys.add(self._extraction_key(ref, x)) for x in deletion.extraction_ids
                ]
                result = self._scripts["delete"](
                    keys=keys.keys, args=[deletion.script_argument(keys, extraction_keys)]
                )
            status = result[0].decode()
            if status == "missing":
                return None
            if status == "deleted":
                return Deleted(int(result[1]), int(result[2]))
        raise Refused(-1, "changing", f"trace {ref.trace_id!r} kept changing while being deleted")

    def _deletion(self, ref: TraceRef) -> TraceDeletion:
        agent = self._redis.hget(self._key("trace", ref), "agent_id")
        extraction_ids = raw_members(self._redis.zrange(self._key("extractions", ref), 0, -1))
        return TraceDeletion(
            ref,
            raw(agent).decode() if agent is not None else "",
            [i.decode() for i in extraction_ids],
        )

    # -- reads --

    def trace(self, ref: TraceRef) -> Trace | None:
        found = self.traces([ref])
        return found[0] if found else None

    def traces(self, refs: list[TraceRef]) -> list[Trace]:
        with reachable("reading traces"):
            pipe = self._redis.pipeline(transaction=False)
            for ref in refs:
                pipe.hgetall(self._key("trace", ref))
                pipe.zcard(self._key("pending", ref))
                pipe.scard(self._key("abandoned", ref))
            replies = pipe.execute()
        return [
            _trace(fields, pending, abandoned)
            for fields, pending, abandoned in zip(
                replies[::3], replies[1::3], replies[2::3], strict=True
            )
            if fields
        ]

    def trace_page(
        self,
        owner: str | None,
        agent: str | None,
        floor: float | None,
        cursor: tuple[float, str] | None,
        size: int,
    ) -> tuple[list[TraceRef], tuple[float, str] | None]:
        """Traces by updated_at, newest first, after `cursor`."""
        entries, after = self._zset_page(
            self._traces_key(owner, agent), floor=floor, cursor=cursor, size=size, newest_first=True
        )
        return [TraceRef.of_key(member) for _, member in entries], after

    def log_page(
        self,
        ref: TraceRef,
        *,
        start: str,
        types: frozenset[str],
        size: int,
        max_bytes: int = WINDOW_BYTES_MAX,
    ) -> tuple[list[Event], str | None]:
        """Up to `size` events of `types` (all when empty) from stream id `start` on
        ("(" before an id makes it exclusive), and no more than `max_bytes` of them as
        stored (but at least one); the id to continue after, or None."""
        key, used = self._key("log", ref), 0
        found: list[Event] = []
        chunk = min(size, CHUNK_EVENTS) if not types else CHUNK_EVENTS
        with reachable("reading a cognition log"):
            while True:
                entries = stream_entries(self._redis.xrange(key, min=start, max="+", count=chunk))
                for entry_id, fields in entries:
                    if types and fields[b"t"].decode() not in types:
                        continue
                    used += len(fields[b"e"])
                    if found and used > max_bytes:
                        return self._with_consumed(ref, found), found[-1]["event_id"]
                    found.append(_event(entry_id, fields))
                    if len(found) == size:
                        more = self._redis.xrange(
                            key, min=f"({entry_id.decode()}", max="+", count=1
                        )
                        return self._with_consumed(ref, found), (
                            entry_id.decode() if more else None
                        )
                if len(entries) < chunk:
                    return self._with_consumed(ref, found), None
                start = f"({entries[-1][0].decode()}"

    def _with_consumed(self, ref: TraceRef, events: list[Event]) -> list[Event]:
        """Adds consumed_at to the reflection events that have one."""
        reflections = [e for e in events if e["type"] == "reflection"]
        if reflections:
            stamps = self._redis.hmget(
                self._key("consumed", ref), [e["event_id"] for e in reflections]
            )
            for event, stamp in zip(reflections, stamps, strict=True):
                if stamp is not None:
                    event["consumed_at"] = raw(stamp).decode()
        return events

    def query_events(self, ref: TraceRef, sequences: Iterable[int]) -> dict[int, Event]:
        """The query events at these sequences (those that exist)."""
        wanted = sorted(set(sequences))
        if not wanted:
            return {}
        with reachable("reading query events"):
            ids = self._redis.hmget(self._key("queries", ref), [str(s) for s in wanted])
            pipe = self._redis.pipeline(transaction=False)
            for event_id in ids:
                if event_id is not None:
                    pipe.xrange(self._key("log", ref), event_id, event_id)
            entries = iter(pipe.execute())
        found = {}
        for sequence, event_id in zip(wanted, ids, strict=True):
            if event_id is not None:
                ((entry_id, fields),) = next(entries)
                found[sequence] = _event(entry_id, fields)
        return found

    def pending(self, ref: TraceRef) -> list[int]:
        with reachable("reading pending evaluations"):
            return [
                int(s) for s in raw_members(self._redis.zrange(self._key("pending", ref), 0, -1))
            ]

    def pending_among(self, ref: TraceRef, sequences: list[int]) -> list[int]:
        """Which of these query sequences are pending, ascending."""
        if not sequences:
            return []
        with reachable("reading pending evaluations"):
            scores = self._redis.zmscore(self._key("pending", ref), [str(s) for s in sequences])
        return sorted(s for s, score in zip(sequences, scores, strict=True) if score is not None)

    def abandoned_among(self, ref: TraceRef, sequences: list[int]) -> list[int]:
        """Which of these query sequences an evaluator gave up on, ascending."""
        if not sequences:
            return []
        with reachable("reading abandoned evaluations"):
            found = self._redis.smismember(self._key("abandoned", ref), sequences)
        return sorted(s for s, member in zip(sequences, found, strict=True) if member)

    def feedback_records(self, ref: TraceRef, pairs: list[str]) -> dict[str, FeedbackRecord]:
        if not pairs:
            return {}
        with reachable("reading evaluations"):
            values = self._redis.hmget(self._key("evaluated", ref), pairs)
        return {
            pair: FeedbackRecord(**json.loads(v))
            for pair, v in zip(pairs, values, strict=True)
            if v is not None
        }

    def feedback_outbox(self, ref: TraceRef) -> list[str]:
        with reachable("reading deferred feedback"):
            return sorted(
                p.decode() for p in raw_members(self._redis.smembers(self._key("feedback", ref)))
            )

    def extraction(self, ref: TraceRef, extraction_id: str) -> Extraction | None:
        found = self._extractions_by_member([f"{ref.key}|{extraction_id}"])
        return found[0] if found else None

    def trace_extractions(self, ref: TraceRef) -> list[Extraction]:
        """Every extraction of a trace, oldest first."""
        with reachable("reading extractions"):
            ids = raw_members(self._redis.zrange(self._key("extractions", ref), 0, -1))
        return self._extractions_by_member([f"{ref.key}|{i.decode()}" for i in ids])

    def extraction_page(
        self, owner: str | None, states: Iterable[str], cursor: tuple[float, str] | None, size: int
    ) -> tuple[list[Extraction], tuple[float, str] | None]:
        """Extractions in `states` across traces (the owner's, or all), oldest first."""
        merged: list[tuple[float, str]] = []
        more = False
        for state in states:
            entries, after = self._zset_page(
                self._state_key(state, owner),
                floor=None,
                cursor=cursor,
                size=size,
                newest_first=False,
            )
            merged += entries
            more = more or after is not None
        merged.sort()
        page = merged[:size]
        after = page[-1] if page and (more or len(merged) > size) else None
        return self._extractions_by_member([member for _, member in page]), after

    def _extractions_by_member(self, members: list[str]) -> list[Extraction]:
        with reachable("reading extractions"):
            pipe = self._redis.pipeline(transaction=False)
            for member in members:
                trace_key, _, extraction_id = member.partition("|")
                pipe.hgetall(self._extraction_key(TraceRef.of_key(trace_key), extraction_id))
            return [_extraction(fields) for fields in pipe.execute() if fields]

    def _zset_page(
        self,
        key: str,
        *,
        floor: float | None,
        cursor: tuple[float, str] | None,
        size: int,
        newest_first: bool,
    ) -> tuple[list[tuple[float, str]], tuple[float, str] | None]:
        """Keyset paging over a sorted set by (score, member): up to `size` entries after
        `cursor` (newest first: down to `floor`), and the cursor of the last one when more
        follow."""
        found: list[tuple[float, str]] = []
        with reachable("listing"):
            for score, member in self._zset_scan(key, floor, cursor, newest_first):
                if cursor is not None and not _after(score, member, cursor, newest_first):
                    continue
                found.append((score, member))
                if len(found) > size:
                    return found[:size], found[size - 1]
        return found, None

    def _zset_scan(
        self, key: str, floor: float | None, cursor: tuple[float, str] | None, newest_first: bool
    ) -> Iterator[tuple[float, str]]:
        """Entries from the cursor's score on (inclusive), in order, in chunks."""
        offset, chunk = 0, 200
        while True:
            if newest_first:
                high = "+inf" if cursor is None else repr(cursor[0])
                low = "-inf" if floor is None else repr(floor)
                entries = raw_scored(
                    self._redis.zrevrangebyscore(
                        key, high, low, start=offset, num=chunk, withscores=True
                    )
                )
            else:
                low = "-inf" if cursor is None else repr(cursor[0])
                entries = raw_scored(
                    self._redis.zrangebyscore(
                        key, low, "+inf", start=offset, num=chunk, withscores=True
                    )
                )
            for member, score in entries:
                yield score, member.decode()
            if len(entries) < chunk:
                return
            offset += chunk

    # -- triggers --

    def ensure_group(self, group: str) -> None:
        with reachable("creating a trigger consumer group"):
            try:
                self._redis.xgroup_create(self.triggers_key, group, id="0", mkstream=True)
            except redis.ResponseError as error:
                if "BUSYGROUP" not in str(error):
                    raise

    def claim_stale(self, group: str, consumer: str, idle_ms: int, count: int) -> list[Delivered]:
        """Triggers delivered to some consumer and not acknowledged for `idle_ms`, now
        delivered to `consumer`."""
        with reachable("reclaiming triggers"):
            reply = self._redis.xautoclaim(
                self.triggers_key, group, consumer, idle_ms, "0-0", count=count
            )
            trimmed = [i for i, f in reply[1] if not f]  # pending, but gone from the stream
            if trimmed:
                self._redis.xack(self.triggers_key, group, *trimmed)
            claimed = [(i, f) for i, f in reply[1] if f]
            if not claimed:
                return []
            counts = {
                p["message_id"]: p["times_delivered"]
                for p in self._redis.xpending_range(
                    self.triggers_key,
                    group,
                    claimed[0][0],
                    claimed[-1][0],
                    len(claimed) + 100,
                    consumer,
                )
            }
        return [Delivered(i.decode(), _decoded(f), int(counts.get(i, 1))) for i, f in claimed]

    def read_new(self, group: str, consumer: str, count: int, block_ms: int) -> list[Delivered]:
        with reachable("reading triggers"):
            reply = stream_reads(
                self._redis.xreadgroup(
                    group, consumer, {self.triggers_key: ">"}, count=count, block=block_ms
                )
            )
        entries = reply[0][1] if reply else []
        return [Delivered(i.decode(), _decoded(f), 1) for i, f in entries]

    def ack(self, group: str, trigger_ids: list[str]) -> int:
        with reachable("acknowledging triggers"):
            return int(self._redis.xack(self.triggers_key, group, *trigger_ids))

    # -- the move of traces stored under their bare id --

    def _move_legacy_traces(self, client: redis.Redis) -> None:
        """Moves, once per Redis, every trace stored under its bare id to its owner's name
        (each in one atomic step; another process moving the same trace finds it gone)."""
        marker = f"{self._base}{LAYOUT_MARKER}"
        if client.get(marker) == LAYOUT.encode():
            return
        start = f"{self._base}trace:"
        moved = 0
        for key in list(client.scan_iter(match=glob_escaped(start) + "*", count=SCAN_COUNT)):
            trace_id = key.decode()[len(start) :]
            if "/" not in trace_id:
                moved += self._move_legacy_trace(client, trace_id)
        client.set(marker, LAYOUT)
        if moved:
            log.info("moved %d traces to their owners' names (traces are named per owner)", moved)

    def _move_legacy_trace(self, client: redis.Redis, trace_id: str) -> int:
        legacy = self._legacy_trace(client, trace_id)
        if legacy is None:
            return 0
        keys = ScriptKeys()
        for kind in LEGACY_KINDS:
            keys.add(f"{self._base}{kind}:{trace_id}", f"old:{kind}")
            keys.add(self._key(kind, legacy.ref), f"new:{kind}")
        for kind in LEGACY_DROPPED:
            keys.add(f"{self._base}{kind}:{trace_id}", kind)
        keys.add(self._key("awaiting", legacy.ref), "new:awaiting")
        self._add_trace_indexes(keys, legacy.ref.owner, legacy.agent)
        extraction_keys = [
            (
                keys.add(f"{self._base}extraction:{trace_id}|{x}"),
                keys.add(self._extraction_key(legacy.ref, x)),
            )
            for x in legacy.extraction_ids
        ]
        script = client.register_script(lua_source(LUA, "migrate"))
        return int(script(keys=keys.keys, args=[legacy.script_argument(keys, extraction_keys)]))

    def _legacy_trace(self, client: redis.Redis, trace_id: str) -> LegacyTrace | None:
        """What moving a bare-id trace needs: its owner, agent, extractions, and the
        sources of each query that have no verdict (read from its log)."""
        fields = _decoded(raw_fields(client.hgetall(f"{self._base}trace:{trace_id}")))
        if not fields:
            return None
        ref = TraceRef(fields["owner"], trace_id)
        extraction_ids = [
            i.decode()
            for i in raw_members(client.zrange(f"{self._base}extractions:{trace_id}", 0, -1))
        ]
        evaluated = {
            p.decode() for p in raw_members(client.hkeys(f"{self._base}evaluated:{trace_id}"))
        }
        awaiting = {}
        queries = raw_fields(client.hgetall(f"{self._base}queries:{trace_id}"))
        for sequence, event_id in queries.items():
            entries = stream_entries(
                client.xrange(f"{self._base}log:{trace_id}", event_id, event_id)
            )
            if not entries:
                continue
            sources = json.loads(entries[0][1][b"e"])["source_ids"]
            waiting = [s for s in sources if pair_key(int(sequence), s) not in evaluated]
            if waiting:
                awaiting[sequence.decode()] = waiting
        return LegacyTrace(trace_id, ref, fields.get("agent_id", ""), extraction_ids, awaiting)


def _after(score: float, member: str, cursor: tuple[float, str], newest_first: bool) -> bool:
    if newest_first:
        return (score, member) < cursor
    return (score, member) > cursor


def _index_entry(event: Event, imported: bool) -> dict[str, Any]:
    """What the append script needs to index one event (the event itself goes as its own
    argument, after the call's)."""
    kind = event["type"]
    op: dict[str, Any] = {"t": kind}
    if kind in ("query", "message", "extraction_pending"):
        op["seq"] = str(event["sequence"])
    if kind == "query":
        op["sources"] = list(dict.fromkeys(event["source_ids"]))
    elif kind == "evaluation":
        status, reason = event["eval_result"]["status"], event["eval_result"]["reason"]
        counted = status in COUNTED_STATUSES and not imported
        feedback = "imported" if imported else "deferred" if counted else "none"
        op.update(
            qseq=str(event["query_sequence"]),
            kid=event["knowledge_id"],
            pair=pair_key(event["query_sequence"], event["knowledge_id"]),
            record=json.dumps(vars(FeedbackRecord(status, reason, feedback))),
            outbox=counted,
        )
    elif kind == "evaluation_failed":
        op["gave_up"] = event["gave_up"] and not imported
    elif kind == "reflection":
        op.update(
            range_end=str(event["sequence_range"][1]), consumed_at=event.get("consumed_at") or ""
        )
    elif kind.startswith("extraction_"):
        op.update(eid=event["extraction_id"], at=repr(iso_seconds(event["timestamp"])))
        if kind == "extraction_pending":
            op.update(
                goal_id=event["goal_id"],
                branch_id=event["branch_id"],
                payload=json.dumps(event["payload"], ensure_ascii=False),
            )
        elif kind == "extraction_reviewed":
            edited = event.get("edited_payload")
            op.update(
                state=STATE_AFTER[event["decision"]],
                decision=event["decision"],
                edited=json.dumps(edited, ensure_ascii=False) if edited else "",
            )
        else:
            op["kid"] = event["knowledge_id"]
    return op


def _decoded(fields: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in fields.items()}


def _event(entry_id: bytes, fields: dict[bytes, bytes]) -> Event:
    event: Event = json.loads(fields[b"e"])
    event["event_id"] = entry_id.decode()
    return event


def _trace(fields: dict[bytes, bytes], pending: int, abandoned: int) -> Trace:
    f = _decoded(fields)
    return Trace(
        trace_id=f["trace_id"],
        owner=f["owner"],
        agent_id=f.get("agent_id", ""),
        task=f.get("task", ""),
        last_sequence=int(f.get("last_sequence", 0)),
        reflected_at_sequence=int(f.get("reflected_at_sequence", 0)),
        auto_commit=f.get("auto_commit") == "1",
        event_count=int(f.get("event_count", 0)),
        pending_evaluations=pending,
        abandoned_evaluations=abandoned,
        unconsumed_reflections=int(f.get("unconsumed_reflections", 0)),
        last_trigger=f.get("last_trigger", ""),
        created_at=float(f["created_at"]),
        updated_at=float(f.get("updated_at", f["created_at"])),
    )


def _extraction(fields: dict[bytes, bytes]) -> Extraction:
    f = _decoded(fields)
    edited = f.get("edited_payload")
    return Extraction(
        trace_id=f["trace_id"],
        owner=f["owner"],
        extraction_id=f["extraction_id"],
        state=f["state"],
        sequence=int(f["sequence"]),
        goal_id=f["goal_id"],
        branch_id=f["branch_id"],
        payload=json.loads(f["payload"]),
        edited_payload=json.loads(edited) if edited else None,
        decision=f.get("decision", ""),
        knowledge_id=f.get("knowledge_id", ""),
        created_at=float(f["created_at"]),
        reviewed_at=float(f.get("reviewed_at", 0)),
        committed_at=float(f.get("committed_at", 0)),
    )
