"""The server runtime: health, reflection, restarts, the embedding manifest and
`knowhub reindex`, and `knowhub up` as a real process."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from knowhub import KnowHub

from knowhub_server.cli import main as knowhub_cli
from knowhub_server.common.storage.vectors import StoreMismatch
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import failure, running_hub, visible_records

REPO = Path(__file__).resolve().parents[1]
KNOWLEDGE_SERVICE = "knowhub.v1.KnowledgeService"
STARTUP_SECONDS = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with running_hub(tmp_path_factory.mktemp("server")) as harness:
        yield harness


@pytest.fixture
def channel(server: Harness) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as opened:
        yield opened


# ---- Health and reflection ------------------------------------------------------------------


@pytest.mark.parametrize("service", ["", KNOWLEDGE_SERVICE])
def test_health_reports_serving(channel: grpc.Channel, service: str) -> None:
    response = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=10
    )
    assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_health_of_an_unknown_service_is_not_found(channel: grpc.Channel) -> None:
    with pytest.raises(grpc.RpcError) as info:
        health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="knowhub.v1.NoSuchService"), timeout=10
        )
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def reflect(channel: grpc.Channel, **request: Any) -> reflection_pb2.ServerReflectionResponse:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(**request)]), timeout=10
    )
    return next(iter(responses))


def test_reflection_lists_the_services(channel: grpc.Channel) -> None:
    response = reflect(channel, list_services="")
    names = {s.name for s in response.list_services_response.service}
    assert {
        KNOWLEDGE_SERVICE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names


def test_reflection_describes_the_knowledge_service(channel: grpc.Channel) -> None:
    response = reflect(channel, file_containing_symbol=KNOWLEDGE_SERVICE)
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in response.file_descriptor_response.file_descriptor_proto
    ]
    methods = {
        m.name for f in files for s in f.service if s.name == "KnowledgeService" for m in s.method
    }
    assert {
        "SaveKnowledge",
        "SearchKnowledge",
        "ListKnowledge",
        "UpdateKnowledge",
        "DeleteKnowledge",
        "SlimKnowledge",
    } <= methods


# ---- Restart persistence ---------------------------------------------------------------------


def test_data_survives_a_restart(tmp_path: Path) -> None:
    with running_hub(tmp_path) as harness:
        alice = harness.client("alice")
        kept = alice.knowledge.save(
            task="deploy the kestrel service",
            content="blue-green with a canary",
            types=["plan"],
            tags={"domain": "ops"},
            urls=["https://example.com/k"],
        )
        alice.knowledge.update(
            kept.id, add_helpful_case={"task": "release 1", "outcome": "ok"}, update_score=5
        )
        alice.knowledge.batch_update(
            [
                {
                    "knowledge_id": kept.id,
                    "is_helpful": False,
                    "case": {"task": "release 2", "reason": "slow"},
                }
            ]
        )
        gone = alice.knowledge.save(task="kestrel scratch", content="temp", types=["tool"])
        alice.knowledge.delete(gone.id)
        before = visible_records(alice)
        assert before[kept.id]["eval"]["helpful"] == 2

        harness.restart()

        alice = harness.client("alice")
        assert visible_records(alice) == before
        record = alice.knowledge.get(kept.id)
        assert (record.eval.helpful, record.eval.harmful, record.eval.score) == (2, 1, 5)
        assert [c.task for c in record.eval.helpful_history] == ["release 1"]
        assert [c.reason for c in record.eval.harmful_history] == ["slow"]
        assert [h.knowledge.id for h in alice.knowledge.search("kestrel", min_score=1)] == [kept.id]
        after = alice.knowledge.update(kept.id, add_helpful_case={"task": "release 3"})
        assert after.eval.helpful == 3


# ---- Embedding manifest and reindex ---------------------------------------------------------


def embedding_env(stub: OpenAIStub) -> dict[str, str]:
    return {
        "KNOWHUB_EMBEDDING_BASE_URL": stub.base_url,
        "KNOWHUB_EMBEDDING_MODEL": "stub-embed",
        "KNOWHUB_EMBEDDING_DIM": str(stub.embedding_dim),
        "KNOWHUB_LLM_MAX_RETRIES": "0",
    }


def test_another_embedding_needs_a_reindex(
    tmp_path: Path,
    llm: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with running_hub(tmp_path) as bm25_only:
        alice = bm25_only.client("alice")
        saved = alice.knowledge.save_many(
            [
                {
                    "task": f"rotate the juniper credentials {i}",
                    "content": "use the vault",
                    "types": ["tool"],
                }
                for i in range(3)
            ]
        )
        before = visible_records(alice)

    for name, value in embedding_env(llm).items():
        monkeypatch.setenv(name, value)
    hybrid = Harness(tmp_path / "data", tokens_file=tmp_path / "tokens.json")
    with pytest.raises(StoreMismatch, match="knowhub reindex"):
        hybrid.start()
    hybrid.stop()

    assert knowhub_cli(["reindex", "--data-dir", str(tmp_path / "data")]) == 0
    assert "3 records re-embedded; done" in capsys.readouterr().out

    with running_hub(tmp_path, tokens=tmp_path / "tokens.json") as reindexed:
        alice = reindexed.client("alice")
        assert visible_records(alice) == before
        asked = len(llm.embedding_requests)
        hits = alice.knowledge.search("juniper credentials")
        assert {h.knowledge.id for h in hits} == {k.id for k in saved}
        assert len(llm.embedding_requests) == asked + 1, "the query was embedded (hybrid)"

    monkeypatch.delenv("KNOWHUB_EMBEDDING_BASE_URL")
    bm25_again = Harness(tmp_path / "data", tokens_file=tmp_path / "tokens.json")
    with pytest.raises(StoreMismatch, match="knowhub reindex"):
        bm25_again.start()
    bm25_again.stop()


# ---- `knowhub up` as a process ---------------------------------------------------------------


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}


def lines_of(stream: IO[str]) -> queue.Queue[str]:
    """A queue the stream's lines arrive on, read by a daemon thread."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def wait_for(lines: queue.Queue[str], pattern: str) -> re.Match[str]:
    seen = []
    while True:
        try:
            line = lines.get(timeout=STARTUP_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no line matching {pattern!r} in {seen!r}") from None
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match


@pytest.fixture
def knowhub_up(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "up",
            "--data-dir",
            str(tmp_path / "hub"),
            "--port",
            "0",
        ],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield process
    if process.poll() is None:
        process.kill()
        process.wait()


def test_knowhub_up_serves_and_stops_on_sigterm(
    knowhub_up: subprocess.Popen[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert knowhub_up.stdout is not None and knowhub_up.stderr is not None
    stdout = lines_of(knowhub_up.stdout)
    listening = wait_for(stdout, r"^KnowHub listening on 127\.0\.0\.1:(\d+) ")
    port = int(listening.group(1))
    assert port > 0
    assert str((tmp_path / "hub").resolve()) in listening.string

    # The SDK finds the local token of the data directory KNOWHUB_DATA_DIR names.
    monkeypatch.setenv("KNOWHUB_DATA_DIR", str(tmp_path / "hub"))
    monkeypatch.delenv("KNOWHUB_TOKEN", raising=False)
    with KnowHub(f"127.0.0.1:{port}", timeout=30) as kh:
        saved = kh.knowledge.save(
            task="brew saffron tea", content="steep five minutes", types=["usecase"]
        )
        assert (saved.owner, saved.scopes) == ("user:local", ["org:local"])
        assert [h.knowledge.id for h in kh.knowledge.search("saffron")] == [saved.id]
        kh.resources.save("credentials/tea", "tea", "the shop", secure_body="s3cret")
    with KnowHub(f"127.0.0.1:{port}", token="", timeout=30) as stranger:
        code, message = failure(lambda: stranger.knowledge.list())
        assert code == "UNAUTHENTICATED" and "local_token" in message
    # Only this user can read what the hub keeps: the token, secrets, logs, the AOF.
    kept = [tmp_path / "hub", *(tmp_path / "hub").rglob("*")]
    assert (tmp_path / "hub" / "local_token") in kept
    assert any(p.name.startswith("appendonly") for p in kept), "the AOF is among them"
    assert not [
        (str(p), oct(p.stat().st_mode))
        for p in kept
        if not p.is_symlink() and p.stat().st_mode & 0o077
    ]

    knowhub_up.send_signal(signal.SIGTERM)
    assert knowhub_up.wait(timeout=STARTUP_SECONDS) == 0
    wait_for(stdout, r"^KnowHub stopped$")
    assert "KNOWHUB_TOKENS_FILE" in knowhub_up.stderr.read(), "says it runs without tokens"
    assert (tmp_path / "hub" / "qdrant" / "knowledge").is_dir()


def test_a_fresh_hub_in_an_empty_folder_is_used_with_its_local_token(tmp_path: Path) -> None:
    """As a newcomer (or a checker) does it: `knowhub up` in an empty folder with no
    settings; a client elsewhere without a token is refused, finds the token file the hub
    wrote under that folder, and then saves, remembers and logs without naming an agent."""
    folder = tmp_path / "fresh"
    folder.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "knowhub_server.cli", "up", "--port", "0", "--gateway-port", "0"],
        cwd=folder,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(
            wait_for(lines_of(process.stdout), r"^KnowHub listening on 127\.0\.0\.1:(\d+) ").group(
                1
            )
        )
        with KnowHub(f"127.0.0.1:{port}", token="", timeout=30) as anonymous:
            assert failure(lambda: anonymous.knowledge.list())[0] == "UNAUTHENTICATED"
        (token_file,) = [p for p in folder.rglob("*") if "token" in p.name and p.is_file()]
        token = token_file.read_text().strip()
        with KnowHub(f"127.0.0.1:{port}", token=token, timeout=30) as kh:
            kh.knowledge.save(task="t", content="c", types=["tool"])
            kh.resources.save("smoke/x", title="t", body="b", secure_body="s")
            kh.cognition.append_events(
                "smoke-x", [{"type": "message", "role": "user", "content": "hi"}]
            )
            assert kh.memory.remember(memo="m", context={"user_id": "uX"}).memo_recorded
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=STARTUP_SECONDS)
    assert process.returncode == 0


def test_knowhub_up_on_a_public_address_without_tokens_refuses(tmp_path: Path) -> None:
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "up",
            "--data-dir",
            str(tmp_path / "hub"),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
    )
    assert finished.returncode != 0
    assert "KNOWHUB_TOKENS_FILE" in finished.stderr
    assert "KnowHub listening" not in finished.stdout
