"""One front port for services that run in other processes: a server that forwards a
service passes every call on as it came, and `knowhub up --processes 3` runs cognition and
the gateway as children that share the main process's tokens, Redis and delegation key,
and die with it."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anyio
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from knowhub import KnowHub, errors
from knowhub.local import read_local_token
from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.errors import Unauthenticated
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import KnowHubServer
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.delegation import DelegationKeys, ensure_key_file
from knowhub_server.composition import SERVICE_NAMES, services, subject_forgets
from tests.mcp.conftest import data, mcp_http
from tests.mcp.test_http import connect
from tests.support.harness import Harness
from tests.test_server import REPO

LISTENING = re.compile(r"listening on (\S+?)[ \n]")
PROCESS = re.compile(r"\(process (\d+)\)")


@pytest.fixture
def front(hub: Harness, tmp_path: Path, tokens_file: Path) -> Iterator[str]:
    """A front that hosts no service and passes each call on to `hub`."""
    addresses = {f"{s}_address": hub.address for s in SERVICE_NAMES}
    settings = CommonSettings(
        data_dir=tmp_path / "front", port=0, tokens_file=tokens_file, **addresses
    )
    server = KnowHubServer(
        Runtime.open(settings), [], forwarded=services(), forgets=subject_forgets()
    )
    server.start()
    yield f"127.0.0.1:{server.port}"
    server.stop(grace=1.0)


def test_the_front_serves_every_service_of_another_process(front: str, hub: Harness) -> None:
    with KnowHub(front, token="token-alice", timeout=10) as alice:
        saved = alice.knowledge.save(
            task="login with selenium", content="wait for the form", types=["strategy"]
        )
        assert [h.knowledge.id for h in alice.knowledge.search("selenium login")] == [saved.id]
        alice.cognition.append_events(
            "trace-front", [{"type": "message", "sequence": 1, "role": "user", "content": "hello"}]
        )
        assert alice.cognition.get_log("trace-front", limit=5).trace.event_count == 1
        resource = alice.resources.save("front/r1", "a script", "print(1)")
        assert alice.resources.get(resource.id).body == "print(1)"
    # The same records, seen directly at the service.
    assert hub.client("alice").knowledge.get(saved.id).content == "wait for the form"


def test_refusals_come_back_as_the_service_gave_them(front: str) -> None:
    with KnowHub(front, token="token-alice", timeout=10) as alice:
        with pytest.raises(errors.InvalidArgument, match="trace_id"):
            alice.cognition.get_log("", limit=5)
        with pytest.raises(errors.NotFound):
            alice.knowledge.get("knowledge-20250101-000000000000")
    with (
        KnowHub(front, token="no-such-token", timeout=10) as stranger,
        pytest.raises(errors.Unauthenticated),
    ):
        stranger.knowledge.search("anything")


def test_streams_and_deadlines_pass_through(front: str) -> None:
    with grpc.insecure_channel(front) as channel:
        stub = cognition_pb2_grpc.CognitionServiceStub(channel)
        stream = stub.WatchTriggers(
            cognition_pb2.WatchTriggersRequest(consumer="front-test"),
            metadata=(("authorization", "Bearer token-admin"),),
            timeout=1.0,
        )
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as raised:
            list(stream)
        assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - started < 5


def test_a_service_the_front_cannot_reach_is_unavailable(tmp_path: Path) -> None:
    server = KnowHubServer(
        Runtime.open(CommonSettings(data_dir=tmp_path, port=0)),
        [],
        forwarded=services(["cognition"]),
        forgets=subject_forgets(),
    )
    server.start()
    try:
        with (
            KnowHub(f"127.0.0.1:{server.port}", token="t", timeout=10) as kh,
            pytest.raises(errors.Unavailable, match="KNOWHUB_COGNITION_ADDRESS"),
        ):
            kh.cognition.get_log("trace-1", limit=1)
    finally:
        server.stop(grace=1.0)


def test_mcp_over_http_beyond_loopback_reaches_the_hub_through_the_front(
    front: str, hub: Harness
) -> None:
    """MCP bound to every address, its hub a forwarding front. The front passes
    on the hub's refusal of a call without a token, so MCP sees a hub that needs one."""

    async def save() -> str:
        async with connect(url, "token-alice") as alice:
            saved = data(
                await alice.call_tool(
                    "knowledge_save",
                    {
                        "task": "reach the hub through compose",
                        "content": "publish one port",
                        "types": ["tool"],
                    },
                )
            )
            return str(saved["id"])

    with mcp_http(front, "0.0.0.0") as url:
        saved_id = anyio.run(save)
    assert hub.client("alice").knowledge.get(saved_id).content == "publish one port"


def test_unknown_methods_are_unimplemented_and_health_names_every_service(front: str) -> None:
    with grpc.insecure_channel(front) as channel:
        full_names = [s.full_name for s in services()]
        missing = channel.unary_unary(f"/{full_names[0]}/NoSuchMethod")
        with pytest.raises(grpc.RpcError) as raised:
            missing(b"", timeout=5)
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
        health = health_pb2_grpc.HealthStub(channel)
        for name in full_names:
            status = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5).status
            assert status == health_pb2.HealthCheckResponse.SERVING


def test_a_grant_signed_in_one_process_is_accepted_in_another(tmp_path: Path) -> None:
    key_file = ensure_key_file(tmp_path)
    assert ensure_key_file(tmp_path) == key_file
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    owner = Principal(user_id="alice", org_id="acme")
    caller = Principal(user_id="eval", org_id="ops", roles=frozenset({"evaluator"}))
    grant = DelegationKeys.load(key_file).issue(
        owner_user_id="alice", trace_id="t", knowledge_ids=["k"], grantee=caller.user_scope
    )
    acting = DelegationKeys.load(key_file).principal(
        caller, grant, "evaluator", lambda _user: owner
    )
    assert acting.user_id == "alice" and acting.delegation is not None
    with pytest.raises(Unauthenticated, match="not a valid grant"):  # a key of its own
        DelegationKeys.load(None).principal(caller, grant, "evaluator", lambda _user: owner)


# ---- knowhub up --processes ---------------------------------------------------------------


class Up:
    """`knowhub up --processes N` in its own process group, with its printed lines."""

    def __init__(self, data_dir: Path, processes: int) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "knowhub_server.cli",
                "up",
                "--data-dir",
                str(data_dir),
                "--port",
                "0",
                "--processes",
                str(processes),
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        self.lines = [self.process.stdout.readline() for _ in range(processes)]
        assert all(LISTENING.search(line) for line in self.lines), self.lines
        self.address = LISTENING.search(self.lines[0]).group(1)  # type: ignore[union-attr]
        self.children = [
            int(PROCESS.search(line).group(1))  # type: ignore[union-attr]
            for line in self.lines[1:]
        ]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
        for pid in self.children:  # none should be left; never leave one behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: list[int], seconds: float = 20.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    started = Up(tmp_path / "data", 3)
    yield started
    started.stop()


def test_three_processes_serve_everything_on_one_port_with_shared_secrets(
    up: Up, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    assert "cognition" in up.lines[1] and "gateway" in up.lines[2]
    assert up.process.pid not in up.children and len(set(up.children)) == 2
    with KnowHub(up.address, token=read_local_token(data_dir), timeout=10) as kh:
        kh.knowledge.save(task="deploy with compose", content="publish one port", types=["tool"])
        kh.cognition.append_events(
            "trace-up", [{"type": "message", "sequence": 1, "role": "user", "content": "hi"}]
        )
        assert kh.cognition.get_log("trace-up", limit=5).trace.event_count == 1
    gateway = LISTENING.search(up.lines[2]).group(1)  # type: ignore[union-attr]
    with urllib.request.urlopen(f"{gateway}/openapi.json", timeout=10) as response:
        assert response.status == 200
    key_file = data_dir / "delegation_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    for pid in up.children:
        environ = dict(
            entry.split("=", 1)
            for entry in Path(f"/proc/{pid}/environ").read_text().split("\0")
            if "=" in entry
        )
        assert environ["KNOWHUB_DELEGATION_KEY_FILE"] == str(key_file.resolve())
        assert environ["KNOWHUB_REDIS_URL"].startswith("unix://")


def test_a_backup_through_the_one_port_holds_what_the_children_wrote(
    up: Up, tmp_path: Path
) -> None:
    """Cognition (a child) keeps its traces in the Redis the main process shares; the
    backup, written by the main process that holds the collections, has them too."""
    with KnowHub(up.address, token=read_local_token(tmp_path / "data"), timeout=60) as kh:
        kh.cognition.append_events(
            "trace-backup",
            [{"type": "message", "sequence": 1, "role": "user", "content": "keep me"}],
        )
        kh.knowledge.save(task="back up", content="every store", types=["tool"])
    backup = tmp_path / "backup"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "backup",
            "--to",
            str(backup),
            "--target",
            up.address,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KNOWHUB_DATA_DIR": str(tmp_path / "data")},
    )
    assert result.returncode == 0, result.stderr
    keys = [
        base64.b64decode(json.loads(line)["key"])
        for line in (backup / "redis.jsonl").read_text().splitlines()
    ]
    assert any(b"trace-backup" in key for key in keys), keys
    assert any(p.name.startswith("knowledge") for p in (backup / "collections").iterdir())


def test_ctrl_c_stops_every_process(up: Up) -> None:
    os.killpg(up.process.pid, signal.SIGINT)  # what a terminal sends its foreground group
    assert up.process.wait(30) == 0
    assert _wait_gone(up.children) == []


def test_children_die_with_a_killed_parent(up: Up, tmp_path: Path) -> None:
    up.process.kill()
    up.process.wait(10)
    assert _wait_gone(up.children) == []
    # Its embedded redis-server is left for the next start on this data directory to stop
    # (as with one process); here nothing will start again, so the test stops it.
    redis_pid = int((tmp_path / "data" / "redis" / "redis.pid").read_text())
    os.kill(redis_pid, signal.SIGTERM)
    assert _wait_gone([redis_pid]) == []


def test_a_child_that_dies_stops_the_hub_with_an_error(up: Up) -> None:
    os.kill(up.children[0], signal.SIGKILL)
    assert up.process.wait(30) == 1
    assert _wait_gone(up.children) == []


def test_more_processes_than_there_are_parts_are_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "up",
            "--data-dir",
            str(tmp_path / "data"),
            "--port",
            "0",
            "--processes",
            "4",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "--processes 4: at most 3" in result.stderr
