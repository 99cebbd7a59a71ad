"""The docs site: it builds with --strict, its generated references list every setting,
command, RPC, route and SDK method, and no user-facing text cites a spec document
("seed 00N"; the README, the docs, the CLI's help, the settings, the APIs: all of it is in
the built site).
The examples of the README and the docs run in tests/docs."""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import griffe
import pytest
from knowhub import KnowHub, channels, tools
from knowhub_contracts.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2
from pydantic_settings import BaseSettings

from knowhub_server import cli
from knowhub_server import settings_catalog as catalog
from knowhub_server.gateway import openapi
from knowhub_server.mcp import tools as mcp_tools

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SEED = re.compile(r"seeds? 00\d", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as `make docs` builds it."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def page_text(site: Path, page: str) -> str:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return unescape(re.sub(r"<[^>]+>", "", html))


def settings_classes() -> list[type[BaseSettings]]:
    """The settings of every `config.py` of the server package."""
    return [settings for _, settings in catalog.settings_classes()]


@pytest.mark.parametrize("settings", settings_classes(), ids=lambda c: c.__name__)
def test_every_setting_is_in_the_settings_reference(
    site: Path, settings: type[BaseSettings]
) -> None:
    page = page_text(site, "reference/settings")
    prefix = settings.model_config.get("env_prefix", "")
    missing = [
        f"{prefix}{name}".upper()
        for name in settings.model_fields
        if f"{prefix}{name}".upper() not in page
    ]
    assert not missing, f"settings missing from the reference: {', '.join(missing)}"
    undescribed = [name for name, field in settings.model_fields.items() if not field.description]
    assert not undescribed, f"settings without a description: {undescribed}"


def commands(
    parser: argparse.ArgumentParser, path: str = "knowhub"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command, its parser) for `knowhub` and every subcommand under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def test_every_command_and_option_is_in_the_cli_reference(site: Path) -> None:
    page = page_text(site, "reference/cli")
    parsers = dict(commands(cli._parser()))
    assert len(parsers) > 10
    assert not [path for path in parsers if path not in page]
    options = {
        option
        for parser in parsers.values()
        for action in parser._actions
        if action.help != argparse.SUPPRESS  # kept working, deliberately unlisted
        for option in action.option_strings
    }
    assert not [option for option in options if option not in page]


def test_every_rpc_is_in_the_grpc_reference(site: Path) -> None:
    page = page_text(site, "reference/grpc")
    rpcs = [
        f"{service.name}.{method.name}"
        for module in (knowledge_pb2, resource_pb2, cognition_pb2, dream_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]
    assert len(rpcs) > 50
    assert not [rpc for rpc in rpcs if rpc not in page]


def test_every_route_is_in_the_rest_reference_with_its_example(site: Path) -> None:
    page = page_text(site, "reference/rest")
    html = (site / "reference" / "rest" / "index.html").read_text(encoding="utf-8")
    assert 'href="http://127.0.0.1:8080/docs/"' in html  # Swagger UI of a running hub
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, item in openapi.document()["paths"].items()
        for method, operation in item.items()
    ]
    sections = re.split(r"\n(?=(?:GET|POST|PUT|PATCH|DELETE) /\S*¶)", page)
    by_route = {section.split("¶", 1)[0].strip(): section for section in sections[1:]}
    for route, operation in operations:
        assert route in by_route, f"{route} has no section"
        section = by_route[route]
        assert "Example" in section and "curl -s -X " + route.split()[0] in section, route
        for parameter in operation.get("parameters", []):
            assert f"{parameter['name']}" in section, (route, parameter["name"])
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body and "example" in body:
            first = next(iter(body["example"]), None)
            assert first is None or f'"{first}"' in section, (route, first)


def tool_schemas() -> list[dict[str, Any]]:
    return [schema["function"] for schema in tools.openai_tools()]


def undescribed(schema: dict[str, Any], prefix: str = "") -> list[str]:
    """The parameters of a tool schema (nested ones too) without a description."""
    found = []
    for name, field in schema.get("properties", {}).items():
        if not field.get("description"):
            found.append(prefix + name)
        item = field.get("items", field)
        if item.get("type") == "object":
            found += undescribed(item, f"{prefix}{name}.")
    return found


@pytest.mark.parametrize("tool", tool_schemas(), ids=lambda tool: tool["name"])
def test_every_agent_tool_parameter_says_what_it_is(tool: dict[str, Any]) -> None:
    """The model reads these descriptions, and the tool references show them."""
    assert tool["description"]
    assert not undescribed(tool["parameters"])


@pytest.mark.parametrize("page", ["reference/mcp", "reference/openai-tools"])
def test_every_agent_tool_and_parameter_is_in_the_tool_references(site: Path, page: str) -> None:
    text = page_text(site, page)
    assert len(tool_schemas()) == len(mcp_tools.TOOLS) > 10
    for tool in mcp_tools.TOOLS:
        assert tool.name in text
        section = text.split(f"{tool.name}¶", 1)[1]
        missing = [name for name in tool.input_schema["properties"] if name not in section]
        assert not missing, f"{tool.name}: {missing}"


def sdk_methods() -> list[tuple[str, object]]:
    """`knowhub.<area>.<Class>.<method>` of every public method of the blocking client and
    its service APIs, as the SDK reference names them."""
    kh = KnowHub("127.0.0.1:1", token="")
    apis = {
        "knowledge": kh.knowledge,
        "resources": kh.resources,
        "cognition": kh.cognition,
        "memory": kh.memory,
        "dream": kh.dream,
    }
    found = [
        (f"knowhub.KnowHub.{name}", member)
        for name, member in inspect.getmembers(KnowHub, inspect.isfunction)
        if not name.startswith("_")
    ]
    for area, api in apis.items():
        cls = type(api)
        found += [
            (f"knowhub.{area}.{cls.__name__}.{name}", member)
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")
        ]
    kh.close()
    return found


# What calls nothing on the hub (or, as call_tool, returns its errors), so raises none.
NO_HUB_ERRORS = {"close", "__init__", "openai_tools", "call_tool", "open_channel"}


def test_every_public_sdk_method_is_documented(site: Path) -> None:
    html = (site / "reference" / "sdk" / "index.html").read_text(encoding="utf-8")
    methods = sdk_methods()
    assert len(methods) > 50
    assert not [name for name, member in methods if not inspect.getdoc(member)], (
        "SDK methods without a docstring"
    )
    assert not [name for name, _ in methods if f'id="{name}"' not in html], (
        "SDK methods missing from the reference"
    )


def _sections(member: object) -> dict[str, list[Any]]:
    """The Google-style docstring's sections as mkdocstrings reads them, by kind."""
    parsed = griffe.Docstring(inspect.getdoc(member) or "").parse("google", warnings=False)
    found: dict[str, list[Any]] = {}
    for section in parsed:
        value = section.value if isinstance(section.value, list) else [section.value]
        found.setdefault(section.kind.value, []).extend(value)
    return found


def sdk_functions() -> list[tuple[str, object]]:
    """Every public method, the client's constructor and the public functions of the SDK."""
    return [
        *sdk_methods(),
        ("knowhub.KnowHub.__init__", KnowHub.__init__),
        *[
            (f"knowhub.tools.{f.__name__}", f)
            for f in (tools.openai_tools, tools.run_tool, tools.call_tool)
        ],
        ("knowhub.channels.open_channel", channels.open_channel),
    ]


@pytest.mark.parametrize(("name", "member"), sdk_functions(), ids=[n for n, _ in sdk_functions()])
def test_every_public_sdk_method_documents_its_parameters_return_and_errors(
    name: str, member: Any
) -> None:
    """Args name every parameter, Returns says what comes back (unless nothing does),
    Raises names the errors the hub answers with (a method that calls the hub)."""
    sections = _sections(member)
    signature = inspect.signature(member)
    wanted = [
        ("**" if p.kind is p.VAR_KEYWORD else "*" if p.kind is p.VAR_POSITIONAL else "") + p.name
        for p in signature.parameters.values()
        if p.name != "self"
    ]
    named = {parameter.name for parameter in sections.get("parameters", [])}
    assert not [p for p in wanted if p not in named], f"{name}: Args misses them"
    assert not named - set(wanted), f"{name}: Args names parameters it does not have"
    if signature.return_annotation not in (None, "None") and not name.endswith("__init__"):
        assert sections.get("returns") or sections.get("yields"), f"{name}: no Returns"
    if name.rsplit(".", 1)[-1] not in NO_HUB_ERRORS:
        assert sections.get("raises"), f"{name}: no Raises"


def test_no_user_facing_text_cites_a_spec_document(site: Path) -> None:
    found = [f"README.md: {m.group()}" for m in SEED.finditer(README)]
    for page in site.rglob("*.html"):
        text = unescape(page.read_text(encoding="utf-8"))
        found += [f"{page.relative_to(site)}: {m.group()}" for m in SEED.finditer(text)]
    for path, parser in commands(cli._parser()):  # what `--help` prints
        found += [f"{path} --help: {m.group()}" for m in SEED.finditer(parser.format_help())]
    assert not found, "\n".join(found)


# Documents the repository does not hold: a comment or name citing them means nothing to
# its reader.
OUTSIDE_DOCUMENT = re.compile(r"seeds? 00\d|\bissues? #?\d+", re.IGNORECASE)
SOURCE_SUFFIXES = {
    ".py",
    ".proto",
    ".lua",
    ".js",
    ".css",
    ".html",
    ".md",
    ".toml",
    ".yml",
    ".yaml",
    ".sh",
    ".conf",
}


def test_no_source_file_cites_a_document_outside_the_repository() -> None:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    found = []
    for name in listed:
        path = ROOT / name
        if (
            path.suffix not in SOURCE_SUFFIXES
            or "vendor" in path.parts
            or name == "tests/test_docs.py"
            or not path.is_file()
        ):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {m.group()}" for m in OUTSIDE_DOCUMENT.finditer(text)]
    assert not found, "\n".join(found)


def test_the_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands[:2] == ["make run", "make test"]


def test_the_readme_is_short_and_the_rest_is_in_the_docs() -> None:
    assert len(README.splitlines()) <= 220
    linked = set(re.findall(r"\]\((docs/[^)#]+)\)", README))
    assert not [link for link in linked if not (ROOT / link).exists()]
