"""Redis killed under load and restarted, or frozen (SIGSTOP: it holds its connections
and answers nothing) and thawed: while it is away every call that needs it answers
UNAVAILABLE promptly (never hangs, never UNKNOWN or INTERNAL); once it is back (killed:
restarted on the same port and directory) the services reconnect by themselves, and
every acknowledged write is there.

Redis is a redis-server process of the test's own (AOF, appendfsync always); `knowhub up`
runs as its own process and reaches it by URL. Writers keep going through the outage,
retrying a failed call with the same request (the same AppendEvents request id)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub

from tests.reliability.conftest import Report, Scale
from tests.reliability.processes import (
    RedisServer,
    ServerProcess,
    Writer,
    wait_until,
    whole_log,
)
from tests.support.harness import write_tokens_file
from tests.support.ports import free_port


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("redis-restart")


@pytest.fixture(scope="module")
def redis_server(directory: Path) -> Iterator[RedisServer]:
    server = RedisServer(directory / "redis", free_port()).start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def hub(directory: Path, redis_server: RedisServer) -> Iterator[ServerProcess]:
    process = ServerProcess(
        ["up"],
        directory / "data",
        {
            "KNOWHUB_TOKENS_FILE": str(write_tokens_file(directory)),
            "KNOWHUB_REDIS_URL": redis_server.url,
            "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.1",
        },
    ).start()
    yield process
    process.stop()


def writers_of(kh: KnowHub, count: int, run: str, user: str) -> list[Writer]:
    """AppendEvents (each writer its trace), secure resource saves (audited in Redis) and
    Remember (the historian's job stream); `run` keeps the ids apart from other runs'."""

    def appender(w: int) -> Writer:
        def append(n: int) -> tuple[str, int]:
            kh.cognition.append_events(
                f"{run}-trace-{w}",
                [{"type": "message", "sequence": n, "role": "user", "content": f"message {w}-{n}"}],
                request_id=f"append-{w}-{n}",
            )
            return f"{run}-trace-{w}", n

        return Writer(f"append-{w}", append, keep_going=True)

    def save(n: int) -> tuple[str, int, str]:
        saved = kh.resources.save(f"{run}/r{n}", "title", "body", secure_body=f"secret {n}")
        return saved.id, saved.version, f"secret {n}"

    def remember(n: int) -> str:
        return kh.memory.remember(f"memo {n}", context={"user_id": user}).job_id

    return [
        *(appender(w) for w in range(count)),
        Writer("resource", save, keep_going=True),
        Writer("remember", remember, keep_going=True),
    ]


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_redis_away_under_load(
    fault: str, hub: ServerProcess, redis_server: RedisServer, scale: Scale, figures: Report
) -> None:
    # frozen: longer than the 3 s a call waits for a Redis that does not answer
    outage = float(scale.pick(1.5, 10) if fault == "killed" else scale.pick(4, 12))
    with KnowHub(hub.address, token="token-alice", timeout=30) as kh:
        user = "10001" if fault == "killed" else "10002"
        writers = writers_of(kh, int(scale.pick(3, 8)), fault, user)
        for writer in writers:
            writer.start()
        before = int(scale.pick(30, 2000))
        wait_until(
            lambda: sum(len(w.acknowledged) for w in writers) >= before,
            scale.pick(30, 300),
            "writes before the outage",
        )

        redis_server.kill() if fault == "killed" else redis_server.freeze()
        killed = time.monotonic()
        time.sleep(outage)
        redis_server.start() if fault == "killed" else redis_server.thaw()
        restarted = time.monotonic()
        recovery = wait_until(
            lambda: all(w.acknowledged_at and w.acknowledged_at[-1] > restarted for w in writers),
            60,
            "every writer to write again",
        )
        time.sleep(float(scale.pick(0.5, 5)))  # writing on after the recovery
        for writer in writers:
            writer.stop()
            writer.join(35)

        failures = [f for w in writers for f in w.failures]
        assert failures, "the writers met the outage"
        assert {f.code for f in failures} == {"UNAVAILABLE"}
        assert all(killed - 0.5 <= f.at <= restarted for f in failures)
        slowest = max(f.seconds for f in failures)
        assert slowest < 5.0, f"a call took {slowest:.1f}s to fail while Redis was away"

        appended = check_appends(kh, [w for w in writers if w.name.startswith("append-")])
        [resource] = [w for w in writers if w.name == "resource"]
        for resource_id, version, secret in resource.acknowledged:
            got = kh.resources.get(resource_id, include_secure=True, version=version)
            assert got.secure_body == secret
        [remember] = [w for w in writers if w.name == "remember"]
        memos = {m.job_id for m in kh.memory.recent_memos(user_id=user, limit=100)}
        assert set(remember.acknowledged[-50:]) <= memos

    latencies = [f.seconds * 1000 for f in failures]
    figures(
        f"Redis {fault} for {outage:.1f}s under load: {appended} acknowledged appends, "
        f"{len(resource.acknowledged)} secure saves, {len(remember.acknowledged)} "
        f"Remember calls, all found after the restart; {len(failures)} calls answered "
        f"UNAVAILABLE meanwhile (p50 {statistics.median(latencies):.1f} ms, max "
        f"{max(latencies):.1f} ms); every writer wrote again {recovery:.2f}s after "
        "Redis was back"
    )


def check_appends(kh: KnowHub, writers: list[Writer]) -> int:
    """Each trace holds its acknowledged appends, in order, each once."""
    total = 0
    for writer in writers:
        trace_id = writer.acknowledged[0][0]
        log = whole_log(kh, trace_id)
        assert [e.data.get("sequence", 0) for e in log] == [n for _t, n in writer.acknowledged]
        total += len(writer.acknowledged)
    return total
