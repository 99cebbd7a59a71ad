"""Forgetting a subject: who may ask, and what a subject is, the same in every service."""

from __future__ import annotations

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import InvalidArgument, PermissionDenied
from knowhub_server.common.base.scopes import is_valid_agent_name, is_valid_entity_id
from knowhub_server.common.security.auth import Principal


def forget_subject(principal: Principal, subject: str) -> str:
    """The subject of a forget as the stores keep it (`user:ID`, or `agent:ID` qualified
    by its organisation), once the caller may forget it: an admin, or a user about
    itself."""
    check.text(subject, "subject", check.NAME_MAX, required=True)
    kind, _, entity_id = subject.partition(":")
    valid = (
        is_valid_entity_id(entity_id)
        if kind == "user"
        else kind == "agent" and is_valid_agent_name(entity_id)
    )
    if not valid:
        raise InvalidArgument(
            "subject", f"{subject[:140]!r} is not a subject: use user:ID or agent:ID"
        )
    stored = principal.qualify_scope(subject)
    if not principal.is_admin and stored != principal.user_scope:
        raise PermissionDenied(
            f"subject: only an admin may forget another subject than "
            f"the caller ({principal.user_scope})"
        )
    return stored


def subject_parts(subject: str) -> tuple[str, str]:
    """("user" or "agent", the id) of a stored subject."""
    kind, _, entity_id = subject.partition(":")
    return kind, entity_id
