"""AskKnowledge through real servers with the scripted LLM: the answer cites the hits; with
a trace it is logged as the query event's integrated response (and waits for evaluation);
the ask prompt follows KNOWHUB_LANGUAGE; without an LLM, FAILED_PRECONDITION; bad input
names its field and logs nothing; and the HTTP route and the agent tool answer alike."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from knowhub import KnowHub, errors
from knowhub.tools import call_tool

from knowhub_server.knowledge import prompts
from tests.conftest import StartHub
from tests.gateway.conftest import gateway_for
from tests.support.harness import Harness
from tests.support.openai_stub import Failure, OpenAIStub

QUESTION = "how do I renew the quasar gateway certificate?"


def cite_all(request: dict[str, Any]) -> str:
    """The answering LLM: cites every record of the prompt."""
    cited = re.findall(r"^\[(knowledge-[^\]]+)\]", request["messages"][-1]["content"], re.MULTILINE)
    return "Run certbot " + " ".join(f"[{i}]" for i in cited)


def settings(llm: OpenAIStub, **extra: Any) -> dict[str, Any]:
    return {"llm_base_url": llm.base_url, "llm_max_retries": 0, "llm_timeout_seconds": 5, **extra}


def saved(alice: KnowHub) -> list[str]:
    return [
        alice.knowledge.save(task=task, content=content, types=["tool"]).id
        for task, content in (
            ("renew the quasar gateway certificate", "certbot renew"),
            ("quasar gateway certificate expiry", "90 days"),
        )
    ]


def new_trace() -> str:
    return f"trace-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def asking(start_hub: StartHub, llm: OpenAIStub) -> Harness:
    llm.responder = cite_all
    return start_hub({"KNOWHUB_SEARCH_ROUTING": "false"}, **settings(llm))


def test_the_answer_cites_the_hits_it_was_given(asking: Harness, llm: OpenAIStub) -> None:
    alice = asking.client("alice")
    ids = saved(alice)
    answer = alice.knowledge.ask(QUESTION, top_k=2)
    assert answer.answer.startswith("Run certbot")
    assert set(answer.cited_ids) == set(ids) == {h.knowledge.id for h in answer.hits}
    assert answer.event_id == ""
    request = llm.chat_requests[-1]
    assert request["messages"][0]["content"] == prompts.ASK_SYSTEM["en"]
    assert "Question: " + QUESTION in request["messages"][-1]["content"]
    assert "certbot renew" in request["messages"][-1]["content"]


def test_with_a_trace_the_answer_is_the_query_events_response(asking: Harness) -> None:
    alice = asking.client("alice")
    ids = saved(alice)
    trace_id = new_trace()
    answer = alice.knowledge.ask(QUESTION, top_k=2, trace_id=trace_id, sequence=7, goal_id="g2")
    [query] = alice.cognition.get_log(trace_id)
    assert query.event_id == answer.event_id
    assert (query.type, query["sequence"], query["goal_id"], query["query"], query["response"]) == (
        "query",
        7,
        "g2",
        QUESTION,
        answer.answer,
    )
    assert set(query["source_ids"]) == set(ids)
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [7]


def test_nothing_found_asks_no_llm_and_logs_an_empty_answer(
    asking: Harness, llm: OpenAIStub
) -> None:
    alice = asking.client("alice")
    trace_id = new_trace()
    answer = alice.knowledge.ask("xylophone quokka", trace_id=trace_id, sequence=1)
    assert (answer.answer, answer.cited_ids, list(answer.hits)) == ("", [], [])
    assert llm.chat_requests == []
    assert alice.cognition.get_log(trace_id)[0]["response"] == ""


def test_the_ask_prompt_is_chinese_with_knowhub_language_zh(
    start_hub: StartHub, llm: OpenAIStub
) -> None:
    llm.responder = cite_all
    alice = start_hub({"KNOWHUB_SEARCH_ROUTING": "false"}, **settings(llm, language="zh")).client(
        "alice"
    )
    saved(alice)
    alice.knowledge.ask(QUESTION)
    request = llm.chat_requests[-1]
    assert request["messages"][0]["content"] == prompts.ASK_SYSTEM["zh"]
    assert request["messages"][-1]["content"].startswith("问题: ")


def test_without_an_llm_asking_is_a_failed_precondition(hub: Harness) -> None:
    with pytest.raises(errors.FailedPrecondition) as raised:
        hub.client("alice").knowledge.ask(QUESTION)
    assert "KNOWHUB_LLM_BASE_URL" in raised.value.message


def test_a_failing_llm_is_unavailable_and_logs_nothing(asking: Harness, llm: OpenAIStub) -> None:
    alice = asking.client("alice")
    saved(alice)
    llm.script(Failure(500))
    trace_id = new_trace()
    with pytest.raises(errors.Unavailable):
        alice.knowledge.ask(QUESTION, trace_id=trace_id, sequence=1)
    with pytest.raises(errors.NotFound):
        alice.cognition.get_log(trace_id)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": QUESTION, "top_k": 0}, "top_k"),
        ({"query": QUESTION, "trace_id": "bad trace id"}, "trace_id"),
        ({"query": QUESTION, "trace_id": "trace-x", "sequence": -1}, "sequence"),
        ({"query": QUESTION, "sequence": 3}, "trace_id"),
    ],
)
def test_bad_input_names_its_field(
    asking: Harness, llm: OpenAIStub, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(errors.InvalidArgument) as raised:
        asking.client("alice").knowledge.ask(**arguments)
    assert raised.value.message.startswith(field)
    assert llm.chat_requests == []


def test_a_trace_id_names_the_callers_own_trace(asking: Harness) -> None:
    """Each user names their own traces: bob's question logs into his trace of that id,
    and alice's stays as it was."""
    alice, bob = asking.client("alice"), asking.client("bob")
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [], task="mine")
    saved(bob)
    answer = bob.knowledge.ask(QUESTION, trace_id=trace_id, sequence=1)
    [query] = bob.cognition.get_log(trace_id)
    assert (query.event_id, query["sequence"]) == (answer.event_id, 1)
    assert list(alice.cognition.get_log(trace_id)) == []


def test_the_http_route_and_the_agent_tool_answer_alike(asking: Harness) -> None:
    alice = asking.client("alice")
    ids = saved(alice)
    trace_id = new_trace()
    gateway = gateway_for(asking)
    try:
        response = gateway.post(
            "/api/knowledge/ask",
            "alice",
            json={"query": QUESTION, "top_k": 2, "trace_id": trace_id, "sequence": 3},
        )
        assert response.status_code == 200, response.text
        body = response.json()
        refused = gateway.post("/api/knowledge/ask", "alice", json={"query": ""})
    finally:
        gateway.stop()
    assert set(body["cited_ids"]) == set(ids)
    assert {r["id"] for r in body["results"]} == set(ids) and body["count"] == 2
    assert body["event_id"] == alice.cognition.get_log(trace_id)[0].event_id
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "INVALID_ARGUMENT")
    tool = call_tool(alice, "knowledge_ask", json.dumps({"query": QUESTION, "top_k": 2}))
    assert set(tool["cited_ids"]) == set(ids)
    assert {r["id"] for r in tool["results"]} == set(ids)
