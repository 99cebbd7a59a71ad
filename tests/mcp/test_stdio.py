"""`knowhub mcp` over stdio: the knowledge, resource, memory and trace tools, each end to
end, and refused calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from knowhub import tools
from mcp import Client, MCPError, StdioServerParameters

from tests.dream.support import wait_until
from tests.mcp.conftest import KNOWHUB, data, error_text, server_env, stdio_server
from tests.support.harness import Harness

TOOL_COUNT = 29


def test_lists_every_tool_with_the_sdks_schemas(hub: Harness) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(hub, "token-alice")) as client:
            listed = await client.list_tools()
            assert client.server_info is None or client.server_info.name == "knowhub"
        by_name = {tool.name: tool for tool in listed.tools}
        expected = {
            schema["function"]["name"]: schema["function"] for schema in tools.openai_tools()
        }
        assert sorted(by_name) == sorted(
            [
                "knowledge_search",
                "knowledge_ask",
                "knowledge_save",
                "knowledge_update",
                "knowledge_batch_update",
                "knowledge_list",
                "knowledge_slim",
                "knowledge_edit",
                "knowledge_delete",
                "knowledge_undelete",
                "resource_save",
                "resource_get",
                "memory_remember",
                "memory_search_events",
                "memory_recent_memos",
                "memory_get_profile",
                "memory_search_profiles",
                "memory_job",
                "memory_edit_event",
                "memory_delete_event",
                "memory_undelete_event",
                "memory_edit_profile",
                "memory_documents_list",
                "memory_document_read",
                "memory_document_append",
                "memory_document_rewrite",
                "trace_evaluation_prompt",
                "trace_submit_evaluation",
                "trace_delete",
            ]
        )
        assert len(by_name) == TOOL_COUNT
        for name, function in expected.items():
            assert by_name[name].input_schema == function["parameters"]
            assert by_name[name].description == function["description"]
        read_only = {name for name, tool in by_name.items() if tool.annotations.read_only_hint}
        assert read_only == {
            "knowledge_search",
            "knowledge_list",
            "resource_get",
            "memory_search_events",
            "memory_recent_memos",
            "memory_get_profile",
            "memory_search_profiles",
            "memory_documents_list",
            "memory_document_read",
            "memory_job",
            "trace_evaluation_prompt",
        }
        assert by_name["knowledge_slim"].annotations.destructive_hint is True
        assert by_name["trace_delete"].annotations.destructive_hint is True
        assert by_name["memory_delete_event"].annotations.destructive_hint is True
        assert by_name["knowledge_delete"].annotations.destructive_hint is True

    anyio.run(scenario)


def test_every_tool_end_to_end(hub: Harness) -> None:
    alice = hub.client("alice")

    async def scenario() -> tuple[str, str]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            saved = data(
                await client.call_tool(
                    "knowledge_save",
                    {
                        "task": "Deploy the billing service with docker compose",
                        "content": "Run migrations before starting the web container.",
                        "types": ["strategy", "tool"],
                        "tags": {"domain": "deploy"},
                        "score": 4,
                    },
                )
            )
            assert saved["owner"] == "agent:alice_bot"
            assert saved["eval"]["helpful"] == 1

            found = data(
                await client.call_tool(
                    "knowledge_search", {"query": "docker compose migrations", "top_k": 3}
                )
            )
            assert found["count"] >= 1
            assert found["results"][0]["id"] == saved["id"]
            assert found["results"][0]["quality_score"] == 5.0  # score 4 + helpful 1

            updated = data(
                await client.call_tool(
                    "knowledge_update",
                    {
                        "knowledge_id": saved["id"],
                        "add_helpful_case": {"task": "deploy billing", "outcome": "worked"},
                    },
                )
            )
            assert updated["eval"]["helpful"] == 2

            other = data(
                await client.call_tool(
                    "knowledge_save",
                    {
                        "task": "Rotate the TLS certificate",
                        "content": "Use certbot renew.",
                        "types": ["tool"],
                    },
                )
            )
            batch = data(
                await client.call_tool(
                    "knowledge_batch_update",
                    {
                        "feedback_list": [
                            {"knowledge_id": saved["id"], "is_helpful": True},
                            {
                                "knowledge_id": other["id"],
                                "is_helpful": False,
                                "case": {
                                    "task": "rotate",
                                    "outcome": "expired anyway",
                                    "reason": "cron",
                                },
                            },
                            {"knowledge_id": "knowledge-missing", "is_helpful": True},
                        ]
                    },
                )
            )
            assert batch["updated"] == 2
            assert [r["error"] is None for r in batch["results"]] == [True, True, False]
            assert batch["results"][2]["error"]["code"] == "NOT_FOUND"

            listed = data(await client.call_tool("knowledge_list", {"limit": 10}))
            assert listed["count"] == 2
            assert {k["id"] for k in listed["items"]} == {saved["id"], other["id"]}

            slim = data(await client.call_tool("knowledge_slim", {"dry_run": True}))
            assert slim["dry_run"] is True
            assert slim["examined"] == 2

            resource = data(
                await client.call_tool(
                    "resource_save",
                    {
                        "id": "credentials/billing_db",
                        "title": "Billing database",
                        "body": "psql with these credentials",
                        "secure_body": "billing / s3cret",
                        "content_type": "credential",
                        "metadata": {"host": "db.internal"},
                    },
                )
            )
            assert resource["version"] == 1
            assert resource["has_secure_body"] is True
            assert resource.get("secure_body") is None

            public = data(await client.call_tool("resource_get", {"id": "credentials/billing_db"}))
            assert public["body"] == "psql with these credentials"
            assert public["secure_body"] is None
            secret = data(
                await client.call_tool(
                    "resource_get", {"id": "credentials/billing_db", "include_secure": True}
                )
            )
            assert secret["secure_body"] == "billing / s3cret"
        return saved["id"], other["id"]

    saved_id, other_id = anyio.run(scenario)
    # The hub holds what the tools did, as alice.
    assert alice.knowledge.get(saved_id).eval.helpful == 3
    assert alice.knowledge.get(other_id).eval.harmful == 1
    assert alice.resources.get("credentials/billing_db").owner == "agent:alice_bot"


def test_knowledge_is_saved_once_edited_deleted_and_undeleted_by_tools(hub: Harness) -> None:
    alice = hub.client("alice")

    async def scenario() -> str:
        async with Client(stdio_server(hub, "token-alice")) as client:
            record = {
                "task": "Renew the staging certificate",
                "content": "Use certbot.",
                "types": ["tool"],
                "trace_id": "trace-7",
            }
            saved = data(await client.call_tool("knowledge_save", record))
            again = data(await client.call_tool("knowledge_save", record))
            assert (saved["existing"], again["existing"]) == (False, True)
            assert again["id"] == saved["id"] and saved["source"]["trace_id"] == "trace-7"

            edited = data(
                await client.call_tool(
                    "knowledge_edit",
                    {
                        "knowledge_id": saved["id"],
                        "content": "Use certbot renew --staging.",
                        "note": "the flag matters",
                    },
                )
            )
            assert edited["content"] == "Use certbot renew --staging."
            refused = await client.call_tool(
                "knowledge_edit", {"knowledge_id": saved["id"], "scopes": ["org:globex"]}
            )
            assert refused.is_error and "knowledge.scopes[0]" in refused.content[0].text

            deleted = data(
                await client.call_tool("knowledge_delete", {"knowledge_id": saved["id"]})
            )
            assert deleted["purge_time"].endswith("Z")
            restored = data(
                await client.call_tool("knowledge_undelete", {"knowledge_id": saved["id"]})
            )
            assert restored["content"] == edited["content"]
        return str(saved["id"])

    knowledge_id = anyio.run(scenario)
    [version] = alice.knowledge.versions(knowledge_id)
    assert (version.content, version.feedback) == ("Use certbot.", "the flag matters")


def bad_calls(saved_id: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    """Calls the server must refuse: tool, arguments, what the message says."""
    return [
        ("knowledge_save", {"task": "t", "types": ["tool"]}, ["'content' is a required property"]),
        (
            "knowledge_save",
            {"task": "t", "content": "c", "types": ["recipe"]},
            ["types.0", "'recipe' is not one of"],
        ),
        (
            "knowledge_save",
            {"task": "t", "content": "c", "types": ["tool"], "colour": "red"},
            ["unknown argument 'colour'"],
        ),
        (
            "knowledge_save",
            {"task": "t", "content": "c", "types": ["tool"], "score": 9},
            ["score", "maximum of 5"],
        ),
        (
            "knowledge_save",
            {"task": "t", "content": "c", "types": ["tool"], "scopes": ["org:globex"]},
            ["PERMISSION_DENIED", "scope"],
        ),
        ("knowledge_search", {"query": "x", "top_k": 500}, ["top_k", "maximum of 100"]),
        ("knowledge_search", {"top_k": 3}, ["'query' is a required property"]),
        (
            "knowledge_update",
            {"knowledge_id": "knowledge-missing", "update_score": 4},
            ["NOT_FOUND"],
        ),
        (
            "knowledge_update",
            {"knowledge_id": saved_id, "update_score": "five"},
            ["update_score", "not of type 'integer'"],
        ),
        (
            "knowledge_batch_update",
            {"feedback_list": [{"knowledge_id": saved_id}]},
            ["feedback_list.0", "'is_helpful' is a required property"],
        ),
        ("knowledge_list", {"limit": 0}, ["limit", "minimum of 1"]),
        (
            "resource_save",
            {"id": "Not A Valid Id!", "title": "t", "body": "b"},
            ["INVALID_ARGUMENT", "id"],
        ),
        (
            "resource_save",
            {"id": "code/x", "title": "t", "body": "b", "content_type": "video"},
            ["content_type", "'video' is not one of"],
        ),
        ("resource_get", {"id": "code/none"}, ["NOT_FOUND"]),
    ]


def test_bad_arguments_are_tool_errors_naming_the_field_and_change_nothing(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = alice.knowledge.save(task="Keep me", content="unchanged", types=["tool"])
    before = [k.to_dict() for k in alice.knowledge.list(limit=100)]

    async def scenario() -> None:
        async with Client(stdio_server(hub, "token-alice")) as client:
            for name, arguments, expected in bad_calls(saved.id):
                message = error_text(await client.call_tool(name, arguments))
                for part in expected:
                    assert part in message, (name, arguments, message)
            with pytest.raises(MCPError, match="unknown tool 'knowledge_destroy'"):
                await client.call_tool("knowledge_destroy", {"knowledge_id": saved.id})
            # The server is still serving after all of that.
            assert data(await client.call_tool("knowledge_list", {}))["count"] == 1

    anyio.run(scenario)
    assert [k.to_dict() for k in alice.knowledge.list(limit=100)] == before
    assert len(alice.resources.list()) == 0


def test_a_secure_body_needs_a_caller_allowed_to_read_it(hub: Harness) -> None:
    hub.client("alice").resources.save(
        "cookies/site_a",
        "Site A cookie",
        "for the API",
        secure_body="session=abc",
        content_type="cookie",
    )

    async def scenario() -> None:
        async with Client(stdio_server(hub, "token-carol")) as client:  # alice's org
            public = data(await client.call_tool("resource_get", {"id": "cookies/site_a"}))
            assert public["has_secure_body"] is True
            assert public["secure_body"] is None
            refused = error_text(
                await client.call_tool(
                    "resource_get", {"id": "cookies/site_a", "include_secure": True}
                )
            )
            assert refused.startswith("PERMISSION_DENIED")
            assert "session=abc" not in refused

    anyio.run(scenario)


def test_an_unknown_token_is_a_tool_error(hub: Harness) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(hub, "token-nobody")) as client:
            message = error_text(await client.call_tool("knowledge_list", {}))
            assert message == "UNAUTHENTICATED: unknown bearer token"

    anyio.run(scenario)


def test_the_memory_tools_end_to_end(hub: Harness) -> None:
    """Without an LLM the historian stores observations as written, so what is remembered
    is found again by the search tool."""
    alice = hub.client("alice")
    context = {"user_id": "10001", "group_id": "20002", "sender_name": "Null"}

    async def remember() -> dict[str, Any]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            return data(
                await client.call_tool(
                    "memory_remember",
                    {
                        "memo": "explained asyncio",
                        "context": context,
                        "observations": ["User 10001 maintains the quokka scheduler"],
                    },
                )
            )

    remembered = anyio.run(remember)
    assert remembered["enqueued"] is True and remembered["memo_recorded"] is True
    wait_until(
        lambda: len(alice.memory.search_events("quokka scheduler")) > 0,
        what="the historian to store the event",
    )

    async def scenario() -> tuple[dict[str, Any], ...]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            found = data(
                await client.call_tool(
                    "memory_search_events",
                    {"query": "quokka scheduler", "target_group_id": "20002"},
                )
            )
            memos = data(
                await client.call_tool(
                    "memory_recent_memos", {"user_id": "10001", "group_id": "20002"}
                )
            )
            profiles = data(await client.call_tool("memory_search_profiles", {"query": "quokka"}))
            missing = error_text(
                await client.call_tool(
                    "memory_get_profile", {"entity_type": "user", "entity_id": "10001"}
                )
            )
            bad = error_text(
                await client.call_tool(
                    "memory_get_profile", {"entity_type": "planet", "entity_id": "10001"}
                )
            )
            return found, memos, profiles, {"missing": missing, "bad": bad}

    found, memos, profiles, errors = anyio.run(scenario)
    assert [h["event"]["text"] for h in found["results"]] == [
        "User 10001 maintains the quokka scheduler"
    ]
    assert [m["text"] for m in memos["memos"]] == ["explained asyncio"]
    assert profiles == {"hits": [], "count": 0}
    assert errors["missing"].startswith("NOT_FOUND")
    assert errors["bad"].startswith("INVALID_ARGUMENT")


def test_the_trace_tools_end_to_end(hub: Harness) -> None:
    """An agent evaluates its trace's queries (an unreadable answer is reported, not an
    error) and deletes its trace; another user's trace of the same id is untouched."""
    alice, bob = hub.client("alice"), hub.client("bob")
    record = alice.knowledge.save(
        task="renew the quokka certificate", content="certbot", types=["tool"]
    )
    trace_id = f"trace-mcp-{record.id[-8:]}"
    query = {
        "type": "query",
        "sequence": 2,
        "query": "renew the certificate",
        "source_ids": [record.id],
    }
    alice.cognition.append_events(trace_id, [query])
    bob.cognition.append_events(trace_id, [{**query, "source_ids": []}])
    answer = json.dumps(
        {
            "evaluations": [
                {
                    "query_sequence": 2,
                    "assessments": [
                        {"source_id": record.id, "status": "helpful", "reason": "it worked"}
                    ],
                }
            ]
        }
    )

    async def scenario() -> tuple[dict[str, Any], ...]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            prompt = data(await client.call_tool("trace_evaluation_prompt", {"trace_id": trace_id}))
            unread = data(
                await client.call_tool(
                    "trace_submit_evaluation",
                    {"trace_id": trace_id, "raw_text": "they all looked fine to me"},
                )
            )
            read = data(
                await client.call_tool(
                    "trace_submit_evaluation",
                    {"trace_id": trace_id, "raw_text": answer, "trigger": "task_completion"},
                )
            )
            deleted = data(await client.call_tool("trace_delete", {"trace_id": trace_id}))
            again = error_text(await client.call_tool("trace_delete", {"trace_id": trace_id}))
            return prompt, unread, read, deleted, {"again": again}

    prompt, unread, read, deleted, errors = anyio.run(scenario)
    assert prompt["query_sequences"] == [2] and record.id in prompt["prompt"]
    assert (unread["parse_failed"], unread["outcomes"], unread["pending_query_sequences"]) == (
        True,
        [],
        [2],
    )
    assert (read["parse_failed"], read["pending_query_sequences"]) == (False, [])
    assert [(o["knowledge_id"], o["status"]) for o in read["outcomes"]] == [(record.id, "helpful")]
    assert deleted == {"deleted_events": 3, "deleted_extractions": 0}  # query, failed, rated
    assert errors["again"] == f"NOT_FOUND: trace {trace_id!r} not found"
    assert alice.knowledge.get(record.id).eval.helpful == 2  # the verdict stays applied
    assert [e.type for e in bob.cognition.get_log(trace_id)] == ["query"]


def test_an_unreachable_hub_is_a_tool_error_and_the_server_stays_up(hub: Harness) -> None:
    address = hub.address
    hub.stop()

    async def scenario() -> None:
        async with Client(stdio_server(address, "token-alice")) as client:
            for _ in range(2):
                message = error_text(await client.call_tool("knowledge_list", {}))
                assert message.startswith("UNAVAILABLE")
            assert len((await client.list_tools()).tools) == TOOL_COUNT

    anyio.run(scenario)


def test_over_stdio_a_local_hubs_token_is_found_in_its_data_directory(tmp_path: Path) -> None:
    """No KNOWHUB_TOKEN: the stdio server (started by the user's agent) reads the local
    token of the hub's data directory, as the SDK does; no agent is named anywhere."""
    local = Harness(tmp_path / "local").start()
    try:
        env = server_env(local.address, KNOWHUB_DATA_DIR=str(local.data_dir))

        async def scenario() -> dict[str, Any]:
            async with Client(
                StdioServerParameters(command=KNOWHUB, args=["mcp"], env=env)
            ) as client:
                return data(
                    await client.call_tool(
                        "knowledge_save", {"task": "t", "content": "c", "types": ["tool"]}
                    )
                )

        saved = anyio.run(scenario)
    finally:
        local.stop()
    assert (saved["owner"], saved["source"]["agent_id"]) == ("user:local", "")


def test_an_agent_keeps_its_own_memory_documents(hub: Harness) -> None:
    """Read, append and rewrite through MCP: each write keeps the previous revision, a
    stale rewrite is refused, and the tools reach no other agent's documents."""
    hub.client("bob").dream.write_document("notes.md", "bob's own")

    async def scenario() -> dict[str, Any]:
        async with Client(stdio_server(hub, "token-alice")) as client:
            first = data(
                await client.call_tool(
                    "memory_document_append", {"path": "people/null.md", "content": "- likes Go"}
                )
            )
            second = data(
                await client.call_tool(
                    "memory_document_append", {"path": "people/null.md", "content": "- learns Rust"}
                )
            )
            stale = error_text(
                await client.call_tool(
                    "memory_document_rewrite",
                    {"path": "people/null.md", "content": "# Null", "expected_revision": 1},
                )
            )
            rewritten = data(
                await client.call_tool(
                    "memory_document_rewrite",
                    {
                        "path": "people/null.md",
                        "content": "# Null\n- Go, Rust",
                        "expected_revision": 2,
                    },
                )
            )
            read = data(await client.call_tool("memory_document_read", {"path": "people/null.md"}))
            earlier = data(
                await client.call_tool(
                    "memory_document_read", {"path": "people/null.md", "revision": 2}
                )
            )
            listed = data(await client.call_tool("memory_documents_list", {}))
            foreign = error_text(
                await client.call_tool(
                    "memory_document_read", {"path": "notes.md", "agent_id": "bob_bot"}
                )
            )
            missing = error_text(
                await client.call_tool("memory_document_read", {"path": "notes.md"})
            )
            escape = error_text(
                await client.call_tool(
                    "memory_document_append", {"path": "../bob_bot/notes.md", "content": "x"}
                )
            )
            return {
                "first": first,
                "second": second,
                "stale": stale,
                "rewritten": rewritten,
                "read": read,
                "earlier": earlier,
                "listed": listed,
                "foreign": foreign,
                "missing": missing,
                "escape": escape,
            }

    seen = anyio.run(scenario)
    assert (seen["first"]["revision"], seen["second"]["content"]) == (
        1,
        "- likes Go\n- learns Rust",
    )
    assert seen["stale"].startswith("FAILED_PRECONDITION")
    assert seen["rewritten"]["revision"] == 3
    assert seen["read"]["content"] == "# Null\n- Go, Rust"
    assert [r["revision"] for r in seen["read"]["revisions"]] == [2, 1]
    assert seen["earlier"]["content"] == "- likes Go\n- learns Rust"
    assert [d["path"] for d in seen["listed"]["documents"]] == ["people/null.md"]
    assert "unknown argument 'agent_id'" in seen["foreign"]
    assert seen["missing"].startswith("NOT_FOUND")
    assert seen["escape"].startswith("INVALID_ARGUMENT")
    assert hub.client("bob").dream.document("notes.md").content == "bob's own"
    assert hub.client("alice").dream.document("people/null.md").written_by == "user:alice"


def test_an_agent_follows_its_job_and_corrects_its_memory(hub: Harness) -> None:
    """memory_remember waits for its job; memory_job reads it again; the event it stored
    is edited, deleted (hidden from search) and brought back; another user may not."""

    async def scenario() -> dict[str, Any]:
        async with (
            Client(stdio_server(hub, "token-alice")) as alice,
            Client(stdio_server(hub, "token-carol")) as carol,
        ):
            remembered = data(
                await alice.call_tool(
                    "memory_remember",
                    {
                        "context": {"user_id": "10009"},
                        "wait": 20,
                        "observations": ["User 10009 repairs clocks"],
                    },
                )
            )
            job = data(await alice.call_tool("memory_job", {"job_id": remembered["job_id"]}))
            event_id = job["decisions"][0]["event_id"]
            edited = data(
                await alice.call_tool(
                    "memory_edit_event",
                    {"event_id": event_id, "text": "User 10009 repairs antique clocks"},
                )
            )
            refused = error_text(
                await carol.call_tool("memory_delete_event", {"event_id": event_id})
            )
            deleted = data(await alice.call_tool("memory_delete_event", {"event_id": event_id}))
            hidden = data(
                await alice.call_tool(
                    "memory_search_events", {"query": "clocks", "target_user_id": "10009"}
                )
            )
            back = data(await alice.call_tool("memory_undelete_event", {"event_id": event_id}))
            found = data(
                await alice.call_tool(
                    "memory_search_events", {"query": "clocks", "target_user_id": "10009"}
                )
            )
            profile = error_text(
                await alice.call_tool(
                    "memory_edit_profile",
                    {"entity_type": "user", "entity_id": "10009", "summary": "Repairs clocks."},
                )
            )
            return {
                "remembered": remembered,
                "job": job,
                "edited": edited,
                "refused": refused,
                "deleted": deleted,
                "hidden": hidden,
                "back": back,
                "found": found,
                "profile": profile,
            }

    seen = anyio.run(scenario)
    job = seen["remembered"]["job"]
    assert job["state"] == "done" and job["job_id"] == seen["remembered"]["job_id"]
    assert seen["job"] == job
    assert [d["action"] for d in job["decisions"]] == ["add"]
    assert len(job["event_ids"]) == 2  # the sender's and the global copy
    assert seen["edited"]["text"] == "User 10009 repairs antique clocks"
    assert seen["refused"].startswith("PERMISSION_DENIED")
    assert seen["deleted"]["state"] == "deleted" and seen["deleted"]["purge_at"]
    assert seen["hidden"]["results"] == []
    assert seen["back"]["state"] == "current"
    assert [h["event"]["text"] for h in seen["found"]["results"]] == [
        "User 10009 repairs antique clocks"
    ]
    assert seen["profile"].startswith("NOT_FOUND")  # no profile without an LLM merge
