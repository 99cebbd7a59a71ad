"""The knowledge service keeps no state of its own when it runs over a Qdrant server, so
replicas behind one name act as one service: records, request-id claims and counters all
live in Qdrant, and nothing is written under the data directory. Replicas starting
together over an empty Qdrant agree on one collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub
from qdrant_client import QdrantClient

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import KnowHubServer
from knowhub_server.common.security.auth import load_authenticator
from knowhub_server.common.storage.qdrant_store import RemoteStore
from knowhub_server.common.storage.vectors import CollectionSchema, Record, StoreMismatch
from knowhub_server.composition import services, subject_forgets
from knowhub_server.knowledge.store import knowledge_schema


@pytest.fixture
def replicas(tmp_path: Path, tokens_file: Path) -> Iterator[list[KnowHubServer]]:
    """Two knowledge servers over one Qdrant (qdrant-client's in-memory server API), as
    `--scale knowledge=2` runs them over the qdrant service."""
    qdrant = QdrantClient(":memory:")
    servers = []
    for index in range(2):
        settings = CommonSettings(
            data_dir=tmp_path / f"replica{index}",
            port=0,
            tokens_file=tokens_file,
            qdrant_url="http://qdrant:6333",
        )
        settings.data_dir.mkdir()
        runtime = Runtime(
            settings=settings,
            authenticator=load_authenticator(tokens_file, settings.host, settings.data_dir),
            vectors=RemoteStore(qdrant),
            llm=None,
            embedder=None,
            metrics=Metrics(),
        )
        server = KnowHubServer(runtime, services(["knowledge"]), forgets=subject_forgets())
        server.start()
        servers.append(server)
    yield servers
    for server in servers:
        server.stop(grace=1.0)


def test_replicas_over_one_qdrant_act_as_one_service(
    replicas: list[KnowHubServer], tmp_path: Path
) -> None:
    target = "ipv4:" + ",".join(f"127.0.0.1:{s.port}" for s in replicas)
    with KnowHub(target, token="token-alice", timeout=10) as alice:
        # Round-robin sends consecutive calls to different replicas.
        first = alice.knowledge.save(task="shared", content="c", types=["tool"], request_id="req-1")
        retries = [
            alice.knowledge.save(task="shared", content="c", types=["tool"], request_id="req-1")
            for _ in range(3)
        ]
        assert {r.id for r in retries} == {first.id}
        for _ in range(4):
            alice.knowledge.update(
                first.id, add_helpful_case={"task": "t", "outcome": "ok"}, request_id="feedback-1"
            )
        assert alice.knowledge.get(first.id).eval.helpful == 2  # 1 at creation + 1 once
        assert len(alice.knowledge.list(limit=100)) == 1
    for server in replicas:
        with KnowHub(f"127.0.0.1:{server.port}", token="token-alice", timeout=10) as one:
            assert [k.id for k in one.knowledge.list(limit=100)] == [first.id]
    files = [p for p in tmp_path.glob("replica*/**/*") if p.is_file()]
    assert files == [], f"a knowledge replica wrote local files: {files}"


def test_replicas_starting_together_agree_on_one_collection() -> None:
    qdrant = QdrantClient(":memory:")
    schema = knowledge_schema(None)
    winner = RemoteStore(qdrant)
    # The moment of the race: another replica has created the first generation and not
    # yet pointed the alias at it.
    winner._create("knowhub_knowledge__1", schema)
    loser = RemoteStore(qdrant).open(schema)
    assert loser.insert([Record(key="k1", payload={"scopes": ["public"]})]) == [True]
    assert winner.open(schema).get("k1") is not None
    assert [a.collection_name for a in qdrant.get_aliases().aliases] == ["knowhub_knowledge__1"]


def test_a_raced_collection_of_another_schema_is_still_refused() -> None:
    qdrant = QdrantClient(":memory:")
    RemoteStore(qdrant)._create("knowhub_notes__1", CollectionSchema(name="notes", dense_dim=8))
    with pytest.raises(StoreMismatch):
        RemoteStore(qdrant).open(CollectionSchema(name="notes", dense_dim=16))
