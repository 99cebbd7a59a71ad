"""The historian: what one job does, and the worker threads that do it.

A job: each observation is rewritten by the LLM into an absolute event, checked by the
gate and retried; what still fails is stored as written or as rewritten with
is_absolute=false and a warning. The event is then reconciled with the subject's most
similar current events: added, stored as an update that supersedes an older fact, a
retraction of one, or a no-op (an exact duplicate without asking the LLM). One event per
perspective goes to Qdrant under an id derived from the job, so a redelivered job finds
what it stored rather than storing it twice. Then the LLM merges the observations that
changed something into the sender's and group's profiles by tool calls; a profile
remembers the jobs merged into it, so a job merges once. Without an LLM, or when it fails
or answers garbage, events are stored as written and profiles stay as they are: nothing
is lost. Only store failures make a job fail and retry.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

import redis

from knowhub_server.common.base.times import now
from knowhub_server.common.llm.chat import LLM, LLMError
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.dream.memory import prompts
from knowhub_server.dream.memory.config import MemorySettings
from knowhub_server.dream.memory.domain import (
    ADD,
    CURRENT,
    DELETED,
    GROUP_ENTITY,
    JOB_DONE,
    JOB_PROCESSING,
    MEMO_INDEX,
    NOOP,
    PERSPECTIVE_GROUP,
    PERSPECTIVE_SENDER,
    RETRACT,
    SUPERSEDED,
    UPDATE,
    CognitiveEvent,
    Decision,
    Job,
    Profile,
    ProfileRecord,
    ProfileUpdate,
    describe_gate,
    drifted_ids,
    event_id,
    events_for,
    gate_hits,
    ids_to_keep,
    normalized_fact,
    perspectives,
    profile_targets,
    sibling_ids,
    updated_profile,
)
from knowhub_server.dream.memory.queue import HistorianQueue
from knowhub_server.dream.memory.store import (
    EventStore,
    ProfileMoved,
    ProfileStore,
    subject_where,
)
from knowhub_server.dream.streams import Checkpoint, Delivery, PoolThread, StreamWorker, WorkerPool

log = logging.getLogger("knowhub.historian")

MERGE_ATTEMPTS = 3


class Released(Exception):
    """The process is stopping: the job goes back to the queue, its delivery uncharged."""


@dataclass
class JobOutcome:
    """What a job wrote and decided, for its status."""

    event_ids: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)


def _profile_note(decision: Decision, text: str) -> str:
    """An event as the profile merge sees it: what it replaced or retracted too."""
    if decision.action == RETRACT:
        return f"{text} (this no longer holds of an earlier fact; drop it)"
    if decision.action == UPDATE:
        return f"{text} (this replaces an earlier fact)"
    return text


def _profile_of(record: ProfileRecord | None) -> Profile | None:
    return record.profile if record is not None else None


@dataclass
class Rewrite:
    text: str
    is_absolute: bool
    warning: str = ""


class JobProcessor:
    def __init__(
        self, events: EventStore, profiles: ProfileStore, llm: LLM | None, settings: MemorySettings
    ) -> None:
        self._events = events
        self._profiles = profiles
        self._llm = llm
        self._settings = settings

    def process(self, job: Job, checkpoint: Checkpoint) -> JobOutcome:
        """Does the job. `checkpoint()` runs before each LLM call: it keeps the job
        claimed and raises Released when the process is stopping."""
        outcome = JobOutcome()
        changes = []
        items: list[tuple[int | str, str]] = list(enumerate(job.observations)) or [
            (MEMO_INDEX, job.memo)
        ]
        for index, written in items:
            decision, text = self._stored_before(job, index) or self._store(
                job, index, written, checkpoint
            )
            outcome.decisions.append(decision)
            if decision.action in (ADD, UPDATE):
                outcome.event_ids += [
                    event_id(job.job_id, index, p) for p in perspectives(job.context.request_type)
                ]
            if decision.action in (UPDATE, RETRACT):
                self._supersede(decision.target_event_id, job.timestamp, decision.event_id)
            if decision.action == NOOP and decision.target_event_id:
                self._confirm(decision.target_event_id, job.timestamp)
            if decision.action != NOOP:
                changes.append(_profile_note(decision, text))
        if job.observations and self._llm is not None and changes:
            self._merge_profiles(job, changes, checkpoint)
        return outcome

    def _stored_before(self, job: Job, index: int | str) -> tuple[Decision, str] | None:
        """What an earlier delivery of the job stored for this item, if it got that far:
        its decision is kept (and its events, which may have been edited since)."""
        found = self._events.get([event_id(job.job_id, index, PERSPECTIVE_SENDER)])
        if not found:
            return None
        event = found[0]
        position = index if isinstance(index, int) else -1
        return Decision(
            position,
            UPDATE if event.supersedes else ADD,
            event.event_id,
            event.supersedes,
            "stored by an earlier delivery",
        ), event.text

    def _store(
        self, job: Job, index: int | str, written: str, checkpoint: Checkpoint
    ) -> tuple[Decision, str]:
        """Rewrites the item, reconciles it and stores its events when it adds or updates."""
        rewrite = self._absolutize(job, written, checkpoint)
        if rewrite.warning and self._llm is not None:
            log.warning(
                "job %s: is_absolute=false for item %s: %s", job.job_id, index, rewrite.warning
            )
        # A memo records what the assistant did, not a fact about the subject.
        decision = (
            self._reconcile(job, index, rewrite.text, checkpoint)
            if job.observations
            else Decision(-1, ADD, event_id(job.job_id, index, PERSPECTIVE_SENDER))
        )
        if decision.action in (ADD, UPDATE):
            self._events.put(
                events_for(
                    job,
                    index,
                    rewrite.text,
                    is_absolute=rewrite.is_absolute,
                    warning=rewrite.warning,
                    observation=written,
                    zone=self._settings.memory_timezone,
                    supersedes=decision.target_event_id if decision.action == UPDATE else "",
                )
            )
        return decision, rewrite.text

    def purge_deleted(self) -> int:
        """Removes the deleted events whose retention window has passed."""
        at = now()
        expired = [
            e.event_id
            for e in self._events.in_state(DELETED)
            if e.purge_at is not None and e.purge_at <= at
        ]
        if expired:
            self._events.delete(expired)
            log.info("purged %d deleted memory events", len(expired))
        return len(expired)

    # ---- Keeping facts consistent --------------------------------------------------

    def _reconcile(self, job: Job, index: int | str, text: str, checkpoint: Checkpoint) -> Decision:
        """Add, update, delete or no-op against the subject's most similar current
        events: an exact duplicate is a no-op; otherwise the LLM decides (without one,
        or when it fails, the event is added: nothing is lost)."""
        position = index if isinstance(index, int) else -1
        new_id = event_id(job.job_id, index, PERSPECTIVE_SENDER)
        limit = self._settings.memory_reconcile_candidates
        if not limit:
            return Decision(position, ADD, new_id)
        similar = [
            c
            for c in self._events.recall(
                text, subject_where(job.scope, job.context.user_id), limit + 3
            )
            if c.event.job_id != job.job_id
        ][:limit]
        same = next(
            (c.event for c in similar if normalized_fact(c.event.text) == normalized_fact(text)),
            None,
        )
        if same is not None:
            return Decision(position, NOOP, "", same.event_id, "an exact duplicate")
        shown = [
            c.event
            for c in similar
            if c.similarity >= self._settings.memory_reconcile_min_similarity
        ]
        if not shown or self._llm is None:
            return Decision(position, ADD, new_id)
        checkpoint()
        try:
            action, target, reason = prompts.read_decision(
                self._llm.call_tools(
                    prompts.RECONCILE_SYSTEM,
                    prompts.reconcile_prompt(
                        text,
                        job.timestamp,
                        [(e.text, e.timestamp_epoch) for e in shown],
                        self._settings.memory_timezone,
                    ),
                    prompts.RECONCILE_TOOLS,
                    purpose="historian_reconcile",
                    force=prompts.RECONCILE_TOOL,
                    model=self._settings.historian_model,
                ),
                len(shown),
            )
        except LLMError as exc:
            log.warning("job %s: reconcile failed, event added: %s", job.job_id, exc)
            return Decision(position, ADD, new_id, reason=f"reconcile failed: {exc}")
        old = shown[target].event_id if target >= 0 else ""
        return Decision(position, action, new_id if action in (ADD, UPDATE) else "", old, reason)

    def _confirm(self, event_id_: str, at: float) -> None:
        """A restated fact: time decay counts it as recent as `at`."""

        def change(event: CognitiveEvent) -> CognitiveEvent:
            if at > max(event.timestamp_epoch, event.confirmed_at or 0.0):
                event.confirmed_at = at
            return event

        self._events.change(sibling_ids(event_id_), change)

    def _supersede(self, old_event_id: str, at: float, by: str) -> None:
        """Marks every copy of the old fact superseded from `at`, pointing at the new one."""

        def change(event: CognitiveEvent) -> CognitiveEvent:
            if event.state == CURRENT:
                event.state, event.superseded_at, event.superseded_by = SUPERSEDED, at, by
            return event

        self._events.change(sibling_ids(old_event_id), change)

    # ---- Absolutization --------------------------------------------------------------

    def _absolutize(self, job: Job, written: str, checkpoint: Checkpoint) -> Rewrite:
        if self._llm is None:
            return Rewrite(written, False, "no LLM configured: stored as written")
        required = ids_to_keep(written, job.context)
        attempts = self._settings.historian_rewrite_max_retry + 1
        feedback, drifted = "", []
        text = written
        for _ in range(attempts):
            checkpoint()
            try:
                text = prompts.read_rewrite(
                    self._llm.call_tools(
                        prompts.REWRITE_SYSTEM,
                        prompts.rewrite_prompt(
                            job, written, self._settings.memory_timezone, feedback
                        ),
                        prompts.REWRITE_TOOLS,
                        purpose="historian_rewrite",
                        force=prompts.REWRITE_TOOL,
                        model=self._settings.historian_model,
                    )
                )
            except LLMError as exc:
                return Rewrite(written, False, f"rewrite failed, stored as written: {exc}")
            hits, drifted = gate_hits(text), drifted_ids(required, text)
            if not hits and not drifted:
                return Rewrite(text, True)
            if job.force and not drifted:
                return Rewrite(
                    text,
                    False,
                    f"force: stored without passing the gate ({describe_gate(hits, [])})",
                )
            feedback = describe_gate(hits, drifted)
        if drifted:
            return Rewrite(
                written, False, f"the rewrites lost entity ids ({feedback}); stored as written"
            )
        return Rewrite(
            text, False, f"the gate rejected {attempts} rewrites ({feedback}); stored the last one"
        )

    # ---- Profile merge -----------------------------------------------------------------

    def _merge_profiles(self, job: Job, texts: list[str], checkpoint: Checkpoint) -> None:
        """Asks the LLM for the updated profiles and writes them; a profile changed by
        someone else meanwhile is merged again from its new revision."""
        assert self._llm is not None
        targets = profile_targets(job)
        for _ in range(MERGE_ATTEMPTS):
            current = {t: self._profiles.get(job.scope, *t) for t in targets}
            targets = [t for t, r in current.items() if not r or job.job_id not in r.merged_jobs]
            if not targets:
                return
            checkpoint()
            try:
                calls = self._llm.call_tools(
                    prompts.PROFILE_SYSTEM,
                    prompts.profile_prompt(
                        job,
                        texts,
                        {t: _profile_of(current[t]) for t in targets},
                        self._settings.memory_timezone,
                    ),
                    prompts.PROFILE_TOOLS,
                    purpose="profile_merge",
                    model=self._settings.historian_model,
                )
            except LLMError as exc:
                log.warning(
                    "job %s: profile merge skipped, profiles unchanged: %s", job.job_id, exc
                )
                return
            updates = prompts.read_profile_updates(calls, targets)
            targets = [
                (u.entity_type, u.entity_id)
                for u in updates
                if not self._write_profile(job, u, current[(u.entity_type, u.entity_id)])
            ]
            if not targets:
                return
        log.warning("job %s: profiles %s kept changing; merge given up", job.job_id, targets)

    def _write_profile(self, job: Job, update: ProfileUpdate, basis: ProfileRecord | None) -> bool:
        """Writes the merged profile over the revision the LLM saw; False when another
        write came first."""
        at = now()
        perspective = (
            PERSPECTIVE_GROUP if update.entity_type == GROUP_ENTITY else PERSPECTIVE_SENDER
        )
        source = event_id(job.job_id, 0, perspective)
        keep = self._settings.memory_profile_revision_keep
        if basis is None:
            profile = updated_profile(None, update, scope=job.scope, at=at, source_event_id=source)
            return self._profiles.create(ProfileRecord(profile, merged_jobs=[job.job_id]))

        def change(record: ProfileRecord) -> ProfileRecord:
            if record.profile.revision != basis.profile.revision:
                raise ProfileMoved
            record.replace(
                updated_profile(
                    record.profile, update, scope=job.scope, at=at, source_event_id=source
                ),
                at,
                keep,
            )
            record.remember_job(job.job_id)
            return record

        try:
            self._profiles.update(job.scope, update.entity_type, update.entity_id, change)
        except ProfileMoved:
            return False
        return True


# ---- Workers ---------------------------------------------------------------------------


class Historian(WorkerPool):
    """The historian's worker threads in this process; a Background of the runtime."""

    def __init__(
        self,
        runtime: Runtime,
        queue: HistorianQueue,
        processor: JobProcessor,
        settings: MemorySettings,
    ) -> None:
        super().__init__(runtime)
        self._queue = queue
        self._processor = processor
        self._settings = settings

    @property
    def wanted(self) -> bool:
        return self._settings.memory_enabled and self._settings.historian_workers > 0

    def _new_workers(self) -> list[PoolThread]:
        return [
            Worker(i, self._queue, self._processor, self._settings, self._stopping)
            for i in range(self._settings.historian_workers)
        ]


class Worker(StreamWorker):
    """One consumer of the job stream."""

    def __init__(
        self,
        index: int,
        queue: HistorianQueue,
        processor: JobProcessor,
        settings: MemorySettings,
        stopping: threading.Event,
    ) -> None:
        super().__init__(
            f"historian-{index}",
            queue,
            stopping=stopping,
            poll_seconds=settings.historian_poll_interval_seconds,
            stale_seconds=settings.historian_stale_job_timeout_seconds,
        )
        self._queue = queue
        self._processor = processor
        self._settings = settings
        self._polls = 0

    def periodic(self) -> None:
        """Now and then: trim the failed jobs, drop dead workers."""
        self._polls += 1
        interval = self._settings.historian_failed_cleanup_interval
        if interval and self._polls % interval == 0:
            self._queue.trim_failed()
            self._queue.drop_consumers(self._stale_ms)
            self._processor.purge_deleted()

    def handle(self, delivery: Delivery) -> None:
        last_error = delivery.fields.get("last_error", "")
        allowed = self._settings.historian_job_max_retries + 1
        try:
            job = Job.from_json(delivery.fields.get("job", ""))
        except ValueError as exc:
            self._retry_or_fail(delivery, delivery.entry_id, "", str(exc))
            return
        if delivery.deliveries > allowed:
            self._queue.fail(
                delivery,
                job.job_id,
                job.scope,
                f"gave up after {delivery.deliveries - 1} deliveries whose "
                f"worker stopped or stalled; last error: {last_error or 'none'}",
            )
            return
        self._queue.set_status(job, JOB_PROCESSING, deliveries=delivery.deliveries)
        try:
            outcome = self._processor.process(job, self.keeper(delivery, Released))
        except Released:
            self._queue.requeue(delivery, delivery.deliveries - 1, last_error)
            log.info("historian %s released job %s at shutdown", self.consumer, job.job_id)
            return
        except redis.RedisError:
            raise  # the job stays pending and is taken over later
        except Exception as exc:
            log.exception("historian %s: job %s failed", self.consumer, job.job_id)
            self._retry_or_fail(delivery, job.job_id, job.scope, f"{type(exc).__name__}: {exc}")
            return
        self._queue.set_status(
            job, JOB_DONE, error="", event_ids=outcome.event_ids, decisions=outcome.decisions
        )
        self.done(delivery)

    def _retry_or_fail(self, delivery: Delivery, job_id: str, scope: str, error: str) -> None:
        if delivery.deliveries <= self._settings.historian_job_max_retries:
            self._queue.requeue(delivery, delivery.deliveries, error)
        else:
            log.error(
                "historian: job %s moved to the failed jobs after %d deliveries: %s",
                job_id,
                delivery.deliveries,
                error,
            )
            self._queue.fail(delivery, job_id, scope, error)
