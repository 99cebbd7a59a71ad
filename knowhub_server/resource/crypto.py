"""Envelope encryption of secure_body with AES-256-GCM.

Each version's secure_body is encrypted with a fresh 256-bit data key; the data key is
encrypted ("wrapped") with the active master key, whose key id the envelope records, so
the master key can rotate while every envelope stays readable. Both encryptions bind the
resource id and version as associated data: an envelope moved to another resource or
version fails to open instead of revealing a secret there.

Master keys come from a keyring: KNOWHUB_MASTER_KEY (plus KNOWHUB_MASTER_KEY_RETIRED),
or a key file (mode 0600) created on first start, which also keeps retired keys.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from knowhub_server.common.base.errors import FailedPrecondition, Unavailable
from knowhub_server.common.base.times import iso, now
from knowhub_server.common.security.redaction import keep_out_of_call_logs, keep_out_of_logs

log = logging.getLogger(__name__)

ALGORITHM = "AES-256-GCM"
KEY_BYTES = 32
NONCE_BYTES = 12
_DATA_AAD = "knowhub/resource/secure_body/v1"
_KEY_AAD = "knowhub/resource/data_key/v1"
KEY_FILE_FORMAT = 1


@dataclass(frozen=True)
class Envelope:
    """A sealed secure_body: its data key wrapped by master key `key_id`, and the text."""

    key_id: str
    wrapped_key: bytes  # nonce + AES-GCM(master key, data key)
    ciphertext: bytes  # nonce + AES-GCM(data key, secure_body)

    def to_payload(self) -> dict[str, str]:
        return {
            "alg": ALGORITHM,
            "key_id": self.key_id,
            "wrapped_key": base64.b64encode(self.wrapped_key).decode(),
            "ciphertext": base64.b64encode(self.ciphertext).decode(),
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Envelope:
        return cls(
            payload["key_id"],
            base64.b64decode(payload["wrapped_key"]),
            base64.b64decode(payload["ciphertext"]),
        )


def generate_key() -> str:
    """A new random master key, base64, for KNOWHUB_MASTER_KEY."""
    return base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()


def decode_key(text: str, what: str) -> bytes:
    """A 32-byte key from standard or URL-safe base64; the error never shows the key."""
    keep_out_of_logs(text.strip())
    normalized = text.strip().replace("+", "-").replace("/", "_")
    try:
        raw = base64.b64decode(
            normalized + "=" * (-len(normalized) % 4), altchars=b"-_", validate=True
        )
    except ValueError:
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ValueError(
            f"{what} must be {KEY_BYTES} random bytes in base64; generate one "
            "with `knowhub keys generate`"
        )
    return raw


def _seal(key: bytes, plaintext: bytes, aad: str) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad.encode())


def _unseal(key: bytes, sealed: bytes, aad: str) -> bytes:
    return AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad.encode())


def _data_aad(resource_id: str, version: int) -> str:
    return f"{_DATA_AAD}|{resource_id}|{version}"


def _key_aad(key_id: str, resource_id: str, version: int) -> str:
    return f"{_KEY_AAD}|{key_id}|{resource_id}|{version}"


class Keyring:
    """Master keys by id; new envelopes use the active one."""

    def __init__(self, keys: dict[str, bytes], active_id: str, source: str) -> None:
        _keep_keys_out_of_logs(keys)
        self._keys = dict(keys)
        self.active_id = active_id
        self.source = source  # where the keys come from, for messages
        self._lock = threading.Lock()

    @property
    def key_ids(self) -> frozenset[str]:
        return frozenset(self._keys)

    def seal(self, plaintext: str, resource_id: str, version: int) -> Envelope:
        data_key = AESGCM.generate_key(bit_length=256)
        ciphertext = _seal(data_key, plaintext.encode(), _data_aad(resource_id, version))
        return self._wrap(data_key, resource_id, version, ciphertext)

    def open(self, envelope: Envelope, resource_id: str, version: int) -> str:
        data_key = self._unwrap(envelope, resource_id, version)
        try:
            plaintext = _unseal(data_key, envelope.ciphertext, _data_aad(resource_id, version))
        except InvalidTag:
            raise self._corrupt(resource_id, version) from None
        keep_out_of_call_logs(plaintext.decode())
        return plaintext.decode()

    def rewrap(self, envelope: Envelope, resource_id: str, version: int) -> Envelope:
        """The same data key and ciphertext, the data key wrapped by the active key."""
        data_key = self._unwrap(envelope, resource_id, version)
        return self._wrap(data_key, resource_id, version, envelope.ciphertext)

    def rotate(self) -> bool:
        """Makes a fresh key active if this keyring can create one; True if it did."""
        return False

    def _wrap(self, data_key: bytes, resource_id: str, version: int, ciphertext: bytes) -> Envelope:
        key_id = self.active_id
        wrapped = _seal(self._keys[key_id], data_key, _key_aad(key_id, resource_id, version))
        return Envelope(key_id, wrapped, ciphertext)

    def _master_key(self, key_id: str) -> bytes | None:
        return self._keys.get(key_id)

    def _unwrap(self, envelope: Envelope, resource_id: str, version: int) -> bytes:
        master = self._master_key(envelope.key_id)
        if master is None:
            raise FailedPrecondition(
                f"the secure_body of {resource_id!r} version {version} is wrapped by master "
                f"key {envelope.key_id!r}, which is not in the keyring ({self.source}); "
                "restore that key (KNOWHUB_MASTER_KEY_RETIRED or the key file backup)"
            )
        try:
            return _unseal(
                master, envelope.wrapped_key, _key_aad(envelope.key_id, resource_id, version)
            )
        except InvalidTag:
            raise self._corrupt(resource_id, version) from None

    @staticmethod
    def _corrupt(resource_id: str, version: int) -> FailedPrecondition:
        return FailedPrecondition(
            f"the secure_body of {resource_id!r} version {version} fails its integrity "
            "check (altered or moved from another resource); restore it from a backup"
        )


def env_key_id(key: bytes) -> str:
    """A stable id for a key given by value: a keyed hash of it, never the key itself."""
    return "env-" + hmac.new(key, b"knowhub master key id", hashlib.sha256).hexdigest()[:12]


def env_keyring(active: str, retired: str) -> Keyring:
    """KNOWHUB_MASTER_KEY and KNOWHUB_MASTER_KEY_RETIRED (comma-separated)."""
    key = decode_key(active, "KNOWHUB_MASTER_KEY")
    keys = {env_key_id(key): key}
    for index, text in enumerate(t for t in retired.split(",") if t.strip()):
        old = decode_key(text, f"KNOWHUB_MASTER_KEY_RETIRED item {index + 1}")
        keys.setdefault(env_key_id(old), old)
    return Keyring(keys, env_key_id(key), "KNOWHUB_MASTER_KEY")


class FileKeyring(Keyring):
    """Keys in a JSON file readable by its owner only; rotation adds a key to it."""

    def __init__(
        self, path: Path, keys: dict[str, bytes], active_id: str, created: dict[str, str]
    ) -> None:
        super().__init__(keys, active_id, f"key file {path}")
        self.path = path
        self._created = created  # key id -> ISO time, kept in the file

    @classmethod
    def load(cls, path: Path) -> FileKeyring:
        return cls(path, *_read_key_file(path))

    @classmethod
    def create(cls, path: Path) -> FileKeyring:
        keyring = cls(path, {}, "", {})
        keyring._add_key()
        log.warning(
            "created the master key file %s: back it up (and keep the backup apart "
            "from the data); without it no secure_body can ever be read",
            path,
        )
        return keyring

    def rotate(self) -> bool:
        """Adds a new key, makes it active and saves the file; earlier keys stay."""
        try:
            self._add_key()
        except OSError as exc:
            raise Unavailable(
                f"the master key file {self.path} cannot be written, so the "
                f"key was not rotated: {exc.strerror}"
            ) from None
        return True

    def _master_key(self, key_id: str) -> bytes | None:
        """A key this process does not know may come from a rotation by another process
        sharing the key file: read the file again, and take its active key too."""
        known = self._keys.get(key_id)
        if known is not None:
            return known
        with self._lock:
            try:
                keys, active, created = _read_key_file(self.path)
            except ValueError:
                return None
            self._keys, self._created = {**self._keys, **keys}, {**self._created, **created}
            self.active_id = active
        return self._keys.get(key_id)

    def _add_key(self) -> None:
        """Adds a key to the file's keys (read again under a lock held across processes,
        so a rotation elsewhere is never lost) and makes it active."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._lock, _file_lock(self.path.with_name(f".{self.path.name}.lock")):
            keys, created = dict(self._keys), dict(self._created)
            if self.path.exists():
                found, _, found_created = _read_key_file(self.path)
                keys, created = {**keys, **found}, {**created, **found_created}
            key_id = f"key-{secrets.token_hex(6)}"
            keys[key_id] = AESGCM.generate_key(bit_length=256)
            created[key_id] = iso(now())
            _write_private(
                self.path,
                {
                    "format": KEY_FILE_FORMAT,
                    "active": key_id,
                    "keys": [
                        {"id": k, "key": base64.b64encode(v).decode(), "created_at": created[k]}
                        for k, v in keys.items()
                    ],
                },
            )
            self._keys, self._created, self.active_id = keys, created, key_id
        _keep_keys_out_of_logs(keys)


def _keep_keys_out_of_logs(keys: dict[str, bytes]) -> None:
    keep_out_of_logs(
        *(
            encode(key).decode()
            for key in keys.values()
            for encode in (base64.b64encode, base64.urlsafe_b64encode)
        )
    )


def _read_key_file(path: Path) -> tuple[dict[str, bytes], str, dict[str, str]]:
    """The keys, the active key id and each key's creation time (ISO)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning(
            "the master key file %s is readable by others (mode %o): run chmod 600 on it",
            path,
            mode,
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        entries = document["keys"]
        keys = {e["id"]: decode_key(e["key"], f"key {e['id']!r} in {path}") for e in entries}
        created = {e["id"]: str(e.get("created_at", "")) for e in entries}
        active = document["active"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read the master key file {path}: {type(exc).__name__}") from None
    if active not in keys:
        raise ValueError(f"the master key file {path} names an active key it lacks")
    return keys, active, created


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _write_private(path: Path, document: dict[str, Any]) -> None:
    """Writes the file atomically, mode 0600 from its first byte, and syncs it."""
    staging = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def open_keyring(
    *, master_key: str | None, retired: str | None, key_file: Path, may_create: bool, why_not: str
) -> Keyring:
    """The keyring of the settings: the environment's keys, else the key file, created
    when missing if `may_create` (else ValueError saying `why_not`)."""
    if master_key is not None:
        return env_keyring(master_key, retired or "")
    if retired:
        raise ValueError("KNOWHUB_MASTER_KEY_RETIRED needs KNOWHUB_MASTER_KEY")
    if key_file.exists():
        return FileKeyring.load(key_file)
    if not may_create:
        raise ValueError(f"no master key: {key_file} does not exist and {why_not}")
    return FileKeyring.create(key_file)
