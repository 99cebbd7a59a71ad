"""Helpers shared by the resource tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowhub import KnowHub

from tests.support.harness import PRINCIPALS

# The tests' principals (tests/support/harness.py) and dave, who may read secrets.
READER = {"user_id": "dave", "org_id": "acme", "roles": ["secure_reader"]}

CREDENTIAL: dict[str, Any] = {
    "title": "website A test account",
    "body": "log in directly; 100 logins a day",
    "content_type": "credential",
    "metadata": {"acquired_at": "2026-03-06T10:00:00Z"},
}


def write_tokens(directory: Path) -> Path:
    path = directory / "tokens.json"
    entries = [
        {"token": f"token-{name}", **fields}
        for name, fields in {**PRINCIPALS, "reader": READER}.items()
    ]
    path.write_text(json.dumps({"tokens": entries}))
    return path


def everything(client: KnowHub) -> dict[str, Any]:
    """Every resource the client can see, deleted and expired ones too, with versions."""
    found: dict[str, Any] = {}
    token = ""
    while True:
        page = client.resources.list(
            limit=100, page_token=token, include_expired=True, show_deleted=True
        )
        for resource in page:
            found[resource.id] = {
                "latest": resource.to_dict(),
                "versions": [v.to_dict() for v in client.resources.versions(resource.id)],
            }
        token = page.next_page_token
        if not token:
            return found


def secret_of(client: KnowHub, resource_id: str, version: int | None = None) -> str | None:
    return client.resources.get(resource_id, include_secure=True, version=version).secure_body
