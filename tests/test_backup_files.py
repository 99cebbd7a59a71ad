"""Backups and restores handle files as an attacker would leave them: a tampered manifest
that names files outside the data directory, links planted in a backup or in the place a
backup goes, a directory someone else created for it. Each is refused and writes nothing
outside where it should."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from knowhub_server.cli import main
from knowhub_server.common.storage.backup import BackupError, HubStores, write_backup
from knowhub_server.common.storage.edge_store import EdgeStore

SCHEMA = {
    "name": "things",
    "dense_dim": None,
    "embedding_model": None,
    "keyword_fields": [],
    "integer_fields": [],
    "float_fields": [],
    "bulk_fields": [],
}


def forged_backup(directory: Path, **manifest: Any) -> Path:
    """A backup directory with an empty collection `things`, no Redis keys and the files
    the manifest names (each holding "planted")."""
    (directory / "collections").mkdir(parents=True)
    (directory / "collections" / "things.jsonl").write_text("")
    (directory / "redis.jsonl").write_text("")
    body = {
        "format": 1,
        "collections": [{"name": "things", "schema": SCHEMA, "records": 0}],
        "redis": {"prefix": "knowhub:", "keys": 0},
        "files": [],
        **manifest,
    }
    (directory / "manifest.json").write_text(json.dumps(body))
    return directory


def restore(source: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["restore", "--from", str(source), "--data-dir", str(data_dir)]) == 1
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_manifest_naming_a_file_outside_the_data_dir_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "../../OUTSIDE/authorized_keys"
    backup = forged_backup(tmp_path / "a" / "backup", files=[name])
    (tmp_path / "a" / "OUTSIDE").mkdir()  # what backup/files/<name> names
    (tmp_path / "a" / "OUTSIDE" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker")
    data_dir = tmp_path / "x" / "y" / "data"
    message = restore(backup, data_dir, capsys)
    assert message == (
        f"knowhub: manifest.json: files: {name!r} is not a file a backup "
        "holds (only keys/master-keys.json, local_token)"
    )
    assert not (tmp_path / "x" / "OUTSIDE").exists() and not (tmp_path / "OUTSIDE").exists()
    assert not data_dir.exists()


@pytest.mark.parametrize("name", ["../../OUTSIDE/things", "/tmp/things", "Things", ""])
def test_a_collection_name_that_is_not_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    backup = forged_backup(
        tmp_path / "backup",
        collections=[{"name": name, "schema": {**SCHEMA, "name": name}, "records": 0}],
    )
    message = restore(backup, tmp_path / "data", capsys)
    assert message == f"knowhub: manifest.json: collections: {name!r} is not a collection name"
    assert not (tmp_path / "data").exists() and not (tmp_path / "OUTSIDE").exists()


def test_a_link_planted_in_a_backup_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """files/local_token a link to a file of the restoring account: not read into the hub."""
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    backup = forged_backup(tmp_path / "backup", files=["local_token"])
    (backup / "files").mkdir()
    (backup / "files" / "local_token").symlink_to(secret)
    message = restore(backup, tmp_path / "data", capsys)
    assert "cannot read it without following a link" in message
    assert not (tmp_path / "data").exists()

    linked = forged_backup(tmp_path / "backup2")
    (linked / "collections" / "things.jsonl").unlink()
    (linked / "collections" / "things.jsonl").symlink_to(secret)
    assert "cannot read it without following a link" in restore(linked, tmp_path / "d2", capsys)


def test_a_good_forged_backup_restores(tmp_path: Path) -> None:
    """The checks refuse only what a backup cannot hold."""
    backup = forged_backup(tmp_path / "backup", files=["local_token", "keys/master-keys.json"])
    (backup / "files" / "keys").mkdir(parents=True)
    (backup / "files" / "local_token").write_text("t0ken")
    (backup / "files" / "keys" / "master-keys.json").write_text("{}")
    assert main(["restore", "--from", str(backup), "--data-dir", str(tmp_path / "data")]) == 0
    assert (tmp_path / "data" / "local_token").read_text() == "t0ken"
    key = tmp_path / "data" / "keys" / "master-keys.json"
    assert key.read_text() == "{}" and key.stat().st_mode & 0o077 == 0


def _stores(tmp_path: Path, files: dict[str, Path]) -> tuple[HubStores, EdgeStore]:
    store = EdgeStore(tmp_path / "qdrant")
    return HubStores(
        collections=[], gate=store.gate, redis=None, redis_prefix="knowhub:", files=files
    ), store


def test_a_backup_refuses_a_directory_someone_else_created(tmp_path: Path) -> None:
    """An empty world-writable directory made ahead of the backup: refused, nothing in it."""
    planted = tmp_path / "planted"
    planted.mkdir()
    planted.chmod(0o777)
    stores, store = _stores(tmp_path, {})
    try:
        with pytest.raises(BackupError, match="exists: give a new directory"):
            write_backup(stores, planted, lambda *_: None)
        link = tmp_path / "link"
        link.symlink_to(planted)  # a link in place of the directory to create
        with pytest.raises(BackupError, match="exists: give a new directory"):
            write_backup(stores, link, lambda *_: None)
    finally:
        store.close()
    assert list(planted.iterdir()) == []


def test_a_backup_makes_its_own_private_files(tmp_path: Path) -> None:
    key = tmp_path / "keyfile"
    key.write_text('{"k": 1}')
    stores, store = _stores(tmp_path, {"keys/master-keys.json": key})
    try:
        manifest = write_backup(stores, tmp_path / "backup", lambda *_: None)
    finally:
        store.close()
    assert manifest["files"] == ["keys/master-keys.json"]
    copied = tmp_path / "backup" / "files" / "keys" / "master-keys.json"
    assert copied.read_text() == '{"k": 1}'
    for path in [tmp_path / "backup", *(tmp_path / "backup").rglob("*")]:
        assert path.stat().st_mode & 0o077 == 0, path
        assert not path.is_symlink()


def test_a_backup_does_not_read_a_key_file_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("not the key")
    link = tmp_path / "keyfile"
    link.symlink_to(target)
    stores, store = _stores(tmp_path, {"keys/master-keys.json": link})
    try:
        with pytest.raises(BackupError, match="without following a link"):
            write_backup(stores, tmp_path / "backup", lambda *_: None)
    finally:
        store.close()
    assert not os.path.lexists(tmp_path / "backup")  # a failed backup leaves nothing
