"""Backups of a hub: written by the running server (its stores belong to its process),
restored offline into an empty data directory.

A backup directory holds:

- `collections/<name>.jsonl`: every record of each collection the process opened, with
  its payload, version and vectors (one JSON object a line);
- `redis.jsonl`: every Redis key under the hub's prefix (`knowhub:audit`, and the
  hash-tagged `{knowhub:cognition}:…`) as Redis DUMPs it, with its time to live;
- `files/`: the master key file and the local token, as they are in the data directory;
- `manifest.json`: the format, the versions of KnowHub, Redis and the Qdrant engine, the
  time, each collection's schema and record count, the Redis key count and the files.

One instant's state, as a crash at that instant would leave it: the collections' writes
wait (their write gate is closed) from the start of the backup to the end of the
collections' copy, and Redis holds every client's writes (CLIENT PAUSE WRITE) while its
keys are read, which comes first and is quick. Reads go on throughout.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import qdrant_edge as qe
import redis

from knowhub_server.common.cli_support import installed_version
from knowhub_server.common.edge_store import EdgeStore
from knowhub_server.common.redis_store import EmbeddedRedis, connect, hub_key_patterns
from knowhub_server.common.vectors import (
    CollectionSchema,
    Record,
    VectorCollection,
    Where,
    WriteGate,
)

FORMAT = 1
MANIFEST = "manifest.json"
REDIS_FILE = "redis.jsonl"
COLLECTIONS = "collections"
FILES = "files"
PAGE = 256
# The longest Redis holds writes while its keys are read; writers wait (up to their
# command timeout) rather than fail.
PAUSE_MILLISECONDS = 30_000

Progress = Callable[[str, int, int], None]
"""Told (stage, done, total) after each step."""


class BackupError(RuntimeError):
    """A backup cannot be written or restored; the message says why."""


@dataclasses.dataclass
class HubStores:
    """What a backup copies from a running process."""

    collections: Sequence[VectorCollection]
    gate: WriteGate  # of the collections' store
    redis: redis.Redis | None
    redis_prefix: str
    files: dict[str, Path]  # name in the data directory -> where the file is


def check_destination(destination: Path) -> None:
    """A new or empty directory whose parent exists; else BackupError."""
    if not destination.is_absolute():
        raise BackupError(f"{str(destination)!r} is not an absolute path")
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise BackupError(f"{destination} exists and is not an empty directory")
    if not destination.parent.is_dir():
        raise BackupError(f"{destination.parent} is not a directory")


def write_backup(stores: HubStores, destination: Path, progress: Progress) -> dict[str, Any]:
    """Writes the backup into `destination` (see check_destination); returns the manifest.
    A failed backup leaves no directory behind."""
    check_destination(destination)
    destination.mkdir(mode=0o700, exist_ok=True)
    try:
        with stores.gate.closed():
            created_at = datetime.now(timezone.utc).isoformat()
            redis_part = _write_redis(stores, destination, progress)
            collections = [_write_collection(c, destination, progress)
                           for c in stores.collections]
        manifest = {
            "format": FORMAT,
            "created_at": created_at,
            "versions": {"knowhub": installed_version(),
                         "qdrant_edge": installed_version("qdrant-edge-py")},
            "collections": collections,
            "redis": redis_part,
            "files": _copy_files(stores.files, destination / FILES, progress),
        }
        if stores.redis is not None:
            manifest["versions"]["redis"] = stores.redis.info("server")["redis_version"]
        _write_json(destination / MANIFEST, manifest)
    except BaseException:
        shutil.rmtree(destination, ignore_errors=True)
        raise
    return manifest


def _write_collection(collection: VectorCollection, destination: Path,
                      progress: Progress) -> dict[str, Any]:
    name = collection.schema.name
    total, done, cursor = collection.count(Where()), 0, None
    (destination / COLLECTIONS).mkdir(exist_ok=True)
    with _private_file(destination / COLLECTIONS / f"{name}.jsonl") as file:
        while True:
            page, cursor = collection.scroll(Where(), PAGE, cursor=cursor, with_vectors=True)
            for record in page:
                file.write(json.dumps(_record_line(record), ensure_ascii=False) + "\n")
            done += len(page)
            progress(name, done, max(total, done))
            if cursor is None:
                break
    schema = dataclasses.asdict(collection.schema)
    return {"name": name, "schema": schema, "records": done}


def _write_redis(stores: HubStores, destination: Path, progress: Progress) -> dict[str, Any]:
    keys: list[bytes] = []
    with _private_file(destination / REDIS_FILE) as file:
        if stores.redis is not None:
            with _writes_paused(stores.redis):
                keys = sorted(key for pattern in hub_key_patterns(stores.redis_prefix)
                              for key in stores.redis.scan_iter(match=pattern, count=1000))
                for start in range(0, len(keys), PAGE):
                    _write_keys(stores.redis, keys[start:start + PAGE], file)
                    progress("redis", min(start + PAGE, len(keys)), len(keys))
    return {"prefix": stores.redis_prefix, "keys": len(keys)}


@contextlib.contextmanager
def _writes_paused(client: redis.Redis) -> Iterator[None]:
    """Every client's writes wait while the block reads (reads go on)."""
    client.execute_command("CLIENT", "PAUSE", PAUSE_MILLISECONDS, "WRITE")
    try:
        yield
    finally:
        client.execute_command("CLIENT", "UNPAUSE")


def _write_keys(client: redis.Redis, keys: list[bytes], file: Any) -> None:
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        pipeline.dump(key)
        pipeline.pttl(key)
    answers = pipeline.execute()
    for key, dumped, ttl in zip(keys, answers[::2], answers[1::2], strict=True):
        if dumped is None:
            continue  # expired between SCAN and DUMP
        file.write(json.dumps({"key": _b64(key), "ttl_ms": max(ttl, 0),
                               "dump": _b64(dumped)}) + "\n")


def _copy_files(files: dict[str, Path], destination: Path,
                progress: Progress) -> list[str]:
    present = {name: path for name, path in files.items() if path.is_file()}
    for done, (name, path) in enumerate(sorted(present.items()), start=1):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(path, target)
        progress("files", done, len(present))
    return sorted(present)


def read_manifest(source: Path) -> dict[str, Any]:
    """The manifest of the backup in `source`; BackupError when it is not one this
    version can restore."""
    try:
        manifest: dict[str, Any] = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} is not a KnowHub backup: cannot read {MANIFEST} "
                          f"({exc})") from exc
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source} is a backup of format {manifest.get('format')!r}; "
                          f"this version restores format {FORMAT}")
    return manifest


def restore_backup(source: Path, data_dir: Path, progress: Progress) -> dict[str, Any]:
    """Brings the backup in `source` into `data_dir`, which must be new or empty (the
    caller holds it): embedded Qdrant shards, an embedded Redis, the files. Returns the
    manifest."""
    manifest = read_manifest(source)
    for name in manifest["files"]:
        target = data_dir / name
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(source / FILES / name, target)
    store = EdgeStore(data_dir / "qdrant")
    try:
        for entry in manifest["collections"]:
            _restore_collection(store, source, entry, progress)
    finally:
        store.close()
    _restore_redis(source, data_dir / "redis", manifest["redis"]["keys"], progress)
    return manifest


def _restore_collection(store: EdgeStore, source: Path, entry: dict[str, Any],
                        progress: Progress) -> None:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["schema"].items()}
    collection = store.open(CollectionSchema(**fields))
    done = 0
    for page in _pages(source / COLLECTIONS / f"{entry['name']}.jsonl"):
        collection.put([_record(line) for line in page])
        done += len(page)
        progress(entry["name"], done, entry["records"])
    collection.flush()
    if collection.count(Where()) != entry["records"]:
        raise BackupError(f"collection {entry['name']}: {collection.count(Where())} records "
                          f"restored, the backup holds {entry['records']}")


def _restore_redis(source: Path, directory: Path, expected: int, progress: Progress) -> None:
    embedded = EmbeddedRedis(directory).start()
    try:
        with connect(embedded.url) as client:
            done = 0
            for page in _pages(source / REDIS_FILE):
                pipeline = client.pipeline(transaction=False)
                for line in page:
                    pipeline.restore(base64.b64decode(line["key"]), line["ttl_ms"],
                                     base64.b64decode(line["dump"]), replace=True)
                pipeline.execute()
                done += len(page)
                progress("redis", done, expected)
            if done != expected:
                raise BackupError(f"redis: {done} keys in {source / REDIS_FILE}, the "
                                  f"manifest says {expected}")
    finally:
        embedded.stop()


def _pages(path: Path) -> Iterator[list[dict[str, Any]]]:
    page: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as file:
        for line in file:
            page.append(json.loads(line))
            if len(page) == PAGE:
                yield page
                page = []
    if page:
        yield page


def _record_line(record: Record) -> dict[str, Any]:
    return {"key": record.key, "version": record.version, "payload": record.payload,
            "vectors": {name: _vector_json(v) for name, v in record.vectors.items()}}


def _record(line: dict[str, Any]) -> Record:
    vectors = {name: qe.SparseVector(indices=v["indices"], values=v["values"])
               if isinstance(v, dict) else v for name, v in line["vectors"].items()}
    return Record(key=line["key"], payload=line["payload"], version=line["version"],
                  vectors=vectors)


def _vector_json(vector: Any) -> Any:
    if hasattr(vector, "indices"):
        return {"indices": list(vector.indices), "values": list(vector.values)}
    return list(vector)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@contextlib.contextmanager
def _private_file(path: Path) -> Iterator[Any]:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        yield file


def _write_json(path: Path, value: Any) -> None:
    with _private_file(path) as file:
        file.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
