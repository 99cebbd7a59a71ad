"""Dream runs: what a run does, and the worker threads that do it.

A run holds its agent's lock (with a lease it renews) while it works, so runs of one agent
never overlap. Phase 1 reflects each trace with unreflected messages, one reflection event
per stretch of it (appended with a request id derived from the run and the stretch, so a
retried append writes once). Phase 2 asks the LLM to fold the unconsumed reflections into
the agent's memory documents, validates its plan, and writes the documents together with
an outbox entry naming the reflections, in one Redis transaction; the reflections are then
consumed through cognition and the entry removed — any later run of the agent finishes an
entry left behind. So an LLM that fails or answers garbage leaves nothing half-written
and nothing consumed; a worker that dies leaves its run to be taken over.
"""

from __future__ import annotations

import logging
import threading

import grpc
import redis

from knowhub_server.common.base.errors import ServiceError, Unauthenticated
from knowhub_server.common.base.scopes import bare
from knowhub_server.common.base.times import now
from knowhub_server.common.llm.chat import LLM, LLMError, parse_json_reply
from knowhub_server.common.runtime.peers import PeerRefused
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.security.auth import (
    DREAMER_ROLE,
    Authenticator,
    Principal,
    bearer_metadata,
)
from knowhub_server.dream.runs import prompts
from knowhub_server.dream.runs.cognition_client import CognitionClient, TraceInfo
from knowhub_server.dream.runs.config import RunsSettings
from knowhub_server.dream.runs.domain import (
    CROSS_TRACE_INTEGRATE,
    DONE,
    FAILED,
    FINISHED,
    PER_TRACE_REFLECT,
    REFLECTED_TYPES,
    SKIPPED,
    DreamRun,
    Failure,
    PlanRefused,
    Reflection,
    event_steps,
    integration_batch,
    outbox_key,
    outbox_trace,
    stretches,
    summary_reason,
    unconsumed,
    validate_plan,
)
from knowhub_server.dream.runs.store import DocumentsMoved, DreamStore, outbox_field
from knowhub_server.dream.streams import Checkpoint, Delivery, PoolThread, StreamWorker, WorkerPool

log = logging.getLogger("knowhub.dream")

NO_LLM = "no LLM is configured (KNOWHUB_LLM_BASE_URL): nothing was reflected, written or consumed"
INTEGRATION_STEPS_MAX = 100  # integration steps of one run, as a guard


class Released(Exception):
    """The process is stopping: the run goes back to the queue, its delivery uncharged."""


class LockLost(Exception):
    """Another run took the agent's lock (this run's lease ran out)."""


def service_principal(authenticator: Authenticator, token: str | None) -> Principal | None:
    """Whom the dream service acts as towards cognition: the local principal without a
    tokens file, else the principal of KNOWHUB_DREAM_SERVICE_TOKEN (None when unset)."""
    if authenticator.local_mode:
        return authenticator.local_principal
    if not token:
        return None
    try:
        return authenticator.authenticate(bearer_metadata(token))
    except Unauthenticated:
        raise ValueError("KNOWHUB_DREAM_SERVICE_TOKEN is not a token of the tokens file") from None


def runs_refusal(principal: Principal | None) -> str:
    """Why dream runs cannot work with this service principal ("" when they can)."""
    if principal is None:
        return (
            "dream runs need KNOWHUB_DREAM_SERVICE_TOKEN: a token whose principal has "
            f"the {DREAMER_ROLE!r} role, so the dream service may read traces and add "
            "reflections"
        )
    if not principal.has_role(DREAMER_ROLE):
        return (
            f"KNOWHUB_DREAM_SERVICE_TOKEN names {principal.user_scope}, which lacks the "
            f"{DREAMER_ROLE!r} role dream runs need"
        )
    return ""


class RunExecutor:
    def __init__(
        self,
        store: DreamStore,
        cognition: CognitionClient,
        principal: Principal | None,
        llm: LLM | None,
        settings: RunsSettings,
    ) -> None:
        self._store = store
        self._cognition = cognition
        self._principal = principal
        self._llm = llm
        self._settings = settings

    @property
    def _lease_ms(self) -> int:
        return int(self._settings.dream_stale_run_timeout_seconds * 1000)

    def execute(self, run: DreamRun, checkpoint: Checkpoint) -> tuple[str, str]:
        """Runs the run's phases; returns its final status and reason."""
        if self._llm is None:
            return SKIPPED, NO_LLM
        refusal = runs_refusal(self._principal)
        if refusal:
            return FAILED, refusal
        holder = self._store.acquire_agent(run.agent_id, run.run_id, self._lease_ms)
        if holder != run.run_id:
            return SKIPPED, (
                f"agent {bare(run.agent_id)!r} has run {holder} in progress; runs of "
                "one agent never overlap"
            )
        try:

            def keep() -> None:
                checkpoint()
                if not self._store.renew_agent(run.agent_id, run.run_id, self._lease_ms):
                    raise LockLost

            self._store.mark_running(run, now())
            if PER_TRACE_REFLECT in run.phases:
                self._reflect(run, keep)
            if CROSS_TRACE_INTEGRATE in run.phases:
                self._integrate(run, keep)
        finally:
            self._store.release_agent(run.agent_id, run.run_id)
        finished = self._store.run(run.run_id)
        failures = finished.failures if finished is not None else []
        return (FAILED, summary_reason(failures)) if failures else (DONE, "")

    def _fail(self, run: DreamRun, phase: str, trace_id: str, reason: str) -> None:
        log.warning(
            "dream run %s: %s failed for %s: %s",
            run.run_id,
            phase,
            trace_id or f"agent {run.agent_id}",
            reason,
        )
        self._store.add_failure(run.run_id, Failure(phase, trace_id, reason))

    def _traces(self, run: DreamRun) -> list[TraceInfo]:
        """The traces the run covers, as they are now."""
        assert self._principal is not None
        if not run.trace_ids:
            return self._cognition.traces(self._principal, run.agent_id, run.owner_filter)
        found = []
        for trace_id in run.trace_ids:  # the requester's own traces
            trace = self._cognition.trace(self._principal, trace_id, run.requested_by)
            if trace.agent_id == run.agent_id and run.owner_filter in ("", trace.owner):
                found.append(trace)
        return found

    def _ask(self, run: DreamRun, system: str, prompt: str) -> str:
        assert self._llm is not None
        self._store.count(run.run_id, llm_calls=1)
        return self._llm.complete(system, prompt, purpose="dream", model=self._settings.dream_model)

    # ---- Phase 1 -----------------------------------------------------------------------------

    def _reflect(self, run: DreamRun, keep: Checkpoint) -> None:
        try:
            traces = self._traces(run)
        except ServiceError as error:
            self._fail(run, PER_TRACE_REFLECT, "", f"cannot list the traces: {error.message}")
            return
        self._store.count(run.run_id, traces_considered=len(traces))
        for trace in traces:
            if trace.reflected_at_sequence >= trace.last_sequence:
                continue
            keep()
            try:
                self._reflect_trace(run, trace, keep)
            except (LLMError, ServiceError) as error:
                self._store.count(run.run_id, traces_failed=1)
                self._fail(run, PER_TRACE_REFLECT, trace.trace_id, _reason(error))
                continue
            self._store.count(run.run_id, traces_reflected=1)

    def _reflect_trace(self, run: DreamRun, trace: TraceInfo, keep: Checkpoint) -> None:
        assert self._principal is not None
        events = self._cognition.events(self._principal, trace, REFLECTED_TYPES)
        lines = list(zip(event_steps(events), map(prompts.event_text, events), strict=True))
        for stretch in stretches(
            lines,
            trace.reflected_at_sequence,
            trace.last_sequence,
            self._settings.dream_reflect_max_chars,
        ):
            keep()
            summary = prompts.read_reflection(
                self._ask(
                    run,
                    prompts.REFLECT_SYSTEM,
                    prompts.reflect_prompt(trace.trace_id, trace.task, stretch),
                )
            )
            self._cognition.append_reflection(
                self._principal,
                trace,
                (stretch.start, stretch.end),
                summary,
                request_id=f"dream:{run.run_id}:{trace.trace_id}:{stretch.start}-{stretch.end}",
            )
            self._store.count(run.run_id, reflections_written=1)

    # ---- Phase 2 -----------------------------------------------------------------------------

    def _integrate(self, run: DreamRun, keep: Checkpoint) -> None:
        """Integrates the reflections waiting when the phase starts, oldest first, a batch
        per step (reflections written later wait for the next run)."""
        try:
            self._drain_outbox(run)
            waiting = self._waiting(run)
            for step in range(INTEGRATION_STEPS_MAX):
                if not waiting:
                    return
                keep()
                batch = integration_batch(
                    waiting,
                    self._settings.dream_integrate_max_reflections,
                    self._settings.dream_reflect_max_chars,
                )
                self._integrate_batch(run, step, batch)
                done = {(outbox_key(r), r.event_id) for r in batch}
                waiting = [r for r in waiting if (outbox_key(r), r.event_id) not in done]
        except (LLMError, ValueError, PlanRefused, DocumentsMoved, ServiceError) as error:
            self._fail(run, CROSS_TRACE_INTEGRATE, "", _reason(error))

    def _waiting(self, run: DreamRun) -> list[Reflection]:
        """The unconsumed reflections of the run's traces."""
        assert self._principal is not None
        waiting = []
        for trace in self._traces(run):
            if trace.unconsumed_reflections:
                waiting += unconsumed(
                    trace.trace_id,
                    trace.owner,
                    self._cognition.events(self._principal, trace, ["reflection"]),
                )
        return waiting

    def _integrate_batch(self, run: DreamRun, step: int, batch: list[Reflection]) -> None:
        """Asks for a plan folding `batch` into the documents, writes it with the batch on
        the outbox, then consumes the batch."""
        settings = self._settings
        documents = self._store.documents(run.agent_id)
        reply = self._ask(
            run,
            prompts.INTEGRATE_SYSTEM,
            prompts.integrate_prompt(
                run.agent_id,
                documents,
                batch,
                max_chars=settings.dream_document_max_chars,
                max_documents=settings.dream_documents_max,
            ),
        )
        updates = validate_plan(
            parse_json_reply(reply),
            documents,
            max_updates=settings.dream_plan_max_updates,
            max_chars=settings.dream_document_max_chars,
            max_documents=settings.dream_documents_max,
        )
        outbox: dict[str, list[str]] = {}
        for reflection in batch:
            outbox.setdefault(outbox_key(reflection), []).append(reflection.event_id)
        field = outbox_field(run.run_id, step)
        self._store.apply_plan(
            run.agent_id,
            run.run_id,
            updates,
            documents,
            at=now(),
            keep=settings.dream_document_revision_keep,
            outbox_field=field,
            outbox=outbox,
        )
        created = sum(u.path not in documents for u in updates)
        self._store.count(
            run.run_id,
            reflections_integrated=len(batch),
            documents_created=created,
            documents_updated=len(updates) - created,
        )
        self._consume(run, field, outbox)

    def _drain_outbox(self, run: DreamRun) -> None:
        """Consumes reflections an earlier run integrated but could not mark consumed."""
        for field, by_trace in self._store.outbox(run.agent_id).items():
            self._consume(run, field, by_trace)

    def _consume(self, run: DreamRun, field: str, by_trace: dict[str, list[str]]) -> None:
        assert self._principal is not None
        for key, event_ids in by_trace.items():
            owner, trace_id = outbox_trace(key, run.requested_by)
            try:
                consumed = self._cognition.consume(self._principal, trace_id, owner, event_ids)
            except PeerRefused as refused:
                if refused.code != grpc.StatusCode.NOT_FOUND:
                    raise
                consumed = 0  # the trace is gone: nothing left to mark
            self._store.count(run.run_id, reflections_consumed=consumed)
        self._store.settle_outbox(run.agent_id, field)


def _reason(error: Exception) -> str:
    if isinstance(error, ServiceError):
        return error.message
    if isinstance(error, PlanRefused):
        return f"the plan was refused, nothing written: {error}"
    if isinstance(error, DocumentsMoved):
        return f"memory document {error} changed during the run; nothing written"
    if isinstance(error, ValueError):
        return f"the LLM's reply is not a plan: {error}"
    return str(error)


# ---- Workers ---------------------------------------------------------------------------


class Dreamer(WorkerPool):
    """The dream run workers of this process; a Background of the runtime."""

    def __init__(
        self, runtime: Runtime, store: DreamStore, executor: RunExecutor, settings: RunsSettings
    ) -> None:
        super().__init__(runtime)
        self._store = store
        self._executor = executor
        self._settings = settings

    @property
    def wanted(self) -> bool:
        return self._settings.dream_workers > 0

    def _new_workers(self) -> list[PoolThread]:
        return [
            RunWorker(i, self._store, self._executor, self._settings, self._stopping)
            for i in range(self._settings.dream_workers)
        ]


class RunWorker(StreamWorker):
    """One consumer of the run stream."""

    def __init__(
        self,
        index: int,
        store: DreamStore,
        executor: RunExecutor,
        settings: RunsSettings,
        stopping: threading.Event,
    ) -> None:
        super().__init__(
            f"dreamer-{index}",
            store,
            stopping=stopping,
            poll_seconds=settings.dream_poll_interval_seconds,
            stale_seconds=settings.dream_stale_run_timeout_seconds,
        )
        self._store = store
        self._executor = executor
        self._settings = settings

    def handle(self, delivery: Delivery) -> None:
        run = self._store.run(delivery.fields.get("run_id", ""))
        if run is None or run.status in FINISHED:
            self._store.done(delivery)
            return
        keep_seconds = self._settings.dream_run_keep_days * 86_400
        if delivery.deliveries > self._settings.dream_run_max_attempts:
            self._store.finish(
                run.run_id,
                FAILED,
                f"gave up after {delivery.deliveries - 1} "
                "deliveries whose worker stopped or stalled",
                now(),
                keep_seconds,
            )
            self._store.done(delivery)
            return
        run.attempts = delivery.deliveries
        try:
            status, reason = self._executor.execute(run, self.keeper(delivery, Released))
        except Released:
            self._store.mark_queued(run.run_id, "released at shutdown; waiting for a worker")
            self._store.move(
                delivery,
                self._store.stream,
                {**delivery.fields, "attempt": str(delivery.deliveries - 1)},
            )
            log.info("%s released run %s at shutdown", self.consumer, run.run_id)
            return
        except LockLost:
            status, reason = (
                FAILED,
                (
                    f"lost agent {bare(run.agent_id)!r}'s lock (its lease of "
                    f"{self._settings.dream_stale_run_timeout_seconds:g} s "
                    "ran out); what was written stays"
                ),
            )
        except redis.RedisError:
            raise  # the run stays pending and is taken over later
        except Exception as exc:
            log.exception("%s: run %s failed", self.consumer, run.run_id)
            status, reason = FAILED, f"{type(exc).__name__}: {exc}"
        self._store.finish(run.run_id, status, reason, now(), keep_seconds)
        self._store.done(delivery)
        log.info("dream run %s of agent %s: %s %s", run.run_id, run.agent_id, status, reason)
