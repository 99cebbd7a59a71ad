"""Cognition service settings (`KNOWHUB_COGNITION_*`)."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.base.config import HubSettings
from knowhub_server.common.storage.redis_store import BLOCK_MAX_SECONDS


class CognitionSettings(HubSettings):
    cognition_max_events_per_trace: int = Field(
        100_000,
        ge=1,
        le=10_000_000,
        description="Events one trace's log may hold; appends beyond it are RESOURCE_EXHAUSTED.",
    )
    cognition_request_ids_kept: int = Field(
        1_000,
        ge=1,
        le=1_000_000,
        description="AppendEvents request ids remembered per "
        "trace for idempotent retries (the oldest are forgotten first).",
    )
    cognition_trigger_visibility_seconds: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="A delivered trigger not acknowledged within this time is delivered again.",
    )
    cognition_trigger_poll_seconds: float = Field(
        1.0,
        gt=0,
        le=BLOCK_MAX_SECONDS,
        description="How long WatchTriggers waits on Redis "
        "before it checks whether its caller left or the server is stopping.",
    )
    cognition_trigger_stream_max: int = Field(
        100_000,
        ge=100,
        le=10_000_000,
        description="Triggers the stream keeps (roughly); older ones are trimmed.",
    )
    cognition_max_watchers: int = Field(
        8,
        ge=1,
        le=256,
        description="WatchTriggers streams one server serves at once (each holds a worker thread).",
    )
