"""Who may do what with a resource: scopes and owner as for knowledge, and secure_body only
for the owner, the user who created it, a secure_reader or an admin.

Principals (tests/resource/support.py): alice (agent alice_bot, org acme) owns the
resources; carol (org acme) sees them; reader (dave, org acme, role secure_reader) sees
them and may read secrets; bob (org globex) cannot see them; admin (org acme, admin).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from knowhub import KnowHub, errors

from tests.resource.conftest import Principals
from tests.resource.support import CREDENTIAL, secret_of
from tests.support.harness import Harness
from tests.support.shared import failure

SECRET = "user@example.com / SecurePass123"
_ids = itertools.count()


@pytest.fixture
def owned(clients: Principals) -> str:
    """A fresh credential of alice's in org:acme, with a secure_body."""
    resource_id = f"credentials/matrix-{next(_ids)}"
    clients["alice"].resources.save(resource_id, **CREDENTIAL, secure_body=SECRET)
    return resource_id


def outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except errors.KnowHubError as error:
        return error.code
    return "OK"


# who -> (public read, secure read, new version, delete). Ids are per organisation: the
# same id names bob's own resource in globex, which he creates and then deletes.
MATRIX = {
    "alice": ("OK", "OK", "OK", "OK"),
    "reader": ("OK", "OK", "PERMISSION_DENIED", "PERMISSION_DENIED"),
    "carol": ("OK", "PERMISSION_DENIED", "PERMISSION_DENIED", "PERMISSION_DENIED"),
    "bob": ("NOT_FOUND", "NOT_FOUND", "OK", "OK"),
    "admin": ("OK", "OK", "OK", "OK"),
}


@pytest.mark.parametrize("who", list(MATRIX))
def test_the_permission_matrix(clients: Principals, owned: str, who: str) -> None:
    client = clients[who]
    public, secure, save, delete = MATRIX[who]
    assert outcome(lambda: client.resources.get(owned)) == public
    assert outcome(lambda: secret_of(client, owned)) == secure
    if secure == "OK":
        assert secret_of(client, owned) == SECRET
    assert outcome(lambda: client.resources.save(owned, "mine now", "b")) == save
    assert outcome(lambda: client.resources.delete(owned)) == delete
    assert outcome(lambda: client.resources.destroy(owned)) == delete
    # What was refused, and what another organisation did under the same id, changed
    # nothing of alice's.
    if who not in ("alice", "admin"):
        assert clients["alice"].resources.get(owned).title == CREDENTIAL["title"]


def test_a_refused_secure_read_returns_nothing_secret_and_is_audited(
    clients: Principals, owned: str
) -> None:
    code, message = failure(lambda: secret_of(clients["carol"], owned))
    assert code == "PERMISSION_DENIED"
    assert "secure_reader" in message and SECRET not in message
    public = clients["carol"].resources.get(owned)
    assert public.secure_body is None and public.has_secure_body
    assert public.body == CREDENTIAL["body"]
    events = clients["admin"].resources.audit_events(resource_id=owned)
    assert ("read_secure", "denied", "user:carol") in {
        (e.action, e.outcome, e.actor) for e in events
    }


def test_the_creator_keeps_its_rights_when_the_owner_changes(
    clients: Principals, owned: str
) -> None:
    admin, alice, carol = clients["admin"], clients["alice"], clients["carol"]
    handed = admin.resources.save(
        owned, "handed over", "b", secure_body="new secret", owner="user:carol"
    )
    assert handed.owner == "user:carol"
    assert secret_of(carol, owned) == "new secret"  # the new owner
    assert secret_of(alice, owned) == "new secret"  # the user who created it
    assert alice.resources.save(owned, "still mine to change", "b").version == 3


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"scopes": ["org:globex"]}, "scopes[0]"),
        ({"scopes": ["org:acme", "team:t2"]}, "scopes[1]"),
        ({"owner": "user:bob"}, "owner"),
        ({"owner": "agent:research_agent"}, "owner"),
    ],
)
def test_a_caller_writes_only_into_its_scopes_and_as_itself(
    clients: Principals, fields: dict[str, object], field: str
) -> None:
    resource_id = f"code/scoped-{next(_ids)}"
    code, message = failure(
        lambda: clients["alice"].resources.save(resource_id, "t", "b", **fields)
    )
    assert code == "PERMISSION_DENIED" and message.startswith(f"{field}:"), message
    assert outcome(lambda: clients["admin"].resources.get(resource_id)) == "NOT_FOUND"
    saved = clients["admin"].resources.save(resource_id, "t", "b", **fields)
    assert saved.version == 1, "an admin may write any scope and owner"


def test_defaults_are_the_callers_org_and_agent(clients: Principals) -> None:
    resource_id = f"code/defaults-{next(_ids)}"
    saved = clients["alice"].resources.save(resource_id, "t", "b")
    assert (saved.scopes, saved.owner) == (["org:acme"], "agent:alice_bot")
    carols = clients["carol"].resources.save(f"code/defaults-{next(_ids)}", "t", "b")
    assert (carols.scopes, carols.owner) == (["org:acme"], "user:carol")


def test_lists_searches_and_batch_reads_show_only_visible_resources(clients: Principals) -> None:
    alice, bob = clients["alice"], clients["bob"]
    alice.resources.save("shared/acme-only", "quokka notes", "acme")
    alice.resources.save("shared/for-all", "quokka public notes", "all", scopes=["public"])
    bob.resources.save("shared/globex-only", "quokka globex", "globex")

    def listed(client: KnowHub, prefix: str = "shared") -> set[str]:
        return {r.id for r in client.resources.list(prefix=prefix, limit=100)}

    # Ids are per organisation: a prefix lists the caller's own organisation's, unless it
    # names another's; another organisation's resources read qualified by it.
    assert listed(alice) == {"shared/acme-only", "shared/for-all"}
    assert listed(bob) == {"shared/globex-only"}
    assert listed(bob, "acme:shared") == {"acme:shared/for-all"}
    assert {r.id for r in bob.resources.list(limit=100)} >= {
        "acme:shared/for-all",
        "shared/globex-only",
    }
    assert {h.resource.id for h in bob.resources.search("quokka")} == {
        "acme:shared/for-all",
        "shared/globex-only",
    }
    results = bob.resources.get_many(
        ["acme:shared/acme-only", "acme:shared/for-all", "shared/for-all"]
    )
    assert [r.ok for r in results] == [False, True, False]
    assert results[0].error == {
        "code": "NOT_FOUND",
        "message": "resource 'acme:shared/acme-only' not found",
    }
    assert results[1].resource.id == "acme:shared/for-all"


@pytest.mark.parametrize("who", ["alice", "reader", "carol"])
def test_audit_and_rotation_are_for_admins(clients: Principals, who: str) -> None:
    client = clients[who]
    for call in (client.resources.audit_events, client.resources.rotate_master_key):
        code, message = failure(call)
        assert code == "PERMISSION_DENIED" and "admin" in message


CALLS: dict[str, Callable[[KnowHub], object]] = {
    "save": lambda kh: kh.resources.save("code/anon", "t", "b"),
    "get": lambda kh: kh.resources.get("code/anon"),
    "get_many": lambda kh: kh.resources.get_many(["code/anon"]),
    "list": lambda kh: kh.resources.list(),
    "search": lambda kh: kh.resources.search("anything"),
    "delete": lambda kh: kh.resources.delete("code/anon"),
    "undelete": lambda kh: kh.resources.undelete("code/anon"),
    "destroy": lambda kh: kh.resources.destroy("code/anon"),
    "versions": lambda kh: kh.resources.versions("code/anon"),
    "audit": lambda kh: kh.resources.audit_events(),
    "rotate": lambda kh: kh.resources.rotate_master_key(),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_every_call_needs_a_known_token(server: Harness, name: str, token: str | None) -> None:
    with KnowHub(server.address, token=token, timeout=10) as anonymous:
        assert failure(lambda: CALLS[name](anonymous))[0] == "UNAUTHENTICATED"
