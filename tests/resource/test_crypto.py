"""Envelope encryption and keyrings on their own: what the service's tests rely on."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from knowhub_server.common.base.errors import FailedPrecondition
from knowhub_server.resource.crypto import (
    FileKeyring,
    decode_key,
    env_keyring,
    generate_key,
)


def test_an_envelope_opens_only_for_its_resource_and_version(tmp_path: Path) -> None:
    keyring = FileKeyring.create(tmp_path / "keys.json")
    sealed = keyring.seal("p@ss — 密码", "credentials/a", 3)
    assert b"p@ss" not in sealed.ciphertext + sealed.wrapped_key
    assert keyring.open(sealed, "credentials/a", 3) == "p@ss — 密码"
    for resource_id, version in (("credentials/b", 3), ("credentials/a", 2)):
        with pytest.raises(FailedPrecondition, match="integrity"):
            keyring.open(sealed, resource_id, version)
    again = keyring.seal("p@ss — 密码", "credentials/a", 3)
    assert again.ciphertext != sealed.ciphertext, "a fresh data key and nonce each time"


def test_rewrap_keeps_the_ciphertext_and_changes_the_wrapping_key(tmp_path: Path) -> None:
    keyring = FileKeyring.create(tmp_path / "keys.json")
    sealed = keyring.seal("s", "code/x", 1)
    keyring.rotate()
    moved = keyring.rewrap(sealed, "code/x", 1)
    assert (moved.ciphertext, moved.key_id != sealed.key_id) == (sealed.ciphertext, True)
    assert keyring.open(moved, "code/x", 1) == keyring.open(sealed, "code/x", 1) == "s"


def test_processes_sharing_a_key_file_see_each_others_rotations(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    first = FileKeyring.create(path)
    second = FileKeyring.load(path)
    first.rotate()
    sealed = first.seal("shared", "code/x", 1)
    assert second.open(sealed, "code/x", 1) == "shared", "the file is read again"
    assert second.active_id == first.active_id
    rotated_by_first = first.active_id
    second.rotate()  # must keep the key the first one added
    ids = {entry["id"] for entry in json.loads(path.read_text())["keys"]}
    assert rotated_by_first in ids and len(ids) == 3
    assert FileKeyring.load(path).open(sealed, "code/x", 1) == "shared"


def test_keys_are_read_in_either_base64_alphabet_with_or_without_padding() -> None:
    raw = bytes(range(200, 232))
    for text in (
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        " " + generate_key(),
    ):
        assert len(decode_key(text, "k")) == 32
    with pytest.raises(ValueError, match="32 random bytes"):
        decode_key("not*base64", "k")


def test_an_unknown_key_id_names_the_missing_key(tmp_path: Path) -> None:
    old = env_keyring(generate_key(), "")
    sealed = old.seal("s", "code/x", 1)
    with pytest.raises(FailedPrecondition, match=sealed.key_id):
        env_keyring(generate_key(), "").open(sealed, "code/x", 1)
    assert FileKeyring.create(tmp_path / "k.json").rotate() is True
    assert old.rotate() is False, "keys from the environment change by restart only"
