"""Knowledge refers to resources by resource_ids: a save checks them through the resource
service as the caller, and a search hit says which ones the caller cannot use."""

from __future__ import annotations

from pathlib import Path

import pytest
from knowhub import KnowHub

from tests.resource.conftest import Principals, StartResourceHub
from tests.resource.support import secret_of
from tests.support.shared import failure, visible_records

NOTE = {
    "task": "log in to the axolotl portal",
    "content": "use the test account",
    "types": ["tool"],
}


@pytest.fixture(scope="module")
def alice(clients: Principals) -> KnowHub:
    alice = clients["alice"]
    alice.resources.save("code/axolotl/login", "login code", "import requests", content_type="code")
    alice.resources.save(
        "credentials/axolotl",
        "test account",
        "100 logins a day",
        secure_body="pw",
        content_type="credential",
    )
    alice.resources.save(
        "cookies/axolotl",
        "cookie",
        "b",
        secure_body="sid",
        content_type="cookie",
        expires_at="2026-01-01T00:00:00Z",
    )
    alice.resources.save("code/axolotl/gone", "deleted code", "b")
    alice.resources.delete("code/axolotl/gone")
    clients["bob"].resources.save("code/axolotl/globex", "bob's code", "b")
    return alice


def test_a_save_with_usable_resources_keeps_them(alice: KnowHub) -> None:
    saved = alice.knowledge.save(
        **NOTE, resource_ids=["code/axolotl/login", "credentials/axolotl", "cookies/axolotl"]
    )
    assert saved.resource_ids == ["code/axolotl/login", "credentials/axolotl", "cookies/axolotl"], (
        "an expired resource is still there"
    )


@pytest.mark.parametrize(
    ("resource_ids", "field", "problem"),
    [
        (["code/axolotl/login", "code/axolotl/nothing"], "resource_ids[1]", "the caller can see"),
        (["code/axolotl/globex"], "resource_ids[0]", "the caller can see"),
        (["credentials/axolotl", "code/axolotl/gone"], "resource_ids[1]", "is deleted"),
    ],
)
def test_a_save_naming_an_unusable_resource_is_refused(
    alice: KnowHub, resource_ids: list[str], field: str, problem: str
) -> None:
    before = visible_records(alice)
    code, message = failure(lambda: alice.knowledge.save(**NOTE, resource_ids=resource_ids))
    assert code == "INVALID_ARGUMENT" and message.startswith(f"{field}:"), message
    assert problem in message
    assert visible_records(alice) == before


def test_a_batch_save_names_the_item(alice: KnowHub) -> None:
    before = visible_records(alice)
    code, message = failure(
        lambda: alice.knowledge.save_many(
            [
                {**NOTE, "resource_ids": ["code/axolotl/login"]},
                {**NOTE, "resource_ids": ["credentials/axolotl", "code/axolotl/missing"]},
            ]
        )
    )
    assert code == "INVALID_ARGUMENT"
    assert message.startswith("requests[1].resource_ids[1]:"), message
    assert visible_records(alice) == before


def test_search_hits_say_which_resources_cannot_be_used(
    alice: KnowHub, clients: Principals
) -> None:
    alice.resources.save("code/axolotl/doomed", "soon destroyed", "b")
    alice.resources.save("code/axolotl/hidden", "soon deleted", "b")
    saved = alice.knowledge.save(
        task="axolotl scraping with all our resources",
        content="axolotl notes",
        types=["strategy"],
        scopes=["org:acme", "public"],
        resource_ids=[
            "code/axolotl/login",
            "cookies/axolotl",
            "code/axolotl/doomed",
            "code/axolotl/hidden",
        ],
    )
    alice.resources.destroy("code/axolotl/doomed")
    alice.resources.delete("code/axolotl/hidden")

    [hit] = [
        h
        for h in alice.knowledge.search("axolotl scraping", top_k=10)
        if h.knowledge.id == saved.id
    ]
    assert {(u.resource_id, u.reason) for u in hit.unavailable_resources} == {
        ("cookies/axolotl", "expired"),
        ("code/axolotl/doomed", "missing"),
        ("code/axolotl/hidden", "deleted"),
    }
    assert hit.resources_unverified is False
    assert hit.to_dict()["unavailable_resources"][0].keys() == {"resource_id", "reason"}

    # Bob sees the public record but none of acme's resources: all are missing to him. He
    # reads the ids as acme's (ids are per organisation), never as names of his own.
    [bobs] = [
        h
        for h in clients["bob"].knowledge.search("axolotl scraping", top_k=10)
        if h.knowledge.id == saved.id
    ]
    assert bobs.knowledge.resource_ids == [f"acme:{i}" for i in saved.resource_ids]
    assert {(u.resource_id, u.reason) for u in bobs.unavailable_resources} == {
        (f"acme:{i}", "missing") for i in saved.resource_ids
    }


def test_hits_without_resources_need_no_check(alice: KnowHub) -> None:
    alice.knowledge.save(task="axolotl feeding schedule", content="twice a week", types=["plan"])
    hits = alice.knowledge.search("axolotl feeding", top_k=10)
    plain = [h for h in hits if not h.knowledge.resource_ids]
    assert plain and all(
        h.unavailable_resources == [] and not h.resources_unverified for h in plain
    )


def test_without_the_resource_service_saves_with_resources_wait_and_search_answers(
    start_resource_hub: StartResourceHub, tmp_path: Path
) -> None:
    hub = start_resource_hub()
    alice = hub.client("alice")
    alice.resources.save("code/solo", "code", "b", secure_body="s")
    linked = alice.knowledge.save(
        task="solo kayak rolls", content="hip snap", types=["tool"], resource_ids=["code/solo"]
    )
    hub.stop()

    alone = start_resource_hub(services=["knowledge"])
    alice = alone.client("alice")
    before = visible_records(alice)
    code, message = failure(lambda: alice.knowledge.save(**NOTE, resource_ids=["code/solo"]))
    assert code == "UNAVAILABLE"
    assert "resource_ids cannot be checked, so nothing was saved" in message
    assert "KNOWHUB_RESOURCE_ADDRESS" in message
    assert visible_records(alice) == before
    assert (
        alice.knowledge.save(task="solo kayak", content="no resources", types=["tool"]).resource_ids
        == []
    )

    hits = {h.knowledge.id: h for h in alice.knowledge.search("solo kayak", top_k=10)}
    assert hits[linked.id].resources_unverified is True
    assert hits[linked.id].unavailable_resources == []
    assert not any(h.resources_unverified for i, h in hits.items() if i != linked.id)
    alone.stop()

    with_address = start_resource_hub(services=["knowledge"], resource_address="127.0.0.1:1")
    code, message = failure(
        lambda: with_address.client("alice").knowledge.save(**NOTE, resource_ids=["code/solo"])
    )
    assert code == "UNAVAILABLE" and "nothing was saved" in message
    with_address.stop()

    both = start_resource_hub()
    assert secret_of(both.client("alice"), "code/solo") == "s"
