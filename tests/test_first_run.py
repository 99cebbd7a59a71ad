"""The first hour of a new user: `knowhub up` started as the README says — from a fresh
folder, the relative default data directory ./.knowhub, no KNOWHUB_* environment — then
one real call to each service, the gateway and the console, as a newcomer makes them.
(The ports are chosen by the system: other hubs may hold 50051 and 8080 on this machine.)
A second `knowhub up` and a `knowhub reindex` on the same folder are one clear line."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from knowhub import KnowHub

from tests.support.real_embeddings import MODEL_NAME, model_path

KNOWHUB = Path(sys.executable).with_name("knowhub")
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ")


def newcomer_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}


def knowhub(folder: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(KNOWHUB), *args],
        cwd=folder,
        env=newcomer_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@dataclass
class StartedHub:
    process: subprocess.Popen[str]
    target: str
    gateway: str


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    fresh = tmp_path / "my-agents"
    fresh.mkdir()
    return fresh


def start(folder: Path) -> StartedHub:
    """`knowhub up` in the folder, once it listens."""
    process = knowhub(folder, "up", "--port", "0", "--gateway-port", "0")
    assert process.stdout is not None
    lines = [process.stdout.readline(), process.stdout.readline()]
    grpc_line = re.search(r"KnowHub listening on (\S+) ", lines[0])
    gateway_line = re.search(r"gateway listening on (http://\S+) ", lines[1])
    if not (grpc_line and gateway_line):
        raise AssertionError(f"no listening lines: {lines}; {stop(process)}")
    return StartedHub(process, grpc_line.group(1), gateway_line.group(1))


@pytest.fixture
def started(folder: Path) -> Iterator[StartedHub]:
    hub = start(folder)
    try:
        yield hub
    finally:
        stop(hub.process)


def stop(process: subprocess.Popen[str]) -> str:
    """Stops a hub the test left running (a failed assertion): SIGTERM first, so it stops
    its redis-server too. Returns what it wrote on stderr."""
    if process.poll() is not None:
        return ""
    process.send_signal(signal.SIGTERM)
    try:
        return process.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()[1]


def test_knowhub_up_from_a_fresh_folder_serves_every_service_and_holds_the_folder(
    started: StartedHub, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder)  # the SDK finds ./.knowhub/local_token, as a newcomer's does
    for name in [k for k in os.environ if k.startswith("KNOWHUB_")]:
        monkeypatch.delenv(name)
    data_dir = folder / ".knowhub"
    with KnowHub(started.target) as kh:
        saved = kh.knowledge.save(
            task="log in to website A", content="use the test account", types=["tool"]
        )
        assert [h.knowledge.id for h in kh.knowledge.search("website A login")] == [saved.id]
        kh.resources.save(
            "credentials/website_a",
            "website A test account",
            "log in directly; 100 logins a day",
            secure_body="user@example.com / s3cret",
            content_type="credential",
        )
        assert (
            kh.resources.get("credentials/website_a", include_secure=True).secure_body
            == "user@example.com / s3cret"
        )
        appended = kh.cognition.append_events(
            "trace-1", [{"type": "message", "role": "user", "content": "log in to website A"}]
        )
        assert appended.trace.event_count == 1
        remembered = kh.memory.remember("likes green tea", context={"user_id": "u1"})
        assert remembered.enqueued and remembered.memo_recorded
        assert list(kh.dream.list_runs()) == []

    token = (data_dir / "local_token").read_text().strip()
    found = httpx.get(
        f"{started.gateway}/api/knowledge/search",
        params={"q": "website A"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert found.status_code == 200 and found.json()["count"] == 1
    console = httpx.get(f"{started.gateway}/console/", timeout=30)
    assert console.status_code == 200 and "<html" in console.text

    assert (data_dir / "redis" / "redis.log").is_file()  # where Redis errors point

    for args in (["up", "--port", "0", "--gateway-port", "0"], ["reindex"]):
        second = knowhub(folder, *args)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1, (out, err)
        assert err.splitlines() == [
            f"knowhub: {data_dir} is in use by another KnowHub process (pid "
            f"{started.process.pid}: knowhub up); stop it first, or give another --data-dir"
        ]

    backup = knowhub(folder, "backup", "--to", "../backup", "--target", started.target)
    out, err = backup.communicate(timeout=120)
    assert backup.returncode == 0, err
    # (the memory events are there once the historian has taken the job)
    assert re.fullmatch(
        f"backup written to {re.escape(str(folder.parent / 'backup'))}: 1 knowledge, 0 "
        r"knowledge_requests, 0 knowledge_deleted, 1 resources, 1 resource_versions, "
        r"\d+ memory_events, 0 memory_profiles; \d+ Redis keys; files: "
        r"keys/master-keys.json, local_token\n",
        out,
    )
    assert err == ""  # no progress bars when not on a terminal

    started.process.send_signal(signal.SIGTERM)
    out, err = started.process.communicate(timeout=60)
    assert started.process.returncode == 0 and out.endswith("KnowHub stopped\n")
    # the files the hub's messages name exist, whatever directory one reads them from
    named = re.findall(r"(/\S+master-keys\.json)", err)
    assert named and all(Path(p).is_file() for p in named), err

    restore = knowhub(folder, "restore", "--from", "../backup", "--data-dir", "../restored")
    out, err = restore.communicate(timeout=120)
    assert restore.returncode == 0, err
    assert out.startswith(
        f"restored {folder.parent / 'backup'} into {folder.parent / 'restored'}: 1 knowledge"
    )
    for name in ("local_token", "keys/master-keys.json"):
        assert (folder.parent / "restored" / name).read_bytes() == (data_dir / name).read_bytes()


def test_hybrid_search_with_no_endpoint_then_back_to_bm25_as_the_hub_says(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embeddings turned on in the data directory's knowhub.toml, with the model in the
    hub's own process; then turned off again: the hub says how to go on, in a command
    that works as written and leaves every file private."""
    monkeypatch.chdir(folder)
    config = folder / ".knowhub" / "knowhub.toml"
    config.parent.mkdir(mode=0o700)
    config.write_text(
        f'embedding_model_path = "{model_path()}"\nembedding_model = "{MODEL_NAME}"\n'
    )
    config.chmod(0o600)
    hub = start(folder)
    try:
        with KnowHub(hub.target) as kh:
            kh.knowledge.save(
                task="Renew the TLS certificate of the web server",
                content="Run certbot renew, then reload nginx.",
                types=["tool"],
            )
            kh.knowledge.save(
                task="Feed the office cat", content="Twice a day, dry food.", types=["usecase"]
            )
            hits = kh.knowledge.search("how do I refresh an expiring https cert", top_k=1)
            assert [h.knowledge.task for h in hits] == [
                "Renew the TLS certificate of the web server"
            ]
    finally:
        assert "embedding model all-MiniLM-L6-v2 (384 dimensions) loaded" in stop(hub.process)

    config.write_text("")  # embeddings off
    refused = knowhub(folder, "up", "--port", "0", "--gateway-port", "0")
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 1, (out, err)
    told = [line for line in err.splitlines() if not LOG_LINE.match(line)]
    assert told == [
        f"knowhub: the knowledge store at {folder / '.knowhub/qdrant/knowledge'} was built "
        "with embedding model 'all-MiniLM-L6-v2' with 384 dimensions, but the settings ask "
        "for BM25 only (no embedding model).",
        "To keep these vectors, start again with the settings they were built with (the "
        f"embedding_* lines of {config}, or the KNOWHUB_EMBEDDING_* variables).",
        "To rebuild them for the settings in use now, stop every KnowHub that uses this data "
        "directory, then run here, with the same settings:",
        f"    {KNOWHUB} reindex",
    ]

    reindex = subprocess.run(
        shlex.split(told[-1]),
        cwd=folder,
        env=newcomer_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert reindex.returncode == 0, reindex.stderr
    assert reindex.stdout.splitlines() == [
        "knowledge: 2 records re-embedded; done",
        "memory: 0 records re-embedded; done",
    ]
    opened = [p for p in folder.joinpath(".knowhub").rglob("*") if p.stat().st_mode & 0o077]
    assert opened == []

    again = start(folder)
    try:
        with KnowHub(again.target) as kh:
            assert [h.knowledge.task for h in kh.knowledge.search("certificate renew")] == [
                "Renew the TLS certificate of the web server"
            ]
    finally:
        assert "private" not in stop(again.process)
