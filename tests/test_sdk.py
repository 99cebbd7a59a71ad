"""The Python SDK's surface: clients, typed results and their JSON shape, errors,
the asyncio client, and the tools for function calling."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from knowhub import (
    AsyncKnowHub,
    KnowHub,
    Knowledge,
    Page,
    SearchResults,
    SlimReport,
    errors,
    tools,
)
from knowhub.cognition import CognitionAPI
from knowhub.dream import DreamAPI
from knowhub.knowledge import KnowledgeAPI
from knowhub.memory import MemoryAPI

from tests.support.harness import Harness

SDK_ROOT = Path(__file__).resolve().parents[1] / "clients" / "python"
CONTRACTS_ROOT = SDK_ROOT.parents[1] / "protos"

KNOWLEDGE_KEYS = {
    "id",
    "message_id",
    "types",
    "task",
    "tags",
    "scopes",
    "owner",
    "content",
    "resource_ids",
    "source",
    "eval",
    "created_at",
    "updated_at",
}
SOURCE_KEYS = {
    "name",
    "category",
    "urls",
    "agent_id",
    "submitted_by",
    "timestamp",
    "message_id",
    "trace_id",
}
EVAL_KEYS = {"score", "helpful", "harmful", "confidence", "helpful_history", "harmful_history"}
CASE_KEYS = {"task", "outcome", "reason", "trace_id", "timestamp", "query_sequence"}

FULL_SAVE: dict[str, Any] = {
    "task": "log in to website A and bypass bot detection",
    "content": "undetected_chromedriver passes most checks; randomise delays",
    "types": ["tool", "strategy"],
    "tags": {"category": "preference", "domain": "scraping"},
    "scopes": ["org:acme", "project:p1"],
    "source_name": "selenium notes",
    "source_category": "paper",
    "urls": ["https://example.com/selenium"],
    "submitted_by": "alice@example.com",
    "score": 4,
    "message_id": "msg-123",
    "resource_ids": ["code/selenium/undetected_login"],
    "trace_id": "trace-9",
}


def save_referenced_resource(client: KnowHub) -> None:
    """The resource FULL_SAVE refers to: knowledge saves check that it exists."""
    client.resources.save(
        "code/selenium/undetected_login",
        "Selenium login",
        "import undetected_chromedriver as uc",
        content_type="code",
    )


def parse_iso(value: str) -> datetime:
    assert value.endswith("Z"), value
    parsed = datetime.fromisoformat(value[:-1] + "+00:00")
    assert parsed.tzinfo is not None
    return parsed


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- Clients ------------------------------------------------------------------------------


def test_knowhub_takes_a_target_and_a_token(hub: Harness) -> None:
    with KnowHub(hub.address, token="token-alice") as kh:
        saved = kh.knowledge.save(task="t", content="c", types=["plan"])
        assert saved.owner == "agent:alice_bot"
        assert kh.knowledge.get(saved.id).id == saved.id


def test_knowhub_takes_the_knowledge_services_own_address(hub: Harness) -> None:
    with KnowHub(knowledge=hub.address, token="token-carol") as kh:
        saved = kh.knowledge.save(task="t", content="c", types=["plan"])
        assert saved.scopes == ["org:acme"]
    with KnowHub("127.0.0.1:1", knowledge=hub.address, token="token-carol") as kh:
        assert kh.knowledge.get(saved.id).content == "c"


# ---- Typed results and their JSON shape ----------------------------------------------------


def test_knowledge_to_dict_has_every_field_of_the_record(hub: Harness) -> None:
    alice = hub.client("alice")
    save_referenced_resource(alice)
    saved = alice.knowledge.save(**FULL_SAVE)
    assert isinstance(saved, Knowledge)
    updated = alice.knowledge.update(
        saved.id,
        add_helpful_case={
            "task": "scrape prices",
            "outcome": "ok",
            "reason": "cookie valid",
            "trace_id": "trace-1",
            "timestamp": "2026-03-05T12:00:00Z",
            "query_sequence": 3,
        },
    )

    data = updated.to_dict()
    json.dumps(data)  # JSON-ready as it is
    assert set(data) == KNOWLEDGE_KEYS
    assert set(data["source"]) == SOURCE_KEYS
    assert set(data["eval"]) == EVAL_KEYS
    assert re.fullmatch(r"knowledge-\d{8}-[0-9a-f]+", data["id"])
    assert data["id"][10:18] == parse_iso(data["created_at"]).strftime("%Y%m%d")
    assert (data["types"], data["tags"], data["scopes"]) == (
        FULL_SAVE["types"],
        FULL_SAVE["tags"],
        FULL_SAVE["scopes"],
    )
    assert (data["task"], data["content"], data["message_id"], data["resource_ids"]) == (
        FULL_SAVE["task"],
        FULL_SAVE["content"],
        "msg-123",
        FULL_SAVE["resource_ids"],
    )
    assert data["owner"] == "agent:alice_bot"
    assert data["source"] | {"timestamp": None} == {
        "name": "selenium notes",
        "category": "paper",
        "urls": FULL_SAVE["urls"],
        "agent_id": "alice_bot",
        "submitted_by": "alice@example.com",
        "timestamp": None,
        "message_id": "msg-123",
        "trace_id": "trace-9",
    }
    evaluation = data["eval"]
    assert (evaluation["score"], evaluation["helpful"], evaluation["harmful"]) == (4, 2, 0)
    assert evaluation["confidence"] == pytest.approx(2 / 3)
    assert evaluation["harmful_history"] == []
    [case] = evaluation["helpful_history"]
    assert set(case) == CASE_KEYS
    assert case["timestamp"] == "2026-03-05T12:00:00Z"
    assert (case["task"], case["query_sequence"]) == ("scrape prices", 3)

    created, changed = parse_iso(data["created_at"]), parse_iso(data["updated_at"])
    assert changed >= created
    assert parse_iso(data["source"]["timestamp"]) == created
    assert updated.created_at == created and updated.created_at.tzinfo == timezone.utc


def test_search_results_to_dict_is_results_and_count(hub: Harness) -> None:
    alice = hub.client("alice")
    save_referenced_resource(alice)
    first = alice.knowledge.save(**FULL_SAVE)
    second = alice.knowledge.save(
        task="bypass bot detection with playwright", content="stealth plugin", types=["tool"]
    )
    hits = alice.knowledge.search("bypass bot detection", top_k=5)
    assert isinstance(hits, SearchResults)
    assert hits.routed is False

    data = hits.to_dict()
    json.dumps(data)
    assert set(data) == {"results", "count", "selection"}
    assert data["selection"] == "recall"
    assert data["count"] == len(data["results"]) == 2
    assert {r["id"] for r in data["results"]} == {first.id, second.id}
    for result, hit in zip(data["results"], hits, strict=True):
        assert KNOWLEDGE_KEYS | {"quality_score"} <= set(result)
        assert result["quality_score"] == hit.quality_score
        assert result["quality_score"] == (
            result["eval"]["score"] + result["eval"]["helpful"] - 2 * result["eval"]["harmful"]
        )
        assert result["relevance"] == hit.relevance > 0
        assert result["task"] == hit.knowledge.task


def test_list_returns_pages_with_a_next_page_token(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = {alice.knowledge.save(task=f"t{n}", content="c", types=["plan"]).id for n in range(5)}
    seen: list[str] = []
    page = alice.knowledge.list(limit=2)
    pages = 0
    while True:
        assert isinstance(page, Page)
        assert all(isinstance(k, Knowledge) for k in page)
        seen += [k.id for k in page]
        pages += 1
        if not page.next_page_token:
            break
        page = alice.knowledge.list(limit=2, page_token=page.next_page_token)
    assert pages == 3
    assert sorted(seen) == sorted(saved)


def test_save_many_saves_all_or_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    items = [
        {"task": f"step {n}", "content": f"do {n}", "types": ["plan"], "score": n + 1}
        for n in range(3)
    ]
    saved = alice.knowledge.save_many(items)
    assert [(k.task, k.eval.score) for k in saved] == [("step 0", 1), ("step 1", 2), ("step 2", 3)]
    assert len({k.id for k in saved}) == 3

    with pytest.raises(errors.InvalidArgument) as raised:
        alice.knowledge.save_many([items[0], {**items[1], "types": ["bogus"]}])
    assert "requests[1].types" in raised.value.message
    assert sorted(k.id for k in alice.knowledge.list(limit=10)) == sorted(k.id for k in saved)


def test_save_many_with_the_basic_view_answers_the_ids_of_whole_saves(hub: Harness) -> None:
    alice = hub.client("alice")
    first = alice.knowledge.save(task="step 0", content="do 0", types=["plan"])
    items = [{"task": f"step {n}", "content": f"do {n}", "types": ["plan"]} for n in range(3)]
    saved = alice.knowledge.save_many(items, view="basic")
    assert saved.existing == [True, False, False]
    assert saved[0].id == first.id
    for record, item in zip(saved[1:], items[1:], strict=True):
        assert (record.task, record.content, record.types, record.created_at) == ("", "", [], None)
        stored = alice.knowledge.get(record.id)  # saved in full all the same
        assert (stored.task, stored.content, stored.types) == (
            item["task"],
            item["content"],
            item["types"],
        )

    with pytest.raises(ValueError, match="unknown view 'ids'"):
        alice.knowledge.save_many(items, view="ids")


def test_a_record_read_back_is_the_record_its_write_returned(hub: Harness) -> None:
    alice = hub.client("alice")
    # Many writes: a time the store cannot keep exactly shows up in a few percent of them.
    written = alice.knowledge.save_many(
        [{"task": f"item {n}", "content": "c", "types": ["plan"]} for n in range(100)]
    )
    written += [
        alice.knowledge.save(task=f"single {n}", content="c", types=["tool"]) for n in range(25)
    ]
    written += [alice.knowledge.update(k.id, add_helpful_case={"task": "t"}) for k in written[-25:]]
    latest = {k.id: k.to_dict() for k in written}  # updates come after the saves
    assert {i: alice.knowledge.get(i).to_dict() for i in latest} == latest


# ---- Errors ---------------------------------------------------------------------------------

ERROR_CASES: dict[str, tuple[type[errors.KnowHubError], str]] = {
    "not-found": (errors.NotFound, "NOT_FOUND"),
    "invalid-argument": (errors.InvalidArgument, "INVALID_ARGUMENT"),
    "permission-denied": (errors.PermissionDenied, "PERMISSION_DENIED"),
    "unauthenticated": (errors.Unauthenticated, "UNAUTHENTICATED"),
    "failed-precondition": (errors.FailedPrecondition, "FAILED_PRECONDITION"),
    "unavailable": (errors.Unavailable, "UNAVAILABLE"),
}


def _list_with(target: str, token: str | None = None) -> None:
    with KnowHub(target, token=token, timeout=10) as kh:
        kh.knowledge.list()


def _provoke(name: str, hub: Harness) -> Callable[[], object]:
    alice = hub.client("alice")
    record = alice.knowledge.save(task="t", content="c", types=["plan"])
    return {
        "not-found": lambda: alice.knowledge.get("knowledge-20990101-0123456789ab"),
        "invalid-argument": lambda: alice.knowledge.save(task="t", content="c", types=["bogus"]),
        "permission-denied": lambda: hub.client("carol").knowledge.delete(record.id),
        "unauthenticated": lambda: _list_with(hub.address, token="nope"),
        "failed-precondition": lambda: alice.knowledge.update(record.id, evolve_feedback="better"),
        "unavailable": lambda: _list_with(f"127.0.0.1:{closed_port()}"),
    }[name]


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors_surface_as_typed_knowhub_errors(hub: Harness, name: str) -> None:
    kind, code = ERROR_CASES[name]
    assert issubclass(kind, errors.KnowHubError)
    with pytest.raises(kind) as raised:
        _provoke(name, hub)()
    error = raised.value
    assert isinstance(error, errors.KnowHubError)
    assert error.code == code
    assert isinstance(error.message, str) and error.message
    assert code in str(error)


def test_an_invalid_argument_names_the_field(hub: Harness) -> None:
    with pytest.raises(errors.InvalidArgument) as raised:
        hub.client("alice").knowledge.save(task="t", content="c", types=["plan"], score=9)
    assert "score" in raised.value.message


# ---- AsyncKnowHub -------------------------------------------------------------------------


def test_async_knowhub_mirrors_the_blocking_client(hub: Harness) -> None:
    blocking = hub.client("alice")
    save_referenced_resource(blocking)

    async def scenario() -> dict[str, Any]:
        async with AsyncKnowHub(hub.address, token="token-alice") as kh:
            saved = await kh.knowledge.save(**FULL_SAVE)
            many = await kh.knowledge.save_many(
                [{"task": "bypass bot detection again", "content": "c2", "types": ["tool"]}]
            )
            got = await kh.knowledge.get(saved.id)
            hits = await kh.knowledge.search("bypass bot detection", top_k=5)
            updated = await kh.knowledge.update(
                saved.id, add_helpful_case={"task": "x"}, update_score=5
            )
            batch = await kh.knowledge.batch_update(
                [
                    {"knowledge_id": saved.id, "is_helpful": False, "case": {"task": "y"}},
                    {"knowledge_id": "knowledge-20990101-0123456789ab", "is_helpful": True},
                ]
            )
            page = await kh.knowledge.list(limit=1)
            versions = await kh.knowledge.versions(saved.id)
            report = await kh.knowledge.slim(dry_run=True)
            with pytest.raises(errors.FailedPrecondition):
                await kh.knowledge.update(saved.id, evolve_feedback="better")
            await kh.knowledge.delete(many[0].id)
            with pytest.raises(errors.NotFound):
                await kh.knowledge.get(many[0].id)
            return {
                "saved": saved,
                "got": got,
                "hits": hits,
                "updated": updated,
                "batch": batch,
                "page": page,
                "versions": versions,
                "report": report,
            }

    out = asyncio.run(scenario())
    saved = out["saved"]
    assert isinstance(saved, Knowledge)
    assert out["got"].to_dict() == saved.to_dict()
    assert isinstance(out["hits"], SearchResults) and len(out["hits"]) == 2
    assert (out["updated"].eval.helpful, out["updated"].eval.score) == (2, 5)
    assert [r.ok for r in out["batch"]] == [True, False]
    assert out["batch"][1].error["code"] == "NOT_FOUND"
    assert isinstance(out["page"], Page) and len(out["page"]) == 1
    assert out["page"].next_page_token
    assert out["versions"] == []
    assert isinstance(out["report"], SlimReport) and out["report"].dry_run is True
    # What the asyncio client did is what the blocking client sees.
    now = blocking.knowledge.get(saved.id)
    assert (now.eval.helpful, now.eval.harmful, now.eval.score) == (2, 1, 5)
    assert [k.id for k in blocking.knowledge.list(limit=10)] == [saved.id]


def test_async_knowhub_raises_the_same_errors(hub: Harness) -> None:
    async def scenario() -> None:
        async with AsyncKnowHub(knowledge=hub.address, token="nope") as kh:
            await kh.knowledge.list()

    with pytest.raises(errors.Unauthenticated):
        asyncio.run(scenario())


def test_the_async_client_has_every_method_of_the_blocking_one(hub: Harness) -> None:
    methods = [
        n for n, _ in inspect.getmembers(KnowledgeAPI, inspect.isfunction) if not n.startswith("_")
    ]
    assert {
        "save",
        "save_many",
        "get",
        "list",
        "search",
        "update",
        "batch_update",
        "delete",
        "slim",
        "versions",
    } <= set(methods)

    async def scenario() -> None:
        async with AsyncKnowHub(hub.address, token="token-alice") as kh:
            call = kh.knowledge.get("knowledge-20990101-0123456789ab")
            assert inspect.isawaitable(call)
            with pytest.raises(errors.NotFound):
                await call

    asyncio.run(scenario())


# ---- Tools for function calling -------------------------------------------------------------

TOOL_METHODS = {
    "knowledge_search": "search",
    "knowledge_save": "save",
    "knowledge_update": "update",
    "knowledge_batch_update": "batch_update",
    "knowledge_list": "list",
    "knowledge_slim": "slim",
    "knowledge_ask": "ask",
    "knowledge_edit": "edit",
    "knowledge_delete": "delete",
    "knowledge_undelete": "undelete",
    "memory_remember": "remember",
    "memory_search_events": "search_events",
    "memory_recent_memos": "recent_memos",
    "memory_get_profile": "get_profile",
    "memory_search_profiles": "search_profiles",
    "memory_job": "job",
    "memory_edit_event": "update_event",
    "memory_delete_event": "delete_event",
    "memory_undelete_event": "undelete_event",
    "memory_edit_profile": "update_profile",
    "memory_documents_list": "documents",
    "memory_document_read": "document",
    "memory_document_append": "write_document",
    "memory_document_rewrite": "write_document",
    "trace_evaluation_prompt": "evaluation_prompt",
    "trace_submit_evaluation": "submit_evaluation",
    "trace_delete": "delete_trace",
}
TOOL_APIS = {"memory": MemoryAPI, "trace": CognitionAPI}
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def test_openai_tools_are_valid_function_schemas_matching_the_sdk() -> None:
    schemas = [s for s in tools.openai_tools() if s["function"]["name"] in TOOL_METHODS]
    assert json.loads(json.dumps(schemas)) == schemas
    assert sorted(s["function"]["name"] for s in schemas) == sorted(TOOL_METHODS)
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        assert function["description"]
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        properties, required = parameters["properties"], parameters["required"]
        assert set(required) <= set(properties)
        for spec in properties.values():
            assert spec["type"] in JSON_TYPES

        api = (
            DreamAPI
            if function["name"].startswith("memory_document")
            else TOOL_APIS.get(function["name"].partition("_")[0], KnowledgeAPI)
        )
        signature = inspect.signature(getattr(api, TOOL_METHODS[function["name"]]))
        accepted = {
            n
            for n, p in signature.parameters.items()
            if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }
        assert set(properties) <= accepted, function["name"]
        mandatory = {
            n for n in accepted if signature.parameters[n].default is inspect.Parameter.empty
        }
        assert set(required) == mandatory, function["name"]


def test_openai_tools_returns_a_fresh_copy() -> None:
    first = tools.openai_tools()
    first[0]["function"]["name"] = "changed"
    assert tools.openai_tools()[0]["function"]["name"] != "changed"


def test_call_tool_runs_each_tool_and_returns_json_data(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = tools.call_tool(
        alice,
        "knowledge_save",
        json.dumps(
            {
                "task": "deploy with docker compose",
                "content": "pin image tags",
                "types": ["plan"],
                "tags": {"domain": "ops"},
            }
        ),
    )
    assert re.fullmatch(r"knowledge-\d{8}-[0-9a-f]+", saved["id"])
    assert alice.knowledge.get(saved["id"]).tags == {"domain": "ops"}

    found = tools.call_tool(alice, "knowledge_search", '{"query": "docker compose"}')
    assert found["count"] == 1 and found["results"][0]["id"] == saved["id"]

    updated = tools.call_tool(
        alice,
        "knowledge_update",
        {"knowledge_id": saved["id"], "add_helpful_case": {"task": "deploy", "outcome": "ok"}},
    )
    assert updated["eval"]["helpful"] == 2

    batch = tools.call_tool(
        alice,
        "knowledge_batch_update",
        {
            "feedback_list": [
                {"knowledge_id": saved["id"], "is_helpful": False, "case": {"task": "t"}},
                {"knowledge_id": "knowledge-20990101-0123456789ab", "is_helpful": True},
            ]
        },
    )
    assert batch["updated"] == 1
    assert batch["results"][1]["error"]["code"] == "NOT_FOUND"

    listed = tools.call_tool(alice, "knowledge_list", "{}")
    assert listed["count"] == 1 and listed["items"][0]["eval"]["harmful"] == 1

    slimmed = tools.call_tool(alice, "knowledge_slim", {"dry_run": True})
    assert slimmed["groups"] == [] and slimmed["dry_run"] is True

    for result in (saved, found, updated, batch, listed, slimmed):
        json.dumps(result)
        assert "error" not in result


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        (
            "knowledge_update",
            {"knowledge_id": "knowledge-20990101-0123456789ab", "update_score": 4},
            "NOT_FOUND",
        ),
        ("knowledge_save", {"task": "t", "content": "c", "types": ["bogus"]}, "INVALID_ARGUMENT"),
        (
            "knowledge_save",
            {"task": "t", "content": "c", "types": ["plan"], "scopes": ["org:globex"]},
            "PERMISSION_DENIED",
        ),
        ("knowledge_search", {"query": "x", "top_k": 0}, "INVALID_ARGUMENT"),
        ("knowledge_save", "{not json", "INVALID_ARGUMENT"),
        ("knowledge_list", "[1, 2]", "INVALID_ARGUMENT"),
        ("knowledge_list", {"limit": 5, "colour": "red"}, "INVALID_ARGUMENT"),
        ("knowledge_save", {"content": "c", "types": ["plan"]}, "INVALID_ARGUMENT"),
        ("knowledge_delete_everything", {}, None),
    ],
)
def test_call_tool_returns_refusals_as_error_data(
    hub: Harness, name: str, arguments: str | dict[str, Any], code: str | None
) -> None:
    alice = hub.client("alice")
    kept = alice.knowledge.save(task="keep me", content="c", types=["plan"])
    result = tools.call_tool(alice, name, arguments)
    json.dumps(result)
    assert set(result) == {"error"}
    assert set(result["error"]) == {"code", "message"}
    assert result["error"]["message"]
    if code is not None:
        assert result["error"]["code"] == code
    assert [k.to_dict() for k in alice.knowledge.list(limit=10)] == [
        alice.knowledge.get(kept.id).to_dict()
    ]
    assert alice.knowledge.get(kept.id).eval.helpful == 1


# ---- Packaging -----------------------------------------------------------------------------


def requirement_names(project: Path) -> set[str]:
    # Read without tomllib, which Python 3.10 lacks.
    text = (project / "pyproject.toml").read_text()
    block = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    assert block is not None, f"no dependencies list in {project}/pyproject.toml"
    assert "optional-dependencies" not in text
    requirements = re.findall(r"[\"']([^\"']+)[\"']", block.group(1))
    return {re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_sdk_depends_on_the_contracts_grpcio_and_protobuf_only() -> None:
    assert requirement_names(SDK_ROOT) == {"knowhub-contracts", "grpcio", "protobuf"}
    assert requirement_names(CONTRACTS_ROOT) == {"grpcio", "protobuf"}


def imported_packages(package: Path) -> set[str]:
    found: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_the_sdk_imports_only_the_standard_library_the_contracts_grpc_and_protobuf() -> None:
    allowed = set(sys.stdlib_module_names) | {"grpc", "google", "__future__"}
    sdk = imported_packages(SDK_ROOT / "knowhub")
    assert sdk - allowed == {"knowhub", "knowhub_contracts"}
    assert imported_packages(CONTRACTS_ROOT / "knowhub_contracts") - allowed == {
        "knowhub_contracts"
    }


def test_importing_knowhub_does_not_import_the_server(tmp_path: Path) -> None:
    code = (
        "import sys, knowhub, knowhub.tools, knowhub.errors; "
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout
    loaded = set(ast.literal_eval(output.strip()))
    assert "knowhub" in loaded
    assert loaded.isdisjoint(
        {
            "knowhub_server",
            "qdrant_edge",
            "qdrant_client",
            "openai",
            "pydantic",
            "pydantic_settings",
        }
    )
