"""Fair sharing: one tenant asking a slow model cannot take the server from the others.

The attack: with a model that takes long, 64 concurrent AskKnowledge calls of one user
made another organisation's ListKnowledge wait 51.6 s instead of 0.016 s, since every
call shared one pool of 32 threads. Here the model is held (it answers only when the test
lets it) and the server has 8 threads: each token may have 4 calls in progress, and 2
calls may wait on the model with 2 more queued for it. While the model holds, the other
tenant's reads must answer (on the old server they waited until the model let go), and
the refused calls say when to try again. bench/fair_sharing.py measures the same with a
10-second model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors

from tests.support.harness import PRINCIPALS, Harness, write_tokens_file
from tests.support.openai_stub import OpenAIStub

# Four more users of globex, each with a token of its own.
FLOODERS = [f"globex{n}" for n in range(4)]
TENANTS = {**PRINCIPALS, **{name: {"user_id": name, "org_id": "globex"} for name in FLOODERS}}
WORKERS = 8  # so 4 calls per token, 2 on the model and 2 waiting for it
HELD_SECONDS = 60.0  # the longest the model holds a call, should the test fail


class HeldModel:
    """The LLM's replies wait until `release()`; `calls` counts the requests that came."""

    def __init__(self, stub: OpenAIStub) -> None:
        self._released = threading.Event()
        stub.responder = self._reply
        self._stub = stub

    @property
    def calls(self) -> int:
        return len(self._stub.chat_requests)

    def _reply(self, _body: dict[str, Any]) -> str:
        self._released.wait(HELD_SECONDS)
        return "Follow the deploy checklist."

    def release(self) -> None:
        self._released.set()


@pytest.fixture
def model(llm: OpenAIStub) -> Iterator[HeldModel]:
    held = HeldModel(llm)
    yield held
    held.release()


@pytest.fixture
def fair_hub(tmp_path: Path, llm: OpenAIStub, model: HeldModel) -> Iterator[Harness]:
    tokens = write_tokens_file(tmp_path, TENANTS)
    harness = Harness(
        tmp_path / "data",
        tokens_file=tokens,
        max_workers=WORKERS,
        llm_base_url=llm.base_url,
        llm_max_retries=0,
        llm_timeout_seconds=HELD_SECONDS,
    ).start()
    yield harness
    model.release()
    harness.stop()


def wait_for(condition: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def flood(clients: list[KnowHub], asks_each: int) -> list[Future[Any]]:
    pool = ThreadPoolExecutor(max_workers=len(clients) * asks_each)
    futures = [
        pool.submit(client.knowledge.ask, "deploy checklist")
        for client in clients
        for _ in range(asks_each)
    ]
    pool.shutdown(wait=False)
    return futures


def refusals(futures: list[Future[Any]]) -> list[errors.ResourceExhausted]:
    """The calls refused at once (they are done while the model still holds)."""
    wait_for(
        lambda: sum(f.done() for f in futures) >= len(futures) - 4,
        "the calls beyond the limits to be refused",
    )
    done = [f.exception() for f in futures if f.done()]
    assert all(isinstance(e, errors.ResourceExhausted) for e in done), done
    return [e for e in done if isinstance(e, errors.ResourceExhausted)]


def reader(hub: Harness) -> KnowHub:
    """alice of acme, who answers in 10 s or fails: the old server made her wait for the
    model to let go (never, here)."""
    return KnowHub(hub.address, token="token-alice", timeout=10)


def test_a_token_beyond_its_calls_in_progress_is_told_to_retry_while_others_read(
    fair_hub: Harness, model: HeldModel
) -> None:
    bob = fair_hub.client("bob")
    bob.knowledge.save(task="deploy checklist", content="drain, deploy, verify", types=["plan"])
    alice = reader(fair_hub)
    mine = alice.knowledge.save(task="alice's notes", content="acme only", types=["plan"])

    asks = flood([bob], 12)
    refused = refusals(asks)
    assert len(refused) == 8  # bob has 4 calls in progress, the most one token may have
    for error in refused:
        assert "KNOWHUB_CALLS_PER_CALLER_MAX" in error.message
        assert error.retry_after == 1.0 and "retry in 1 s" in error.message
    wait_for(lambda: model.calls >= 2, "bob's calls to reach the model")

    assert [k.id for k in alice.knowledge.list()] == [mine.id]
    assert [h.knowledge.id for h in alice.knowledge.search("notes")] == [mine.id]

    model.release()
    answers = [f.result(timeout=30) for f in asks if f.exception(timeout=30) is None]
    assert len(answers) == 4
    assert all(a.answer == "Follow the deploy checklist." for a in answers)
    alice.close()


def test_many_tokens_asking_a_slow_model_leave_the_other_threads_to_reads(
    fair_hub: Harness, model: HeldModel
) -> None:
    flooders = [fair_hub.client(name) for name in FLOODERS]
    flooders[0].knowledge.save(
        task="deploy checklist",
        content="drain, deploy, verify",
        types=["plan"],
        scopes=["org:globex"],
    )
    alice = reader(fair_hub)
    mine = alice.knowledge.save(task="alice's notes", content="acme only", types=["plan"])

    asks = flood(flooders, 3)  # 3 each: within every token's limit, 12 in all
    refused = refusals(asks)
    assert len(refused) == 8  # 2 on the model, 2 waiting for it
    for error in refused:
        assert "the model is busy" in error.message
        assert "KNOWHUB_MODEL_CALLS_MAX" in error.message
        assert error.retry_after == 2.0
    wait_for(lambda: model.calls >= 2, "the flood to reach the model")
    held = model.calls

    assert [k.id for k in alice.knowledge.list()] == [mine.id]
    # Search would ask the model to route; the model is busy, so it answers in recall
    # order at once instead of waiting for a turn.
    found = alice.knowledge.search("notes")
    assert [h.knowledge.id for h in found] == [mine.id]
    assert found.routed is False
    assert model.calls == held

    model.release()
    assert sum(f.exception(timeout=30) is None for f in asks) == 4
    alice.close()
