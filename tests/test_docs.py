"""The README documents what a user can set."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from services.common.config import CommonSettings
from services.common.server import SERVICE_MODULES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def settings_classes() -> list[type[BaseSettings]]:
    """CommonSettings and every service's own settings (services/<svc>/config.py), the
    gateway's included."""
    classes: list[type[BaseSettings]] = [CommonSettings]
    for module_name in [*SERVICE_MODULES.values(), "services.gateway.app"]:
        config = importlib.import_module(module_name.rsplit(".", 1)[0] + ".config")
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
