"""The three distributions: knowhub-contracts (protos/), knowhub-client (clients/python) and
knowhub (the hub). Their wheels, built offline from a copy of the sources, ship no file
twice; the contracts and the SDK install and work without the hub; and all three
installed together, uninstalling the SDK leaves the contracts whole.

Each install goes into a fresh virtualenv by pip (`--no-deps`, the built wheels only); the
dependencies come from this environment, linked into a folder the virtualenv's path
names: exactly the distributions the installed ones require, and nothing of KnowHub's own.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.test_server import REPO

SOURCES = ["pyproject.toml", "README.md", "LICENSE", "knowhub_server", "clients/python", "protos"]
PROJECTS = {"knowhub": ".", "knowhub_client": "./clients/python", "knowhub_contracts": "./protos"}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three wheels by name, built as the Dockerfile builds them."""
    root = tmp_path_factory.mktemp("distributions")
    context, out = root / "context", root / "wheels"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    context.mkdir()
    for source in SOURCES:
        if (REPO / source).is_dir():
            shutil.copytree(REPO / source, context / source, ignore=skip)
        else:
            shutil.copy2(REPO / source, context / source)
    pip(
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--wheel-dir",
        str(out),
        *PROJECTS.values(),
        cwd=context,
    )
    return {wheel.name.split("-")[0]: wheel for wheel in out.glob("*.whl")}


def pip(*arguments: str, cwd: Path | None = None) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check", *arguments],
        cwd=cwd,
        check=True,
        timeout=300,
    )


def contents(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if not name.endswith("/")}


def test_each_file_is_in_one_wheel(wheels: dict[str, Path]) -> None:
    assert sorted(wheels) == sorted(PROJECTS)
    files = {name: contents(wheel) for name, wheel in wheels.items()}
    for name, shipped in files.items():
        for other, theirs in files.items():
            assert name == other or not shipped & theirs, (name, other, shipped & theirs)
    packages = {name: {f.split("/")[0] for f in shipped} for name, shipped in files.items()}
    assert packages["knowhub"] == {"knowhub_server", "knowhub-0.1.0.dist-info"}
    assert packages["knowhub_client"] == {"knowhub", "knowhub_client-0.1.0.dist-info"}
    assert packages["knowhub_contracts"] == {
        "knowhub_contracts",
        "knowhub_contracts-0.1.0.dist-info",
    }
    contracts = files["knowhub_contracts"]
    for expected in (
        "knowhub_contracts/py.typed",
        "knowhub_contracts/v1/knowledge_pb2.pyi",
        "knowhub_contracts/v1/knowledge_pb2_grpc.pyi",
        "knowhub_contracts/proto/knowhub/v1/knowledge.proto",
    ):
        assert expected in contracts
    assert "knowhub/py.typed" in files["knowhub_client"]


def test_the_sdk_installs_and_works_without_the_hub(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = environment(tmp_path, "knowhub-client")
    sdk = [str(wheels["knowhub_contracts"]), str(wheels["knowhub_client"])]
    pip("--python", str(python), "install", "--no-deps", "--no-index", *sdk)
    run(
        python,
        f"""
        import importlib.util
        import knowhub, knowhub_contracts
        from knowhub import KnowHub
        from knowhub_contracts.v1 import knowledge_pb2
        for module in (knowhub, knowhub_contracts):
            assert module.__file__.startswith({str(tmp_path)!r}), module.__file__
        assert importlib.util.find_spec("knowhub_server") is None
        with KnowHub("127.0.0.1:1", token="t") as kh:
            assert kh.knowledge is not None
        assert knowledge_pb2.DESCRIPTOR.package == "knowhub.v1"
        """,
    )


def test_uninstalling_the_sdk_leaves_the_contracts_whole(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    python = environment(tmp_path, "knowhub")
    pip("--python", str(python), "install", "--no-deps", "--no-index", *map(str, wheels.values()))
    assert "serve" in run(python, "from knowhub_server.cli import main; main(['--help'])")
    pip("--python", str(python), "uninstall", "--yes", "knowhub-client")
    run(
        python,
        """
        import importlib.metadata, importlib.util
        assert importlib.util.find_spec("knowhub") is None
        for name in ("knowhub-contracts", "knowhub"):
            missing = [f for f in importlib.metadata.files(name) if not f.locate().exists()]
            assert not missing, (name, missing)
        from knowhub_contracts import enum_names
        from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc
        assert enum_names(knowledge_pb2.Selection.DESCRIPTOR).names
        assert knowledge_pb2_grpc.KnowledgeServiceStub
        """,
    )


def environment(where: Path, distribution: str) -> Path:
    """A fresh virtualenv, without pip, whose path also names a folder of links to the
    installed dependencies of `distribution` (the ones its requirements need, KnowHub's
    own left out); its interpreter."""
    venv.create(where / "venv", with_pip=False)
    python = where / "venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dependencies = where / "dependencies"
    for dist in requirement_closure(distribution):
        link_packages(dist, dependencies)
    (Path(site) / "dependencies.pth").write_text(f"{dependencies}\n")
    return python


def requirement_closure(distribution: str) -> list[importlib.metadata.Distribution]:
    """The installed distributions `distribution` requires, directly or not (no extras)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(importlib.metadata.requires(distribution) or [])
    while todo:
        requirement = Requirement(todo.pop())
        name = canonicalize_name(requirement.name)
        if name in found or name.startswith("knowhub"):
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        found[name] = importlib.metadata.distribution(name)
        todo += found[name].requires or []
    return list(found.values())


def link_packages(dist: importlib.metadata.Distribution, into: Path) -> None:
    """Links the distribution's top-level packages and modules into `into` (within a
    namespace package such as `google`, its own subpackages only)."""
    site = Path(str(dist.locate_file("")))
    for file in dist.files or []:
        parts = file.parts
        if parts[0] in ("..", "__pycache__") or parts[0].endswith(".dist-info"):
            continue
        top = site / parts[0]
        namespace = top.is_dir() and not (top / "__init__.py").exists() and len(parts) > 2
        relative = Path(*parts[:2]) if namespace else Path(parts[0])
        target = into / relative
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(site / relative)


def run(python: Path, code: str) -> str:
    finished = subprocess.run(
        [str(python), "-c", textwrap.dedent(code)],
        cwd=python.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout
