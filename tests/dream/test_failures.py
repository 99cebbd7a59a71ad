"""The historian's failure handling: retries, the failed stream and its trimming,
ListFailedJobs / RetryFailedJob, a worker killed mid-job, and release at shutdown."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors

from knowhub_server.dream.memory.historian import Historian
from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    PROFILE,
    REWRITE,
    Queue,
    memory_settings,
    private_context,
    rewrite,
    tool_of,
    wait_until,
)
from tests.support.openai_stub import Delay, OpenAIStub, ToolCalls
from tests.test_server import REPO, clean_env, lines_of, wait_for

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

ONE_RETRY = {**FAST_HISTORIAN, "KNOWHUB_HISTORIAN_JOB_MAX_RETRIES": "1"}


@pytest.fixture
def queue(redis_url: str, redis_prefix: str) -> Queue:
    return Queue(redis_url, redis_prefix)


@pytest.fixture
def settings(redis_url: str, redis_prefix: str) -> dict[str, Any]:
    return memory_settings(redis_url, redis_prefix)


def poison(queue: Queue, n: int = 1) -> None:
    for i in range(n):
        queue.client.xadd(queue.jobs, {"garbage": f"not a job {i}"})


def test_a_poison_job_moves_to_the_failed_jobs_after_its_retries(
    start_hub: StartHub, settings: dict[str, Any], queue: Queue
) -> None:
    hub = start_hub(env=ONE_RETRY, **settings)
    poison(queue)
    wait_until(lambda: queue.failed_count() == 1, what="the failed job")
    assert queue.drained()
    [failed] = hub.client("admin").memory.failed_jobs()
    assert failed.deliveries == 2  # the first delivery and one retry
    assert "not a historian job" in failed.error
    assert (failed.scope, failed.memo, failed.observations) == ("", "", [])
    assert list(hub.client("alice").memory.failed_jobs()) == []  # not a scope alice sees


def test_a_failing_job_is_retried_then_failed_and_can_be_retried_by_hand(
    start_hub: StartHub, settings: dict[str, Any], queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = start_hub(env=ONE_RETRY, **settings)
    alice, bob = hub.client("alice"), hub.client("bob")
    # An embeddings outage no longer fails a job (its vectors are written later): a fault
    # injected into the job's processing does.
    assert hub.server is not None
    [historian] = [t for t in hub.server.runtime.background if isinstance(t, Historian)]
    processor = historian._processor
    process = processor.process

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(processor, "process", failing)
    result = alice.memory.remember("memo", ["User 10001 likes sailing"], context=private_context())
    wait_until(lambda: queue.failed_count() == 1, what="the failed job")
    [failed] = alice.memory.failed_jobs()
    assert (failed.job_id, failed.deliveries, failed.scope) == (result.job_id, 2, "org:acme")
    assert (failed.request_type, failed.user_id) == ("private", "10001")
    assert (failed.memo, failed.observations) == ("memo", ["User 10001 likes sailing"])
    assert "injected failure" in failed.error
    assert list(bob.memory.failed_jobs()) == []
    with pytest.raises(errors.NotFound):
        bob.memory.retry_failed_job(result.job_id)

    monkeypatch.setattr(processor, "process", process)
    assert alice.memory.retry_failed_job(result.job_id) == result.job_id
    queue.wait_drained()
    assert queue.failed_count() == 0
    assert alice.memory.search_events("sailing")[0].event.job_id == result.job_id
    with pytest.raises(errors.NotFound):
        alice.memory.retry_failed_job(result.job_id)


def test_a_job_whose_workers_kept_dying_is_given_up(
    start_hub: StartHub, settings: dict[str, Any], queue: Queue
) -> None:
    producer = start_hub(env={"KNOWHUB_HISTORIAN_WORKERS": "0"}, **settings)
    result = producer.client("alice").memory.remember(
        "", ["User 10001 likes knots"], context=private_context()
    )
    [entry] = queue.entries()
    queue.client.delete(queue.jobs)
    # As if four workers had each died holding it (job_max_retries 3 allows 4 deliveries).
    queue.client.xadd(queue.jobs, {**entry, "attempt": "4", "last_error": "worker killed"})
    producer.stop()
    hub = start_hub(env={**FAST_HISTORIAN, "KNOWHUB_HISTORIAN_WORKERS": "1"}, **settings)
    wait_until(lambda: queue.failed_count() == 1, what="the failed job")
    [failed] = hub.client("alice").memory.failed_jobs()
    assert failed.job_id == result.job_id and failed.deliveries == 5
    assert "gave up after 4 deliveries" in failed.error and "worker killed" in failed.error
    assert hub.client("alice").memory.search_events("knots") == []


def test_failed_jobs_are_paged_newest_first(
    start_hub: StartHub, settings: dict[str, Any], queue: Queue
) -> None:
    hub = start_hub(env={**ONE_RETRY, "KNOWHUB_HISTORIAN_JOB_MAX_RETRIES": "0"}, **settings)
    poison(queue, 3)
    wait_until(lambda: queue.failed_count() == 3, what="three failed jobs")
    admin = hub.client("admin")
    first = admin.memory.failed_jobs(limit=2)
    assert len(first) == 2 and first.next_page_token
    rest = admin.memory.failed_jobs(limit=2, page_token=first.next_page_token)
    assert len(rest) == 1 and rest.next_page_token == ""
    newest_first = [f[b"job_id"].decode() for _i, f in queue.client.xrevrange(queue.failed)]
    assert [j.job_id for j in [*first, *rest]] == newest_first
    with pytest.raises(errors.InvalidArgument, match="page_token"):
        admin.memory.failed_jobs(page_token="garbage")
    with pytest.raises(errors.InvalidArgument, match="page_size"):
        admin.memory.failed_jobs(limit=101)
    with pytest.raises(errors.InvalidArgument, match="job_id"):
        admin.memory.retry_failed_job("")


def test_failed_jobs_are_trimmed_by_count_and_age(
    start_hub: StartHub, settings: dict[str, Any], queue: Queue
) -> None:
    ancient = {"garbage": "x", "error": "old", "job_id": "ancient", "failed_at": "1"}
    queue.client.xadd(queue.failed, ancient, id="1000-0")  # failed in 1970
    start_hub(
        env={
            **FAST_HISTORIAN,
            "KNOWHUB_HISTORIAN_JOB_MAX_RETRIES": "0",
            "KNOWHUB_HISTORIAN_FAILED_MAX_FILES": "2",
        },
        **settings,
    )
    poison(queue, 3)
    queue.wait_drained()
    wait_until(lambda: queue.failed_count() == 2, what="the trim")
    kept = [
        json.dumps({k.decode(): v.decode() for k, v in f.items()})
        for _i, f in queue.client.xrange(queue.failed)
    ]
    assert not any("ancient" in k for k in kept)
    assert [("not a job 1" in kept[0]), ("not a job 2" in kept[1])] == [True, True]


# ---- Workers that die or stop ---------------------------------------------------------------


def test_a_job_whose_worker_was_killed_is_finished_by_another_process(
    start_hub: StartHub,
    llm: OpenAIStub,
    tmp_path: Path,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    queue: Queue,
) -> None:
    released = threading.Event()

    def hang(_request: dict[str, Any]) -> ToolCalls:  # the first worker waits here, killed
        released.wait(60)
        return ToolCalls([])

    llm.responder = hang
    env = {
        **clean_env(),
        "KNOWHUB_REDIS_URL": redis_url,
        "KNOWHUB_REDIS_PREFIX": redis_prefix,
        "KNOWHUB_LLM_BASE_URL": llm.base_url,
        "KNOWHUB_LLM_MAX_RETRIES": "0",
        "KNOWHUB_TOKENS_FILE": str(tokens_file),
        "KNOWHUB_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "serve",
            "dream",
            "--data-dir",
            str(tmp_path / "first"),
            "--port",
            "0",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(wait_for(lines_of(process.stdout), r"listening on [\d.]+:(\d+)").group(1))
        with KnowHub(f"127.0.0.1:{port}", token="token-alice") as first:
            result = first.memory.remember(
                "", ["User 10001 plays the cello"], context=private_context()
            )
        wait_until(lambda: llm.chat_requests, what="the first worker to take the job")
        process.kill()
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
    summary = queue.client.xpending(queue.jobs, "historian")
    assert summary["pending"] == 1, "the dead worker holds the job"
    dead = summary["consumers"][0]["name"].decode()
    assert f"-{process.pid}-" in dead

    llm.script(rewrite("Null (QQ 10001) plays the cello."), ToolCalls([]))
    hub = start_hub(
        env={
            **FAST_HISTORIAN,
            "KNOWHUB_HISTORIAN_STALE_JOB_TIMEOUT_SECONDS": "0.5",
            "KNOWHUB_HISTORIAN_FAILED_CLEANUP_INTERVAL": "1",
        },
        **memory_settings(redis_url, redis_prefix, llm),
    )
    queue.wait_drained()
    released.set()
    event = hub.client("alice").memory.search_events("cello")[0].event
    assert (event.job_id, event.is_absolute) == (result.job_id, True)
    assert queue.failed_count() == 0
    wait_until(
        lambda: (
            dead
            not in {
                c["name"].decode() for c in queue.client.xinfo_consumers(queue.jobs, "historian")
            }
        ),
        what="the dead worker to be swept from the group",
    )


def test_stopping_releases_a_job_in_progress_without_charging_it(
    start_hub: StartHub,
    llm: OpenAIStub,
    settings: dict[str, Any],
    redis_url: str,
    redis_prefix: str,
    queue: Queue,
) -> None:
    gate = threading.Event()

    def slow(request: dict[str, Any]) -> ToolCalls:
        gate.wait(30)
        if tool_of(request) == REWRITE:
            return rewrite("Null (QQ 10001) likes the composer Bach.")
        return ToolCalls([])

    llm.responder = slow
    llm_settings = memory_settings(redis_url, redis_prefix, llm)
    hub = start_hub(env=FAST_HISTORIAN, **llm_settings)
    hub.client("alice").memory.remember(
        "", ["User 10001 likes Bach", "User 10001 likes Brahms"], context=private_context()
    )
    wait_until(lambda: llm.chat_requests, what="the worker to start the job")
    assert hub.server is not None
    historian = next(b for b in hub.server.runtime.background if isinstance(b, Historian))
    stopper = threading.Thread(target=hub.stop)
    stopper.start()
    wait_until(lambda: historian.stopping, what="the shutdown to begin")
    gate.set()
    stopper.join(30)
    assert not stopper.is_alive()
    [entry] = queue.entries()
    assert entry["attempt"] == "0", "a release is not a failed delivery"
    assert len(llm.chat_requests) == 1, "the worker stopped after its current step"

    again = start_hub(env=FAST_HISTORIAN, **llm_settings)
    queue.wait_drained()
    assert len(again.client("alice").memory.search_events("Bach", top_k=10)) == 2
    assert [tool_of(r) for r in llm.chat_requests].count(REWRITE) == 3


def test_a_slow_worker_keeps_its_job_by_touching_it(
    start_hub: StartHub, llm: OpenAIStub, redis_url: str, redis_prefix: str, queue: Queue
) -> None:
    # Each LLM step takes 0.4 s, the whole job 1.2 s: longer than the stale timeout
    # (1 s), which only an untouched job would reach; the second worker stays idle.
    llm.script(
        Delay(0.4, rewrite("Null (QQ 10001) likes the color teal.")),
        Delay(0.4, rewrite("Null (QQ 10001) likes the color mauve.")),
        Delay(0.4, ToolCalls([])),
    )
    hub = start_hub(
        env={
            **FAST_HISTORIAN,
            "KNOWHUB_HISTORIAN_WORKERS": "2",
            "KNOWHUB_HISTORIAN_STALE_JOB_TIMEOUT_SECONDS": "1",
        },
        **memory_settings(redis_url, redis_prefix, llm),
    )
    hub.client("alice").memory.remember(
        "", ["User 10001 likes teal", "User 10001 likes mauve"], context=private_context()
    )
    queue.wait_drained()
    assert [tool_of(r) for r in llm.chat_requests] == [REWRITE, REWRITE, PROFILE]
    assert len(hub.client("alice").memory.search_events("color", top_k=10)) == 2
