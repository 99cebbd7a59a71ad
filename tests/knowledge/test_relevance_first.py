"""Relevance first, quality second, through the SDK, REST and MCP, with a real embedding
model (all-MiniLM-L6-v2) and the scripted LLM for routing.

A devops hub: twelve well-rated records (score 5) and one about renewing a TLS
certificate with certbot (score 3). Searching "certbot" must give the certbot record
first, whatever the others' quality; a question nothing answers ("zebrafish") must give
nothing; and a routing step that fails, answers garbage or is slow must neither hide the
answer nor hold the search past its timeout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from knowhub import KnowHub, errors
from mcp import Client

from tests.gateway.conftest import Gateway, gateway_for
from tests.mcp.conftest import data, error_text, stdio_server
from tests.support.harness import Harness
from tests.support.openai_stub import Delay, Failure, OpenAIStub
from tests.support.real_embeddings import MODEL_NAME

DEVOPS = [
    ("Deploy the billing service with docker compose", "Run migrations first, then up -d."),
    ("Roll back a failed Kubernetes deployment", "kubectl rollout undo deployment/web."),
    ("Scale the worker pool under load", "Raise replicas in the HPA to 10."),
    ("Rotate database passwords", "Update the secret, then restart the pods."),
    ("Tune PostgreSQL for heavy writes", "Raise max_wal_size and checkpoint_timeout."),
    ("Set up log shipping to Loki", "Run promtail as a daemonset."),
    ("Alert on high error rates", "Prometheus rule on 5xx rate over 5 minutes."),
    ("Back up the Redis cache", "BGSAVE, then copy dump.rdb to object storage."),
    ("Speed up CI builds", "Cache the pip wheels between pipeline runs."),
    ("Debug a crashing container", "kubectl logs --previous shows the last run."),
    ("Upgrade the nginx ingress controller", "Helm upgrade with the new chart version."),
    ("Profile a slow Python service", "py-spy dump on the busiest worker."),
]
CERTBOT = ("Renew the TLS certificate of the web server", "Run certbot renew, then reload nginx.")
OFF_TOPIC = "what do zebrafish eat in an aquarium"


def seed(kh: KnowHub) -> str:
    """The devops hub; returns the certbot record's id."""
    kh.knowledge.save_many(
        [{"task": t, "content": c, "types": ["tool"], "score": 5} for t, c in DEVOPS]
    )
    return kh.knowledge.save(task=CERTBOT[0], content=CERTBOT[1], types=["tool"], score=3).id


@pytest.fixture
def routed_hub(tmp_path: Path, tokens_file: Path, minilm: OpenAIStub) -> Iterator[Harness]:
    """Real embeddings and the scripted LLM routing (two retries, as deployed)."""
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens_file,
        embedding_base_url=minilm.base_url,
        embedding_model=MODEL_NAME,
        embedding_dim=minilm.embedding_dim,
        llm_base_url=minilm.base_url,
        llm_max_retries=2,
    ).start()
    yield harness
    harness.stop()


@pytest.fixture
def rest(minilm_hub: Harness) -> Iterator[Gateway]:
    running = gateway_for(minilm_hub)
    yield running
    running.stop()


def mcp_search(hub: Harness, arguments: dict[str, Any]) -> dict[str, Any]:
    return timed_mcp_search(hub, arguments)[0]


def timed_mcp_search(hub: Harness, arguments: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """The tool's result and the seconds the call took (the MCP server already up)."""

    async def scenario() -> tuple[dict[str, Any], float]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            started = time.monotonic()
            result = await client.call_tool("knowledge_search", arguments)
            return data(result), time.monotonic() - started

    return anyio.run(scenario)


def rest_search(gateway: Gateway, **params: Any) -> dict[str, Any]:
    response = gateway.get("/api/knowledge/search", "alice", params=params)
    assert response.status_code == 200, response.text
    return response.json()


# ---- Relevance first ------------------------------------------------------------------------


def test_certbot_comes_first_over_better_rated_records_sdk_rest_mcp(
    minilm_hub: Harness, rest: Gateway
) -> None:
    kh = minilm_hub.client("alice")
    certbot = seed(kh)

    hits = kh.knowledge.search("certbot", top_k=5)
    assert hits.selection == "recall" and not hits.routed
    assert hits[0].knowledge.id == certbot
    # Every hit carries both numbers; no better-rated record outranks a more relevant one.
    assert hits[0].quality_score == 4.0 and hits[0].relevance > 0.5
    assert all(h.relevance <= hits[0].relevance - 0.03 for h in hits[1:])

    found = rest_search(rest, q="certbot", top_k=5)
    assert found["selection"] == "recall"
    assert found["results"][0]["id"] == certbot
    assert found["results"][0]["relevance"] == pytest.approx(hits[0].relevance)
    assert found["results"][0]["quality_score"] == 4.0

    tool = mcp_search(minilm_hub, {"query": "certbot", "top_k": 5})
    assert tool["selection"] == "recall"
    assert tool["results"][0]["id"] == certbot


def test_an_off_topic_question_gets_nothing_above_the_floor_sdk_rest_mcp(
    minilm_hub: Harness, rest: Gateway
) -> None:
    kh = minilm_hub.client("alice")
    seed(kh)
    assert list(kh.knowledge.search(OFF_TOPIC)) == []
    assert rest_search(rest, q=OFF_TOPIC)["results"] == []
    assert mcp_search(minilm_hub, {"query": OFF_TOPIC})["results"] == []
    # The floor is what leaves them out: asked for any relevance, the records come back.
    everything = kh.knowledge.search(OFF_TOPIC, top_k=3, min_relevance=0)
    assert len(everything) == 3
    assert all(h.relevance < 0.3 for h in everything)


def test_min_relevance_filters_on_every_surface(minilm_hub: Harness, rest: Gateway) -> None:
    kh = minilm_hub.client("alice")
    certbot = seed(kh)
    loose = kh.knowledge.search(
        "restart the web server after a certificate change", top_k=13, min_relevance=0
    )
    assert len(loose) == 13
    cut = (loose[0].relevance + loose[-1].relevance) / 2
    strict = kh.knowledge.search(
        "restart the web server after a certificate change", top_k=13, min_relevance=cut
    )
    assert strict and len(strict) < 13
    assert all(h.relevance >= cut for h in strict)
    assert certbot in {h.knowledge.id for h in strict}

    over_rest = rest_search(
        rest, q="restart the web server after a certificate change", top_k=13, min_relevance=cut
    )
    assert {r["id"] for r in over_rest["results"]} == {h.knowledge.id for h in strict}
    over_mcp = mcp_search(
        minilm_hub,
        {
            "query": "restart the web server after a certificate change",
            "top_k": 13,
            "min_relevance": cut,
        },
    )
    assert {r["id"] for r in over_mcp["results"]} == {h.knowledge.id for h in strict}


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf])
def test_min_relevance_out_of_range_is_invalid_and_named(
    minilm_hub: Harness, rest: Gateway, value: float
) -> None:
    kh = minilm_hub.client("alice")
    with pytest.raises(errors.InvalidArgument) as raised:
        kh.knowledge.search("certbot", min_relevance=value)
    assert "min_relevance" in raised.value.message
    response = rest.get(
        "/api/knowledge/search", "alice", params={"q": "certbot", "min_relevance": str(value)}
    )
    assert response.status_code == 400
    assert "min_relevance" in response.text


def test_rest_min_relevance_must_be_a_number(rest: Gateway) -> None:
    response = rest.get(
        "/api/knowledge/search", "alice", params={"q": "certbot", "min_relevance": "high"}
    )
    assert response.status_code == 400
    assert "min_relevance" in response.text


def test_mcp_min_relevance_out_of_range_is_a_tool_error(minilm_hub: Harness) -> None:
    async def scenario() -> str:
        async with Client(stdio_server(minilm_hub, "token-alice")) as client:
            return error_text(
                await client.call_tool("knowledge_search", {"query": "certbot", "min_relevance": 2})
            )

    assert "min_relevance" in anyio.run(scenario)


def test_harmful_feedback_demotes_a_record_among_the_relevant_ones(minilm_hub: Harness) -> None:
    kh = minilm_hub.client("alice")
    first = kh.knowledge.save(
        task="Renew the TLS certificate with certbot",
        content="certbot renew --nginx",
        types=["tool"],
        score=5,
    )
    second = kh.knowledge.save(
        task="Renew the TLS certificate with certbot",
        content="certbot renew --nginx",
        types=["tool"],
        score=3,
        allow_duplicate=True,
    )  # the same text: the same relevance
    assert [h.knowledge.id for h in kh.knowledge.search("certbot")] == [first.id, second.id]
    kh.knowledge.update(first.id, add_harmful_case={"task": "renew", "outcome": "broke it"})
    hits = kh.knowledge.search("certbot")
    assert [h.knowledge.id for h in hits] == [second.id, first.id]
    assert hits[1].quality_score == 5 + 1 - 2


# ---- Routing: one bounded step ---------------------------------------------------------------


def test_routing_picks_and_relevance_orders_the_pick(
    routed_hub: Harness, minilm: OpenAIStub
) -> None:
    kh = routed_hub.client("alice")
    certbot = seed(kh)
    everything = [h.knowledge.id for h in kh.knowledge.search("x", top_k=13, min_relevance=0)]
    # A router that picks every record (2 * top_k may be picked), the certbot one last:
    # quality must not lift the others over it.
    minilm.script({"ids": [i for i in everything if i != certbot] + [certbot]})
    hits = kh.knowledge.search("certbot", top_k=7)
    assert hits.selection == "routed" and hits.routed
    assert hits[0].knowledge.id == certbot


@pytest.mark.parametrize(
    "reply",
    [{"ids": []}, {"ids": ["knowledge-20990101-000000000000"]}, "no json here", Failure(500)],
    ids=["empty", "unknown-id", "garbage", "error"],
)
def test_an_unusable_pick_falls_back_to_relevance_order(
    routed_hub: Harness, minilm: OpenAIStub, reply: Any
) -> None:
    kh = routed_hub.client("alice")
    certbot = seed(kh)
    minilm.script(*[reply] * 3)  # every retry gets the same
    hits = kh.knowledge.search("certbot", top_k=5)
    assert hits.selection == "recall"
    assert hits[0].knowledge.id == certbot
    minilm.script(*[reply] * 3)
    assert list(kh.knowledge.search(OFF_TOPIC)) == []


def test_a_slow_model_is_bounded_by_the_routing_timeout_sdk_rest_mcp(
    start_hub: Any, minilm: OpenAIStub
) -> None:
    hub = start_hub(
        {"KNOWHUB_SEARCH_ROUTING_TIMEOUT_SECONDS": "1.5"},
        embedding_base_url=minilm.base_url,
        embedding_model=MODEL_NAME,
        embedding_dim=minilm.embedding_dim,
        llm_base_url=minilm.base_url,
        llm_max_retries=2,
    )
    kh = hub.client("alice")
    certbot = seed(kh)
    gateway = gateway_for(hub)
    try:
        for surface in ("sdk", "rest", "mcp"):
            minilm.script(*[Delay(8, '{"ids": []}')] * 3)
            started = time.monotonic()
            if surface == "sdk":
                hits = kh.knowledge.search("certbot", top_k=3)
                first, selection = hits[0].knowledge.id, hits.selection
                elapsed = time.monotonic() - started
            elif surface == "rest":
                found = rest_search(gateway, q="certbot", top_k=3)
                first, selection = found["results"][0]["id"], found["selection"]
                elapsed = time.monotonic() - started
            else:
                found, elapsed = timed_mcp_search(hub, {"query": "certbot", "top_k": 3})
                first, selection = found["results"][0]["id"], found["selection"]
            assert (first, selection) == (certbot, "recall"), surface
            # The whole routing step, its two retries included, within its 1.5 s: three
            # tries of 1.5 s each and the client's pauses between them would take over 5 s.
            assert elapsed < 4, (surface, elapsed)
    finally:
        gateway.stop()
