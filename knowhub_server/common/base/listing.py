"""Settings that hold a list, written as comma-separated text in the environment."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator
from pydantic_settings import NoDecode


def _split(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


# `KNOWHUB_X=a, b` -> ["a", "b"]; also a list when set in code.
CommaList = Annotated[list[str], NoDecode, BeforeValidator(_split)]
