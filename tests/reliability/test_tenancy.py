"""Names are per organisation: the attacks of the third security review on agent ids and
resource ids, replayed through the SDK over gRPC.

- One agent id in two organisations was one agent: globex's `research_agent` read,
  evolved and deleted acme's `research_agent`'s records, read its memory documents, and
  acme's trace text reached globex's dream prompt.
- Resource ids were one namespace: saving an id another organisation used answered
  ALREADY_EXISTS (telling that it exists) and let a tenant squat names.

Now an agent id or a resource id names an agent or a resource within its organisation:
acme's and globex's `research_agent` are two agents, and `tools/curl` two resources.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from knowhub import KnowHub, errors

from tests.dream.dreaming import FAST, DreamLLM, message, wait_run
from tests.support.harness import PRINCIPALS, Harness, write_tokens_file
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import running_hub

TENANTS = {
    **PRINCIPALS,
    # The same agent id in two organisations.
    "rita": {"user_id": "rita", "org_id": "acme", "agent_id": "research_agent"},
    "erin": {"user_id": "erin", "org_id": "globex", "agent_id": "research_agent"},
    # The dream service's token (a dreamer in no organisation).
    "dream": {"user_id": "dreamsvc", "roles": ["dreamer", "evaluator"]},
}
SECRET_WORDS = "acme's launch codename is bluefin"


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llm(stub: OpenAIStub) -> DreamLLM:
    scripted = DreamLLM()
    stub.responder = scripted
    return scripted


@pytest.fixture(scope="module")
def hub(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, stub: OpenAIStub, llm: DreamLLM
) -> Iterator[Harness]:
    directory = tmp_path_factory.mktemp("tenancy")
    with pytest.MonkeyPatch.context() as env:
        for name, value in {**FAST, "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream"}.items():
            env.setenv(name, value)
        with running_hub(
            directory,
            tokens=write_tokens_file(directory, TENANTS),
            redis_url=redis_url,
            redis_prefix=f"test-{uuid.uuid4().hex[:12]}:",
            llm_base_url=stub.base_url,
            llm_max_retries=0,
            llm_timeout_seconds=10,
        ) as harness:
            yield harness


@pytest.fixture(scope="module")
def kh(hub: Harness) -> dict[str, KnowHub]:
    return {name: hub.client(name) for name in ("rita", "erin", "alice", "bob", "admin")}


# ---- One agent id in two organisations ------------------------------------------------------


def test_another_orgs_agent_of_the_same_name_cannot_touch_its_records(
    kh: dict[str, KnowHub],
) -> None:
    rita, erin = kh["rita"], kh["erin"]
    saved = rita.knowledge.save(
        task="launch plan", content=SECRET_WORDS, types=["plan"], scopes=["agent:research_agent"]
    )
    assert (saved.scopes, saved.owner) == (["agent:research_agent"], "agent:research_agent")

    # globex's research_agent: the record does not exist for it, whatever it tries.
    for attempt in (
        lambda: erin.knowledge.get(saved.id),
        lambda: erin.knowledge.update(saved.id, evolve_feedback="rewrite it"),
        lambda: erin.knowledge.update(saved.id, add_harmful_case={"task": "x"}),
        lambda: erin.knowledge.delete(saved.id),
    ):
        with pytest.raises(errors.NotFound):
            attempt()
    assert saved.id not in {k.id for k in erin.knowledge.list(limit=100)}
    assert saved.id not in {h.knowledge.id for h in erin.knowledge.search("launch plan")}
    assert saved.id not in {
        k.id for k in erin.knowledge.list(scopes=["agent:research_agent"], limit=100)
    }
    # Nor can it write into acme's agent scope, or as acme's agent, by naming it.
    for name in ("scopes", "owner"):
        value = ["agent:acme:research_agent"] if name == "scopes" else "agent:acme:research_agent"
        with pytest.raises(errors.PermissionDenied):
            erin.knowledge.save(task="t", content="c", types=["plan"], **{name: value})

    kept = rita.knowledge.get(saved.id)
    assert (kept.content, kept.eval.harmful) == (SECRET_WORDS, 0)


def test_an_admin_names_another_orgs_agent_with_its_org(kh: dict[str, KnowHub]) -> None:
    admin, erin = kh["admin"], kh["erin"]
    for_erin = admin.knowledge.save(
        task="for globex's agent",
        content="c",
        types=["plan"],
        scopes=["agent:globex:research_agent"],
    )
    assert for_erin.scopes == ["agent:globex:research_agent"]  # another org's: qualified
    assert erin.knowledge.get(for_erin.id).scopes == ["agent:research_agent"]
    for_rita = admin.knowledge.save(
        task="for acme's agent", content="c", types=["plan"], scopes=["agent:research_agent"]
    )
    with pytest.raises(errors.NotFound):
        erin.knowledge.get(for_rita.id)


def trace_with(client: KnowHub, text: str) -> str:
    trace_id = f"trace-{uuid.uuid4().hex[:12]}"
    client.cognition.append_events(trace_id, [message(1, text)], task="plan the launch")
    return trace_id


def test_the_same_agent_id_of_another_org_has_its_own_dream(
    kh: dict[str, KnowHub], llm: DreamLLM
) -> None:
    rita, erin = kh["rita"], kh["erin"]
    ritas_trace = trace_with(rita, SECRET_WORDS)
    assert rita.cognition.get_log(ritas_trace, limit=1).trace.agent_id == "research_agent"
    done = wait_run(rita, rita.dream.run().run_id)
    assert done.status == "done" and done.agent_id == "research_agent"
    [notes] = rita.dream.documents(include_content=True)
    assert notes.path == "notes.md" and ritas_trace in notes.content

    # globex's research_agent: no documents, not acme's notes.md, and its own dream reads
    # its own traces only.
    assert list(erin.dream.documents()) == []
    with pytest.raises(errors.NotFound):
        erin.dream.document("notes.md")
    erins_trace = trace_with(erin, "globex ships on friday")
    llm.prompts = {"reflect": [], "integrate": [], "evaluate": []}
    erins = wait_run(erin, erin.dream.run().run_id)
    assert erins.status == "done" and erins.counts["traces_considered"] == 1
    prompts = "\n".join(p for kind in llm.prompts.values() for p in kind)
    assert erins_trace in prompts
    assert ritas_trace not in prompts and "bluefin" not in prompts
    [erins_notes] = erin.dream.documents(include_content=True)
    assert "bluefin" not in erins_notes.content and ritas_trace not in erins_notes.content
    assert rita.dream.document("notes.md").content == notes.content


def test_a_dream_run_cannot_take_another_orgs_trace_of_the_same_agent_id(
    kh: dict[str, KnowHub],
) -> None:
    rita, erin = kh["rita"], kh["erin"]
    ritas_trace = trace_with(rita, SECRET_WORDS)
    with pytest.raises((errors.NotFound, errors.PermissionDenied)):
        erin.dream.run(trace_ids=[ritas_trace])


# ---- Resource ids ---------------------------------------------------------------------------


def test_an_id_another_org_uses_tells_nothing_and_cannot_be_squatted(
    kh: dict[str, KnowHub],
) -> None:
    alice, bob = kh["alice"], kh["bob"]
    # bob (globex) takes the name first: acme can still use it, for its own resource.
    squatted = bob.resources.save("tools/curl", "globex's curl", "curl -s")
    mine = alice.resources.save("tools/curl", "acme's curl", "curl -fsSL", secure_body="acme-token")
    assert (squatted.id, mine.id) == ("tools/curl", "tools/curl")
    assert (squatted.version, mine.version) == (1, 1)

    # Saving an id acme uses answers as for any new id: no ALREADY_EXISTS, no oracle.
    again = bob.resources.save("tools/curl", "globex's curl, v2", "curl -s -S")
    assert again.version == 2
    fresh = bob.resources.save("tools/never-used-by-acme", "t", "b")
    assert fresh.version == 1
    assert alice.resources.get("tools/curl").title == "acme's curl"
    assert bob.resources.get("tools/curl").title == "globex's curl, v2"
    with pytest.raises(errors.NotFound) as hidden:
        bob.resources.get("acme:tools/curl")
    assert "acme-token" not in hidden.value.message
    # Naming acme's namespace to write there is refused alike, whether the id exists.
    for resource_id in ("acme:tools/curl", "acme:tools/nothing-here"):
        with pytest.raises(errors.PermissionDenied) as refused:
            bob.resources.save(resource_id, "mine now", "b")
        assert refused.value.message == (
            f"id: {resource_id!r} names a resource of another organisation; save under an "
            "id of your own organisation"
        )
    # Another org's id in a batch read is missing, exactly like one that does not exist.
    results = bob.resources.get_many(["acme:tools/curl", "acme:tools/nothing-here"])
    assert [r.error for r in results] == [
        {"code": "NOT_FOUND", "message": "resource 'acme:tools/curl' not found"},
        {"code": "NOT_FOUND", "message": "resource 'acme:tools/nothing-here' not found"},
    ]


def test_knowledge_refers_to_its_own_orgs_resources(kh: dict[str, KnowHub]) -> None:
    alice, bob = kh["alice"], kh["bob"]
    alice.resources.save("code/deploy", "acme's deploy script", "make deploy")
    bob.resources.save("code/deploy", "globex's deploy script", "./deploy.sh")
    record = alice.knowledge.save(
        task="deploying the site",
        content="run the script",
        types=["tool"],
        scopes=["public"],
        resource_ids=["code/deploy"],
    )
    assert record.resource_ids == ["code/deploy"]
    [hit] = [h for h in alice.knowledge.search("deploying the site") if h.knowledge.id == record.id]
    assert hit.unavailable_resources == []
    # bob reads acme's reference as acme's, and cannot use it: never his own code/deploy.
    [bobs] = [h for h in bob.knowledge.search("deploying the site") if h.knowledge.id == record.id]
    assert bobs.knowledge.resource_ids == ["acme:code/deploy"]
    assert [(u.resource_id, u.reason) for u in bobs.unavailable_resources] == [
        ("acme:code/deploy", "missing")
    ]


def test_listing_under_a_prefix_covers_the_callers_org(kh: dict[str, KnowHub]) -> None:
    alice, bob = kh["alice"], kh["bob"]
    alice.resources.save("notes/acme-public", "t", "b", scopes=["public"])
    bob.resources.save("notes/globex", "t", "b")
    assert {r.id for r in bob.resources.list(prefix="notes", limit=100)} == {"notes/globex"}
    assert {r.id for r in bob.resources.list(prefix="acme:notes", limit=100)} == {
        "acme:notes/acme-public"
    }
