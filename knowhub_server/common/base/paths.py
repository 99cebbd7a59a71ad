"""Paths as the user wrote them, made absolute once: a relative path would name another
file for a child process that changes directory (the embedded redis-server), or in a
message read from elsewhere."""

from __future__ import annotations

import os
from pathlib import Path


def absolute(path: Path) -> Path:
    """The path from the current directory, `~` expanded and `..` resolved as written
    (symbolic links are kept)."""
    return Path(os.path.abspath(path.expanduser()))
