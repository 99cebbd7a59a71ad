"""Dream runs when things go wrong: runs of one agent never overlap, a run whose process was
killed is taken over and finished, a run in progress at shutdown is put back uncharged,
and a run whose workers kept dying is failed."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from knowhub import KnowHub

from knowhub_server.common.storage.redis_store import connect, keyspace
from knowhub_server.dream.runs.dreamer import Dreamer
from tests.conftest import StartHub
from tests.dream.dreaming import FAST, DreamLLM, message, new_trace, wait_run, write_dream_tokens
from tests.dream.support import wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.test_server import REPO, clean_env, lines_of, wait_for

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


# The dream's Redis keys of alice's agent: agent ids are kept qualified by their org.
ALICES_AGENT = "acme:alice_bot"


def dream_hub(
    start_hub: StartHub,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    llm: OpenAIStub,
    **env: str,
) -> Harness:
    write_dream_tokens(tokens_file.parent)
    return start_hub(
        env={**FAST, **env},
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=30,
    )


def alice_trace(client: KnowHub, text: str = "I prefer window seats") -> str:
    trace_id = new_trace()
    client.cognition.append_events(trace_id, [message(1, text)])
    return trace_id


def test_runs_of_one_agent_never_overlap(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    scripted.gate = threading.Event()
    llm.responder = scripted
    hub = dream_hub(start_hub, tokens_file, redis_url, redis_prefix, llm, KNOWHUB_DREAM_WORKERS="2")
    alice, admin = hub.client("alice"), hub.client("admin")
    alice_trace(alice)
    admin.cognition.append_events(new_trace(), [message(1, "other agent")], agent_id="bot-z")

    first = alice.dream.run()
    wait_until(lambda: scripted.prompts["reflect"], what="the first run to reach the LLM")
    second = wait_run(alice, alice.dream.run().run_id)
    assert second.status == "skipped"
    assert second.reason == (
        f"agent 'alice_bot' has run {first.run_id} in progress; runs of one agent never overlap"
    )
    assert alice.dream.get_run(first.run_id).status == "running"
    other = admin.dream.run(agent_id="bot-z")  # another agent is not held up
    wait_until(lambda: len(scripted.prompts["reflect"]) == 2, what="the other agent's run")

    scripted.gate.set()
    assert wait_run(alice, first.run_id).status == "done"
    assert wait_run(admin, other.run_id).status == "done"
    assert second.counts["llm_calls"] == 0
    third = wait_run(alice, alice.dream.run().run_id)  # the lock was released
    assert third.status == "done"


def test_a_run_whose_process_was_killed_is_taken_over_and_finished(
    start_hub: StartHub,
    tmp_path: Path,
    tokens_file: Path,
    redis_url: str,
    redis_prefix: str,
    llm: OpenAIStub,
) -> None:
    scripted = DreamLLM()
    scripted.gate = threading.Event()  # the first process waits here until killed
    llm.responder = scripted
    write_dream_tokens(tokens_file.parent)
    env = {
        **clean_env(),
        **FAST,
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
            "up",
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
            trace_id = alice_trace(first)
            run = first.dream.run()
            wait_until(lambda: scripted.prompts["reflect"], what="the run to reach the LLM")
            assert first.dream.get_run(run.run_id).status == "running"
        process.kill()
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
    redis = connect(redis_url)
    assert redis.get(f"{keyspace(redis_prefix, 'dream')}lock:{ALICES_AGENT}") == run.run_id.encode()
    assert redis.xpending(f"{keyspace(redis_prefix, 'dream')}runs", "dreamers")["pending"] == 1

    scripted.gate = None
    hub = dream_hub(
        start_hub,
        tokens_file,
        redis_url,
        redis_prefix,
        llm,
        KNOWHUB_DREAM_STALE_RUN_TIMEOUT_SECONDS="0.5",
    )
    alice = hub.client("alice")
    finished = wait_run(alice, run.run_id)
    assert (finished.status, finished.attempts) == ("done", 2)
    assert finished.counts["reflections_written"] == 1
    [reflection] = alice.cognition.get_log(trace_id, types=["reflection"])
    assert reflection["consumed_at"]
    assert redis.get(f"{keyspace(redis_prefix, 'dream')}lock:{ALICES_AGENT}") is None


def test_stopping_puts_a_run_in_progress_back_uncharged(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    scripted.gate = threading.Event()
    llm.responder = scripted
    hub = dream_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice = hub.client("alice")
    alice_trace(alice, "first trace")
    alice_trace(alice, "second trace")
    run = alice.dream.run()
    wait_until(lambda: scripted.prompts["reflect"], what="the run to reach the LLM")
    assert hub.server is not None
    dreamer = next(b for b in hub.server.runtime.background if isinstance(b, Dreamer))
    stopper = threading.Thread(target=hub.stop)
    stopper.start()
    wait_until(lambda: dreamer.stopping, what="the shutdown to begin")
    scripted.gate.set()
    stopper.join(30)
    assert not stopper.is_alive()

    redis = connect(redis_url)
    [(_id, fields)] = redis.xrange(f"{keyspace(redis_prefix, 'dream')}runs")
    assert fields[b"attempt"] == b"0", "a release is not a failed delivery"
    assert redis.hget(f"{keyspace(redis_prefix, 'dream')}run:{run.run_id}", "status") == b"queued"
    assert redis.get(f"{keyspace(redis_prefix, 'dream')}lock:{ALICES_AGENT}") is None

    again = dream_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    finished = wait_run(again.client("alice"), run.run_id)
    assert (finished.status, finished.attempts) == ("done", 1)
    assert finished.counts["reflections_written"] == 2


def test_a_run_whose_workers_kept_dying_is_failed(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    producer = dream_hub(
        start_hub, tokens_file, redis_url, redis_prefix, llm, KNOWHUB_DREAM_WORKERS="0"
    )
    alice = producer.client("alice")
    alice_trace(alice)
    run = alice.dream.run()
    redis = connect(redis_url)
    stream = f"{keyspace(redis_prefix, 'dream')}runs"
    [(entry_id, fields)] = redis.xrange(stream)
    redis.xdel(stream, entry_id)
    # As if three workers had each died holding it (dream_run_max_attempts is 3).
    redis.xadd(stream, {k.decode(): v.decode() for k, v in fields.items()} | {"attempt": "3"})
    producer.stop()

    hub = dream_hub(start_hub, tokens_file, redis_url, redis_prefix, llm, KNOWHUB_DREAM_WORKERS="1")
    failed = wait_run(hub.client("alice"), run.run_id)
    assert failed.status == "failed"
    assert failed.reason == "gave up after 3 deliveries whose worker stopped or stalled"
    assert llm.chat_requests == []
    # The worker records the run failed, then acknowledges and deletes its entry.
    wait_until(lambda: redis.xlen(stream) == 0, what="the given-up run's entry deleted")
    assert redis.ttl(f"{keyspace(redis_prefix, 'dream')}run:{run.run_id}") > 29 * 86_400


def test_an_integration_left_unconsumed_is_finished_by_the_next_run(
    start_hub: StartHub, tokens_file: Path, redis_url: str, redis_prefix: str, llm: OpenAIStub
) -> None:
    scripted = DreamLLM()
    llm.responder = scripted
    hub = dream_hub(start_hub, tokens_file, redis_url, redis_prefix, llm)
    alice = hub.client("alice")
    trace_id = alice_trace(alice)
    wait_run(alice, alice.dream.run(phases=["per_trace_reflect"]).run_id)
    [reflection] = alice.cognition.get_log(trace_id, types=["reflection"])
    # As a run leaves it when it dies between writing the documents and consuming.
    connect(redis_url).hset(
        f"{keyspace(redis_prefix, 'dream')}outbox:{ALICES_AGENT}",
        "dream-dead|0",
        json.dumps({trace_id: [reflection.event_id]}),
    )

    run = wait_run(alice, alice.dream.run(phases=["cross_trace_integrate"]).run_id)

    assert run.status == "done" and run.counts["reflections_consumed"] == 1
    assert run.counts["llm_calls"] == 0, "the integrated reflection is not integrated again"
    assert alice.cognition.get_log(trace_id, types=["reflection"])[0]["consumed_at"]
    assert connect(redis_url).hlen(f"{keyspace(redis_prefix, 'dream')}outbox:{ALICES_AGENT}") == 0
