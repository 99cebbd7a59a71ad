"""`kh.resources` in the SDK: typed results and their JSON shape, the asyncio client, and
the resource_save / resource_get tools for function calling."""

from __future__ import annotations

import asyncio
import inspect
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from knowhub import AsyncKnowHub, KnowHub, Resource, errors, tools
from knowhub.resources import ResourcesAPI

from tests.resource.conftest import Principals
from tests.support.harness import Harness

RESOURCE_KEYS = {
    "id",
    "title",
    "body",
    "secure_body",
    "content_type",
    "metadata",
    "scopes",
    "owner",
    "expires_at",
    "version",
    "created_at",
    "updated_at",
    "expired",
    "has_secure_body",
    "deleted",
    "deleted_at",
}
# A website's test account, its password in the secure body.
CREDENTIAL: dict[str, Any] = {
    "id": "credentials/website_a",
    "title": "某网站测试账号",
    "body": "使用方法:直接登录即可,每天限额 100 次",
    "secure_body": "账号:user@example.com\n密码:SecurePass123",
    "content_type": "credential",
    "metadata": {"acquired_at": "2026-03-06T10:00:00Z"},
}


@pytest.fixture(scope="module")
def alice(clients: Principals) -> KnowHub:
    return clients["alice"]


def test_a_resource_to_dict_has_every_field_and_its_saved_values(alice: KnowHub) -> None:
    saved = alice.resources.save(**CREDENTIAL)
    assert isinstance(saved, Resource)
    data = alice.resources.get("credentials/website_a", include_secure=True).to_dict()
    json.dumps(data)
    assert set(data) == RESOURCE_KEYS
    assert {k: data[k] for k in CREDENTIAL} == CREDENTIAL
    assert (data["version"], data["deleted"], data["expired"]) == (1, False, False)
    assert data["created_at"].endswith("Z") and data["expires_at"] is None
    assert saved.to_dict() | {"secure_body": CREDENTIAL["secure_body"]} == data


def test_list_pages_with_a_next_page_token(alice: KnowHub) -> None:
    for n in range(5):
        alice.resources.save(f"code/sdk/p{n}", f"snippet {n}", "print()", content_type="code")
    seen, token, pages = [], "", 0
    while True:
        page = alice.resources.list(
            prefix="code/sdk/", limit=2, page_token=token, content_type="code"
        )
        seen += [r.id for r in page]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == [f"code/sdk/p{n}" for n in range(5)] and pages == 3


def test_the_async_client_has_every_method_of_the_blocking_one(server: Harness) -> None:
    methods = {
        n for n, _ in inspect.getmembers(ResourcesAPI, inspect.isfunction) if not n.startswith("_")
    }
    assert {"save", "get", "list", "search", "delete", "undelete", "destroy", "versions"} <= methods

    async def scenario() -> dict[str, Any]:
        async with AsyncKnowHub(resource=server.address, token="token-alice") as kh:
            saved = await kh.resources.save(
                "code/async", "aardwolf snippet", "await x()", secure_body="s", expires_at=2e9
            )
            got = await kh.resources.get("code/async", include_secure=True)
            hits = await kh.resources.search("aardwolf")
            page = await kh.resources.list(prefix="code/async")
            many = await kh.resources.get_many(["code/async", "code/none"], basic=True)
            deleted = await kh.resources.delete("code/async")
            restored = await kh.resources.undelete("code/async")
            versions = await kh.resources.versions("code/async")
            destroyed = await kh.resources.destroy("code/async")
            with pytest.raises(errors.NotFound):
                await kh.resources.get("code/async")
            return {
                "saved": saved,
                "got": got,
                "hits": hits,
                "page": page,
                "many": many,
                "deleted": deleted,
                "restored": restored,
                "versions": versions,
                "destroyed": destroyed,
            }

    out = asyncio.run(scenario())
    assert out["saved"].expires_at == datetime.fromtimestamp(2e9, timezone.utc)
    assert out["got"].secure_body == "s"
    assert [h.resource.id for h in out["hits"]] == ["code/async"]
    assert [r.id for r in out["page"]] == ["code/async"]
    assert [r.ok for r in out["many"]] == [True, False]
    assert out["many"][0].resource.body == "" and out["many"][0].resource.title
    assert (out["deleted"].deleted, out["restored"].deleted) == (True, False)
    assert [v.version for v in out["versions"]] == [1] and out["destroyed"] == 1


TOOL_METHODS = {"resource_save": "save", "resource_get": "get"}


def test_the_resource_tools_match_the_sdk() -> None:
    schemas = {s["function"]["name"]: s["function"] for s in tools.openai_tools()}
    assert set(TOOL_METHODS) <= set(schemas)
    for name, method in TOOL_METHODS.items():
        parameters = schemas[name]["parameters"]
        signature = inspect.signature(getattr(ResourcesAPI, method))
        accepted = {n for n in signature.parameters if n != "self"}
        assert set(parameters["properties"]) <= accepted, name
        mandatory = {
            n for n in accepted if signature.parameters[n].default is inspect.Parameter.empty
        }
        assert set(parameters["required"]) == mandatory, name
    assert schemas["resource_save"]["parameters"]["properties"]["content_type"]["enum"] == [
        "text",
        "code",
        "credential",
        "cookie",
    ]


def test_call_tool_saves_and_reads_a_resource(alice: KnowHub, clients: Principals) -> None:
    saved = tools.call_tool(
        alice,
        "resource_save",
        json.dumps(
            {
                "id": "cookies/tool",
                "title": "tool cookie",
                "body": "for the API",
                "secure_body": "sid=tool",
                "content_type": "cookie",
                "metadata": {"expires_at": "2999-01-01T00:00:00Z"},
            }
        ),
    )
    assert (saved["version"], saved["secure_body"], saved["has_secure_body"]) == (1, None, True)
    got = tools.call_tool(alice, "resource_get", {"id": "cookies/tool", "include_secure": True})
    assert got["secure_body"] == "sid=tool" and got["expires_at"] == "2999-01-01T00:00:00Z"
    refused = tools.call_tool(
        clients["carol"], "resource_get", {"id": "cookies/tool", "include_secure": True}
    )
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    bad = tools.call_tool(alice, "resource_save", {"id": "Bad", "title": "t", "body": "b"})
    assert bad["error"]["code"] == "INVALID_ARGUMENT" and "id" in bad["error"]["message"]
    wrong_type = tools.call_tool(
        alice, "resource_save", {"id": "code/x", "title": "t", "body": "b", "content_type": "exe"}
    )
    assert wrong_type["error"]["code"] == "INVALID_ARGUMENT"
