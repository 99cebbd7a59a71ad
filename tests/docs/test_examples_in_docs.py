"""Every Python and shell block of the READMEs (the project's, the SDK's and the
contracts') and the docs, run in order, page by page, against a hub started as the docs
say (`knowhub up` in a folder of its own, data in ./.knowhub), in that folder; every TOML
block (a configuration file) read as the hub reads its configuration file. Sybil finds and
runs the blocks; a block the docs mark `<!-- skip: next "why" -->` (one that starts a
server, needs a real model endpoint or a Docker daemon) is reported as skipped with that
reason."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
import tomllib
from knowhub.channels import DEFAULT_TARGET
from sybil import Document, Example
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser
from sybil.region import Lexeme

from knowhub_server.settings_catalog import check_config_file, settings_classes
from tests.support.hub_process import DEFAULT_GATEWAY_PORT, ROOT, HubProcess, running
from tests.support.openai_stub import OpenAIStub
from tests.support.scripted_model import respond

PAGES = [
    ROOT / "README.md",
    ROOT / "clients/python/README.md",
    ROOT / "protos/README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
SHELL_TIMEOUT = 120
_hub: HubProcess | None = None  # the module's hub, for the shell evaluator


def run_shell(example: Example) -> None:
    """A shell block, in bash with -e, in the hub's folder (where a user types it), with the
    project's virtualenv active as the getting started page says."""
    assert _hub is not None
    venv = _hub.folder / ".venv"
    env = _hub.client_environment()
    # The shell of a reader who followed "source .venv/bin/activate".
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", example.parsed],
        cwd=_hub.folder,
        env=env,
        text=True,
        capture_output=True,
        timeout=SHELL_TIMEOUT,
        check=False,
    )
    print(done.stdout, done.stderr)
    assert done.returncode == 0, (
        f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    )


def read_config(example: Example) -> None:
    """A configuration file block: TOML naming settings that exist, with values that each
    settings class takes."""
    values = tomllib.loads(str(example.parsed))
    check_config_file(values, "the block")
    for _, settings in settings_classes():
        settings(**{name: value for name, value in values.items() if name in settings.model_fields})


PARSERS = [
    PythonCodeBlockParser(),
    CodeBlockParser("sh", run_shell),
    CodeBlockParser("bash", run_shell),
    CodeBlockParser("toml", read_config),
    SkipParser(),
]


def examples() -> list[tuple[str, Example]]:
    found = []
    for page in PAGES:
        document = Document.parse(str(page), *PARSERS)
        found += [(f"{page.relative_to(ROOT)}:{example.line}", example) for example in document]
    return found


EXAMPLES = examples()


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIStub]:
    """The model of the hub (KNOWHUB_LLM_BASE_URL) and of the docs' agents
    (OPENAI_BASE_URL): the scripted OpenAI-compatible endpoint."""
    stub = OpenAIStub().start()
    stub.responder = respond
    yield stub
    stub.stop()


@pytest.fixture(scope="module")
def docs_hub(model: OpenAIStub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    global _hub
    folder = tmp_path_factory.mktemp("docs-hub")
    # curl reads this: an HTTP error status fails the block, as it would a careful user
    (folder / ".curlrc").write_text("--fail-with-body\n")
    with running(folder, {"KNOWHUB_LLM_BASE_URL": model.base_url}) as hub:
        hub.client_settings = {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "none",
            "CURL_HOME": str(folder),
        }
        _hub = hub
        yield hub
        _hub = None


def test_the_readme_and_the_docs_have_examples_to_run() -> None:
    pages = {identity.rsplit(":", 1)[0] for identity, _ in EXAMPLES}
    assert {"README.md", "docs/getting-started.md"} <= pages


def moved_to(hub: HubProcess, example: Example) -> None:
    """On a machine where another hub holds the default ports (never in CI), the block's
    default addresses become the ones this hub took."""
    source = example.parsed
    if isinstance(source, Lexeme) and not hub.on_default_ports:
        text = source.replace(DEFAULT_TARGET, hub.target).replace(
            f"127.0.0.1:{DEFAULT_GATEWAY_PORT}", hub.gateway
        )
        example.parsed = Lexeme(text, source.offset, source.line_offset)


@pytest.mark.parametrize("example", [e for _, e in EXAMPLES], ids=[i for i, _ in EXAMPLES])
def test_example(example: Example, docs_hub: HubProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    moved_to(docs_hub, example)
    monkeypatch.chdir(docs_hub.folder)
    environment = docs_hub.client_environment()
    for name in [n for n in os.environ if n not in environment]:
        monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    example.evaluate()


def test_no_page_leaves_a_skip_open() -> None:
    """A `skip: start` without its `skip: end` would silently skip the rest of a page."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert text.count("skip: start") == text.count("skip: end"), page
