"""The agent tools as OpenAI function-calling schemas, and their execution: the
knowledge tools (and knowledge_ask, resource_save / resource_get), the memory
tools (memory_remember, memory_search_events, memory_recent_memos, memory_get_profile,
memory_search_profiles, memory_job, memory_edit_event, memory_delete_event,
memory_undelete_event, memory_edit_profile), the agent's own memory documents
(memory_documents_list, memory_document_read, memory_document_append,
memory_document_rewrite) and the trace tools (trace_evaluation_prompt,
trace_submit_evaluation, trace_delete).

    tools = knowhub.tools.openai_tools()                 # pass to chat.completions.create
    result = knowhub.tools.call_tool(kh, name, arguments)  # run the model's tool call
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from knowhub._sync.client import KnowHub
from knowhub.errors import KnowHubError
from knowhub.models.base import Model, iso
from knowhub.models.knowledge import KNOWLEDGE_TYPES

RESOURCE_CONTENT_TYPES = ["text", "code", "credential", "cookie"]

_CASE = {
    "type": "object",
    "description": "One use of the knowledge and how it went.",
    "properties": {
        "task": {"type": "string", "description": "The task it was used for."},
        "outcome": {"type": "string", "description": "What happened."},
        "reason": {"type": "string", "description": "Why it helped or harmed."},
        "trace_id": {"type": "string", "description": "Your trace where it was used."},
        "timestamp": {"type": "string", "description": "When: ISO 8601; now by default."},
    },
}
_FEEDBACK = {
    "type": "object",
    "properties": {
        "knowledge_id": {"type": "string", "description": "The record's id."},
        "is_helpful": {"type": "boolean", "description": "Whether it helped."},
        "case": _CASE,
    },
    "required": ["knowledge_id", "is_helpful"],
}
_TYPES = {
    "type": "array",
    "items": {"type": "string", "enum": list(KNOWLEDGE_TYPES)},
    "description": "Only these knowledge types.",
}
_TOP_K = {
    "type": "integer",
    "minimum": 1,
    "maximum": 100,
    "description": "How many results (the hub's default when left out).",
}
_MIN_SCORE = {
    "type": "integer",
    "minimum": 1,
    "maximum": 5,
    "description": "Leave out records their author rated lower (the hub's default when left out).",
}
_MIN_RELEVANCE = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "description": "Only records at least this relevant (0..1); default: the hub's floor.",
}
_SCOPES = {
    "type": "array",
    "items": {"type": "string"},
    "description": "user:ID, agent:ID, project:ID, team:ID, org:ID or public.",
}
_CONTEXT = {
    "type": "object",
    "description": "The conversation the turn belongs to.",
    "properties": {
        "user_id": {"type": "string", "description": "The user you talk with."},
        "group_id": {"type": "string", "description": "Empty in a private chat."},
        "sender_id": {"type": "string", "description": "Who sent the message."},
        "sender_name": {"type": "string", "description": "The sender's display name."},
        "group_name": {"type": "string", "description": "The group's display name."},
        "source_message": {"type": "string", "description": "The message this turn answers."},
        "recent_messages": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The messages before it, oldest first.",
        },
    },
    "required": ["user_id"],
}

_DOCUMENT_PATH = {
    "type": "string",
    "description": "e.g. people/alice.md: /-separated "
    "segments of letters, digits, _ - and ., not starting with a dot.",
}

_EVENT_ID = {
    "type": "string",
    "description": "The event's id, as memory_search_events or memory_job gave it.",
}


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_SCHEMAS = [
    _function(
        "knowledge_search",
        "Search the knowledge base for experience relevant to a "
        "task. Returns the records that answer it, most relevant first (the better rated "
        "first among equally relevant ones).",
        {
            "query": {"type": "string", "description": "What you need to know."},
            "top_k": _TOP_K,
            "min_score": _MIN_SCORE,
            "types": _TYPES,
            "min_relevance": _MIN_RELEVANCE,
        },
        ["query"],
    ),
    _function(
        "knowledge_save",
        "Save new knowledge: the situation (task) and what was "
        "learned (content). If you (the same owner, in the same scopes) saved the same "
        "task and content before, that record is returned (existing: true) and "
        "nothing is written.",
        {
            "task": {"type": "string", "description": "In what situation, for what goal."},
            "content": {"type": "string", "description": "The knowledge itself."},
            "types": {**_TYPES, "minItems": 1, "description": "What kind of knowledge."},
            "tags": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": 'Labels, e.g. {"domain": "crawling"}.',
            },
            "scopes": {
                **_SCOPES,
                "description": "Who may see it: user:ID, agent:ID, "
                "project:ID, team:ID, org:ID or public (publishers only); "
                "default: your org.",
            },
            "owner": {
                "type": "string",
                "description": "Who may change it: user:ID or "
                "agent:ID, one of yours; default: you.",
            },
            "source_name": {"type": "string", "description": "The tool or resource it came from."},
            "source_category": {
                "type": "string",
                "default": "exp",
                "description": "paper, exp, skill, book, ...",
            },
            "urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Reference URLs (http or https).",
            },
            "agent_id": {
                "type": "string",
                "description": "The agent you act for, if your "
                "token lets you act for several; default: your token's.",
            },
            "submitted_by": {
                "type": "string",
                "description": "The person responsible for the agent.",
            },
            "score": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "default": 3,
                "description": "How good you rate it.",
            },
            "message_id": {"type": "string", "description": "The message it came from."},
            "resource_ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Ids of resources it refers to.",
            },
            "trace_id": {"type": "string", "description": "The trace the knowledge came from."},
            "allow_duplicate": {
                "type": "boolean",
                "default": False,
                "description": "Save a second record even if the same exists.",
            },
        },
        ["task", "content", "types"],
    ),
    _function(
        "knowledge_edit",
        "Correct one of your knowledge records: write the fields "
        "given (the others stay). The record keeps its id and counters; its state "
        "before is kept as a version.",
        {
            "knowledge_id": {"type": "string", "description": "The record to edit."},
            "task": {"type": "string", "description": "The new task."},
            "content": {"type": "string", "description": "The new content."},
            "tags": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "The new tags ({} clears them).",
            },
            "types": {**_TYPES, "minItems": 1, "description": "The new types."},
            "scopes": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "The new scopes, each one you can see.",
            },
            "resource_ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The new resource ids ([] clears them).",
            },
            "note": {"type": "string", "description": "Why you change it."},
        },
        ["knowledge_id"],
    ),
    _function(
        "knowledge_delete",
        "Delete one of your knowledge records. It can be "
        "restored with knowledge_undelete until its purge_time.",
        {
            "knowledge_id": {"type": "string", "description": "The record to delete."},
        },
        ["knowledge_id"],
    ),
    _function(
        "knowledge_undelete",
        "Restore a knowledge record you deleted.",
        {
            "knowledge_id": {"type": "string", "description": "The deleted record."},
        },
        ["knowledge_id"],
    ),
    _function(
        "knowledge_ask",
        "Ask the knowledge base a question: it searches, and its "
        "LLM answers from the records found, citing their ids. Give trace_id (and the "
        "message sequence) to log the question for evaluation later.",
        {
            "query": {"type": "string", "description": "The question."},
            "top_k": _TOP_K,
            "min_score": _MIN_SCORE,
            "types": _TYPES,
            "min_relevance": _MIN_RELEVANCE,
            "trace_id": {
                "type": "string",
                "description": "Your trace, to log the question and answer as its query event.",
            },
            "sequence": {
                "type": "integer",
                "minimum": 0,
                "description": "The message sequence the question belongs to.",
            },
            "goal_id": {"type": "string", "description": "The goal of your trace it serves."},
        },
        ["query"],
    ),
    _function(
        "knowledge_update",
        "Record whether a knowledge record helped or harmed, "
        "rescore it, or evolve its content with feedback.",
        {
            "knowledge_id": {"type": "string", "description": "The record's id."},
            "add_helpful_case": {**_CASE, "description": "A use where it helped."},
            "add_harmful_case": {**_CASE, "description": "A use where it harmed."},
            "update_score": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "description": "A new rating, for records you own.",
            },
            "evolve_feedback": {"type": "string", "description": "How the content should improve."},
        },
        ["knowledge_id"],
    ),
    _function(
        "knowledge_batch_update",
        "Report for several knowledge records whether each helped.",
        {
            "feedback_list": {
                "type": "array",
                "description": "One item per record.",
                "items": _FEEDBACK,
            },
        },
        ["feedback_list"],
    ),
    _function(
        "knowledge_list",
        "List saved knowledge, newest first.",
        {
            "limit": {**_TOP_K, "default": 10, "description": "How many records."},
            "types": _TYPES,
            "scopes": {**_SCOPES, "description": "Only records in these scopes."},
        },
        [],
    ),
    _function(
        "knowledge_slim",
        "Merge near-duplicate knowledge records.",
        {
            "model": {"type": "string", "description": "LLM model for merging."},
            "dry_run": {
                "type": "boolean",
                "default": False,
                "description": "Only report what would be merged.",
            },
        },
        [],
    ),
    _function(
        "resource_save",
        "Save a resource (code snippet, credential or cookie) that "
        "knowledge can refer to by its id in resource_ids. Put passwords, tokens and "
        "cookies in secure_body: it is encrypted and shown only to those allowed.",
        {
            "id": {
                "type": "string",
                "description": "Path-like id of lowercase "
                "letters, digits and _ - . separated by /, e.g. "
                "code/selenium/undetected_login or credentials/website_a.",
            },
            "title": {"type": "string", "description": "A short title."},
            "body": {
                "type": "string",
                "description": "The public part: code, or how to use the secret.",
            },
            "secure_body": {"type": "string", "description": "The secret part."},
            "content_type": {
                "type": "string",
                "enum": RESOURCE_CONTENT_TYPES,
                "default": "text",
                "description": "What it holds.",
            },
            "metadata": {
                "type": "object",
                "description": 'e.g. {"language": "python"} or {"acquired_at": "..."}',
            },
            "scopes": {**_SCOPES, "description": "Who may see it; default: your org."},
            "expires_at": {
                "type": "string",
                "description": "ISO 8601; when a cookie or credential stops working.",
            },
            "expected_version": {
                "type": "integer",
                "minimum": 0,
                "description": "Save only if the resource is at this version "
                "(0: only if it is new).",
            },
        },
        ["id", "title", "body"],
    ),
    _function(
        "resource_get",
        "Read a resource by id; include_secure also returns its "
        "secure_body, if you are allowed to see it.",
        {
            "id": {"type": "string", "description": "The resource's id."},
            "include_secure": {
                "type": "boolean",
                "default": False,
                "description": "Also return its secure_body.",
            },
            "version": {
                "type": "integer",
                "minimum": 1,
                "description": "An earlier version; the latest by default.",
            },
        },
        ["id"],
    ),
    *[
        _function(name, description, properties, required)
        for name, description, properties, required in (
            (
                "memory_remember",
                "Remember this turn: a short memo of what you did, and new "
                "facts about the user or group (observations), which are rewritten in the "
                "background into absolute events and merged into their profiles.",
                {
                    "memo": {"type": "string", "description": "What you did this turn, briefly."},
                    "observations": {
                        "type": "array",
                        "items": {"type": "string"},
                        "maxItems": 20,
                        "description": "New facts learned from this message.",
                    },
                    "context": _CONTEXT,
                    "force": {
                        "type": "boolean",
                        "default": False,
                        "description": "Store a rewrite "
                        "that fails the absolutization check (entity ids must still match).",
                    },
                    "wait": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 60,
                        "default": 0,
                        "description": "Seconds to wait for the background work to finish; "
                        "the result's job then says what was stored.",
                    },
                },
                ["context"],
            ),
            (
                "memory_search_events",
                "Recall past events (what happened, who said what) by "
                "meaning, newest first among equally relevant ones; time_from / time_to filter "
                "hard.",
                {
                    "query": {"type": "string", "description": "Keywords or a description."},
                    "target_user_id": {"type": "string", "description": "Only this user's events."},
                    "target_group_id": {"type": "string", "description": "Only this group's."},
                    "top_k": _TOP_K,
                    "time_from": {"type": "string", "description": "ISO 8601"},
                    "time_to": {"type": "string", "description": "ISO 8601"},
                },
                ["query"],
            ),
            (
                "memory_recent_memos",
                "The last memos of a conversation (short-term memory), oldest first.",
                {
                    "user_id": {"type": "string", "description": "The user of a private chat."},
                    "group_id": {
                        "type": "string",
                        "description": "A group chat's; else the user's private conversation.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "How many memos; the hub's default when 0.",
                    },
                },
                [],
            ),
            (
                "memory_get_profile",
                "Read the profile of a user or a group.",
                {
                    "entity_type": {
                        "type": "string",
                        "enum": ["user", "group"],
                        "description": "A user's or a group's profile.",
                    },
                    "entity_id": {"type": "string", "description": "The user's or group's id."},
                },
                ["entity_type", "entity_id"],
            ),
            (
                "memory_search_profiles",
                "Find users or groups whose profile matches a description.",
                {
                    "query": {"type": "string", "description": "The description to match."},
                    "entity_type": {
                        "type": "string",
                        "enum": ["user", "group"],
                        "description": "Only users or only groups; both by default.",
                    },
                    "top_k": _TOP_K,
                },
                ["query"],
            ),
            (
                "memory_job",
                "Follow a memory_remember call: whether its background job is "
                "pending, processing, done or failed, the events it stored and what it decided "
                "for each observation (add, update of an older fact, delete, or nothing new).",
                {
                    "job_id": {
                        "type": "string",
                        "description": "The job_id memory_remember returned.",
                    },
                },
                ["job_id"],
            ),
            (
                "memory_edit_event",
                "Correct the text of an event you remembered (every copy of it follows).",
                {
                    "event_id": _EVENT_ID,
                    "text": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 2000,
                        "description": "The corrected text, standing on its own (names and "
                        "dates, no pronouns or relative times).",
                    },
                },
                ["event_id", "text"],
            ),
            (
                "memory_delete_event",
                "Delete an event you remembered that is wrong; "
                "memory_undelete_event brings it back for a while (until its purge_at).",
                {
                    "event_id": _EVENT_ID,
                },
                ["event_id"],
            ),
            (
                "memory_undelete_event",
                "Bring back an event you deleted.",
                {
                    "event_id": _EVENT_ID,
                },
                ["event_id"],
            ),
            (
                "memory_edit_profile",
                "Correct a user's or group's profile: the fields given are "
                "set, the others stay; the previous revision is kept.",
                {
                    "entity_type": {
                        "type": "string",
                        "enum": ["user", "group"],
                        "description": "A user's or a group's profile.",
                    },
                    "entity_id": {"type": "string", "description": "The user's or group's id."},
                    "name": {"type": "string", "description": "The new name."},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The new tags, replacing the old ones.",
                    },
                    "summary": {
                        "type": "string",
                        "description": "The new profile body (Markdown).",
                    },
                },
                ["entity_type", "entity_id"],
            ),
            (
                "memory_documents_list",
                "List your own memory documents (Markdown notes you "
                "keep across conversations) by path.",
                {
                    "include_content": {
                        "type": "boolean",
                        "default": False,
                        "description": "Also return each document's content.",
                    },
                },
                [],
            ),
            (
                "memory_document_read",
                "Read one of your memory documents (its current revision, or an earlier kept one).",
                {
                    "path": _DOCUMENT_PATH,
                    "revision": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "An earlier revision; the current one by default.",
                    },
                },
                ["path"],
            ),
            (
                "memory_document_append",
                "Add lines at the end of one of your memory documents "
                "(created when missing). The previous revision is kept.",
                {
                    "path": _DOCUMENT_PATH,
                    "content": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 50000,
                        "description": "The lines to add (Markdown).",
                    },
                },
                ["path", "content"],
            ),
            (
                "memory_document_rewrite",
                "Replace the whole content of one of your memory "
                "documents (created when missing). The previous revision is kept. Pass the "
                "revision you read as expected_revision so a concurrent change is not lost.",
                {
                    "path": _DOCUMENT_PATH,
                    "content": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 50000,
                        "description": "The whole new content (Markdown).",
                    },
                    "expected_revision": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The revision you read (0: the document must not exist).",
                    },
                },
                ["path", "content"],
            ),
        )
    ],
    _function(
        "trace_evaluation_prompt",
        "The prompt for evaluating the knowledge your "
        "trace's queries returned (those still waiting for a verdict); empty when "
        "none waits. Answer it, then give the answer to trace_submit_evaluation.",
        {
            "trace_id": {"type": "string", "description": "Your trace."},
            "mission": {"type": "string", "description": "The task; the trace's by default."},
            "goal": {"type": "string", "description": "The current goal."},
        },
        ["trace_id"],
    ),
    _function(
        "trace_submit_evaluation",
        "Record your evaluation of the knowledge a trace's "
        "queries returned: your answer to trace_evaluation_prompt, as written. An "
        "answer without the evaluation JSON is logged and reported (parse_failed); "
        "nothing fails.",
        {
            "trace_id": {"type": "string", "description": "Your trace."},
            "raw_text": {
                "type": "string",
                "description": 'Your answer, with {"evaluations": [...]} as the prompt asks.',
            },
            "trigger": {
                "type": "string",
                "enum": ["goal_completion", "compression", "task_completion"],
                "description": "The point the evaluation was made at.",
            },
        },
        ["trace_id"],
    ),
    _function(
        "trace_delete",
        "Delete one of your traces with its whole log.",
        {
            "trace_id": {"type": "string", "description": "The trace to delete."},
        },
        ["trace_id"],
    ),
]


def openai_tools() -> list[dict[str, Any]]:
    """The tool definitions for `tools=` of an OpenAI-compatible chat completion.

    Returns:
        A fresh copy of the function schemas, one per tool (the OpenAI tools reference
        lists them).
    """
    return copy.deepcopy(_SCHEMAS)


def _save(kh: KnowHub, args: dict[str, Any]) -> dict[str, Any]:
    saved = kh.knowledge.save_unless_exists(**args)
    return {**saved.knowledge.to_dict(), "existing": saved.existing}


def _batch_update(kh: KnowHub, args: dict[str, Any]) -> dict[str, Any]:
    results = kh.knowledge.batch_update(**args)
    return {"results": [r.to_dict() for r in results], "updated": sum(1 for r in results if r.ok)}


def _list(kh: KnowHub, args: dict[str, Any]) -> dict[str, Any]:
    page = kh.knowledge.list(**args)
    return {"items": [k.to_dict() for k in page], "count": len(page)}


def _listed(name: str, items: Sequence[Model]) -> dict[str, Any]:
    return {name: [item.to_dict() for item in items], "count": len(items)}


_RUNNERS: dict[str, Callable[[KnowHub, dict[str, Any]], dict[str, Any]]] = {
    "knowledge_search": lambda kh, args: kh.knowledge.search(**args).to_dict(),
    "knowledge_ask": lambda kh, args: kh.knowledge.ask(**args).to_dict(),
    "knowledge_save": _save,
    "knowledge_edit": lambda kh, args: kh.knowledge.edit(**args).to_dict(),
    "knowledge_delete": lambda kh, args: {"purge_time": iso(kh.knowledge.delete(**args))},
    "knowledge_undelete": lambda kh, args: kh.knowledge.undelete(**args).to_dict(),
    "knowledge_update": lambda kh, args: kh.knowledge.update(**args).to_dict(),
    "knowledge_batch_update": _batch_update,
    "knowledge_list": _list,
    "knowledge_slim": lambda kh, args: kh.knowledge.slim(**args).to_dict(),
    "resource_save": lambda kh, args: kh.resources.save(**args).to_dict(),
    "resource_get": lambda kh, args: kh.resources.get(**args).to_dict(),
    "memory_remember": lambda kh, args: kh.memory.remember(**args).to_dict(),
    "memory_search_events": lambda kh, args: kh.memory.search_events(**args).to_dict(),
    "memory_recent_memos": lambda kh, args: _listed("memos", kh.memory.recent_memos(**args)),
    "memory_get_profile": lambda kh, args: kh.memory.get_profile(**args).to_dict(),
    "memory_search_profiles": lambda kh, args: _listed("hits", kh.memory.search_profiles(**args)),
    "memory_job": lambda kh, args: kh.memory.job(**args).to_dict(),
    "memory_edit_event": lambda kh, args: kh.memory.update_event(**args).to_dict(),
    "memory_delete_event": lambda kh, args: kh.memory.delete_event(**args).to_dict(),
    "memory_undelete_event": lambda kh, args: kh.memory.undelete_event(**args).to_dict(),
    "memory_edit_profile": lambda kh, args: kh.memory.update_profile(**args).to_dict(),
    "memory_documents_list": lambda kh, args: _listed("documents", kh.dream.documents(**args)),
    "memory_document_read": lambda kh, args: kh.dream.document(**args).to_dict(),
    "memory_document_append": lambda kh, args: kh.dream.write_document(
        **args, append=True
    ).to_dict(),
    "memory_document_rewrite": lambda kh, args: kh.dream.write_document(**args).to_dict(),
    "trace_evaluation_prompt": lambda kh, args: kh.cognition.evaluation_prompt(**args).to_dict(),
    "trace_submit_evaluation": lambda kh, args: kh.cognition.submit_evaluation(**args).to_dict(),
    "trace_delete": lambda kh, args: kh.cognition.delete_trace(**args).to_dict(),
}


def run_tool(kh: KnowHub, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Runs one tool against a blocking `KnowHub`, raising what the call raises.

    Args:
        kh: The client that makes the call.
        name: One of the tools of `openai_tools()`.
        arguments: The tool's arguments, as its schema names them.

    Returns:
        The result as JSON-ready data.

    Raises:
        KnowHubError: The hub refused the call (its subclass names the gRPC status).
        TypeError: An argument the tool does not take.
        ValueError: An argument the SDK cannot send.
        KeyError: An unknown tool name.
    """
    return _RUNNERS[name](kh, dict(arguments))


def call_tool(kh: KnowHub, name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """Runs one tool call of the model against a blocking `KnowHub`; never raises for
    the call's own failures, so the model can read what went wrong and try again.

    Args:
        kh: The client that makes the call.
        name: The tool the model called.
        arguments: Its arguments, as the JSON text the model wrote or a dict.

    Returns:
        The result as JSON-ready data, or `{"error": {"code", "message"}}` for a call
        the hub refused, an unknown tool or arguments that do not fit.
    """
    if name not in _RUNNERS:
        return {"error": {"code": "NOT_FOUND", "message": f"unknown tool {name!r}"}}
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        if not isinstance(args, dict):
            raise ValueError("the arguments must be a JSON object")
        return run_tool(kh, name, args)
    except KnowHubError as error:
        return {"error": {"code": error.code, "message": error.message}}
    except (TypeError, ValueError, KeyError) as error:
        return {"error": {"code": "INVALID_ARGUMENT", "message": str(error)}}
