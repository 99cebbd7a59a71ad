"""Expiry: expires_at, or metadata.expires_at as a saved cookie carries it, enforced by
the hub."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from knowhub import KnowHub

from tests.resource.conftest import Principals
from tests.resource.support import secret_of

PAST = "2026-03-07T10:00:00Z"
FUTURE = "2999-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def alice(clients: Principals) -> KnowHub:
    alice = clients["alice"]
    # A cookie, its expiry in metadata only; it has passed.
    alice.resources.save(
        "cookies/website_a",
        "website A cookie",
        "for logged-in API calls",
        secure_body="session_id=abc123; auth_token=xyz789",
        content_type="cookie",
        metadata={"acquired_at": "2026-03-06T10:00:00Z", "expires_at": PAST},
    )
    alice.resources.save(
        "cookies/website_b",
        "website B cookie",
        "for logged-in API calls",
        secure_body="sid=b",
        content_type="cookie",
        expires_at=FUTURE,
    )
    alice.resources.save(
        "cookies/website_c",
        "website C cookie",
        "for logged-in API calls",
        secure_body="sid=c",
        content_type="cookie",
        expires_at=datetime(2020, 1, 1, tzinfo=timezone.utc),
    )
    alice.resources.save(
        "cookies/website_d", "website D cookie", "for logged-in API calls", content_type="cookie"
    )
    return alice


def test_get_reports_expired(alice: KnowHub) -> None:
    cookie = alice.resources.get("cookies/website_a")
    assert cookie.expired is True
    assert cookie.expires_at == datetime(2026, 3, 7, 10, tzinfo=timezone.utc)
    assert cookie.metadata["expires_at"] == PAST
    assert alice.resources.get("cookies/website_c").expired is True
    assert alice.resources.get("cookies/website_b").expired is False
    never = alice.resources.get("cookies/website_d")
    assert (never.expired, never.expires_at) == (False, None)
    # The owner can still read an expired secret: it says it is expired.
    assert secret_of(alice, "cookies/website_a") == "session_id=abc123; auth_token=xyz789"


def test_list_and_search_leave_expired_resources_out_unless_asked(alice: KnowHub) -> None:
    live = {"cookies/website_b", "cookies/website_d"}
    assert {r.id for r in alice.resources.list(prefix="cookies")} == live
    assert {h.resource.id for h in alice.resources.search("cookie", top_k=10)} == live
    every = live | {"cookies/website_a", "cookies/website_c"}
    assert {r.id for r in alice.resources.list(prefix="cookies", include_expired=True)} == every
    found = alice.resources.search("cookie", top_k=10, include_expired=True)
    assert {h.resource.id for h in found} == every
    assert {h.resource.id for h in found if h.resource.expired} == every - live


def test_a_resource_expires_while_stored(alice: KnowHub) -> None:
    soon = datetime.now(timezone.utc) + timedelta(seconds=1)
    alice.resources.save("cookies/short", "short-lived cookie", "b", expires_at=soon)
    assert "cookies/short" in {r.id for r in alice.resources.list(prefix="cookies")}
    time.sleep(max(0.0, (soon - datetime.now(timezone.utc)).total_seconds()) + 0.05)
    assert alice.resources.get("cookies/short").expired
    assert "cookies/short" not in {r.id for r in alice.resources.list(prefix="cookies")}


def test_epoch_seconds_and_agreeing_fields_are_accepted(alice: KnowHub) -> None:
    at = datetime(2030, 5, 1, tzinfo=timezone.utc)
    saved = alice.resources.save("cookies/epoch", "t", "b", metadata={"expires_at": at.timestamp()})
    assert saved.expires_at == at
    both = alice.resources.save(
        "cookies/both",
        "t",
        "b",
        expires_at=at,
        metadata={"expires_at": "2030-05-01T00:00:00+00:00"},
    )
    assert both.expires_at == at
