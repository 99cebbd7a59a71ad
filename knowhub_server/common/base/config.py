"""Settings every service shares, read from `KNOWHUB_*` environment variables and the
configuration file, and the base class of every package's settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from knowhub_server.common.base.listing import CommaList
from knowhub_server.common.base.paths import absolute
from knowhub_server.common.base.tls_files import check_tls_files

Language = Literal["en", "zh"]

# The configuration file in use: `knowhub --config FILE` sets it, else `knowhub` sets it to
# the data directory's knowhub.toml when there is one (see `find_config_file`).
CONFIG_ENV = "KNOWHUB_CONFIG"
CONFIG_FILE_NAME = "knowhub.toml"


def config_file() -> Path | None:
    """The configuration file every settings class reads: $KNOWHUB_CONFIG, if set."""
    name = os.environ.get(CONFIG_ENV)
    return absolute(Path(name)) if name else None


def find_config_file(given: Path | None, data_dir: Path | None) -> Path | None:
    """The file a `knowhub` command reads: `given` (--config), else $KNOWHUB_CONFIG, else
    knowhub.toml in the data directory (--data-dir, else $KNOWHUB_DATA_DIR, else
    ./.knowhub) when it exists. A file named but missing is an error."""
    named = given or config_file()
    if named is not None:
        if not named.is_file():
            raise FileNotFoundError(f"there is no configuration file {absolute(named)}")
        return absolute(named)
    folder = data_dir or Path(os.environ.get("KNOWHUB_DATA_DIR") or ".knowhub")
    found = absolute(folder / CONFIG_FILE_NAME)
    return found if found.is_file() else None


class HubSettings(BaseSettings):
    """Settings read from `KNOWHUB_<NAME>` environment variables, else from `<name> =
    value` lines of the configuration file, else their defaults."""

    model_config = SettingsConfigDict(env_prefix="KNOWHUB_", extra="ignore")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        file = config_file()
        in_file = () if file is None else (TomlConfigSettingsSource(settings_cls, toml_file=file),)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings, *in_file)


class CommonSettings(HubSettings):
    """Where data lives, how callers are identified, and how the LLM is reached."""

    data_dir: Path = Field(Path(".knowhub"), description="Directory of the embedded stores.")
    host: str = Field("127.0.0.1", description="Address the gRPC server binds to.")
    port: int = Field(50051, ge=0, le=65535, description="gRPC port (0 picks a free one).")
    max_workers: int = Field(32, ge=1, le=1024, description="gRPC server worker threads.")
    calls_per_caller_max: int | None = Field(
        None,
        ge=0,
        le=4096,
        description="Calls one token may have in progress at once on "
        "a server; one more is answered RESOURCE_EXHAUSTED with a retry hint (in the message, "
        "and in the trailing metadata `grpc-retry-pushback-ms`), so no caller holds every worker "
        "thread. Default: half of KNOWHUB_MAX_WORKERS; 0: no limit.",
    )
    model_calls_max: int | None = Field(
        None,
        ge=0,
        le=1024,
        description="Calls that may wait on the LLM or the embedding "
        "endpoint at once while handling RPCs (their own bounded pool); more wait for a "
        "turn, up to KNOWHUB_MODEL_CALLS_QUEUE, and beyond that are answered "
        "RESOURCE_EXHAUSTED with a retry hint. However slow the model, the other worker "
        "threads keep serving everything else. Default: a quarter of KNOWHUB_MAX_WORKERS; "
        "0: no limit.",
    )
    model_calls_queue: int | None = Field(
        None,
        ge=0,
        le=1024,
        description="Calls that may wait for a turn at the model "
        "beyond KNOWHUB_MODEL_CALLS_MAX. Default: a quarter of KNOWHUB_MAX_WORKERS.",
    )
    tokens_file: Path | None = Field(None, description="JSON file of bearer tokens.")
    log_level: str = Field("INFO", description="Python logging level.")
    log_format: Literal["text", "json"] = Field(
        "text", description="Log lines as text for people, or JSON for log collectors."
    )
    metrics_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="Port of the Prometheus /metrics endpoint, on "
        "KNOWHUB_HOST (0 picks a free one); off when unset.",
    )

    knowledge_address: str | None = Field(
        None, description="host:port of the knowledge service, for services run alone."
    )
    cognition_address: str | None = Field(
        None, description="host:port of the cognition service, for services run alone."
    )

    redis_url: str | None = Field(
        None,
        description="Redis URL; embedded redis-server if unset. "
        "`redis+cluster://host:port` (or `rediss+cluster://`) names a Redis Cluster by any "
        "of its nodes.",
    )
    redis_failover_seconds: float = Field(
        10.0,
        ge=0,
        le=120,
        description="On a Redis Cluster, how long a command is retried "
        "while a failed master is replaced by its replica before the call fails with "
        "UNAVAILABLE.",
    )
    redis_wait_replicas: int = Field(
        0,
        ge=0,
        le=16,
        description="Replicas that must hold an audit record or an evaluation "
        "claim (Redis WAIT) before it is acknowledged; 0: no wait (a failover may lose the "
        "last acknowledged writes).",
    )
    redis_wait_timeout_ms: int = Field(
        500,
        ge=1,
        le=60_000,
        description="How long WAIT waits for KNOWHUB_REDIS_WAIT_REPLICAS; "
        "fewer replicas by then and the write is answered UNAVAILABLE.",
    )
    redis_prefix: str = Field(
        "knowhub:",
        description="Prefix of every Redis key KnowHub uses; inside the hash tag "
        "of an area's keys: `{knowhub:cognition}:…`.",
    )

    resource_address: str | None = Field(
        None, description="Where `knowhub serve` finds the resource service (host:port)."
    )

    qdrant_url: str | None = Field(None, description="Qdrant server URL; embedded Edge if unset.")
    qdrant_api_key: str | None = Field(None, description="API key of the Qdrant server.")
    vector_hnsw_m: int = Field(
        16,
        ge=4,
        le=128,
        description="Links per vector in the HNSW graph of dense vectors "
        "(more: better recall, more memory and indexing time).",
    )
    vector_hnsw_ef_construct: int = Field(
        100,
        ge=4,
        le=2000,
        description="Candidates considered while building the HNSW "
        "graph (more: better recall, slower indexing).",
    )
    vector_hnsw_ef: int = Field(
        256,
        ge=1,
        le=10_000,
        description="Candidates a dense search keeps while walking "
        "the HNSW graph (more: better recall, slower searches).",
    )
    vector_acorn: bool = Field(
        True,
        description="Filtered dense searches whose filter leaves a small share of the "
        "vectors use ACORN (exploring neighbours of neighbours): near-exact recall for "
        "them at a few times the cost; off: plain filtered HNSW, faster, less exact.",
    )
    vector_quantize_dense: bool = Field(
        True,
        description="Dense searches walk the HNSW graph over int8 copies of the "
        "vectors (a quarter of their size, memory-mapped beside them) and rescore the "
        "best candidates with the vectors themselves: about a third faster at the same "
        "recall. Applies as segments are (re)indexed; off: the vectors alone.",
    )
    vector_tenant_idf: bool = Field(
        True,
        description="BM25's term statistics (IDF) come only from the records the "
        "caller can see, so no one's scores tell anything of another tenant's words. Each "
        "process reads a term's statistics for a caller's records once (about 2 ms a term "
        "at 100k visible records) and keeps them until about 1% of those records were "
        "written; off: statistics of the whole collection, never read, for a hub one "
        "organisation owns.",
    )
    vector_search_threads: int = Field(
        1,
        ge=0,
        le=256,
        description="Embedded store only: threads each collection searches with, "
        "reading a query's segments in parallel; 0 for one per CPU. One thread answers "
        "small stores fastest (a store of a few segments gains nothing from handing each "
        "query to a pool); a store of many segments on a machine of many cores may gain "
        "from more.",
    )
    vector_max_segment_size_kb: int = Field(
        32_000,
        ge=1_000,
        description="Largest segment (KB of vectors) the optimiser "
        "makes by merging smaller ones; the embedded store pauses while it builds one.",
    )
    vector_full_scan_threshold_kb: int = Field(
        10_000,
        ge=0,
        description="A filtered dense search whose filter leaves fewer "
        "vectors than this many KB scans them exactly instead of walking the graph.",
    )
    vector_indexing_threshold_kb: int = Field(
        10_000,
        ge=0,
        description="Segments holding more than this many KB of vectors get "
        "an HNSW graph (and a compact BM25 index); smaller ones are scanned.",
    )
    vector_optimize_after_writes: int = Field(
        10_000,
        ge=1,
        description="Embedded store only: records written after which the "
        "process indexes them in the background (it pauses meanwhile, about a second per "
        "few thousand dense vectors); a Qdrant server indexes on its own.",
    )
    vector_optimize_when_idle_seconds: float = Field(
        60.0,
        ge=0,
        description="Embedded store only: seconds without writes after which "
        "a collection indexes the records written since its last indexing, when their dense "
        "vectors pass KNOWHUB_VECTOR_INDEXING_THRESHOLD_KB (fewer are scanned either way), "
        "so that a store loaded short of KNOWHUB_VECTOR_OPTIMIZE_AFTER_WRITES is not "
        "scanned until the next restart; the process pauses as for any indexing. 0: never.",
    )

    language: Language = Field(
        "en",
        description="Language of the built-in prompts and of the texts the hub "
        "writes for agents: en (English) or zh (Chinese).",
    )
    llm_base_url: str | None = Field(None, description="OpenAI-compatible chat endpoint.")
    llm_api_key: str = Field("none", description="API key for the chat endpoint.")
    llm_model: str = Field("gpt-4o-mini", description="Chat model name.")
    llm_allowed_models: CommaList = Field(
        default_factory=list,
        description="Further chat models a request may name (slim's "
        "`model`), comma-separated; KNOWHUB_LLM_MODEL is always allowed. A request naming "
        "any other model is INVALID_ARGUMENT: callers never choose what the endpoint runs "
        "at the operator's cost, nor the model label of the metrics.",
    )
    llm_timeout_seconds: float = Field(30.0, gt=0, description="Timeout of one LLM call.")
    llm_max_retries: int = Field(2, ge=0, le=10, description="Retries of a failed LLM call.")

    embedding_base_url: str | None = Field(
        None,
        description="OpenAI-compatible embeddings endpoint: hybrid search (BM25 and "
        "dense vectors); BM25 only when neither it nor embedding_model_path is set.",
    )
    embedding_api_key: str = Field("none", description="API key for the embeddings endpoint.")
    embedding_model: str = Field(
        "text-embedding-3-small",
        description="Embedding model name; recorded with the "
        "stored vectors, so another model needs a `knowhub reindex`. With "
        "embedding_model_path its default is the model folder's name.",
    )
    embedding_dim: int = Field(
        1536,
        ge=1,
        le=65536,
        description="Embedding vector size; with embedding_model_path, the model's own size.",
    )
    embedding_model_path: Path | None = Field(
        None,
        description="Folder of a sentence-transformers model on this machine: dense "
        "vectors computed in the hub's own process (on the CPU, or a GPU torch can use), so "
        "hybrid search needs no endpoint. Needs the `embed` extra (`pip install "
        "'knowhub[embed]'`); not together with embedding_base_url.",
    )
    embedding_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest wait for one embedding call, its retries "
        "(KNOWHUB_LLM_MAX_RETRIES) included; a save whose vector is not back by then is "
        "stored at once and gets its vector later.",
    )
    embedding_query_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="Longest wait for a search query's vector, retries "
        "included; a search that does not get it in time answers from BM25 alone and says "
        "it is degraded (and the breaker, KNOWHUB_EMBEDDING_BREAKER_SECONDS, spares the "
        "next searches the wait).",
    )
    embedding_breaker_seconds: float = Field(
        30.0,
        ge=0,
        description="After an embedding call fails, how long the model is not "
        "asked again: searches answer from BM25 and saves store their records for a "
        "background task to embed, without waiting. 0 asks it every time.",
    )
    embedding_query_cache_size: int = Field(
        4096,
        ge=0,
        le=1_000_000,
        description="Query texts whose vectors each process keeps "
        "(least recently used first out), so a repeated search skips the embedding call; "
        "about 4 bytes per dimension each (6 KiB at 1536). 0 turns the cache off.",
    )

    dream_address: str | None = Field(
        None, description="host:port of the dream service when it runs in another process."
    )

    delegation_key_file: Path | None = Field(
        None,
        description="File holding the secret (at least 32 characters) that signs the "
        "grants with which the cognition service applies an evaluator's verdicts as the "
        "trace's owner; every process of one hub needs the same file. Unset: a random key "
        "per process, enough when the services share one (`knowhub up`); `knowhub up "
        "--processes N` makes `<data_dir>/delegation_key` (0600) for all of its own.",
    )

    delegation_grant_max_seconds: int = Field(
        120,
        ge=10,
        le=3600,
        description="How long a delegation grant lives: the grants "
        "this hub issues expire after it, and a grant that claims a longer life or an "
        "expiry further ahead is refused (UNAUTHENTICATED), even when its signature holds. "
        "Every process of one hub needs the same value.",
    )

    tls_cert_file: Path | None = Field(
        None, description="PEM certificate chain the gRPC server presents (TLS when set)."
    )
    tls_key_file: Path | None = Field(None, description="PEM private key of tls_cert_file.")
    tls_ca_file: Path | None = Field(
        None,
        description="PEM CA certificates that calls to other services (and "
        "`knowhub health`) verify servers with; those calls use TLS when set.",
    )

    @field_validator(
        "data_dir",
        "tokens_file",
        "delegation_key_file",
        "tls_cert_file",
        "tls_key_file",
        "tls_ca_file",
        "embedding_model_path",
    )
    @classmethod
    def _absolute(cls, path: Path | None) -> Path | None:
        """Made absolute at start (see common/base/paths.py)."""
        return None if path is None else absolute(path)

    @model_validator(mode="after")
    def _fair_share(self) -> CommonSettings:
        """Fills the fair-sharing limits left unset from KNOWHUB_MAX_WORKERS, and keeps
        threads that never wait on a model."""
        if self.calls_per_caller_max is None:
            self.calls_per_caller_max = self.max_workers // 2
        if self.model_calls_max is None:
            self.model_calls_max = self.max_workers // 4
        if self.model_calls_queue is None:
            self.model_calls_queue = self.max_workers // 4
        if (
            self.model_calls_max
            and self.model_calls_max + self.model_calls_queue >= self.max_workers
        ):
            raise ValueError(
                "KNOWHUB_MODEL_CALLS_MAX + KNOWHUB_MODEL_CALLS_QUEUE must stay below "
                f"KNOWHUB_MAX_WORKERS ({self.max_workers}), so calls that never wait on a "
                "model always find a thread"
            )
        return self

    @model_validator(mode="after")
    def _known_log_level(self) -> CommonSettings:
        self.log_level = self.log_level.upper()
        if self.log_level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"KNOWHUB_LOG_LEVEL must be a logging level, not {self.log_level!r}")
        return self

    @model_validator(mode="after")
    def _one_embedding_model(self) -> CommonSettings:
        if self.embedding_model_path is not None and self.embedding_base_url:
            raise ValueError(
                "KNOWHUB_EMBEDDING_MODEL_PATH (a model in this process) and "
                "KNOWHUB_EMBEDDING_BASE_URL (an endpoint) are both set: keep one"
            )
        return self

    @model_validator(mode="after")
    def _usable_tls_files(self) -> CommonSettings:
        check_tls_files(self.tls_cert_file, self.tls_key_file, self.tls_ca_file)
        return self
