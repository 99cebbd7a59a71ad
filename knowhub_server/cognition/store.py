"""Cognition logs in Redis: one stream per trace, a small trace record, and the indexes
that answer the service's questions without reading logs.

Every key starts with `{<redis_prefix>cognition}:`, the trigger stream
`{<redis_prefix>cognition}:triggers:evaluation` too: one hash tag, so on a Redis Cluster the
scripts below, which touch a trace's keys, the cross-trace indexes and the trigger stream at
once, find them in one slot. Per trace:
  trace:T          hash   the trace record (owner, agent_id, task, sequences, counters)
  log:T            stream the events, fields t (type) and e (the event as JSON)
  queries:T        hash   query sequence -> event id
  pending:T        zset   query sequences with sources and no evaluation yet
  evaluated:T      hash   "sequence|knowledge_id" -> its FeedbackRecord as JSON
  evaluated-seqs:T set    query sequences with at least one evaluation
  feedback:T       set    evaluated pairs whose helpful / harmful case is not yet applied
  extractions:T    zset   extraction ids by creation time
  extraction:T|X   hash   extraction X's state
  consumed:T       hash   reflection event id -> consumed_at
  requests:T       hash   AppendEvents request id -> "digest ids", with request-order:T
Across traces: traces (zset, by updated_at), traces:owner:O, traces:agent:A,
traces:owner-agent:O|A; extractions-by-state:S and extractions-by-state:S:O (members
"T|X", by creation time).

Each write goes through one Lua script that checks, appends and updates every index in one
atomic step, so the indexes never disagree with the log. The owner's and agent's index keys
are passed for the owner and agent the caller expects; when the trace has others, the
script writes nothing and names them (Rekey), and the caller calls again with their keys:
so an append needs no read first.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import redis
from redis.commands.core import Script

from knowhub_server.cognition.domain import (
    COUNTED_STATUSES,
    EXTRACTION_STATES,
    STATE_AFTER,
    Event,
    Extraction,
    FeedbackRecord,
    Trace,
    iso_seconds,
    pair_key,
)
from knowhub_server.common.redis_store import (
    NO_WAIT,
    ReplicaWait,
    keyspace,
    reachable,
    write_acknowledged,
)

_TRACE_KEYS = ("trace", "log", "queries", "pending", "evaluated", "evaluated-seqs",
               "feedback", "extractions", "consumed", "requests", "request-order")

_APPEND = """
local a = cjson.decode(ARGV[1])
local TRACE, LOG, QUERIES, PENDING, EVALUATED, EVALUATED_SEQS = 1, 2, 3, 4, 5, 6
local OUTBOX, EXTRACTIONS, CONSUMED, REQUESTS, REQUEST_ORDER = 7, 8, 9, 10, 11
local TRACES_ALL, TRACES_OWNER, TRACES_AGENT, TRACES_OWNER_AGENT = 12, 13, 14, 15
local STATE_ALL = {pending = 16, approved = 17, edited = 18, discarded = 19, committed = 20}
local STATE_OWNER = {pending = 21, approved = 22, edited = 23, discarded = 24, committed = 25}
local function int(x) return string.format('%d', x) end

-- Another user's trace is refused before a replay could tell its request ids apart.
local owner = redis.call('HGET', KEYS[TRACE], 'owner')
if owner and owner ~= a.owner and not a.any_owner and not a.create_only then
  return {'error', '-1', 'owner', owner}
end
if a.request_id ~= '' then
  local answer = redis.call('HGET', KEYS[REQUESTS], a.request_id)
  if answer then return {'replay', answer} end
end
if owner then
  if a.create_only then return {'error', '-1', 'exists', owner} end
  local agent = redis.call('HGET', KEYS[TRACE], 'agent_id') or ''
  if owner ~= a.owner or (agent ~= '' and agent ~= a.agent) then
    return {'rekey', owner, agent}
  end
end
local count = tonumber(redis.call('HGET', KEYS[TRACE], 'event_count') or '0')
if count + #a.ops > tonumber(a.max_events) then
  return {'error', '-1', 'limit', int(count)}
end

-- Pass 1: refuse the whole batch before anything is written.
local queries, states = {}, {}
for i, op in ipairs(a.ops) do
  local at = int(i - 1)
  if op.t == 'query' then
    if queries[op.seq] or redis.call('HEXISTS', KEYS[QUERIES], op.seq) == 1 then
      return {'error', at, 'duplicate_query', op.seq}
    end
    queries[op.seq] = true
  elseif op.eid then
    local state = states[op.eid]
    if state == nil then state = redis.call('HGET', KEYS[op.xk], 'state') end
    if op.t == 'extraction_pending' then
      if state then return {'error', at, 'duplicate_extraction', op.eid} end
      states[op.eid] = 'pending'
    elseif not state then
      return {'error', at, 'no_extraction', op.eid}
    elseif op.t == 'extraction_reviewed' then
      if state == 'committed' then return {'error', at, 'committed', op.eid} end
      states[op.eid] = op.state
    else
      states[op.eid] = 'committed'
    end
  end
end

-- Pass 2: append and index.
if not owner then
  redis.call('HSET', KEYS[TRACE], 'trace_id', a.trace_id, 'owner', a.owner,
             'created_at', a.now, 'agent_id', '', 'task', '', 'auto_commit', '0',
             'event_count', '0', 'unconsumed_reflections', '0')
end
local last = tonumber(redis.call('HGET', KEYS[TRACE], 'last_sequence') or '0')
local reflected = tonumber(redis.call('HGET', KEYS[TRACE], 'reflected_at_sequence') or '0')
local ids, skipped, written = {}, {}, 0

local function move(op, to)
  local member = a.trace_id .. '|' .. op.eid
  local from = redis.call('HGET', KEYS[op.xk], 'state')
  if from then
    redis.call('ZREM', KEYS[STATE_ALL[from]], member)
    redis.call('ZREM', KEYS[STATE_OWNER[from]], member)
  end
  local score = redis.call('HGET', KEYS[op.xk], 'created_at')
  redis.call('ZADD', KEYS[STATE_ALL[to]], score, member)
  redis.call('ZADD', KEYS[STATE_OWNER[to]], score, member)
  redis.call('HSET', KEYS[op.xk], 'state', to)
end

for i, op in ipairs(a.ops) do
  local skip = false
  if op.t == 'evaluation' then
    skip = redis.call('HSETNX', KEYS[EVALUATED], op.pair, op.record) == 0
  elseif op.t == 'extraction_committed' then
    skip = redis.call('HGET', KEYS[op.xk], 'state') == 'committed'
  end
  if skip then
    table.insert(ids, '')
    table.insert(skipped, int(i - 1))
  else
    local id = redis.call('XADD', KEYS[LOG], '*', 't', op.t, 'e', ARGV[i + 1])
    table.insert(ids, id)
    written = written + 1
    if op.t == 'query' then
      redis.call('HSET', KEYS[QUERIES], op.seq, id)
      if op.has_sources and redis.call('SISMEMBER', KEYS[EVALUATED_SEQS], op.seq) == 0 then
        redis.call('ZADD', KEYS[PENDING], op.seq, op.seq)
      end
    elseif op.t == 'evaluation' then
      redis.call('SADD', KEYS[EVALUATED_SEQS], op.qseq)
      redis.call('ZREM', KEYS[PENDING], op.qseq)
      if op.outbox then redis.call('SADD', KEYS[OUTBOX], op.pair) end
    elseif op.t == 'extraction_pending' then
      redis.call('HSET', KEYS[op.xk], 'trace_id', a.trace_id, 'extraction_id', op.eid,
                 'sequence', op.seq, 'goal_id', op.goal_id, 'branch_id', op.branch_id,
                 'payload', op.payload, 'created_at', op.at, 'event_id', id)
      redis.call('ZADD', KEYS[EXTRACTIONS], op.at, op.eid)
      move(op, 'pending')
    elseif op.t == 'extraction_reviewed' then
      redis.call('HSET', KEYS[op.xk], 'decision', op.decision, 'reviewed_at', op.at)
      if op.edited ~= '' then
        redis.call('HSET', KEYS[op.xk], 'edited_payload', op.edited)
      else
        redis.call('HDEL', KEYS[op.xk], 'edited_payload')
      end
      move(op, op.state)
    elseif op.t == 'extraction_committed' then
      redis.call('HSET', KEYS[op.xk], 'knowledge_id', op.kid, 'committed_at', op.at)
      move(op, 'committed')
    elseif op.t == 'reflection' then
      reflected = math.max(reflected, tonumber(op.range_end))
      last = math.max(last, tonumber(op.range_end))
      if op.consumed_at ~= '' then
        redis.call('HSET', KEYS[CONSUMED], id, op.consumed_at)
      else
        redis.call('HINCRBY', KEYS[TRACE], 'unconsumed_reflections', 1)
      end
    end
    if op.seq then last = math.max(last, tonumber(op.seq)) end
  end
end

if a.agent ~= '' and (redis.call('HGET', KEYS[TRACE], 'agent_id') or '') == '' then
  redis.call('HSET', KEYS[TRACE], 'agent_id', a.agent)
end
if a.task ~= '' then redis.call('HSET', KEYS[TRACE], 'task', a.task) end
if a.auto_commit ~= '' then redis.call('HSET', KEYS[TRACE], 'auto_commit', a.auto_commit) end
redis.call('HSET', KEYS[TRACE], 'updated_at', a.now, 'last_sequence', int(last),
           'reflected_at_sequence', int(reflected))
redis.call('HINCRBY', KEYS[TRACE], 'event_count', written)
redis.call('ZADD', KEYS[TRACES_ALL], a.now, a.trace_id)
redis.call('ZADD', KEYS[TRACES_OWNER], a.now, a.trace_id)
if a.agent ~= '' then
  redis.call('ZADD', KEYS[TRACES_AGENT], a.now, a.trace_id)
  redis.call('ZADD', KEYS[TRACES_OWNER_AGENT], a.now, a.trace_id)
end

if a.request_id ~= '' then
  redis.call('HSET', KEYS[REQUESTS], a.request_id, a.digest .. ' ' .. table.concat(ids, ','))
  redis.call('ZADD', KEYS[REQUEST_ORDER], a.now, a.request_id)
  local excess = redis.call('ZCARD', KEYS[REQUEST_ORDER]) - tonumber(a.keep)
  if excess > 0 then
    local old = redis.call('ZRANGE', KEYS[REQUEST_ORDER], 0, excess - 1)
    redis.call('ZREMRANGEBYRANK', KEYS[REQUEST_ORDER], 0, excess - 1)
    redis.call('HDEL', KEYS[REQUESTS], unpack(old))
  end
end
return {'ok', ids, skipped, redis.call('HGETALL', KEYS[TRACE]), redis.call('ZCARD', KEYS[PENDING])}
"""

_SIGNAL = """
local seqs = redis.call('ZRANGE', KEYS[2], 0, -1)
if #seqs == 0 then return {'none', '', seqs} end
local set = table.concat(seqs, ',')
if redis.call('HGET', KEYS[1], 'last_trigger_set') == set then
  return {'same', redis.call('HGET', KEYS[1], 'last_trigger_id'), seqs}
end
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'trace_id', ARGV[1],
                      'trigger', ARGV[2], 'query_sequences', set, 'owner', ARGV[5],
                      'agent_id', ARGV[6], 'signaled_at', ARGV[3])
redis.call('HSET', KEYS[1], 'last_trigger_set', set, 'last_trigger_id', id,
           'last_trigger', ARGV[2])
return {'published', id, seqs}
"""

_CONSUME = """
for i = 2, #ARGV do
  local entry = redis.call('XRANGE', KEYS[2], ARGV[i], ARGV[i])
  if #entry == 0 then return {'error', tostring(i - 2), 'missing'} end
  if entry[1][2][2] ~= 'reflection' then return {'error', tostring(i - 2), 'not_reflection'} end
end
local consumed = 0
for i = 2, #ARGV do
  if redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[1]) == 1 then consumed = consumed + 1 end
end
if consumed > 0 then redis.call('HINCRBY', KEYS[1], 'unconsumed_reflections', -consumed) end
return {'ok', tostring(consumed)}
"""


@dataclass
class Appended:
    event_ids: list[str]  # "" where an event was skipped (already evaluated / committed)
    skipped: list[int]
    trace: Trace


@dataclass
class Replayed:
    digest: str
    event_ids: list[str]


@dataclass
class Rekey:
    """The trace's owner or agent differ from those the append's keys were built for:
    nothing was written; append again with these."""

    owner: str
    agent_id: str


class Refused(Exception):
    """The append script refused the batch: `reason` for the event at `index` (-1: the
    whole call), with `detail`."""

    def __init__(self, index: int, reason: str, detail: str) -> None:
        super().__init__(f"{reason} at {index}: {detail}")
        self.index, self.reason, self.detail = index, reason, detail


@dataclass
class Delivered:
    """A trigger as read from the stream."""

    trigger_id: str
    fields: dict[str, str]
    delivery_count: int


class CognitionStore:
    def __init__(self, connect: Callable[[], redis.Redis], prefix: str,
                 wait: ReplicaWait = NO_WAIT) -> None:
        self._connect = connect  # Redis is reached (and an embedded one started) on first use
        self._base = keyspace(prefix, "cognition")
        self.triggers_key = f"{self._base}triggers:evaluation"
        self._wait = wait  # for evaluation claims: the first verdict on a pair wins

    @functools.cached_property
    def _redis(self) -> redis.Redis:
        return self._connect()

    @functools.cached_property
    def _append(self) -> Script:
        return self._redis.register_script(_APPEND)

    @functools.cached_property
    def _signal(self) -> Script:
        return self._redis.register_script(_SIGNAL)

    @functools.cached_property
    def _consume(self) -> Script:
        return self._redis.register_script(_CONSUME)

    # -- keys --

    def _key(self, kind: str, trace_id: str) -> str:
        return f"{self._base}{kind}:{trace_id}"

    def _extraction_key(self, trace_id: str, extraction_id: str) -> str:
        return f"{self._base}extraction:{trace_id}|{extraction_id}"

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

    # -- writes --

    def append(self, trace_id: str, events: list[Event], *, owner: str, agent: str,
               task: str = "", auto_commit: bool | None = None, request_id: str = "",
               digest: str = "", imported: bool = False, create_only: bool = False,
               any_owner: bool = False, max_events: int, requests_kept: int, now: float
               ) -> Appended | Replayed | Rekey:
        """Appends `events` and updates their indexes in one atomic step; `owner` and
        `agent` are the trace's (the agent: its own, else the one to set), as far as the
        caller knows: Rekey when they are not. A trace of another owner is refused unless
        `any_owner`. Raises Refused."""
        keys = [self._key(kind, trace_id) for kind in _TRACE_KEYS]
        keys += [self._traces_key(None, None), self._traces_key(owner, None),
                 self._traces_key(None, agent or "-"), self._traces_key(owner, agent or "-")]
        keys += [self._state_key(s, None) for s in EXTRACTION_STATES]
        keys += [self._state_key(s, owner) for s in EXTRACTION_STATES]
        extraction_keys: dict[str, int] = {}
        ops, stored = [], []
        for event in events:
            op = _index_entry(event, imported)
            stored.append(json.dumps({k: v for k, v in event.items() if k != "consumed_at"},
                                     ensure_ascii=False))
            if "eid" in op:
                if op["eid"] not in extraction_keys:
                    keys.append(self._extraction_key(trace_id, op["eid"]))
                    extraction_keys[op["eid"]] = len(keys)
                op["xk"] = extraction_keys[op["eid"]]
            ops.append(op)
        call = {"ops": ops, "now": repr(now), "owner": owner, "agent": agent,
                "any_owner": any_owner, "trace_id": trace_id, "task": task,
                "auto_commit": "" if auto_commit is None else str(int(auto_commit)),
                "request_id": request_id, "digest": digest, "create_only": create_only,
                "max_events": str(max_events), "keep": str(requests_kept)}
        args = [json.dumps(call, ensure_ascii=False), *stored]
        claims = any(op["t"] == "evaluation" for op in ops)
        with reachable("appending to a cognition log"):
            if claims and self._wait.replicas:
                (result,) = write_acknowledged(
                    self._redis, keys[0],
                    lambda pipe: self._append(keys=keys, args=args, client=pipe),
                    self._wait, "an evaluation")
            else:
                result = self._append(keys=keys, args=args)
        status = result[0].decode()
        if status == "replay":
            digest_seen, _, ids = result[1].decode().partition(" ")
            return Replayed(digest_seen, ids.split(",") if ids else [])
        if status == "error":
            raise Refused(int(result[1]), result[2].decode(), result[3].decode())
        if status == "rekey":
            return Rekey(result[1].decode(), result[2].decode())
        fields = dict(zip(result[3][::2], result[3][1::2], strict=True))
        return Appended([i.decode() for i in result[1]], [int(i) for i in result[2]],
                        _trace(fields, int(result[4])))

    def signal(self, trace: Trace, trigger: str, at: str, stream_max: int
               ) -> tuple[str, str, list[int]]:
        """(published | same | none, trigger id, pending sequences)."""
        with reachable("signalling an evaluation trigger"):
            state, trigger_id, sequences = self._signal(
                keys=[self._key("trace", trace.trace_id), self._key("pending", trace.trace_id),
                      self.triggers_key],
                args=[trace.trace_id, trigger, at, stream_max, trace.owner, trace.agent_id])
        return state.decode(), trigger_id.decode(), [int(s) for s in sequences]

    def consume_reflections(self, trace_id: str, event_ids: list[str], at: str) -> int:
        """Marks reflection events consumed; raises Refused for an id that is not one."""
        with reachable("marking reflections consumed"):
            result = self._consume(
                keys=[self._key("trace", trace_id), self._key("log", trace_id),
                      self._key("consumed", trace_id)], args=[at, *event_ids])
        if result[0] == b"error":
            raise Refused(int(result[1]), result[2].decode(), "")
        return int(result[1])

    def settle_feedback(self, trace_id: str, records: dict[str, FeedbackRecord]) -> None:
        """Records how applying each pair's case ended (applied or refused) and takes the
        pairs off the outbox, in one transaction."""
        with reachable("recording feedback"):
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(self._key("evaluated", trace_id), mapping={
                pair: json.dumps(vars(record)) for pair, record in records.items()})
            pipe.srem(self._key("feedback", trace_id), *records)
            pipe.execute()

    # -- reads --

    def trace(self, trace_id: str) -> Trace | None:
        with reachable("reading a trace"):
            pipe = self._redis.pipeline(transaction=False)
            pipe.hgetall(self._key("trace", trace_id))
            pipe.zcard(self._key("pending", trace_id))
            fields, pending = pipe.execute()
        return _trace(fields, pending) if fields else None

    def traces(self, trace_ids: list[str]) -> list[Trace]:
        with reachable("reading traces"):
            pipe = self._redis.pipeline(transaction=False)
            for trace_id in trace_ids:
                pipe.hgetall(self._key("trace", trace_id))
                pipe.zcard(self._key("pending", trace_id))
            replies = pipe.execute()
        found = (_trace(f, p) for f, p in zip(replies[::2], replies[1::2], strict=True) if f)
        return list(found)

    def trace_page(self, owner: str | None, agent: str | None, floor: float | None,
                   cursor: tuple[float, str] | None, size: int
                   ) -> tuple[list[str], tuple[float, str] | None]:
        """Trace ids by updated_at, newest first, after `cursor`."""
        entries, after = self._zset_page(self._traces_key(owner, agent), floor=floor,
                                         cursor=cursor, size=size, newest_first=True)
        return [member for _, member in entries], after

    def log_page(self, trace_id: str, *, start: str, types: frozenset[str], size: int
                 ) -> tuple[list[Event], str | None]:
        """Up to `size` events of `types` (all when empty) from stream id `start` on
        ("(" before an id makes it exclusive); the id to continue after, or None."""
        key, found = self._key("log", trace_id), []
        chunk = size if not types else max(size, 200)
        with reachable("reading a cognition log"):
            while True:
                entries = self._redis.xrange(key, min=start, max="+", count=chunk)
                for entry_id, fields in entries:
                    if types and fields[b"t"].decode() not in types:
                        continue
                    found.append(_event(entry_id, fields))
                    if len(found) == size:
                        more = self._redis.xrange(key, min=f"({entry_id.decode()}", max="+",
                                                  count=1)
                        return self._with_consumed(trace_id, found), \
                            (entry_id.decode() if more else None)
                if len(entries) < chunk:
                    return self._with_consumed(trace_id, found), None
                start = f"({entries[-1][0].decode()}"

    def events(self, trace_id: str) -> list[Event]:
        """The whole log, in order."""
        found: list[Event] = []
        start = "-"
        while True:
            page, after = self.log_page(trace_id, start=start, types=frozenset(), size=1000)
            found += page
            if after is None:
                return found
            start = f"({after}"

    def _with_consumed(self, trace_id: str, events: list[Event]) -> list[Event]:
        """Adds consumed_at to the reflection events that have one."""
        reflections = [e for e in events if e["type"] == "reflection"]
        if reflections:
            stamps = self._redis.hmget(self._key("consumed", trace_id),
                                       [e["event_id"] for e in reflections])
            for event, stamp in zip(reflections, stamps, strict=True):
                if stamp is not None:
                    event["consumed_at"] = stamp.decode()
        return events

    def query_events(self, trace_id: str, sequences: Iterable[int]) -> dict[int, Event]:
        """The query events at these sequences (those that exist)."""
        wanted = sorted(set(sequences))
        if not wanted:
            return {}
        with reachable("reading query events"):
            ids = self._redis.hmget(self._key("queries", trace_id), [str(s) for s in wanted])
            pipe = self._redis.pipeline(transaction=False)
            for event_id in ids:
                if event_id is not None:
                    pipe.xrange(self._key("log", trace_id), event_id, event_id)
            entries = iter(pipe.execute())
        found = {}
        for sequence, event_id in zip(wanted, ids, strict=True):
            if event_id is not None:
                (entry_id, fields), = next(entries)
                found[sequence] = _event(entry_id, fields)
        return found

    def pending(self, trace_id: str) -> list[int]:
        with reachable("reading pending evaluations"):
            return [int(s) for s in self._redis.zrange(self._key("pending", trace_id), 0, -1)]

    def feedback_records(self, trace_id: str, pairs: list[str]
                         ) -> dict[str, FeedbackRecord]:
        if not pairs:
            return {}
        with reachable("reading evaluations"):
            values = self._redis.hmget(self._key("evaluated", trace_id), pairs)
        return {pair: FeedbackRecord(**json.loads(v))
                for pair, v in zip(pairs, values, strict=True) if v is not None}

    def all_feedback_records(self, trace_id: str) -> dict[str, FeedbackRecord]:
        with reachable("reading evaluations"):
            values = self._redis.hgetall(self._key("evaluated", trace_id))
        return {pair.decode(): FeedbackRecord(**json.loads(v)) for pair, v in values.items()}

    def feedback_outbox(self, trace_id: str) -> list[str]:
        with reachable("reading deferred feedback"):
            return sorted(p.decode() for p in self._redis.smembers(self._key("feedback",
                                                                              trace_id)))

    def extraction(self, trace_id: str, extraction_id: str) -> Extraction | None:
        found = self._extractions_by_member([f"{trace_id}|{extraction_id}"])
        return found[0] if found else None

    def trace_extractions(self, trace_id: str) -> list[Extraction]:
        """Every extraction of a trace, oldest first."""
        with reachable("reading extractions"):
            ids = self._redis.zrange(self._key("extractions", trace_id), 0, -1)
        return self._extractions_by_member([f"{trace_id}|{i.decode()}" for i in ids])

    def extraction_page(self, owner: str | None, states: Iterable[str],
                        cursor: tuple[float, str] | None, size: int
                        ) -> tuple[list[Extraction], tuple[float, str] | None]:
        """Extractions in `states` across traces (the owner's, or all), oldest first."""
        merged: list[tuple[float, str]] = []
        more = False
        for state in states:
            entries, after = self._zset_page(self._state_key(state, owner), floor=None,
                                             cursor=cursor, size=size, newest_first=False)
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
                trace_id, _, extraction_id = member.partition("|")
                pipe.hgetall(self._extraction_key(trace_id, extraction_id))
            return [_extraction(fields) for fields in pipe.execute() if fields]

    def _zset_page(self, key: str, *, floor: float | None, cursor: tuple[float, str] | None,
                   size: int, newest_first: bool
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

    def _zset_scan(self, key: str, floor: float | None, cursor: tuple[float, str] | None,
                   newest_first: bool) -> Iterator[tuple[float, str]]:
        """Entries from the cursor's score on (inclusive), in order, in chunks."""
        offset, chunk = 0, 200
        while True:
            if newest_first:
                high = "+inf" if cursor is None else repr(cursor[0])
                low = "-inf" if floor is None else repr(floor)
                entries = self._redis.zrevrangebyscore(key, high, low, start=offset, num=chunk,
                                                       withscores=True)
            else:
                low = "-inf" if cursor is None else repr(cursor[0])
                entries = self._redis.zrangebyscore(key, low, "+inf", start=offset, num=chunk,
                                                    withscores=True)
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

    def claim_stale(self, group: str, consumer: str, idle_ms: int, count: int
                    ) -> list[Delivered]:
        """Triggers delivered to some consumer and not acknowledged for `idle_ms`, now
        delivered to `consumer`."""
        with reachable("reclaiming triggers"):
            reply = self._redis.xautoclaim(self.triggers_key, group, consumer, idle_ms,
                                           "0-0", count=count)
            trimmed = [i for i, f in reply[1] if not f]  # pending, but gone from the stream
            if trimmed:
                self._redis.xack(self.triggers_key, group, *trimmed)
            claimed = [(i, f) for i, f in reply[1] if f]
            if not claimed:
                return []
            counts = {p["message_id"]: p["times_delivered"] for p in self._redis.xpending_range(
                self.triggers_key, group, claimed[0][0], claimed[-1][0], len(claimed) + 100,
                consumer)}
        return [Delivered(i.decode(), _decoded(f), counts.get(i, 1)) for i, f in claimed]

    def read_new(self, group: str, consumer: str, count: int, block_ms: int
                 ) -> list[Delivered]:
        with reachable("reading triggers"):
            reply = self._redis.xreadgroup(group, consumer, {self.triggers_key: ">"},
                                           count=count, block=block_ms)
        entries = reply[0][1] if reply else []
        return [Delivered(i.decode(), _decoded(f), 1) for i, f in entries]

    def ack(self, group: str, trigger_ids: list[str]) -> int:
        with reachable("acknowledging triggers"):
            return int(self._redis.xack(self.triggers_key, group, *trigger_ids))


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
        op["has_sources"] = bool(event["source_ids"])
    elif kind == "evaluation":
        status, reason = event["eval_result"]["status"], event["eval_result"]["reason"]
        counted = status in COUNTED_STATUSES and not imported
        feedback = "imported" if imported else "deferred" if counted else "none"
        op.update(qseq=str(event["query_sequence"]),
                  pair=pair_key(event["query_sequence"], event["knowledge_id"]),
                  record=json.dumps(vars(FeedbackRecord(status, reason, feedback))),
                  outbox=counted)
    elif kind == "reflection":
        op.update(range_end=str(event["sequence_range"][1]),
                  consumed_at=event.get("consumed_at") or "")
    elif kind.startswith("extraction_"):
        op.update(eid=event["extraction_id"], at=repr(iso_seconds(event["timestamp"])))
        if kind == "extraction_pending":
            op.update(goal_id=event["goal_id"], branch_id=event["branch_id"],
                      payload=json.dumps(event["payload"], ensure_ascii=False))
        elif kind == "extraction_reviewed":
            edited = event.get("edited_payload")
            op.update(state=STATE_AFTER[event["decision"]], decision=event["decision"],
                      edited=json.dumps(edited, ensure_ascii=False) if edited else "")
        else:
            op["kid"] = event["knowledge_id"]
    return op


def _decoded(fields: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in fields.items()}


def _event(entry_id: bytes, fields: dict[bytes, bytes]) -> Event:
    event: Event = json.loads(fields[b"e"])
    event["event_id"] = entry_id.decode()
    return event


def _trace(fields: dict[bytes, bytes], pending: int) -> Trace:
    f = _decoded(fields)
    return Trace(
        trace_id=f["trace_id"], owner=f["owner"], agent_id=f.get("agent_id", ""),
        task=f.get("task", ""), last_sequence=int(f.get("last_sequence", 0)),
        reflected_at_sequence=int(f.get("reflected_at_sequence", 0)),
        auto_commit=f.get("auto_commit") == "1", event_count=int(f.get("event_count", 0)),
        pending_evaluations=pending,
        unconsumed_reflections=int(f.get("unconsumed_reflections", 0)),
        last_trigger=f.get("last_trigger", ""), created_at=float(f["created_at"]),
        updated_at=float(f.get("updated_at", f["created_at"])))


def _extraction(fields: dict[bytes, bytes]) -> Extraction:
    f = _decoded(fields)
    edited = f.get("edited_payload")
    return Extraction(
        trace_id=f["trace_id"], extraction_id=f["extraction_id"], state=f["state"],
        sequence=int(f["sequence"]), goal_id=f["goal_id"], branch_id=f["branch_id"],
        payload=json.loads(f["payload"]), edited_payload=json.loads(edited) if edited else None,
        decision=f.get("decision", ""), knowledge_id=f.get("knowledge_id", ""),
        created_at=float(f["created_at"]), reviewed_at=float(f.get("reviewed_at", 0)),
        committed_at=float(f.get("committed_at", 0)))
