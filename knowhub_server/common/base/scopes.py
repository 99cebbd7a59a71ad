"""Scopes (`kind:id` or `public`), the order they rank in, and the names that
belong to an organisation.

An agent id and a resource id name an agent or a resource *within its organisation*: two
organisations may each have a `research_agent` and a `tools/curl`, and neither sees the
other's. The store keeps such a name qualified by its organisation, `acme:research_agent`
(the scope `agent:acme:research_agent`, the resource `acme:tools/curl`); a caller writes
and reads the names of its own organisation bare, and sees another's qualified. Names of
the shared namespace (the local mode's, a token's without an org, data written before
names had organisations) are kept bare, and read `:name` to a caller of an organisation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from knowhub_server.common.base.errors import InvalidArgument

PUBLIC = "public"
# Most specific first: user > project > agent > team > org > public.
SCOPE_KINDS = ("user", "project", "agent", "team", "org")
_PRIORITY = {kind: rank for rank, kind in enumerate(SCOPE_KINDS)}
_PUBLIC_RANK = len(SCOPE_KINDS)

ENTITY_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+\-]{0,127}")
ENTITY_ID_RULE = "1-128 characters: letters, digits and . _ @ + - (starting with a letter or digit)"


ORG_SEPARATOR = ":"
AGENT_NAME_RULE = (
    f"{ENTITY_ID_RULE}, or org:agent for another organisation's agent "
    "(:agent for the shared namespace's)"
)


def scope(kind: str, entity_id: str) -> str:
    return f"{kind}:{entity_id}"


def is_valid_entity_id(entity_id: str) -> bool:
    return bool(ENTITY_ID_PATTERN.fullmatch(entity_id))


def is_valid_agent_name(name: str) -> bool:
    """An agent id, bare (`research_agent`), qualified by its org (`acme:research_agent`)
    or of the shared namespace (`:research_agent`)."""
    org, _, agent = name.rpartition(ORG_SEPARATOR)
    return is_valid_entity_id(agent) and (not org or is_valid_entity_id(org))


def validate_agent_name(value: str, field: str) -> str:
    """An agent id a caller sends: its own org's bare, another's `org:agent`."""
    if not is_valid_agent_name(value):
        raise InvalidArgument(field, f"{value[:140]!r} must be {AGENT_NAME_RULE}")
    return value


def qualified(namespace: str, name: str) -> str:
    """A name a caller of organisation `namespace` sent, as the store keeps it: its own
    organisation's `org:name`; a name qualified already stays, and one of the shared
    namespace (`:name`, or any bare name of a caller without an org) is kept bare."""
    if name.startswith(ORG_SEPARATOR):
        return name[1:]
    if not namespace or not name or ORG_SEPARATOR in name:
        return name
    return f"{namespace}{ORG_SEPARATOR}{name}"


def shown(namespace: str, name: str) -> str:
    """A stored name as a caller of organisation `namespace` reads it: bare when it is its
    own organisation's, `:name` when of the shared namespace, else as stored."""
    if not namespace or not name:
        return name
    if ORG_SEPARATOR not in name:
        return f"{ORG_SEPARATOR}{name}"
    prefix = f"{namespace}{ORG_SEPARATOR}"
    return name[len(prefix) :] if name.startswith(prefix) else name


def bare(name: str) -> str:
    """A name without its org: what texts written for the org's own people call it."""
    return name.rpartition(ORG_SEPARATOR)[2]


def qualified_scope(namespace: str, value: str) -> str:
    """A scope or owner as the store keeps it: an agent's qualified by its org."""
    kind, separator, entity_id = value.partition(":")
    return f"agent:{qualified(namespace, entity_id)}" if separator and kind == "agent" else value


def shown_scope(namespace: str, value: str) -> str:
    kind, separator, entity_id = value.partition(":")
    return f"agent:{shown(namespace, entity_id)}" if separator and kind == "agent" else value


def validate_scope(value: str, field: str) -> str:
    """Returns the scope if it is `public` or `kind:id` with a known kind, else raises."""
    if value == PUBLIC:
        return value
    kind, sep, entity_id = value.partition(":")
    if not sep or kind not in _PRIORITY:
        raise InvalidArgument(
            field,
            f"{value!r} is not a scope: use kind:id with kind one of "
            f"{', '.join(SCOPE_KINDS)}, or exactly 'public'",
        )
    if kind == "agent" and not is_valid_agent_name(entity_id):
        raise InvalidArgument(field, f"the id in {value!r} must be {AGENT_NAME_RULE}")
    if kind != "agent" and not is_valid_entity_id(entity_id):
        raise InvalidArgument(field, f"the id in {value!r} must be {ENTITY_ID_RULE}")
    return value


def validate_owner(value: str, field: str) -> str:
    """An owner is a single `user:id` or `agent:id` (`agent:org:id` for another org's)."""
    kind, sep, entity_id = value.partition(":")
    valid = (
        is_valid_entity_id(entity_id)
        if kind == "user"
        else kind == "agent" and is_valid_agent_name(entity_id)
    )
    if not sep or not valid:
        raise InvalidArgument(field, f"{value!r} is not an owner: use user:ID or agent:ID")
    return value


def priority(scope_value: str) -> int:
    """0 for the most personal scope (user) up to 5 for public."""
    return _PRIORITY.get(scope_value.partition(":")[0], _PUBLIC_RANK)


def best_priority(scopes: Iterable[str], visible: frozenset[str]) -> int:
    """The highest-priority scope of a record among those the caller can see."""
    return min((priority(s) for s in scopes if s in visible), default=_PUBLIC_RANK)
