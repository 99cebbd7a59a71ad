"""The agent tools (the knowledge, memory and trace tools) as MCP tools: the
SDK's schemas (knowhub.tools), arguments checked against them, and the SDK call that runs
each tool."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from knowhub import KnowHub
from knowhub.errors import KnowHubError
from knowhub.tools import openai_tools, run_tool

# Hints for clients that ask before a tool changes something: these only read, and a
# slim (unless dry_run) merges records into others and removes them.
_READ_ONLY = {
    "knowledge_search",
    "knowledge_list",
    "resource_get",
    "memory_search_events",
    "memory_recent_memos",
    "memory_get_profile",
    "memory_search_profiles",
    "memory_documents_list",
    "memory_document_read",
    "memory_job",
    "trace_evaluation_prompt",
}
_DESTRUCTIVE = {"knowledge_slim", "knowledge_delete", "trace_delete", "memory_delete_event"}

TOOLS: list[types.Tool] = [
    types.Tool(
        name=function["name"],
        description=function["description"],
        input_schema=function["parameters"],
        annotations=types.ToolAnnotations(
            read_only_hint=function["name"] in _READ_ONLY,
            destructive_hint=function["name"] in _DESTRUCTIVE,
        ),
    )
    for function in (schema["function"] for schema in openai_tools())
]
_BY_NAME: dict[str, types.Tool] = {tool.name: tool for tool in TOOLS}
_VALIDATORS = {tool.name: Draft202012Validator(tool.input_schema) for tool in TOOLS}


class ArgumentError(ValueError):
    """An argument does not fit the tool's schema; the message names it."""


def input_schema(name: str) -> dict[str, Any] | None:
    tool = _BY_NAME.get(name)
    return tool.input_schema if tool else None


def check_arguments(name: str, arguments: Mapping[str, Any]) -> None:
    """Raises ArgumentError for an unknown argument or one the schema rejects."""
    unknown = sorted(set(arguments) - set(_BY_NAME[name].input_schema["properties"]))
    if unknown:
        raise ArgumentError(f"unknown argument {', '.join(map(repr, unknown))} of {name}")
    error = best_match(_VALIDATORS[name].iter_errors(dict(arguments)))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path)
        raise ArgumentError(f"{where}: {error.message}" if where else error.message)


def call(kh: KnowHub, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """Runs one tool (blocking). The hub's refusals and bad arguments come back as a
    tool error (isError) whose text says what was wrong, so the agent can fix its call."""
    try:
        check_arguments(name, arguments)
        result = run_tool(kh, name, arguments)
    except KnowHubError as error:
        return error_result(f"{error.code}: {error.message}")
    except (TypeError, ValueError) as error:
        return error_result(f"INVALID_ARGUMENT: {error}")
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
