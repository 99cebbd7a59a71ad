"""Calls to a model endpoint whose retries all fit in one time budget."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import openai

T = TypeVar("T")

# What a retry may cure: the endpoint unreachable or too slow, overloaded, failing inside.
RETRYABLE = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)


def within(
    budget: float,
    retries: int,
    call: Callable[[float], T],
    *,
    retryable: tuple[type[Exception], ...] = RETRYABLE,
) -> T:
    """`call(seconds left)` until it succeeds, at most 1 + `retries` times, all within
    `budget` seconds (a client's own retries each get the whole timeout, so three tries
    of a slow endpoint take three timeouts); `retryable` names the errors a retry may
    cure. Raises the last error, or APITimeoutError when the budget ran out before a
    retry could start."""
    deadline = time.monotonic() + budget
    for attempt in range(retries + 1):
        try:
            return call(max(deadline - time.monotonic(), 0.001))
        except retryable:
            pause = min(0.25 * 2**attempt, 2.0)
            if attempt == retries or time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause)
    raise AssertionError("unreachable: the last attempt returns or raises")
