"""Dream run settings: runs, schedules and the server-side evaluator as `KNOWHUB_DREAM_*`
and `KNOWHUB_EVALUATOR*` variables."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.base.config import HubSettings


class RunsSettings(HubSettings):
    # Dream runs and their schedules
    dream_service_token: str | None = Field(
        None,
        description="Bearer token the dream service acts on cognition with (runs, "
        "schedules, the evaluator); its principal needs the dreamer role (and evaluator "
        "for the evaluator). Not needed without a tokens file.",
    )
    dream_workers: int = Field(
        1,
        ge=0,
        le=64,
        description="Dream run worker threads in this process (0: none, e.g. an API-only replica).",
    )
    dream_model: str | None = Field(
        None,
        description="Chat model of dream reflection and integration; KNOWHUB_LLM_MODEL when unset.",
    )
    dream_poll_interval_seconds: float = Field(
        1.0,
        ge=0.05,
        le=60,
        description="How long an idle run worker waits before it looks for a stale run.",
    )
    dream_stale_run_timeout_seconds: float = Field(
        300.0,
        gt=0,
        description="A run whose worker neither finished nor touched it for "
        "this long is taken over by another worker; also the lease of the per-agent lock.",
    )
    dream_run_max_attempts: int = Field(
        3,
        ge=1,
        le=100,
        description="Deliveries of a run whose worker kept dying before it is failed.",
    )
    dream_run_keep_days: int = Field(
        30,
        ge=1,
        le=3650,
        description="Finished runs are kept this long for GetDreamRun and ListDreamRuns.",
    )
    dream_reflect_max_chars: int = Field(
        60_000,
        ge=1_000,
        le=10_000_000,
        description="Characters of trace events one "
        "reflection reads; a longer stretch is reflected in several parts.",
    )
    dream_integrate_max_reflections: int = Field(
        50,
        ge=1,
        le=1_000,
        description="Reflections one integration step reads (several "
        "steps per run when more are waiting).",
    )
    dream_document_max_chars: int = Field(
        20_000, ge=100, le=1_000_000, description="Size limit of one memory document."
    )
    dream_documents_max: int = Field(
        100, ge=1, le=10_000, description="Memory documents one agent may hold."
    )
    dream_plan_max_updates: int = Field(
        20, ge=1, le=1_000, description="Document updates one integration plan may make."
    )
    dream_document_revision_keep: int = Field(
        5, ge=1, le=100, description="Earlier revisions kept per memory document."
    )
    dream_scheduler_enabled: bool = Field(
        True, description="Fire due schedules from this process (any number of processes may)."
    )
    dream_scheduler_interval_seconds: float = Field(
        10.0, ge=0.05, le=3600, description="How often the scheduler looks for due schedule slots."
    )

    # The server-side evaluator
    evaluator: bool = Field(
        False,
        description="Answer evaluation triggers with the LLM "
        "(on / off); without an LLM the triggers wait in the stream.",
    )
    evaluator_group: str = Field(
        "evaluators", description="The consumer group the evaluator reads the triggers with."
    )
    evaluator_model: str | None = Field(
        None, description="Chat model of the evaluator; KNOWHUB_LLM_MODEL when unset."
    )
    evaluator_max_deliveries: int = Field(
        3,
        ge=1,
        le=100,
        description="Deliveries of a trigger the LLM fails to evaluate "
        "before the evaluator acknowledges it and gives up.",
    )
