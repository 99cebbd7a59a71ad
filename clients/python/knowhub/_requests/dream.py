"""Dream requests' parts: phases and run statuses by name."""

from __future__ import annotations

from collections.abc import Sequence

from knowhub.models.dream import PHASES, RUN_STATUSES


def phases(names: Sequence[str] | None) -> list[str]:
    """per_trace_reflect and/or cross_trace_integrate (both when none is named)."""
    return [PHASES.proto_name(name, "phase") for name in names or ()]


def run_status(name: str | None) -> str:
    """queued, running, done, skipped or failed; any when None."""
    return RUN_STATUSES.proto_name(name or "", "run status")
