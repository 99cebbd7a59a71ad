"""The token a client sends when it is given none.

`KNOWHUB_TOKEN` when set. Otherwise, for a hub on this machine (every target on
loopback or a unix socket), the local token: a hub started without a tokens file
writes a random token to `local_token` in its data directory (readable by its user
only) and accepts that token alone. The client reads it from `KNOWHUB_DATA_DIR`, else
from `./.knowhub`, the data directory `knowhub up` uses by default.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

LOCAL_TOKEN_FILE = "local_token"
DEFAULT_DATA_DIR = ".knowhub"
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def local_token_file(data_dir: str | os.PathLike[str]) -> Path:
    """Where the hub with this data directory writes its local token."""
    return Path(data_dir) / LOCAL_TOKEN_FILE


def read_local_token(data_dir: str | os.PathLike[str]) -> str | None:
    """The local token of the hub with this data directory; None if there is none (or it
    cannot be read)."""
    try:
        token = local_token_file(data_dir).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


def target_host(target: str) -> str:
    """The host of a gRPC target: `host:port`, `[v6]:port`, `dns:///host:port`,
    `ipv4:a:p`; "unix" for a unix socket; "" when several addresses are listed."""
    if target.startswith("unix:"):
        return "unix"
    scheme, separator, rest = target.partition(":")
    if separator and scheme in ("dns", "ipv4", "ipv6"):
        target = rest.lstrip("/")
        if "," in target:
            return ""
    if target.startswith("["):
        return target[1:].partition("]")[0]
    return target.rpartition(":")[0] if target.count(":") == 1 else target


def is_local_target(target: str) -> bool:
    """Whether a target is on this machine: loopback or a unix socket."""
    host = target_host(target)
    return host == "unix" or host in _LOOPBACK_HOSTS or host.startswith("127.")


def default_token(targets: Iterable[str]) -> str | None:
    """KNOWHUB_TOKEN, else the local token when every target is on this machine."""
    token = os.environ.get("KNOWHUB_TOKEN", "").strip()
    if token:
        return token
    if not all(is_local_target(t) for t in targets):
        return None
    return read_local_token(os.environ.get("KNOWHUB_DATA_DIR") or DEFAULT_DATA_DIR)
