"""This process's environment variables, set for a while: what the code inside reads and
the processes it starts inherit."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def variable_set(name: str, value: str | None) -> Iterator[None]:
    """`name` is `value` inside the block (left as it is when `value` is None), and as it
    was before after it."""
    before = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
