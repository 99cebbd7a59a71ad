"""Identity and scopes (docs/security.md, "Tokens and identities").

Callers are the principals of tests/support/harness.py PRINCIPALS:
alice (agent alice_bot, org acme, project p1, team t1), carol (org acme, team t1, no
agent), bob (agent bob_bot, org globex) and admin (user root, org acme, role admin).
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge, errors
from knowhub_contracts.v1 import knowledge_pb2 as pb

from knowhub_server.common.base.errors import Unauthenticated
from knowhub_server.common.security.auth import TokenRegistry, load_authenticator
from tests.support.harness import Harness
from tests.support.shared import bearer, failure, raw_knowledge, running_hub, visible_records

WORD = "zephyrine"  # in every record of this module, so one search can reach them all

# What each principal sees: its user, agent, project, team, org scopes and public.
VISIBLE = {
    "alice": {"user:alice", "agent:alice_bot", "project:p1", "team:t1", "org:acme", "public"},
    "carol": {
        "user:carol",
        "agent:carol_bot",
        "agent:carols_helper",
        "team:t1",
        "org:acme",
        "public",
    },
    # Agent ids are per organisation: bob's agent is globex's bob_bot, which an admin of
    # acme names qualified (agent:bob_bot would be acme's).
    "bob": {"user:bob", "agent:globex:bob_bot", "org:globex", "public"},
    "admin": {"user:root", "org:acme", "public"},
}
OTHER_SCOPES = [
    "user:bob",
    "user:carol",
    "agent:bob_bot",
    "agent:research_agent",
    "project:p2",
    "team:t2",
    "org:globex",
    "org:initech",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with running_hub(tmp_path_factory.mktemp("access")) as harness:
        yield harness


@pytest.fixture(scope="module")
def clients(server: Harness) -> dict[str, KnowHub]:
    return {name: server.client(name) for name in VISIBLE}


def note(task: str) -> dict[str, Any]:
    return {"task": f"{WORD} {task}", "content": f"{WORD} notes on {task}", "types": ["strategy"]}


@pytest.fixture(scope="module")
def by_scope(clients: dict[str, KnowHub]) -> dict[str, str]:
    """One record per scope, saved by the admin (who may write anywhere): scope -> id."""
    scopes = sorted(set().union(*VISIBLE.values(), OTHER_SCOPES))
    saved = clients["admin"].knowledge.save_many(
        [{**note(f"in {s}"), "scopes": [s]} for s in scopes]
    )
    return {s: k.id for s, k in zip(scopes, saved, strict=True)}


@pytest.fixture(scope="module")
def private(clients: dict[str, KnowHub]) -> dict[str, Knowledge]:
    """A record of alice's (in org:acme) and one of bob's (in org:globex), by default."""
    return {
        name: clients[name].knowledge.save(**note(f"{name}'s own")) for name in ("alice", "bob")
    }


# ---- Authentication ---------------------------------------------------------------------

CALLS: dict[str, Callable[[KnowHub], object]] = {
    "save": lambda kh: kh.knowledge.save(**note("anonymous")),
    "get": lambda kh: kh.knowledge.get("knowledge-20260101-000000000000"),
    "list": lambda kh: kh.knowledge.list(),
    "search": lambda kh: kh.knowledge.search(WORD),
    "update": lambda kh: kh.knowledge.update("knowledge-20260101-000000000000", update_score=4),
    "delete": lambda kh: kh.knowledge.delete("knowledge-20260101-000000000000"),
    "slim": lambda kh: kh.knowledge.slim(dry_run=True),
}


@pytest.mark.parametrize(
    "token", [None, "token-mallory", "alice"], ids=["none", "unknown", "a-user-name"]
)
@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_calls_without_a_known_token_are_unauthenticated(
    server: Harness,
    clients: dict[str, KnowHub],
    token: str | None,
    call: Callable[[KnowHub], object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without a token the SDK reads a local hub's (./.knowhub, as `make run` leaves it in
    # the checkout): point it at an empty data dir, a caller with no token at all.
    monkeypatch.setenv("KNOWHUB_DATA_DIR", str(tmp_path))
    before = visible_records(clients["alice"])
    with KnowHub(server.address, token=token) as stranger:
        code, message = failure(lambda: call(stranger))
    assert code == "UNAUTHENTICATED"
    assert ("missing bearer token" if token is None else "unknown bearer token") in message
    assert visible_records(clients["alice"]) == before


@pytest.mark.parametrize(
    "metadata",
    [
        (("authorization", "Basic dG9rZW4tYWxpY2U="),),
        (("authorization", "token-alice"),),
        (("authorization", "Bearer "),),
        (("x-token", "token-alice"),),
    ],
    ids=["basic", "no-scheme", "empty-bearer", "other-header"],
)
def test_malformed_authorization_is_unauthenticated(
    server: Harness, metadata: tuple[tuple[str, str], ...]
) -> None:
    with raw_knowledge(server) as stub:
        code, _ = failure(lambda: stub.ListKnowledge(pb.ListKnowledgeRequest(), metadata=metadata))
    assert code == "UNAUTHENTICATED"


# ---- Visible scopes -----------------------------------------------------------------------


@pytest.mark.parametrize("principal", list(VISIBLE))
def test_each_principal_sees_exactly_its_scopes(
    clients: dict[str, KnowHub], by_scope: dict[str, str], principal: str
) -> None:
    expected = {by_scope[s] for s in VISIBLE[principal]}
    client = clients[principal]

    listed = set(visible_records(client)) & set(by_scope.values())
    found = {h.knowledge.id for h in client.knowledge.search(WORD, top_k=100)}
    found &= set(by_scope.values())

    assert listed == expected
    assert found == expected
    for scope_value, knowledge_id in by_scope.items():
        if scope_value in VISIBLE[principal]:
            # A scope of the reader's own organisation reads bare.
            own = scope_value.replace("agent:globex:", "agent:")
            assert client.knowledge.get(knowledge_id).scopes == [own]
        else:
            with pytest.raises(errors.NotFound):
                client.knowledge.get(knowledge_id)


def test_a_record_is_visible_through_any_of_its_scopes(clients: dict[str, KnowHub]) -> None:
    shared = clients["admin"].knowledge.save(**note("shared"), scopes=["org:globex", "project:p1"])
    assert clients["alice"].knowledge.get(shared.id).id == shared.id
    assert clients["bob"].knowledge.get(shared.id).id == shared.id
    with pytest.raises(errors.NotFound):
        clients["carol"].knowledge.get(shared.id)


# ---- Isolation between alice (acme) and bob (globex) --------------------------------------


def not_found_message(call: Callable[[], object], knowledge_id: str) -> str:
    code, message = failure(call)
    assert code == "NOT_FOUND", message
    return message.replace(knowledge_id, "<id>")


INVISIBLE_CALLS: dict[str, Callable[[KnowHub, str], object]] = {
    "get": lambda kh, i: kh.knowledge.get(i),
    "versions": lambda kh, i: kh.knowledge.versions(i),
    "helpful": lambda kh, i: kh.knowledge.update(i, add_helpful_case={"task": "probe"}),
    "score": lambda kh, i: kh.knowledge.update(i, update_score=1),
    "evolve": lambda kh, i: kh.knowledge.update(i, evolve_feedback="rewrite it"),
    "delete": lambda kh, i: kh.knowledge.delete(i),
}


@pytest.mark.parametrize(("reader", "owner"), [("bob", "alice"), ("alice", "bob")])
@pytest.mark.parametrize("call", list(INVISIBLE_CALLS.values()), ids=list(INVISIBLE_CALLS))
def test_another_orgs_record_is_not_found(
    clients: dict[str, KnowHub],
    private: dict[str, Knowledge],
    reader: str,
    owner: str,
    call: Callable[[KnowHub, str], object],
) -> None:
    target = private[owner]
    missing = "knowledge-20200101-0123456789ab"
    snapshot = visible_records(clients[owner])

    hidden = not_found_message(lambda: call(clients[reader], target.id), target.id)
    absent = not_found_message(lambda: call(clients[reader], missing), missing)

    assert hidden == absent, "an invisible record reads exactly like a missing one"
    assert visible_records(clients[owner]) == snapshot


@pytest.mark.parametrize(("reader", "owner"), [("bob", "alice"), ("alice", "bob")])
def test_another_orgs_record_never_shows_in_list_search_or_batches(
    clients: dict[str, KnowHub], private: dict[str, Knowledge], reader: str, owner: str
) -> None:
    target, own = private[owner], private[reader]
    client = clients[reader]
    before = clients[owner].knowledge.get(target.id)

    listed = set(visible_records(client))
    found = {
        h.knowledge.id
        for h in client.knowledge.search(f"{WORD} {owner}'s own", top_k=100, min_score=1)
    }
    results = client.knowledge.batch_update(
        [{"knowledge_id": target.id, "is_helpful": False, "case": {"task": "probe"}}]
    )

    assert own.id in listed and own.id in found
    assert target.id not in listed and target.id not in found
    assert [r.error["code"] if r.error else "OK" for r in results] == ["NOT_FOUND"]
    after = clients[owner].knowledge.get(target.id)
    assert after.eval == before.eval


def test_list_scopes_filter_is_intersected_with_what_the_caller_sees(
    clients: dict[str, KnowHub], by_scope: dict[str, str]
) -> None:
    alice = clients["alice"]
    assert list(alice.knowledge.list(scopes=["org:globex"])) == []
    assert list(alice.knowledge.list(scopes=["user:bob", "agent:bob_bot"])) == []
    mixed = {k.id for k in alice.knowledge.list(limit=100, scopes=["org:globex", "team:t1"])}
    assert by_scope["team:t1"] in mixed
    assert by_scope["org:globex"] not in mixed


# ---- Writing into scopes ----------------------------------------------------------------


@pytest.mark.parametrize(
    "scopes",
    [
        ["org:globex"],
        ["org:acme", "user:bob"],
        ["project:p2"],
        ["team:t2"],
        ["agent:bob_bot"],
        ["user:carol"],
        ["public", "agent:research_agent"],
    ],
)
def test_alice_cannot_write_into_a_scope_she_cannot_see(
    clients: dict[str, KnowHub], scopes: list[str]
) -> None:
    bad_index = next(i for i, s in enumerate(scopes) if s not in VISIBLE["alice"])
    views = {name: visible_records(clients[name]) for name in ("alice", "bob", "admin")}

    code, message = failure(
        lambda: clients["alice"].knowledge.save(**note("sneaky"), scopes=scopes)
    )

    assert code == "PERMISSION_DENIED"
    assert message.startswith(f"scopes[{bad_index}]:"), message
    assert {name: visible_records(clients[name]) for name in views} == views


def test_a_batch_with_one_forbidden_scope_writes_nothing(clients: dict[str, KnowHub]) -> None:
    views = {name: visible_records(clients[name]) for name in ("alice", "bob")}
    code, message = failure(
        lambda: clients["alice"].knowledge.save_many(
            [note("one"), note("two"), {**note("three"), "scopes": ["org:globex"]}]
        )
    )
    assert code == "PERMISSION_DENIED"
    assert message.startswith("requests[2].scopes[0]:"), message
    assert {name: visible_records(clients[name]) for name in views} == views


@pytest.mark.parametrize("scope_value", sorted(VISIBLE["alice"]))
def test_alice_can_write_into_each_scope_she_sees(
    clients: dict[str, KnowHub], scope_value: str
) -> None:
    saved = clients["alice"].knowledge.save(**note(f"mine in {scope_value}"), scopes=[scope_value])
    assert clients["alice"].knowledge.get(saved.id).scopes == [scope_value]


# ---- Defaults: scopes and owner -----------------------------------------------------------


@pytest.mark.parametrize(
    ("principal", "agent_id", "scopes", "owner", "source_agent"),
    [
        ("alice", "alice_bot", ["org:acme"], "agent:alice_bot", "alice_bot"),
        ("alice", "", ["org:acme"], "agent:alice_bot", "alice_bot"),
        ("carol", "", ["org:acme"], "user:carol", ""),
        ("bob", "", ["org:globex"], "agent:bob_bot", "bob_bot"),
        ("admin", "x", ["org:acme"], "agent:x", "x"),  # an admin may act for any agent
        ("admin", "", ["org:acme"], "user:root", ""),
    ],
)
def test_default_scopes_and_owner(
    clients: dict[str, KnowHub],
    principal: str,
    agent_id: str,
    scopes: list[str],
    owner: str,
    source_agent: str,
) -> None:
    saved = clients[principal].knowledge.save(**note("defaults"), agent_id=agent_id)
    stored = clients[principal].knowledge.get(saved.id)
    assert (stored.scopes, stored.owner, stored.source.agent_id) == (scopes, owner, source_agent)
    assert (stored.eval.helpful, stored.eval.harmful, stored.eval.confidence) == (1, 0, 0.5)


@pytest.mark.parametrize(
    ("principal", "agent_id"),
    [("alice", "research_agent"), ("alice", "bob_bot"), ("carol", "x"), ("bob", "alice_bot")],
)
def test_naming_an_agent_the_token_does_not_list_is_refused(
    clients: dict[str, KnowHub], principal: str, agent_id: str
) -> None:
    views = {name: visible_records(clients[name]) for name in ("alice", "bob", "admin")}
    code, message = failure(
        lambda: clients[principal].knowledge.save(**note("borrowed"), agent_id=agent_id)
    )
    assert code == "PERMISSION_DENIED"
    assert message.startswith("source.agent_id:"), message
    assert {name: visible_records(clients[name]) for name in views} == views


def test_without_an_org_the_default_scope_is_the_user_scope(tmp_path: Path) -> None:
    dave = {"token": "token-dave", "user_id": "dave", "team_ids": ["t9"]}
    with running_hub(tmp_path, tokens=write(tmp_path, {"tokens": [dave]})) as harness:
        client = harness.client("dave")
        saved = client.knowledge.save(**note("no org"), agent_id="")
        assert (saved.scopes, saved.owner) == (["user:dave"], "user:dave")
        code, _ = failure(lambda: client.knowledge.save(**note("org"), scopes=["org:acme"]))
        assert code == "PERMISSION_DENIED"
        assert set(visible_records(client)) == {saved.id}


@pytest.mark.parametrize(
    ("principal", "agent_id", "owner"),
    [
        ("alice", "", "user:alice"),
        ("alice", "alice_bot", "agent:alice_bot"),
        ("alice", "", "agent:alice_bot"),
        ("carol", "", "user:carol"),
        ("admin", "", "user:bob"),
        ("admin", "", "agent:anyone"),
    ],
)
def test_an_explicit_owner_that_is_the_caller_or_by_an_admin(
    clients: dict[str, KnowHub], principal: str, agent_id: str, owner: str
) -> None:
    saved = clients[principal].knowledge.save(**note("owned"), owner=owner, agent_id=agent_id)
    assert clients[principal].knowledge.get(saved.id).owner == owner


@pytest.mark.parametrize(
    ("principal", "agent_id", "owner"),
    [
        ("alice", "", "agent:research_agent"),
        ("alice", "", "user:carol"),
        ("bob", "", "agent:alice_bot"),
        ("carol", "", "agent:x"),
        ("carol", "", "user:alice"),
        ("bob", "", "user:root"),
    ],
)
def test_an_explicit_owner_of_someone_else_is_denied(
    clients: dict[str, KnowHub], principal: str, agent_id: str, owner: str
) -> None:
    before = visible_records(clients[principal])
    code, message = failure(
        lambda: clients[principal].knowledge.save(
            **note("impostor"), owner=owner, agent_id=agent_id
        )
    )
    assert code == "PERMISSION_DENIED"
    assert message.startswith("owner:"), message
    assert visible_records(clients[principal]) == before


# ---- Owner rights: delete and evolve --------------------------------------------------------


@pytest.fixture
def alices_org_record(clients: dict[str, KnowHub]) -> Knowledge:
    return clients["alice"].knowledge.save(**note("alice's org record"))


def test_carol_may_give_feedback_but_not_delete_or_evolve(
    clients: dict[str, KnowHub], alices_org_record: Knowledge
) -> None:
    carol, record_id = clients["carol"], alices_org_record.id

    rated = carol.knowledge.update(record_id, add_helpful_case={"task": "it helped"})
    assert (rated.eval.helpful, rated.eval.score) == (2, 3)
    with pytest.raises(errors.PermissionDenied, match="update_score"):
        carol.knowledge.update(record_id, update_score=5)
    results = carol.knowledge.batch_update([{"knowledge_id": record_id, "is_helpful": False}])
    assert results[0].ok and results[0].knowledge is not None
    assert results[0].knowledge.eval.harmful == 1

    before = clients["alice"].knowledge.get(record_id)
    for call in (
        lambda: carol.knowledge.delete(record_id),
        lambda: carol.knowledge.update(record_id, evolve_feedback="make it better"),
    ):
        code, message = failure(call)
        assert code == "PERMISSION_DENIED"
        assert "agent:alice_bot" in message, message
    assert clients["alice"].knowledge.get(record_id) == before


def test_the_owner_passes_the_evolve_check_and_reaches_the_llm_check(
    clients: dict[str, KnowHub], alices_org_record: Knowledge
) -> None:
    code, message = failure(
        lambda: clients["alice"].knowledge.update(
            alices_org_record.id, evolve_feedback="make it better"
        )
    )
    assert code == "FAILED_PRECONDITION"
    assert "KNOWHUB_LLM_BASE_URL" in message
    assert clients["alice"].knowledge.get(alices_org_record.id).content == alices_org_record.content


@pytest.mark.parametrize("deleter", ["alice", "admin"])
def test_the_owner_or_an_admin_may_delete(
    clients: dict[str, KnowHub], alices_org_record: Knowledge, deleter: str
) -> None:
    clients[deleter].knowledge.delete(alices_org_record.id)
    for name in ("alice", "carol", "admin"):
        with pytest.raises(errors.NotFound):
            clients[name].knowledge.get(alices_org_record.id)


def test_the_creator_keeps_owner_rights_over_an_agent_owned_record(
    clients: dict[str, KnowHub],
) -> None:
    alice = clients["alice"]
    saved = alice.knowledge.save(**note("alice via her agent"), agent_id="alice_bot")
    assert saved.owner == "agent:alice_bot"
    code, _ = failure(lambda: clients["carol"].knowledge.delete(saved.id))
    assert code == "PERMISSION_DENIED"
    alice.knowledge.delete(saved.id)
    with pytest.raises(errors.NotFound):
        alice.knowledge.get(saved.id)


def test_an_admin_saving_for_alice_leaves_alice_owner_rights(clients: dict[str, KnowHub]) -> None:
    saved = clients["admin"].knowledge.save(
        **note("for alice"), owner="user:alice", scopes=["user:alice"]
    )
    with pytest.raises(errors.NotFound):
        clients["admin"].knowledge.get(saved.id)  # the admin cannot see user:alice
    clients["alice"].knowledge.delete(saved.id)
    assert saved.id not in visible_records(clients["alice"])


# ---- Tokens file ------------------------------------------------------------------------------


def write(tmp_path: Path, content: str | dict[str, Any]) -> Path:
    path = tmp_path / "tokens.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "cannot read tokens file"),
        ("[]", "non-empty list under 'tokens'"),
        ({"tokens": []}, "non-empty list under 'tokens'"),
        ({"tokens": {"token": "t", "user_id": "u"}}, "non-empty list under 'tokens'"),
        ({"tokens": ["token-alice"]}, "tokens[0] must be an object"),
        ({"tokens": [{"token": "t"}]}, "tokens[0].user_id is required"),
        (
            {"tokens": [{"token": "t", "user_id": "u"}, {"token": "s"}]},
            "tokens[1].user_id is required",
        ),
        ({"tokens": [{"user_id": "u"}]}, "tokens[0] needs 'token' or 'token_sha256'"),
        (
            {"tokens": [{"token_sha256": "abc", "user_id": "u"}]},
            "tokens[0].token_sha256 must be 64 hex digits",
        ),
        (
            {"tokens": [{"token_sha256": "g" * 64, "user_id": "u"}]},
            "tokens[0].token_sha256 must be 64 hex digits",
        ),
        (
            {"tokens": [{"token": "t", "user_id": "u", "roles": "admin"}]},
            "tokens[0].roles must be a list of strings",
        ),
        (
            {"tokens": [{"token": "t", "user_id": "u", "project_ids": [1]}]},
            "tokens[0].project_ids must be a list of strings",
        ),
        (
            {"tokens": [{"token": "t", "user_id": "u", "team_ids": None}]},
            "tokens[0].team_ids must be a list of strings",
        ),
        ({"tokens": [{"token": "t", "user_id": "a b"}]}, "tokens[0].user_id"),
        ({"tokens": [{"token": "t", "user_id": "u", "org_id": "ac:me"}]}, "tokens[0].org_id"),
    ],
)
def test_a_malformed_tokens_file_is_refused_clearly(
    tmp_path: Path, content: str | dict[str, Any], expected: str
) -> None:
    path = write(tmp_path, content)
    with pytest.raises(ValueError) as info:
        TokenRegistry.from_file(path)
    assert expected in str(info.value)
    assert str(path) in str(info.value)


def test_a_missing_tokens_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read tokens file"):
        TokenRegistry.from_file(tmp_path / "absent.json")


@pytest.mark.parametrize("digest_case", [str.lower, str.upper])
def test_a_token_sha256_entry_authenticates_the_plain_token(
    tmp_path: Path, digest_case: Callable[[str], str]
) -> None:
    digest = hashlib.sha256(b"s3cret-value").hexdigest()
    tokens = write(
        tmp_path,
        {"tokens": [{"token_sha256": digest_case(digest), "user_id": "erin", "org_id": "acme"}]},
    )
    registry = TokenRegistry.from_file(tokens)
    assert registry.principal_for("s3cret-value") is not None
    assert registry.principal_for(digest) is None

    with running_hub(tmp_path / "hub", tokens=tokens) as harness:
        with KnowHub(harness.address, token="s3cret-value") as erin:
            saved = erin.knowledge.save(**note("hashed"), agent_id="")
            assert (saved.owner, saved.scopes) == ("user:erin", ["org:acme"])
        for wrong in (digest, "s3cret-valuE"):
            with KnowHub(harness.address, token=wrong) as stranger:
                code, _ = failure(lambda s=stranger: s.knowledge.list())
                assert code == "UNAUTHENTICATED"


# ---- Without a tokens file --------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com"])
def test_no_tokens_file_refuses_a_non_loopback_address(host: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="KNOWHUB_TOKENS_FILE"):
        load_authenticator(None, host, tmp_path)
    assert not (tmp_path / "local_token").exists()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_no_tokens_file_on_loopback_accepts_the_local_token_alone(
    host: str, tmp_path: Path
) -> None:
    authenticator = load_authenticator(None, host, tmp_path)
    token = (tmp_path / "local_token").read_text().strip()
    assert authenticator.local_mode
    assert stat.S_IMODE((tmp_path / "local_token").stat().st_mode) == 0o600
    principal = authenticator.authenticate((("authorization", f"Bearer {token}"),))
    assert (principal.user_id, principal.visible_scopes, principal.is_admin) == (
        "local",
        {"user:local", "org:local", "public"},
        True,
    )
    for metadata in ((), bearer("mallory"), (("authorization", f"Bearer {token}x"),)):
        with pytest.raises(Unauthenticated, match="local_token"):
            authenticator.authenticate(metadata)
    again = load_authenticator(None, host, tmp_path)  # the same token on every start
    assert again.authenticate((("authorization", f"Bearer {token}"),)).user_id == "local"


def test_a_local_hub_serves_the_local_token_and_no_one_else(tmp_path: Path) -> None:
    with running_hub(tmp_path, tokens=False) as harness:
        local = harness.client()
        saved = local.knowledge.save(**note("local"))
        assert (saved.owner, saved.scopes) == ("user:local", ["org:local"])
        public = local.knowledge.save(
            **note("public"), scopes=["public"], owner="user:someone"
        )  # the admin role allows it
        local.knowledge.delete(public.id)
        assert set(visible_records(local)) == {saved.id}
        for token in ("", "whatever"):
            with KnowHub(harness.address, token=token) as stranger:
                code, message = failure(lambda s=stranger: s.knowledge.get(saved.id))
                assert code == "UNAUTHENTICATED"
                assert "local_token" in message


TOOL = {"types": ["tool"]}


@pytest.mark.parametrize(
    "min_score", [1, 3], ids=["sees every record", "a low-rated record filtered out"]
)
def test_another_orgs_words_never_move_a_callers_relevance(tmp_path: Path, min_score: int) -> None:
    """BM25's statistics come from the records a search covers, also while they are every
    record of the hub (its statistics are then the hub's): another organisation's writes
    full of the query's words leave the caller's relevances as they were."""
    with running_hub(tmp_path) as harness, harness.client("alice") as alice:
        alice.knowledge.save_many(
            [
                {
                    "task": "Keep zebrafish",
                    "content": "zebrafish school in groups",
                    "score": 4,
                    **TOOL,
                },
                {"task": "Tank heater", "content": "set the tank heater to 26 degrees", **TOOL},
                {
                    "task": "Old advice",
                    "content": "zebrafish need no tank heater",
                    "score": 1,
                    **TOOL,
                },
            ],
        )

        def relevances() -> dict[str, float]:
            hits = alice.knowledge.search("zebrafish tank heater", top_k=10, min_score=min_score)
            return {h.knowledge.task: h.relevance for h in hits}

        before = relevances()
        with harness.client("bob") as bob:
            bob.knowledge.save_many(
                [
                    {"task": f"Zebrafish note {i}", "content": f"zebrafish zebrafish {i}", **TOOL}
                    for i in range(30)
                ],
            )
        low_rated = {"Old advice"} if min_score == 1 else set()
        assert set(before) == {"Keep zebrafish", "Tank heater"} | low_rated
        assert relevances() == pytest.approx(before, rel=1e-6)
