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

A backup is written into a directory it creates itself (an existing one is refused, so
no one else holds a file open in it or planted a link there), every file created anew
and never through a link. A restore takes only the names a backup can hold (the
collections' names, the files below) and writes each under the new data directory, again
creating every file anew and following no link, in the backup or in the data directory.

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
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import qdrant_edge as qe
import redis

from knowhub_server.common.base.versions import installed_version
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.redis_store import EmbeddedRedis, connect, hub_key_patterns
from knowhub_server.common.storage.vectors import (
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
LOCAL_TOKEN = "local_token"
KEY_FILE = "keys/master-keys.json"  # where a restore puts the master key file
# The files a backup holds (name in the data directory).
FILE_NAMES = frozenset({LOCAL_TOKEN, KEY_FILE})
# What a collection's name may be: it names a file of the backup and a shard directory.
COLLECTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_NO_FOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
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


class PrivateDir:
    """A directory this process made (0700), reached through its descriptor: files made
    in it are new (O_EXCL) and no name in it is followed as a link."""

    def __init__(self, descriptor: int, path: Path) -> None:
        self.fd = descriptor
        self.path = path

    @classmethod
    def create(cls, path: Path) -> PrivateDir:
        """Makes `path` (it must not exist) and opens it; BackupError otherwise."""
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            raise BackupError(
                f"{path} exists: give a new directory, the backup creates it"
            ) from None
        except OSError as exc:
            raise BackupError(f"cannot create {path}: {exc.strerror}") from None
        return cls._open(path, os.open, path)

    @classmethod
    def _open(cls, path: Path, opener: Callable[..., int], name: Any, **where: Any) -> PrivateDir:
        descriptor = opener(name, os.O_RDONLY | os.O_DIRECTORY | _NO_FOLLOW, **where)
        info = os.fstat(descriptor)
        if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
            os.close(descriptor)  # replaced by someone else's between mkdir and open
            raise BackupError(f"{path} is not a private directory of this account")
        return cls(descriptor, path)

    @classmethod
    def existing(cls, path: Path) -> PrivateDir:
        """`path`, a private directory of this account (not a link)."""
        try:
            return cls._open(path, os.open, path)
        except OSError as exc:
            raise BackupError(f"cannot open {path}: {exc.strerror}") from None

    def subdir(self, name: str) -> PrivateDir:
        """The directory `name` in this one, made if it is not there (never a link)."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=self.fd)
        return self._open(self.path / name, os.open, name, dir_fd=self.fd)

    def at(self, relative: str) -> tuple[PrivateDir, str]:
        """The directory holding `relative` (a/b/c: a/b, made as needed) and its last name."""
        *parents, name = relative.split("/")
        directory = self
        for part in parents:
            directory = directory.subdir(part)
        return directory, name

    @contextlib.contextmanager
    def new_file(self, name: str, binary: bool = False) -> Iterator[Any]:
        """A file made anew here, 0600, for writing."""
        descriptor = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, 0o600, dir_fd=self.fd
        )
        file: IO[Any] = (
            os.fdopen(descriptor, "wb") if binary else os.fdopen(descriptor, "w", encoding="utf-8")
        )
        with file:
            yield file

    def close(self) -> None:
        os.close(self.fd)


def check_destination(destination: Path) -> None:
    """An absolute path that does not exist yet, in an existing directory; else
    BackupError."""
    if not destination.is_absolute():
        raise BackupError(f"{str(destination)!r} is not an absolute path")
    if os.path.lexists(destination):
        raise BackupError(f"{destination} exists: give a new directory, the backup creates it")
    if not destination.parent.is_dir():
        raise BackupError(f"{destination.parent} is not a directory")


def write_backup(stores: HubStores, destination: Path, progress: Progress) -> dict[str, Any]:
    """Writes the backup into `destination`, which it creates (see check_destination);
    returns the manifest. A failed backup leaves no directory behind."""
    check_destination(destination)
    unknown = sorted(set(stores.files) - FILE_NAMES)
    if unknown:
        raise BackupError(f"files: {unknown[0]!r} is not a file a backup holds")
    root = PrivateDir.create(destination)
    try:
        return _write_backup(stores, root, progress)
    except BaseException:
        shutil.rmtree(destination, ignore_errors=True)
        raise
    finally:
        root.close()


def _write_backup(stores: HubStores, root: PrivateDir, progress: Progress) -> dict[str, Any]:
    with stores.gate.closed():
        created_at = datetime.now(timezone.utc).isoformat()
        redis_part = _write_redis(stores, root, progress)
        collections = root.subdir(COLLECTIONS)
        try:
            written = [_write_collection(c, collections, progress) for c in stores.collections]
        finally:
            collections.close()
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "created_at": created_at,
        "versions": {
            "knowhub": installed_version(),
            "qdrant_edge": installed_version("qdrant-edge-py"),
        },
        "collections": written,
        "redis": redis_part,
        "files": _copy_files(stores.files, root, progress),
    }
    if stores.redis is not None:
        manifest["versions"]["redis"] = stores.redis.info("server")["redis_version"]
    with root.new_file(MANIFEST) as file:
        file.write(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return manifest


def _write_collection(
    collection: VectorCollection, directory: PrivateDir, progress: Progress
) -> dict[str, Any]:
    name = collection.schema.name
    if not COLLECTION_NAME.fullmatch(name):
        raise BackupError(f"collection {name!r}: not a name a backup can hold")
    total, done, cursor = collection.count(Where()), 0, None
    with directory.new_file(f"{name}.jsonl") as file:
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


def _write_redis(stores: HubStores, root: PrivateDir, progress: Progress) -> dict[str, Any]:
    keys: list[bytes] = []
    with root.new_file(REDIS_FILE) as file:
        if stores.redis is not None:
            with _writes_paused(stores.redis):
                keys = sorted(
                    key
                    for pattern in hub_key_patterns(stores.redis_prefix)
                    for key in stores.redis.scan_iter(match=pattern, count=1000)
                )
                for start in range(0, len(keys), PAGE):
                    _write_keys(stores.redis, keys[start : start + PAGE], file)
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
        file.write(
            json.dumps({"key": _b64(key), "ttl_ms": max(ttl, 0), "dump": _b64(dumped)}) + "\n"
        )


def _copy_files(files: dict[str, Path], root: PrivateDir, progress: Progress) -> list[str]:
    present = {name: path for name, path in files.items() if path.is_file()}
    if not present:
        return []
    directory = root.subdir(FILES)
    try:
        for done, (name, path) in enumerate(sorted(present.items()), start=1):
            _copy_into(_read_no_link(path), directory, name)
            progress("files", done, len(present))
    finally:
        directory.close()
    return sorted(present)


def _read_no_link(path: Path) -> bytes:
    """The bytes of a regular file at `path`, not through a link at its last name."""
    try:
        descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW)
    except OSError as exc:
        raise BackupError(
            f"{path}: cannot read it without following a link ({exc.strerror})"
        ) from None
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise BackupError(f"{path} is not a regular file")
        return file.read()


def _copy_into(data: bytes, root: PrivateDir, relative: str) -> None:
    directory, name = root.at(relative)
    try:
        with directory.new_file(name, binary=True) as file:
            file.write(data)
    finally:
        if directory is not root:
            directory.close()


def read_manifest(source: Path) -> dict[str, Any]:
    """The manifest of the backup in `source`; BackupError when it is not one this
    version can restore, or names anything a backup cannot hold."""
    try:
        manifest = json.loads(_read_no_link(source / MANIFEST).decode("utf-8"))
    except (BackupError, ValueError) as exc:
        raise BackupError(
            f"{source} is not a KnowHub backup: cannot read {MANIFEST} ({exc})"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise BackupError(
            f"{source} is a backup of format {found!r}; this version restores format {FORMAT}"
        )
    return manifest


def _checked(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest, if every name in it is one a backup can hold; else BackupError."""
    files, collections = manifest.get("files"), manifest.get("collections")
    redis_part = manifest.get("redis")
    if (
        not isinstance(files, list)
        or not isinstance(collections, list)
        or not isinstance(redis_part, dict)
        or type(redis_part.get("keys")) is not int
    ):
        raise BackupError(f"{MANIFEST}: files, collections and redis.keys are required")
    for name in files:
        if name not in FILE_NAMES:
            raise BackupError(
                f"{MANIFEST}: files: {str(name)[:200]!r} is not a file a "
                f"backup holds (only {', '.join(sorted(FILE_NAMES))})"
            )
    fields = {f.name for f in dataclasses.fields(CollectionSchema)}
    for entry in collections:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name):
            raise BackupError(
                f"{MANIFEST}: collections: {str(name)[:200]!r} is not a collection name"
            )
        schema = entry.get("schema")
        if (
            not isinstance(schema, dict)
            or schema.get("name") != name
            or not set(schema) <= fields
            or type(entry.get("records")) is not int
        ):
            raise BackupError(
                f"{MANIFEST}: collections: {name}: schema and records do not "
                "describe this collection"
            )
    return manifest


def restore_backup(source: Path, data_dir: Path, progress: Progress) -> dict[str, Any]:
    """Brings the backup in `source` into `data_dir`, which must be new or empty (the
    caller holds it and made it private): embedded Qdrant shards, an embedded Redis, the
    files. Returns the manifest."""
    manifest = _checked(read_manifest(source))
    root = PrivateDir.existing(data_dir)
    try:
        for name in manifest["files"]:
            _copy_into(_read_no_link(source / FILES / name), root, name)
    finally:
        root.close()
    store = EdgeStore(data_dir / "qdrant")
    try:
        for entry in manifest["collections"]:
            _restore_collection(store, source, entry, progress)
    finally:
        store.close()
    _restore_redis(source, data_dir / "redis", manifest["redis"]["keys"], progress)
    return manifest


def _restore_collection(
    store: EdgeStore, source: Path, entry: dict[str, Any], progress: Progress
) -> None:
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in entry["schema"].items()
    }
    collection = store.open(CollectionSchema(**fields))
    done = 0
    for page in _pages(source / COLLECTIONS / f"{entry['name']}.jsonl"):
        collection.put([_record(line) for line in page])
        done += len(page)
        progress(entry["name"], done, entry["records"])
    collection.flush()
    if collection.count(Where()) != entry["records"]:
        raise BackupError(
            f"collection {entry['name']}: {collection.count(Where())} records "
            f"restored, the backup holds {entry['records']}"
        )


def _restore_redis(source: Path, directory: Path, expected: int, progress: Progress) -> None:
    embedded = EmbeddedRedis(directory).start()
    try:
        with connect(embedded.url) as client:
            done = 0
            for page in _pages(source / REDIS_FILE):
                pipeline = client.pipeline(transaction=False)
                for line in page:
                    pipeline.restore(
                        base64.b64decode(line["key"]),
                        line["ttl_ms"],
                        base64.b64decode(line["dump"]),
                        replace=True,
                    )
                pipeline.execute()
                done += len(page)
                progress("redis", done, expected)
            if done != expected:
                raise BackupError(
                    f"redis: {done} keys in {source / REDIS_FILE}, the manifest says {expected}"
                )
    finally:
        embedded.stop()


def _pages(path: Path) -> Iterator[list[dict[str, Any]]]:
    page: list[dict[str, Any]] = []
    try:
        descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW)
    except OSError as exc:
        raise BackupError(
            f"{path}: cannot read it without following a link ({exc.strerror})"
        ) from None
    with os.fdopen(descriptor, encoding="utf-8") as file:
        for line in file:
            page.append(json.loads(line))
            if len(page) == PAGE:
                yield page
                page = []
    if page:
        yield page


def _record_line(record: Record) -> dict[str, Any]:
    return {
        "key": record.key,
        "version": record.version,
        "payload": record.payload,
        "vectors": {name: _vector_json(v) for name, v in record.vectors.items()},
    }


def _record(line: dict[str, Any]) -> Record:
    vectors = {
        name: qe.SparseVector(indices=v["indices"], values=v["values"])
        if isinstance(v, dict)
        else v
        for name, v in line["vectors"].items()
    }
    return Record(
        key=line["key"], payload=line["payload"], version=line["version"], vectors=vectors
    )


def _vector_json(vector: Any) -> Any:
    if hasattr(vector, "indices"):
        return {"indices": list(vector.indices), "values": list(vector.values)}
    return list(vector)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
