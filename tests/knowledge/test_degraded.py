"""Degraded, never down: with the embedding endpoint failing, searches answer at once from
BM25 and say so, saves succeed at once, and the vectors they lack are written by a
background task when the endpoint answers again, after a restart too; the backlog shows
in `knowhub health` and on /metrics. Through the SDK, REST and MCP, with the real
embedding model (all-MiniLM-L6-v2) behind an endpoint that can be taken down."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import anyio
from knowhub import KnowHub
from mcp import Client

from knowhub_server.common.runtime.health_probe import check
from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    Queue,
    memory_settings,
    private_context,
    wait_until,
)
from tests.gateway.conftest import gateway_for
from tests.mcp.conftest import data, stdio_server
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.real_embeddings import MODEL_NAME

CAT = ("Feed the office cat", "Twice a day, dry food from the blue tin.")
CERT = ("Renew the TLS certificate of the web server", "Run certbot renew, then reload nginx.")
# Shares no word with CAT: only its dense vector can find it.
PARAPHRASE = "kitten meals"


def embedding(minilm: OpenAIStub, **extra: Any) -> dict[str, Any]:
    # A breaker of 1 s: the endpoint is tried again soon after it comes back.
    return {
        "embedding_base_url": minilm.base_url,
        "embedding_model": MODEL_NAME,
        "embedding_dim": minilm.embedding_dim,
        "llm_max_retries": 2,
        "embedding_breaker_seconds": 1,
        **extra,
    }


def waiting(hub: Harness) -> tuple[str, int]:
    """What `knowhub health` says: the model's state and the records owed a vector."""
    serving, line = check(hub.address, "")
    assert serving, line
    found = re.search(r"embedding model (\w+), (\d+) record\(s\) waiting", line)
    assert found, line
    return found.group(1), int(found.group(2))


def backlog_metric(hub: Harness) -> float | None:
    """knowhub_embedding_backlog{collection="knowledge"} as /metrics shows it."""
    assert hub.server is not None
    return hub.server.runtime.metrics.registry.get_sample_value(
        "knowhub_embedding_backlog", {"collection": "knowledge"}
    )


def found_by_meaning(kh: KnowHub, knowledge_id: str) -> bool:
    hits = kh.knowledge.search(PARAPHRASE, top_k=1, min_relevance=0)
    return hits.selection == "recall" and [h.knowledge.id for h in hits] == [knowledge_id]


def test_an_outage_degrades_search_and_defers_vectors_sdk_rest_mcp(
    start_hub: StartHub, minilm: OpenAIStub
) -> None:
    hub = start_hub(**embedding(minilm))
    kh = hub.client("alice")
    kept = kh.knowledge.save(task=CERT[0], content=CERT[1], types=["tool"])
    assert waiting(hub) == ("answering", 0)
    minilm.embeddings_down = True

    started = time.monotonic()
    cat = kh.knowledge.save(task=CAT[0], content=CAT[1], types=["usecase"])
    assert time.monotonic() - started < 5  # the retries, not the 30 s timeout
    assert kh.knowledge.get(cat.id).task == CAT[0]

    hits = kh.knowledge.search("office cat")
    assert hits.selection == "degraded" and not hits.routed
    assert [h.knowledge.id for h in hits] == [cat.id]
    hits = kh.knowledge.search("certbot")
    assert hits.selection == "degraded" and hits[0].knowledge.id == kept.id

    gateway = gateway_for(hub)
    try:
        saved = gateway.post(
            "/api/knowledge",
            "alice",
            json={
                "task": "Water the office plants",
                "content": "Mondays, half a can.",
                "types": ["usecase"],
            },
        )
        assert saved.status_code == 201, saved.text
        found = gateway.get("/api/knowledge/search", "alice", params={"q": "office plants"})
        assert found.status_code == 200, found.text
        assert found.json()["selection"] == "degraded"
        assert found.json()["results"][0]["id"] == saved.json()["id"]
    finally:
        gateway.stop()

    async def over_mcp() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            made = data(
                await client.call_tool(
                    "knowledge_save",
                    {
                        "task": "Order office coffee",
                        "content": "Beans every Friday.",
                        "types": ["usecase"],
                    },
                )
            )
            return made, data(
                await client.call_tool("knowledge_search", {"query": "office coffee"})
            )

    made, searched = anyio.run(over_mcp)
    assert searched["selection"] == "degraded"
    assert searched["results"][0]["id"] == made["id"]

    assert waiting(hub) == ("failing", 3)
    assert backlog_metric(hub) == 3
    assert not found_by_meaning(kh, cat.id)

    minilm.embeddings_down = False
    wait_until(lambda: waiting(hub)[1] == 0, timeout=60, what="the vectors to be written")
    assert waiting(hub) == ("answering", 0)
    assert backlog_metric(hub) == 0
    assert found_by_meaning(kh, cat.id)


def test_owed_vectors_survive_a_restart(start_hub: StartHub, minilm: OpenAIStub) -> None:
    hub = start_hub(**embedding(minilm))
    kh = hub.client("alice")
    kh.knowledge.save(task=CERT[0], content=CERT[1], types=["tool"])
    minilm.embeddings_down = True
    cat = kh.knowledge.save(task=CAT[0], content=CAT[1], types=["usecase"])
    hub.stop()

    minilm.embeddings_down = False
    hub.start()
    kh = hub.client("alice")
    wait_until(lambda: waiting(hub)[1] == 0, timeout=60, what="the vectors to be written")
    assert found_by_meaning(kh, cat.id)


def test_an_edit_during_an_outage_gets_the_vector_of_its_new_text(
    start_hub: StartHub, minilm: OpenAIStub
) -> None:
    hub = start_hub(**embedding(minilm))
    kh = hub.client("alice")
    kh.knowledge.save(task=CERT[0], content=CERT[1], types=["tool"])
    minilm.embeddings_down = True
    cat = kh.knowledge.save(task=CAT[0], content=CAT[1], types=["usecase"])
    # Feedback keeps the text: the vector is still owed, and still written later.
    kh.knowledge.update(cat.id, add_helpful_case={"task": "feed", "outcome": "fed"})
    assert waiting(hub)[1] == 1
    minilm.embeddings_down = False
    wait_until(lambda: waiting(hub)[1] == 0, timeout=60, what="the vectors to be written")
    assert found_by_meaning(kh, cat.id)
    assert kh.knowledge.get(cat.id).eval.helpful == 2


def test_memory_events_are_stored_during_an_outage_and_embedded_later(
    start_hub: StartHub, minilm: OpenAIStub, redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    hub = start_hub(
        env=FAST_HISTORIAN, **embedding(minilm), **memory_settings(redis_url, redis_prefix)
    )
    kh = hub.client("alice")
    minilm.embeddings_down = True
    kh.memory.remember("", ["User 10001 plays the oboe in an orchestra"], context=private_context())
    Queue(redis_url, redis_prefix).wait_drained()
    hits = kh.memory.search_events("oboe", target_user_id="10001")
    assert [h.event.text for h in hits] == ["User 10001 plays the oboe in an orchestra"]
    assert waiting(hub)[1] >= 1
    minilm.embeddings_down = False
    wait_until(lambda: waiting(hub)[1] == 0, timeout=60, what="the vectors to be written")
    # Found by meaning alone now: no word in common.
    hits = kh.memory.search_events("woodwind musician", target_user_id="10001")
    assert hits and hits[0].event.text == "User 10001 plays the oboe in an orchestra"
