"""A target with several addresses spreads calls over all of them (round-robin), from the
SDK and from one service to another. `ipv4:a:p1,a:p2` lists addresses the way a
`dns:///name:port` target resolves a compose service's replicas; both take the same
load-balancing path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from knowhub import KnowHub
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.peers import Peers, call_as
from knowhub_server.common.security.auth import TokenRegistry
from tests.conftest import StartHub
from tests.support.harness import Harness

REPLICAS = 3
CALLS = 30


@pytest.fixture
def replicas(start_hub: StartHub) -> list[Harness]:
    """Three knowledge servers, each over a store of its own, so each one's records show
    which calls it served."""
    return [start_hub(services=["knowledge"]) for _ in range(REPLICAS)]


def multi_address(hubs: list[Harness]) -> str:
    return "ipv4:" + ",".join(hub.address for hub in hubs)


def saves_per_server(hubs: list[Harness]) -> list[int]:
    return [len(hub.client("alice").knowledge.list(limit=100)) for hub in hubs]


def assert_spread(hubs: list[Harness], save: Callable[[int], object], who: str) -> None:
    for index in range(CALLS):
        save(index)
    counts = saves_per_server(hubs)
    print(f"\n{who}: {CALLS} saves over {REPLICAS} servers -> {counts}")
    assert sum(counts) == CALLS
    assert all(count > 0 for count in counts), counts


def test_the_sdk_spreads_calls_over_every_address(replicas: list[Harness]) -> None:
    with KnowHub(multi_address(replicas), token="token-alice", timeout=10) as alice:
        assert_spread(
            replicas,
            lambda i: alice.knowledge.save(task=f"task {i}", content="spread", types=["tool"]),
            "SDK",
        )


def test_peer_calls_spread_over_every_address(replicas: list[Harness], tokens_file: Path) -> None:
    alice = TokenRegistry.from_file(tokens_file).principal_for("token-alice")
    assert alice is not None
    peers = Peers(CommonSettings(knowledge_address=multi_address(replicas)))
    stub = knowledge_pb2_grpc.KnowledgeServiceStub(peers.channel("knowledge"))
    try:
        assert_spread(
            replicas,
            lambda i: call_as(
                alice,
                stub.SaveKnowledge,
                knowledge_pb2.SaveKnowledgeRequest(
                    task=f"peer {i}", content="spread", types=["tool"]
                ),
            ),
            "peers",
        )
    finally:
        peers.close()
