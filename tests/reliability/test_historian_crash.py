"""kill -9 a historian mid-job: two dream service processes share one Redis (the job
stream and its consumer group); the LLM is slow, so the kill lands inside a job; the
survivor takes the dead worker's job over after the stale timeout (XAUTOCLAIM) and
finishes every job. No job is lost and none is applied twice.

Each process keeps its events and profiles in its own embedded Qdrant, so where a job's
effects are shows which process completed it: every job's events and profile are in
exactly one store, except the job the kill interrupted, whose first worker may have
written some of them before it died (in a shared Qdrant the survivor's writes, under
the same ids, replace them)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.reliability.conftest import Report, Scale
from tests.reliability.processes import ServerProcess, wait_until
from tests.support.harness import write_tokens_file
from tests.support.openai_stub import OpenAIStub, ToolCalls

OBSERVATION = re.compile(r"(\d{5})\)? noted (zq[a-j]+)")  # the observation or its rewrite
MARKER = re.compile(r"\bzq[a-j]+\b")
STALE_SECONDS = 1.0


class SlowHistorianLLM:
    """Rewrites `User N noted M` and merges it into N's profile, each call taking
    `delay` seconds; records the markers it was asked about and what is in flight."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.markers: list[str] = []
        self.in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> ToolCalls:
        prompt = request["messages"][-1]["content"]
        user, marker = OBSERVATION.search(prompt).groups()  # type: ignore[union-attr]
        tool = request["tools"][0]["function"]["name"]
        with self._lock:
            self.in_flight += 1
            self.markers.append(marker)
        try:
            time.sleep(self.delay)
        finally:
            with self._lock:
                self.in_flight -= 1
        if tool == "submit_rewrite":
            return ToolCalls([(tool, {"text": f"Null (QQ {user}) noted {marker}."})])
        return ToolCalls(
            [
                (
                    tool,
                    {
                        "entity_type": "user",
                        "entity_id": user,
                        "name": user,
                        "tags": [],
                        "summary": f"noted {marker}",
                    },
                )
            ]
        )


def letters(number: int) -> str:
    return "".join("abcdefghij"[int(d)] for d in str(number))


@pytest.fixture
def stubs() -> Iterator[list[OpenAIStub]]:
    started = [OpenAIStub().start(), OpenAIStub().start()]
    yield started
    for stub in started:
        stub.stop()


def dream_process(
    directory: Path, tokens: Path, redis_url: str, prefix: str, llm: OpenAIStub, workers: int = 1
) -> ServerProcess:
    return ServerProcess(
        ["serve", "dream"],
        directory,
        {
            "KNOWHUB_TOKENS_FILE": str(tokens),
            "KNOWHUB_REDIS_URL": redis_url,
            "KNOWHUB_REDIS_PREFIX": prefix,
            "KNOWHUB_LLM_BASE_URL": llm.base_url,
            "KNOWHUB_LLM_MAX_RETRIES": "0",
            "KNOWHUB_HISTORIAN_WORKERS": str(workers),
            "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
            "KNOWHUB_HISTORIAN_STALE_JOB_TIMEOUT_SECONDS": str(STALE_SECONDS),
            "KNOWHUB_HISTORIAN_FAILED_CLEANUP_INTERVAL": "1",
        },
    )


def effects(kh: KnowHub, user: str, marker: str) -> tuple[int, int]:
    """(events of the job in this store, the user's profile revisions there: -1 for no
    profile)."""
    hits = kh.memory.search_events(marker, target_user_id=user, top_k=5)
    events = sum(1 for h in hits if MARKER.findall(h.event.text) == [marker])
    try:
        profile = kh.memory.get_profile("user", user)
    except errors.NotFound:
        return events, -1
    assert MARKER.findall(profile.markdown) == [marker]
    return events, len(kh.memory.profile_revisions("user", user))


def test_a_killed_historian_loses_no_job_and_applies_none_twice(
    tmp_path: Path,
    stubs: list[OpenAIStub],
    redis_url: str,
    redis_prefix: str,
    scale: Scale,
    figures: Report,
) -> None:
    jobs_count = int(scale.pick(12, 300))
    delay = float(scale.pick(0.1, 0.05))
    llms = [SlowHistorianLLM(delay), SlowHistorianLLM(delay)]
    for stub, llm in zip(stubs, llms, strict=True):
        stub.responder = llm
    tokens = write_tokens_file(tmp_path)
    first, second = (
        dream_process(tmp_path / name, tokens, redis_url, redis_prefix, stub)
        for name, stub in (("first", stubs[0]), ("second", stubs[1]))
    )
    redis = connect(redis_url)
    stream = f"{keyspace(redis_prefix, 'historian')}jobs"
    try:
        for process in (first.spawn(), second.spawn()):
            process.ready()
        jobs: dict[str, tuple[str, str]] = {}
        with KnowHub(first.address, token="token-alice", timeout=30) as kh:
            for n in range(jobs_count):
                user, marker = str(20000 + n), f"zq{letters(n)}"
                result = kh.memory.remember(
                    "", [f"User {user} noted {marker}"], context={"user_id": user}
                )
                jobs[result.job_id] = (user, marker)
        # the kill lands inside a job: the first process has an LLM call in flight
        kill_after = max(4, jobs_count // 3)  # LLM calls: two per job
        wait_until(
            lambda: len(llms[0].markers) >= kill_after and llms[0].in_flight,
            60,
            "the first historian to be inside a job",
        )
        first.kill()
        killed = time.monotonic()
        first.env["KNOWHUB_HISTORIAN_WORKERS"] = "0"  # back to read its store, and only that
        first.spawn()
        wait_until(lambda: redis.xlen(stream) == 0, 120, "the survivor to finish every job")
        recovery = time.monotonic() - killed
        assert redis.xlen(f"{keyspace(redis_prefix, 'historian')}failed") == 0
        first.ready()
        with (
            KnowHub(first.address, token="token-alice") as in_first,
            KnowHub(second.address, token="token-alice") as in_second,
        ):
            where = {
                job: (effects(in_first, *jobs[job]), effects(in_second, *jobs[job])) for job in jobs
            }
    finally:
        first.stop()
        second.stop()

    complete = {
        job: [
            store
            for store, (events, revisions) in enumerate(found)
            if events == 1 and revisions == 0
        ]
        for job, found in where.items()
    }
    assert all(complete.values()), "every job was completed somewhere"
    interrupted = [
        job for job, found in where.items() if found[0] != (0, -1) and found[1] != (0, -1)
    ]
    # one job (the kill's) may have effects in both stores; the survivor completed it
    assert len(interrupted) <= 1 and all(1 in complete[job] for job in interrupted)
    taken_over = set(llms[0].markers) & set(llms[1].markers)
    assert len(taken_over) == 1, "the survivor redid exactly the interrupted job"
    by_first = sum(1 for stores in complete.values() if stores == [0])
    figures(
        f"kill -9 of one of two historians: {jobs_count} jobs, {by_first} done by the "
        f"killed one before the kill, {jobs_count - by_first} by the survivor (1 taken "
        f"over mid-job); none lost, none applied twice; drained {recovery:.2f}s after "
        f"the kill (stale timeout {STALE_SECONDS:.0f}s)"
    )
