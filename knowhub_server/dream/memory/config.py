"""Memory settings: `KNOWHUB_MEMORY_*` (the memory, its queries and profiles) and
`KNOWHUB_HISTORIAN_*` (the historian workers and their queue) variables."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from knowhub_server.common.base.config import HubSettings


class MemorySettings(HubSettings):
    # The memory
    memory_enabled: bool = Field(
        True,
        description="Serve the memory RPCs and run the historian; when off they "
        "answer FAILED_PRECONDITION and queued jobs wait, to be worked when it is on again.",
    )
    memory_timezone: str = Field(
        "UTC",
        description="Time zone of the events' timestamp_local, and the one the "
        "historian is told the conversation's time in (e.g. Asia/Shanghai).",
    )

    # Queries
    memory_auto_top_k: int = Field(
        3, ge=1, le=100, description="Default top_k of SearchEvents in auto (injection) mode."
    )
    memory_tool_default_top_k: int = Field(
        12, ge=1, le=100, description="Default top_k of SearchEvents in tool mode."
    )
    memory_profile_top_k: int = Field(
        8, ge=1, le=100, description="Default top_k of SearchProfiles."
    )
    memory_recent_memos_inject_k: int = Field(
        30,
        ge=0,
        le=10_000,
        description="Default number of memos RecentMemos returns "
        "(0 returns none unless a limit is given).",
    )
    memory_recent_memos_keep: int = Field(
        100,
        ge=1,
        le=10_000,
        description="Memos kept per conversation (the short-term "
        "list's bound, and RecentMemos' largest limit).",
    )
    memory_remember_request_ttl_hours: int = Field(
        24,
        ge=1,
        le=720,
        description="How long a Remember request_id is remembered: a "
        "retry within this time returns the first call's response.",
    )
    memory_time_decay_enabled: bool = Field(True, description="Rerank events by time decay.")
    memory_time_decay_half_life_days_auto: float = Field(
        14.0, gt=0, description="Half-life of the time decay in auto (injection) mode."
    )
    memory_time_decay_half_life_days_tool: float = Field(
        60.0, gt=0, description="Half-life of the time decay in tool mode."
    )
    memory_time_decay_boost: float = Field(
        0.2, ge=0, le=10, description="Strength of the time decay boost."
    )
    memory_time_decay_min_similarity: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Similarity an event needs before time decay "
        "boosts it, so new but unrelated events do not rise.",
    )
    memory_rerank_candidate_multiplier: int = Field(
        3,
        ge=2,
        le=20,
        description="Candidates recalled per result for the time-decay "
        "rerank (top_k x multiplier); at least 2.",
    )
    memory_search_hybrid_pool: int = Field(
        50,
        ge=1,
        le=1000,
        description="Hybrid search (with an embedding endpoint): "
        "records each of BM25 and dense search recalls as candidates; every candidate is "
        "then scored by both.",
    )
    memory_search_dense_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Hybrid search: weight of the cosine similarity "
        "in a record's similarity; BM25, divided by the best score the query can reach, gets "
        "the rest (as KNOWHUB_SEARCH_DENSE_WEIGHT for knowledge).",
    )

    memory_delete_retention_hours: float = Field(
        72.0,
        gt=0,
        le=8760,
        description="How long a deleted memory event can be brought "
        "back (UndeleteEvent) before the historian purges it.",
    )
    memory_job_keep_hours: int = Field(
        168,
        ge=1,
        le=8760,
        description="How long GetMemoryJob can read a historian job's "
        "status after its last change.",
    )

    # Keeping facts consistent
    memory_reconcile_candidates: int = Field(
        5,
        ge=0,
        le=50,
        description="The subject's most similar current events each new "
        "event is compared with (add, update, delete or no-op); 0 stores every event.",
    )
    memory_reconcile_min_similarity: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Similarity an existing event needs to be shown to "
        "the LLM as possibly the same fact.",
    )

    # Profiles
    memory_profile_revision_keep: int = Field(
        5, ge=1, le=100, description="Earlier revisions kept per profile."
    )

    # The historian
    historian_workers: int = Field(
        1,
        ge=0,
        le=64,
        description="Historian worker threads in this process (0: none, e.g. an API-only replica).",
    )
    historian_model: str | None = Field(
        None, description="Chat model of the historian; KNOWHUB_LLM_MODEL when unset."
    )
    historian_rewrite_max_retry: int = Field(
        2, ge=0, le=10, description="Extra rewrite attempts when the gate rejects a rewrite."
    )
    historian_recent_messages_inject_k: int = Field(
        12, ge=0, le=200, description="Recent messages a job keeps for the historian (0: none)."
    )
    historian_recent_message_line_max_len: int = Field(
        240, ge=1, le=10_000, description="Characters kept of each recent message."
    )
    historian_source_message_max_len: int = Field(
        800, ge=1, le=100_000, description="Characters kept of the source message."
    )
    historian_poll_interval_seconds: float = Field(
        1.0,
        ge=0.05,
        le=60,
        description="How long an idle worker waits for a job before "
        "its housekeeping (stale-job reclaim, failed-job trim).",
    )
    historian_stale_job_timeout_seconds: float = Field(
        300.0,
        gt=0,
        description="A job delivered this long ago and neither done nor "
        "touched since is taken over by another worker (XAUTOCLAIM).",
    )

    # The historian's queue
    historian_job_max_retries: int = Field(
        3,
        ge=0,
        le=100,
        description="Retries of a failing job before it moves to the failed stream (0: no retry).",
    )
    historian_failed_max_age_days: int = Field(
        30, ge=1, le=3650, description="Failed jobs older than this are dropped."
    )
    historian_failed_max_files: int = Field(
        500, ge=1, le=1_000_000, description="Failed jobs kept at most (oldest dropped first)."
    )
    historian_failed_cleanup_interval: int = Field(
        100,
        ge=0,
        le=1_000_000,
        description="Trim the failed jobs every N worker polls (0: only when a job fails).",
    )

    @field_validator("memory_timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"KNOWHUB_MEMORY_TIMEZONE: unknown time zone {value!r}") from exc
        return value
