"""Memory requests' parts: the conversation context and the enums' names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowhub.models.base import EnumNames, to_timestamp
from knowhub.v1 import dream_pb2

REQUEST_TYPES = EnumNames(dream_pb2.RequestType.DESCRIPTOR)  # group, private
ENTITY_TYPES = EnumNames(dream_pb2.EntityType.DESCRIPTOR)  # user, group
MODES = EnumNames(dream_pb2.SearchMode.DESCRIPTOR)  # tool, auto
_CONTEXT_KEYS = frozenset({"user_id", "group_id", "sender_id", "request_type",
                           "source_message", "recent_messages", "sender_name", "group_name",
                           "timestamp"})


def request_type_value(name: str | None, group_id: str) -> str:
    """The named request type, else group when a group is given, else private."""
    return REQUEST_TYPES.proto_name(name or ("group" if group_id else "private"),
                                    "request_type")


def entity_type_value(name: str | None) -> str:
    """The named entity type; any when None."""
    return ENTITY_TYPES.proto_name(name or "", "entity_type")


def context_to_proto(context: Mapping[str, Any]) -> dream_pb2.MemoryContext:
    """The conversation's context: user_id, group_id, sender_id, request_type,
    source_message, recent_messages (plus sender_name, group_name, timestamp)."""
    unknown = set(context) - _CONTEXT_KEYS
    if unknown:
        raise ValueError(f"unknown context field(s): {', '.join(sorted(unknown))}")
    group_id = str(context.get("group_id") or "")
    return dream_pb2.MemoryContext(
        user_id=str(context.get("user_id") or ""), group_id=group_id,
        sender_id=str(context.get("sender_id") or ""),
        request_type=request_type_value(context.get("request_type"), group_id),
        source_message=context.get("source_message") or "",
        recent_messages=list(context.get("recent_messages") or []),
        sender_name=context.get("sender_name") or "",
        group_name=context.get("group_name") or "",
        timestamp=to_timestamp(context.get("timestamp")))
