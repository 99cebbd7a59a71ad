"""POST /api/v1/{service}/{Method}: every service's RPCs as proto3 JSON, end to end."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from google.protobuf.message import Message
from knowhub_contracts.v1 import admin_pb2, cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

from knowhub_server.gateway.translation import RPCS
from tests.conftest import StartHub
from tests.gateway.conftest import Gateway, gateway_for
from tests.support.harness import Harness


def field_names(message_class: type[Message]) -> set[str]:
    return {f.name for f in message_class.DESCRIPTOR.fields}


def ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()


def test_every_rpc_of_the_four_services_and_the_admin_service_has_a_route() -> None:
    expected = {
        (service, method.name)
        for service, module, name in (
            ("knowledge", knowledge_pb2, "KnowledgeService"),
            ("resource", resource_pb2, "ResourceService"),
            ("cognition", cognition_pb2, "CognitionService"),
            ("dream", dream_pb2, "DreamService"),
            ("admin", admin_pb2, "AdminService"),
        )
        for method in module.DESCRIPTOR.services_by_name[name].methods
    }
    assert set(RPCS) == expected
    assert len(expected) > 50


def test_knowledge_rpcs(gateway: Gateway) -> None:
    saved = ok(
        gateway.rpc(
            "knowledge",
            "SaveKnowledge",
            {
                "task": "log in to site A",
                "content": "use the test account",
                "types": ["tool"],
                "tags": {"domain": "crawling"},
                "score": 4,
                "source": {"name": "notes", "timestamp": "2026-03-05T12:00:00Z"},
            },
            as_="alice",
        )
    )
    assert set(saved) == field_names(knowledge_pb2.SaveKnowledgeResponse)
    record = saved["knowledge"]
    assert set(record) == field_names(knowledge_pb2.Knowledge)
    assert record["source"]["timestamp"] == "2026-03-05T12:00:00Z"
    assert record["eval"]["score"] == 4
    # lowerCamelCase names are proto3 JSON too
    batch = ok(
        gateway.rpc(
            "knowledge",
            "BatchSaveKnowledge",
            {
                "requests": [
                    {
                        "task": "t1",
                        "content": "c1",
                        "types": ["plan"],
                        "resourceIds": [],
                        "messageId": "msg-7",
                    }
                ]
            },
            as_="alice",
        )
    )
    assert batch["knowledge"][0]["message_id"] == "msg-7"
    basic = ok(
        gateway.rpc(
            "knowledge",
            "BatchSaveKnowledge",
            {
                "requests": [{"task": "t2", "content": "c2", "types": ["plan"]}],
                "view": "KNOWLEDGE_VIEW_BASIC",
            },
            as_="alice",
        )
    )
    (answered,) = basic["knowledge"]
    assert answered["id"].startswith("knowledge-")
    assert (answered.get("task", ""), answered.get("types", [])) == ("", [])
    stored = ok(gateway.rpc("knowledge", "GetKnowledge", {"id": answered["id"]}, as_="alice"))
    assert stored["knowledge"]["task"] == "t2"
    versions = ok(
        gateway.rpc("knowledge", "ListKnowledgeVersions", {"id": record["id"]}, as_="alice")
    )
    assert versions == {"versions": []}
    deleted = gateway.rpc("knowledge", "DeleteKnowledge", {"id": record["id"]}, as_="alice")
    assert deleted.status_code == 200
    assert (
        gateway.rpc("knowledge", "GetKnowledge", {"id": record["id"]}, as_="alice").status_code
        == 404
    )


def test_resource_rpcs(gateway: Gateway) -> None:
    saved = ok(
        gateway.rpc(
            "resource",
            "SaveResource",
            {
                "id": "code/selenium/login",
                "title": "login code",
                "body": "import uc",
                "content_type": "RESOURCE_CONTENT_TYPE_CODE",
                "metadata": {"language": "python", "lines": 3, "nested": {"ok": True}},
            },
            as_="alice",
        )
    )
    resource = saved["resource"]
    assert resource["content_type"] == "RESOURCE_CONTENT_TYPE_CODE"
    assert resource["version"] == 1  # int64 as a JSON number
    assert resource["metadata"] == {"language": "python", "lines": 3, "nested": {"ok": True}}
    listed = ok(gateway.rpc("resource", "ListResources", {"prefix": "code"}, as_="carol"))
    assert [r["id"] for r in listed["resources"]] == ["code/selenium/login"]
    found = ok(
        gateway.rpc(
            "resource",
            "BatchGetResources",
            {"ids": ["code/selenium/login", "code/none"]},
            as_="alice",
        )
    )
    assert [bool(r.get("resource")) for r in found["results"]] == [True, False]
    conflict = gateway.rpc(
        "resource",
        "SaveResource",
        {"id": "code/selenium/login", "title": "t", "body": "b", "expected_version": "0"},
        as_="alice",
    )
    assert conflict.status_code == 400
    assert conflict.json()["error"]["code"] == "FAILED_PRECONDITION"
    denied = gateway.rpc("resource", "ListAuditEvents", {}, as_="alice")
    assert denied.status_code == 403
    assert ok(gateway.rpc("resource", "ListAuditEvents", {}, as_="admin"))["events"]


def test_cognition_rpcs(gateway: Gateway) -> None:
    appended = ok(
        gateway.rpc(
            "cognition",
            "AppendEvents",
            {
                "trace_id": "trace-9",
                "task": "crawl site A",
                "events": [
                    {"message": {"sequence": 1, "role": "user", "content": "log in to site A"}},
                    {
                        "query": {
                            "sequence": 2,
                            "query": "site A login",
                            "response": "use the account",
                            "source_ids": ["knowledge-x"],
                            "sources": [{"id": "knowledge-x", "task": "t", "content": "c"}],
                        }
                    },
                ],
            },
            as_="alice",
        )
    )
    assert len(appended["event_ids"]) == 2
    assert appended["trace"]["last_sequence"] == 2
    view = ok(gateway.rpc("cognition", "GetTraceView", {"trace_id": "trace-9"}, as_="alice"))
    assert set(view) == field_names(cognition_pb2.GetTraceViewResponse)
    assert view["pending_query_sequences"] == [2]
    log = ok(gateway.rpc("cognition", "GetLog", {"trace_id": "trace-9"}, as_="alice"))
    assert [next(k for k in e if k in ("message", "query")) for e in log["events"]] == [
        "message",
        "query",
    ]
    exported = ok(gateway.rpc("cognition", "ExportLog", {"trace_id": "trace-9"}, as_="alice"))
    assert json.loads(exported["document"])["trace_id"] == "trace-9"
    assert (
        gateway.rpc("cognition", "GetTraceView", {"trace_id": "trace-9"}, as_="bob").status_code
        == 404
    )
    twice = gateway.rpc("cognition", "ImportLog", {"document": exported["document"]}, as_="alice")
    assert twice.status_code == 409
    assert twice.json()["error"]["code"] == "ALREADY_EXISTS"


def test_dream_rpcs(gateway: Gateway) -> None:
    remembered = ok(
        gateway.rpc(
            "dream",
            "Remember",
            {
                "memo": "explained asyncio.gather",
                "context": {"user_id": "10001", "request_type": "REQUEST_TYPE_PRIVATE"},
            },
            as_="alice",
        )
    )
    assert remembered["memo_recorded"] is True
    memos = ok(
        gateway.rpc("dream", "RecentMemos", {"user_id": "10001", "request_type": 2}, as_="alice")
    )
    assert [m["text"] for m in memos["memos"]] == ["explained asyncio.gather"]
    run = gateway.rpc("dream", "RunDream", {"agent_id": "bob_bot"}, as_="alice")
    assert run.status_code == 403
    runs = ok(
        gateway.rpc("dream", "ListDreamRuns", {"status": "DREAM_RUN_STATUS_DONE"}, as_="alice")
    )
    assert runs == {"runs": [], "next_page_token": ""}
    too_many = gateway.rpc("dream", "ListDreamRuns", {"page_size": 500}, as_="alice")
    assert too_many.status_code == 400
    assert too_many.json()["error"]["message"].startswith("page_size")


def test_a_streaming_rpc_answers_ndjson(gateway: Gateway) -> None:
    ok(
        gateway.rpc(
            "cognition",
            "AppendEvents",
            {
                "trace_id": "trace-s",
                "events": [
                    {
                        "query": {
                            "sequence": 1,
                            "query": "q",
                            "source_ids": ["knowledge-x"],
                            "sources": [{"id": "knowledge-x"}],
                        }
                    }
                ],
            },
            as_="alice",
        )
    )
    signal = ok(
        gateway.rpc(
            "cognition",
            "SignalTrigger",
            {"trace_id": "trace-s", "trigger": "goal_completion"},
            as_="alice",
        )
    )
    assert signal["published"] is True
    with gateway.client.stream(
        "POST",
        "/api/v1/cognition/WatchTriggers",
        json={"group": "g1", "consumer": "c1"},
        headers={"Authorization": "Bearer token-admin"},
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        first = json.loads(next(response.iter_lines()))
    assert first["trigger"]["trace_id"] == "trace-s"
    assert first["trigger"]["query_sequences"] == [1]
    assert first["trigger"]["trigger_id"] == signal["trigger_id"]
    refused = gateway.rpc("cognition", "WatchTriggers", {"group": "g1"}, as_="alice")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "PERMISSION_DENIED"


def test_unknown_routes_and_bad_requests(gateway: Gateway) -> None:
    unknown = gateway.rpc("memory", "Remember", {}, as_="alice")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"].startswith("service")
    no_method = gateway.rpc("knowledge", "Forget", {}, as_="alice")
    assert no_method.status_code == 404
    assert no_method.json()["error"]["message"].startswith("method")
    wrong_verb = gateway.get("/api/v1/knowledge/GetKnowledge", "alice")
    assert wrong_verb.status_code == 405
    assert wrong_verb.json()["error"]["code"]
    assert gateway.get("/api/nothing", "alice").json()["error"]["code"] == "NOT_FOUND"
    cases = {
        "colour": {"task": "t", "colour": "red"},
        "types": {"types": "tool"},
        "score": {"score": 2**40},
        "source": {"source": "notes"},
    }
    for field, body in cases.items():
        response = gateway.rpc("knowledge", "SaveKnowledge", body, as_="alice")
        assert response.status_code == 400, (field, response.text)
        assert field in response.json()["error"]["message"], (field, response.text)
    enum = gateway.rpc(
        "resource",
        "SaveResource",
        {"id": "a", "title": "t", "body": "b", "content_type": "PDF"},
        as_="alice",
    )
    assert enum.status_code == 400
    assert "content_type" in enum.json()["error"]["message"]
    stamp = gateway.rpc(
        "resource",
        "SaveResource",
        {"id": "a", "title": "t", "body": "b", "expires_at": "tomorrow"},
        as_="alice",
    )
    assert stamp.status_code == 400
    assert "expires_at" in stamp.json()["error"]["message"]
    query = gateway.post("/api/v1/knowledge/ListKnowledge?page_size=3", "alice", json={})
    assert query.status_code == 400
    assert query.json()["error"]["message"].startswith("page_size")
    large = gateway.post(
        "/api/v1/knowledge/SaveKnowledge",
        "alice",
        content=b'{"task": "' + b"x" * (5 * 1024 * 1024) + b'"}',
    )
    assert large.status_code == 413
    empty = gateway.post("/api/v1/knowledge/ListKnowledge", "alice")
    assert ok(empty) == {"knowledge": [], "next_page_token": ""}


def test_a_disconnected_stream_frees_its_watcher(start_hub: StartHub) -> None:
    """The server serves one WatchTriggers stream at a time here (others: 429): each of
    three streams in turn gets it only if the gateway cancelled the call of the client
    that left before it."""
    hub = start_hub(
        env={"KNOWHUB_COGNITION_MAX_WATCHERS": "1", "KNOWHUB_COGNITION_TRIGGER_POLL_SECONDS": "0.1"}
    )
    running = gateway_for(hub)
    statuses = []
    try:
        for n in range(3):
            deadline = time.monotonic() + 10
            while True:
                with running.client.stream(
                    "POST",
                    "/api/v1/cognition/WatchTriggers",
                    json={"group": "g", "consumer": f"c{n}"},
                    headers={"Authorization": "Bearer token-admin"},
                ) as response:
                    statuses.append(response.status_code)
                if statuses[-1] == 200:
                    break
                assert statuses[-1] == 429 and time.monotonic() < deadline, statuses
                time.sleep(0.1)
    finally:
        running.stop()
    assert statuses.count(200) == 3


def test_stopping_the_gateway_ends_open_streams(hub: Harness) -> None:
    running = gateway_for(hub)
    with running.client.stream(
        "POST",
        "/api/v1/cognition/WatchTriggers",
        json={"group": "g"},
        timeout=10,
        headers={"Authorization": "Bearer token-admin"},
    ) as response:
        assert response.status_code == 200
        stopper = threading.Thread(target=running.server.stop)
        stopper.start()
        assert list(response.iter_lines()) == []  # the stream ends (a hang: ReadTimeout)
    stopper.join()
    running.client.close()
