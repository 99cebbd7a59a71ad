"""Calls between services carry the caller's identity and keep the callee's answers."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from knowhub import channels
from knowhub_contracts.v1 import (
    cognition_pb2,
    cognition_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)

from knowhub_server.common.base.errors import Unavailable
from knowhub_server.common.runtime.peers import PeerRefused, Peers, call_as
from knowhub_server.common.security.auth import TokenRegistry
from tests.support.harness import Harness


def test_a_peer_call_sees_what_the_caller_sees(hub: Harness) -> None:
    hub.client("alice").knowledge.save(task="alice's", content="acme only", types=["tool"])
    assert hub.server is not None
    registry = TokenRegistry.from_file(hub.settings["tokens_file"])
    stub = knowledge_pb2_grpc.KnowledgeServiceStub(hub.server.runtime.peers.channel("knowledge"))
    request = knowledge_pb2.ListKnowledgeRequest(page_size=10)
    as_alice = call_as(registry.principal_for("token-alice"), stub.ListKnowledge, request)
    as_bob = call_as(registry.principal_for("token-bob"), stub.ListKnowledge, request)
    assert [k.task for k in as_alice.knowledge] == ["alice's"]
    assert list(as_bob.knowledge) == []


def test_a_peer_refusal_keeps_its_code_and_message(hub: Harness) -> None:
    assert hub.server is not None
    registry = TokenRegistry.from_file(hub.settings["tokens_file"])
    stub = knowledge_pb2_grpc.KnowledgeServiceStub(hub.server.runtime.peers.channel("knowledge"))
    with pytest.raises(PeerRefused) as refused:
        call_as(
            registry.principal_for("token-alice"),
            stub.GetKnowledge,
            knowledge_pb2.GetKnowledgeRequest(id="knowledge-20260101-000000000000"),
        )
    assert refused.value.code == grpc.StatusCode.NOT_FOUND
    assert "not found" in refused.value.message


def test_a_service_without_an_address_is_unavailable() -> None:
    with pytest.raises(Unavailable, match="KNOWHUB_DREAM_ADDRESS"):
        Peers(object()).channel("dream")


def test_co_hosted_calls_never_starve_the_callers_pool(
    tmp_path: Path, tokens_file: Path, redis_url: str, redis_prefix: str
) -> None:
    """Each save below makes a peer call to the resource service while holding one of only
    two public worker threads; peer calls have their own pool, so all complete."""
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens_file,
        max_workers=2,
        calls_per_caller_max=0,  # one token stands for many callers here
        redis_url=redis_url,
        redis_prefix=redis_prefix,
    ).start()
    alice = harness.client("alice")
    alice.resources.save("code/shared", title="shared", body="print()", content_type="code")

    def save(index: int) -> str:
        return alice.knowledge.save(
            task=f"task {index}",
            content="uses the snippet",
            types=["tool"],
            resource_ids=["code/shared"],
        ).id

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(save, range(16)))
    assert len(set(ids)) == 16
    harness.stop()


# ---- Keepalive ---------------------------------------------------------------------------


def test_an_idle_stream_outlives_the_clients_keepalive_pings(
    tmp_path: Path, tokens_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evaluator's WatchTriggers stream waits long for triggers while its client pings
    the connection every minute; gRPC's default server policy took that for abuse and
    ended the stream with GOAWAY too_many_pings. Clients and servers take their keepalive
    settings from one place: here both at a 1 s ping, so seconds of silence stand for the
    minutes between triggers (with the default server policy the stream ends in ~5 s)."""
    keepalive = {name for name, _ in channels.client_keepalive_options(0)}
    monkeypatch.setattr(
        channels,
        "CHANNEL_OPTIONS",
        [
            *[o for o in channels.CHANNEL_OPTIONS if o[0] not in keepalive],
            *channels.client_keepalive_options(1_000),
        ],
    )
    monkeypatch.setattr(
        channels, "SERVER_KEEPALIVE_OPTIONS", channels.server_keepalive_options(1_000)
    )
    harness = Harness(tmp_path / "data", tokens_file=tokens_file).start()
    channel = channels.open_channel(harness.address)
    try:
        stream = cognition_pb2_grpc.CognitionServiceStub(channel).WatchTriggers(
            cognition_pb2.WatchTriggersRequest(consumer="keepalive"),
            metadata=(("authorization", "Bearer token-admin"),),
            timeout=30,
        )
        received: queue.Queue[object] = queue.Queue()
        reader = threading.Thread(target=lambda: received.put(_first(stream)), daemon=True)
        reader.start()
        time.sleep(6)  # idle: several of the client's pings, no data
        assert received.empty(), received.get()  # the stream is still open, nothing failed
        alice = harness.client("alice")
        alice.cognition.append_events("trace-keepalive", [], task="wait")
        alice.knowledge.save(task="keepalive", content="ping", types=["tool"])
        alice.cognition.inject_knowledge_for_goal("trace-keepalive", "g1", "keepalive", sequence=1)
        assert alice.cognition.signal_trigger("trace-keepalive", "goal_completion").published
        trigger = received.get(timeout=20)
        assert isinstance(trigger, cognition_pb2.WatchTriggersResponse), trigger
        assert trigger.trigger.trace_id == "trace-keepalive"
        stream.cancel()
    finally:
        channel.close()
        harness.stop()


def _first(stream: Iterator[cognition_pb2.WatchTriggersResponse]) -> object:
    try:
        return next(stream)
    except grpc.RpcError as error:
        return f"{error.code().name}: {error.details()}"
