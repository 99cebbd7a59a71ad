"""GET /api/overview: the console's landing page in one call, read with the caller's token."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.overview import HubFacts
from knowhub_server.gateway.translation import SERVICES
from tests.gateway.conftest import Gateway
from tests.support.harness import Harness


def test_without_a_valid_token_nothing_is_told(gateway: Gateway) -> None:
    for token in (None, "nobody"):
        response = gateway.get("/api/overview", as_=token)
        assert response.status_code == 401, response.text
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"
        assert "configuration" not in response.json()


def test_counts_are_of_what_the_token_sees(gateway: Gateway) -> None:
    saved = gateway.post(
        "/api/knowledge",
        "alice",
        json={"task": "overview count", "content": "one record", "types": ["tool"]},
    )
    assert saved.status_code == 201, saved.text
    alice = gateway.get("/api/overview", "alice").json()
    assert alice["counts"]["records"] == {"count": 1, "more": False}
    assert alice["counts"]["traces"] == {"count": 0, "more": False}
    assert alice["counts"]["pending_reviews"] == {"count": 0, "more": False}
    assert alice["knowledge_types"] == [
        "user_profile",
        "strategy",
        "tool",
        "usecase",
        "definition",
        "plan",
    ]
    assert alice["links"] == {"api_docs": "/docs/", "openapi": "/openapi.json"}
    assert alice["configuration"] is None  # this gateway was made without the settings
    other = gateway.get("/api/overview", "bob").json()  # another organisation's
    assert other["counts"]["records"] == {"count": 0, "more": False}


def test_unknown_query_parameters_are_refused(gateway: Gateway) -> None:
    response = gateway.get("/api/overview?verbose=1", "alice")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("verbose: unknown query parameter")


def test_the_configuration_never_holds_a_secret(tmp_path: Path) -> None:
    settings = CommonSettings(
        data_dir=tmp_path,
        llm_base_url="https://user:pa55@llm.example:8443/v1?key=k1",
        llm_api_key="sk-secret",
        embedding_base_url="http://embed.example/v1",
        embedding_api_key="sk-embed",
        qdrant_url="http://qd:6333",
        qdrant_api_key="qk",
        redis_url="redis://:redispass@redis:6379/0",
        tokens_file=tmp_path / "tokens.json",
    )
    facts = HubFacts.of(settings)
    text = repr(facts)
    for secret in ("pa55", "k1", "sk-secret", "sk-embed", "qk", "redispass", "user:"):
        assert secret not in text
    assert facts.model == "gpt-4o-mini at https://llm.example:8443"
    assert facts.model_configured
    assert facts.embeddings.startswith(
        "hybrid (BM25 and dense), text-embedding-3-small at http://embed.example"
    )
    assert facts.mode == "tokens (KNOWHUB_TOKENS_FILE)"
    assert facts.storage.startswith("Qdrant at http://qd:6333, Redis server")
    local = HubFacts.of(CommonSettings(data_dir=tmp_path))
    assert local.mode.startswith("local") and local.embeddings == "off (BM25 only)"
    assert local.model.startswith("none") and not local.model_configured


def test_the_configuration_is_for_admins_only(hub: Harness, tmp_path: Path) -> None:
    facts = HubFacts.of(CommonSettings(data_dir=tmp_path, tokens_file=tmp_path / "t.json"))
    server = GatewayServer(
        create_app(dict.fromkeys(SERVICES, hub.address), 30.0, facts=facts), "127.0.0.1", 0
    )
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:

            def configuration(who: str) -> Any:
                response = client.get(
                    "/api/overview", headers={"Authorization": f"Bearer token-{who}"}
                )
                assert response.status_code == 200, response.text
                return response.json()["configuration"]

            assert configuration("admin") == asdict(facts)
            assert configuration("alice") == {
                "error": {
                    "code": "PERMISSION_DENIED",
                    "message": "configuration: shown to admins only",
                }
            }
    finally:
        server.stop()
