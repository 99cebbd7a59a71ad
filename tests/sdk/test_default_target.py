"""A client given no target calls KNOWHUB_TARGET, else 127.0.0.1:50051 — as `knowhub mcp`
and the client commands do, so one variable points everything at a hub."""

from __future__ import annotations

import pytest
from knowhub import KnowHub
from knowhub.channels import DEFAULT_TARGET, default_target

from tests.support.harness import Harness


def test_without_knowhub_target_the_default_is_the_local_hub(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KNOWHUB_TARGET", raising=False)
    assert default_target() == DEFAULT_TARGET == "127.0.0.1:50051"
    monkeypatch.setenv("KNOWHUB_TARGET", "  ")
    assert default_target() == DEFAULT_TARGET


def test_a_client_without_a_target_calls_knowhub_target(
    hub: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWHUB_TARGET", hub.address)
    with KnowHub(token="token-alice") as kh:
        saved = kh.knowledge.save(
            task="reach the hub by KNOWHUB_TARGET", content="it works", types=["tool"]
        )
    assert hub.client("alice").knowledge.get(saved.id).content == "it works"


def test_an_explicit_target_wins_over_knowhub_target(
    hub: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = hub.client("alice").knowledge.save(
        task="an explicit target", content="wins", types=["tool"]
    )
    monkeypatch.setenv("KNOWHUB_TARGET", "127.0.0.1:1")  # nothing listens there
    with KnowHub(hub.address, token="token-alice") as kh:
        assert kh.knowledge.get(saved.id).content == "wins"
