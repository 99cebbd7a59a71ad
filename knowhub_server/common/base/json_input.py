"""JSON a caller sent (page tokens, log files, evaluation answers, gateway bodies), read
strictly: NaN and infinities, integers past 64 bits and nesting deeper than MAX_DEPTH are
refused as ValueError, so nothing downstream (the engine least of all) ever meets them."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64
INTEGER_LIMIT = 2**63


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def loads(text: str | bytes) -> Any:
    """json.loads, refusing what JSON itself does not allow and what no caller needs."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    _check(value, 0)
    return value


def _check(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("holds a number too large for a float")
    if isinstance(value, int) and not -INTEGER_LIMIT <= value < INTEGER_LIMIT:
        raise ValueError("holds an integer beyond 64 bits")
    if isinstance(value, dict):
        for item in value.values():
            _check(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
