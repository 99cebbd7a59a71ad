"""Trace logs: appending (atomic, idempotent), reading, listing, the trace record, access,
limits and validation — through the SDK and the raw stub against real servers and Redis."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.common.storage.redis_store import EmbeddedRedis
from tests.cognition.conftest import new_trace, query_event
from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.shared import bearer, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

MESSAGE = {"type": "message", "sequence": 1, "role": "user", "content": "log in to the portal"}
APPENDABLE = [
    query_event(2, "knowledge-a", "knowledge-b"),
    MESSAGE,
    {
        "type": "memory_read",
        "memory_type": "episodic",
        "key_or_scope": "user:alice",
        "summary": "read the last 5 episodes",
        "step_index": 2,
        "job_id": "",
        "node_id": "",
    },
    {
        "type": "memory_write",
        "memory_type": "working",
        "key_or_scope": "scratch:plan",
        "summary": "noted the login URL",
        "step_index": 3,
        "job_id": "job-1",
        "node_id": "login",
    },
    {
        "type": "plan_evolution",
        "plan_version": 2,
        "diff_summary": "added a retry step",
        "job_id": "job-1",
    },
    {"type": "reflection", "sequence_range": [1, 3], "summary": "cookies expire hourly"},
    # The agent runtime's events (trace-event-schema v0.9), every field set.
    {
        "type": "plan_generated",
        "job_id": "job-1",
        "plan_version": 1,
        "goal": "log in",
        "task_graph": {
            "nodes": [
                {"id": "plan", "type": "llm", "tool_name": "", "workflow": "", "description": "d"},
                {
                    "id": "login",
                    "type": "tool",
                    "tool_name": "browser",
                    "workflow": "",
                    "description": "",
                },
            ],
            "edges": [{"from_node": "plan", "to_node": "login"}],
        },
    },
    {
        "type": "decision_snapshot",
        "job_id": "job-1",
        "plan_version": 1,
        "goal": "log in",
        "task_graph": {"nodes": [], "edges": []},
        "task_graph_summary": "plan, then log in",
        "reasoning_summary": "the portal needs a session",
        "memory_summary": "one cookie",
        "memory_keys": ["user:alice"],
        "plan_hash": "sha256:ab",
    },
    {
        "type": "node_started",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "attempt": 1,
        "worker_id": "worker-a",
    },
    {
        "type": "agent_thought_recorded",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "content": "the cookie may be stale",
        "role": "reasoning",
    },
    {
        "type": "decision_made",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "content": "open the login page",
        "kind": "tool_call",
    },
    {
        "type": "tool_selected",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "tool_name": "browser",
        "reason": "it keeps cookies",
        "input_summary": "GET /login",
    },
    {
        "type": "tool_result_summarized",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "tool_name": "browser",
        "summary": "200, logged in",
        "error": "",
        "idempotent": True,
        "rollback_available": False,
        "external_id": "session-42",
    },
    {
        "type": "node_finished",
        "job_id": "job-1",
        "node_id": "login",
        "step_index": 2,
        "state": "retryable",
        "attempt": 1,
        "duration_ms": 1250,
        "reason": "slow portal",
    },
]


def log_of(client: KnowHub, trace_id: str, **options: Any) -> list[dict[str, Any]]:
    return [e.to_dict() for e in client.cognition.get_log(trace_id, limit=1000, **options)]


def body(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in ("event_id", "timestamp")}


# ---- Appending and reading ----------------------------------------------------------------


def test_every_appendable_event_type_round_trips(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    result = alice.cognition.append_events(trace_id, APPENDABLE, task="renew the certificate")

    events = log_of(alice, trace_id)
    assert [body(e) for e in events] == [body(e) for e in APPENDABLE]
    assert [e["event_id"] for e in events] == result.event_ids
    assert result.trace.task == "renew the certificate"
    assert result.trace.event_count == len(APPENDABLE)


def test_the_server_stamps_increasing_ids_and_its_own_time(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    first = alice.cognition.append_events(trace_id, [MESSAGE]).event_ids
    second = alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 2}]).event_ids
    events = alice.cognition.get_log(trace_id)

    ids = first + second
    assert [tuple(map(int, i.split("-"))) for i in ids] == sorted(
        tuple(map(int, i.split("-"))) for i in ids
    )
    assert len(set(ids)) == 2
    for event in events:
        assert event.timestamp is not None
        assert before <= event.timestamp <= datetime.now(timezone.utc) + timedelta(seconds=1)


def test_a_caller_cannot_set_event_id_or_timestamp(server: Harness) -> None:
    channel = grpc.insecure_channel(server.address)
    stub, trace_id = cognition_pb2_grpc.CognitionServiceStub(channel), new_trace()
    for name in ("event_id", "timestamp"):
        event = cognition_pb2.Event(message=cognition_pb2.MessageEvent(role="user"))
        if name == "event_id":
            event.event_id = "1-0"
        else:
            event.timestamp.seconds = 5
        code, message = failure(
            lambda e=event: stub.AppendEvents(
                cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=[e]),
                metadata=bearer("alice"),
            )
        )
        assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", f"events[0].{name}")
    code, message = failure(
        lambda: stub.AppendEvents(
            cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=[cognition_pb2.Event()]),
            metadata=bearer("alice"),
        )
    )
    assert code == "INVALID_ARGUMENT" and message.startswith("events[0]: has no event body")
    channel.close()
    assert failure(lambda: server.client("alice").cognition.get_log(trace_id))[0] == "NOT_FOUND"


def test_a_time_outside_the_timestamp_range_is_refused_naming_it(server: Harness) -> None:
    """Found by the fuzzer (tests/reliability): a reflection's consumed_at with negative
    nanos or after 9999 could not be converted and the append failed with INTERNAL."""
    channel = grpc.insecure_channel(server.address)
    stub, trace_id = cognition_pb2_grpc.CognitionServiceStub(channel), new_trace()
    for stamp in (Timestamp(nanos=-1), Timestamp(seconds=253_402_300_800)):
        event = cognition_pb2.Event(
            reflection=cognition_pb2.ReflectionEvent(
                sequence_range=[1, 2], summary="s", consumed_at=stamp
            )
        )
        code, message = failure(
            lambda e=event: stub.AppendEvents(
                cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=[e]),
                metadata=bearer("alice"),
            )
        )
        assert (code, message.split(":")[0]) == (
            "INVALID_ARGUMENT",
            "events[0].reflection.consumed_at",
        )
    channel.close()
    assert failure(lambda: server.client("alice").cognition.get_log(trace_id))[0] == "NOT_FOUND"


def test_a_batch_with_one_bad_event_writes_nothing(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])
    bad = {**MESSAGE, "sequence": 2, "role": "narrator"}
    code, message = failure(
        lambda: alice.cognition.append_events(
            trace_id, [{**MESSAGE, "sequence": 2}, bad], task="changed"
        )
    )

    assert code == "INVALID_ARGUMENT"
    assert message.startswith("events[1].message.role:")
    events = log_of(alice, trace_id)
    assert [body(e) for e in events] == [MESSAGE]
    assert alice.cognition.get_log(trace_id).trace.task == ""


def test_a_repeated_query_sequence_refuses_the_batch(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(4, "knowledge-a")])
    for batch in (
        [MESSAGE, query_event(4, "knowledge-b")],
        [query_event(5, "knowledge-b"), query_event(5, "knowledge-c")],
    ):
        code, message = failure(lambda b=batch: alice.cognition.append_events(trace_id, b))
        assert code == "INVALID_ARGUMENT"
        assert message.startswith("events[1].query.sequence: ")
    assert [e["sequence"] for e in log_of(alice, trace_id)] == [4]


def test_a_query_keeps_500_characters_of_source_content_and_derives_source_ids(
    server: Harness,
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    event = {
        "type": "query",
        "sequence": 1,
        "query": "q",
        "sources": [{"id": "knowledge-a", "task": "t", "content": "x" * 900}],
    }
    alice.cognition.append_events(trace_id, [event])
    (logged,) = alice.cognition.get_log(trace_id)
    assert logged["sources"][0]["content"] == "x" * 500
    assert logged["source_ids"] == ["knowledge-a"]


def test_evaluations_and_extractions_are_not_appended_directly(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    writers = {
        "evaluation": "SubmitEvaluation",
        "extraction_pending": "SavePendingExtraction",
        "extraction_reviewed": "ReviewExtraction",
        "extraction_committed": "CommitExtractions",
    }
    for kind, writer in writers.items():
        code, message = failure(
            lambda k=kind: alice.cognition.append_events(trace_id, [{"type": k}])
        )
        assert code == "INVALID_ARGUMENT"
        assert message.startswith("events[0]:") and writer in message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


# ---- Validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ({**MESSAGE, "sequence": -1}, "events[0].message.sequence"),
        ({**MESSAGE, "role": ""}, "events[0].message.role"),
        ({**MESSAGE, "content": "x" * 262_145}, "events[0].message.content"),
        ({**query_event(1, "k"), "query": ""}, "events[0].query.query"),
        ({**query_event(1, "k"), "query": "x" * 4_001}, "events[0].query.query"),
        ({**query_event(1, "k"), "response": "x" * 65_537}, "events[0].query.response"),
        ({**query_event(1, "k"), "goal_id": "g" * 257}, "events[0].query.goal_id"),
        (
            {**query_event(1, "k"), "source_ids": ["k", "k"], "sources": []},
            "events[0].query.source_ids[1]",
        ),
        (
            {**query_event(1, "k"), "source_ids": [""], "sources": []},
            "events[0].query.source_ids[0]",
        ),
        (query_event(1, *[f"k{i}" for i in range(101)]), "events[0].query.source_ids"),
        ({**query_event(1, "k"), "sources": [{"id": "other"}]}, "events[0].query.sources[0].id"),
        (
            {**query_event(1, "k"), "sources": [{"id": ""}], "source_ids": []},
            "events[0].query.sources[0].id",
        ),
        (
            {**query_event(1, "k"), "sources": [{"id": "k", "task": "x" * 2_001}]},
            "events[0].query.sources[0].task",
        ),
        (
            {"type": "reflection", "sequence_range": [3], "summary": "s"},
            "events[0].reflection.sequence_range",
        ),
        (
            {"type": "reflection", "sequence_range": [5, 3], "summary": "s"},
            "events[0].reflection.sequence_range",
        ),
        (
            {"type": "reflection", "sequence_range": [1, 3], "summary": ""},
            "events[0].reflection.summary",
        ),
        ({"type": "memory_read", "memory_type": "semantic"}, "events[0].memory_read.memory_type"),
        (
            {"type": "memory_write", "memory_type": "working", "summary": "x" * 4_001},
            "events[0].memory_write.summary",
        ),
        (
            {"type": "memory_write", "memory_type": "working", "key_or_scope": "x" * 1_025},
            "events[0].memory_write.key_or_scope",
        ),
        (
            {"type": "memory_read", "memory_type": "working", "step_index": -2},
            "events[0].memory_read.step_index",
        ),
        ({"type": "plan_evolution", "plan_version": -1}, "events[0].plan_evolution.plan_version"),
        (
            {"type": "plan_evolution", "diff_summary": "x" * 65_537},
            "events[0].plan_evolution.diff_summary",
        ),
    ],
)
def test_each_event_rule_is_enforced(server: Harness, event: dict[str, Any], field: str) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    code, message = failure(lambda: alice.cognition.append_events(trace_id, [event]))
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert failure(lambda: alice.cognition.get_log(trace_id))[0] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ({"trace_id": ""}, "trace_id"),
        ({"trace_id": "has space"}, "trace_id"),
        ({"trace_id": "t" * 129}, "trace_id"),
        ({"request_id": "r" * 257}, "request_id"),
        ({"task": "x" * 4_001}, "task"),
        ({"agent_id": "not valid!"}, "agent_id"),
        ({"events": []}, "events"),
        ({"events": [MESSAGE] * 501}, "events"),
    ],
)
def test_each_append_rule_is_enforced(server: Harness, call: dict[str, Any], field: str) -> None:
    alice = server.client("alice")
    arguments: dict[str, Any] = {"trace_id": new_trace(), "events": [MESSAGE], **call}
    code, message = failure(
        lambda: alice.cognition.append_events(
            arguments.pop("trace_id"), arguments.pop("events"), **arguments
        )
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message


# ---- Idempotency ---------------------------------------------------------------------------


def test_a_replayed_request_id_returns_the_first_answer_and_appends_nothing(
    server: Harness,
) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    first = alice.cognition.append_events(trace_id, [MESSAGE], request_id="r-1")
    again = alice.cognition.append_events(trace_id, [MESSAGE], request_id="r-1")

    assert again.event_ids == first.event_ids
    assert again.trace.event_count == 1
    assert len(log_of(alice, trace_id)) == 1
    code, message = failure(
        lambda: alice.cognition.append_events(
            trace_id, [{**MESSAGE, "content": "other"}], request_id="r-1"
        )
    )
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", "request_id")
    assert len(log_of(alice, trace_id)) == 1


def test_old_request_ids_are_forgotten_beyond_the_limit(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub(env={"KNOWHUB_COGNITION_REQUEST_IDS_KEPT": "2"})
    alice, trace_id = hub.client("alice"), new_trace()
    for n in range(3):
        alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": n}], request_id=f"r-{n}")
    alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 2}], request_id="r-2")
    assert len(log_of(alice, trace_id)) == 3
    alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 0}], request_id="r-0")
    assert len(log_of(alice, trace_id)) == 4


# ---- The trace record ------------------------------------------------------------------------


def test_the_trace_record_follows_its_events(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    first = alice.cognition.append_events(trace_id, [MESSAGE, query_event(7, "k")])
    assert (first.trace.owner, first.trace.agent_id) == ("user:alice", "alice_bot")
    assert (first.trace.last_sequence, first.trace.reflected_at_sequence) == (7, 0)
    assert first.trace.pending_evaluations == 1
    assert first.trace.auto_commit is False

    later = alice.cognition.append_events(
        trace_id,
        [{"type": "reflection", "sequence_range": [1, 5], "summary": "s"}],
        auto_commit=True,
        task="the mission",
    )
    assert (later.trace.last_sequence, later.trace.reflected_at_sequence) == (7, 5)
    assert later.trace.unconsumed_reflections == 1
    assert (later.trace.auto_commit, later.trace.task) == (True, "the mission")
    assert later.trace.updated_at >= first.trace.updated_at
    assert later.trace.created_at == first.trace.created_at


def test_attributes_alone_can_be_set_without_events(server: Harness) -> None:
    carol, trace_id = server.client("carol"), new_trace()
    result = carol.cognition.append_events(trace_id, [], agent_id="carols_helper", auto_commit=True)
    assert result.event_ids == []
    assert (result.trace.agent_id, result.trace.auto_commit) == ("carols_helper", True)
    assert result.trace.event_count == 0
    again = carol.cognition.append_events(trace_id, [MESSAGE], agent_id="carol_bot")
    assert again.trace.agent_id == "carols_helper"
    code, message = failure(
        lambda: carol.cognition.append_events(
            trace_id, [{**MESSAGE, "sequence": 2}], agent_id="alice_bot"
        )
    )
    assert (code, message.split(":")[0]) == ("PERMISSION_DENIED", "agent_id")
    assert carol.cognition.get_log(trace_id).trace.event_count == 1


def test_consuming_reflections_sets_consumed_at_once(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    ids = alice.cognition.append_events(
        trace_id,
        [
            MESSAGE,
            {"type": "reflection", "sequence_range": [1, 1], "summary": "a"},
            {"type": "reflection", "sequence_range": [2, 2], "summary": "b"},
        ],
    ).event_ids

    assert alice.cognition.consume_reflections(trace_id, [ids[1]]) == 1
    assert alice.cognition.consume_reflections(trace_id, [ids[1], ids[2]]) == 1
    reflections = alice.cognition.get_log(trace_id, types=["reflection"])
    assert all(e["consumed_at"] for e in reflections)
    assert reflections.trace.unconsumed_reflections == 0
    for bad, problem in (
        (ids[0], "is not a reflection event"),
        ("1-1", "is not an event of this trace"),
        ("nope", "is not an event id"),
    ):
        code, message = failure(lambda b=bad: alice.cognition.consume_reflections(trace_id, [b]))
        assert code == "INVALID_ARGUMENT"
        assert message.startswith("event_ids[0]: ") and message.endswith(problem)


# ---- Reading -----------------------------------------------------------------------------------


def test_get_log_filters_by_type_and_pages_with_tokens(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(
        trace_id, [{**MESSAGE, "sequence": n} for n in range(5)] + [query_event(9, "k")]
    )
    seen, token = [], ""
    while True:
        page = alice.cognition.get_log(trace_id, types=["message"], limit=2, page_token=token)
        seen += [e["sequence"] for e in page]
        token = page.next_page_token
        if not token:
            break
    assert seen == [0, 1, 2, 3, 4]
    assert [e.type for e in alice.cognition.get_log(trace_id, types=["query"])] == ["query"]
    first = alice.cognition.get_log(trace_id, types=["message"], limit=2)
    assert failure(
        lambda: alice.cognition.get_log(trace_id, limit=2, page_token=first.next_page_token)
    ) == ("INVALID_ARGUMENT", "page_token: belongs to a list with other filters")
    assert (
        failure(lambda: alice.cognition.get_log(trace_id, page_token="garbage"))[0]
        == "INVALID_ARGUMENT"
    )
    for options, field in (
        ({"limit": -1}, "page_size"),
        ({"limit": 1001}, "page_size"),
        ({"types": ["thought"]}, "types[0]"),
    ):
        code, message = failure(lambda o=options: alice.cognition.get_log(trace_id, **o))
        assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:")


def test_get_log_since_returns_what_was_appended_from_then_on(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])
    time.sleep(0.01)
    cut = datetime.now(timezone.utc)
    time.sleep(0.01)
    alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 2}])
    assert [e["sequence"] for e in alice.cognition.get_log(trace_id, since=cut)] == [2]


# ---- Listing traces ----------------------------------------------------------------------------


def test_list_traces_shows_the_callers_own_newest_first(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub()
    alice, bob, admin = hub.client("alice"), hub.client("bob"), hub.client("admin")
    mine = [new_trace() for _ in range(3)]
    for trace_id in mine:
        alice.cognition.append_events(trace_id, [MESSAGE])
    other = new_trace()
    alice.cognition.append_events(other, [MESSAGE], agent_id="alice_bot")
    bob_trace = new_trace()
    bob.cognition.append_events(bob_trace, [MESSAGE])
    alice.cognition.append_events(mine[0], [{**MESSAGE, "sequence": 2}])  # now the newest

    listed, token = [], ""
    while True:
        page = alice.cognition.list_traces(limit=2, page_token=token)
        listed += [t.trace_id for t in page]
        token = page.next_page_token
        if not token:
            break
    assert listed == [mine[0], other, mine[2], mine[1]]
    assert [t.trace_id for t in bob.cognition.list_traces()] == [bob_trace]
    assert {t.trace_id for t in admin.cognition.list_traces(limit=100)} == {*mine, other, bob_trace}
    # Agent ids are per organisation: acme's admin names globex's agent with its org.
    [bobs] = admin.cognition.list_traces(agent_id="globex:bob_bot")
    assert (bobs.trace_id, bobs.agent_id) == (bob_trace, "globex:bob_bot")
    assert admin.cognition.list_traces(agent_id="bob_bot") == []
    assert len(alice.cognition.list_traces(agent_id="alice_bot", limit=10)) == 4
    newest = alice.cognition.list_traces(limit=1)[0]
    assert [t.trace_id for t in alice.cognition.list_traces(updated_since=newest.updated_at)] == [
        mine[0]
    ]


# ---- Access --------------------------------------------------------------------------------------


def test_a_trace_is_its_owners_and_the_admins(server: Harness) -> None:
    alice, bob, admin = server.client("alice"), server.client("bob"), server.client("admin")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])

    assert failure(lambda: bob.cognition.get_log(trace_id)) == (
        "NOT_FOUND",
        f"trace {trace_id!r} not found",
    )
    assert failure(lambda: bob.cognition.get_log(trace_id, owner="user:alice")) == (
        "NOT_FOUND",
        f"trace {trace_id!r} not found",
    )
    assert failure(lambda: bob.cognition.trace_view(trace_id))[0] == "NOT_FOUND"
    code, message = failure(
        lambda: bob.cognition.append_events(trace_id, [MESSAGE], owner="user:alice")
    )
    assert (code, message) == ("NOT_FOUND", f"trace {trace_id!r} not found")
    assert len(admin.cognition.get_log(trace_id, owner="user:alice")) == 1
    admin.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 2}], owner="user:alice")
    assert alice.cognition.get_log(trace_id).trace.owner == "user:alice"
    assert len(log_of(alice, trace_id)) == 2
    anonymous = KnowHub(server.address)
    assert failure(lambda: anonymous.cognition.get_log(trace_id))[0] == "UNAUTHENTICATED"
    anonymous.close()


def test_a_server_that_never_saw_a_trace_appends_as_its_agent(start_redis_hub: StartHub) -> None:
    """An append reads nothing first: a server meeting a trace for the first time guesses
    its agent, and the append script corrects the guess before writing."""
    first, second = start_redis_hub(), start_redis_hub()
    alice_trace, carol_trace = new_trace(), new_trace()
    first.client("alice").cognition.append_events(alice_trace, [MESSAGE])
    first.client("carol").cognition.append_events(carol_trace, [MESSAGE], agent_id="carol_bot")

    admin = second.client("admin")
    trace = admin.cognition.append_events(
        alice_trace, [{**MESSAGE, "sequence": 3}], owner="user:alice"
    ).trace
    assert (trace.owner, trace.agent_id, trace.event_count) == ("user:alice", "alice_bot", 2)
    first.client("alice").cognition.append_events(
        alice_trace, [{**MESSAGE, "sequence": 4}], request_id="alice-4"
    )
    unseen = start_redis_hub().client("bob")  # a server with nothing cached
    for events in ([{**MESSAGE, "sequence": 4}], [{**MESSAGE, "sequence": 5}]):
        code, _ = failure(
            lambda e=events: unseen.cognition.append_events(
                alice_trace, e, request_id="alice-4", owner="user:alice"
            )
        )
        assert code == "NOT_FOUND"  # not told whether alice used the request id
    # carol's token names no agent: her trace keeps the agent it was created with
    carol = second.client("carol")
    trace = carol.cognition.append_events(carol_trace, [{**MESSAGE, "sequence": 2}]).trace
    assert (trace.owner, trace.agent_id, trace.event_count) == ("user:carol", "carol_bot", 2)

    alice_first = first.client("alice")
    assert [e["sequence"] for e in log_of(alice_first, alice_trace)] == [1, 3, 4]
    assert [t.trace_id for t in admin.cognition.list_traces(agent_id="alice_bot")][:1] == [
        alice_trace
    ]
    assert [t.trace_id for t in carol.cognition.list_traces(agent_id="carol_bot")] == [carol_trace]


# ---- Limits and outages -----------------------------------------------------------------------


def test_a_full_trace_refuses_more_events(start_redis_hub: StartHub) -> None:
    hub = start_redis_hub(env={"KNOWHUB_COGNITION_MAX_EVENTS_PER_TRACE": "3"})
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE, {**MESSAGE, "sequence": 2}])
    code, message = failure(
        lambda: alice.cognition.append_events(
            trace_id, [{**MESSAGE, "sequence": 3}, {**MESSAGE, "sequence": 4}]
        )
    )
    assert code == "RESOURCE_EXHAUSTED" and "limit is 3" in message
    assert len(log_of(alice, trace_id)) == 2


def test_redis_away_is_unavailable_and_back_is_served(start_hub: StartHub, tmp_path: Path) -> None:
    redis_server = EmbeddedRedis(tmp_path / "own-redis").start()
    hub = start_hub(redis_url=redis_server.url)
    alice, trace_id = hub.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])
    redis_server.stop()
    try:
        code, message = failure(
            lambda: alice.cognition.append_events(trace_id, [{**MESSAGE, "sequence": 2}])
        )
        assert code == "UNAVAILABLE" and "Redis is unavailable" in message
    finally:
        redis_server = EmbeddedRedis(tmp_path / "own-redis").start()
    assert len(log_of(alice, trace_id)) == 1
    redis_server.stop()


def test_errors_are_typed_sdk_errors(server: Harness) -> None:
    with pytest.raises(errors.NotFound):
        server.client("alice").cognition.get_log(new_trace())
