"""The `knowhub` command as a tool: `--version`, help that loads nothing heavy, one flag
(`--target`) and one variable (KNOWHUB_TARGET) for the server in every client command,
and known failures as one line with a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowhub_server.cli import _parser, main
from knowhub_server.common.base.versions import installed_version
from knowhub_server.common.storage.data_lock import hold_data_dir
from tests.support.harness import Harness

HEAVY = ("grpc", "pydantic", "qdrant_edge", "redis", "knowhub", "tqdm", "starlette")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"knowhub {installed_version()}\n"
    assert installed_version() != "unknown"


@pytest.mark.parametrize(
    "command",
    [
        ["--help"],
        ["up", "--help"],
        ["reindex", "--help"],
        ["backup", "--help"],
        ["cognition", "import", "--help"],
        ["mcp", "--help"],
        ["health", "--help"],
    ],
)
def test_help_loads_no_heavy_module(command: list[str]) -> None:
    """What made every `--help` take a second: the SDK, gRPC, pydantic, the engines."""
    check = (
        "import sys\nfrom knowhub_server.cli import main\n"
        f"try:\n    main({command!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=60, check=True
    )
    assert finished.stdout.strip().splitlines()[-1] == "[]"


CLIENT_COMMANDS = [
    ["health"],
    ["keys", "rotate"],
    ["review"],
    ["cognition", "export", "t"],
    ["cognition", "import", "f"],
    ["cognition", "export-otel", "t"],
    ["backup", "--to", "d"],
    ["slim"],
    ["mcp"],
]


@pytest.mark.parametrize("command", CLIENT_COMMANDS)
def test_every_client_command_takes_target(command: list[str]) -> None:
    assert _parser().parse_args([*command, "--target", "h:1"]).target == "h:1"


def test_address_is_a_hidden_alias_where_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parser().parse_args(["health", "--address", "h:2"]).target == "h:2"
    assert _parser().parse_args(["keys", "rotate", "--address", "h:3"]).target == "h:3"
    with pytest.raises(SystemExit):
        main(["health", "--help"])
    assert "--address" not in capsys.readouterr().out


def test_knowhub_target_names_the_server(
    hub: Harness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KNOWHUB_TARGET", hub.address)
    assert main(["health"]) == 0
    assert main(["cognition", "export", "no-such-trace", "--token", "token-alice"]) == 1
    assert (
        capsys.readouterr().err.splitlines()[-1]
        == "knowhub: NOT_FOUND: trace 'no-such-trace' not found"
    )
    assert main(["health", "--target", "127.0.0.1:1", "--timeout", "1"]) == 1  # flag wins


def test_reindex_of_a_missing_data_dir_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reindex", "--data-dir", str(tmp_path / "typo")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"knowhub: there is no data directory {tmp_path / 'typo'} to reindex"
    ]
    assert not (tmp_path / "typo").exists()


def test_slim_reports_the_groups_it_would_merge(
    hub: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = hub.client("admin")
    kept = admin.knowledge.save(
        task="log in to site A", content="use the test account", types=["tool"], scopes=["org:acme"]
    )
    copy = admin.knowledge.save(
        task="log in to site A",
        content="use the test account",
        types=["tool"],
        scopes=["org:acme"],
        allow_duplicate=True,
    )
    assert main(["slim", "--dry-run", "--target", hub.address, "--token", "token-admin"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "2 records examined; 1 groups, 1 records to remove"
    assert out[0].startswith("would merge ") and {kept.id, copy.id} <= set(
        out[0].replace(",", " ").split()
    )
    assert len(list(admin.knowledge.list(limit=10))) == 2  # a dry run changes nothing


def test_an_invalid_setting_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KNOWHUB_PORT", "abc")
    assert main(["health"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "knowhub: invalid setting: KNOWHUB_PORT: Input should be a valid integer, unable to "
        "parse string as an integer"
    ]


def test_the_processes_a_holder_starts_share_its_data_dir(tmp_path: Path) -> None:
    """A hub run in several processes (its children on its data directory) is one hub;
    anyone else is refused."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from knowhub_server.common.storage.data_lock import hold_data_dir\n"
        "with hold_data_dir(Path(sys.argv[1]), 'child'):\n    print('held')\n"
    )
    with hold_data_dir(tmp_path, "parent"):
        child = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert child.stdout == "held\n", child.stderr
        # `; true`: the shell stays the parent, rather than exec'ing the command
        grandchild = subprocess.run(
            ["sh", "-c", f'"{sys.executable}" -c "$0" "$1"; true', script, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "is in use by another KnowHub process (pid " in grandchild.stderr
    assert "KNOWHUB_DATA_DIR_HOLDER" not in os.environ
