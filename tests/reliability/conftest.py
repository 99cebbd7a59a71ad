"""The reliability suite: small in CI (`make test`), full with `make reliability`.

Every test reports its figures through the `figures` fixture; they are printed in the
terminal summary, so they show even when pytest captures output."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest

FULL = os.environ.get("KNOWHUB_RELIABILITY", "").lower() == "full"
_FIGURES = pytest.StashKey[list[str]]()


@dataclass(frozen=True)
class Scale:
    """How hard a reliability test pushes: `scale.pick(small, full)`."""

    full: bool

    def pick(self, small: int | float, full: int | float) -> int | float:
        return full if self.full else small


@pytest.fixture(scope="session")
def scale() -> Scale:
    return Scale(full=FULL)


Report = Callable[[str], None]


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Report:
    """`figures("kill -9 knowledge: 1,204 acknowledged saves, 0 lost")` adds a line to
    the run's reliability report."""
    lines = request.config.stash.setdefault(_FIGURES, [])
    return lambda line: lines.append(f"{request.node.name}: {line}")


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(_FIGURES, [])
    if lines:
        scale = "full" if FULL else "small (CI); `make reliability` runs the full sizes"
        terminalreporter.section(f"reliability figures, {scale}")
        for line in lines:
            terminalreporter.write_line(line)
