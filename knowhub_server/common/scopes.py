"""Scopes (`kind:id` or `public`) and the order seed 003 ranks them in."""

from __future__ import annotations

import re
from collections.abc import Iterable

from knowhub_server.common.errors import InvalidArgument

PUBLIC = "public"
# Seed 003: user > project > agent > team > org > public.
SCOPE_KINDS = ("user", "project", "agent", "team", "org")
_PRIORITY = {kind: rank for rank, kind in enumerate(SCOPE_KINDS)}
_PUBLIC_RANK = len(SCOPE_KINDS)

ENTITY_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+\-]{0,127}")
ENTITY_ID_RULE = "1-128 characters: letters, digits and . _ @ + - (starting with a letter or digit)"


def scope(kind: str, entity_id: str) -> str:
    return f"{kind}:{entity_id}"


def is_valid_entity_id(entity_id: str) -> bool:
    return bool(ENTITY_ID_PATTERN.fullmatch(entity_id))


def validate_scope(value: str, field: str) -> str:
    """Returns the scope if it is `public` or `kind:id` with a known kind, else raises."""
    if value == PUBLIC:
        return value
    kind, sep, entity_id = value.partition(":")
    if not sep or kind not in _PRIORITY:
        raise InvalidArgument(
            field, f"{value!r} is not a scope: use kind:id with kind one of "
            f"{', '.join(SCOPE_KINDS)}, or exactly 'public'"
        )
    if not is_valid_entity_id(entity_id):
        raise InvalidArgument(field, f"the id in {value!r} must be {ENTITY_ID_RULE}")
    return value


def validate_owner(value: str, field: str) -> str:
    """An owner is a single `user:id` or `agent:id`."""
    kind, sep, entity_id = value.partition(":")
    if not sep or kind not in ("user", "agent") or not is_valid_entity_id(entity_id):
        raise InvalidArgument(field, f"{value!r} is not an owner: use user:ID or agent:ID")
    return value


def priority(scope_value: str) -> int:
    """0 for the most personal scope (user) up to 5 for public."""
    return _PRIORITY.get(scope_value.partition(":")[0], _PUBLIC_RANK)


def best_priority(scopes: Iterable[str], visible: frozenset[str]) -> int:
    """The highest-priority scope of a record among those the caller can see."""
    return min((priority(s) for s in scopes if s in visible), default=_PUBLIC_RANK)
