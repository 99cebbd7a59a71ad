"""Field checks shared by every service. Each raises InvalidArgument naming the field."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.scopes import ORG_SEPARATOR, is_valid_entity_id

RESOURCE_ID_PATTERN = re.compile(r"[a-z0-9_.\-]+(/[a-z0-9_.\-]+)*")
RESOURCE_ID_MAX = 256
TRACE_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}")
TRACE_ID_RULE = (
    "1-128 characters: letters, digits and . _ : @ + - (starting with a letter or digit)"
)
NAME_MAX = 256  # ids and names: message, trace, agent, request ids, source names
CASE_TEXT_MAX = 4_000  # the texts of a feedback case (task, outcome, reason)


def text(value: str, field: str, max_len: int, *, required: bool = False) -> str:
    """A string of at most `max_len` characters; non-blank when required."""
    if required and not value.strip():
        raise InvalidArgument(field, "is required")
    if len(value) > max_len:
        raise InvalidArgument(field, f"is {len(value)} characters; the limit is {max_len}")
    if "\x00" in value:
        raise InvalidArgument(field, "must not contain NUL characters")
    return value


def int_range(value: int, field: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InvalidArgument(field, f"must be between {low} and {high}, got {value}")
    return value


def number_range(value: float, field: str, low: float, high: float) -> float:
    """A finite number from `low` to `high` (NaN is neither)."""
    if not low <= value <= high:
        raise InvalidArgument(field, f"must be between {low:g} and {high:g}, got {value!r}")
    return value


def count(length: int, field: str, max_items: int, *, required: bool = False) -> int:
    """A repeated field's size: at most `max_items`, and at least one when required."""
    if required and not length:
        raise InvalidArgument(field, "needs at least one value")
    if length > max_items:
        raise InvalidArgument(field, f"has {length} values; the limit is {max_items}")
    return length


def items(
    values: Sequence[str],
    field: str,
    max_items: int,
    *,
    required: bool = False,
    unique: bool = True,
) -> list[str]:
    """A list of at most `max_items` strings, without repeats when `unique`."""
    count(len(values), field, max_items, required=required)
    if unique:
        seen: set[str] = set()
        for index, value in enumerate(values):
            if value in seen:
                raise InvalidArgument(f"{field}[{index}]", f"repeats {value!r}")
            seen.add(value)
    return list(values)


def url(value: str, field: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in value:
        raise InvalidArgument(field, f"{value!r} is not an http(s) URL")
    return text(value, field, 2048)


def string_map(
    values: Mapping[str, str], field: str, max_entries: int, key_max: int, value_max: int
) -> dict[str, str]:
    if len(values) > max_entries:
        raise InvalidArgument(field, f"has {len(values)} entries; the limit is {max_entries}")
    for key, value in values.items():
        text(key, f"{field} key {key[:40]!r}", key_max, required=True)
        text(value, f"{field}[{key!r}]", value_max)
    return dict(values)


def resource_id(value: str, field: str) -> str:
    """Path-like: lowercase letters, digits, `_ - . /`; no leading slash, no `..`. Another
    organisation's resource is named `org:path`."""
    if not value:
        raise InvalidArgument(field, "is required")
    if len(value) > RESOURCE_ID_MAX:
        raise InvalidArgument(field, f"is longer than {RESOURCE_ID_MAX} characters")
    org, _, path = value.rpartition(ORG_SEPARATOR)
    if (
        not RESOURCE_ID_PATTERN.fullmatch(path)
        or ".." in path.split("/")
        or (org and not is_valid_entity_id(org))
    ):
        raise InvalidArgument(
            field,
            f"{value!r} is not a resource id: use lowercase letters, digits and _ - . "
            "in segments separated by /, with no leading slash and no '..' (org:path for "
            "another organisation's, :path for the shared namespace's)",
        )
    return value


def trace_id(value: str, field: str = "trace_id") -> str:
    """A trace id (cognition's traces, named by knowledge cases and dream runs too)."""
    if not value:
        raise InvalidArgument(field, "is required")
    if not TRACE_ID_PATTERN.fullmatch(value):
        raise InvalidArgument(field, f"{value[:140]!r} is not a trace id: use {TRACE_ID_RULE}")
    return value
