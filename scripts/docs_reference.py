"""The generated reference pages of the docs site, written at build time by mkdocs-gen-files
(`mkdocs build`), so they cannot drift from the code:

- reference/settings.md — every pydantic settings field (`KNOWHUB_*`) with its default and
  description, from the `config.py` of each server package;
- reference/cli.md — every `knowhub` command with its help, from the argparse parser;
- reference/grpc.md — every service, RPC, message and enum of protos/knowhub/v1 with their
  comments (protoc's source info);
- reference/rest.md — every route of the REST gateway with its parameters, body, answer and
  example, from its OpenAPI document;
- reference/mcp.md and reference/openai-tools.md — every agent tool with its parameters,
  from the MCP server's tool definitions and the SDK's function schemas.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_tools import protoc
from knowhub.tools import openai_tools
from pydantic_settings import BaseSettings

from knowhub_server import cli
from knowhub_server.common.base.config import CONFIG_FILE_NAME
from knowhub_server.gateway import openapi
from knowhub_server.mcp import tools as mcp_tools
from knowhub_server.settings_catalog import settings_classes

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
COMMON = "knowhub_server.common.base"


# ---- Settings ------------------------------------------------------------------------------


def setting_names(settings: type[BaseSettings]) -> list[str]:
    prefix = settings.model_config.get("env_prefix", "")
    return [f"{prefix}{name}".upper() for name in settings.model_fields]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, Path):
        return f"`{value.as_posix()}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`" if value != "" else "empty"


def settings_page() -> str:
    parts = [
        "# Settings\n",
        "Every setting is an environment variable with the prefix `KNOWHUB_`, and a "
        f"line of the configuration file `{CONFIG_FILE_NAME}`, named in lower case "
        'without the prefix: `KNOWHUB_LLM_BASE_URL` is `llm_base_url = "..."` there. '
        f"`knowhub` reads `{CONFIG_FILE_NAME}` in the data directory when there is one, "
        "or the file given by `--config` (or `KNOWHUB_CONFIG`); an environment variable "
        "overrides the file, and a command-line option (`--data-dir`, `--host`, "
        "`--port`) both. A name the file does not know stops the command with one line "
        "([Getting started](../getting-started.md#configure-it) shows a file).\n",
        "This page is generated from the settings classes of each package "
        "(`config.py`), so it lists exactly what the code reads.\n",
    ]
    # The shared settings first, then each package's own.
    ordered = sorted(settings_classes(), key=lambda found: (found[0] != COMMON, found[0]))
    for package, settings in ordered:
        parts.append(f"## {package.removeprefix('knowhub_server.')}\n")
        if settings.__doc__:
            parts.append(settings.__doc__.strip().splitlines()[0] + "\n")
        parts.append("| variable | default | meaning |\n|---|---|---|")
        for name, field in zip(
            setting_names(settings), settings.model_fields.values(), strict=True
        ):
            parts.append(
                f"| `{name}` | {_cell(_default(field.default))} | "
                f"{_cell(field.description or '')} |"
            )
        parts.append("")
    return "\n".join(parts)


# ---- Command line --------------------------------------------------------------------------


def commands(
    parser: argparse.ArgumentParser, path: str = "knowhub"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command, its parser) for the parser and every subcommand under it, depth first."""
    yield path, parser
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def cli_page() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal's width
    parts = [
        "# Command line\n",
        "Every `knowhub` command and its options, generated from the command's own "
        "parser (`knowhub <command> --help` prints the same).\n",
    ]
    for path, parser in commands(cli._parser()):
        parts.append(f"## `{path}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


# ---- gRPC ----------------------------------------------------------------------------------


def proto_files() -> descriptor_pb2.FileDescriptorSet:
    """The KnowHub protos, compiled by protoc with their comments (source info)."""
    sources = sorted(
        p.relative_to(PROTOS).as_posix() for p in (PROTOS / "knowhub" / "v1").glob("*.proto")
    )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "protos.pb"
        status = protoc.main(
            [
                "protoc",
                f"-I{PROTOS}",
                f"-I{_protoc_includes()}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                *sources,
            ]
        )
        if status:
            raise RuntimeError(f"protoc failed ({status}) on {', '.join(sources)}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _protoc_includes() -> str:
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


def _comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {
        tuple(location.path): " ".join(location.leading_comments.split())
        for location in file.source_code_info.location
        if location.leading_comments
    }


def _type_name(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type_name:
        return field.type_name.rsplit(".", 1)[-1]
    kind = descriptor_pb2.FieldDescriptorProto.Type.Name(field.type)
    return kind.removeprefix("TYPE_").lower()


def _messages(
    messages: Any, comments: dict[tuple[int, ...], str], path: tuple[int, ...], prefix: str = ""
) -> Iterator[str]:
    for index, message in enumerate(messages):
        here = (*path, index)
        if message.options.map_entry:
            continue
        name = f"{prefix}{message.name}"
        yield f"### {name}\n"
        if here in comments:
            yield comments[here] + "\n"
        if message.field:
            yield "| field | type | meaning |\n|---|---|---|"
            for number, field in enumerate(message.field):
                repeated = field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
                kind = ("repeated " if repeated else "") + _type_name(field)
                yield (
                    f"| `{field.name}` | `{kind}` | {_cell(comments.get((*here, 2, number), ''))} |"
                )
            yield ""
        yield from _messages(message.nested_type, comments, (*here, 3), f"{name}.")
        yield from _enums(message.enum_type, comments, (*here, 4), f"{name}.")


def _enums(
    enums: Any, comments: dict[tuple[int, ...], str], path: tuple[int, ...], prefix: str = ""
) -> Iterator[str]:
    for index, enum in enumerate(enums):
        here = (*path, index)
        yield f"### {prefix}{enum.name}\n"
        if here in comments:
            yield comments[here] + "\n"
        yield "| value | meaning |\n|---|---|"
        for number, value in enumerate(enum.value):
            yield f"| `{value.name}` | {_cell(comments.get((*here, 2, number), ''))} |"
        yield ""


def rpc_names() -> list[str]:
    """`Service.Method` for every RPC of the protos."""
    return [
        f"{service.name}.{method.name}"
        for file in proto_files().file
        for service in file.service
        for method in service.method
    ]


def grpc_page() -> str:
    parts = [
        "# gRPC API\n",
        "The services, RPCs and messages of `protos/knowhub/v1` (package `knowhub.v1`), "
        "generated from the protos and their comments.\n",
    ]
    for file in proto_files().file:
        if not file.name.startswith("knowhub/"):
            continue
        comments = _comments(file)
        parts.append(f"## {file.name}\n")
        for s_index, service in enumerate(file.service):
            parts.append(f"### {service.name}\n")
            if (6, s_index) in comments:
                parts.append(comments[(6, s_index)] + "\n")
            parts.append("| RPC | request | response | meaning |\n|---|---|---|---|")
            for m_index, method in enumerate(service.method):
                stream = "stream " if method.server_streaming else ""
                parts.append(
                    f"| `{service.name}.{method.name}` | "
                    f"`{method.input_type.rsplit('.', 1)[-1]}` | "
                    f"`{stream}{method.output_type.rsplit('.', 1)[-1]}` | "
                    f"{_cell(comments.get((6, s_index, 2, m_index), ''))} |"
                )
            parts.append("")
        parts.extend(_messages(file.message_type, comments, (4,)))
        parts.extend(_enums(file.enum_type, comments, (5,)))
    return "\n".join(parts)


# ---- REST ----------------------------------------------------------------------------------

GATEWAY = "http://127.0.0.1:8080"


def routes() -> list[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path, operation) of every route of the gateway's OpenAPI document."""
    return [
        (method.upper(), path, operation)
        for path, item in openapi.document()["paths"].items()
        for method, operation in item.items()
    ]


def field_comments() -> dict[str, dict[str, str]]:
    """{message full name: {field: its proto comment}} of every message of the protos."""
    found: dict[str, dict[str, str]] = {}

    def walk(
        file: descriptor_pb2.FileDescriptorProto,
        messages: Any,
        path: tuple[int, ...],
        prefix: str,
        comments: dict[tuple[int, ...], str],
    ) -> None:
        for index, message in enumerate(messages):
            here, name = (*path, index), f"{prefix}.{message.name}"
            found[name] = {
                field.name: comments.get((*here, 2, number), "")
                for number, field in enumerate(message.field)
            }
            walk(file, message.nested_type, (*here, 3), name, comments)

    for file in proto_files().file:
        walk(file, file.message_type, (4,), file.package, _comments(file))
    return found


def rpc_descriptions() -> dict[str, str]:
    """{"Service.Method": the RPC's proto comment} of every RPC."""
    found = {}
    for file in proto_files().file:
        comments = _comments(file)
        for s_index, service in enumerate(file.service):
            for m_index, method in enumerate(service.method):
                found[f"{service.name}.{method.name}"] = comments.get((6, s_index, 2, m_index), "")
    return found


def _schema_type(schema: dict[str, Any]) -> str:
    """A JSON schema as a short type: a message links to the gRPC reference."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        short = name.rsplit(".", 1)[-1]
        return (
            f"[`{short}`](grpc.md#{short.lower()})" if name.startswith("knowhub.") else f"`{short}`"
        )
    if "anyOf" in schema:
        enum = next((s["enum"] for s in schema["anyOf"] if "enum" in s), None)
        return "enum: " + ", ".join(f"`{name}`" for name in enum) if enum else "`integer`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    if (
        kind == "object"
        and "additionalProperties" in schema
        and isinstance(schema["additionalProperties"], dict)
    ):
        return f"map of {_schema_type(schema['additionalProperties'])}"
    if schema.get("format") == "date-time":
        return "`string` (RFC 3339 time)"
    return f"`{kind}`"


def _resolve(schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the message's full name or "", the schema itself) of a body or answer schema."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return name, openapi.document()["components"]["schemas"][name]
    return schema.get("title", ""), schema


def _fields_table(schema: dict[str, Any], comments: dict[str, dict[str, str]]) -> list[str]:
    message, resolved = _resolve(schema)
    meanings = comments.get(message, {})
    rows = ["| field | type | meaning |", "|---|---|---|"]
    rows += [
        f"| `{name}` | {_cell(_schema_type(field))} | "
        f"{_cell(meanings.get(name) or field.get('description', ''))} |"
        for name, field in resolved.get("properties", {}).items()
    ]
    return rows


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def curl_example(method: str, path: str, operation: dict[str, Any]) -> str:
    """The route's example as the curl command a reader types (TOKEN set as the REST
    gateway guide shows)."""
    query = []
    for parameter in operation.get("parameters", []):
        value = parameter.get("example")
        if isinstance(value, bool):
            value = str(value).lower()
        if parameter["in"] == "path":
            path = path.replace(f"{{{parameter['name']}}}", str(value))
        elif value not in ("", None):
            query.append(f"{parameter['name']}={urllib.parse.quote_plus(str(value), safe=',:')}")
    url = GATEWAY + path + ("?" + "&".join(query) if query else "")
    lines = [f"curl -s -X {method} {_shell_quote(url)} \\", '  -H "Authorization: Bearer $TOKEN"']
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    if "example" in body:
        lines[-1] += ' -H "Content-Type: application/json" \\'
        lines.append("  -d " + _shell_quote(json.dumps(body["example"], ensure_ascii=False)))
    return "\n".join(lines)


def _route_section(
    method: str,
    path: str,
    operation: dict[str, Any],
    comments: dict[str, dict[str, str]],
    rpc_comments: dict[str, str],
) -> list[str]:
    name, summary = operation["operationId"], operation.get("summary", "")
    parts = [
        f"### `{method} {path}`\n",
        (summary if summary.startswith(name) else f"`{name}`: {summary}") + "\n",
    ]
    for text in (rpc_comments.get(summary, ""), operation.get("description", "")):
        if text:
            parts.append(text + "\n")
    if operation.get("parameters"):
        parts += ["**Parameters**\n", "| name | in | type | meaning |", "|---|---|---|---|"]
        parts += [
            f"| `{p['name']}` | {p['in']}{' (required)' if p['required'] else ''} | "
            f"{_cell(_schema_type(p['schema']))} | {_cell(p['description'])} |"
            for p in operation["parameters"]
        ]
        parts.append("")
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        name = _resolve(body["schema"])[0].rsplit(".", 1)[-1]
        parts += [
            f"**Body** (JSON{f', `{name}`' if name else ''}; every field optional "
            "unless its meaning says required)\n",
            *_fields_table(body["schema"], comments),
            "",
        ]
    status, answer = next(iter(operation["responses"].items()))
    content = answer["content"]
    if "application/json" in content:
        parts += [
            f"**Answer** {status}\n",
            *_fields_table(content["application/json"]["schema"], comments),
            "",
        ]
    else:
        parts += [f"**Answer** {status}: NDJSON, one message per line\n"]
    parts += ["**Example**\n", f"```sh\n{curl_example(method, path, operation)}\n```\n"]
    return parts


def rest_page() -> str:
    info = openapi.document()["info"]
    comments, rpc_comments = field_comments(), rpc_descriptions()
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, operation in routes():
        by_tag.setdefault(operation["tags"][0], []).append((method, path, operation))
    parts = [
        "# REST API\n",
        f"{info['description']} Every route with its parameters, its body, its answer "
        "and an example, generated from the gateway's OpenAPI document, so it cannot "
        "drift from what the gateway serves.\n",
        '!!! tip "Try the API in your browser"\n'
        f"    A running hub serves Swagger UI at [{GATEWAY}/docs/]({GATEWAY}/docs/) "
        f'(the same document, with "Try it out" on every route) and the document '
        f"itself at [{GATEWAY}/openapi.json]({GATEWAY}/openapi.json).\n",
        "Every call takes the hub's token as `Authorization: Bearer $TOKEN` "
        "(`TOKEN=$(cat .knowhub/local_token)` on a local hub); an error is "
        '`{"error": {"code", "message"}}` with the gRPC status name and its HTTP '
        "status. See [the REST gateway guide](../guides/rest-gateway.md) for "
        "authentication, errors and streaming. Types link to the messages of the "
        "[gRPC reference](grpc.md), whose fields the JSON names as the proto does.\n",
        "| route | operation | summary |",
        "|---|---|---|",
    ]
    for method, path, operation in routes():
        parts.append(
            f"| [`{method} {path}`](#{_route_anchor(method, path)}) | "
            f"`{operation['operationId']}` | {_cell(operation.get('summary', ''))} |"
        )
    parts.append("")
    for tag, found in by_tag.items():
        parts.append(f"## {tag}\n")
        for method, path, operation in found:
            parts += _route_section(method, path, operation, comments, rpc_comments)
    return "\n".join(parts) + "\n"


def _route_anchor(method: str, path: str) -> str:
    """The id the toc extension gives the heading `METHOD path`."""
    return re.sub(r"[\s-]+", "-", re.sub(r"[^\w\s-]", "", f"{method} {path}").strip().lower())


# ---- Agent tools (MCP and OpenAI function calling) ------------------------------------------


def _tool_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_tool_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"map of {_tool_type(schema['additionalProperties'])}"
    return f"`{kind}`"


def _limits(field: dict[str, Any]) -> str:
    low, high = field.get("minimum"), field.get("maximum")
    said = [
        f"{low} to {high}"
        if low is not None and high is not None
        else f"at least {low}"
        if low is not None
        else f"at most {high}"
        if high is not None
        else ""
    ]
    said += [
        f"{word} {field[key]} {unit}"
        for key, word, unit in (
            ("minItems", "at least", "items"),
            ("maxItems", "at most", "items"),
            ("maxLength", "at most", "characters"),
        )
        if key in field
    ]
    return "; ".join(part for part in said if part)


def _tool_parameters(schema: dict[str, Any], prefix: str = "") -> Iterator[str]:
    """A row per parameter; an object's own fields follow it as `parent.field`."""
    required = set(schema.get("required", []))
    for name, field in schema.get("properties", {}).items():
        meaning = "; ".join(
            part for part in (field.get("description", "").rstrip("."), _limits(field)) if part
        )
        default = f"`{json.dumps(field['default'])}`" if "default" in field else ""
        yield (
            f"| `{prefix}{name}` | {_tool_type(field)} | "
            f"{'yes' if name in required else ''} | {default} | {_cell(meaning)} |"
        )
        item = field.get("items", field)
        if item.get("type") == "object" and "properties" in item:
            inner = f"{prefix}{name}{'[]' if item is not field else ''}."
            yield from _tool_parameters(item, inner)


def _tool_section(name: str, description: str, parameters: dict[str, Any]) -> list[str]:
    parts = [f"## `{name}`\n", description + "\n"]
    if parameters.get("properties"):
        parts += [
            "| parameter | type | required | default | meaning |",
            "|---|---|---|---|---|",
            *_tool_parameters(parameters),
            "",
        ]
    else:
        parts.append("No parameters.\n")
    return parts


def mcp_page() -> str:
    parts = [
        "# MCP tools\n",
        f"The {len(mcp_tools.TOOLS)} tools `knowhub mcp` serves (see "
        "[MCP in a desktop client](../guides/mcp.md) to connect a client), with "
        "their parameters, generated from the server's tool definitions. Each is a "
        "call of the Python SDK; its input schema and description are those of "
        "[the OpenAI tools](openai-tools.md). A refusal or a wrong argument comes "
        "back as a tool error (`isError`) whose text names the gRPC status and the "
        "field, so the agent can fix its call.\n",
        "| tool | read-only | destructive |",
        "|---|---|---|",
    ]
    parts += [
        f"| [`{tool.name}`](#{tool.name}) | "
        f"{'yes' if tool.annotations and tool.annotations.read_only_hint else ''} | "
        f"{'yes' if tool.annotations and tool.annotations.destructive_hint else ''} |"
        for tool in mcp_tools.TOOLS
    ]
    parts.append(
        "\nRead-only and destructive are the MCP tool annotations "
        "(`readOnlyHint`, `destructiveHint`), for clients that ask before a "
        "change.\n"
    )
    for tool in mcp_tools.TOOLS:
        parts += _tool_section(tool.name, tool.description or "", tool.input_schema)
    return "\n".join(parts)


def openai_tools_page() -> str:
    schemas = openai_tools()
    parts = [
        "# OpenAI tools\n",
        f"The {len(schemas)} function-calling tools of `knowhub.tools.openai_tools()`, "
        "with their parameters, generated from the SDK's schemas. Pass the list as "
        "`tools=` to `chat.completions.create`, and run each tool call the model makes "
        "with `knowhub.tools.call_tool(kh, name, arguments)` (see "
        "[Connect an agent with OpenAI tool calling](../guides/openai-tools.md)). "
        "The same tools are served over MCP ([MCP tools](mcp.md)).\n",
    ]
    for schema in schemas:
        function = schema["function"]
        parts += _tool_section(function["name"], function["description"], function["parameters"])
        parts += [
            '??? note "The function schema"\n',
            "    ```json",
            *("    " + line for line in json.dumps(schema, indent=2).splitlines()),
            "    ```\n",
        ]
    return "\n".join(parts)


PAGES = {
    "reference/settings.md": settings_page,
    "reference/cli.md": cli_page,
    "reference/grpc.md": grpc_page,
    "reference/rest.md": rest_page,
    "reference/mcp.md": mcp_page,
    "reference/openai-tools.md": openai_tools_page,
}


def write_pages() -> None:
    import mkdocs_gen_files

    for path, page in PAGES.items():
        with mkdocs_gen_files.open(path, "w") as out:
            out.write(page())


if __name__ in ("__main__", "<run_path>"):
    write_pages()
