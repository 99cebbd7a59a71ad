"""The rules of RunDream, GetDreamRun and the memory document RPCs: validation (the field
named, nothing changed), who may run or read an agent's dream, the service token, no LLM,
long stretches, and the SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from knowhub import AsyncKnowHub, DreamRun, KnowHub
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.conftest import StartHub
from tests.dream.dreaming import (
    FAST,
    DreamLLM,
    message,
    new_agent,
    new_trace,
    plan,
    wait_run,
    write_dream_tokens,
)
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import bearer, failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def runs_queued(harness: Harness, redis_url: str) -> int:
    prefix = harness.settings["redis_prefix"]
    return connect(redis_url).xlen(f"{keyspace(prefix, 'dream')}runs")


def raw_run(harness: Harness, principal: str, **fields: Any) -> Any:
    with grpc.insecure_channel(harness.address) as channel:
        stub = dream_pb2_grpc.DreamServiceStub(channel)
        return stub.RunDream(dream_pb2.RunDreamRequest(**fields), metadata=bearer(principal))


# ---- RunDream and GetDreamRun ---------------------------------------------------------------


def test_each_run_rule_is_enforced_and_a_refused_run_queues_nothing(
    dream_server: Harness, dream_llm: DreamLLM, redis_url: str
) -> None:
    alice, bob, carol = (dream_server.client(p) for p in ("alice", "bob", "carol"))
    admin = dream_server.client("admin")
    bobs, others = new_trace(), new_trace()
    bob.cognition.append_events(bobs, [message(1, "bob's")])
    admin.cognition.append_events(others, [message(1, "x")], agent_id="bot-y")
    before = runs_queued(dream_server, redis_url)

    cases = [
        (
            lambda: bob.dream.run(agent_id="alice_bot"),
            "PERMISSION_DENIED",
            "agent_id: this token may not act as agent 'alice_bot' (its agents: bob_bot)",
        ),
        (
            lambda: carol.dream.run(),
            "INVALID_ARGUMENT",
            "agent_id: is required: the caller's token names no agent",
        ),
        (lambda: alice.dream.run(agent_id="no spaces"), "INVALID_ARGUMENT", "agent_id: "),
        (
            lambda: alice.dream.run(trace_ids=[bobs]),
            "NOT_FOUND",
            f"trace_ids[0]: trace {bobs!r} not found",
        ),
        (
            lambda: alice.dream.run(trace_ids=["ok", "ok"]),
            "INVALID_ARGUMENT",
            "trace_ids[1]: repeats 'ok'",
        ),
        (
            lambda: alice.dream.run(trace_ids=["/bad"]),
            "INVALID_ARGUMENT",
            "trace_ids[0]: '/bad' is not a trace id",
        ),
        (
            lambda: alice.dream.run(trace_ids=[f"t{i}" for i in range(101)]),
            "INVALID_ARGUMENT",
            "trace_ids: has 101 values; the limit is 100",
        ),
        (
            lambda: alice.dream.run(phases=["per_trace_reflect", "per_trace_reflect"]),
            "INVALID_ARGUMENT",
            "phases[1]: repeats",
        ),
        (
            lambda: raw_run(dream_server, "alice", phases=[7]),
            "INVALID_ARGUMENT",
            "phases[0]: 7 is not a knowhub.v1.DreamPhase value",
        ),
        (
            lambda: admin.dream.run(agent_id="bot-x", trace_ids=[others]),
            "INVALID_ARGUMENT",
            f"trace_ids[0]: trace {others!r} is agent 'bot-y''s, not 'bot-x''s",
        ),
        (lambda: alice.dream.get_run(""), "INVALID_ARGUMENT", "run_id: is required"),
        (
            lambda: alice.dream.get_run("dream-nope"),
            "NOT_FOUND",
            "dream run 'dream-nope' not found",
        ),
    ]
    for call, code, message_start in cases:
        assert failure(call)[0] == code, message_start
        assert failure(call)[1].startswith(message_start)
    assert runs_queued(dream_server, redis_url) == before
    assert dream_llm.prompts == {"reflect": [], "integrate": [], "evaluate": []}


def test_a_run_is_seen_by_its_requester_and_admins(
    dream_server: Harness, dream_llm: DreamLLM
) -> None:
    alice, bob, admin = (dream_server.client(p) for p in ("alice", "bob", "admin"))
    trace_id = new_trace()
    alice.cognition.append_events(trace_id, [message(1, "hello")])
    run = alice.dream.run(trace_ids=[trace_id], phases=["per_trace_reflect"])
    assert (run.status, run.agent_id, run.requested_by) == ("queued", "alice_bot", "user:alice")
    finished = wait_run(alice, run.run_id)
    assert admin.dream.get_run(run.run_id).status == finished.status == "done"
    assert failure(lambda: bob.dream.get_run(run.run_id))[0] == "NOT_FOUND"


def test_results_convert_to_plain_dicts_and_the_async_client_runs_too(
    dream_server: Harness, dream_llm: DreamLLM
) -> None:
    agent = new_agent()
    admin = dream_server.client("admin")
    admin.cognition.append_events(new_trace(), [message(1, "hi")], agent_id=agent)

    async def scenario() -> DreamRun:
        async with AsyncKnowHub(dream_server.address, token="token-admin") as kh:
            run = await kh.dream.run(agent_id=agent)
            while not run.finished:
                await asyncio.sleep(0.05)
                run = await kh.dream.get_run(run.run_id)
            return run

    run = asyncio.run(scenario())
    data = json.loads(json.dumps(run.to_dict()))
    assert data["status"] == "done" and data["counts"]["documents_created"] == 1
    assert data["phases"] == ["per_trace_reflect", "cross_trace_integrate"]
    assert data["finished_at"].endswith("Z") and data["failures"] == []
    document = admin.dream.document("notes.md", agent_id=agent).to_dict()
    assert document["revision"] == 1 and document["revisions"] == []
    with pytest.raises(ValueError, match="unknown phase"):
        admin.dream.run(agent_id=agent, phases=["dream_harder"])


# ---- Memory documents ---------------------------------------------------------------------------


def test_memory_documents_are_the_agents_and_the_admins(
    dream_server: Harness, dream_llm: DreamLLM
) -> None:
    alice, dave, bob = (dream_server.client(p) for p in ("alice", "dave", "bob"))
    alice.cognition.append_events(new_trace(), [message(1, "notes please")])
    dream_llm.integrate = lambda prompt: plan(*((f"topic-{i}.md", f"topic {i}") for i in range(3)))
    wait_run(alice, alice.dream.run().run_id)

    listed, token = [], ""
    while True:
        page = dave.dream.documents(limit=2, page_token=token)  # alice_bot's, as dave
        listed += [(d.path, d.content, d.size) for d in page]
        token = page.next_page_token
        if not token:
            break
    assert listed == [(f"topic-{i}.md", "", 7) for i in range(3)]
    assert alice.dream.document("topic-1.md").content == "topic 1"
    for call, code, start in [
        (lambda: bob.dream.documents(agent_id="alice_bot"), "PERMISSION_DENIED", "agent_id:"),
        (
            lambda: bob.dream.document("topic-1.md", agent_id="alice_bot"),
            "PERMISSION_DENIED",
            "agent_id:",
        ),
        (lambda: alice.dream.document("../x.md"), "INVALID_ARGUMENT", "path: '../x.md' leaves"),
        (lambda: alice.dream.document(""), "INVALID_ARGUMENT", "path: must be a non-empty"),
        (
            lambda: alice.dream.document("none.md"),
            "NOT_FOUND",
            "agent 'alice_bot' has no memory document 'none.md'",
        ),
        (
            lambda: alice.dream.document("topic-1.md", revision=5),
            "NOT_FOUND",
            "revision 5 of 'topic-1.md' is not kept",
        ),
        (lambda: alice.dream.document("topic-1.md", revision=-1), "INVALID_ARGUMENT", "revision:"),
        (lambda: alice.dream.documents(limit=101), "INVALID_ARGUMENT", "page_size:"),
        (lambda: alice.dream.documents(page_token="garbage"), "INVALID_ARGUMENT", "page_token:"),
    ]:
        found = failure(call)
        assert found[0] == code and found[1].startswith(start), found


# ---- Configuration, no LLM, long stretches -------------------------------------------------


def dream_hub(
    start_hub: StartHub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    env: dict[str, str] | None = None,
    **settings: Any,
) -> Harness:
    write_dream_tokens(tokens_file.parent)
    return start_hub(
        env={**FAST, **(env or {})}, redis_url=redis_url, redis_prefix=redis_prefix, **settings
    )


def test_without_an_llm_a_run_is_skipped_and_consumes_nothing(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str
) -> None:
    hub = dream_hub(start_hub, tokens_file, redis_url, redis_prefix)
    alice = hub.client("alice")
    trace_id = new_trace()
    alice.cognition.append_events(
        trace_id,
        [message(1, "hi"), {"type": "reflection", "sequence_range": [1, 1], "summary": "old"}],
    )
    alice.cognition.append_events(trace_id, [message(2, "new")])

    run = wait_run(alice, alice.dream.run().run_id)

    assert run.status == "skipped"
    assert run.reason.startswith("no LLM is configured (KNOWHUB_LLM_BASE_URL)")
    assert run.counts["llm_calls"] == 0 and run.started_at is None
    trace = alice.cognition.get_log(trace_id).trace
    assert (trace.reflected_at_sequence, trace.unconsumed_reflections) == (1, 1)
    assert list(alice.dream.documents()) == []


def refused_start(directory: Path, tokens_file: Path, env: dict[str, str]) -> str:
    """Why a server with these settings refused to start (its stores closed again)."""
    harness = Harness(directory, tokens_file=tokens_file)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        try:
            harness.start()
        except ValueError as error:
            assert harness.server is not None
            harness.server.runtime.close()
            return str(error)
    harness.stop()
    raise AssertionError("the server started")


def test_runs_need_the_service_token_and_a_wrong_one_stops_the_start(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    hub = dream_hub(
        start_hub, tokens_file, redis_url, redis_prefix, env={"KNOWHUB_DREAM_SERVICE_TOKEN": ""}
    )
    alice = hub.client("alice")
    for call in (lambda: alice.dream.run(), lambda: alice.dream.schedule(every_minutes=5)):
        code, text = failure(call)
        assert code == "FAILED_PRECONDITION"
        assert text.startswith("dream runs need KNOWHUB_DREAM_SERVICE_TOKEN")
    for env, problem in (
        (
            {"KNOWHUB_DREAM_SERVICE_TOKEN": "token-unknown"},
            "KNOWHUB_DREAM_SERVICE_TOKEN is not a token of the tokens file",
        ),
        (
            {"KNOWHUB_DREAM_SERVICE_TOKEN": "token-bob", "KNOWHUB_EVALUATOR": "on"},
            "names user:bob, which lacks the 'evaluator' role",
        ),
    ):
        assert refused_start(tmp_path / f"refused-{len(env)}", tokens_file, env).endswith(problem)
    lacking = dream_hub(
        start_hub,
        tokens_file,
        redis_url,
        redis_prefix,
        env={"KNOWHUB_DREAM_SERVICE_TOKEN": "token-bob"},
    )
    code, text = failure(lambda: lacking.client("alice").dream.run())
    assert code == "FAILED_PRECONDITION" and "lacks the 'dreamer' role" in text


def test_without_a_tokens_file_the_service_acts_as_the_local_principal(
    llm: OpenAIStub, tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    scripted = DreamLLM()
    llm.responder = scripted
    harness = Harness(
        tmp_path / "open",
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
    ).start()
    try:
        kh = harness.client()  # with the local token
        kh.cognition.append_events(new_trace(), [message(1, "open")], agent_id="bot-open")
        run = wait_run(kh, kh.dream.run(agent_id="bot-open").run_id)
        assert (run.status, run.requested_by) == ("done", "user:local")
    finally:
        harness.stop()


AliceWithLLM = Callable[[dict[str, str]], tuple[KnowHub, DreamLLM]]


@pytest.fixture
def alice_with_llm(
    start_hub: StartHub, llm: OpenAIStub, tokens_file: Path, redis_url: str, redis_prefix: str
) -> AliceWithLLM:
    """Starts a hub with these settings and the scripted dream LLM; alice's client."""

    def start(env: dict[str, str]) -> tuple[KnowHub, DreamLLM]:
        scripted = DreamLLM()
        llm.responder = scripted
        hub = dream_hub(
            start_hub,
            tokens_file,
            redis_url,
            redis_prefix,
            env=env,
            llm_base_url=llm.base_url,
            llm_max_retries=0,
        )
        return hub.client("alice"), scripted

    return start


def test_a_long_stretch_is_reflected_in_parts(alice_with_llm: AliceWithLLM) -> None:
    alice, scripted = alice_with_llm({"KNOWHUB_DREAM_REFLECT_MAX_CHARS": "1000"})
    trace_id = new_trace()
    alice.cognition.append_events(
        trace_id, [message(n, f"{n} " + "x" * 300) for n in range(1, 8)] + [message(8, "y" * 5000)]
    )

    run = wait_run(alice, alice.dream.run(phases=["per_trace_reflect"]).run_id)

    spans = [e["sequence_range"] for e in alice.cognition.get_log(trace_id, types=["reflection"])]
    assert spans == [[1, 3], [4, 6], [7, 7], [8, 8]]
    assert run.counts["reflections_written"] == 4 and run.counts["llm_calls"] == 4
    assert all(len(p) < 1_400 for p in scripted.prompts["reflect"])
    assert scripted.prompts["reflect"][-1].endswith("…[cut]")


def test_many_reflections_are_integrated_in_steps(alice_with_llm: AliceWithLLM) -> None:
    alice, scripted = alice_with_llm({"KNOWHUB_DREAM_INTEGRATE_MAX_REFLECTIONS": "2"})
    traces = [new_trace() for _ in range(5)]
    for trace_id in traces:
        alice.cognition.append_events(trace_id, [message(1, f"fact of {trace_id}")])

    run = wait_run(alice, alice.dream.run().run_id)

    assert run.status == "done"
    assert (run.counts["reflections_integrated"], run.counts["reflections_consumed"]) == (5, 5)
    assert (run.counts["documents_created"], run.counts["documents_updated"]) == (1, 2)
    steps = scripted.prompts["integrate"]
    assert [p.split("New reflections, oldest first:")[1].count("\n- trace ") for p in steps] == [
        2,
        2,
        1,
    ]
    assert "(none yet)" in steps[0] and "### notes.md (revision 2)" in steps[2]
    assert alice.dream.document("notes.md").revision == 3
