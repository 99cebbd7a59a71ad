"""A trace exported as OpenTelemetry spans (GenAI semantic conventions) over OTLP/HTTP to a
receiver started here, decoded with opentelemetry-proto: the spans, their parents,
attributes, statuses and events come back as the trace has them — through
export_trace and through `knowhub cognition export-otel`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from knowhub import TraceView
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.cognition.otel import ExportError, export_trace
from tests.cognition.conftest import new_trace, query_event, save_knowledge
from tests.support.harness import Harness
from tests.support.otlp_receiver import OTLPReceiver, Received
from tests.support.runtime_trace import GOAL, JOB, TICKET, append_runtime_trace

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

ERROR = Status.STATUS_CODE_ERROR


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    receiver = OTLPReceiver().start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="module")
def traced(server: Harness) -> tuple[str, TraceView]:
    """The runtime trace, plus a knowledge query the agent rated helpful."""
    alice, trace_id = server.client("alice"), new_trace()
    append_runtime_trace(alice, trace_id)
    record = save_knowledge(alice, task="checkout pool sizing")
    alice.cognition.append_events(trace_id, [query_event(1, record, text="pool sizing")])
    alice.cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {
                "query_sequence": 1,
                "assessments": [
                    {
                        "knowledge_id": record.id,
                        "status": "helpful",
                        "reason": "named the pool limit",
                    }
                ],
            }
        ],
        trigger="task_completion",
    )
    return trace_id, alice.cognition.trace_view(trace_id)


def by_name(spans: list[Received]) -> dict[str, list[Received]]:
    found: dict[str, list[Received]] = {}
    for span in spans:
        found.setdefault(span.span.name, []).append(span)
    return found


def node_spans(spans: list[Received], node_id: str) -> list[Received]:
    return [
        s
        for s in spans
        if s.attributes.get("knowhub.node.id") == node_id and "knowhub.node.attempt" in s.attributes
    ]


def test_the_trace_arrives_as_agent_node_and_tool_spans(
    receiver: OTLPReceiver, traced: tuple[str, TraceView]
) -> None:
    trace_id, view = traced
    sent = export_trace(view, receiver.url, headers={"x-api-key": "k1"})
    spans = receiver.spans()
    assert sent == len(spans) == 16 and len(receiver.requests) == 1
    assert receiver.headers[0]["x-api-key"] == "k1"
    assert len({s.span.trace_id for s in spans}) == 1
    assert {s.resource["service.name"] for s in spans} == {"alice_bot"}

    names = Counter(s.span.name for s in spans)
    assert names == {
        "invoke_agent alice_bot": 1,
        "chat": 2,
        "tool search_logs": 2,
        "tool read_metrics": 1,
        "tool read_dashboards": 1,
        "tool file_ticket": 1,
        "tool notify": 1,
        "execute_tool log_search": 2,
        "execute_tool metrics_query": 1,
        "execute_tool grafana_query": 1,
        "execute_tool jira_create": 1,
        "execute_tool slack_post": 1,
        "execute_tool knowledge_search": 1,
    }

    (root,) = by_name(spans)["invoke_agent alice_bot"]
    assert root.span.parent_span_id == b"" and root.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "alice_bot",
        "gen_ai.agent.id": "alice_bot",
        "gen_ai.conversation.id": trace_id,
        "knowhub.trace.task": "triage INC-7",
        "knowhub.job.id": JOB,
        "knowhub.goal": GOAL,
        "knowhub.job.status": "completed",
        "knowhub.cursor.node_id": "notify",
    }
    nodes = [s for s in spans if "knowhub.node.attempt" in s.attributes]
    assert len(nodes) == 8 and {s.span.parent_span_id for s in nodes} == {root.span.span_id}
    for span in spans:
        assert span.span.start_time_unix_nano <= span.span.end_time_unix_nano


def test_failed_and_retried_attempts_are_errors(
    receiver: OTLPReceiver, traced: tuple[str, TraceView]
) -> None:
    export_trace(traced[1], receiver.url)
    spans = receiver.spans()
    first, second = node_spans(spans, "search_logs")
    assert (
        first.attributes["knowhub.node.attempt"],
        first.span.status.code,
        first.span.status.message,
    ) == (1, ERROR, "the log store timed out")
    assert first.attributes["error.type"] == "retryable"
    assert (second.attributes["knowhub.node.attempt"], second.span.status.code) == (
        2,
        Status.STATUS_CODE_UNSET,
    )
    (failed,) = node_spans(spans, "read_metrics")
    assert (failed.span.status.code, failed.attributes["knowhub.node.state"]) == (ERROR, "failed")
    tools = by_name(spans)["execute_tool log_search"]
    assert [t.span.parent_span_id for t in tools] == [first.span.span_id, second.span.span_id]
    assert (tools[0].span.status.code, tools[0].span.status.message) == (ERROR, "timeout after 30s")


def test_tool_spans_carry_input_output_and_provenance(
    receiver: OTLPReceiver, traced: tuple[str, TraceView]
) -> None:
    export_trace(traced[1], receiver.url)
    spans = receiver.spans()
    (ticket,) = by_name(spans)["execute_tool jira_create"]
    (node,) = node_spans(spans, "file_ticket")
    assert ticket.span.parent_span_id == node.span.span_id
    assert ticket.span.kind == Span.SPAN_KIND_INTERNAL
    attributes = ticket.attributes
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "jira_create"
    assert attributes["gen_ai.tool.call.arguments"] == "P2: checkout pool exhausted"
    assert attributes["gen_ai.tool.call.result"] == "created the INC-7 ticket"
    assert attributes["knowhub.tool.external_id"] == TICKET
    assert attributes["gen_ai.tool.call.id"]
    assert node.attributes["knowhub.plan.version"] == 3


def test_thoughts_memory_plans_and_evaluations_are_span_events(
    receiver: OTLPReceiver, traced: tuple[str, TraceView]
) -> None:
    export_trace(traced[1], receiver.url)
    spans = receiver.spans()
    (plan,) = node_spans(spans, "plan")
    assert plan.span.name == "chat" and plan.attributes["gen_ai.operation.name"] == "chat"
    assert [(name, fields["knowhub.content"]) for name, fields in plan.events] == [
        ("knowhub.thought", "Look at logs and metrics in parallel"),
        ("knowhub.decision", "fan out to logs and metrics"),
    ]
    (analyze,) = node_spans(spans, "analyze")
    assert ("knowhub.memory.read", "runbooks:checkout") in [
        (name, fields.get("knowhub.memory.key")) for name, fields in analyze.events
    ]
    (blocked,) = node_spans(spans, "read_metrics")
    assert [name for name, _ in blocked.events] == ["knowhub.memory.write"]

    (root,) = by_name(spans)["invoke_agent alice_bot"]
    plans = [fields for name, fields in root.events if name == "knowhub.plan"]
    assert [p["knowhub.plan.version"] for p in plans] == [1, 2, 3]
    assert plans[1]["knowhub.plan.diff"].startswith("added read_dashboards")
    assert [
        fields["knowhub.memory.key"]
        for name, fields in root.events
        if name.startswith("knowhub.memory")
    ] == ["incidents:similar"]

    (search,) = by_name(spans)["execute_tool knowledge_search"]
    assert search.span.parent_span_id == root.span.span_id
    assert search.attributes["gen_ai.tool.call.arguments"] == "pool sizing"
    (evaluation,) = search.events
    assert evaluation[0] == "gen_ai.evaluation.result"
    assert evaluation[1]["gen_ai.evaluation.score.label"] == "helpful"
    assert evaluation[1]["gen_ai.evaluation.explanation"] == "named the pool limit"


def test_exports_of_one_trace_share_its_trace_id(
    receiver: OTLPReceiver, traced: tuple[str, TraceView], server: Harness
) -> None:
    export_trace(traced[1], receiver.url)
    export_trace(traced[1], receiver.url)
    other = new_trace()
    server.client("alice").cognition.append_events(
        other, [{"type": "node_started", "node_id": "a"}]
    )
    export_trace(server.client("alice").cognition.trace_view(other), receiver.url)
    ids = [
        {s.trace_id for r in request.resource_spans for scope in r.scope_spans for s in scope.spans}
        for request in receiver.requests
    ]
    assert ids[0] == ids[1] and len(ids[0]) == 1 and ids[2] != ids[0]


def test_a_refusing_or_missing_endpoint_is_an_error(
    receiver: OTLPReceiver, traced: tuple[str, TraceView]
) -> None:
    receiver.answer_status = 400
    with pytest.raises(ExportError, match="did not take the 16 spans"):
        export_trace(traced[1], receiver.url, timeout=2)
    receiver.stop()
    with pytest.raises(ExportError):
        export_trace(traced[1], receiver.url, timeout=1)


def test_the_command_exports_a_trace(
    receiver: OTLPReceiver,
    traced: tuple[str, TraceView],
    server: Harness,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = ["--target", server.address, "--token", "token-alice"]
    code = knowhub_cli(
        [
            "cognition",
            "export-otel",
            traced[0],
            "--endpoint",
            receiver.url,
            "--header",
            "authorization=Bearer collector",
            "--job",
            JOB,
            *target,
        ]
    )
    assert code == 0 and f"sent 16 spans of trace {traced[0]}" in capsys.readouterr().out
    assert len(receiver.spans()) == 16
    assert receiver.headers[0]["authorization"] == "Bearer collector"

    assert (
        knowhub_cli(
            [
                "cognition",
                "export-otel",
                traced[0],
                "--endpoint",
                receiver.url,
                "--job",
                "nope",
                *target,
            ]
        )
        == 1
    )
    assert "INVALID_ARGUMENT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        knowhub_cli(["cognition", "export-otel", traced[0], "--endpoint", "file:///etc", *target])
    assert "is not an http(s) URL" in capsys.readouterr().err
