"""The audit trail (Redis stream `<prefix>audit`): what it records, how it pages, and that
without it no secret is returned and no change is made."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from knowhub import KnowHub

from knowhub_server.common.storage.redis_store import EmbeddedRedis, connect
from tests.resource.conftest import Principals, StartResourceHub
from tests.resource.support import CREDENTIAL, everything, secret_of
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

SECRET = "hunter2-audit-secret"


def actions(client: KnowHub, resource_id: str) -> list[tuple[str, int, str, str]]:
    """(action, version, outcome, actor) of a resource's events, oldest first."""
    events = client.resources.audit_events(limit=1000, resource_id=resource_id)
    return [(e.action, e.version, e.outcome, e.actor) for e in reversed(events)]


def test_every_change_and_secure_read_is_recorded(clients: Principals) -> None:
    alice, carol, admin = clients["alice"], clients["carol"], clients["admin"]
    alice.resources.save("credentials/trail", **CREDENTIAL, secure_body=SECRET)
    alice.resources.get("credentials/trail")  # a public read is not audited
    secret_of(alice, "credentials/trail")
    failure(lambda: secret_of(carol, "credentials/trail"))
    failure(lambda: carol.resources.save("credentials/trail", "t", "b"))
    alice.resources.save("credentials/trail", "v2", "b", secure_body=SECRET)
    alice.resources.delete("credentials/trail")
    alice.resources.undelete("credentials/trail")
    alice.resources.destroy("credentials/trail")

    a, c = "user:alice", "user:carol"
    assert actions(admin, "credentials/trail") == [
        ("save", 1, "attempt", a),
        ("save", 1, "ok", a),
        ("read_secure", 1, "ok", a),
        ("read_secure", 1, "denied", c),
        ("save", 2, "denied", c),
        ("save", 2, "attempt", a),
        ("save", 2, "ok", a),
        ("delete", 2, "attempt", a),
        ("delete", 2, "ok", a),
        ("undelete", 2, "attempt", a),
        ("undelete", 2, "ok", a),
        ("destroy", 2, "attempt", a),
        ("destroy", 2, "ok", a),
    ]
    events = admin.resources.audit_events(limit=1000, resource_id="credentials/trail")
    assert all(e.agent_id == "alice_bot" for e in events if e.actor == a)
    assert all(e.time is not None for e in events)
    assert not any(SECRET in repr(e.to_dict()) for e in events)


def test_a_rotation_is_recorded(clients: Principals) -> None:
    admin = clients["admin"]
    rotation = admin.resources.rotate_master_key()
    latest = admin.resources.audit_events(limit=2)
    assert [(e.action, e.outcome, e.actor) for e in latest] == [
        ("rotate_key", "ok", "user:root"),
        ("rotate_key", "attempt", "user:root"),
    ]
    assert f"active={rotation.active_key_id}" in latest[0].detail


def test_events_page_newest_first(clients: Principals) -> None:
    alice, admin = clients["alice"], clients["admin"]
    for n in range(3):
        alice.resources.save("code/paged", f"v{n}", "b")
    everything_at_once = admin.resources.audit_events(limit=1000)
    paged, token, pages = [], "", 0
    while True:
        page = admin.resources.audit_events(limit=4, page_token=token)
        paged += [e.id for e in page]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert paged == [e.id for e in everything_at_once]
    assert pages == -(-len(paged) // 4)
    ids = [tuple(map(int, i.split("-"))) for i in paged]
    assert ids == sorted(ids, reverse=True)

    filtered = admin.resources.audit_events(limit=2, resource_id="code/paged")
    assert [(e.resource_id, e.version, e.outcome) for e in filtered] == [
        ("code/paged", 3, "ok"),
        ("code/paged", 3, "attempt"),
    ]
    rest = admin.resources.audit_events(
        limit=100, resource_id="code/paged", page_token=filtered.next_page_token
    )
    assert [(e.version, e.outcome) for e in rest] == [
        (2, "ok"),
        (2, "attempt"),
        (1, "ok"),
        (1, "attempt"),
    ]
    assert rest.next_page_token == ""


def test_the_stream_is_under_the_redis_prefix(
    server: Harness, clients: Principals, module_redis: dict[str, str]
) -> None:
    # Its own audited change: tests of this module may run in other workers.
    clients["alice"].resources.save("code/prefixed", "t", "b", secure_body=SECRET)
    stream = f"{module_redis['redis_prefix']}audit"
    assert connect(module_redis["redis_url"]).xlen(stream) > 0


@pytest.fixture
def own_redis(tmp_path: Path) -> EmbeddedRedis:
    server = EmbeddedRedis(tmp_path / "own-redis").start()
    yield server
    server.stop()


def test_without_the_audit_log_no_secret_leaves_and_nothing_changes(
    start_resource_hub: StartResourceHub, own_redis: EmbeddedRedis
) -> None:
    hub = start_resource_hub(redis_url=own_redis.url)
    alice = hub.client("alice")
    alice.resources.save("credentials/closed", **CREDENTIAL, secure_body=SECRET)
    before = everything(alice)
    own_redis.stop()

    code, message = failure(lambda: secret_of(alice, "credentials/closed"))
    assert code == "UNAVAILABLE" and "audit" in message and "not returned" in message
    assert SECRET not in message
    for change in (
        lambda: alice.resources.save("credentials/closed", "t", "b", secure_body="other"),
        lambda: alice.resources.save("credentials/new", "t", "b"),
        lambda: alice.resources.delete("credentials/closed"),
        lambda: alice.resources.destroy("credentials/closed"),
    ):
        code, message = failure(change)
        assert code == "UNAVAILABLE" and "audit" in message, message
    # Reading the public part needs no audit record.
    assert alice.resources.get("credentials/closed").title == CREDENTIAL["title"]
    assert everything(alice) == before

    own_redis.start()
    assert secret_of(alice, "credentials/closed") == SECRET
    outcomes = actions(hub.client("admin"), "credentials/closed")
    assert outcomes[-1] == ("read_secure", 1, "ok", "user:alice")
    assert [o for o in outcomes if o[0] != "read_secure"] == [
        ("save", 1, "attempt", "user:alice"),
        ("save", 1, "ok", "user:alice"),
    ]


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_read_refused_while_redis_froze_is_not_recorded_when_it_resumes(
    start_resource_hub: StartResourceHub, own_redis: EmbeddedRedis
) -> None:
    """A frozen Redis (SIGSTOP) holds the read's audit append; the caller is refused when
    its command times out, and once Redis resumes the held append must not record the
    read as done. (The background workers ride the freeze out too.)"""
    hub = start_resource_hub(redis_url=own_redis.url)
    alice, admin = hub.client("alice"), hub.client("admin")
    alice.resources.save("credentials/frozen", **CREDENTIAL, secure_body=SECRET)
    pid = int(own_redis.pidfile.read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        code, message = failure(lambda: secret_of(alice, "credentials/frozen"))
    finally:
        os.kill(pid, signal.SIGCONT)
    assert code == "UNAVAILABLE" and SECRET not in message
    redis_client = connect(own_redis.url)
    redis_client.ping()  # Redis has run what it held
    assert actions(admin, "credentials/frozen") == [
        ("save", 1, "attempt", "user:alice"),
        ("save", 1, "ok", "user:alice"),
    ]
    assert secret_of(alice, "credentials/frozen") == SECRET
    assert actions(admin, "credentials/frozen")[-1] == ("read_secure", 1, "ok", "user:alice")
