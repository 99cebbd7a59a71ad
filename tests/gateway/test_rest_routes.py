"""The REST knowledge, resource and review routes, end to end over HTTP."""

from __future__ import annotations

from typing import Any

from knowhub_contracts.v1 import cognition_pb2, knowledge_pb2, resource_pb2

from tests.gateway.conftest import Gateway

KNOWLEDGE_KEYS = set(knowledge_pb2.Knowledge.DESCRIPTOR.fields_by_name)
HIT_KEYS = KNOWLEDGE_KEYS | {
    "quality_score",
    "relevance",
    "unavailable_resources",
    "resources_unverified",
}


def save(gateway: Gateway, as_: str = "alice", **fields: Any) -> dict[str, Any]:
    body = {
        "task": "log in to site A with selenium",
        "content": "use undetected_chromedriver",
        "types": ["tool"],
        **fields,
    }
    response = gateway.post("/api/knowledge", as_, json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_save_returns_the_record_with_defaults(gateway: Gateway) -> None:
    record = save(
        gateway,
        tags={"domain": "crawling"},
        score=4,
        source={
            "name": "notes",
            "category": "exp",
            "urls": ["https://example.com"],
            "submitted_by": "alice@example.com",
            "message_id": "msg-1",
        },
    )
    assert set(record) == KNOWLEDGE_KEYS
    assert record["id"].startswith("knowledge-")
    assert record["owner"] == "agent:alice_bot"
    assert record["scopes"] == ["org:acme"]
    assert record["source"]["urls"] == ["https://example.com"]
    assert record["source"]["submitted_by"] == "alice@example.com"
    assert record["eval"]["score"] == 4
    assert (record["eval"]["helpful"], record["eval"]["harmful"]) == (1, 0)
    assert record["eval"]["confidence"] == 0.5
    assert record["created_at"].endswith("Z")
    fetched = gateway.rpc("knowledge", "GetKnowledge", {"id": record["id"]}, as_="carol")
    assert fetched.json()["knowledge"]["task"] == "log in to site A with selenium"


def test_save_refuses_bad_bodies_naming_the_field(gateway: Gateway) -> None:
    cases = {
        "task": {"content": "c", "types": ["tool"]},
        "score": {"task": "t", "content": "c", "types": ["tool"], "score": "high"},
        "colour": {"task": "t", "content": "c", "types": ["tool"], "colour": "red"},
        "types": {"task": "t", "content": "c", "types": ["nonsense"]},
    }
    for field, body in cases.items():
        response = gateway.post("/api/knowledge", "alice", json=body)
        assert response.status_code == 400, (field, response.text)
        assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
        assert field in response.json()["error"]["message"], (field, response.text)
    for raw, expected in ((b"{not json", "body"), (b"[1, 2]", "body"), (b"\xff\xfe", "body")):
        response = gateway.post("/api/knowledge", "alice", content=raw)
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith(expected)
    listed = gateway.get("/api/knowledge", "alice").json()
    assert listed["count"] == 0  # nothing was written


def test_search_ranks_by_quality_and_filters(gateway: Gateway) -> None:
    weak = save(gateway, task="selenium login for site A", score=3)
    strong = save(gateway, task="selenium login for site A, the reliable way", score=5)
    save(gateway, task="selenium login strategy", types=["strategy"], score=5)
    save(gateway, task="selenium login with a poor record", score=2)
    response = gateway.get(
        "/api/knowledge/search",
        "alice",
        params={"q": "selenium login site A", "top_k": 5, "min_score": 3, "types": "tool"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"results", "count", "selection"}
    assert body["selection"] == "recall"
    assert body["count"] == len(body["results"]) == 2
    assert [hit["id"] for hit in body["results"]] == [strong["id"], weak["id"]]
    for hit in body["results"]:
        assert set(hit) == HIT_KEYS
        e = hit["eval"]
        assert hit["quality_score"] == e["score"] + e["helpful"] - 2 * e["harmful"]
    both = gateway.get(
        "/api/knowledge/search?q=selenium+login&types=tool,strategy&top_k=10", "alice"
    ).json()
    assert both["count"] == 3
    assert gateway.get("/api/knowledge/search?q=selenium", "bob").json()["count"] == 0


def test_search_refuses_bad_query_parameters_naming_them(gateway: Gateway) -> None:
    cases = {
        "q": "",
        "top_k": "q=x&top_k=many",
        "min_score": "q=x&min_score=1.5",
        "limit": "q=x&limit=3",
        "top_k ": "q=x&top_k=1&top_k=2",
    }
    for field, query in cases.items():
        response = gateway.get(f"/api/knowledge/search?{query}", "alice")
        assert response.status_code == 400, (field, response.text)
        assert response.json()["error"]["message"].startswith(field.strip()), response.text
    response = gateway.get("/api/knowledge/search?q=x&top_k=0", "alice")
    assert response.status_code == 400
    assert "top_k" in response.json()["error"]["message"]
    response = gateway.get("/api/knowledge/search?q=x&top_k=99999999999", "alice")
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("top_k")


def test_update_counts_feedback_and_maps_refusals(gateway: Gateway) -> None:
    record = save(gateway)
    path = f"/api/knowledge/{record['id']}"
    response = gateway.put(
        path,
        "carol",
        json={
            "add_helpful_case": {
                "task": "crawl A",
                "outcome": "logged in",
                "timestamp": "2026-03-05T12:00:00Z",
            }
        },
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert set(updated) == KNOWLEDGE_KEYS
    assert updated["eval"]["helpful"] == 2
    assert updated["eval"]["score"] == 3
    not_owner = gateway.put(path, "carol", json={"update_score": 5})
    assert not_owner.status_code == 403
    assert not_owner.json()["error"]["message"].startswith("update_score: only the owner")
    assert gateway.put(path, "alice", json={"update_score": 5}).json()["eval"]["score"] == 5
    assert updated["eval"]["helpful_history"][-1]["outcome"] == "logged in"
    assert updated["eval"]["helpful_history"][-1]["timestamp"] == "2026-03-05T12:00:00Z"
    harmful = gateway.put(
        path,
        "alice",
        json={"add_harmful_case": {"task": "crawl B", "outcome": "blocked", "reason": "captcha"}},
    ).json()
    assert harmful["eval"]["harmful"] == 1

    no_llm = gateway.put(path, "alice", json={"evolve_feedback": "mention the delays"})
    assert no_llm.status_code == 400
    assert no_llm.json()["error"]["code"] == "FAILED_PRECONDITION"
    assert gateway.put(path, "bob", json={"update_score": 1}).status_code == 404
    assert (
        gateway.put(
            "/api/knowledge/knowledge-20260101-000000000000", "alice", json={"update_score": 1}
        ).status_code
        == 404
    )
    in_body = gateway.put(path, "alice", json={"id": record["id"], "update_score": 2})
    assert in_body.status_code == 400
    assert in_body.json()["error"]["message"].startswith("id")
    bad = gateway.put(path, "alice", json={"update_score": 9})
    assert bad.status_code == 400
    assert "update_score" in bad.json()["error"]["message"]
    after = gateway.rpc("knowledge", "GetKnowledge", {"id": record["id"]}, as_="alice").json()
    assert after["knowledge"]["eval"]["score"] == 5  # the refused calls changed nothing


def test_batch_update_reports_each_item(gateway: Gateway) -> None:
    first, second = save(gateway), save(gateway, task="another task")
    response = gateway.post(
        "/api/knowledge/batch_update",
        "alice",
        json={
            "feedback_list": [
                {
                    "knowledge_id": first["id"],
                    "is_helpful": True,
                    "case": {"task": "t", "outcome": "ok", "timestamp": "2026-03-05T12:00:00Z"},
                },
                {
                    "knowledge_id": second["id"],
                    "is_helpful": False,
                    "case": {"task": "t", "outcome": "failed"},
                },
                {"knowledge_id": "knowledge-20260101-000000000000", "is_helpful": True},
            ]
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["updated"] == 2
    results = {r["knowledge_id"]: r for r in body["results"]}
    assert results[first["id"]]["knowledge"]["eval"]["helpful"] == 2
    assert results[second["id"]]["knowledge"]["eval"]["harmful"] == 1
    assert results["knowledge-20260101-000000000000"]["error"]["code"] == "NOT_FOUND"
    assert "error" not in results[first["id"]]  # proto3 JSON leaves unset messages out

    missing = gateway.post(
        "/api/knowledge/batch_update",
        "alice",
        json={
            "feedback_list": [
                {"knowledge_id": first["id"], "is_helpful": True},
                {"knowledge_id": first["id"]},
            ]
        },
    )
    assert missing.status_code == 400
    assert missing.json()["error"]["message"].startswith("feedback_list[1].is_helpful")
    assert (
        gateway.post("/api/knowledge/batch_update", "alice", json={"feedback_list": []}).status_code
        == 400
    )
    again = gateway.rpc("knowledge", "GetKnowledge", {"id": first["id"]}, as_="alice").json()
    assert again["knowledge"]["eval"]["helpful"] == 2


def test_list_pages_and_filters(gateway: Gateway) -> None:
    saved = [save(gateway, task=f"task {n}") for n in range(3)]
    save(gateway, task="a strategy", types=["strategy"])
    save(gateway, task="bob's own", as_="bob")
    page = gateway.get("/api/knowledge?limit=2&types=tool", "alice").json()
    assert set(page) == {"items", "count", "next_page_token"}
    assert page["count"] == 2 and page["next_page_token"]
    assert all(set(item) == KNOWLEDGE_KEYS for item in page["items"])
    rest = gateway.get(
        "/api/knowledge",
        "alice",
        params={"limit": 2, "types": "tool", "page_token": page["next_page_token"]},
    ).json()
    ids = [k["id"] for k in page["items"] + rest["items"]]
    assert sorted(ids) == sorted(k["id"] for k in saved)
    assert gateway.get("/api/knowledge?scopes=org:globex", "alice").json()["count"] == 0
    assert gateway.get("/api/knowledge?scopes=org:acme&limit=10", "alice").json()["count"] == 4
    for query, field in (
        ("limit=ten", "limit"),
        ("order=random", "order"),
        ("sort=updated", "sort"),
    ):
        response = gateway.get(f"/api/knowledge?{query}", "alice")
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith(field)


def test_slim_dry_run_reports_groups(gateway: Gateway) -> None:
    first = save(gateway, task="the same task", content="the same content here")
    second = save(
        gateway, task="the same task", content="the same content here", allow_duplicate=True
    )
    response = gateway.post("/api/knowledge/slim", "alice", json={"dry_run": True})
    assert response.status_code == 200, response.text
    report = response.json()
    assert set(report) == {"groups", "examined", "dry_run"}
    assert report["dry_run"] is True
    [group] = report["groups"]
    assert {group["kept_id"], *group["removed_ids"]} == {first["id"], second["id"]}
    assert gateway.get("/api/knowledge", "alice").json()["count"] == 2
    assert gateway.post("/api/knowledge/slim", "alice", json={"dry_run": "yes"}).status_code == 400


def test_get_resource_by_path_like_id(gateway: Gateway) -> None:
    kh = gateway.hub.client("alice")
    kh.resources.save(
        "credentials/website_a",
        "site A account",
        "log in directly",
        secure_body="user@example.com / s3cret",
        content_type="credential",
    )
    path = "/api/resource/credentials/website_a"
    public = gateway.get(path, "carol")
    assert public.status_code == 200, public.text
    body = public.json()
    assert set(body) <= set(resource_pb2.Resource.DESCRIPTOR.fields_by_name)
    assert body["id"] == "credentials/website_a"
    assert body["content_type"] == "RESOURCE_CONTENT_TYPE_CREDENTIAL"
    assert body["has_secure_body"] is True and "secure_body" not in body
    secret = gateway.get(path + "?include_secure=true", "alice").json()
    assert secret["secure_body"] == "user@example.com / s3cret"
    assert gateway.get(path + "?include_secure=true", "carol").status_code == 403
    assert gateway.get(path, "bob").status_code == 404
    assert gateway.get("/api/resource/credentials/nothing", "alice").status_code == 404
    assert gateway.get(path + "?version=1", "alice").json()["version"] == 1
    bad = gateway.get(path + "?include_secure=perhaps", "alice")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("include_secure")


def test_review_extraction(gateway: Gateway) -> None:
    kh = gateway.hub.client("alice")
    saved = kh.cognition.save_pending(
        "trace-1",
        task="log in to site A",
        content="use the test account",
        types=["tool"],
        sequence=9,
    )
    extraction_id = saved.extraction.extraction_id
    path = f"/api/traces/trace-1/extractions/{extraction_id}/review"
    response = gateway.post(path, "alice", json={"decision": "approve"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) <= set(cognition_pb2.Extraction.DESCRIPTOR.fields_by_name)
    assert (body["extraction_id"], body["state"]) == (extraction_id, "approved")

    edited = gateway.post(
        path,
        "alice",
        json={
            "decision": "edit",
            "edited_payload": {
                "task": "log in to site A",
                "content": "use the test account, at most 100 a day",
                "types": ["tool", "usecase"],
            },
        },
    ).json()
    assert edited["state"] == "edited"
    assert edited["edited_payload"]["content"].endswith("100 a day")

    missing_payload = gateway.post(path, "alice", json={"decision": "edit"})
    assert missing_payload.status_code == 400
    assert "edited_payload" in missing_payload.json()["error"]["message"]
    assert gateway.post(path, "alice", json={"decision": "maybe"}).status_code == 400
    assert gateway.post(path, "bob", json={"decision": "discard"}).status_code in (403, 404)
    assert (
        gateway.post(
            "/api/traces/trace-1/extractions/pending-0000000000000000/review",
            "alice",
            json={"decision": "approve"},
        ).status_code
        == 404
    )
    in_body = gateway.post(path, "alice", json={"decision": "approve", "trace_id": "x"})
    assert in_body.status_code == 400
    assert in_body.json()["error"]["message"].startswith("trace_id")
    state = kh.cognition.list_extractions("trace-1")[0]
    assert state.state == "edited"  # the refused reviews changed nothing


def test_knowledge_is_edited_deleted_undeleted_and_a_subject_forgotten(gateway: Gateway) -> None:
    record = save(gateway, tags={"domain": "crawling"})
    again = gateway.post(
        "/api/knowledge",
        "alice",
        json={"task": record["task"], "content": record["content"], "types": ["tool"]},
    )
    assert again.status_code == 200 and again.json()["id"] == record["id"]

    path = f"/api/knowledge/{record['id']}"
    edited = gateway.request(
        "PATCH",
        f"{path}?update_mask=content,tags&change_note=typo",
        "alice",
        json={"content": "use undetected-chromedriver 3", "task": "ignored: outside the mask"},
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["content"] == "use undetected-chromedriver 3"
    assert edited.json()["tags"] == {} and edited.json()["task"] == record["task"]
    versions = gateway.get(f"{path}/versions", "alice").json()["versions"]
    assert [(v["reason"], v["feedback"], v["changed_fields"], v["content"]) for v in versions] == [
        ("edit", "typo", ["content", "tags"], record["content"])
    ]
    refused = gateway.request("PATCH", f"{path}?update_mask=owner", "alice", json={})
    assert refused.status_code == 400 and "update_mask" in refused.text
    assert gateway.request("PATCH", path, "carol", json={"content": "x"}).status_code == 403

    deleted = gateway.request("DELETE", path, "alice")
    assert deleted.status_code == 200 and deleted.json()["purge_time"].endswith("Z")
    assert (
        gateway.rpc("knowledge", "GetKnowledge", {"id": record["id"]}, as_="alice").status_code
        == 404
    )
    restored = gateway.post(f"{path}/undelete", "alice")
    assert restored.status_code == 200 and restored.json()["id"] == record["id"]

    assert gateway.post("/api/forget", "carol", json={"subject": "user:alice"}).status_code == 403
    forgotten = gateway.post("/api/forget", "admin", json={"subject": "agent:alice_bot"})
    assert forgotten.status_code == 200, forgotten.text
    services = {s["service"]: s["erased"] for s in forgotten.json()["services"]}
    assert services["knowledge"]["knowledge"] == 1
    assert set(services) == {"knowledge", "resource", "cognition", "dream"}
    assert (
        gateway.rpc("knowledge", "GetKnowledge", {"id": record["id"]}, as_="alice").status_code
        == 404
    )
