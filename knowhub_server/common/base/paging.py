"""Opaque page tokens: a keyset cursor, tied to the filters of the list that issued it, so
a token cannot be replayed against another listing."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from knowhub_server.common.base import json_input
from knowhub_server.common.base.errors import InvalidArgument


def fingerprint(filters: object) -> str:
    return hashlib.blake2b(repr(filters).encode(), digest_size=8).hexdigest()


def write_token(cursor: Any, filters: object) -> str:
    """A token for `cursor` (any JSON value) in the listing with these filters."""
    raw = json.dumps({"c": cursor, "f": fingerprint(filters)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_token(token: str, filters: object) -> Any:
    """The cursor of a token issued for these filters; INVALID_ARGUMENT otherwise."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json_input.loads(base64.urlsafe_b64decode(padded.encode()))
        cursor, found = data["c"], data["f"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidArgument("page_token", "is not a token this service issued") from exc
    if found != fingerprint(filters):
        raise InvalidArgument("page_token", "belongs to a list with other filters")
    return cursor
