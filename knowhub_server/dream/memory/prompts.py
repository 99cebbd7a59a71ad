"""What the historian asks the LLM (as function calls), and how it reads the answers.

Every reader raises LLMError on an unusable answer, so callers can take their fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowhub_server.common.llm.chat import LLMError, ToolCall
from knowhub_server.dream.memory.domain import (
    DISPLAY_NAME_MAX,
    ENTITY_TYPES,
    OBSERVATION_MAX,
    PROFILE_SUMMARY_MAX,
    PROFILE_TAG_MAX,
    PROFILE_TAGS_MAX,
    Job,
    Profile,
    ProfileUpdate,
    local_time,
)

REWRITE_TOOL = "submit_rewrite"
PROFILE_TOOL = "update_profile"
RECONCILE_TOOL = "decide_memory"

REWRITE_SYSTEM = (
    "You are the historian of a chat assistant's memory. Rewrite one observation as an "
    "absolute event that stays true and clear when read alone, months later, anywhere: "
    "replace every pronoun (I, you, he, she, they, 我, 你, 他, 她, 它...) with the name "
    "and id of the person or group it means, every relative time (today, yesterday, last "
    "week, 今天, 昨天, 最近...) with the absolute date, and every relative place (here, "
    "这里, 本地...) with the place's name. Use the source message and the recent messages "
    "only to tell who and what is meant; do not attribute a third person's words to the "
    "sender. Keep every numeric id of the observation. Add nothing else. Answer by "
    f"calling {REWRITE_TOOL}."
)

PROFILE_SYSTEM = (
    "You maintain profiles of the users and groups a chat assistant talks with, as short "
    "Markdown. Given the current profiles and new events, call "
    f"{PROFILE_TOOL} once for each profile that the events give stable new information "
    "about (identity, preferences, skills, habits, roles); merge the new information "
    "into the existing summary, keep what is still true, drop what the events "
    "contradict. Skip a profile (call nothing for it) when the events hold nothing "
    "durable about it or contradict it without certainty."
)

RECONCILE_SYSTEM = (
    "You keep a chat assistant's memory of a person consistent. Compare a new fact with "
    "the person's existing facts (numbered) and decide one action: add (new information "
    "that replaces nothing), update (it changes one existing fact, e.g. a new city, job "
    "or preference: name that fact as target), delete (it says one existing fact no "
    "longer holds and adds nothing to store: name it as target), or noop (an existing "
    f"fact already says this). Answer by calling {RECONCILE_TOOL}."
)

RECONCILE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": RECONCILE_TOOL,
            "description": "Decide what the new fact does to the existing ones.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "update", "delete", "noop"]},
                    "target": {
                        "type": "integer",
                        "description": "The number of the existing fact "
                        "updated, deleted or already holding this (not for add).",
                    },
                    "reason": {"type": "string", "description": "Why, in one short sentence."},
                },
                "required": ["action"],
            },
        },
    }
]

REWRITE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": REWRITE_TOOL,
            "description": "Submit the observation rewritten as an absolute event.",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The rewritten event, plain text."},
                },
                "required": ["text"],
            },
        },
    }
]

PROFILE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": PROFILE_TOOL,
            "description": "Replace one profile with its merged version.",
            "parameters": {
                "type": "object",
                "properties": {
                    "entity_type": {"type": "string", "enum": list(ENTITY_TYPES)},
                    "entity_id": {"type": "string"},
                    "name": {"type": "string", "description": "The user's or group's name."},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Interests, skills, traits: short labels.",
                    },
                    "summary": {"type": "string", "description": "The profile body, Markdown."},
                },
                "required": ["entity_type", "entity_id", "name", "tags", "summary"],
            },
        },
    }
]


def _context_block(job: Job, zone: str) -> str:
    context = job.context
    lines = [
        f"Time of the conversation ({zone}): {local_time(job.timestamp, zone)}",
        f"Conversation: {context.request_type}",
        f"user_id: {context.user_id}",
        f"sender_id: {context.sender_id or context.user_id}"
        + (f" (name: {context.sender_name})" if context.sender_name else ""),
    ]
    if context.group_id:
        lines.append(
            f"group_id: {context.group_id}"
            + (f" (name: {context.group_name})" if context.group_name else "")
        )
    lines.append(f"Source message: {context.source_message or '(none)'}")
    recent = "\n".join(f"- {line}" for line in context.recent_messages) or "(none)"
    lines.append(f"Recent messages, oldest first:\n{recent}")
    if job.memo:
        lines.append(f"What the assistant did this turn: {job.memo}")
    return "\n".join(lines)


def rewrite_prompt(job: Job, observation: str, zone: str, feedback: str = "") -> str:
    prompt = f"{_context_block(job, zone)}\n\nObservation to rewrite:\n{observation}"
    if feedback:
        prompt += (
            f"\n\nYour previous rewrite was rejected by the absolutization gate "
            f"({feedback}). Fix each point."
        )
    return prompt


def reconcile_prompt(
    new_text: str, at: float, existing: Sequence[tuple[str, float]], zone: str
) -> str:
    facts = "\n".join(
        f"{n}. ({local_time(when, zone)}) {text}" for n, (text, when) in enumerate(existing, 1)
    )
    return (
        f"New fact ({local_time(at, zone)}):\n{new_text}\n\n"
        f"Existing facts of the same person:\n{facts}"
    )


def read_decision(calls: Sequence[ToolCall], candidates: int) -> tuple[str, int, str]:
    """(action, target index or -1, reason) of the first usable call."""
    for call in calls:
        if call.name != RECONCILE_TOOL:
            continue
        action, target = call.arguments.get("action"), call.arguments.get("target")
        reason = call.arguments.get("reason")
        reason = reason[:500] if isinstance(reason, str) else ""
        if action == "add":
            return action, -1, reason
        if (
            action in ("update", "delete", "noop")
            and isinstance(target, int)
            and not isinstance(target, bool)
            and 1 <= target <= candidates
        ):
            return action, target - 1, reason
    raise LLMError(f"the LLM did not call {RECONCILE_TOOL} with an action and a valid target")


def read_rewrite(calls: Sequence[ToolCall]) -> str:
    for call in calls:
        text = call.arguments.get("text") if call.name == REWRITE_TOOL else None
        if isinstance(text, str) and text.strip():
            if len(text) > 2 * OBSERVATION_MAX:
                raise LLMError("the rewrite is far longer than the observation")
            return text.strip()
    raise LLMError(f"the LLM did not call {REWRITE_TOOL} with a text")


def profile_prompt(
    job: Job, texts: Sequence[str], current: dict[tuple[str, str], Profile | None], zone: str
) -> str:
    profiles = []
    for (entity_type, entity_id), profile in current.items():
        body = profile.markdown if profile else "(no profile yet)"
        profiles.append(f"### {entity_type} {entity_id}\n{body}")
    events = "\n".join(f"- {text}" for text in texts)
    return (
        f"{_context_block(job, zone)}\n\nNew events:\n{events}\n\n"
        "Profiles you may update:\n" + "\n\n".join(profiles)
    )


def read_profile_updates(
    calls: Sequence[ToolCall], allowed: Sequence[tuple[str, str]]
) -> list[ProfileUpdate]:
    """The usable update of each allowed profile (the first call for it wins); calls for
    other entities or with malformed arguments are left out."""
    updates: dict[tuple[str, str], ProfileUpdate] = {}
    for call in calls:
        if call.name != PROFILE_TOOL:
            continue
        update = _profile_update(call.arguments)
        if update is None:
            continue
        target = (update.entity_type, update.entity_id)
        if target in allowed and target not in updates:
            updates[target] = update
    return list(updates.values())


def _profile_update(args: dict[str, Any]) -> ProfileUpdate | None:
    entity_type, entity_id = args.get("entity_type"), args.get("entity_id")
    name, tags, summary = args.get("name", ""), args.get("tags", []), args.get("summary")
    if not isinstance(entity_type, str) or not isinstance(entity_id, (str, int)):
        return None
    if not isinstance(summary, str) or not summary.strip() or not isinstance(name, str):
        return None
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return None
    tags = list(dict.fromkeys(t.strip()[:PROFILE_TAG_MAX] for t in tags if t.strip()))
    return ProfileUpdate(
        entity_type=entity_type,
        entity_id=str(entity_id),
        name=name.strip()[:DISPLAY_NAME_MAX],
        tags=tags[:PROFILE_TAGS_MAX],
        summary=summary.strip()[:PROFILE_SUMMARY_MAX],
    )
