"""Memory requests' parts: the conversation context, the enums' names, and the query that
auto-injection searches with."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from typing import Any

from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import dream_pb2

from knowhub.models.base import to_timestamp

REQUEST_TYPES = EnumNames(dream_pb2.RequestType.DESCRIPTOR)  # group, private
ENTITY_TYPES = EnumNames(dream_pb2.EntityType.DESCRIPTOR)  # user, group
MODES = EnumNames(dream_pb2.SearchMode.DESCRIPTOR)  # tool, auto
_CONTEXT_KEYS = frozenset(
    {
        "user_id",
        "group_id",
        "sender_id",
        "request_type",
        "source_message",
        "recent_messages",
        "sender_name",
        "group_name",
        "timestamp",
    }
)


def request_type_value(name: str | None, group_id: str) -> str:
    """The named request type, else group when a group is given, else private."""
    return REQUEST_TYPES.proto_name(name or ("group" if group_id else "private"), "request_type")


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
        user_id=str(context.get("user_id") or ""),
        group_id=group_id,
        sender_id=str(context.get("sender_id") or ""),
        request_type=request_type_value(context.get("request_type"), group_id),
        source_message=context.get("source_message") or "",
        recent_messages=list(context.get("recent_messages") or []),
        sender_name=context.get("sender_name") or "",
        group_name=context.get("group_name") or "",
        timestamp=to_timestamp(context.get("timestamp")),
    )


# Auto-injection's query: the current frame's <message><content>, else the question;
# a short one gets a line of context so "this" / "that one" queries still find something.
_CONTENT = re.compile(r"<message\b[^>]*>.*?<content>(.*?)</content>", re.DOTALL)
SHORT_QUERY_MAX = 20
_CONTEXT_WORDS = {
    "en": {
        "group": "group chat",
        "private": "private chat",
        "mentioned": "the bot was mentioned",
        "sender": "sender",
    },
    "zh": {"group": "群聊", "private": "私聊", "mentioned": "@了机器人", "sender": "发送者"},
}


def language(name: str | None) -> str:
    """The language asked for, else KNOWHUB_LANGUAGE, else English."""
    chosen = name or os.environ.get("KNOWHUB_LANGUAGE") or "en"
    if chosen not in _CONTEXT_WORDS:
        raise ValueError(f"language: {chosen!r} is not one of {', '.join(_CONTEXT_WORDS)}")
    return chosen


def auto_inject_query(
    question: str,
    context: Mapping[str, Any],
    *,
    mentioned: bool = False,
    language_name: str | None = None,
) -> str:
    """The query auto-injection searches events with: the content of the last
    <message><content>...</content></message> of `question` (else `question` itself);
    when that is at most 20 characters, a line of context follows: group or private chat,
    whether the bot was @-mentioned, the sender, the group's name."""
    frames = _CONTENT.findall(question)
    text = html.unescape(frames[-1]).strip() if frames else question.strip()
    if len(text) > SHORT_QUERY_MAX:
        return text
    words = _CONTEXT_WORDS[language(language_name)]
    group = str(context.get("group_id") or "")
    parts = [
        f"{words['group']} {context.get('group_name') or group}".strip()
        if group
        else words["private"]
    ]
    if mentioned:
        parts.append(words["mentioned"])
    sender = " ".join(
        str(context.get(k) or "") for k in ("sender_name", "sender_id")
    ).strip() or str(context.get("user_id") or "")
    if sender:
        parts.append(f"{words['sender']} {sender}")
    return f"{text}\n({', '.join(parts)})"
