"""The server-side evaluator (KNOWHUB_EVALUATOR=on): answers cognition's evaluation
triggers with the LLM, through the cognition service.

It reads `{<prefix>cognition}:triggers:evaluation` with WatchTriggers in a consumer group as the
dream service's principal (the `evaluator` role), builds the prompt with
GetEvaluationPrompt, asks the LLM, submits the answer with SubmitEvaluation, and
acknowledges the trigger. A trigger it could not evaluate (the LLM failed or answered
garbage, cognition unreachable) stays unacknowledged and comes back after cognition's
visibility timeout, until KNOWHUB_EVALUATOR_MAX_DELIVERIES; then the evaluator gives the
queries up (AbandonEvaluation: logged in the trace, shown in the console, and the next
signal publishes them again) and acknowledges it. Without an LLM the evaluator does not
read the stream: triggers wait there.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading

import grpc
from knowhub_contracts.v1 import cognition_pb2

from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.llm.chat import LLM, LLMError
from knowhub_server.common.runtime.peers import PeerRefused, peer_error
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.security.auth import EVALUATOR_ROLE, Principal
from knowhub_server.dream.runs import prompts
from knowhub_server.dream.runs.cognition_client import CognitionClient, TriggerStream
from knowhub_server.dream.runs.config import RunsSettings
from knowhub_server.dream.streams import PoolThread, WorkerPool

log = logging.getLogger("knowhub.evaluator")

RECONNECT_SECONDS = 1.0


def evaluator_refusal(settings: RunsSettings, principal: Principal | None) -> str:
    """Why the evaluator cannot start as configured ("" when it can or is off)."""
    if not settings.evaluator:
        return ""
    if principal is None:
        return (
            "KNOWHUB_EVALUATOR=on needs KNOWHUB_DREAM_SERVICE_TOKEN: a token whose "
            f"principal has the {EVALUATOR_ROLE!r} role"
        )
    if not principal.has_role(EVALUATOR_ROLE):
        return (
            f"KNOWHUB_EVALUATOR=on: KNOWHUB_DREAM_SERVICE_TOKEN names "
            f"{principal.user_scope}, which lacks the {EVALUATOR_ROLE!r} role"
        )
    return ""


class Evaluator(WorkerPool):
    """The evaluator's thread in this process; a Background of the runtime."""

    def __init__(
        self,
        runtime: Runtime,
        cognition: CognitionClient,
        principal: Principal,
        llm: LLM | None,
        settings: RunsSettings,
    ) -> None:
        super().__init__(runtime)
        self._cognition = cognition
        self._principal = principal
        self._llm = llm
        self._settings = settings

    @property
    def wanted(self) -> bool:
        return self._settings.evaluator and self._llm is not None

    def start(self) -> None:
        """Starts at once (cognition's triggers are asked for explicitly, so its Redis may
        start); without an LLM it says so and leaves the triggers waiting."""
        if self._settings.evaluator and self._llm is None:
            log.warning(
                "KNOWHUB_EVALUATOR=on but no LLM is configured: evaluation triggers "
                "wait in the stream"
            )
        self.wake()

    def _new_workers(self) -> list[PoolThread]:
        assert self._llm is not None
        return [
            _Watcher(self._cognition, self._principal, self._llm, self._settings, self._stopping)
        ]


class _Watcher(PoolThread):
    def __init__(
        self,
        cognition: CognitionClient,
        principal: Principal,
        llm: LLM,
        settings: RunsSettings,
        stopping: threading.Event,
    ) -> None:
        super().__init__("evaluator")
        self._cognition = cognition
        self._principal = principal
        self._llm = llm
        self._settings = settings
        self._stopping = stopping
        self._group = settings.evaluator_group
        self._consumer = f"dream-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self._stream: TriggerStream | None = None
        self._lock = threading.Lock()

    def unblock(self) -> None:
        with self._lock:
            if self._stream is not None:
                self._stream.cancel()

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                with self._lock:
                    if self._stopping.is_set():
                        return
                    self._stream = self._cognition.watch(
                        self._principal, self._group, self._consumer
                    )
                for response in self._stream:
                    self._evaluate(response.trigger)
            except grpc.RpcError as error:
                if self._stopping.is_set():
                    return
                log.warning(
                    "evaluator: the trigger stream failed (%s); reconnecting",
                    peer_error(error).message,
                )
            except ServiceError as error:  # cognition not reachable from here
                log.warning("evaluator: %s; trying again", error.message)
            except Exception:  # a bug: say so; the trigger comes back unacknowledged
                log.exception("evaluator: evaluating a trigger failed")
            self.unblock()  # ends the stream, if it is still open, before the next one
            self._stopping.wait(RECONNECT_SECONDS)

    def _evaluate(self, trigger: cognition_pb2.Trigger) -> None:
        """Evaluates the trigger's trace and acknowledges it; leaves it unacknowledged
        when that failed and it has deliveries left, and gives the queries up (a new
        signal republishes them) after the last."""
        try:
            prompt = self._cognition.evaluation_prompt(self._principal, trigger)
            if prompt:
                answer = self._llm.complete(
                    prompts.EVALUATOR_SYSTEM,
                    prompt,
                    purpose="evaluation",
                    model=self._settings.evaluator_model,
                )
                unread = self._cognition.submit_evaluation(self._principal, trigger, answer)
                if unread:
                    raise LLMError(f"the answer holds no evaluation: {unread}")
                log.info(
                    "evaluator: evaluated trace %s (trigger %s)",
                    trigger.trace_id,
                    trigger.trigger_id,
                )
        except (LLMError, ServiceError) as error:
            reason = error.message if isinstance(error, ServiceError) else str(error)
            gone = isinstance(error, PeerRefused) and error.code == grpc.StatusCode.NOT_FOUND
            if not gone and trigger.delivery_count < self._settings.evaluator_max_deliveries:
                log.warning(
                    "evaluator: trigger %s of trace %s not evaluated (delivery %d), "
                    "it comes back: %s",
                    trigger.trigger_id,
                    trigger.trace_id,
                    trigger.delivery_count,
                    reason,
                )
                return
            if not gone and not self._abandon(trigger, reason):
                return
            log.error(
                "evaluator: gave up trigger %s of trace %s after %d deliveries: %s",
                trigger.trigger_id,
                trigger.trace_id,
                trigger.delivery_count,
                reason,
            )
        try:
            self._cognition.ack(self._principal, self._group, trigger.trigger_id)
        except ServiceError as error:
            log.warning(
                "evaluator: could not acknowledge trigger %s (%s); it comes back",
                trigger.trigger_id,
                error.message,
            )

    def _abandon(self, trigger: cognition_pb2.Trigger, reason: str) -> bool:
        """Records the give-up in the trace; False (the trigger comes back) when cognition
        could not be told."""
        try:
            self._cognition.abandon_evaluation(self._principal, trigger, reason)
        except ServiceError as error:
            log.warning(
                "evaluator: could not record giving up trigger %s (%s); it comes back",
                trigger.trigger_id,
                error.message,
            )
            return False
        return True
