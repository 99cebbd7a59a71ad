"""A trace as OpenTelemetry spans, following the GenAI semantic conventions, sent to any
OTLP/HTTP endpoint (an OpenTelemetry Collector, Jaeger, Tempo, ...), so a trace can be
opened in the tracing tools people already run.

Built on the caller's side from the trace view the SDK reads (`kh.cognition.trace_view`),
by `knowhub cognition export-otel` or in Python, so the server never sends anything
anywhere:

    from knowhub_server.cognition.otel import export_trace
    export_trace(kh.cognition.trace_view("trace-1"), "http://127.0.0.1:4318/v1/traces")

The spans of one trace share an OpenTelemetry trace id derived from the trace id:

- `invoke_agent {agent}`: the whole trace (gen_ai.operation.name, gen_ai.agent.name,
  gen_ai.conversation.id = the trace id; knowhub.job.id, .goal, .status); its events are
  the plan versions (`knowhub.plan`) and the memory reads and writes no step names.
- one span per attempt of each node: `chat` for an LLM node (gen_ai.operation.name chat),
  else `{node type} {node id}`; ERROR when the attempt failed or is retryable. Its events
  are the thoughts and decisions (`knowhub.thought`, `knowhub.decision`) and the memory
  reads and writes (`knowhub.memory.read` / `.write`) made during it.
- `execute_tool {tool}` for each tool call, under its attempt (gen_ai.tool.name,
  gen_ai.tool.call.id, gen_ai.tool.call.arguments and .result = the input and output
  summaries, knowhub.tool.external_id); ERROR with the tool's error.
- `execute_tool knowledge_search` for each knowledge query of the trace, with its
  evaluations as `gen_ai.evaluation.result` events (gen_ai.evaluation.score.label = the
  status, gen_ai.evaluation.explanation = the reason).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from knowhub.models import (
    Event,
    NodeAttempt,
    ReasoningStep,
    ToolCall,
    TraceView,
)
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FAILED_STATES = ("failed", "retryable")
Attributes = dict[str, Any]


class ExportError(Exception):
    """The endpoint did not take the spans."""


def export_trace(
    view: TraceView,
    endpoint: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> int:
    """Sends the trace's spans to an OTLP/HTTP traces endpoint (its full URL, e.g.
    http://127.0.0.1:4318/v1/traces; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
    OTEL_EXPORTER_OTLP_ENDPOINT when None) and returns how many it sent. Raises
    ExportError when the endpoint refuses them or cannot be reached within `timeout`
    seconds (retries included)."""
    spans = trace_spans(view)
    exporter = OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}), timeout=timeout)
    try:
        with _exporter_warnings() as warnings:
            result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        detail = f": {warnings[-1]}" if warnings else ""
        raise ExportError(
            f"the OTLP endpoint {endpoint or '(OTEL_EXPORTER_OTLP_* settings)'} "
            f"did not take the {len(spans)} spans{detail}"
        )
    return len(spans)


@contextmanager
def _exporter_warnings() -> Iterator[list[str]]:
    """What the exporter logs while it runs (why an export failed)."""
    found: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    logger, handler = logging.getLogger("opentelemetry.exporter"), Collect(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


def trace_spans(view: TraceView) -> list[ReadableSpan]:
    """The trace's spans, finished, in the order they ended."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": view.trace.agent_id or "knowhub-agent"}),
        id_generator=_TraceIds(view.trace.trace_id),
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    _Builder(view, provider.get_tracer("knowhub_server.cognition.otel")).build()
    provider.shutdown()
    return list(memory.get_finished_spans())


class _TraceIds(IdGenerator):
    """One OpenTelemetry trace id per trace (exports of it land in the same trace)."""

    def __init__(self, trace_id: str) -> None:
        digest = hashlib.sha256(f"knowhub:{trace_id}".encode()).digest()
        self._trace_id = int.from_bytes(digest[:16], "big") or 1
        self._random = RandomIdGenerator()

    def generate_trace_id(self) -> int:
        return self._trace_id

    def generate_span_id(self) -> int:
        return self._random.generate_span_id()


def _ns(moment: datetime | None) -> int | None:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000 if moment else None


@dataclass
class _Window:
    start: int
    end: int

    def holds(self, moment: int) -> bool:
        return self.start <= moment <= self.end


class _Builder:
    def __init__(self, view: TraceView, tracer: trace.Tracer) -> None:
        self.view = view
        self.tracer = tracer
        self.start = _ns(view.trace.created_at) or 0
        self.end = max(self.start, _ns(view.trace.updated_at) or 0)

    def build(self) -> None:
        header, agent = self.view.header, self.view.trace.agent_id
        root = self.tracer.start_span(
            f"invoke_agent {agent}".strip(),
            kind=SpanKind.INTERNAL,
            start_time=self.start,
            attributes=_clean(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": agent,
                    "gen_ai.agent.id": agent,
                    "gen_ai.conversation.id": self.view.trace.trace_id,
                    "knowhub.trace.task": self.view.trace.task,
                    "knowhub.job.id": header.job_id,
                    "knowhub.goal": header.goal,
                    "knowhub.job.status": header.status,
                    "knowhub.cursor.node_id": header.cursor_node_id,
                }
            ),
        )
        context = trace.set_span_in_context(root)
        for plan in self.view.plan_snapshots:
            root.add_event(
                "knowhub.plan",
                _clean(
                    {
                        "knowhub.plan.version": plan.plan_version,
                        "knowhub.plan.source": plan.source,
                        "knowhub.plan.goal": plan.goal,
                        "knowhub.plan.diff": plan.diff_summary,
                        "knowhub.plan.reasoning": plan.reasoning_summary,
                    }
                ),
                _ns(plan.timestamp),
            )
        placed = {e.event_id for s in self.view.reasoning_steps for e in s.memory}
        for event in self.view.memory_timeline:
            if event.event_id not in placed:
                root.add_event(*_memory_event(event))
        for step in self.view.reasoning_steps:
            self._step(step, context)
        for sequence in self.view.timeline:
            self._queries(sequence.events, context)
        if header.status == "failed":
            root.set_status(Status(StatusCode.ERROR, "the job failed"))
        root.end(end_time=self.end)

    def _step(self, step: ReasoningStep, context: Any) -> None:
        windows = [self._window(a, step) for a in step.attempts] or [self._card_window(step)]
        attempts: list[NodeAttempt | None] = [*step.attempts] or [None]
        spans = [
            self._attempt_span(step, attempt, window, context)
            for attempt, window in zip(attempts, windows, strict=True)
        ]
        for event in step.cards:
            if event.type in ("agent_thought_recorded", "decision_made"):
                span = spans[_pick(windows, _ns(event.timestamp))]
                span.add_event(*_card_event(event))
        for event in step.memory:
            spans[_pick(windows, _ns(event.timestamp))].add_event(*_memory_event(event))
        for call in self._calls(step):
            index = next(
                (i for i, a in enumerate(step.attempts) if a.attempt == call.attempt),
                len(spans) - 1,
            )
            self._tool_span(call, trace.set_span_in_context(spans[index]), windows[index])
        for span, window in zip(spans, windows, strict=True):
            span.end(end_time=window.end)

    def _calls(self, step: ReasoningStep) -> list[ToolCall]:
        node = next((n for n in self.view.tool_graph.nodes if n.node_id == step.node_id), None)
        return node.calls if node is not None and step.node_id else []

    def _window(self, attempt: NodeAttempt, step: ReasoningStep) -> _Window:
        started, finished = _ns(attempt.started_at), _ns(attempt.finished_at)
        if started is None:
            started = (finished or self.end) - attempt.duration_ms * 1_000_000
        if finished is None:  # still running: up to the trace's last event
            finished = self.end if attempt.state == "running" else started
        return _Window(started, max(started, finished))

    def _card_window(self, step: ReasoningStep) -> _Window:
        moments = [m for m in (_ns(e.timestamp) for e in step.cards) if m is not None]
        return _Window(min(moments, default=self.start), max(moments, default=self.start))

    def _attempt_span(
        self, step: ReasoningStep, attempt: NodeAttempt | None, window: _Window, context: Any
    ) -> Span:
        node_type = self._node_type(step)
        llm = node_type == "llm"
        name = "chat" if llm else f"{node_type or 'step'} {step.node_id or step.step_index}"
        span = self.tracer.start_span(
            name,
            context=context,
            start_time=window.start,
            kind=SpanKind.CLIENT if llm else SpanKind.INTERNAL,
            attributes=_clean(
                {
                    "gen_ai.operation.name": "chat" if llm else None,
                    "knowhub.node.id": step.node_id,
                    "knowhub.node.type": node_type,
                    "knowhub.step.index": step.step_index,
                    "knowhub.plan.version": step.plan_version,
                    "knowhub.node.attempt": attempt.attempt if attempt else None,
                    "knowhub.node.state": attempt.state if attempt else None,
                    "knowhub.node.worker_id": attempt.worker_id if attempt else None,
                }
            ),
        )
        if attempt is not None and attempt.state in _FAILED_STATES:
            span.set_attribute("error.type", attempt.state)
            span.set_status(Status(StatusCode.ERROR, attempt.reason or attempt.state))
        return span

    def _node_type(self, step: ReasoningStep) -> str:
        node = next((n for n in self.view.decision_tree.nodes if n.node_id == step.node_id), None)
        return node.node_type if node is not None else ""

    def _tool_span(self, call: ToolCall, context: Any, window: _Window) -> None:
        start = _ns(call.selected_at) or _ns(call.finished_at) or window.start
        end = max(start, _ns(call.finished_at) or start)
        span = self.tracer.start_span(
            f"execute_tool {call.tool_name}",
            context=context,
            start_time=start,
            attributes=_clean(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.tool_name,
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.id": call.result_event_id or call.selected_event_id,
                    "gen_ai.tool.call.arguments": call.input_summary,
                    "gen_ai.tool.call.result": call.output_summary,
                    "knowhub.tool.reason": call.reason,
                    "knowhub.tool.external_id": call.external_id,
                    "knowhub.tool.idempotent": call.idempotent,
                    "knowhub.tool.rollback_available": call.rollback_available,
                }
            ),
        )
        if call.error:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, call.error))
        span.end(end_time=end)

    def _queries(self, events: Sequence[Event], context: Any) -> None:
        """Each knowledge query as a tool span, with its evaluations as events."""
        for query in (e for e in events if e.type == "query"):
            moment = _ns(query.timestamp) or self.start
            span = self.tracer.start_span(
                "execute_tool knowledge_search",
                context=context,
                start_time=moment,
                attributes=_clean(
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "knowledge_search",
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.id": query.event_id,
                        "gen_ai.tool.call.arguments": query["query"],
                        "gen_ai.tool.call.result": query["response"],
                        "knowhub.query.sequence": query["sequence"],
                        "knowhub.query.goal_id": query["goal_id"],
                        "knowhub.knowledge.ids": list(query["source_ids"]),
                    }
                ),
            )
            for evaluation in events:
                if (
                    evaluation.type == "evaluation"
                    and evaluation["query_sequence"] == query["sequence"]
                ):
                    result = evaluation["eval_result"]
                    span.add_event(
                        "gen_ai.evaluation.result",
                        _clean(
                            {
                                "gen_ai.evaluation.name": "knowledge_usefulness",
                                "gen_ai.evaluation.score.label": result["status"],
                                "gen_ai.evaluation.explanation": result.get("reason", ""),
                                "knowhub.knowledge.id": evaluation["knowledge_id"],
                                "knowhub.evaluation.trigger": evaluation["evaluated_at_trigger"],
                            }
                        ),
                        _ns(evaluation.timestamp),
                    )
            span.end(end_time=moment)


def _pick(windows: list[_Window], moment: int | None) -> int:
    """The attempt an event happened in: the one whose time holds it, else the last that
    began before it, else the first."""
    if moment is None:
        return len(windows) - 1
    holding = [i for i, w in enumerate(windows) if w.holds(moment)]
    if holding:
        return holding[-1]
    before = [i for i, w in enumerate(windows) if w.start <= moment]
    return before[-1] if before else 0


def _card_event(event: Event) -> tuple[str, Attributes, int | None]:
    name = "knowhub.thought" if event.type == "agent_thought_recorded" else "knowhub.decision"
    return (
        name,
        _clean(
            {
                "knowhub.content": event["content"],
                "knowhub.role": event.data.get("role"),
                "knowhub.kind": event.data.get("kind"),
            }
        ),
        _ns(event.timestamp),
    )


def _memory_event(event: Event) -> tuple[str, Attributes, int | None]:
    name = "knowhub.memory.read" if event.type == "memory_read" else "knowhub.memory.write"
    return (
        name,
        _clean(
            {
                "knowhub.memory.type": event["memory_type"],
                "knowhub.memory.key": event["key_or_scope"],
                "knowhub.memory.summary": event["summary"],
                "knowhub.node.id": event.data.get("node_id"),
                "knowhub.step.index": event.data.get("step_index"),
            }
        ),
        _ns(event.timestamp),
    )


def _clean(attributes: Attributes) -> Attributes:
    """Without the empty ones (OpenTelemetry drops None and keeps ""; neither says
    anything)."""
    return {k: v for k, v in attributes.items() if v not in (None, "", [])}
