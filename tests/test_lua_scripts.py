"""The Redis scripts are Lua files (lua/<name>.lua in their service's package): each is
package data, so a wheel ships it, and each says what its KEYS and ARGV are."""

from __future__ import annotations

import itertools
from pathlib import Path

import tomllib

from knowhub_server.common.storage.redis_store import lua_source

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "knowhub_server").rglob("*.lua"))


def package_data() -> set[Path]:
    """The files pyproject.toml's package-data globs name, expanded as setuptools does:
    each glob from the directory of a package it finds."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]
    found: set[Path] = set()
    for where in setuptools["packages"]["find"].get("where", ["."]):
        for package, globs in setuptools["package-data"].items():
            directory = ROOT / where / package.replace(".", "/")
            if (directory / "__init__.py").is_file():
                found.update(p.resolve() for g in globs for p in directory.glob(g) if p.is_file())
    return found


def test_every_lua_script_is_package_data() -> None:
    assert SCRIPTS, "no Lua scripts found under knowhub_server"
    shipped = package_data()
    missing = [str(p.relative_to(ROOT)) for p in SCRIPTS if p.resolve() not in shipped]
    assert not missing, f"not in [tool.setuptools.package-data] of pyproject.toml: {missing}"


def test_every_lua_script_loads_from_its_package_and_names_its_keys_and_argv() -> None:
    for path in SCRIPTS:
        assert path.parent.name == "lua", path
        package = ".".join(path.parent.parent.relative_to(ROOT).parts)
        source = lua_source(package, path.stem)
        header = list(itertools.takewhile(lambda line: line.startswith("--"), source.splitlines()))
        assert any(line.startswith("-- KEYS") for line in header), f"{path}: no KEYS line"
        assert any(line.startswith("-- ARGV") for line in header), f"{path}: no ARGV line"
        assert "redis.call" in source, path
