"""The configuration file: knowhub.toml in the data directory, or the file `--config`
names; KNOWHUB_* variables override it. A name no setting has, a value a setting cannot
take, a file that is not TOML or not there: each stops the command with one line naming
the file, before anything is made."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from knowhub_server.cli import main
from knowhub_server.common.base.config import CONFIG_ENV
from tests.test_first_run import KNOWHUB, newcomer_env


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder, the current directory, with no KNOWHUB_* variable set."""
    monkeypatch.chdir(tmp_path)
    for name in ("KNOWHUB_DATA_DIR", "KNOWHUB_HOST", "KNOWHUB_PORT", CONFIG_ENV):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def errors(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_the_data_directorys_file_is_read_and_a_variable_overrides_it(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder / ".knowhub" / "knowhub.toml", "port = 1\n")
    assert main(["health", "--timeout", "0.5"]) == 1
    assert errors(capsys)[-1].startswith("server at 127.0.0.1:1: unreachable")

    monkeypatch.setenv("KNOWHUB_PORT", "2")
    assert main(["health", "--timeout", "0.5"]) == 1
    assert errors(capsys)[-1].startswith("server at 127.0.0.1:2: unreachable")


def test_the_file_of_another_data_directory_and_the_one_config_names(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(folder / "elsewhere" / "knowhub.toml", "port = 3\n")
    write(folder / "team.toml", "port = 4\n")
    monkeypatch.setenv("KNOWHUB_DATA_DIR", "elsewhere")
    assert main(["health", "--timeout", "0.5"]) == 1
    assert errors(capsys)[-1].startswith("server at 127.0.0.1:3: unreachable")
    assert main(["--config", "team.toml", "health", "--timeout", "0.5"]) == 1
    assert errors(capsys)[-1].startswith("server at 127.0.0.1:4: unreachable")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            'llm_base_url = "http://127.0.0.1:1/v1"\nllm_base_ulr = "x"\nportt = 1\n',
            "{file}: no such setting: llm_base_ulr, portt (the settings are the KNOWHUB_* names "
            "in lower case without the prefix, e.g. llm_base_url)",
        ),
        (
            'log_format = "xml"\n',
            "invalid setting: KNOWHUB_LOG_FORMAT: Input should be 'text' or 'json' (in the "
            "environment or {file})",
        ),
        ("port = \n", "{file} is not valid TOML: Invalid value (at line 1, column 8)"),
    ],
)
def test_a_file_it_cannot_use_is_one_line_and_nothing_is_made(
    folder: Path, text: str, says: str
) -> None:
    file = write(folder / ".knowhub" / "knowhub.toml", text)
    up = subprocess.run(
        [str(KNOWHUB), "up", "--port", "0", "--gateway-port", "0"],
        cwd=folder,
        env=newcomer_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (up.returncode, up.stderr.splitlines()) == (2, [f"knowhub: {says.format(file=file)}"])
    assert [p.name for p in (folder / ".knowhub").iterdir()] == ["knowhub.toml"]


def test_a_config_file_that_is_not_there_is_one_line(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", "typo.toml", "health"]) == 2
    monkeypatch.setenv(CONFIG_ENV, "typo2.toml")
    assert main(["health"]) == 2
    assert errors(capsys) == [
        f"knowhub: there is no configuration file {folder / name}"
        for name in ("typo.toml", "typo2.toml")
    ]
    assert not (folder / ".knowhub").exists()
