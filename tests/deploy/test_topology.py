"""The compose topology as separate processes: one Redis, the four services each in its
own `knowhub serve` process on a port of its own, finding each other through
KNOWHUB_<SERVICE>_ADDRESS (dns:/// targets, as in compose) with a tokens file. A flow
through the SDK crosses every service-to-service call; SIGTERM stops each cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub, errors

from knowhub_server.common.runtime.health_probe import check
from knowhub_server.composition import SERVICE_NAMES
from tests.dream.dreaming import message, wait_run, write_dream_tokens
from tests.support.ports import free_port
from tests.test_server import REPO, clean_env

START_SECONDS = 90.0


def health(address: str, service: str) -> subprocess.CompletedProcess[str]:
    """`knowhub health`, as compose's healthcheck runs it."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "health",
            "--target",
            address,
            "--service",
            service,
            "--timeout",
            "2",
        ],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def wait_healthy(process: subprocess.Popen[str], address: str, service: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not check(address, service, timeout=2)[0]:
        assert process.poll() is None, f"{service} exited: {process.communicate()}"
        assert time.monotonic() < deadline, f"{service} not healthy in {START_SECONDS}s"
        time.sleep(0.2)
    probe = health(address, service)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == f"{service} at {address}: SERVING"


@pytest.fixture
def topology(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[dict[str, str]]:
    """The four services, each in its own process; yields their addresses."""
    ports = {service: free_port() for service in SERVICE_NAMES}
    env = {
        **clean_env(),
        "KNOWHUB_TOKENS_FILE": str(write_dream_tokens(tmp_path)),
        "KNOWHUB_REDIS_URL": redis_url,
        "KNOWHUB_REDIS_PREFIX": redis_prefix,
        "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream",
        "KNOWHUB_DREAM_POLL_INTERVAL_SECONDS": "0.05",
        "KNOWHUB_LOG_LEVEL": "WARNING",
        **{f"KNOWHUB_{s.upper()}_ADDRESS": f"dns:///127.0.0.1:{p}" for s, p in ports.items()},
    }
    processes = {
        service: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "knowhub_server.cli",
                "serve",
                service,
                "--port",
                str(port),
                "--data-dir",
                str(tmp_path / service),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for service, port in ports.items()
    }
    addresses = {service: f"127.0.0.1:{port}" for service, port in ports.items()}
    try:
        for service, process in processes.items():
            wait_healthy(process, addresses[service], service)
        yield addresses
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for service, process in processes.items():
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0, f"{service}: {err}"
            assert out.splitlines()[-1] == "KnowHub stopped", out
            probe = health(addresses[service], service)
            assert probe.returncode == 1
            assert "unreachable (UNAVAILABLE" in probe.stderr
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate()


def test_a_flow_crosses_every_service_in_its_own_process(topology: dict[str, str]) -> None:
    with KnowHub(token="token-alice", timeout=30, **topology) as alice:
        # knowledge -> resource: resource_ids are checked by the resource service.
        alice.resources.save("code/login", "login helper", "driver.get(url)", content_type="code")
        linked = alice.knowledge.save(
            task="log in to site A",
            content="use the helper",
            types=["tool"],
            resource_ids=["code/login"],
        )
        assert linked.resource_ids == ["code/login"]
        with pytest.raises(errors.InvalidArgument, match=r"resource_ids\[0\]"):
            alice.knowledge.save(
                task="t", content="c", types=["tool"], resource_ids=["code/absent"]
            )
        alice.resources.delete("code/login")
        hit = alice.knowledge.search("log in to site A", top_k=1)[0]
        assert [(r.resource_id, r.reason) for r in hit.unavailable_resources] == [
            ("code/login", "deleted")
        ]

        # cognition -> knowledge: an approved extraction becomes knowledge.
        trace_id = f"trace-{uuid.uuid4().hex[:12]}"
        alice.cognition.append_events(trace_id, [message(1, "I log in to site A daily")])
        pending = alice.cognition.save_pending(
            trace_id, task="rotate the password", content="every 90 days", types=["strategy"]
        )
        extraction_id = pending.extraction.extraction_id
        alice.cognition.review_extraction(trace_id, extraction_id, "approve")
        knowledge_id = alice.cognition.commit_extractions(trace_id).committed[extraction_id]
        assert alice.knowledge.get(knowledge_id).content == "every 90 days"

        # dream -> cognition: a run's traces are checked with cognition, as the caller.
        with pytest.raises(errors.NotFound):
            alice.dream.run(trace_ids=["trace-nobody-wrote"])
        run = wait_run(alice, alice.dream.run(trace_ids=[trace_id]).run_id)
        assert run.finished
        print(f"\ndream run over {trace_id}: {run.status} ({run.reason})")
