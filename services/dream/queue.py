"""The memory's Redis keys: each conversation's short-term memo list, the historian's
job stream (one consumer group) and its failed stream.

Seed 002's file queue (pending/ processing/ failed/) maps onto streams with the same
guarantees: a job is pending until a worker acknowledges it; a worker's unacknowledged
job is taken over by another after the stale timeout (XAUTOCLAIM); a failing job is put
back with its delivery count until it has used its retries, then moved, with its error,
to the failed stream. Moves are MULTI transactions, so a job is never in neither place.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from services.common.errors import InvalidArgument, NotFound
from services.dream.domain import FailedJob, Job, Memo

GROUP = "historian"
_ENTRY_ID = re.compile(r"^\d+-\d+$")
_SCAN_BATCH = 200
# Moves a failed entry back onto the job stream, if it is still there (one retry wins).
_RETRY_SCRIPT = """
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', unpack(ARGV, 2))
redis.call('XDEL', KEYS[1], ARGV[1])
return 1
"""


@dataclass
class Delivery:
    """A job entry handed to a worker; `deliveries` counts every delivery of the job,
    including those of the entries it was requeued from."""

    entry_id: str
    fields: dict[str, str]
    deliveries: int

    @classmethod
    def of(cls, entry_id: bytes | str, raw: dict[bytes, bytes], times_delivered: int
           ) -> Delivery:
        fields = {_text(k): _text(v) for k, v in raw.items()}
        earlier = int(fields.get("attempt", "0")) if fields.get("attempt", "").isdigit() else 0
        return cls(_text(entry_id), fields, earlier + times_delivered)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _fields(raw: dict[bytes, bytes]) -> dict[str, str]:
    return {_text(k): _text(v) for k, v in raw.items()}


class HistorianQueue:
    def __init__(self, client: Callable[[], redis.Redis], prefix: str, *, memos_keep: int,
                 failed_max_files: int, failed_max_age_days: int) -> None:
        self._client = client
        self.jobs = f"{prefix}historian:jobs"
        self.failed = f"{prefix}historian:failed"
        self._memos = f"{prefix}memory:memos:"
        self._memos_keep = memos_keep
        self._failed_max = failed_max_files
        self._failed_age_ms = failed_max_age_days * 86_400_000

    # ---- Remember and RecentMemos ----------------------------------------------------

    def _memo_key(self, scope: str, conversation: str) -> str:
        return f"{self._memos}{scope}:{conversation}"

    def remember(self, job: Job, memo: Memo | None) -> None:
        """Appends the memo to its bounded list and enqueues the job, in one round trip."""
        pipe = self._client().pipeline(transaction=True)
        if memo is not None:
            key = self._memo_key(job.scope, job.context.conversation)
            pipe.rpush(key, memo.to_json())
            pipe.ltrim(key, -self._memos_keep, -1)
        pipe.xadd(self.jobs, {"job": job.to_json(), "attempt": 0})
        pipe.execute()

    def recent_memos(self, scope: str, conversation: str, limit: int) -> list[Memo]:
        raw = self._client().lrange(self._memo_key(scope, conversation), -limit, -1)
        return [Memo.from_json(item) for item in raw]

    # ---- Workers -----------------------------------------------------------------------

    def blocking_client(self) -> redis.Redis:
        """A client holding one connection of its own, for a worker's blocking reads."""
        return redis.Redis(connection_pool=self._client().connection_pool,
                           single_connection_client=True)

    def unblock(self, client_id: int) -> None:
        """Ends a worker's blocking read at once (as if it timed out)."""
        self._client().client_unblock(client_id)

    def ensure_group(self) -> None:
        """Creates the consumer group; from the stream's start, so jobs enqueued before
        any worker existed are read too."""
        try:
            self._client().xgroup_create(self.jobs, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def read(self, client: redis.Redis, consumer: str, block_ms: int) -> list[Delivery]:
        """The next new job, waiting up to `block_ms` for one."""
        reply = client.xreadgroup(GROUP, consumer, {self.jobs: ">"}, count=1, block=block_ms)
        return [Delivery.of(entry_id, raw, 1)
                for _stream, entries in reply or () for entry_id, raw in entries]

    def reclaim(self, consumer: str, min_idle_ms: int) -> list[Delivery]:
        """Takes over one job another worker was given `min_idle_ms` or more ago and has
        neither finished nor touched since (its worker died or stalled)."""
        client = self._client()
        reply = client.xautoclaim(self.jobs, GROUP, consumer, min_idle_ms, start_id="0-0",
                                  count=1)
        claimed = []
        for entry_id, raw in reply[1] if len(reply) > 1 else ():
            entry_id = _text(entry_id)
            if not raw:  # deleted from the stream meanwhile: nothing left to do
                client.xack(self.jobs, GROUP, entry_id)
                continue
            pending = client.xpending_range(self.jobs, GROUP, entry_id, entry_id, 1)
            times = int(pending[0]["times_delivered"]) if pending else 1
            claimed.append(Delivery.of(entry_id, raw, times))
        return claimed

    def touch(self, consumer: str, entry_id: str) -> None:
        """Resets the job's idle time, so nobody takes it over while it is worked on."""
        self._client().xclaim(self.jobs, GROUP, consumer, 0, [entry_id], justid=True)

    def done(self, delivery: Delivery) -> None:
        pipe = self._client().pipeline(transaction=True)
        pipe.xack(self.jobs, GROUP, delivery.entry_id)
        pipe.xdel(self.jobs, delivery.entry_id)
        pipe.execute()

    def requeue(self, delivery: Delivery, deliveries: int, error: str) -> None:
        """Puts the job back at the end of the stream, `deliveries` used so far."""
        fields = {**delivery.fields, "attempt": str(deliveries), "last_error": error[:2000]}
        self._move(delivery, self.jobs, fields)

    def fail(self, delivery: Delivery, job_id: str, scope: str, error: str) -> None:
        fields = {**delivery.fields, "attempt": str(delivery.deliveries),
                  "error": error[:2000], "job_id": job_id, "scope": scope,
                  "failed_at": str(time.time())}
        self._move(delivery, self.failed, fields)
        self.trim_failed()

    def _move(self, delivery: Delivery, stream: str, fields: dict[str, str]) -> None:
        pipe = self._client().pipeline(transaction=True)
        pipe.xadd(stream, fields)
        pipe.xack(self.jobs, GROUP, delivery.entry_id)
        pipe.xdel(self.jobs, delivery.entry_id)
        pipe.execute()

    def trim_failed(self) -> None:
        """Drops failed jobs past the age limit, then the oldest past the count limit."""
        client = self._client()
        oldest_kept = int(time.time() * 1000) - self._failed_age_ms
        client.xtrim(self.failed, minid=f"{oldest_kept}-0", approximate=False)
        client.xtrim(self.failed, maxlen=self._failed_max, approximate=False)

    def drop_consumers(self, idle_ms: int, only: str | None = None) -> None:
        """Removes consumers (all, or `only` one) idle for `idle_ms` with no pending job:
        workers that stopped or died. One with pending jobs stays, since deleting it would
        drop its jobs from the group's view."""
        client = self._client()
        for info in client.xinfo_consumers(self.jobs, GROUP):
            name = _text(info["name"])
            if info["pending"] == 0 and info["idle"] >= idle_ms and only in (None, name):
                client.xgroup_delconsumer(self.jobs, GROUP, name)

    # ---- Failed jobs -------------------------------------------------------------------

    def failed_page(self, page_size: int, page_token: str,
                    visible: Callable[[FailedJob], bool]) -> tuple[list[FailedJob], str]:
        """Newest first; the token is the stream id of the last job returned."""
        if page_token and not _ENTRY_ID.match(page_token):
            raise InvalidArgument("page_token", "is not a token this service issued")
        client = self._client()
        upper = f"({page_token}" if page_token else "+"
        found: list[tuple[str, FailedJob]] = []
        while len(found) <= page_size:
            batch = client.xrevrange(self.failed, max=upper, min="-", count=_SCAN_BATCH)
            for entry_id, raw in batch:
                job = failed_job(_fields(raw))
                if visible(job):
                    found.append((_text(entry_id), job))
            if len(batch) < _SCAN_BATCH:
                break
            upper = f"({_text(batch[-1][0])}"
        page = found[:page_size]
        return [job for _, job in page], page[-1][0] if len(found) > page_size else ""

    def retry_failed(self, job_id: str, visible: Callable[[FailedJob], bool]) -> None:
        """Moves the failed job back onto the job stream with fresh retries."""
        client = self._client()
        lower = "-"
        while True:
            batch = client.xrange(self.failed, min=lower, max="+", count=_SCAN_BATCH)
            for entry_id, raw in batch:
                fields = _fields(raw)
                if fields.get("job_id") == job_id and visible(failed_job(fields)):
                    requeued = {k: v for k, v in fields.items()
                                if k not in ("error", "job_id", "scope", "failed_at")}
                    requeued["attempt"] = "0"
                    args = [_text(entry_id)] + [x for kv in requeued.items() for x in kv]
                    if client.eval(_RETRY_SCRIPT, 2, self.failed, self.jobs, *args):
                        return
            if len(batch) < _SCAN_BATCH:
                raise NotFound(f"failed job {job_id!r} not found")
            lower = f"({_text(batch[-1][0])}"


def failed_job(fields: dict[str, str]) -> FailedJob:
    """A failed stream entry; `job` is None when the job itself could not be read."""
    try:
        job: Job | None = Job.from_json(fields.get("job", ""))
    except ValueError:
        job = None
    return FailedJob(job_id=fields.get("job_id", ""), error=fields.get("error", ""),
                     deliveries=int(fields.get("attempt", "0") or 0),
                     failed_at=float(fields.get("failed_at", "0") or 0), job=job)
