"""Fuzzing every RPC of the four services with requests built from their descriptors.

Each RPC of knowledge, resource, cognition and dream (found by walking the service
descriptors, so a new RPC is fuzzed without a change here) gets random requests — and
valid ones with one field broken — from random callers, over a real server with every
service. Whatever arrives, the answer is never UNKNOWN, INTERNAL, DATA_LOSS,
UNIMPLEMENTED or UNAVAILABLE, the server keeps answering, and a refused call changes
nothing that the read RPCs show (knowledge, resources, traces, extractions, schedules,
failed jobs, memos, memory documents).
"""

from __future__ import annotations

import base64
import collections
import json
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from knowhub_contracts.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

from tests.reliability.conftest import Report, Scale
from tests.reliability.protofuzz import MessageFuzzer
from tests.support.harness import PRINCIPALS, Harness, write_tokens_file
from tests.support.shared import running_hub

SERVICES = [
    service
    for module in (knowledge_pb2, resource_pb2, cognition_pb2, dream_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
]
METHODS = {
    f"{service.name}.{method.name}": method for service in SERVICES for method in service.methods
}

# Statuses no request may produce: a server bug, or a store the caller broke.
FORBIDDEN = {
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.DATA_LOSS,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.UNAVAILABLE,
}
CALL_TIMEOUT = 30.0
STREAM_SECONDS = 0.5
FUZZ_PRINCIPALS = {
    **PRINCIPALS,
    "eval": {"user_id": "evalbot", "org_id": "acme", "roles": ["evaluator"]},
    "dream": {"user_id": "dreamsvc", "org_id": "acme", "roles": ["dreamer", "evaluator"]},
}
# Who calls: mostly alice (the templates are valid for her), then everyone else, no token
# and an unknown one.
CALLERS = ["alice", "alice", "alice", "bob", "carol", "admin", "eval", "dream", None, "nobody"]
HUB_ENV = {
    "KNOWHUB_HISTORIAN_WORKERS": "0",
    "KNOWHUB_DREAM_WORKERS": "0",
    "KNOWHUB_DREAM_SCHEDULER_ENABLED": "false",
    "KNOWHUB_DREAM_SERVICE_TOKEN": "token-dream",
}
TRACE = "trace-fuzz-a"
BOB_TRACE = "trace-fuzz-b"
GROUP, MEMBER = "20002", "10001"


class Caller:
    """Calls any RPC by its descriptor with a principal's token."""

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 256 * 1024 * 1024)]
        )

    def close(self) -> None:
        self._channel.close()

    def call(
        self, method: MethodDescriptor, request: Message, principal: str | None
    ) -> tuple[grpc.StatusCode, str, list[Message]]:
        """The status, its details and the responses (streams: those before the end)."""
        path = f"/{method.containing_service.full_name}/{method.name}"
        response_class = GetMessageClass(method.output_type)
        metadata = (("authorization", f"Bearer token-{principal}"),) if principal else ()
        options = {
            "request_serializer": type(request).SerializeToString,
            "response_deserializer": response_class.FromString,
        }
        responses: list[Message] = []
        try:
            if method.server_streaming:
                stream = self._channel.unary_stream(path, **options)(
                    request, metadata=metadata, timeout=STREAM_SECONDS
                )
                responses.extend(stream)
            else:
                responses.append(
                    self._channel.unary_unary(path, **options)(
                        request, metadata=metadata, timeout=CALL_TIMEOUT
                    )
                )
        except grpc.RpcError as error:
            return error.code(), error.details() or "", responses
        return grpc.StatusCode.OK, "", responses

    def raw(self, path: str, streaming: bool) -> Any:
        """A callable sending bytes as they are."""
        make = self._channel.unary_stream if streaming else self._channel.unary_unary
        return make(path, request_serializer=None, response_deserializer=None)

    def ok(self, name: str, request: Mapping[str, Any], principal: str = "alice") -> Any:
        """A call that must succeed, from a dict: its response as a dict."""
        method = METHODS[name]
        message = json_format.ParseDict(request, GetMessageClass(method.input_type)())
        code, details, responses = self.call(method, message, principal)
        assert code == grpc.StatusCode.OK, f"{name}: {code.name} {details}"
        return json_format.MessageToDict(responses[0]) if responses else {}

    def attempt(self, name: str, request: Mapping[str, Any], principal: str = "alice") -> bool:
        method = METHODS[name]
        message = json_format.ParseDict(request, GetMessageClass(method.input_type)())
        return self.call(method, message, principal)[0] == grpc.StatusCode.OK


@dataclass
class Seeds:
    """What the hub holds for valid requests to refer to; `refresh` brings back what a
    fuzzed call deleted."""

    caller: Caller
    knowledge: dict[str, str] = field(default_factory=dict)  # name -> id
    resources: dict[str, str] = field(
        default_factory=lambda: {
            "alice": "code/fuzz/alpha",
            "bob": "credentials/fuzz/bob",
            "victim": "code/fuzz/victim",
        }
    )
    extraction: str = ""
    trigger: str = ""
    reflection_event: str = ""
    schedule: str = ""
    run: str = ""
    job: str = ""
    exported: str = ""
    forged_tokens: list[str] = field(default_factory=list)

    def create(self) -> Seeds:
        self.refresh()
        self._traces()
        self.trigger = self.caller.ok(
            "CognitionService.SignalTrigger", {"traceId": TRACE, "trigger": "goal_completion"}
        ).get("triggerId", "")
        self.exported = self.caller.ok("CognitionService.ExportLog", {"traceId": TRACE})["document"]
        self.job = self.caller.ok(
            "DreamService.Remember",
            {
                "memo": "explained asyncio",
                "observations": ["10001 likes green tea"],
                "context": {
                    "userId": MEMBER,
                    "groupId": GROUP,
                    "requestType": "REQUEST_TYPE_GROUP",
                },
            },
        )["jobId"]
        self.run = self.caller.ok(
            "DreamService.RunDream", {"agentId": "alice_bot", "traceIds": [TRACE]}
        )["run"]["runId"]
        self.forged_tokens = self._forged_tokens()
        return self

    def _forged_tokens(self) -> list[str]:
        """Page tokens of the listings the templates ask for, their cursors replaced by
        what the server never issues (NaN, infinities, numbers past 64 bits, deep
        nesting): a token is only base64 JSON, so anyone can write one."""
        listings = [
            ("KnowledgeService.ListKnowledge", {**LIST_TEMPLATES["ListKnowledge"], "pageSize": 1}),
            ("KnowledgeService.ListKnowledge", {"pageSize": 1}),
            ("CognitionService.ListTraces", {"pageSize": 1}),
            ("ResourceService.ListResources", {"pageSize": 1}),
        ]
        forged = []
        for name, request in listings:
            token = self.caller.ok(name, request).get("nextPageToken", "")
            if token:
                forged += [forge_token(token, cursor) for cursor in HOSTILE_CURSORS]
        assert forged, "no listing had a second page to forge a token of"
        return forged

    def _traces(self) -> None:
        knowledge_id = self.knowledge["alice"]
        appended = self.caller.ok(
            "CognitionService.AppendEvents",
            {
                "traceId": TRACE,
                "task": "log in to site A",
                "agentId": "alice_bot",
                "events": [
                    {"message": {"sequence": 1, "role": "user", "content": "log in to site A"}},
                    {
                        "query": {
                            "sequence": 1,
                            "query": "selenium login",
                            "sourceIds": [knowledge_id],
                            "sources": [{"id": knowledge_id, "task": "login"}],
                        }
                    },
                    {"memoryRead": {"memoryType": "working", "keyOrScope": "k", "stepIndex": 1}},
                    {"planEvolution": {"planVersion": 1, "diffSummary": "first plan"}},
                ],
            },
        )
        assert appended["eventIds"]
        reflected = self.caller.ok(
            "CognitionService.AppendEvents",
            {
                "traceId": TRACE,
                "events": [{"reflection": {"sequenceRange": [0, 1], "summary": "it went well"}}],
            },
            principal="dream",
        )
        self.reflection_event = reflected["eventIds"][0]
        self.caller.ok(
            "CognitionService.AppendEvents",
            {
                "traceId": BOB_TRACE,
                "events": [{"message": {"sequence": 1, "role": "user", "content": "hello"}}],
            },
            principal="bob",
        )

    def refresh(self) -> None:
        """Recreates the seeds a fuzzed call deleted, destroyed or used up."""
        owners = {
            "alice": ("alice", ["org:acme"]),
            "bob": ("bob", ["org:globex"]),
            "public": ("alice", ["public"]),
            "victim": ("alice", ["org:acme"]),
        }
        for name, (principal, scopes) in owners.items():
            known = self.knowledge.get(name)
            if known and self.caller.attempt(
                "KnowledgeService.GetKnowledge", {"id": known}, principal
            ):
                continue
            self.knowledge[name] = self.caller.ok(
                "KnowledgeService.SaveKnowledge",
                {
                    "task": f"log in to site A ({name})",
                    "content": f"use selenium, says {name}",
                    "types": ["tool"],
                    "scopes": scopes,
                    "tags": {"domain": "crawling"},
                },
                principal,
            )["knowledge"]["id"]
        for name, resource_id in self.resources.items():
            principal = "bob" if name == "bob" else "alice"
            self.caller.attempt("ResourceService.UndeleteResource", {"id": resource_id}, principal)
            if not self.caller.attempt(
                "ResourceService.GetResource", {"id": resource_id}, principal
            ):
                self.caller.ok(
                    "ResourceService.SaveResource",
                    {
                        "id": resource_id,
                        "title": f"{name} resource",
                        "body": "print('hi')",
                        "secureBody": "s3cret",
                        "contentType": "RESOURCE_CONTENT_TYPE_CODE",
                        "scopes": ["org:globex" if name == "bob" else "org:acme"],
                    },
                    principal,
                )
        schedules = self.caller.ok("DreamService.ListSchedules", {"agentId": "alice_bot"})
        if not schedules.get("schedules"):
            self.schedule = self.caller.ok(
                "DreamService.ScheduleDream", {"agentId": "alice_bot", "everyMinutes": 60}
            )["schedule"]["scheduleId"]
        self.extraction = self.caller.ok(
            "CognitionService.SavePendingExtraction",
            {
                "traceId": TRACE,
                "sequence": 1,
                "payload": {
                    "task": "log in to site A",
                    "content": "wait 2s",
                    "types": ["strategy"],
                },
            },
        )["extraction"]["extractionId"]

    def pools(self) -> tuple[dict[str, list[str]], list[str]]:
        """Plausible values by field name, and for any string field."""
        knowledge = list(self.knowledge.values())
        resources = list(self.resources.values())
        scopes = [
            "org:acme",
            "org:globex",
            "user:alice",
            "agent:alice_bot",
            "project:p1",
            "team:t1",
            "public",
            "user:bob",
            "user:root",
            "org:nowhere",
            "user:",
        ]
        traces = [TRACE, BOB_TRACE, "trace-fuzz-new"]
        pools: dict[str, list[str]] = {
            "id": knowledge + resources,
            "knowledge_id": knowledge,
            "source_ids": knowledge,
            "resource_ids": resources,
            "ids": resources,
            "resource_id": resources,
            "prefix": ["code", "code/fuzz", "credentials", "code/", "/"],
            "scopes": scopes,
            "scope": scopes,
            "owner": ["user:alice", "agent:alice_bot", "user:bob", "agent:x", "alice"],
            "types": [
                "tool",
                "strategy",
                "plan",
                "user_profile",
                "query",
                "message",
                "reflection",
                "memory_read",
            ],
            "trace_id": traces,
            "agent_id": ["alice_bot", "bob_bot", "ghost_bot"],
            "extraction_id": [self.extraction, "pending-0000000000000000"],
            "extraction_ids": [self.extraction],
            "decision": ["approve", "edit", "discard"],
            "status": ["helpful", "harmful", "neutral", "unused", "irrelevant"],
            "trigger": ["goal_completion", "compression", "task_completion"],
            "trigger_ids": [self.trigger, "0-0", "1-1"],
            "event_ids": [self.reflection_event],
            "role": ["system", "user", "assistant", "tool"],
            "memory_type": ["working", "long_term", "episodic"],
            "states": ["pending", "approved", "edited", "discarded", "committed"],
            "group": ["evaluators", "fuzzers"],
            "consumer": ["c1"],
            "user_id": [MEMBER, "alice"],
            "group_id": [GROUP],
            "sender_id": [MEMBER],
            "target_user_id": [MEMBER],
            "target_group_id": [GROUP],
            "entity_id": [MEMBER, GROUP],
            "job_id": [self.job],
            "run_id": [self.run, "dream-" + "0" * 32],
            "schedule_id": [self.schedule, "schedule-0000000000000000"],
            "cron": ["*/5 * * * *", "0 9 * * MON-FRI", "61 * * * *", "* * *"],
            "time_zone": ["Asia/Shanghai", "UTC", "Mars/Olympus"],
            "path": ["notes/a.md", "../etc/passwd", ".hidden"],
            "urls": ["https://example.com/a", "ftp://example.com", "javascript:alert(1)"],
            "page_token": ["", "AAAA", "eyJvZmZzZXQiOiAtMX0=", "not base64!", *self.forged_tokens],
            "document": [
                self.exported,
                json.dumps({"entries": [{"query": "q"}]}),
                json.dumps({"trace_id": "x", "events": [{"type": "nope"}]}),
                "{",
                "[]",
                *hostile_json(self.exported),
            ],
            "raw_text": [
                json.dumps(
                    {
                        "evaluations": [
                            {
                                "query_sequence": 1,
                                "assessments": [
                                    {"source_id": self.knowledge["alice"], "status": "neutral"}
                                ],
                            }
                        ]
                    }
                ),
                '```json\n{"evaluations": []}\n```',
                "{not json}",
                *hostile_json('{"evaluations": [{"query_sequence": 1, "assessments": []}]}'),
            ],
            "model": ["gpt-4o-mini", ""],
            "request_id": ["req-1", "req-2"],
        }
        general = ["", "alice", "x", *traces, *knowledge[:1], *resources[:1], "public", "org:acme"]
        return pools, general


# A cursor value the server never issues, in place of a real one.
HOSTILE_CURSORS = [
    float("nan"),
    float("inf"),
    -float("inf"),
    10**400,
    -(2**70),
    [[[[[]]]]],
    {"v": float("nan"), "ids": []},
    ["nan", float("nan")],
]
LIST_TEMPLATES = {
    "ListKnowledge": {
        "pageSize": 5,
        "types": ["tool"],
        "scopes": ["org:acme"],
        "orderBy": "KNOWLEDGE_ORDER_CONFIDENCE",
    }
}


def forge_token(token: str, hostile: Any) -> str:
    """The token with each number of its cursor (or the cursor itself) replaced."""
    data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))

    def replaced(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: replaced(v) for k, v in value.items()}
        if isinstance(value, list):
            return [replaced(v) for v in value]
        return hostile if isinstance(value, (int, float)) else value

    cursor = replaced(data["c"])
    data["c"] = cursor if cursor != data["c"] else hostile
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def hostile_json(document: str) -> list[str]:
    """A JSON document with NaN, infinities and huge numbers in place of its first number,
    and nested far too deep."""
    first_number = re.search(r"(?<=: )-?\d+", document)
    swapped = (
        [
            document[: first_number.start()] + bad + document[first_number.end() :]
            for bad in ("NaN", "Infinity", "-Infinity", "1e999", "9" * 400)
        ]
        if first_number
        else []
    )
    return [*swapped, "[" * 100_000 + "]" * 100_000, '{"a": ' * 5_000 + "1" + "}" * 5_000]


def templates(seeds: Seeds) -> dict[str, list[dict[str, Any]]]:
    """Valid requests (for alice) that the fuzzer breaks one field of."""
    mine, victim = seeds.knowledge["alice"], seeds.knowledge["victim"]
    resource = seeds.resources["alice"]
    save = {
        "task": "fuzz task",
        "content": "fuzz content",
        "types": ["tool"],
        "scopes": ["org:acme"],
        "tags": {"domain": "fuzz"},
        "score": 4,
        "source": {"name": "n", "urls": ["https://example.com"]},
        "resourceIds": [resource],
    }
    case = {"task": "t", "outcome": "ok", "traceId": TRACE, "querySequence": 1}
    payload = {"task": "t", "content": "c", "types": ["strategy"], "scopes": ["org:acme"]}
    group = {"userId": MEMBER, "groupId": GROUP, "requestType": "REQUEST_TYPE_GROUP"}
    profile = {"entityType": "ENTITY_TYPE_USER", "entityId": MEMBER}
    return {
        "SaveKnowledge": [save],
        "BatchSaveKnowledge": [{"requests": [save, save]}],
        "GetKnowledge": [{"id": mine}],
        "ListKnowledge": [LIST_TEMPLATES["ListKnowledge"]],
        "SearchKnowledge": [{"query": "selenium", "topK": 3, "minScore": 1, "types": ["tool"]}],
        "UpdateKnowledge": [
            {"id": mine, "addHelpfulCase": case, "updateScore": 4},
            {"id": mine, "addHarmfulCase": case, "requestId": "r1"},
            {"id": mine, "evolveFeedback": "shorter"},
        ],
        "BatchUpdateKnowledge": [
            {"feedbackList": [{"knowledgeId": mine, "isHelpful": True, "case": case}]}
        ],
        "DeleteKnowledge": [{"id": victim}],
        "SlimKnowledge": [{"dryRun": True}],
        "ListKnowledgeVersions": [{"id": mine}],
        "SaveResource": [
            {
                "id": "code/fuzz/new",
                "title": "t",
                "body": "b",
                "secureBody": "s",
                "contentType": "RESOURCE_CONTENT_TYPE_CODE",
                "metadata": {"language": "python"},
                "scopes": ["org:acme"],
                "expiresAt": "2030-01-01T00:00:00Z",
            },
            {"id": resource, "title": "t", "expectedVersion": "1"},
        ],
        "GetResource": [{"id": resource, "includeSecure": True, "version": "1"}],
        "BatchGetResources": [
            {"ids": [resource, seeds.resources["bob"]], "view": "RESOURCE_VIEW_BASIC"}
        ],
        "ListResources": [
            {
                "prefix": "code",
                "contentType": "RESOURCE_CONTENT_TYPE_CODE",
                "pageSize": 5,
                "showDeleted": True,
            }
        ],
        "SearchResources": [{"query": "resource", "topK": 3}],
        "DeleteResource": [{"id": seeds.resources["victim"]}],
        "UndeleteResource": [{"id": seeds.resources["victim"]}],
        "DestroyResource": [{"id": seeds.resources["victim"]}],
        "ListResourceVersions": [{"id": resource}],
        "ListAuditEvents": [{"pageSize": 10, "resourceId": resource}],
        "AppendEvents": [
            {
                "traceId": TRACE,
                "task": "t",
                "agentId": "alice_bot",
                "events": [
                    {"message": {"sequence": 5, "role": "user", "content": "hi"}},
                    {
                        "query": {
                            "sequence": 6,
                            "query": "q",
                            "sourceIds": [mine],
                            "sources": [{"id": mine, "task": "t"}],
                        }
                    },
                ],
            }
        ],
        "GetLog": [
            {
                "traceId": TRACE,
                "types": ["message"],
                "pageSize": 10,
                "since": "2020-01-01T00:00:00Z",
            }
        ],
        "ListTraces": [{"agentId": "alice_bot", "pageSize": 5, "owner": "user:alice"}],
        "PendingEvaluations": [{"traceId": TRACE}],
        "SignalTrigger": [{"traceId": TRACE, "trigger": "goal_completion"}],
        "WatchTriggers": [{"group": "fuzzers", "consumer": "c1"}],
        "AckTriggers": [{"group": "fuzzers", "triggerIds": [seeds.trigger or "0-1"]}],
        "GetEvaluationPrompt": [{"traceId": TRACE, "mission": "m", "goal": "g"}],
        "SubmitEvaluation": [
            {
                "traceId": TRACE,
                "evaluations": [
                    {
                        "querySequence": 1,
                        "assessments": [{"knowledgeId": mine, "status": "neutral"}],
                    }
                ],
            }
        ],
        "SavePendingExtraction": [{"traceId": TRACE, "sequence": 2, "payload": payload}],
        "ListExtractions": [{"traceId": TRACE, "states": ["pending"], "pageSize": 5}],
        "ReviewExtraction": [
            {
                "traceId": TRACE,
                "extractionId": seeds.extraction,
                "decision": "edit",
                "editedPayload": payload,
            },
            {"traceId": TRACE, "extractionId": seeds.extraction, "decision": "approve"},
        ],
        "CommitExtractions": [{"traceId": TRACE, "extractionIds": [seeds.extraction]}],
        "GetTraceView": [{"traceId": TRACE}],
        "ExportLog": [{"traceId": TRACE}],
        "ImportLog": [{"document": seeds.exported, "traceId": "trace-fuzz-import"}],
        "ConsumeReflections": [{"traceId": TRACE, "eventIds": [seeds.reflection_event]}],
        "Remember": [
            {
                "memo": "m",
                "observations": ["10001 likes tea"],
                "context": group,
                "scope": "org:acme",
            }
        ],
        "RecentMemos": [{"requestType": "REQUEST_TYPE_GROUP", "groupId": GROUP, "limit": 5}],
        "SearchEvents": [
            {
                "query": "tea",
                "targetGroupId": GROUP,
                "topK": 3,
                "timeFrom": "2020-01-01T00:00:00Z",
                "mode": "SEARCH_MODE_AUTO",
            }
        ],
        "GetProfile": [profile],
        "SearchProfiles": [{"query": "tea", "entityType": "ENTITY_TYPE_GROUP", "topK": 3}],
        "ListEvents": [{"targetGroupId": GROUP, "pageSize": 2, "timeFrom": "2020-01-01T00:00:00Z"}],
        "ListProfiles": [{"entityType": "ENTITY_TYPE_GROUP", "pageSize": 2}],
        "ListProfileRevisions": [profile],
        "RestoreProfileRevision": [{**profile, "revision": 1}],
        "ListFailedJobs": [{"pageSize": 5}],
        "RetryFailedJob": [{"jobId": seeds.job}],
        "RunDream": [
            {
                "agentId": "alice_bot",
                "traceIds": [TRACE],
                "phases": ["DREAM_PHASE_PER_TRACE_REFLECT"],
            }
        ],
        "GetDreamRun": [{"runId": seeds.run}],
        "ScheduleDream": [
            {"agentId": "alice_bot", "cron": "*/5 * * * *", "timeZone": "Asia/Shanghai"},
            {"everyMinutes": 60},
        ],
        "ListSchedules": [{"agentId": "alice_bot", "pageSize": 5}],
        "DeleteSchedule": [{"scheduleId": seeds.schedule}],
        "ListMemoryDocuments": [{"agentId": "alice_bot", "includeContent": True}],
        "GetMemoryDocument": [{"agentId": "alice_bot", "path": "notes/a.md"}],
    }


# ---- the stores as the read RPCs show them --------------------------------------------------

VIEWERS = list(FUZZ_PRINCIPALS)
LISTS = [  # (RPC, request, the response's repeated field, callers)
    ("KnowledgeService.ListKnowledge", {"pageSize": 100}, "knowledge", VIEWERS),
    (
        "ResourceService.ListResources",
        {"pageSize": 100, "showDeleted": True, "includeExpired": True},
        "resources",
        VIEWERS,
    ),
    ("CognitionService.ListTraces", {"pageSize": 100}, "traces", ["admin"]),
    ("CognitionService.ListExtractions", {"pageSize": 100}, "extractions", ["admin"]),
    ("DreamService.ListSchedules", {"pageSize": 100}, "schedules", ["admin"]),
    ("DreamService.ListFailedJobs", {"pageSize": 100}, "jobs", ["admin"]),
    (
        "DreamService.ListMemoryDocuments",
        {"agentId": "alice_bot", "pageSize": 100},
        "documents",
        ["admin"],
    ),
    (
        "DreamService.RecentMemos",
        {"requestType": "REQUEST_TYPE_GROUP", "groupId": GROUP, "limit": 100},
        "memos",
        ["alice"],
    ),
]


def snapshot(caller: Caller) -> dict[str, list[Any]]:
    """Everything the read RPCs show, by list and caller."""
    state: dict[str, list[Any]] = {}
    for name, request, key, viewers in LISTS:
        for viewer in viewers:
            items: list[Any] = []
            page = dict(request)
            while True:
                response = caller.ok(name, page, viewer)
                items += [_stable(item) for item in response.get(key, [])]
                if not response.get("nextPageToken"):
                    break
                page["pageToken"] = response["nextPageToken"]
            state[f"{name} as {viewer}"] = items
    return state


def _stable(item: dict[str, Any]) -> dict[str, Any]:
    item.pop("expired", None)  # computed at read time: a resource may expire between reads
    return item


def changes(before: dict[str, list[Any]], after: dict[str, list[Any]]) -> list[str]:
    return [name for name in before if before[name] != after.get(name)]


# ---- the test -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_hub(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Harness]:
    directory: Path = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as env:
        for name, value in HUB_ENV.items():
            env.setenv(name, value)
        with running_hub(
            directory,
            tokens=write_tokens_file(directory, FUZZ_PRINCIPALS),
            redis_url=redis_url,
            redis_prefix=f"fuzz-{uuid.uuid4().hex[:12]}:",
        ) as harness:
            yield harness


@pytest.fixture(scope="module")
def caller(fuzz_hub: Harness) -> Iterator[Caller]:
    client = Caller(fuzz_hub.address)
    yield client
    client.close()


@pytest.fixture(scope="module")
def seeds(caller: Caller) -> Seeds:
    return Seeds(caller).create()


@pytest.fixture(scope="module")
def outcomes() -> collections.Counter[str]:
    return collections.Counter()


def test_every_rpc_is_fuzzed() -> None:
    """The walk finds every RPC of the four services (a new one joins automatically)."""
    assert len(SERVICES) == 4
    assert {
        "KnowledgeService.SaveKnowledge",
        "ResourceService.RotateMasterKey",
        "CognitionService.WatchTriggers",
        "DreamService.GetMemoryDocument",
    } <= set(METHODS)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_fuzz_rpc(
    name: str,
    caller: Caller,
    seeds: Seeds,
    scale: Scale,
    figures: Report,
    outcomes: collections.Counter[str],
) -> None:
    method = METHODS[name]
    seeds.refresh()
    pools, general = seeds.pools()
    fuzzer = MessageFuzzer(pools, general)
    valid = templates(seeds).get(method.name, [])
    requests = fuzzer.messages(method.input_type)
    if valid:
        requests = st.one_of(requests, fuzzer.mutated(method.input_type, valid))
    state = {"before": snapshot(caller)}
    seen: collections.Counter[str] = collections.Counter()

    @settings(
        max_examples=int(scale.pick(10, 250)),
        deadline=None,
        derandomize=not scale.full,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests, principal=st.sampled_from(CALLERS))
    def fuzz(request: Message, principal: str | None) -> None:
        code, details, _ = caller.call(method, request, principal)
        seen[code.name] += 1
        hung = code == grpc.StatusCode.DEADLINE_EXCEEDED and not method.server_streaming
        assert code not in FORBIDDEN and not hung, (
            f"{name} as {principal}: {code.name} {details}\nrequest: {request}"[:4000]
        )
        after = snapshot(caller)  # also proves the server still answers
        if code not in (grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED):
            changed = changes(state["before"], after)
            assert not changed, (
                f"{name} as {principal} was refused ({code.name}: "
                f"{details}) but changed {changed}\nrequest: {request}"[:4000]
            )
        state["before"] = after

    fuzz()
    outcomes.update(seen)
    figures(
        f"{sum(seen.values())} calls: "
        + ", ".join(f"{code} {count}" for code, count in seen.most_common())
    )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_an_undecodable_request_is_invalid_argument(
    name: str, caller: Caller, seeds: Seeds
) -> None:
    """Bytes that are no message of the method (cut off, or nested past protobuf's depth
    limit) are the caller's mistake, not the server's."""
    method = METHODS[name]
    path = f"/{method.containing_service.full_name}/{method.name}"
    nested = b"x"
    for _ in range(300):  # a message field (here 1) inside itself, 300 deep
        nested = b"\x0a" + _varint(len(nested)) + nested
    for raw in (b"\xff\xff\xff\xff", b"\x0a\x05ab", nested):
        call = caller.raw(path, method.server_streaming)
        try:
            result = call(
                raw, metadata=(("authorization", "Bearer token-alice"),), timeout=CALL_TIMEOUT
            )
            if method.server_streaming:
                list(result)
            code = grpc.StatusCode.OK
        except grpc.RpcError as error:
            code = error.code()
        # nesting in a field that is no message is read as unknown bytes: that may pass
        assert code not in FORBIDDEN, f"{name}: {code.name} for {raw[:8]!r}"


def _varint(number: int) -> bytes:
    out = b""
    while number > 0x7F:
        out += bytes([number & 0x7F | 0x80])
        number >>= 7
    return out + bytes([number])


def test_forged_page_tokens_and_hostile_json_are_invalid_argument(
    caller: Caller, seeds: Seeds
) -> None:
    """Every forged token on every listing, every hostile document and evaluation answer:
    INVALID_ARGUMENT (or, for an evaluation answer that is no JSON at all, an OK that says
    so), answered at once (a NaN cursor once panicked the engine, and the call never
    answered)."""
    listings = {
        "KnowledgeService.ListKnowledge": [LIST_TEMPLATES["ListKnowledge"], {}],
        "CognitionService.ListTraces": [{}],
        "ResourceService.ListResources": [{}],
        "DreamService.ListEvents": [{}],
        "DreamService.ListProfiles": [{}],
    }
    for name, requests in listings.items():
        for request in requests:
            for token in seeds.forged_tokens:
                method = METHODS[name]
                message = json_format.ParseDict(
                    {**request, "pageToken": token}, GetMessageClass(method.input_type)()
                )
                code, details, _ = caller.call(method, message, "alice")
                assert code == grpc.StatusCode.INVALID_ARGUMENT, (name, token, details)
                assert details.startswith("page_token:"), details
    for name, text_field, base, extra in (
        (
            "CognitionService.ImportLog",
            "document",
            seeds.exported,
            {"traceId": "trace-fuzz-hostile"},
        ),
        (
            "CognitionService.SubmitEvaluation",
            "rawText",
            '{"evaluations": [{"query_sequence": 1, "assessments": []}]}',
            {"traceId": TRACE},
        ),
    ):
        for text in hostile_json(base):
            method = METHODS[name]
            message = json_format.ParseDict(
                {**extra, text_field: text}, GetMessageClass(method.input_type)()
            )
            code, details, responses = caller.call(method, message, "alice")
            if code == grpc.StatusCode.OK and name.endswith("SubmitEvaluation"):
                # an answer that is no JSON never interrupts: logged, evaluated nothing
                assert responses[0].parse_failed and not responses[0].outcomes, text[:80]
                continue
            assert code == grpc.StatusCode.INVALID_ARGUMENT, (name, text[:80], details)
