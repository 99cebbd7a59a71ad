"""The memory's Redis keys: each conversation's short-term memo list, the historian's
job stream (one consumer group) and its failed stream, Remember's request ids, and each
job's status (`job:<id>`, for GetMemoryJob); all under `{<prefix>historian}:`, one hash tag,
so on a Redis Cluster the scripts (lua/*.lua) that join them (a memo, its job, its status
and its request id; a failed job and the job stream) find them in one slot.

The queue is streams (see streams.py): a job is pending until a worker acknowledges it; a
worker's unacknowledged job is taken over by another after the stale timeout (XAUTOCLAIM);
a failing job is put back with its delivery count until it has used its retries, then
moved, with its error, to the failed stream.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from knowhub_server.common.base.errors import InvalidArgument, NotFound
from knowhub_server.common.storage.redis_store import keyspace, stream_entries
from knowhub_server.dream.memory.domain import (
    JOB_FAILED,
    JOB_PENDING,
    PRIVATE,
    Decision,
    FailedJob,
    Job,
    JobStatus,
    Memo,
    compact_json,
)
from knowhub_server.dream.streams import Delivery, JobStream, decoded, text

GROUP = "historian"
_ENTRY_ID = re.compile(r"\d+-\d+")
_SCAN_BATCH = 200
LUA = "knowhub_server.dream.memory"  # the package whose lua/<name>.lua holds each script


@dataclass(frozen=True)
class RememberCall:
    """One call of lua/remember.lua, its KEYS and ARGV by name."""

    request_key: str  # the first call's response, kept for replays
    memo_list: str  # the conversation's memos
    jobs: str  # the job stream
    status_key: str  # the job's status
    response: str
    response_ttl_seconds: int
    memo: str  # the memo's entry, "" for none
    memos_keep: int
    job: str
    replayable: bool  # the call has a request id
    status: str
    status_ttl_seconds: int

    def keys(self) -> list[str]:
        return [self.request_key, self.memo_list, self.jobs, self.status_key]

    def args(self) -> list[str | int]:
        return [
            self.response,
            self.response_ttl_seconds,
            self.memo,
            self.memos_keep,
            self.job,
            "1" if self.replayable else "",
            self.status,
            self.status_ttl_seconds,
        ]


class HistorianQueue(JobStream):
    def __init__(
        self,
        client: Callable[[], redis.Redis],
        prefix: str,
        *,
        memos_keep: int,
        failed_max_files: int,
        failed_max_age_days: int,
        job_keep_hours: int,
    ) -> None:
        base = keyspace(prefix, "historian")
        super().__init__(client, f"{base}jobs", GROUP)
        self.jobs = self.stream
        self.failed = f"{base}failed"
        self._memos = f"{base}memos:"
        self._requests = f"{base}remember-request:"
        self._statuses = f"{base}job:"
        self._job_keep_seconds = job_keep_hours * 3600
        self._memos_keep = memos_keep
        self._failed_max = failed_max_files
        self._failed_age_ms = failed_max_age_days * 86_400_000

    # ---- Remember and RecentMemos ----------------------------------------------------

    def _memo_key(self, scope: str, conversation: str) -> str:
        return f"{self._memos}{scope}:{conversation}"

    def _request_key(self, caller: str, request_id: str) -> str:
        return f"{self._requests}{caller}:{request_id}"

    def remember(
        self,
        job: Job,
        memo: Memo | None,
        *,
        request_id: str = "",
        response: str = "",
        request_ttl_seconds: int = 0,
    ) -> str | None:
        """Appends the memo to its bounded list and enqueues the job, in one round trip.
        With a request_id, `response` is kept under it (per caller, job.written_by) for
        `request_ttl_seconds`; a replay writes nothing and returns the first response."""
        memo_key = self._memo_key(job.scope, job.context.conversation)
        status = _new_status(job, JOB_PENDING)
        call = RememberCall(
            request_key=self._request_key(job.written_by, request_id),
            memo_list=memo_key,
            jobs=self.jobs,
            status_key=self._statuses + job.job_id,
            response=response,
            response_ttl_seconds=request_ttl_seconds,
            memo=memo.to_json() if memo else "",
            memos_keep=self._memos_keep,
            job=job.to_json(),
            replayable=bool(request_id),
            status=_status_json(status),
            status_ttl_seconds=self._job_keep_seconds,
        )
        first = self._script(LUA, "remember")(keys=call.keys(), args=call.args())
        return text(first) if first is not None else None

    def recent_memos(self, scope: str, conversation: str, limit: int) -> list[Memo]:
        raw = self._client().lrange(self._memo_key(scope, conversation), -limit, -1)
        return [Memo.from_json(item) for item in raw]

    def memo(self, scope: str, conversation: str, job_id: str) -> Memo | None:
        raw = self._client().lrange(self._memo_key(scope, conversation), 0, -1)
        return next((m for m in map(Memo.from_json, raw) if m.job_id == job_id), None)

    def replace_memo(self, scope: str, conversation: str, job_id: str, memo: Memo | None) -> bool:
        """Replaces (or with None removes) the memo of `job_id`, in one step; False when
        the conversation holds no memo of that job."""
        old = self._script(LUA, "memo")(
            keys=[self._memo_key(scope, conversation)],
            args=[job_id, memo.to_json() if memo else ""],
        )
        return old is not None

    # ---- Job statuses ----------------------------------------------------------------

    def job_status(self, job_id: str) -> JobStatus | None:
        raw = self._client().get(self._statuses + job_id)
        return _status_from_json(raw) if raw else None

    def set_status(
        self,
        job: Job,
        state: str,
        *,
        error: str | None = None,
        deliveries: int | None = None,
        event_ids: list[str] | None = None,
        decisions: list[Decision] | None = None,
    ) -> None:
        """Moves the job's status on (read, change, write: a job has one worker at a time)."""
        status = self.job_status(job.job_id) or _new_status(job, state)
        status.state, status.updated_at = state, time.time()
        if error is not None:
            status.error = error[:2000]
        if deliveries is not None:
            status.deliveries = deliveries
        if event_ids is not None:
            status.event_ids = event_ids
        if decisions is not None:
            status.decisions = decisions
        self._client().set(
            self._statuses + job.job_id, _status_json(status), ex=self._job_keep_seconds
        )

    # ---- Settling a delivered job ---------------------------------------------------

    def requeue(self, delivery: Delivery, deliveries: int, error: str) -> None:
        """Puts the job back at the end of the stream, `deliveries` used so far."""
        fields = {**delivery.fields, "attempt": str(deliveries), "last_error": error[:2000]}
        self.move(delivery, self.jobs, fields)
        job = _job_of(delivery)
        if job is not None:
            self.set_status(job, JOB_PENDING, error=error)

    def fail(self, delivery: Delivery, job_id: str, scope: str, error: str) -> None:
        fields = {
            **delivery.fields,
            "attempt": str(delivery.deliveries),
            "error": error[:2000],
            "job_id": job_id,
            "scope": scope,
            "failed_at": str(time.time()),
        }
        self.move(delivery, self.failed, fields)
        self.trim_failed()
        job = _job_of(delivery)
        if job is not None:
            self.set_status(job, JOB_FAILED, error=error, deliveries=delivery.deliveries)

    def trim_failed(self) -> None:
        """Drops failed jobs past the age limit, then the oldest past the count limit."""
        client = self._client()
        oldest_kept = int(time.time() * 1000) - self._failed_age_ms
        client.xtrim(self.failed, minid=f"{oldest_kept}-0", approximate=False)
        client.xtrim(self.failed, maxlen=self._failed_max, approximate=False)

    # ---- Failed jobs -------------------------------------------------------------------

    def failed_page(
        self, page_size: int, page_token: str, visible: Callable[[FailedJob], bool]
    ) -> tuple[list[FailedJob], str]:
        """Newest first; the token is the stream id of the last job returned."""
        if page_token and not _ENTRY_ID.fullmatch(page_token):
            raise InvalidArgument("page_token", "is not a token this service issued")
        client = self._client()
        upper = f"({page_token}" if page_token else "+"
        found: list[tuple[str, FailedJob]] = []
        while len(found) <= page_size:
            batch = stream_entries(
                client.xrevrange(self.failed, max=upper, min="-", count=_SCAN_BATCH)
            )
            for entry_id, raw in batch:
                job = failed_job(decoded(raw))
                if visible(job):
                    found.append((text(entry_id), job))
            if len(batch) < _SCAN_BATCH:
                break
            upper = f"({text(batch[-1][0])}"
        page = found[:page_size]
        return [job for _, job in page], page[-1][0] if len(found) > page_size else ""

    def retry_failed(self, job_id: str, visible: Callable[[FailedJob], bool]) -> None:
        """Moves the failed job back onto the job stream with fresh retries."""
        client = self._client()
        lower = "-"
        while True:
            batch = stream_entries(
                client.xrange(self.failed, min=lower, max="+", count=_SCAN_BATCH)
            )
            for entry_id, raw in batch:
                fields = decoded(raw)
                if fields.get("job_id") == job_id and visible(failed_job(fields)):
                    requeued = {
                        k: v
                        for k, v in fields.items()
                        if k not in ("error", "job_id", "scope", "failed_at")
                    }
                    requeued["attempt"] = "0"
                    # Pending before the move: once on the stream, a worker may take the
                    # job and finish it before a later write would turn it back to pending.
                    job = failed_job(fields).job
                    if job is not None:
                        self.set_status(job, JOB_PENDING, error="")
                    self._move_back(text(entry_id), requeued)  # False: another retry moved it
                    return
            if len(batch) < _SCAN_BATCH:
                raise NotFound(f"failed job {job_id!r} not found")
            lower = f"({text(batch[-1][0])}"

    def _move_back(self, failed_entry_id: str, fields: dict[str, str]) -> bool:
        """Moves a failed entry onto the job stream as `fields`, in one step; False when
        it is no longer in the failed stream (another retry moved it)."""
        flat = [part for pair in fields.items() for part in pair]
        return bool(
            self._script(LUA, "retry")(keys=[self.failed, self.jobs], args=[failed_entry_id, *flat])
        )

    # ---- Forgetting people ---------------------------------------------------------------

    def erase_about(self, people: frozenset[str], scopes: frozenset[str] | None) -> dict[str, int]:
        """Erases the memos `people` sent or that sit in their private lists, and the
        queued and failed jobs of conversations with them, in `scopes` (all when None)."""
        client = self._client()
        memos = 0
        for key in client.scan_iter(match=f"{self._memos}*", count=500):
            scope, _, conversation = text(key)[len(self._memos) :].rpartition(":")
            scope, _, kind = scope.rpartition(":")
            if scopes is not None and scope not in scopes:
                continue
            private = kind == PRIVATE and conversation in people
            for raw in client.lrange(key, 0, -1):
                if private or Memo.from_json(raw).sender_id in people:
                    # redis-py types the value as text; Redis matches the bytes it sent
                    memos += client.lrem(key, 0, raw)  # type: ignore[arg-type]
        jobs = sum(
            self._erase_jobs(client, stream, people, scopes) for stream in (self.jobs, self.failed)
        )
        self._erase_statuses(client, people, scopes)
        return {"memos": memos, "jobs": jobs}

    def _erase_statuses(
        self, client: redis.Redis, people: frozenset[str], scopes: frozenset[str] | None
    ) -> None:
        """Drops the statuses of the jobs about `people` (they hold their decisions)."""
        for key in client.scan_iter(match=f"{self._statuses}*", count=500):
            raw = client.get(key)
            status = _status_from_json(raw) if raw else None
            if (
                status is not None
                and people.intersection(status.subjects)
                and (scopes is None or status.scope in scopes)
            ):
                client.delete(key)

    def _erase_jobs(
        self,
        client: redis.Redis,
        stream: str,
        people: frozenset[str],
        scopes: frozenset[str] | None,
    ) -> int:
        erased, lower = 0, "-"
        while True:
            batch = stream_entries(client.xrange(stream, min=lower, max="+", count=_SCAN_BATCH))
            doomed = []
            for entry_id, raw in batch:
                try:
                    job = Job.from_json(decoded(raw).get("job", ""))
                except ValueError:
                    continue
                about = {job.context.user_id, job.context.sender_id}
                if (scopes is None or job.scope in scopes) and people.intersection(about):
                    doomed.append(entry_id)
            if doomed:
                erased += client.xdel(stream, *doomed)
            if len(batch) < _SCAN_BATCH:
                return erased
            lower = f"({text(batch[-1][0])}"


def failed_job(fields: dict[str, str]) -> FailedJob:
    """A failed stream entry; `job` is None when the job itself could not be read."""
    try:
        job: Job | None = Job.from_json(fields.get("job", ""))
    except ValueError:
        job = None
    return FailedJob(
        job_id=fields.get("job_id", ""),
        error=fields.get("error", ""),
        deliveries=int(fields.get("attempt", "0") or 0),
        failed_at=float(fields.get("failed_at", "0") or 0),
        job=job,
    )


def _job_of(delivery: Delivery) -> Job | None:
    """The delivered job; None when it cannot be read (it has no status to follow)."""
    try:
        return Job.from_json(delivery.fields.get("job", ""))
    except ValueError:
        return None


def _new_status(job: Job, state: str) -> JobStatus:
    context = job.context
    return JobStatus(
        job.job_id,
        state,
        job.scope,
        job.written_by,
        created_at=job.created_at,
        updated_at=job.created_at,
        subjects=sorted({context.user_id, context.sender_id or context.user_id}),
    )


def _status_json(status: JobStatus) -> str:
    return compact_json({**vars(status), "decisions": [vars(d) for d in status.decisions]})


def _status_from_json(raw: str | bytes) -> JobStatus:
    data = json.loads(raw)
    decisions = [Decision(**d) for d in data.pop("decisions", [])]
    return JobStatus(**data, decisions=decisions)
