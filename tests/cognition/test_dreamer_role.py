"""The `dreamer` role (the dream service's): it lists and reads every trace, adds
reflections and marks them consumed — and nothing more."""

from __future__ import annotations

import pytest

from tests.cognition.conftest import new_trace
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

MESSAGE = {"type": "message", "sequence": 4, "role": "user", "content": "renew the cert"}
REFLECTION = {"type": "reflection", "sequence_range": [1, 4], "summary": "certs expire"}


def test_a_dreamer_lists_reads_reflects_and_consumes_any_trace(server: Harness) -> None:
    alice, bob, dreamer = server.client("alice"), server.client("bob"), server.client("dream")
    alice_trace, bob_trace = new_trace(), new_trace()
    alice.cognition.append_events(alice_trace, [MESSAGE])
    bob.cognition.append_events(bob_trace, [MESSAGE])

    everyone = {t.trace_id for t in dreamer.cognition.list_traces(limit=100)}
    assert {alice_trace, bob_trace} <= everyone
    # The dreamer has no org: it names acme's agent with its org.
    alices = dreamer.cognition.list_traces(owner="user:alice", agent_id="acme:alice_bot", limit=100)
    assert alice_trace in {t.trace_id for t in alices}
    assert {t.owner for t in alices} == {"user:alice"}
    assert [e["sequence"] for e in dreamer.cognition.get_log(alice_trace, owner="user:alice")] == [
        4
    ]

    appended = dreamer.cognition.append_events(alice_trace, [REFLECTION], owner="user:alice")
    assert appended.trace.reflected_at_sequence == 4
    assert appended.trace.owner == "user:alice"  # still alice's trace
    assert (
        dreamer.cognition.consume_reflections(alice_trace, appended.event_ids, owner="user:alice")
        == 1
    )
    [reflection] = alice.cognition.get_log(alice_trace, types=["reflection"])
    assert reflection["summary"] == "certs expire" and reflection["consumed_at"]


def test_a_dreamer_writes_nothing_but_reflections(server: Harness) -> None:
    alice, dreamer = server.client("alice"), server.client("dream")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])

    for events, options in (
        ([MESSAGE], {}),
        ([REFLECTION, MESSAGE], {}),
        ([REFLECTION], {"task": "something else"}),
        ([REFLECTION], {"auto_commit": True}),
    ):
        code, message = failure(
            lambda e=events, o=options: dreamer.cognition.append_events(
                trace_id, e, owner="user:alice", **o
            )
        )
        assert (code, message) == ("NOT_FOUND", f"trace {trace_id!r} not found")
    # nor a reflection into a trace that does not exist (it creates no trace for others)
    assert (
        failure(
            lambda: dreamer.cognition.append_events(new_trace(), [REFLECTION], owner="user:alice")
        )[0]
        == "NOT_FOUND"
    )
    assert (
        failure(lambda: dreamer.cognition.trace_view(trace_id, owner="user:alice"))[0]
        == "NOT_FOUND"
    )
    assert (
        failure(lambda: dreamer.cognition.evaluation_prompt(trace_id, owner="user:alice"))[0]
        == "NOT_FOUND"
    )
    assert len(alice.cognition.get_log(trace_id)) == 1


def test_only_admins_and_dreamers_list_other_owners_traces(server: Harness) -> None:
    alice, admin = server.client("alice"), server.client("admin")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [MESSAGE])

    assert failure(lambda: alice.cognition.list_traces(owner="user:bob")) == (
        "PERMISSION_DENIED",
        "owner: only admins list the traces of 'user:bob'",
    )
    assert trace_id in {
        t.trace_id for t in alice.cognition.list_traces(owner="user:alice", limit=100)
    }
    assert trace_id in {
        t.trace_id for t in admin.cognition.list_traces(owner="user:alice", limit=100)
    }
    assert list(admin.cognition.list_traces(owner="user:nobody")) == []
    code, message = failure(lambda: admin.cognition.list_traces(owner="alice"))
    assert code == "INVALID_ARGUMENT" and message.startswith("owner:")
