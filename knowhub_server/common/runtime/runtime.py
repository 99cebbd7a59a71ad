"""What a KnowHub process opens once and its services share."""

from __future__ import annotations

import logging
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import redis

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.chat import LLM
from knowhub_server.common.llm.embedding import DenseEmbedder
from knowhub_server.common.llm.lane import ModelLane
from knowhub_server.common.runtime.peers import Peers
from knowhub_server.common.security.auth import Authenticator, load_authenticator
from knowhub_server.common.security.delegation import DelegationKeys
from knowhub_server.common.security.redaction import keep_out_of_logs
from knowhub_server.common.storage.edge_store import EdgeStore
from knowhub_server.common.storage.redis_store import (
    EmbeddedRedis,
    ReplicaWait,
    connect,
    rename_untagged_keys,
)
from knowhub_server.common.storage.vectors import IndexTuning, VectorStore

log = logging.getLogger(__name__)


def make_private_data_dir(data_dir: Path) -> None:
    """The data directory, readable by this user only, and every file this process (and
    its embedded redis-server) creates from now on too: they hold secrets' ciphertext,
    cognition logs and the local token."""
    os.umask(0o077)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    opened = [
        p
        for p in (data_dir, *data_dir.rglob("*"))
        if not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    for path in opened:  # left so by an earlier version
        path.chmod(stat.S_IMODE(path.stat().st_mode) & 0o700)
    if opened:
        log.warning(
            "made %d files and directories under %s private (readable by this user only)",
            len(opened),
            data_dir,
        )


def open_vector_store(settings: CommonSettings) -> VectorStore:
    """A Qdrant server when KNOWHUB_QDRANT_URL is set, else embedded Edge shards."""
    tuning = IndexTuning(
        hnsw_m=settings.vector_hnsw_m,
        hnsw_ef_construct=settings.vector_hnsw_ef_construct,
        hnsw_ef=settings.vector_hnsw_ef,
        acorn=settings.vector_acorn,
        quantize_dense=settings.vector_quantize_dense,
        full_scan_threshold_kb=settings.vector_full_scan_threshold_kb,
        indexing_threshold_kb=settings.vector_indexing_threshold_kb,
        max_segment_size_kb=settings.vector_max_segment_size_kb,
        optimize_after_writes=settings.vector_optimize_after_writes,
        optimize_when_idle_seconds=settings.vector_optimize_when_idle_seconds,
        tenant_idf=settings.vector_tenant_idf,
        search_threads=settings.vector_search_threads,
    )
    if settings.qdrant_url:
        # qdrant-client loads slowly
        from knowhub_server.common.storage.qdrant_store import RemoteStore

        return RemoteStore.connect(settings.qdrant_url, settings.qdrant_api_key, tuning)
    return EdgeStore(settings.data_dir / "qdrant", tuning)


class Background(Protocol):
    """Work a service runs beside its RPCs: started with the server, stopped before the
    stores close."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass
class Runtime:
    settings: CommonSettings
    authenticator: Authenticator
    vectors: VectorStore
    llm: LLM | None
    embedder: DenseEmbedder | None
    metrics: Metrics
    peers: Peers = field(init=False)
    # Set when the server begins to stop, so long-running streams can end.
    stopping: threading.Event = field(default_factory=threading.Event, init=False)
    background: list[Background] = field(default_factory=list, init=False)
    # Files a backup copies beside the stores: name in the data directory -> path.
    backup_files: dict[str, Path] = field(default_factory=dict, init=False)
    _redis: redis.Redis | None = field(default=None, init=False)
    _embedded_redis: EmbeddedRedis | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.peers = Peers(self.settings)

    @classmethod
    def open(cls, settings: CommonSettings) -> Runtime:
        keep_out_of_logs(settings.llm_api_key, settings.embedding_api_key, settings.qdrant_api_key)
        make_private_data_dir(settings.data_dir)
        grants = DelegationKeys.load(
            settings.delegation_key_file, settings.delegation_grant_max_seconds
        )
        authenticator = load_authenticator(
            settings.tokens_file, settings.host, settings.data_dir, grants
        )
        metrics = Metrics()
        lane = ModelLane(settings.model_calls_max or 0, settings.model_calls_queue or 0)
        return cls(
            settings=settings,
            authenticator=authenticator,
            vectors=open_vector_store(settings),
            llm=LLM.from_settings(settings, metrics, lane),
            embedder=DenseEmbedder.from_settings(settings, metrics, lane),
            metrics=metrics,
        )

    def redis(self) -> redis.Redis:
        """The Redis client: KNOWHUB_REDIS_URL, else an embedded server started now."""
        with self._lock:
            if self._redis is None:
                url = self.settings.redis_url
                if url is None:
                    self._embedded_redis = EmbeddedRedis(self.settings.data_dir / "redis")
                    url = self._embedded_redis.start().url
                client = connect(url, failover_seconds=self.settings.redis_failover_seconds)
                rename_untagged_keys(client, self.settings.redis_prefix)
                self._redis = client
            return self._redis

    def redis_url(self) -> str:
        """The URL of the Redis this process uses, the embedded one started now if need
        be: what child processes are given to share it."""
        self.redis()
        if self._embedded_redis is not None:
            return self._embedded_redis.url
        assert self.settings.redis_url is not None
        return self.settings.redis_url

    @property
    def redis_wait(self) -> ReplicaWait:
        """The replicas that must hold a write that must survive a failover."""
        return ReplicaWait(self.settings.redis_wait_replicas, self.settings.redis_wait_timeout_ms)

    def watch_streams(self, *keys: str) -> None:
        """Reports the lengths and lags of these Redis streams on /metrics."""
        self.metrics.streams.watch(
            lambda: self.redis() if self.redis_may_hold_data else None,
            self.settings.redis_prefix,
            *keys,
        )

    @property
    def redis_may_hold_data(self) -> bool:
        """False only while the embedded Redis has never run in this data directory, so
        nothing can be waiting in it yet."""
        return (
            self.settings.redis_url is not None
            or self._redis is not None
            or (self.settings.data_dir / "redis").exists()
        )

    def close(self) -> None:
        self.peers.close()
        self.vectors.close()
        if self.llm is not None:
            self.llm.close()
        if self.embedder is not None:
            self.embedder.close()
        if self._redis is not None:
            self._redis.close()
        if self._embedded_redis is not None:
            self._embedded_redis.stop()
