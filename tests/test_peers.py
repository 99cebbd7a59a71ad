"""Calls between services carry the caller's identity and keep the callee's answers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from knowhub.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub_server.common.auth import TokenRegistry
from knowhub_server.common.errors import Unavailable
from knowhub_server.common.peers import PeerRefused, Peers, call_as
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
        call_as(registry.principal_for("token-alice"), stub.GetKnowledge,
                knowledge_pb2.GetKnowledgeRequest(id="knowledge-20260101-000000000000"))
    assert refused.value.code == grpc.StatusCode.NOT_FOUND
    assert "not found" in refused.value.message


def test_a_service_without_an_address_is_unavailable() -> None:
    with pytest.raises(Unavailable, match="KNOWHUB_DREAM_ADDRESS"):
        Peers(object()).channel("dream")


def test_co_hosted_calls_never_starve_the_callers_pool(tmp_path: Path, tokens_file: Path,
                                                        redis_url: str,
                                                        redis_prefix: str) -> None:
    """Each save below makes a peer call to the resource service while holding one of only
    two public worker threads; peer calls have their own pool, so all complete."""
    harness = Harness(tmp_path / "data", tokens_file=tokens_file, max_workers=2,
                      redis_url=redis_url, redis_prefix=redis_prefix).start()
    alice = harness.client("alice")
    alice.resources.save("code/shared", title="shared", body="print()", content_type="code")

    def save(index: int) -> str:
        return alice.knowledge.save(task=f"task {index}", content="uses the snippet",
                                    types=["tool"], resource_ids=["code/shared"]).id

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(save, range(16)))
    assert len(set(ids)) == 16
    harness.stop()
