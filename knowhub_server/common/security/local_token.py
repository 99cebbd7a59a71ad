"""The local token: what a hub without a tokens file accepts, instead of anyone at all.

Made once per data directory, at random, in `<data_dir>/local_token`, readable by its
user only. The SDK, the CLI and the stdio MCP server read it there (knowhub.local); the
console gets it from the gateway (see gateway/guard.py). A web page in the user's
browser can reach a loopback port but cannot read this file, so it cannot call the hub.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from pathlib import Path

from knowhub.local import local_token_file, read_local_token

log = logging.getLogger(__name__)

PREFIX = "khl_"  # so the token is easy to recognise, and never reads as JSON


def ensure_local_token(data_dir: Path) -> str:
    """The data directory's local token, made now if it has none. Several processes
    starting on one data directory at once all end up with the same token."""
    path = local_token_file(data_dir)
    token = read_local_token(data_dir)
    if token is None:
        create_secret_file(path, PREFIX + secrets.token_urlsafe(32))
        token = read_local_token(data_dir)
        if token is None:
            raise RuntimeError(f"cannot read the local token in {path}")
    _keep_private(path)
    return token


def create_secret_file(path: Path, text: str) -> None:
    """Writes `text` (a new secret) in full under a temporary name, readable by this user
    only, then links it into place: the file appears complete or not at all, and only the
    first of racing processes wins. An empty (truncated) file is replaced."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text + "\n")
            file.flush()
            os.fsync(file.fileno())
        if path.exists() and not path.read_text(encoding="utf-8").strip():
            path.unlink()
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _keep_private(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s was readable by others (mode %o): made it private", path, mode)
        path.chmod(0o600)
