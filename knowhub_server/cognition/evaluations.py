"""Evaluations: the evaluation prompt, the evaluator's answer written as evaluation events, and
helpful / harmful cases applied to the knowledge exactly once.

Exactly once, step by step: the append script writes an evaluation event only for a pair
(query_sequence, knowledge_id) not evaluated before, and puts a counted one on the trace's
feedback outbox in the same atomic step. Cases are then applied from the outbox through
UpdateKnowledge with the request id "eval:<trace>:<sequence>:<knowledge id>", which the
knowledge service applies once however often the same caller sends it (keys are bound to
their caller, so another user who sends the same key first neither blocks nor fakes it),
and taken off the outbox. A crash anywhere leaves the pair on the outbox, and the next
submission for the trace finishes it.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

import grpc

from knowhub_server.cognition import prompts
from knowhub_server.cognition.domain import (
    ANSWER_EXCERPT_MAX,
    DELIVERIES_MAX,
    FAILED_QUERIES_KEPT,
    SUMMARY_MAX,
    TASK_TEXT_MAX,
    TRIGGERS,
    Assessment,
    Event,
    FeedbackRecord,
    Trace,
    Unparsed,
    bounded_request_id,
    evaluation_request_id,
    one_of,
    pair_key,
    parse_evaluation_reply,
    split_pair,
    validate_assessments,
    validate_query_links,
)
from knowhub_server.cognition.knowledge_client import KnowledgeClient
from knowhub_server.cognition.operations import STREAM_ID, TraceAccess, stamped
from knowhub_server.cognition.store import Appended
from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import InvalidArgument, Unavailable
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.base.times import now
from knowhub_server.common.runtime.peers import PeerRefused
from knowhub_server.common.security.auth import EVALUATOR_ROLE, Principal
from knowhub_server.common.security.delegation import DelegationKeys

log = logging.getLogger(__name__)

# Refusals that retrying cannot change: the pair is settled as refused.
_FINAL_REFUSALS = frozenset(
    {
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
    }
)


@dataclass
class Outcome:
    """What became of one assessment of a submission."""

    query_sequence: int
    knowledge_id: str
    status: str  # the one that stands: this call's, or the pair's first evaluation's
    recorded: bool  # whether this call wrote the evaluation event
    feedback: str
    detail: str


@dataclass
class Submitted:
    """What a submission did: each assessment's outcome, the queries still pending, and,
    for an answer that holds no evaluation, why (nothing evaluated; the failure logged)."""

    outcomes: list[Outcome]
    pending: list[int]
    parse_error: str = ""


@dataclass
class Abandoned:
    """An evaluator's give-up: its evaluation_failed event and the queries it named."""

    event_id: str
    query_sequences: list[int]


class EvaluationOperations:
    def __init__(
        self,
        access: TraceAccess,
        knowledge: KnowledgeClient,
        delegations: DelegationKeys | None,
        metrics: Metrics,
        language: str = "en",
    ) -> None:
        self._access = access
        self._language = language
        self._store = access.store
        self._knowledge = knowledge
        self._delegations = delegations
        self._metrics = metrics

    def prompt(
        self, principal: Principal, trace_id: str, owner: str, mission: str, goal: str
    ) -> tuple[str, list[int]]:
        """The evaluation prompt for the pending queries ("" when none)."""
        check.text(mission, "mission", TASK_TEXT_MAX)
        check.text(goal, "goal", TASK_TEXT_MAX)
        trace = self._access.readable(principal, trace_id, owner, role=EVALUATOR_ROLE)
        sequences = self._store.pending(trace.ref)
        if not sequences:
            return "", []
        queries = self._store.query_events(trace.ref, sequences)
        text = prompts.evaluation_prompt(
            mission or trace.task,
            goal,
            [queries[s] for s in sequences if s in queries],
            self._language,
        )
        return text, sequences

    def submit(
        self,
        principal: Principal,
        trace_id: str,
        owner: str,
        *,
        raw_text: str,
        structured: list[Assessment] | None,
        trigger: str,
    ) -> Submitted:
        """Writes one evaluation event per new pair and applies helpful / harmful ones. An
        answer that holds no evaluation is logged as an evaluation_failed event and
        answered as such: a parse failure never interrupts the agent."""
        check.trace_id(trace_id)
        if bool(raw_text) == (structured is not None):
            raise InvalidArgument("raw_text", "give exactly one of raw_text and evaluations")
        one_of(trigger, TRIGGERS, "trigger", required=False)
        try:
            assessments = validate_assessments(
                parse_evaluation_reply(raw_text) if raw_text else structured or []
            )
        except Unparsed as unparsed:
            return self._unparsed(principal, trace_id, owner, raw_text, unparsed.reason)
        except InvalidArgument as error:
            log.warning(
                "evaluation for trace %s refused, nothing written: %s", trace_id, error.message
            )
            raise
        trace = self._access.readable(principal, trace_id, owner, role=EVALUATOR_ROLE)
        queries = self._store.query_events(trace.ref, {a.query_sequence for a in assessments})
        validate_query_links(assessments, queries, trace_id)
        events = stamped(
            [
                (
                    "evaluation",
                    {
                        "query_sequence": a.query_sequence,
                        "knowledge_id": a.knowledge_id,
                        "eval_result": {"status": a.status, "reason": a.reason},
                        "evaluated_at_trigger": trigger or trace.last_trigger,
                    },
                )
                for a in assessments
            ],
            now(),
        )
        appended = self._access.append(principal, trace.ref, events)
        assert isinstance(appended, Appended)
        deferred = self.apply_feedback(principal, trace, queries)
        pairs = [pair_key(a.query_sequence, a.knowledge_id) for a in assessments]
        records = self._store.feedback_records(trace.ref, pairs)
        outcomes = [
            Outcome(
                a.query_sequence,
                a.knowledge_id,
                records[pair].status,
                bool(event_id),
                records[pair].feedback,
                deferred.get(pair) or records[pair].detail,
            )
            for a, event_id, pair in zip(assessments, appended.event_ids, pairs, strict=True)
        ]
        return Submitted(outcomes, self._store.pending(trace.ref))

    def _unparsed(
        self, principal: Principal, trace_id: str, owner: str, raw_text: str, reason: str
    ) -> Submitted:
        """Logs an answer that holds no evaluation; the queries stay pending."""
        trace = self._access.readable(principal, trace_id, owner, role=EVALUATOR_ROLE)
        pending = self._store.pending(trace.ref)
        self._access.append(
            principal,
            trace.ref,
            stamped(
                [
                    (
                        "evaluation_failed",
                        {
                            "query_sequences": pending[:FAILED_QUERIES_KEPT],
                            "reason": reason,
                            "answer_excerpt": raw_text[:ANSWER_EXCERPT_MAX],
                            "trigger_id": "",
                            "deliveries": 0,
                            "gave_up": False,
                        },
                    )
                ],
                now(),
            ),
        )
        log.warning(
            "evaluation of trace %s not read, nothing evaluated (logged): %s", trace_id, reason
        )
        return Submitted([], pending, reason)

    def abandon(
        self,
        principal: Principal,
        trace_id: str,
        owner: str,
        *,
        trigger_id: str,
        reason: str,
        deliveries: int,
    ) -> Abandoned:
        """An evaluator gives up on a trace's pending queries: logged as an
        evaluation_failed event that gave up, and the next SignalTrigger publishes them
        again. Once per trigger (a retried call writes nothing more)."""
        if trigger_id and not STREAM_ID.fullmatch(trigger_id):
            raise InvalidArgument("trigger_id", f"{trigger_id[:40]!r} is not a trigger id")
        check.text(reason, "reason", SUMMARY_MAX)
        check.int_range(deliveries, "deliveries", 0, DELIVERIES_MAX)
        trace = self._access.readable(principal, trace_id, owner, role=EVALUATOR_ROLE)
        pending = self._store.pending(trace.ref)
        request_id = bounded_request_id("abandon", trigger_id) if trigger_id else ""
        appended = self._access.append(
            principal,
            trace.ref,
            stamped(
                [
                    (
                        "evaluation_failed",
                        {
                            "query_sequences": pending[:FAILED_QUERIES_KEPT],
                            "reason": reason,
                            "answer_excerpt": "",
                            "trigger_id": trigger_id,
                            "deliveries": deliveries,
                            "gave_up": True,
                        },
                    )
                ],
                now(),
            ),
            request_id=request_id,
            digest=request_id,
        )
        log.warning(
            "an evaluator gave up on queries %s of trace %s (trigger %s, %d deliveries): %s",
            pending,
            trace_id,
            trigger_id or "-",
            deliveries,
            reason,
        )
        return Abandoned(appended.event_ids[0] if appended.event_ids else "", pending)

    def apply_feedback(
        self, principal: Principal, trace: Trace, queries: dict[int, Event]
    ) -> dict[str, str]:
        """Applies every case on the trace's outbox with the trace owner's rights (as the
        caller, or under a grant when the caller evaluates another's trace); returns why
        each one that stays deferred could not be applied. A refusal that retrying cannot
        change settles the pair as refused and writes a feedback_refused event."""
        pairs = self._store.feedback_outbox(trace.ref)
        if not pairs:
            return {}
        records = self._store.feedback_records(trace.ref, pairs)
        missing = {split_pair(p)[0] for p in pairs} - set(queries)
        queries = {**queries, **self._store.query_events(trace.ref, missing)}
        grant = self._grant(principal, trace, pairs)
        deferred, settled = {}, {}
        for pair in pairs:
            sequence, knowledge_id = split_pair(pair)
            record = records[pair]
            query = queries.get(sequence)
            try:
                self._knowledge.add_case(
                    principal,
                    knowledge_id,
                    task=trace.task or (query["query"] if query else ""),
                    outcome=record.status,
                    reason=record.reason,
                    trace_id=trace.trace_id,
                    query_sequence=sequence,
                    request_id=evaluation_request_id(
                        trace.ref, principal.user_scope, sequence, knowledge_id
                    ),
                    grant=grant,
                )
                record.feedback, record.detail = "applied", ""
            except (PeerRefused, Unavailable) as error:
                code = getattr(error, "code", grpc.StatusCode.UNAVAILABLE)
                if isinstance(error, Unavailable) or code not in _FINAL_REFUSALS:
                    deferred[pair] = error.message
                    log.warning(
                        "feedback %s of trace %s deferred: %s", pair, trace.trace_id, error.message
                    )
                    continue
                record.feedback, record.detail = "refused", f"{code.name}: {error.message}"
                log.warning(
                    "feedback %s (%s) of trace %s refused, the knowledge is unchanged: %s",
                    pair,
                    record.status,
                    trace.trace_id,
                    record.detail,
                )
            settled[pair] = record
        self._record_refusals(principal, trace, settled)
        # Settled together (one Redis write); a case applied before a crash here stays on
        # the outbox and is applied again under the same request id, which changes nothing.
        if settled:
            self._store.settle_feedback(trace.ref, settled)
        for outcome, count in (
            ("deferred", len(deferred)),
            *Counter(r.feedback for r in settled.values()).items(),
        ):
            if count:
                self._metrics.feedback_verdicts.labels(outcome).inc(count)
        return deferred

    def _grant(self, principal: Principal, trace: Trace, pairs: list[str]) -> str:
        """A delegation grant for the caller to apply these pairs as the trace's owner;
        "" when the caller is the owner (or no grants can be issued: the knowledge service
        then answers as it would to the caller)."""
        if principal.user_scope == trace.owner or self._delegations is None:
            return ""
        return self._delegations.issue(
            owner_user_id=trace.owner.partition(":")[2],
            trace_id=trace.trace_id,
            knowledge_ids=sorted({split_pair(p)[1] for p in pairs}),
            grantee=principal.user_scope,
        )

    def _record_refusals(
        self, principal: Principal, trace: Trace, settled: dict[str, FeedbackRecord]
    ) -> None:
        """A feedback_refused event per refused pair, written once however often this
        runs (the request id names the pairs)."""
        refused = sorted(p for p, r in settled.items() if r.feedback == "refused")
        if not refused:
            return
        events = []
        for pair in refused:
            sequence, knowledge_id = split_pair(pair)
            record = settled[pair]
            code, _, message = record.detail.partition(": ")
            events.append(
                (
                    "feedback_refused",
                    {
                        "query_sequence": sequence,
                        "knowledge_id": knowledge_id,
                        "status": record.status,
                        "code": code,
                        "message": message[: check.CASE_TEXT_MAX],
                    },
                )
            )
        request_id = bounded_request_id("refused", trace.trace_id, *refused)
        self._access.append(
            principal, trace.ref, stamped(events, now()), request_id=request_id, digest=request_id
        )
