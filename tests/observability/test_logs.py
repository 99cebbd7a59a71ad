"""Log lines as KnowHub writes them: JSON records with the call's service, method, request
and trace ids (passed on to the services a call reaches), text lines for people, and no
secret in any record, whatever path logged it."""

from __future__ import annotations

import io
import json
import logging
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from knowhub import errors
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc, resource_pb2

from knowhub_server.common.storage.redis_store import EmbeddedRedis
from knowhub_server.resource.crypto import generate_key
from tests.conftest import StartHub
from tests.support.shared import bearer, failure

SECURE_BODY = "user=ops password=Hunter2-Correct-Horse-4711"
BOGUS_TOKEN = "bogus-token-7f3a9c2e11d4"
LLM_KEY = "sk-observability-test-0123456789abcdef"


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    """Every line written, each parsed as one JSON object."""
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def of_method(found: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The server's line on each `method` call (its code and time)."""
    return [
        r for r in found if r.get("method") == method and r["message"].startswith(f"rpc={method} ")
    ]


def test_json_records_carry_the_call_and_its_trace_id(
    start_hub: StartHub, json_logs: io.StringIO
) -> None:
    hub = start_hub()
    alice = hub.client("alice")
    alice.resources.save("docs/runbook", "runbook", "restart the service")
    channel = grpc.insecure_channel(hub.address)
    knowledge_pb2_grpc.KnowledgeServiceStub(channel).SaveKnowledge(
        knowledge_pb2.SaveKnowledgeRequest(
            task="restart", content="see the runbook", types=["tool"], resource_ids=["docs/runbook"]
        ),
        metadata=(*bearer("alice"), ("x-trace-id", "trace-obs-1"), ("x-request-id", "req-obs-1")),
        timeout=10,
    )
    channel.close()
    trace_id = f"trace-{uuid.uuid4().hex[:12]}"
    alice.cognition.append_events(
        trace_id,
        [
            {
                "type": "query",
                "sequence": 1,
                "goal_id": "g1",
                "query": "how to restart",
                "response": "",
                "source_ids": [],
                "sources": [],
            }
        ],
    )

    found = records(json_logs)
    assert found, "the server logged at DEBUG"
    for record in found:
        assert {"time", "level", "logger", "message", "service"} <= set(record)
        assert record["time"].endswith("Z")
    started = [r for r in found if r["logger"] == "knowhub_server.common.security.auth"]
    assert started and started[0]["service"] == "observability-test"  # outside any call
    assert "method" not in started[0] and "trace_id" not in started[0]

    [save] = of_method(found, "SaveKnowledge")
    assert (save["service"], save["trace_id"], save["request_id"]) == (
        "knowhub.v1.KnowledgeService",
        "trace-obs-1",
        "req-obs-1",
    )
    assert save["message"].startswith("rpc=SaveKnowledge code=OK")
    # The resource check the save made on the caller's behalf carries the same trace.
    [check] = of_method(found, "BatchGetResources")
    assert check["trace_id"] == "trace-obs-1" and check["request_id"] != "req-obs-1"
    [append] = of_method(found, "AppendEvents")
    assert append["trace_id"] == trace_id  # the request's own trace_id field
    [plain] = of_method(found, "SaveResource")
    assert "trace_id" not in plain and len(plain["request_id"]) == 16


def test_an_id_that_is_not_an_id_is_not_logged(start_hub: StartHub, json_logs: io.StringIO) -> None:
    hub = start_hub()
    channel = grpc.insecure_channel(hub.address)
    knowledge_pb2_grpc.KnowledgeServiceStub(channel).ListKnowledge(
        knowledge_pb2.ListKnowledgeRequest(),
        timeout=10,
        metadata=(*bearer("alice"), ("x-trace-id", "forged] ERROR fake line")),
    )
    channel.close()
    [listed] = of_method(records(json_logs), "ListKnowledge")
    assert "trace_id" not in listed


def test_text_lines_show_the_call_for_people(start_hub: StartHub, text_logs: io.StringIO) -> None:
    hub = start_hub()
    alice = hub.client("alice")
    trace_id = f"trace-{uuid.uuid4().hex[:12]}"
    with pytest.raises(errors.NotFound):
        alice.cognition.get_log(trace_id)
    [line] = [line for line in text_logs.getvalue().splitlines() if "rpc=GetLog" in line]
    assert " DEBUG knowhub.rpc: rpc=GetLog code=NOT_FOUND " in line
    assert line.endswith("]") and f"[GetLog trace={trace_id} request=" in line


def test_no_secret_reaches_the_logs_on_any_path(
    start_hub: StartHub, tmp_path: Path, json_logs: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    master_key = generate_key()
    monkeypatch.setenv("KNOWHUB_MASTER_KEY", master_key)
    redis_server = EmbeddedRedis(tmp_path / "redis").start()
    hub = start_hub(
        redis_url=redis_server.url,
        llm_base_url="http://127.0.0.1:9/v1",
        llm_api_key=LLM_KEY,
        llm_max_retries=0,
        llm_timeout_seconds=2,
    )
    alice, carol = hub.client("alice"), hub.client("carol")
    alice.resources.save("credentials/db", "db login", "ask ops", secure_body=SECURE_BODY)
    assert alice.resources.get("credentials/db", include_secure=True).secure_body == SECURE_BODY
    # Refusals the server logs: not allowed, too long, unknown token.
    failure(lambda: carol.resources.get("credentials/db", include_secure=True))
    failure(
        lambda: alice.resources.save(
            "credentials/db", "t", "b", secure_body=SECURE_BODY + "x" * 70_000
        )
    )
    channel = grpc.insecure_channel(hub.address)
    with pytest.raises(grpc.RpcError):
        knowledge_pb2_grpc.KnowledgeServiceStub(channel).ListKnowledge(
            knowledge_pb2.ListKnowledgeRequest(),
            timeout=10,
            metadata=(("authorization", f"Bearer {BOGUS_TOKEN}"),),
        )
    channel.close()
    # The LLM is unreachable: evolve fails and says why.
    knowledge = alice.knowledge.save(
        task="log in to the db", content="ask ops", types=["tool"], resource_ids=["credentials/db"]
    )
    failure(lambda: alice.knowledge.update(knowledge.id, evolve_feedback="name the user"))
    # Redis down: the audit record of a secret read cannot be written, so the read fails.
    redis_server.stop()
    failure(lambda: alice.resources.get("credentials/db", include_secure=True))
    # Careless lines a future change might add: the request, the header, a traceback.
    careless = logging.getLogger("knowhub.careless")
    careless.warning(
        "request %s", resource_pb2.SaveResourceRequest(id="credentials/db", secure_body=SECURE_BODY)
    )
    careless.warning("headers %s", [("authorization", f"Bearer {BOGUS_TOKEN}")])
    try:
        raise ValueError(f"bad key {master_key} for token-alice with {LLM_KEY}")
    except ValueError:
        careless.exception("startup check failed")

    text = json_logs.getvalue()
    for path in (
        "PERMISSION_DENIED",
        "INVALID_ARGUMENT",
        "UNAUTHENTICATED",
        "UNAVAILABLE",
        "audit log (Redis) cannot be written",
        "evolve failed",
        "Traceback",
    ):
        assert path in text, f"the {path} path was logged"
    for secret in (
        SECURE_BODY,
        "Hunter2-Correct-Horse-4711",
        BOGUS_TOKEN,
        master_key,
        "token-alice",
        "token-carol",
        LLM_KEY,
    ):
        assert secret not in text, f"{secret!r} reached the logs"
    assert text.count("[REDACTED]") >= 4
    # What merely names a secret stays readable.
    assert "secure_body: is 700" in text and "unknown bearer token" in text
    records(json_logs)  # and every line is still one JSON object
