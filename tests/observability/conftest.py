"""Log capture through KnowHub's own logging setup."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from knowhub_server.common.runtime.logs import configure_logging


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """Every record at DEBUG as KnowHub writes it with KNOWHUB_LOG_FORMAT=json."""
    yield from _captured("json")


@pytest.fixture
def text_logs() -> Iterator[io.StringIO]:
    yield from _captured("text")


def _captured(log_format: str) -> Iterator[io.StringIO]:
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    handler = configure_logging("DEBUG", log_format, process="observability-test", stream=stream)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)
