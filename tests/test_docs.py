"""The README documents what a user can set."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

import knowhub_server

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def settings_classes() -> list[type[BaseSettings]]:
    """The settings of every `config.py` of the server package (common, each service and
    sub-package, the gateway and MCP)."""
    classes: list[type[BaseSettings]] = []
    for module in pkgutil.walk_packages(knowhub_server.__path__, "knowhub_server."):
        if not module.name.endswith(".config"):
            continue
        config = importlib.import_module(module.name)
        classes += [value for value in vars(config).values()
                    if isinstance(value, type) and issubclass(value, BaseSettings)
                    and value is not BaseSettings and value.__module__ == config.__name__]
    return classes


@pytest.mark.parametrize("settings", settings_classes(), ids=lambda c: c.__name__)
def test_every_setting_is_in_the_readme(settings: type[BaseSettings]) -> None:
    prefix = settings.model_config.get("env_prefix", "")
    missing = [f"{prefix}{name}".upper() for name in settings.model_fields
               if f"`{prefix}{name}`".upper() not in README.upper()]
    assert not missing, f"settings missing from README.md: {', '.join(missing)}"


def test_the_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands[:2] == ["make run", "make test"]
