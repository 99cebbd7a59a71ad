"""Versions (Vault KV v2 semantics): each save a new version, check-and-set, retention of
the last N, soft delete and undelete, destroy; and racing saves."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from knowhub import KnowHub, errors

from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.vectors import Eq, Where
from knowhub_server.resource.store import VERSIONS_SCHEMA
from tests.resource.conftest import Principals, StartResourceHub
from tests.resource.support import CREDENTIAL, everything, secret_of
from tests.support.shared import failure


@pytest.fixture(scope="module")
def alice(clients: Principals) -> KnowHub:
    return clients["alice"]


def version_records(data_dir: Path, resource_id: str, org: str = "acme") -> int:
    """Version records of one of `org`'s resources left in the store (the server must be
    stopped); the store keeps its id qualified by the org."""
    store = EdgeStore(data_dir / "qdrant")
    try:
        return store.open(VERSIONS_SCHEMA).count(
            Where(must=(Eq("resource_id", f"{org}:{resource_id}"),))
        )
    finally:
        store.close()


def test_each_save_makes_a_new_version_and_old_ones_stay_readable(alice: KnowHub) -> None:
    first = alice.resources.save("credentials/site_v", **CREDENTIAL, secure_body="pw-one")
    second = alice.resources.save(
        "credentials/site_v", "renamed", "new body", secure_body="pw-two", content_type="credential"
    )
    assert (first.version, second.version) == (1, 2)
    assert second.created_at == first.created_at < second.updated_at

    latest = alice.resources.get("credentials/site_v")
    assert (latest.version, latest.title, latest.body) == (2, "renamed", "new body")
    assert latest.secure_body is None and latest.has_secure_body
    old = alice.resources.get("credentials/site_v", version=1)
    assert (old.version, old.title, old.metadata) == (
        1,
        CREDENTIAL["title"],
        CREDENTIAL["metadata"],
    )
    assert old.updated_at == first.updated_at
    assert secret_of(alice, "credentials/site_v", 1) == "pw-one"
    assert secret_of(alice, "credentials/site_v") == "pw-two"
    assert [
        (v.version, v.saved_by, v.has_secure_body)
        for v in alice.resources.versions("credentials/site_v")
    ] == [(2, "user:alice", True), (1, "user:alice", True)]


def test_a_save_replaces_the_whole_content(alice: KnowHub) -> None:
    alice.resources.save(
        "cookies/full",
        "c",
        "b",
        secure_body="sid=1",
        content_type="cookie",
        metadata={"k": "v"},
        expires_at="2099-01-01T00:00:00Z",
    )
    after = alice.resources.save("cookies/full", "c2", "b2")
    assert (after.content_type, after.metadata, after.expires_at) == ("text", {}, None)
    assert after.has_secure_body is False
    assert secret_of(alice, "cookies/full") == ""
    # Scopes and owner stay those of the resource unless the save names others.
    assert (after.scopes, after.owner) == (["org:acme"], "agent:alice_bot")


def test_a_stale_expected_version_fails_and_writes_nothing(alice: KnowHub) -> None:
    alice.resources.save("code/cas", "v1", "one", expected_version=0)
    alice.resources.save("code/cas", "v2", "two", expected_version=1)
    before = everything(alice)

    code, message = failure(lambda: alice.resources.save("code/cas", "v3", "x", expected_version=1))
    assert code == "FAILED_PRECONDITION"
    assert "version 2" in message
    code, _ = failure(lambda: alice.resources.save("code/cas", "again", "x", expected_version=0))
    assert code == "FAILED_PRECONDITION"
    code, message = failure(
        lambda: alice.resources.save("code/cas-missing", "t", "x", expected_version=3)
    )
    assert code == "FAILED_PRECONDITION" and "does not exist" in message
    assert everything(alice) == before

    assert alice.resources.save("code/cas", "v3", "three", expected_version=2).version == 3


def test_only_the_last_versions_are_kept(start_resource_hub: StartResourceHub) -> None:
    hub = start_resource_hub(env={"KNOWHUB_RESOURCE_VERSIONS_KEEP": "3"})
    alice = hub.client("alice")
    for n in range(1, 6):
        alice.resources.save("code/kept", f"v{n}", f"body {n}", secure_body=f"s{n}")

    assert [v.version for v in alice.resources.versions("code/kept")] == [5, 4, 3]
    assert secret_of(alice, "code/kept", 3) == "s3"
    for gone in (1, 2):
        code, message = failure(lambda v=gone: alice.resources.get("code/kept", version=v))
        assert code == "NOT_FOUND" and "not kept" in message, message
    hub.stop()
    assert version_records(hub.data_dir, "code/kept") == 3, "older versions are erased"


def test_delete_hides_the_latest_version_and_undelete_restores_it(
    alice: KnowHub, clients: Principals
) -> None:
    alice.resources.save(
        "cookies/soft", "zeppelin cookie", "session", secure_body="sid=9", content_type="cookie"
    )
    deleted = alice.resources.delete("cookies/soft")
    assert deleted.deleted and deleted.deleted_at is not None

    got = alice.resources.get("cookies/soft")
    assert got.deleted and got.title == "zeppelin cookie"
    code, message = failure(lambda: secret_of(alice, "cookies/soft"))
    assert code == "FAILED_PRECONDITION" and "Undelete" in message
    assert "cookies/soft" not in {r.id for r in alice.resources.list(prefix="cookies")}
    assert "cookies/soft" in {
        r.id for r in alice.resources.list(prefix="cookies", show_deleted=True)
    }
    assert alice.resources.search("zeppelin") == []
    assert alice.resources.delete("cookies/soft").deleted, "deleting again changes nothing"
    code, _ = failure(lambda: clients["carol"].resources.undelete("cookies/soft"))
    assert code == "PERMISSION_DENIED"

    restored = alice.resources.undelete("cookies/soft")
    assert not restored.deleted and restored.version == 1
    assert secret_of(alice, "cookies/soft") == "sid=9"
    assert [h.resource.id for h in alice.resources.search("zeppelin")] == ["cookies/soft"]


def test_a_save_after_delete_is_a_live_version_and_the_deleted_one_stays_deleted(
    alice: KnowHub,
) -> None:
    alice.resources.save("code/phoenix", "p1", "one", secure_body="s1")
    alice.resources.delete("code/phoenix")
    again = alice.resources.save("code/phoenix", "p2", "two", secure_body="s2")
    assert (again.version, again.deleted) == (2, False)
    assert [(v.version, v.deleted) for v in alice.resources.versions("code/phoenix")] == [
        (2, False),
        (1, True),
    ]
    assert alice.resources.get("code/phoenix", version=1).deleted
    code, _ = failure(lambda: secret_of(alice, "code/phoenix", 1))
    assert code == "FAILED_PRECONDITION"


def test_destroy_erases_every_version_and_frees_the_id(
    start_resource_hub: StartResourceHub,
) -> None:
    hub = start_resource_hub()
    alice = hub.client("alice")
    for n in range(3):
        alice.resources.save("credentials/burn", f"v{n}", "b", secure_body=f"s{n}")
    code, _ = failure(lambda: hub.client("carol").resources.destroy("credentials/burn"))
    assert code == "PERMISSION_DENIED"

    assert alice.resources.destroy("credentials/burn") == 3
    for read in (
        lambda: alice.resources.get("credentials/burn"),
        lambda: alice.resources.versions("credentials/burn"),
        lambda: alice.resources.destroy("credentials/burn"),
    ):
        assert failure(read)[0] == "NOT_FOUND"
    reborn = alice.resources.save("credentials/burn", "new", "b")
    assert reborn.version == 1 and not reborn.has_secure_body
    hub.stop()
    assert version_records(hub.data_dir, "credentials/burn") == 1


def test_racing_saves_each_get_their_own_version(alice: KnowHub) -> None:
    def save(n: int) -> int:
        return alice.resources.save(
            "code/race", f"title {n}", f"body {n}", secure_body=f"secret {n}"
        ).version

    with ThreadPoolExecutor(max_workers=8) as pool:
        versions = list(pool.map(save, range(8)))

    assert sorted(versions) == list(range(1, 9))
    # Every version holds exactly what the save that got it wrote.
    by_version = dict(zip(versions, range(8), strict=True))
    for version, n in by_version.items():
        got = alice.resources.get("code/race", include_secure=True, version=version)
        assert (got.title, got.body, got.secure_body) == (f"title {n}", f"body {n}", f"secret {n}")


def test_racing_checked_saves_let_exactly_one_win(alice: KnowHub) -> None:
    alice.resources.save("code/race-cas", "base", "b")

    def save(n: int) -> str:
        try:
            alice.resources.save("code/race-cas", f"t{n}", "b", expected_version=1)
        except errors.FailedPrecondition:
            return "lost"
        return "won"

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(save, range(6)))
    assert sorted(outcomes) == ["lost"] * 5 + ["won"]
    assert [v.version for v in alice.resources.versions("code/race-cas")] == [2, 1]
