"""Dream runs, schedules and memory documents in Redis (every key under
`{<prefix>dream}:`, one hash tag, so on a Redis Cluster the scripts (lua/*.lua) and the
transactions below, which join a run, its indexes, the run stream and the schedules, find
them in one slot):

  runs               stream   one entry per run to execute (consumer group "dreamers")
  run:R              hash     the run: definition, status, reason, times, count:*, failures
  runs-by-time       zset     every run id, scored by its created_at (for ListDreamRuns)
  runs-by:U          zset     the run ids requested by U (`user:ID`), scored the same way
  runs-indexed       string   set once the runs stored before these indexes were indexed
  lock:A             string   the run of agent A in progress, with a lease
  schedules          hash     schedule id -> schedule
  fired              hash     schedule id -> the last slot fired and its run
  slot:S:T           string   slot T of schedule S has fired (SET NX: once among replicas)
  docs:A             hash     document path -> the current revision of agent A's document
  doc-revisions:A:P  list     earlier revisions of document P, newest first
  outbox:A           hash     reflections integrated into A's documents, to be consumed
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import redis
from redis.exceptions import LockNotOwnedError
from redis.lock import Lock

from knowhub_server.common.base.scopes import ORG_SEPARATOR, qualified
from knowhub_server.common.security.auth import LegacyNames
from knowhub_server.common.storage.redis_store import (
    glob_escaped,
    keyspace,
    raw_fields,
    raw_scored,
    writable,
)
from knowhub_server.dream.runs.domain import (
    QUEUED,
    RUNNING,
    DocumentRevision,
    DocumentUpdate,
    DreamRun,
    Failure,
    Fired,
    MemoryDocument,
    Schedule,
    run_from_fields,
)
from knowhub_server.dream.streams import JobStream, decoded, text

GROUP = "dreamers"
_RUN_BATCH = 100  # runs read per round trip when listing or indexing them

LUA = "knowhub_server.dream.runs"  # the package whose lua/<name>.lua holds each script


@dataclass(frozen=True)
class FireCall:
    """One call of lua/fire.lua, its KEYS and ARGV by name."""

    schedules: str
    slot_key: str  # the slot's claim (SET NX)
    run_key: str
    runs: str  # the run stream
    fired: str  # the last slot fired, by schedule
    by_time: str
    by_requester: str
    schedule_id: str
    run_id: str
    slot_ttl_seconds: int
    slot_fired: str  # the Fired record, JSON
    run_fields: str  # the run's hash, a JSON list of field, value, ...
    created_at: str

    def keys(self) -> list[str]:
        return [
            self.schedules,
            self.slot_key,
            self.run_key,
            self.runs,
            self.fired,
            self.by_time,
            self.by_requester,
        ]

    def args(self) -> list[str | int]:
        return [
            self.schedule_id,
            self.run_id,
            self.slot_ttl_seconds,
            self.slot_fired,
            self.run_fields,
            self.created_at,
        ]


@dataclass(frozen=True)
class WriteCall:
    """One call of lua/write.lua, its KEYS and ARGV by name."""

    documents: str  # the agent's documents
    revisions: str  # the document's kept revisions
    path: str
    expected: int  # the revision the writer saw; -1: any
    mode: str
    content: str
    at: str
    keep: int
    writer: str
    max_chars: int

    def keys(self) -> list[str]:
        return [self.documents, self.revisions]

    def args(self) -> list[str | int]:
        return [
            self.path,
            self.expected,
            self.mode,
            self.content,
            self.at,
            self.keep,
            self.writer,
            self.max_chars,
        ]


class DocumentsMoved(Exception):
    """A document changed since the plan was made."""


class DreamStore(JobStream):
    """The run stream (a JobStream) and every other dream key."""

    def __init__(self, client: Callable[[], redis.Redis], prefix: str) -> None:
        base = keyspace(prefix, "dream")
        super().__init__(client, f"{base}runs", GROUP)
        self._run, self._lock, self._slot = f"{base}run:", f"{base}lock:", f"{base}slot:"
        self.schedules, self._fired = f"{base}schedules", f"{base}fired"
        self._docs, self._revisions = f"{base}docs:", f"{base}doc-revisions:"
        self._outbox = f"{base}outbox:"
        self._by_time, self._by_requester = f"{base}runs-by-time", f"{base}runs-by:"
        self._indexed_marker, self._indexed = f"{base}runs-indexed", False

    # ---- Runs ---------------------------------------------------------------------------

    @staticmethod
    def _run_fields(run: DreamRun) -> dict[str, str]:
        return {
            "definition": run.definition(),
            "status": run.status,
            "attempts": "0",
            "failures": "[]",
        }

    def create_run(self, run: DreamRun) -> None:
        """Stores the run, indexes it and enqueues it, in one transaction."""
        pipe = self._client().pipeline(transaction=True)
        pipe.hset(self._run + run.run_id, mapping=writable(self._run_fields(run)))
        self._index_run(pipe, run.run_id, run.requested_by, run.created_at)
        pipe.xadd(self.stream, {"run_id": run.run_id, "attempt": "0"})
        pipe.execute()

    def _index_run(
        self, pipe: redis.client.Pipeline, run_id: str, requested_by: str, created_at: float
    ) -> None:
        pipe.zadd(self._by_time, {run_id: created_at})
        pipe.zadd(self._by_requester + requested_by, {run_id: created_at})

    def run(self, run_id: str) -> DreamRun | None:
        fields = raw_fields(self._client().hgetall(self._run + run_id))
        return run_from_fields(run_id, decoded(fields)) if b"definition" in fields else None

    def runs_newest_first(
        self, requested_by: str, before: tuple[float, str] | None
    ) -> Iterator[DreamRun]:
        """The runs `requested_by` requested (every run when ""), newest first (by
        created_at, then run id), from just after the cursor `before` on. Index entries
        of runs that expired are dropped on the way."""
        self._index_existing_runs()
        key = self._by_requester + requested_by if requested_by else self._by_time
        batch = _RUN_BATCH
        while True:
            top = before[0] if before else "+inf"
            chunk = [
                (text(m), s)
                for m, s in raw_scored(
                    self._client().zrevrangebyscore(
                        key, top, "-inf", start=0, num=batch, withscores=True
                    )
                )
            ]
            fresh = [(m, s) for m, s in chunk if before is None or (s, m) < before]
            if not fresh and len(chunk) == batch:
                batch *= 2  # more runs created at one instant than a batch holds
                continue
            if fresh:
                yield from self._live_runs(key, [m for m, _ in fresh])
                before = (fresh[-1][1], fresh[-1][0])
            if len(chunk) < batch:
                return

    def _live_runs(self, key: str, run_ids: list[str]) -> list[DreamRun]:
        pipe = self._client().pipeline(transaction=False)
        for run_id in run_ids:
            pipe.hgetall(self._run + run_id)
        found = dict(zip(run_ids, pipe.execute(), strict=True))
        expired = [run_id for run_id, fields in found.items() if b"definition" not in fields]
        if expired:
            self._client().zrem(key, *expired)
        return [
            run_from_fields(run_id, decoded(fields))
            for run_id, fields in found.items()
            if b"definition" in fields
        ]

    def _index_existing_runs(self) -> None:
        """Indexes the runs stored before the run indexes existed, once per Redis (adding
        an indexed run again changes nothing, so replicas racing here do no harm)."""
        if self._indexed or self._client().exists(self._indexed_marker):
            self._indexed = True
            return
        client = self._client()
        keys = [text(k) for k in client.scan_iter(match=glob_escaped(self._run) + "*", count=500)]
        for start in range(0, len(keys), _RUN_BATCH):
            part = keys[start : start + _RUN_BATCH]
            read = client.pipeline(transaction=False)
            for key in part:
                read.hget(key, "definition")
            write = client.pipeline(transaction=False)
            for key, definition in zip(part, read.execute(), strict=True):
                if definition:
                    fields = json.loads(definition)
                    self._index_run(
                        write, key[len(self._run) :], fields["requested_by"], fields["created_at"]
                    )
            write.execute()
        client.set(self._indexed_marker, "1")
        self._indexed = True

    def mark_running(self, run: DreamRun, at: float) -> None:
        """Starts an attempt: what an earlier attempt found failed or considered is its
        own (this one looks again); the work it did stays counted."""
        fields = {
            "status": RUNNING,
            "attempts": str(run.attempts),
            "reason": "",
            "failures": "[]",
            "count:traces_considered": "0",
            "count:traces_failed": "0",
        }
        if not run.started_at:
            fields["started_at"] = repr(at)
        self._client().hset(self._run + run.run_id, mapping=writable(fields))

    def mark_queued(self, run_id: str, reason: str) -> None:
        self._client().hset(self._run + run_id, mapping={"status": QUEUED, "reason": reason})

    def count(self, run_id: str, **deltas: int) -> None:
        pipe = self._client().pipeline(transaction=False)
        for name, delta in deltas.items():
            if delta:
                pipe.hincrby(self._run + run_id, f"count:{name}", delta)
        pipe.execute()

    def add_failure(self, run_id: str, failure: Failure) -> None:
        """Appends to the run's failures (only the run's worker writes them)."""
        key = self._run + run_id
        found = json.loads(self._client().hget(key, "failures") or "[]")
        found.append(vars(failure))
        self._client().hset(key, "failures", json.dumps(found, ensure_ascii=False))

    def finish(self, run_id: str, status: str, reason: str, at: float, keep_seconds: int) -> None:
        pipe = self._client().pipeline(transaction=True)
        pipe.hset(
            self._run + run_id,
            mapping={"status": status, "reason": reason[:4000], "finished_at": repr(at)},
        )
        pipe.expire(self._run + run_id, keep_seconds)
        pipe.execute()

    # ---- The per-agent lock ---------------------------------------------------------------

    def _agent_lock(self, agent_id: str, run_id: str, lease_ms: int) -> Lock:
        """The agent's lease lock (redis-py's Lock) as the run's: its token is the run id,
        so a worker that takes over a run whose worker died keeps the run's lock."""
        lock = Lock(
            self._client(), self._lock + agent_id, timeout=lease_ms / 1000, thread_local=False
        )
        lock.local.token = run_id.encode()
        return lock

    def acquire_agent(self, agent_id: str, run_id: str, lease_ms: int) -> str:
        """Takes the agent's lock for the run (or keeps it, for a run taken over); returns
        the run holding it."""
        lock = self._agent_lock(agent_id, run_id, lease_ms)
        for _ in range(3):  # the holder's lease may end between the two steps
            if lock.acquire(blocking=False, token=run_id) or self.renew_agent(
                agent_id, run_id, lease_ms
            ):
                return run_id
            holder = self._client().get(lock.name)
            if holder is not None:
                return text(holder)
        return run_id if lock.acquire(blocking=False, token=run_id) else ""

    def renew_agent(self, agent_id: str, run_id: str, lease_ms: int) -> bool:
        """Extends the lease while the run still holds the lock."""
        try:
            return self._agent_lock(agent_id, run_id, lease_ms).reacquire()
        except LockNotOwnedError:
            return False

    def release_agent(self, agent_id: str, run_id: str) -> None:
        with contextlib.suppress(LockNotOwnedError):
            self._agent_lock(agent_id, run_id, 1).release()

    # ---- Schedules ---------------------------------------------------------------------------

    def add_schedule(self, schedule: Schedule) -> None:
        self._client().hset(self.schedules, schedule.schedule_id, schedule.to_json())

    def schedule(self, schedule_id: str) -> Schedule | None:
        raw = self._client().hget(self.schedules, schedule_id)
        return Schedule.from_json(raw) if raw else None

    def all_schedules(self) -> list[Schedule]:
        return [Schedule.from_json(raw) for raw in self._client().hvals(self.schedules)]

    def delete_schedule(self, schedule_id: str) -> bool:
        pipe = self._client().pipeline(transaction=True)
        pipe.hdel(self.schedules, schedule_id)
        pipe.hdel(self._fired, schedule_id)
        return bool(pipe.execute()[0])

    def fired(self, schedule_ids: list[str]) -> dict[str, Fired]:
        if not schedule_ids:
            return {}
        found = self._client().hmget(self._fired, schedule_ids)
        return {
            s: Fired(**json.loads(raw)) for s, raw in zip(schedule_ids, found, strict=True) if raw
        }

    def fire(self, schedule: Schedule, slot: float, run: DreamRun, slot_ttl: int) -> bool:
        """Creates and enqueues the slot's run unless the slot fired already (in this or
        another process) or the schedule is gone; True when this call fired it."""
        fields = [x for kv in self._run_fields(run).items() for x in kv]
        call = FireCall(
            schedules=self.schedules,
            slot_key=f"{self._slot}{schedule.schedule_id}:{slot:.0f}",
            run_key=self._run + run.run_id,
            runs=self.stream,
            fired=self._fired,
            by_time=self._by_time,
            by_requester=self._by_requester + run.requested_by,
            schedule_id=schedule.schedule_id,
            run_id=run.run_id,
            slot_ttl_seconds=slot_ttl,
            slot_fired=json.dumps(vars(Fired(slot, run.run_id))),
            run_fields=json.dumps(fields),
            created_at=repr(run.created_at),
        )
        return bool(self._script(LUA, "fire")(keys=call.keys(), args=call.args()))

    # ---- Memory documents --------------------------------------------------------------------

    def documents(self, agent_id: str) -> dict[str, MemoryDocument]:
        raw = self._client().hgetall(self._docs + agent_id)
        return {text(path): _document(agent_id, text(path), value) for path, value in raw.items()}

    def document(self, agent_id: str, path: str) -> MemoryDocument | None:
        raw = self._client().hget(self._docs + agent_id, path)
        return _document(agent_id, path, raw) if raw else None

    def revisions(self, agent_id: str, path: str) -> list[DocumentRevision]:
        found = []
        for raw in self._client().lrange(f"{self._revisions}{agent_id}:{path}", 0, -1):
            entry = json.loads(raw)
            found.append(
                DocumentRevision(_document(agent_id, path, entry["document"]), entry["replaced_at"])
            )
        return found

    def apply_plan(
        self,
        agent_id: str,
        run_id: str,
        updates: list[DocumentUpdate],
        seen: dict[str, MemoryDocument],
        *,
        at: float,
        keep: int,
        outbox_field: str,
        outbox: dict[str, list[str]],
    ) -> None:
        """Writes the documents and records the integrated reflections (`outbox`: event
        ids by trace) for consumption, atomically; raises DocumentsMoved if a document is
        no longer the revision the plan was made from."""
        planned = []
        for update in updates:
            revision = seen[update.path].revision if update.path in seen else 0
            planned.append(
                {
                    "path": update.path,
                    "expected": revision,
                    "document": json.dumps(
                        {
                            "content": update.new_content,
                            "revision": revision + 1,
                            "updated_at": at,
                            "run_id": run_id,
                        },
                        ensure_ascii=False,
                    ),
                }
            )
        argument = {
            "updates": planned,
            "now": repr(at),
            "keep": keep,
            "outbox_field": outbox_field,
            "outbox": json.dumps(outbox),
        }
        keys = [
            self._docs + agent_id,
            self._outbox + agent_id,
            *(f"{self._revisions}{agent_id}:{u.path}" for u in updates),
        ]
        moved = text(
            self._script(LUA, "apply")(keys=keys, args=[json.dumps(argument, ensure_ascii=False)])
        )
        if moved:
            raise DocumentsMoved(moved)

    def write_document(
        self,
        agent_id: str,
        path: str,
        content: str,
        *,
        mode: str,
        expected: int | None,
        at: float,
        keep: int,
        writer: str,
        max_chars: int,
    ) -> MemoryDocument | str:
        """Writes one document in one step, keeping the replaced revision; returns it, or
        `moved:<revision>` when `expected` is not the current revision (0: none), or
        `too-long:<characters>` when it would hold more than `max_chars`."""
        call = WriteCall(
            documents=self._docs + agent_id,
            revisions=f"{self._revisions}{agent_id}:{path}",
            path=path,
            expected=-1 if expected is None else expected,
            mode=mode,
            content=content,
            at=repr(at),
            keep=keep,
            writer=writer,
            max_chars=max_chars,
        )
        raw = text(self._script(LUA, "write")(keys=call.keys(), args=call.args()))
        if raw.startswith(("moved:", "too-long:")):
            return raw
        return _document(agent_id, path, raw)

    def delete_document(self, agent_id: str, path: str) -> bool:
        """Removes the document and its kept revisions; False when there was none."""
        pipe = self._client().pipeline(transaction=True)
        pipe.hdel(self._docs + agent_id, path)
        pipe.delete(f"{self._revisions}{agent_id}:{path}")
        return bool(pipe.execute()[0])

    def outbox(self, agent_id: str) -> dict[str, dict[str, list[str]]]:
        """Reflections integrated but not consumed yet: by outbox field, their event ids
        by trace."""
        raw = self._client().hgetall(self._outbox + agent_id)
        return {text(k): json.loads(v) for k, v in raw.items()}

    def settle_outbox(self, agent_id: str, outbox_field: str) -> None:
        self._client().hdel(self._outbox + agent_id, outbox_field)

    def erase_documents(self, agent_id: str) -> int:
        """Erases an agent's memory documents with their kept revisions and its outbox;
        returns how many documents there were."""
        client = self._client()
        paths = [text(p) for p in client.hkeys(self._docs + agent_id)]
        revisions = [
            text(k) for k in client.scan_iter(match=f"{self._revisions}{agent_id}:*", count=500)
        ]
        pipe = client.pipeline(transaction=False)
        for key in {*revisions, *(f"{self._revisions}{agent_id}:{p}" for p in paths)}:
            pipe.delete(key)
        pipe.delete(self._docs + agent_id, self._outbox + agent_id)
        pipe.execute()
        return len(paths)

    # ---- Names from before agent ids had organisations --------------------------------------

    def qualify_legacy_agents(self, names: LegacyNames) -> tuple[int, list[str]]:
        """Moves the memory documents (their kept revisions and outbox too) of each bare
        agent to its org's agent, and each schedule of a bare agent to its requester's
        org's agent. Returns how many agents and schedules moved, and the agents left
        where they are: of no single org, or whose org's agent has documents already."""
        client, moved, left = self._client(), 0, []
        for agent in sorted(self._bare_agents()):
            org = names.of_agent(agent)
            new = qualified(org, agent)
            if not org or client.exists(self._docs + new, self._outbox + new):
                left.append(agent)
                continue
            pipe = client.pipeline(transaction=True)
            for path in client.hkeys(self._docs + agent):
                revisions = f"{self._revisions}{agent}:{text(path)}"
                if client.exists(revisions):
                    pipe.rename(revisions, f"{self._revisions}{new}:{text(path)}")
            for key in (self._docs, self._outbox):
                if client.exists(key + agent):
                    pipe.rename(key + agent, key + new)
            pipe.execute()
            moved += 1
        for schedule in self.all_schedules():
            org = names.of_writer(schedule.requested_by)
            if org and ORG_SEPARATOR not in schedule.agent_id:
                self.add_schedule(replace(schedule, agent_id=qualified(org, schedule.agent_id)))
                moved += 1
        return moved, left

    def _bare_agents(self) -> set[str]:
        """The agents with memory documents or an outbox kept under a bare agent id."""
        found = set()
        for prefix in (self._docs, self._outbox):
            for key in self._client().scan_iter(match=glob_escaped(prefix) + "*"):
                agent = text(key)[len(prefix) :]
                if ORG_SEPARATOR not in agent:
                    found.add(agent)
        return found


def _document(agent_id: str, path: str, raw: bytes | str | dict[str, object]) -> MemoryDocument:
    fields = raw if isinstance(raw, dict) else json.loads(raw)
    return MemoryDocument(agent_id=agent_id, path=path, **fields)


def outbox_field(run_id: str, step: int) -> str:
    """The outbox entry of one integration step of a run."""
    return f"{run_id}|{step}"
