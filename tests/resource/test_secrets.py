"""secure_body at rest: never in plain text in the data directory or the logs, sealed per
version, bound to its resource and version, and readable through master key rotation."""

from __future__ import annotations

import base64
import json
import logging
import stat
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from knowhub import KnowHub

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.resource.crypto import env_key_id, generate_key
from knowhub_server.resource.store import ResourceStore
from tests.resource.conftest import StartResourceHub
from tests.resource.support import CREDENTIAL, secret_of, write_tokens
from tests.support.shared import failure, running_hub

SECRETS = {
    "credentials/website_a": "账号:user@example.com\n密码:SecurePass123-q7",
    "cookies/website_a": "session_id=abc123zq; auth_token=xyz789zq",
    "credentials/api": "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
}
SECOND_VERSION = "SecurePass456-second-version-q7"
PUBLIC_MARKER = "public-body-marker-ondatra"


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def test_no_secret_reaches_the_data_directory_or_the_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # No redis_url: the embedded Redis keeps its AOF under the data directory too.
    with running_hub(tmp_path, tokens=write_tokens(tmp_path)) as hub:
        alice, carol, admin = hub.client("alice"), hub.client("carol"), hub.client("admin")
        for resource_id, secret in SECRETS.items():
            alice.resources.save(
                resource_id,
                f"{resource_id} title",
                PUBLIC_MARKER,
                secure_body=secret,
                content_type="credential",
            )
            assert secret_of(alice, resource_id) == secret
            failure(lambda r=resource_id: secret_of(carol, r))  # refused, and audited
            failure(
                lambda r=resource_id, s=secret: alice.resources.save(
                    r, "t", "b", secure_body=s + "x" * 70_000
                )
            )  # too long: refused
        alice.resources.save("credentials/website_a", "v2", "b", secure_body=SECOND_VERSION)
        alice.knowledge.save(
            task="log in to website A",
            content="use the test account",
            types=["tool"],
            resource_ids=list(SECRETS),
        )
        alice.knowledge.search("website A")
        alice.resources.delete("cookies/website_a")
        alice.resources.undelete("cookies/website_a")
        assert admin.resources.rotate_master_key().rewrapped == 4
        assert secret_of(admin, "credentials/website_a", 1) == SECRETS["credentials/website_a"]
        admin.resources.audit_events(limit=1000)
        data = hub.data_dir

    scanned = files_under(data)
    names = {p.name for p in scanned}
    assert any(n.startswith("appendonly") for n in names), "the Redis AOF was scanned"
    assert "redis.log" in names and "master-keys.json" in names
    contents = b"".join(p.read_bytes() for p in scanned)
    assert PUBLIC_MARKER.encode() in contents, "the scan reads what the stores wrote"
    for secret in [*SECRETS.values(), SECOND_VERSION]:
        for form in (secret, secret.split("\n")[-1], base64.b64encode(secret.encode()).decode()):
            assert form.encode() not in contents, f"{form!r} found in the data directory"
            assert form not in caplog.text, f"{form!r} found in the logs"
    assert "rpc=GetResource" in caplog.text, "the logs were captured at DEBUG"


def test_an_envelope_moved_to_another_resource_or_version_does_not_open(
    start_resource_hub: StartResourceHub,
) -> None:
    hub = start_resource_hub()
    alice = hub.client("alice")
    alice.resources.save("credentials/a", "a", "b", secure_body="secret of a")
    alice.resources.save("credentials/b", "b", "b", secure_body="secret of b")
    alice.resources.save("credentials/b", "b2", "b", secure_body="secret of b2")
    hub.stop()

    store = EdgeStore(hub.data_dir / "qdrant")
    resources = ResourceStore(store)
    # The store keeps alice's ids qualified by her organisation.
    keys = {
        (h.id, v.version): v.key
        for h in (resources.head("acme:credentials/a"), resources.head("acme:credentials/b"))
        if h is not None
        for v in h.versions
    }
    sealed_b = resources.version(keys["acme:credentials/b", 1])
    sealed_b2 = resources.version(keys["acme:credentials/b", 2])
    assert sealed_b is not None and sealed_b2 is not None
    resources.update_version(
        keys["acme:credentials/a", 1], lambda r: replace(r, envelope=sealed_b.envelope)
    )
    resources.update_version(
        keys["acme:credentials/b", 1], lambda r: replace(r, envelope=sealed_b2.envelope)
    )
    store.close()

    hub.start()
    alice = hub.client("alice")
    for resource_id, version in (("credentials/a", 1), ("credentials/b", 1)):
        code, message = failure(lambda r=resource_id, v=version: secret_of(alice, r, v))
        assert code == "FAILED_PRECONDITION" and "integrity" in message, message
        assert "secret of" not in message
    assert secret_of(alice, "credentials/b", 2) == "secret of b2"


def test_the_key_file_is_private_and_must_not_go_missing(
    start_resource_hub: StartResourceHub,
) -> None:
    hub = start_resource_hub()
    hub.client("alice").resources.save("credentials/k", "k", "b", secure_body="kept secret")
    hub.stop()
    key_file = hub.data_dir / "keys" / "master-keys.json"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert len(json.loads(key_file.read_text())["keys"]) == 1

    hub.start()
    assert secret_of(hub.client("alice"), "credentials/k") == "kept secret"
    hub.stop()

    backup = key_file.read_bytes()
    key_file.unlink()
    with pytest.raises(ValueError, match="restore the key file from its backup"):
        hub.start()
    hub.stop()
    assert not key_file.exists(), "no new key is made while secrets need the old one"
    key_file.write_bytes(backup)
    hub.start()
    assert secret_of(hub.client("alice"), "credentials/k") == "kept secret"


def test_a_key_from_the_environment_rotates_by_restart_and_rewrap(
    start_resource_hub: StartResourceHub,
) -> None:
    old, new = generate_key(), generate_key()
    hub = start_resource_hub(env={"KNOWHUB_MASTER_KEY": old})
    hub.client("alice").resources.save("credentials/env", "e", "b", secure_body="env secret")
    hub.stop()
    assert not (hub.data_dir / "keys").exists(), "no key file with KNOWHUB_MASTER_KEY"

    hub = start_resource_hub(env={"KNOWHUB_MASTER_KEY": new})
    code, message = failure(lambda: secret_of(hub.client("alice"), "credentials/env"))
    assert code == "FAILED_PRECONDITION" and env_key_id(base64.b64decode(old)) in message
    hub.stop()

    hub = start_resource_hub(
        env={"KNOWHUB_MASTER_KEY": new, "KNOWHUB_MASTER_KEY_RETIRED": f"{generate_key()},{old}"}
    )
    assert secret_of(hub.client("alice"), "credentials/env") == "env secret"
    rotation = hub.client("admin").resources.rotate_master_key()
    assert (rotation.active_key_id, rotation.created) == (env_key_id(base64.b64decode(new)), False)
    assert (rotation.rewrapped, rotation.remaining) == (1, 0)
    hub.stop()

    hub = start_resource_hub(env={"KNOWHUB_MASTER_KEY": new, "KNOWHUB_MASTER_KEY_RETIRED": ""})
    assert secret_of(hub.client("alice"), "credentials/env") == "env secret"


@pytest.mark.parametrize(
    ("env", "complaint"),
    [
        ({"KNOWHUB_MASTER_KEY": "too-short"}, "KNOWHUB_MASTER_KEY must be 32 random bytes"),
        (
            {"KNOWHUB_MASTER_KEY": base64.b64encode(b"k" * 31).decode()},
            "KNOWHUB_MASTER_KEY must be 32",
        ),
        ({"KNOWHUB_MASTER_KEY_RETIRED": generate_key()}, "needs KNOWHUB_MASTER_KEY"),
    ],
)
def test_a_bad_key_setting_stops_the_start(
    start_resource_hub: StartResourceHub, env: dict[str, str], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint) as raised:
        start_resource_hub(env=env)
    for value in env.values():
        assert value not in str(raised.value), "the error never shows a key"


def test_rotation_rewraps_every_data_key_while_reads_go_on(
    start_resource_hub: StartResourceHub,
) -> None:
    hub = start_resource_hub()
    alice, admin = hub.client("alice"), hub.client("admin")
    expected = {}
    for n in range(40):
        resource_id = f"credentials/rot{n % 10}"
        alice.resources.save(resource_id, "r", "b", secure_body=f"secret {n}")
        expected[resource_id, n // 10 + 1] = f"secret {n}"
    alice.resources.save("code/plain", "no secret", "b")

    stop, seen, problems = threading.Event(), [], []

    def read_all_the_time() -> None:
        reader = hub.client("alice")
        while not stop.is_set():
            for (resource_id, version), secret in expected.items():
                try:
                    seen.append(secret_of(reader, resource_id, version) == secret)
                except Exception as error:  # every failure is a finding
                    problems.append(error)

    thread = threading.Thread(target=read_all_the_time)
    thread.start()
    try:
        first = admin.resources.rotate_master_key()
        second = admin.resources.rotate_master_key()
    finally:
        stop.set()
        thread.join()

    assert problems == [] and seen and all(seen)
    assert (first.created, first.rewrapped, first.remaining) == (True, 40, 0)
    assert (second.rewrapped, second.remaining) == (40, 0)
    assert first.active_key_id != second.active_key_id
    key_file = hub.data_dir / "keys" / "master-keys.json"
    document = json.loads(key_file.read_text())
    assert document["active"] == second.active_key_id and len(document["keys"]) == 3
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    hub.restart()
    reader = hub.client("alice")
    assert all(secret_of(reader, r, v) == s for (r, v), s in expected.items())


def test_knowhub_keys_rotate_asks_the_running_server(
    start_resource_hub: StartResourceHub, capsys: pytest.CaptureFixture[str]
) -> None:
    hub = start_resource_hub()
    hub.client("alice").resources.save("credentials/cli", "c", "b", secure_body="via cli")
    assert knowhub_cli(["keys", "rotate", "--address", hub.address, "--token", "token-admin"]) == 0
    out = capsys.readouterr().out
    assert "(a new key); 1 data keys re-wrapped; 0 still under another key" in out
    assert knowhub_cli(["keys", "rotate", "--address", hub.address, "--token", "token-carol"]) == 1
    assert "PERMISSION_DENIED" in capsys.readouterr().err
    assert secret_of(hub.client("alice"), "credentials/cli") == "via cli"


def test_knowhub_keys_generate_prints_a_usable_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert knowhub_cli(["keys", "generate"]) == 0
    printed = capsys.readouterr().out.strip()
    assert len(base64.b64decode(printed)) == 32
    assert env_key_id(base64.b64decode(printed)).startswith("env-")


def test_secure_body_stays_out_of_the_sdks_repr(start_resource_hub: StartResourceHub) -> None:
    alice: KnowHub = start_resource_hub().client("alice")
    alice.resources.save("credentials/repr", **CREDENTIAL, secure_body="do-not-print-me")
    resource = alice.resources.get("credentials/repr", include_secure=True)
    assert resource.secure_body == "do-not-print-me"
    assert "do-not-print-me" not in repr(resource)


def test_search_never_looks_at_secure_body(start_resource_hub: StartResourceHub) -> None:
    alice = start_resource_hub().client("alice")
    alice.resources.save(
        "credentials/search", "mongoose account", "public words", secure_body="platypus-password"
    )
    assert alice.resources.search("platypus") == []
    assert [h.resource.id for h in alice.resources.search("mongoose")] == ["credentials/search"]
    assert alice.resources.search("mongoose")[0].resource.secure_body is None
