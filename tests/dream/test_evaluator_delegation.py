"""The automated quality loop with an evaluator that cannot see the knowledge it rates:
log -> trigger -> server-side evaluator -> counters -> search order, through delegated
grants; a verdict that cannot land is an event, a metric and a log line; and a grant lets
its holder do nothing else."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import grpc
import jwt
import pytest
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.security.delegation import HEADER
from tests.cognition.conftest import save_knowledge
from tests.conftest import StartHub
from tests.dream.dreaming import FAST, DreamLLM, new_trace
from tests.dream.support import wait_until
from tests.dream.test_evaluator import EVALUATOR, pending_triggers, rate_every_source
from tests.observability.support import scrape, value
from tests.support.harness import Harness, write_tokens_file
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

GOAL = "log in to the zephyr supplier portal"
# The dream service's token outside acme: it cannot see alice's org knowledge.
OUTSIDER = {
    "token": "token-dream",
    "user_id": "dreamsvc",
    "org_id": "ops",
    "roles": ["dreamer", "evaluator"],
}


def outsider_hub(
    start_hub: StartHub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    llm: OpenAIStub,
    **settings: Any,
) -> Harness:
    path = write_tokens_file(tokens_file.parent)
    document = json.loads(path.read_text())
    document["tokens"].append(OUTSIDER)
    path.write_text(json.dumps(document))
    return start_hub(
        env={**FAST, **EVALUATOR, "KNOWHUB_SEARCH_ROUTING": "false"},
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        **settings,
    )


def rate(harmful_id: str) -> Any:
    """The evaluator's LLM: `harmful_id` harmful, every other source neutral."""

    def answer(prompt: str) -> str:
        neutral = json.loads(rate_every_source("neutral")(prompt).strip("`json\n"))
        for query in neutral["evaluations"]:
            for item in query["assessments"]:
                if item["source_id"] == harmful_id:
                    item["status"] = "harmful"
        return json.dumps(neutral)

    return answer


def ids(alice: KnowHub) -> list[str]:
    return [h.knowledge.id for h in alice.knowledge.search(GOAL, top_k=3)]


def test_the_automated_loop_moves_org_knowledge_the_evaluator_cannot_see(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    llm.responder = scripted
    hub = outsider_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice, evaluator = hub.client("alice"), KnowHub(hub.address, token="token-dream")
    harmful = save_knowledge(alice, task=GOAL, content="share the admin password", score=5)
    fine = save_knowledge(alice, task="zephyr supplier portal login", content="use single sign-on")
    assert harmful.scopes == ["org:acme"]
    with pytest.raises(errors.NotFound):
        evaluator.knowledge.get(harmful.id)
    assert ids(alice) == [harmful.id, fine.id]  # quality 5 + 1 against 3 + 1
    scripted.evaluate = rate(harmful.id)

    for rated in (1, 2):
        trace_id = new_trace()
        alice.cognition.append_events(trace_id, [], task="order spare parts")
        alice.cognition.inject_knowledge_for_goal(trace_id, "g1", GOAL, sequence=1)
        assert alice.cognition.signal_trigger(trace_id, "goal_completion").published
        wait_until(
            lambda n=rated: alice.knowledge.get(harmful.id).eval.harmful == n,
            what=f"verdict {rated} on the record",
        )
        [case] = alice.knowledge.get(harmful.id).eval.harmful_history[-1:]
        assert (case.trace_id, case.outcome) == (trace_id, "harmful")
        assert alice.cognition.get_log(trace_id, types=["feedback_refused"]) == []

    # 6 - 2 - 2 = 2 < 4: the harmful record falls below the other by feedback alone.
    assert ids(alice) == [fine.id, harmful.id]
    assert (
        alice.knowledge.get(fine.id).eval.helpful,
        alice.knowledge.get(fine.id).eval.harmful,
    ) == (1, 0)
    wait_until(
        lambda: pending_triggers(redis_url, redis_prefix) == 0,
        what="the triggers to be acknowledged",
    )
    evaluator.close()


def test_a_verdict_that_cannot_land_is_an_event_a_metric_and_a_log_line(
    start_hub: StartHub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    llm: OpenAIStub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    scripted = DreamLLM()
    scripted.evaluate = rate_every_source("helpful")
    llm.responder = scripted
    hub = outsider_hub(start_hub, tokens_file, redis_url, redis_prefix, llm, metrics_port=0)
    alice = hub.client("alice")
    record = save_knowledge(alice)
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [], task="log in")
    alice.cognition.inject_knowledge_for_goal(trace_id, "g1", record.task, sequence=2)
    alice.knowledge.delete(record.id)
    caplog.set_level(logging.WARNING, "knowhub_server.cognition.evaluations")
    assert alice.cognition.signal_trigger(trace_id, "goal_completion").published

    wait_until(
        lambda: alice.cognition.get_log(trace_id, types=["feedback_refused"]),
        what="the refusal to be recorded",
    )
    [refused] = alice.cognition.get_log(trace_id, types=["feedback_refused"])
    assert (
        refused["query_sequence"],
        refused["knowledge_id"],
        refused["status"],
        refused["code"],
    ) == (2, record.id, "helpful", "NOT_FOUND")
    [summary] = alice.cognition.trace_view(trace_id).knowledge
    assert (summary.helpful, summary.feedback_refused) == (1, 1)
    assert value(scrape(hub), "knowhub_feedback_verdicts_total", outcome="refused") == 1
    assert any(record.id in r.getMessage() and "refused" in r.getMessage() for r in caplog.records)


# ---- What a grant allows --------------------------------------------------------------------


@pytest.fixture
def granted(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> tuple[Harness, str, str]:
    """A hub, one of alice's org records, and a grant for it issued to the evaluator."""
    hub = outsider_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    record = save_knowledge(hub.client("alice"))
    assert hub.server is not None
    keys = hub.server.runtime.authenticator.delegations
    assert keys is not None
    grant = keys.issue(
        owner_user_id="alice",
        trace_id="trace-1",
        knowledge_ids=[record.id],
        grantee="user:dreamsvc",
    )
    return hub, record.id, grant


def knowledge_stub(hub: Harness) -> knowledge_pb2_grpc.KnowledgeServiceStub:
    return knowledge_pb2_grpc.KnowledgeServiceStub(grpc.insecure_channel(hub.address))


def helpful(knowledge_id: str, trace_id: str = "trace-1") -> knowledge_pb2.UpdateKnowledgeRequest:
    return knowledge_pb2.UpdateKnowledgeRequest(
        id=knowledge_id, add_helpful_case=knowledge_pb2.Case(task="t", trace_id=trace_id)
    )


def metadata(token: str, grant: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"), (HEADER, grant))


def refusal(call: Any, request: Any, token: str, grant: str) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as raised:
        call(request, metadata=metadata(token, grant))
    return raised.value.code()


def test_the_grantee_adds_a_case_as_the_owner(granted: tuple[Harness, str, str]) -> None:
    hub, knowledge_id, grant = granted
    stub = knowledge_stub(hub)
    updated = stub.UpdateKnowledge(helpful(knowledge_id), metadata=metadata("token-dream", grant))
    assert updated.knowledge.eval.helpful == 2


def test_a_grant_allows_nothing_else(granted: tuple[Harness, str, str]) -> None:
    hub, knowledge_id, grant = granted
    stub = knowledge_stub(hub)
    other = save_knowledge(hub.client("alice"), task="another record").id
    denied = grpc.StatusCode.PERMISSION_DENIED
    # Presented by anyone but its grantee.
    assert refusal(stub.UpdateKnowledge, helpful(knowledge_id), "token-carol", grant) == denied
    # Another RPC, another record, another trace, a score or an evolve.
    assert (
        refusal(
            stub.GetKnowledge,
            knowledge_pb2.GetKnowledgeRequest(id=knowledge_id),
            "token-dream",
            grant,
        )
        == denied
    )
    assert refusal(stub.UpdateKnowledge, helpful(other), "token-dream", grant) == denied
    assert (
        refusal(stub.UpdateKnowledge, helpful(knowledge_id, "trace-2"), "token-dream", grant)
        == denied
    )
    rescore = knowledge_pb2.UpdateKnowledgeRequest(id=knowledge_id, update_score=5)
    assert refusal(stub.UpdateKnowledge, rescore, "token-dream", grant) == denied
    evolve = knowledge_pb2.UpdateKnowledgeRequest(id=knowledge_id, evolve_feedback="x")
    assert refusal(stub.UpdateKnowledge, evolve, "token-dream", grant) == denied
    assert hub.client("alice").knowledge.get(knowledge_id).eval.helpful == 1


def test_a_forged_or_expired_grant_is_unauthenticated(granted: tuple[Harness, str, str]) -> None:
    hub, knowledge_id, grant = granted
    stub = knowledge_stub(hub)
    claims = jwt.decode(grant, options={"verify_signature": False})
    forged = jwt.encode(claims, "x" * 32, algorithm="HS256")
    assert (
        refusal(stub.UpdateKnowledge, helpful(knowledge_id), "token-dream", forged)
        == grpc.StatusCode.UNAUTHENTICATED
    )
    assert hub.server is not None
    keys = hub.server.runtime.authenticator.delegations
    expired = jwt.encode({**claims, "exp": int(time.time()) - 5}, keys._key, algorithm="HS256")  # type: ignore[union-attr]
    assert (
        refusal(stub.UpdateKnowledge, helpful(knowledge_id), "token-dream", expired)
        == grpc.StatusCode.UNAUTHENTICATED
    )


@pytest.mark.parametrize("lifetime", ["ten years ahead", "issued long ago"])
def test_a_grant_living_longer_than_the_maximum_is_unauthenticated(
    granted: tuple[Harness, str, str], lifetime: str
) -> None:
    """Even signed with the hub's own key: no grant outlives
    KNOWHUB_DELEGATION_GRANT_MAX_SECONDS (120 s by default)."""
    hub, knowledge_id, grant = granted
    assert hub.server is not None
    keys = hub.server.runtime.authenticator.delegations
    claims = jwt.decode(grant, options={"verify_signature": False})
    now = int(time.time())
    if lifetime == "ten years ahead":
        claims.update(iat=now, exp=now + 10 * 365 * 86_400)
    else:
        claims.update(iat=now - 86_400, exp=now + 60)
    long_lived = jwt.encode(claims, keys._key, algorithm="HS256")  # type: ignore[union-attr]
    with pytest.raises(grpc.RpcError) as raised:
        knowledge_stub(hub).UpdateKnowledge(
            helpful(knowledge_id), metadata=metadata("token-dream", long_lived)
        )
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "at most 120 s" in (raised.value.details() or "")
    assert hub.client("alice").knowledge.get(knowledge_id).eval.helpful == 1
