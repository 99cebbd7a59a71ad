"""The generated reference pages of the docs site, written at build time by mkdocs-gen-files
(`mkdocs build`), so they cannot drift from the code:

- reference/settings.md — every pydantic settings field (`KNOWHUB_*`) with its default and
  description, from the `config.py` of each server package;
- reference/cli.md — every `knowhub` command with its help, from the argparse parser;
- reference/grpc.md — every service, RPC, message and enum of protos/knowhub/v1 with their
  comments (protoc's source info);
- reference/rest.md — every route of the REST gateway, from its OpenAPI document.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_tools import protoc
from pydantic_settings import BaseSettings

from knowhub_server import cli
from knowhub_server.common.config import CONFIG_FILE_NAME
from knowhub_server.gateway import openapi
from knowhub_server.settings_catalog import settings_classes

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
COMMON = "knowhub_server.common"


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
    parts = ["# Settings\n",
             "Every setting is an environment variable with the prefix `KNOWHUB_`, and a "
             f"line of the configuration file `{CONFIG_FILE_NAME}`, named in lower case "
             "without the prefix: `KNOWHUB_LLM_BASE_URL` is `llm_base_url = \"...\"` there. "
             f"`knowhub` reads `{CONFIG_FILE_NAME}` in the data directory when there is one, "
             "or the file given by `--config` (or `KNOWHUB_CONFIG`); an environment variable "
             "overrides the file, and a command-line option (`--data-dir`, `--host`, "
             "`--port`) both. A name the file does not know stops the command with one line "
             "([Getting started](../getting-started.md#configure-it) shows a file).\n",
             "This page is generated from the settings classes of each package "
             "(`config.py`), so it lists exactly what the code reads.\n"]
    # The shared settings first, then each package's own.
    ordered = sorted(settings_classes(), key=lambda found: (found[0] != COMMON, found[0]))
    for package, settings in ordered:
        parts.append(f"## {package.removeprefix('knowhub_server.')}\n")
        if settings.__doc__:
            parts.append(settings.__doc__.strip().splitlines()[0] + "\n")
        parts.append("| variable | default | meaning |\n|---|---|---|")
        for name, field in zip(setting_names(settings), settings.model_fields.values(),
                               strict=True):
            parts.append(f"| `{name}` | {_cell(_default(field.default))} | "
                         f"{_cell(field.description or '')} |")
        parts.append("")
    return "\n".join(parts)


# ---- Command line --------------------------------------------------------------------------

def commands(parser: argparse.ArgumentParser, path: str = "knowhub"
             ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command, its parser) for the parser and every subcommand under it, depth first."""
    yield path, parser
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def cli_page() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal's width
    parts = ["# Command line\n",
             "Every `knowhub` command and its options, generated from the command's own "
             "parser (`knowhub <command> --help` prints the same).\n"]
    for path, parser in commands(cli._parser()):
        parts.append(f"## `{path}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


# ---- gRPC ----------------------------------------------------------------------------------

def proto_files() -> descriptor_pb2.FileDescriptorSet:
    """The KnowHub protos, compiled by protoc with their comments (source info)."""
    sources = sorted(p.relative_to(PROTOS).as_posix()
                     for p in (PROTOS / "knowhub" / "v1").glob("*.proto"))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "protos.pb"
        status = protoc.main(["protoc", f"-I{PROTOS}", f"-I{_protoc_includes()}",
                              "--include_source_info", f"--descriptor_set_out={out}",
                              *sources])
        if status:
            raise RuntimeError(f"protoc failed ({status}) on {', '.join(sources)}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def _protoc_includes() -> str:
    import grpc_tools
    return str(Path(grpc_tools.__file__).parent / "_proto")


def _comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {tuple(location.path): " ".join(location.leading_comments.split())
            for location in file.source_code_info.location if location.leading_comments}


def _type_name(field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type_name:
        return field.type_name.rsplit(".", 1)[-1]
    kind = descriptor_pb2.FieldDescriptorProto.Type.Name(field.type)
    return kind.removeprefix("TYPE_").lower()


def _messages(messages: Any, comments: dict[tuple[int, ...], str], path: tuple[int, ...],
              prefix: str = "") -> Iterator[str]:
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
                yield (f"| `{field.name}` | `{kind}` | "
                       f"{_cell(comments.get((*here, 2, number), ''))} |")
            yield ""
        yield from _messages(message.nested_type, comments, (*here, 3), f"{name}.")
        yield from _enums(message.enum_type, comments, (*here, 4), f"{name}.")


def _enums(enums: Any, comments: dict[tuple[int, ...], str], path: tuple[int, ...],
           prefix: str = "") -> Iterator[str]:
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
    return [f"{service.name}.{method.name}" for file in proto_files().file
            for service in file.service for method in service.method]


def grpc_page() -> str:
    parts = ["# gRPC API\n",
             "The services, RPCs and messages of `protos/knowhub/v1` (package `knowhub.v1`), "
             "generated from the protos and their comments.\n"]
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
                    f"{_cell(comments.get((6, s_index, 2, m_index), ''))} |")
            parts.append("")
        parts.extend(_messages(file.message_type, comments, (4,)))
        parts.extend(_enums(file.enum_type, comments, (5,)))
    return "\n".join(parts)


# ---- REST ----------------------------------------------------------------------------------

def routes() -> list[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path, operation) of every route of the gateway's OpenAPI document."""
    return [(method.upper(), path, operation)
            for path, item in openapi.document()["paths"].items()
            for method, operation in item.items()]


def rest_page() -> str:
    info = openapi.document()["info"]
    parts = ["# REST API\n",
             f"{info['description']} Generated from the gateway's OpenAPI document "
             "(`GET /openapi.json` on a running gateway serves it whole, with every "
             "schema). See [the REST gateway guide](../guides/rest-gateway.md) for "
             "authentication, errors and streaming.\n",
             "| route | operation | summary |\n|---|---|---|"]
    for method, path, operation in routes():
        summary = operation.get("summary", "")
        if operation.get("description"):
            summary += f" {operation['description']}"
        parts.append(f"| `{method} {path}` | `{operation['operationId']}` | {_cell(summary)} |")
    return "\n".join(parts) + "\n"


PAGES = {"reference/settings.md": settings_page, "reference/cli.md": cli_page,
         "reference/grpc.md": grpc_page, "reference/rest.md": rest_page}


def write_pages() -> None:
    import mkdocs_gen_files

    for path, page in PAGES.items():
        with mkdocs_gen_files.open(path, "w") as out:
            out.write(page())


if __name__ in ("__main__", "<run_path>"):
    write_pages()
