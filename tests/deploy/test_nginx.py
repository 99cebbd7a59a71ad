"""nginx as the compose stack's gRPC entry: deploy/nginx/nginx.conf, with only its
addresses changed, run by Debian's nginx on loopback in front of `knowhub serve`
processes (two knowledge replicas, each over a store of its own so its records show which
calls it served, and one process each for resource, cognition and dream over one Redis).
Calls reach every service with the caller's token, spread over the knowledge replicas in
turn, come back with the service's status, message and trailers; server streams and
deadlines pass through; what nginx refuses itself is a gRPC status."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import grpc
import pytest
import yaml
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import (
    cognition_pb2,
    cognition_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)

from knowhub_server.common.runtime.health_probe import check
from knowhub_server.common.runtime.rpc import LOCAL_MODE_TRAILER
from tests.dream.dreaming import new_trace, write_dream_tokens
from tests.mcp.conftest import data, mcp_http
from tests.mcp.test_http import connect
from tests.support.ports import free_port
from tests.test_server import REPO, clean_env

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.skipif(
    not Path(NGINX).is_file(),
    reason="nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)",
)

CONFIG = REPO / "deploy" / "nginx" / "nginx.conf"
SERVICES = ("knowledge", "resource", "cognition", "dream")
KNOWLEDGE_REPLICAS = 2
START_SECONDS = 90.0


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert process.poll() is None, f"exited: {process.communicate()}"
        assert time.monotonic() < deadline, f"nothing listens on {port}"
        time.sleep(0.1)


def rendered(upstreams: dict[str, list[str]], port: int, health_port: int, directory: Path) -> str:
    """The deployed configuration with loopback addresses in place of compose's names."""
    text = CONFIG.read_text()
    replacements = {
        "listen 50051 http2;": f"listen 127.0.0.1:{port} http2;",
        "listen 127.0.0.1:8081;": f"listen 127.0.0.1:{health_port};",
        "pid /tmp/nginx.pid;": f"pid {directory / 'nginx.pid'};",
    }
    for service, addresses in upstreams.items():
        replacements[f"server {service}:50051;"] = " ".join(
            f"server {address};" for address in addresses
        )
    for old, new in replacements.items():
        assert text.count(old) == 1, f"{old!r} is not once in {CONFIG}"
        text = text.replace(old, new)
    return text


@dataclass
class Nginx:
    address: str
    health_port: int
    config: Path


@contextmanager
def nginx(upstreams: dict[str, list[str]], directory: Path) -> Iterator[Nginx]:
    """Debian's nginx running the rendered configuration in the foreground."""
    directory.mkdir(parents=True, exist_ok=True)
    port, health_port = free_port(), free_port()
    config = directory / "nginx.conf"
    config.write_text(rendered(upstreams, port, health_port, directory))
    process = subprocess.Popen(
        [NGINX, "-p", str(directory), "-c", str(config), "-e", "stderr", "-g", "daemon off;"],
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(port, process)
        yield Nginx(f"127.0.0.1:{port}", health_port, config)
    finally:
        process.send_signal(signal.SIGQUIT)  # graceful: finish what is in flight
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(service: str, port: int, data_dir: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "serve",
            service,
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_healthy(process: subprocess.Popen[bytes], address: str, service: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not check(address, service, timeout=2)[0]:
        assert process.poll() is None, f"{service} exited: {process.communicate()}"
        assert time.monotonic() < deadline, f"{service} not healthy in {START_SECONDS}s"
        time.sleep(0.2)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@dataclass
class Stack:
    proxy: Nginx
    replicas: list[str]  # the knowledge replicas' own addresses


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Stack]:
    """The services as `knowhub serve` processes behind nginx, as compose runs them."""
    tmp = tmp_path_factory.mktemp("nginx-stack")
    ports = {f"knowledge{i}": free_port() for i in range(KNOWLEDGE_REPLICAS)}
    ports.update({service: free_port() for service in SERVICES[1:]})
    addresses = {name: f"127.0.0.1:{port}" for name, port in ports.items()}
    replicas = [addresses[f"knowledge{i}"] for i in range(KNOWLEDGE_REPLICAS)]
    env = {
        **clean_env(),
        "KNOWHUB_TOKENS_FILE": str(write_dream_tokens(tmp)),
        "KNOWHUB_REDIS_URL": redis_url,
        "KNOWHUB_REDIS_PREFIX": f"test-{uuid.uuid4().hex[:12]}:",
        "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream",
        "KNOWHUB_LOG_LEVEL": "WARNING",
        "KNOWHUB_KNOWLEDGE_ADDRESS": "ipv4:" + ",".join(replicas),
        **{f"KNOWHUB_{s.upper()}_ADDRESS": addresses[s] for s in SERVICES[1:]},
    }
    processes = {
        name: serve(name.rstrip("0123456789"), port, tmp / name, env)
        for name, port in ports.items()
    }
    try:
        for name, process in processes.items():
            wait_healthy(process, addresses[name], name.rstrip("0123456789"))
        upstreams = {
            "knowledge": replicas,
            **{service: [addresses[service]] for service in SERVICES[1:]},
        }
        with nginx(upstreams, tmp / "nginx") as proxy:
            yield Stack(proxy, replicas)
    finally:
        stop(list(processes.values()))


def test_debian_nginx_accepts_the_configuration(stack: Stack) -> None:
    tested = subprocess.run(
        [
            NGINX,
            "-t",
            "-p",
            str(stack.proxy.config.parent),
            "-c",
            str(stack.proxy.config),
            "-e",
            "stderr",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert tested.returncode == 0, tested.stderr


def test_every_service_answers_through_nginx_as_the_caller(stack: Stack) -> None:
    with KnowHub(stack.proxy.address, token="token-alice", timeout=30) as alice:
        saved = alice.knowledge.save(
            task="reach every service through nginx", content="one port", types=["tool"]
        )
        assert stored_on_a_replica(stack, saved.id)
        resource = alice.resources.save("nginx/r1", "a script", "print(1)")
        assert alice.resources.get(resource.id).body == "print(1)"
        trace_id = new_trace()
        alice.cognition.append_events(
            trace_id, [{"type": "message", "sequence": 1, "role": "user", "content": "hello"}]
        )
        assert alice.cognition.get_log(trace_id, limit=5).trace.event_count == 1
        # dream -> cognition, as the caller: a trace nobody wrote is not found.
        with pytest.raises(errors.NotFound):
            alice.dream.run(trace_ids=["trace-nobody-wrote"])


def test_calls_spread_over_the_knowledge_replicas_in_turn(stack: Stack) -> None:
    task = f"spread {uuid.uuid4().hex[:8]}"
    with KnowHub(stack.proxy.address, token="token-carol", timeout=30) as carol:
        for index in range(10):
            carol.knowledge.save(task=f"{task} {index}", content="round robin", types=["tool"])
    counts = []
    for replica in stack.replicas:
        with KnowHub(replica, token="token-carol", timeout=30) as direct:
            counts.append(
                sum(1 for k in direct.knowledge.list(limit=100) if k.task.startswith(task))
            )
    print(f"\n10 saves through nginx over {len(counts)} replicas -> {counts}")
    assert sum(counts) == 10
    assert all(count > 0 for count in counts), counts


def test_refusals_come_back_as_the_service_gave_them(stack: Stack) -> None:
    with KnowHub(stack.proxy.address, token="token-alice", timeout=30) as alice:
        with pytest.raises(errors.InvalidArgument, match="trace_id"):
            alice.cognition.get_log("", limit=5)
        with pytest.raises(errors.NotFound):
            alice.resources.get("nginx/absent")
    with (
        KnowHub(stack.proxy.address, token="no-such-token", timeout=30) as stranger,
        pytest.raises(errors.Unauthenticated),
    ):
        stranger.knowledge.search("anything")


def test_a_stream_passes_through_as_it_is_produced(stack: Stack) -> None:
    """A trigger published while an evaluator watches arrives on its open stream."""
    trace_id, group = new_trace(), f"nginx-{uuid.uuid4().hex[:8]}"
    for replica in stack.replicas:  # whichever replica the injection asks finds a source
        with KnowHub(replica, token="token-alice", timeout=30) as direct:
            direct.knowledge.save(
                task="stream triggers through nginx", content="h2c", types=["tool"]
            )
    with KnowHub(stack.proxy.address, token="token-alice", timeout=30) as alice:
        injected = alice.cognition.inject_knowledge_for_goal(
            trace_id, "g1", "stream triggers through nginx", sequence=1
        )
        assert injected.hits
        assert alice.cognition.signal_trigger(trace_id, "task_completion").published
    with grpc.insecure_channel(stack.proxy.address) as channel:
        stream = cognition_pb2_grpc.CognitionServiceStub(channel).WatchTriggers(
            cognition_pb2.WatchTriggersRequest(group=group, consumer="nginx-test"),
            metadata=(("authorization", "Bearer token-dream"),),
            timeout=60,
        )
        received = next(r.trigger for r in stream if r.trigger.trace_id == trace_id)
        stream.cancel()
    with KnowHub(stack.proxy.address, token="token-dream", timeout=30) as evaluator:
        assert evaluator.cognition.ack_triggers([received.trigger_id], group=group) == 1


def test_the_callers_deadline_reaches_the_service(stack: Stack) -> None:
    with grpc.insecure_channel(stack.proxy.address) as channel:
        stub = cognition_pb2_grpc.CognitionServiceStub(channel)
        stream = stub.WatchTriggers(
            cognition_pb2.WatchTriggersRequest(consumer="deadline"),
            metadata=(("authorization", "Bearer token-dream"),),
            timeout=1.0,
        )
        with pytest.raises(grpc.RpcError) as raised:
            list(stream)
        assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_health_through_nginx_is_a_knowledge_replicas(stack: Stack) -> None:
    assert check(stack.proxy.address, "", timeout=10) == (
        True,
        f"server at {stack.proxy.address}: SERVING",
    )
    assert check(stack.proxy.address, "knowledge", timeout=10)[0]


def test_the_proxy_healthcheck_passes_while_nginx_serves(stack: Stack) -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    test = compose["services"]["proxy"]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"]
    script = test[3].replace("$$", "$").replace("/8081", f"/{stack.proxy.health_port}")
    assert subprocess.run(["bash", "-c", script], timeout=30).returncode == 0


def test_mcp_over_http_reaches_the_hub_through_nginx(stack: Stack) -> None:
    """As compose runs it: MCP bound to every address, its hub nginx."""

    async def save() -> str:
        async with connect(url, "token-alice") as alice:
            saved = data(
                await alice.call_tool(
                    "knowledge_save",
                    {
                        "task": "reach the hub through nginx",
                        "content": "publish one port",
                        "types": ["tool"],
                    },
                )
            )
            return str(saved["id"])

    with mcp_http(stack.proxy.address, "0.0.0.0") as url:
        saved_id = anyio.run(save)
    assert stored_on_a_replica(stack, saved_id)


def stored_on_a_replica(stack: Stack, knowledge_id: str) -> bool:
    """Whether one of the replicas (each over its own store here) holds the record."""
    for replica in stack.replicas:
        with KnowHub(replica, token="token-alice", timeout=30) as direct:
            try:
                direct.knowledge.get(knowledge_id)
            except errors.NotFound:
                continue
            return True
    return False


# ---- what nginx answers itself, and trailers ---------------------------------------------


@pytest.fixture(scope="module")
def local_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nginx]:
    """nginx in front of one knowledge process in local mode (no tokens file), with the
    other services' upstreams at a port nothing listens on."""
    tmp = tmp_path_factory.mktemp("nginx-local")
    port = free_port()
    process = serve(
        "knowledge", port, tmp / "data", {**clean_env(), "KNOWHUB_LOG_LEVEL": "WARNING"}
    )
    try:
        wait_healthy(process, f"127.0.0.1:{port}", "knowledge")
        closed = f"127.0.0.1:{free_port()}"
        upstreams = {
            "knowledge": [f"127.0.0.1:{port}"],
            **{service: [closed] for service in SERVICES[1:]},
        }
        with nginx(upstreams, tmp / "nginx") as proxy:
            yield proxy
    finally:
        stop([process])


def test_trailing_metadata_comes_back_through_nginx(local_hub: Nginx) -> None:
    """A hub in local mode marks its refusals with a trailer (MCP relies on it)."""
    with grpc.insecure_channel(local_hub.address) as channel:
        search = knowledge_pb2_grpc.KnowledgeServiceStub(channel).SearchKnowledge
        with pytest.raises(grpc.RpcError) as raised:
            search(knowledge_pb2.SearchKnowledgeRequest(query="x"), timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert LOCAL_MODE_TRAILER in tuple(raised.value.trailing_metadata() or ())


def test_a_service_with_no_replica_reachable_is_unavailable(local_hub: Nginx) -> None:
    with (
        KnowHub(local_hub.address, token="t", timeout=10) as kh,
        pytest.raises(errors.Unavailable, match="no replica of this service"),
    ):
        kh.resources.get("anything")


def test_a_method_of_no_knowhub_service_is_unimplemented(local_hub: Nginx) -> None:
    with grpc.insecure_channel(local_hub.address) as channel:
        missing = channel.unary_unary("/knowhub.v1.NoSuchService/Call")
        with pytest.raises(grpc.RpcError) as raised:
            missing(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "no KnowHub service of this name" in (raised.value.details() or "")
