"""Every settings class of the server (each package's `config.py`): what the configuration
file may name, and what the settings reference of the docs lists."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic_settings import BaseSettings

import knowhub_server
from knowhub_server.common.base.config import HubSettings


def settings_classes() -> Iterator[tuple[str, type[BaseSettings]]]:
    """(package, settings class) for every `config.py` of the server package."""
    for module in pkgutil.walk_packages(knowhub_server.__path__, "knowhub_server."):
        if not module.name.endswith(".config"):
            continue
        config = importlib.import_module(module.name)
        for value in vars(config).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseSettings)
                and value is not HubSettings
                and value.__module__ == config.__name__
            ):
                yield module.name.removesuffix(".config"), value


def unknown_settings(names: Iterable[str]) -> list[str]:
    """The names that are no setting of any package, in the order given."""
    known = {name for _, settings in settings_classes() for name in settings.model_fields}
    return [name for name in names if name not in known]


def check_config_file(values: dict[str, Any], file: object) -> None:
    """Refuses a configuration file that names a setting no package has (a typo would
    otherwise be a setting silently left at its default)."""
    unknown = unknown_settings(values)
    if unknown:
        raise ValueError(
            f"{file}: no such setting: {', '.join(unknown)} (the settings are "
            "the KNOWHUB_* names in lower case without the prefix, e.g. "
            "llm_base_url)"
        )
