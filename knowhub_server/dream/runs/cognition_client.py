"""The cognition service as the dream service reaches it: through its RPCs, as a given
principal — the dream service's own (the `dreamer` and `evaluator` roles) for runs and the
evaluator, or a caller's, to learn whether the caller may read a trace."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf import json_format
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.common.runtime.peers import Peers, call_as, credentials
from knowhub_server.common.security.auth import Principal

TRACE_PAGE = 100
LOG_PAGE = 1_000
IDS_PER_CALL = 500
REASON_MAX = 4_000  # cognition's limit of an abandoned evaluation's reason
Event = dict[str, Any]
_JSON: dict[str, Any] = {
    "preserving_proto_field_name": True,
    "always_print_fields_with_no_presence": True,
}


@dataclass
class TraceInfo:
    trace_id: str
    owner: str
    agent_id: str
    task: str
    last_sequence: int
    reflected_at_sequence: int
    unconsumed_reflections: int

    @classmethod
    def of(cls, trace: cognition_pb2.Trace, reader: Principal) -> TraceInfo:
        """The trace as `reader` read it, its agent qualified by its org again."""
        return cls(
            trace.trace_id,
            trace.owner,
            reader.qualify(trace.agent_id),
            trace.task,
            trace.last_sequence,
            trace.reflected_at_sequence,
            trace.unconsumed_reflections,
        )


class TriggerStream(Protocol):
    """A WatchTriggers call: an iterator of responses that can be cancelled."""

    def __iter__(self) -> Iterator[cognition_pb2.WatchTriggersResponse]: ...

    def cancel(self) -> bool: ...


def event_of(message: cognition_pb2.Event) -> Event:
    """An event as a flat dict: {"type", <its fields>, "event_id", "timestamp"};
    integers stay integers."""
    kind = message.WhichOneof("body") or ""
    body = getattr(message, kind)
    fields = json_format.MessageToDict(body, **_JSON)
    for descriptor in body.DESCRIPTOR.fields:
        value = getattr(body, descriptor.name)
        if descriptor.type in (descriptor.TYPE_INT64, descriptor.TYPE_INT32):
            fields[descriptor.name] = list(value) if descriptor.is_repeated else value
    return {
        "type": kind,
        **fields,
        "event_id": message.event_id,
        "timestamp": message.timestamp.ToNanoseconds() / 1e9,
    }


class CognitionClient:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers
        self._stub: cognition_pb2_grpc.CognitionServiceStub | None = None

    def _cognition(self) -> cognition_pb2_grpc.CognitionServiceStub:
        if self._stub is None:
            self._stub = cognition_pb2_grpc.CognitionServiceStub(self._peers.channel("cognition"))
        return self._stub

    # ---- Traces and their logs --------------------------------------------------------------

    def trace(self, principal: Principal, trace_id: str, owner: str = "") -> TraceInfo:
        """`owner`'s trace (the principal's own when ""), if `principal` may read it (else
        PeerRefused NOT_FOUND)."""
        request = cognition_pb2.GetLogRequest(
            trace_id=trace_id, owner=owner, types=["reflection"], page_size=1
        )
        return TraceInfo.of(call_as(principal, self._cognition().GetLog, request).trace, principal)

    def traces(self, principal: Principal, agent_id: str, owner: str) -> list[TraceInfo]:
        """Every trace of the agent (qualified by its org; of `owner` only, unless it is
        "") `principal` sees."""
        found, token = [], ""
        while True:
            request = cognition_pb2.ListTracesRequest(
                agent_id=principal.show(agent_id),
                owner=owner,
                page_size=TRACE_PAGE,
                page_token=token,
            )
            response = call_as(principal, self._cognition().ListTraces, request)
            found += [TraceInfo.of(t, principal) for t in response.traces]
            token = response.next_page_token
            if not token:
                return found

    def events(self, principal: Principal, trace: TraceInfo, types: list[str]) -> list[Event]:
        """The trace's events of these types, in log order."""
        found, token = [], ""
        while True:
            request = cognition_pb2.GetLogRequest(
                trace_id=trace.trace_id,
                owner=trace.owner,
                types=types,
                page_size=LOG_PAGE,
                page_token=token,
            )
            response = call_as(principal, self._cognition().GetLog, request)
            found += [event_of(e) for e in response.events]
            token = response.next_page_token
            if not token:
                return found

    def append_reflection(
        self,
        principal: Principal,
        trace: TraceInfo,
        span: tuple[int, int],
        summary: str,
        request_id: str,
    ) -> str:
        """Appends a reflection event (it advances reflected_at_sequence); a retry with the
        same request id appends nothing. Returns the event id."""
        event = cognition_pb2.Event(
            reflection=cognition_pb2.ReflectionEvent(sequence_range=list(span), summary=summary)
        )
        request = cognition_pb2.AppendEventsRequest(
            trace_id=trace.trace_id, owner=trace.owner, events=[event], request_id=request_id
        )
        return call_as(principal, self._cognition().AppendEvents, request).event_ids[0]

    def consume(self, principal: Principal, trace_id: str, owner: str, event_ids: list[str]) -> int:
        """Marks reflections consumed; returns how many were not consumed before."""
        consumed = 0
        for start in range(0, len(event_ids), IDS_PER_CALL):
            request = cognition_pb2.ConsumeReflectionsRequest(
                trace_id=trace_id, owner=owner, event_ids=event_ids[start : start + IDS_PER_CALL]
            )
            consumed += call_as(principal, self._cognition().ConsumeReflections, request).consumed
        return consumed

    # ---- Evaluation triggers ------------------------------------------------------------------

    def watch(self, principal: Principal, group: str, consumer: str) -> TriggerStream:
        """The WatchTriggers stream (no time limit); it raises grpc.RpcError (read it with
        knowhub_server.common.runtime.peers.peer_error)."""
        request = cognition_pb2.WatchTriggersRequest(group=group, consumer=consumer)
        return self._cognition().WatchTriggers(request, metadata=credentials(principal))

    def ack(self, principal: Principal, group: str, trigger_id: str) -> None:
        request = cognition_pb2.AckTriggersRequest(group=group, trigger_ids=[trigger_id])
        call_as(principal, self._cognition().AckTriggers, request)

    def evaluation_prompt(self, principal: Principal, trigger: cognition_pb2.Trigger) -> str:
        """The evaluation prompt for the pending queries of the trigger's trace; "" when none
        is pending."""
        request = cognition_pb2.GetEvaluationPromptRequest(
            trace_id=trigger.trace_id, owner=trigger.owner
        )
        return call_as(principal, self._cognition().GetEvaluationPrompt, request).prompt

    def submit_evaluation(
        self, principal: Principal, trigger: cognition_pb2.Trigger, raw_text: str
    ) -> str:
        """Submits the LLM's answer; why it holds no evaluation ("" when it does)."""
        request = cognition_pb2.SubmitEvaluationRequest(
            trace_id=trigger.trace_id,
            owner=trigger.owner,
            raw_text=raw_text,
            trigger=trigger.trigger,
        )
        return call_as(principal, self._cognition().SubmitEvaluation, request).parse_error

    def abandon_evaluation(
        self, principal: Principal, trigger: cognition_pb2.Trigger, reason: str
    ) -> None:
        """Gives up on the trigger's trace's pending queries (a new signal republishes
        them)."""
        request = cognition_pb2.AbandonEvaluationRequest(
            trace_id=trigger.trace_id,
            owner=trigger.owner,
            trigger_id=trigger.trigger_id,
            reason=reason[:REASON_MAX],
            deliveries=trigger.delivery_count,
        )
        call_as(principal, self._cognition().AbandonEvaluation, request)
