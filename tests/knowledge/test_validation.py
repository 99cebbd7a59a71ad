"""Every validation rule of the knowledge RPCs: INVALID_ARGUMENT naming the field, and
nothing changed.

Rules live in knowhub_server/knowledge/domain.py and
knowhub_server/common/base/validation.py. Inputs the SDK can express go through it; the
rest (invalid Timestamps, unknown enum numbers, raw fields the SDK fills in itself) go
through the generated stub.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub import KnowHub, Knowledge
from knowhub_contracts.v1 import knowledge_pb2 as pb
from knowhub_contracts.v1 import knowledge_pb2_grpc

from tests.support.harness import Harness
from tests.support.shared import bearer, failure, raw_knowledge, running_hub, visible_records

ALL_TYPES = ["user_profile", "strategy", "tool", "usecase", "definition", "plan"]
VALID = {
    "task": "log in with selenium",
    "content": "use undetected_chromedriver",
    "types": ["tool"],
}

Call = Callable[[KnowHub, str], object]
RawCall = Callable[[knowledge_pb2_grpc.KnowledgeServiceStub, str], object]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    with running_hub(tmp_path_factory.mktemp("validation")) as harness:
        yield harness


@pytest.fixture(scope="module")
def alice(server: Harness) -> KnowHub:
    return server.client("alice")


@pytest.fixture(scope="module")
def existing(alice: KnowHub) -> Knowledge:
    """A record of alice's, so update/delete reach their field checks on a real id."""
    return alice.knowledge.save(**VALID, tags={"k": "v"})


@pytest.fixture(scope="module")
def stub(server: Harness) -> Iterator[knowledge_pb2_grpc.KnowledgeServiceStub]:
    with raw_knowledge(server) as raw:
        yield raw


def assert_rejected(client: KnowHub, call: Callable[[], object], field: str) -> None:
    """The call fails with INVALID_ARGUMENT naming `field`, and nothing changed."""
    before = visible_records(client)
    code, message = failure(call)
    assert code == "INVALID_ARGUMENT", message
    assert message.startswith(f"{field}:") or message.startswith(f"{field} "), message
    assert visible_records(client) == before


def save(**overrides: Any) -> Call:
    return lambda kh, _id: kh.knowledge.save(**{**VALID, **overrides})


def timestamp(seconds: int, nanos: int = 0) -> Timestamp:
    return Timestamp(seconds=seconds, nanos=nanos)


BAD_TIMESTAMPS = [
    timestamp(-1),
    timestamp(253402300800),
    timestamp(1, nanos=1_000_000_000),
    timestamp(1, nanos=-5),
]

# ---- SaveKnowledge -------------------------------------------------------------------------

SAVE_CASES: list[tuple[Call, str]] = [
    (save(task=""), "task"),
    (save(task="   \n"), "task"),
    (save(task="x" * 2001), "task"),
    (save(task="a\x00b"), "task"),
    (save(content=""), "content"),
    (save(content="x" * 65_537), "content"),
    (save(content="a\x00b"), "content"),
    (save(types=[]), "types"),
    (save(types=["tool", "recipe"]), "types[1]"),
    (save(types=["Tool"]), "types[0]"),
    (save(types=["tool", "plan", "tool"]), "types[2]"),
    (save(types=[*ALL_TYPES, "tool"]), "types"),
    (save(tags={f"k{i}": "v" for i in range(33)}), "tags"),
    (save(tags={"": "v"}), "tags key"),
    (save(tags={"k" * 65: "v"}), "tags key"),
    (save(tags={"k": "v" * 1025}), "tags['k']"),
    (save(scopes=["org"]), "scopes[0]"),
    (save(scopes=["galaxy:far"]), "scopes[0]"),
    (save(scopes=["PUBLIC"]), "scopes[0]"),
    (save(scopes=["org:acme", "org:"]), "scopes[1]"),
    (save(scopes=["org:a b"]), "scopes[0]"),
    (save(scopes=["org:-acme"]), "scopes[0]"),
    (save(scopes=["org:acme", "org:acme"]), "scopes[1]"),
    (save(scopes=[f"user:u{i}" for i in range(17)]), "scopes"),
    (save(owner="team:t1"), "owner"),
    (save(owner="alice"), "owner"),
    (save(owner="agent:"), "owner"),
    (save(owner="public"), "owner"),
    (save(score=0), "score"),
    (save(score=6), "score"),
    (save(score=-3), "score"),
    (save(message_id="m" * 257), "message_id"),
    (save(resource_ids=["/code/abs"]), "resource_ids[0]"),
    (save(resource_ids=["code/ok", "Code/Upper"]), "resource_ids[1]"),
    (save(resource_ids=["code/../secret"]), "resource_ids[0]"),
    (save(resource_ids=["code//double"]), "resource_ids[0]"),
    (save(resource_ids=["code/trailing/"]), "resource_ids[0]"),
    (save(resource_ids=["x" * 257]), "resource_ids[0]"),
    (save(resource_ids=["code/a", "code/a"]), "resource_ids[1]"),
    (save(resource_ids=[f"code/r{i}" for i in range(33)]), "resource_ids"),
    (save(source_name="n" * 257), "source.name"),
    (save(source_category="c" * 65), "source.category"),
    (save(agent_id="a" * 257), "source.agent_id"),
    (save(agent_id="not valid!"), "source.agent_id"),  # would become owner agent:not valid!
    (save(agent_id="x:y:z"), "source.agent_id"),  # org:agent names another org's agent
    (save(agent_id="x:"), "source.agent_id"),
    (save(submitted_by="s" * 257), "source.submitted_by"),
    (save(urls=["ftp://example.com/file"]), "source.urls[0]"),
    (save(urls=["https://example.com", "not a url"]), "source.urls[1]"),
    (save(urls=["http://"]), "source.urls[0]"),
    (save(urls=["https://example.com/a b"]), "source.urls[0]"),
    (save(urls=["javascript:alert(1)"]), "source.urls[0]"),
    (save(urls=["https://example.com/" + "a" * 2048]), "source.urls[0]"),
    (save(urls=[f"https://example.com/{i}" for i in range(33)]), "source.urls"),
]


@pytest.mark.parametrize(
    ("call", "field"), SAVE_CASES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(SAVE_CASES)]
)
def test_save_rejects(alice: KnowHub, existing: Knowledge, call: Call, field: str) -> None:
    assert_rejected(alice, lambda: call(alice, existing.id), field)


def raw_save(**fields: Any) -> pb.SaveKnowledgeRequest:
    request = pb.SaveKnowledgeRequest(**VALID)
    for name, value in fields.items():
        getattr(request, name).CopyFrom(value)
    return request


RAW_SAVE_CASES: list[tuple[pb.SaveKnowledgeRequest, str]] = [
    *[(raw_save(source=pb.Source(timestamp=t)), "source.timestamp") for t in BAD_TIMESTAMPS],
    (raw_save(source=pb.Source(message_id="m" * 257)), "source.message_id"),
]


@pytest.mark.parametrize(("request_", "field"), RAW_SAVE_CASES)
def test_save_rejects_raw(
    alice: KnowHub,
    stub: knowledge_pb2_grpc.KnowledgeServiceStub,
    request_: pb.SaveKnowledgeRequest,
    field: str,
) -> None:
    assert_rejected(alice, lambda: stub.SaveKnowledge(request_, metadata=bearer("alice")), field)


def test_save_accepts_the_limits(alice: KnowHub) -> None:
    """The boundary values themselves are valid (so the limits above are the real ones)."""
    for i in range(32):
        alice.resources.save(f"code/r{i}", f"snippet {i}", "print()")
    saved = alice.knowledge.save(
        task="t" * 2000,
        content="c" * 65_536,
        types=ALL_TYPES,
        tags={f"k{i:02d}" + "k" * 61: "v" * 1024 for i in range(32)},
        scopes=["org:acme", "public"],
        score=5,
        message_id="m" * 256,
        resource_ids=[f"code/r{i}" for i in range(32)],
        source_name="n" * 256,
        source_category="c" * 64,
        urls=[f"https://example.com/{i}" for i in range(32)],
        submitted_by="s" * 256,
    )
    got = alice.knowledge.get(saved.id)
    assert len(got.task) == 2000 and len(got.content) == 65_536
    assert got.types == ALL_TYPES and len(got.tags) == 32 and len(got.resource_ids) == 32
    alice.knowledge.delete(saved.id)


# ---- BatchSaveKnowledge -------------------------------------------------------------------


def batch(*items: dict[str, Any]) -> Call:
    return lambda kh, _id: kh.knowledge.save_many([{**VALID, **item} for item in items])


BATCH_SAVE_CASES: list[tuple[Call, str]] = [
    (batch(), "requests"),
    (batch(*[{}] * 501), "requests"),
    (batch({}, {}, {"task": ""}), "requests[2].task"),
    (batch({}, {"types": ["tool", "bogus"]}), "requests[1].types[1]"),
    (batch({"scopes": ["nope"]}, {}), "requests[0].scopes[0]"),
    (batch({}, {"urls": ["gopher://x"]}), "requests[1].source.urls[0]"),
    (batch({}, {}, {}, {"score": 9}), "requests[3].score"),
    (batch({}, {"owner": "org:acme"}), "requests[1].owner"),
]


@pytest.mark.parametrize(
    ("call", "field"),
    BATCH_SAVE_CASES,
    ids=[f"{i}-{f}" for i, (_, f) in enumerate(BATCH_SAVE_CASES)],
)
def test_batch_save_rejects_and_writes_none(
    alice: KnowHub, existing: Knowledge, call: Call, field: str
) -> None:
    assert_rejected(alice, lambda: call(alice, existing.id), field)


def test_batch_save_rejects_a_bad_timestamp_in_any_item(
    alice: KnowHub, stub: knowledge_pb2_grpc.KnowledgeServiceStub
) -> None:
    request = pb.BatchSaveKnowledgeRequest(
        requests=[raw_save(), raw_save(), raw_save(source=pb.Source(timestamp=timestamp(-60)))]
    )
    assert_rejected(
        alice,
        lambda: stub.BatchSaveKnowledge(request, metadata=bearer("alice")),
        "requests[2].source.timestamp",
    )


def test_batch_save_rejects_an_unknown_view_before_saving(
    alice: KnowHub, stub: knowledge_pb2_grpc.KnowledgeServiceStub
) -> None:
    request = pb.BatchSaveKnowledgeRequest(requests=[raw_save(), raw_save()], view=7)
    assert_rejected(
        alice, lambda: stub.BatchSaveKnowledge(request, metadata=bearer("alice")), "view"
    )


def test_batch_save_of_500_is_accepted(alice: KnowHub) -> None:
    before = set(visible_records(alice))
    saved = alice.knowledge.save_many([{**VALID, "task": f"bulk {i}"} for i in range(500)])
    assert len(saved) == len({k.id for k in saved}) == 500
    assert set(visible_records(alice)) == before | {k.id for k in saved}
    for record in saved:
        alice.knowledge.delete(record.id)


# ---- Reads: Get, List, Search, ListKnowledgeVersions --------------------------------------

READ_CASES: list[tuple[Call, str]] = [
    (lambda kh, _id: kh.knowledge.get(""), "id"),
    (lambda kh, _id: kh.knowledge.get("k" * 257), "id"),
    (lambda kh, _id: kh.knowledge.versions(""), "id"),
    (lambda kh, _id: kh.knowledge.versions("v" * 257), "id"),
    (lambda kh, _id: kh.knowledge.list(limit=101), "page_size"),
    (lambda kh, _id: kh.knowledge.list(limit=-1), "page_size"),
    (lambda kh, _id: kh.knowledge.list(types=["bogus"]), "types[0]"),
    (lambda kh, _id: kh.knowledge.list(types=["tool", "tool"]), "types[1]"),
    (lambda kh, _id: kh.knowledge.list(scopes=["org:acme", "everyone"]), "scopes[1]"),
    (lambda kh, _id: kh.knowledge.list(page_token="not-a-token!"), "page_token"),
    (lambda kh, _id: kh.knowledge.list(page_token="eyJ2IjoxfQ"), "page_token"),
    (lambda kh, _id: kh.knowledge.search(""), "query"),
    (lambda kh, _id: kh.knowledge.search("  \t "), "query"),
    (lambda kh, _id: kh.knowledge.search("q" * 2001), "query"),
    (lambda kh, _id: kh.knowledge.search("selenium", top_k=0), "top_k"),
    (lambda kh, _id: kh.knowledge.search("selenium", top_k=101), "top_k"),
    (lambda kh, _id: kh.knowledge.search("selenium", min_score=0), "min_score"),
    (lambda kh, _id: kh.knowledge.search("selenium", min_score=6), "min_score"),
    (lambda kh, _id: kh.knowledge.search("selenium", types=["tool", "nope"]), "types[1]"),
]


@pytest.mark.parametrize(
    ("call", "field"), READ_CASES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(READ_CASES)]
)
def test_reads_reject(alice: KnowHub, existing: Knowledge, call: Call, field: str) -> None:
    assert_rejected(alice, lambda: call(alice, existing.id), field)


@pytest.mark.parametrize("order_by", [2, 7, -1])
def test_list_rejects_an_unknown_order(
    alice: KnowHub, stub: knowledge_pb2_grpc.KnowledgeServiceStub, order_by: int
) -> None:
    request = pb.ListKnowledgeRequest(order_by=order_by)  # type: ignore[arg-type]
    assert_rejected(
        alice, lambda: stub.ListKnowledge(request, metadata=bearer("alice")), "order_by"
    )


def test_read_limits_themselves_are_accepted(alice: KnowHub, existing: Knowledge) -> None:
    assert existing.id in {k.id for k in alice.knowledge.list(limit=100)}
    assert len(alice.knowledge.list(limit=1)) == 1
    hits = alice.knowledge.search("selenium " + "q" * 1991, top_k=100, min_score=1)
    assert existing.id in {h.knowledge.id for h in hits}
    assert alice.knowledge.search("selenium", top_k=1, min_score=5) == []


# ---- UpdateKnowledge, BatchUpdateKnowledge -------------------------------------------------


def update(**arguments: Any) -> Call:
    return lambda kh, knowledge_id: kh.knowledge.update(knowledge_id, **arguments)


UPDATE_CASES: list[tuple[Call, str]] = [
    (lambda kh, _id: kh.knowledge.update("", update_score=4), "id"),
    (lambda kh, _id: kh.knowledge.update("i" * 257, update_score=4), "id"),
    (update(), "add_helpful_case"),
    (update(evolve_feedback=""), "add_helpful_case"),
    (update(update_score=0), "update_score"),
    (update(update_score=6), "update_score"),
    (update(evolve_feedback="f" * 4001), "evolve_feedback"),
    (update(add_helpful_case={"task": "t" * 4001}), "add_helpful_case.task"),
    (update(add_helpful_case={"outcome": "o" * 4001}), "add_helpful_case.outcome"),
    (update(add_harmful_case={"reason": "r" * 4001}), "add_harmful_case.reason"),
    (update(add_harmful_case={"trace_id": "t" * 257}), "add_harmful_case.trace_id"),
    (update(add_helpful_case={"query_sequence": -1}), "add_helpful_case.query_sequence"),
    (update(add_helpful_case={"task": "ok"}, update_score=9), "update_score"),
    (update(update_score=4, request_id="r" * 257), "request_id"),
    (lambda kh, _id: kh.knowledge.batch_update([]), "feedback_list"),
    (
        lambda kh, knowledge_id: kh.knowledge.batch_update(
            [{"knowledge_id": knowledge_id, "is_helpful": True}] * 501
        ),
        "feedback_list",
    ),
]


@pytest.mark.parametrize(
    ("call", "field"), UPDATE_CASES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(UPDATE_CASES)]
)
def test_updates_reject(alice: KnowHub, existing: Knowledge, call: Call, field: str) -> None:
    assert_rejected(alice, lambda: call(alice, existing.id), field)


RAW_UPDATE_CASES: list[tuple[RawCall, str]] = [
    *[
        (
            lambda raw, knowledge_id, t=t: raw.UpdateKnowledge(
                pb.UpdateKnowledgeRequest(
                    id=knowledge_id, add_helpful_case=pb.Case(task="x", timestamp=t)
                ),
                metadata=bearer("alice"),
            ),
            "add_helpful_case.timestamp",
        )
        for t in BAD_TIMESTAMPS[:2]
    ],
    (
        lambda raw, knowledge_id: raw.UpdateKnowledge(
            pb.UpdateKnowledgeRequest(
                id=knowledge_id, add_harmful_case=pb.Case(timestamp=timestamp(-1))
            ),
            metadata=bearer("alice"),
        ),
        "add_harmful_case.timestamp",
    ),
]


@pytest.mark.parametrize(("call", "field"), RAW_UPDATE_CASES)
def test_updates_reject_raw(
    alice: KnowHub,
    existing: Knowledge,
    stub: knowledge_pb2_grpc.KnowledgeServiceStub,
    call: RawCall,
    field: str,
) -> None:
    assert_rejected(alice, lambda: call(stub, existing.id), field)


BATCH_ITEM_CASES: list[tuple[dict[str, Any], str]] = [
    ({"case": {"task": "t" * 4001}}, "feedback_list[1].case.task"),
    ({"case": {"reason": "r" * 4001}}, "feedback_list[1].case.reason"),
    ({"case": {"trace_id": "t" * 257}}, "feedback_list[1].case.trace_id"),
    ({"case": {"query_sequence": -2}}, "feedback_list[1].case.query_sequence"),
    ({"request_id": "r" * 257}, "feedback_list[1].request_id"),
    ({"knowledge_id": ""}, "feedback_list[1].knowledge_id"),
]


@pytest.mark.parametrize(("item", "field"), BATCH_ITEM_CASES, ids=[f for _, f in BATCH_ITEM_CASES])
def test_batch_update_reports_a_bad_item_and_applies_the_others(
    alice: KnowHub, existing: Knowledge, item: dict[str, Any], field: str
) -> None:
    before = alice.knowledge.get(existing.id)
    results = alice.knowledge.batch_update(
        [
            {
                "knowledge_id": existing.id,
                "is_helpful": True,
                "case": {"task": "fine", "trace_id": f"trace-{uuid.uuid4().hex}"},
            },
            {"knowledge_id": existing.id, "is_helpful": False, **item},
        ]
    )
    assert results[0].ok
    assert results[1].error is not None
    assert results[1].error["code"] == "INVALID_ARGUMENT"
    assert results[1].error["message"].startswith(f"{field}:"), results[1].error
    after = alice.knowledge.get(existing.id)
    assert (after.eval.helpful, after.eval.harmful) == (
        before.eval.helpful + 1,
        before.eval.harmful,
    )


def test_batch_update_reports_an_unreadable_timestamp_on_its_item(
    alice: KnowHub, existing: Knowledge, stub: knowledge_pb2_grpc.KnowledgeServiceStub
) -> None:
    before = alice.knowledge.get(existing.id)
    response = stub.BatchUpdateKnowledge(
        pb.BatchUpdateKnowledgeRequest(
            feedback_list=[
                pb.KnowledgeFeedback(
                    knowledge_id=existing.id,
                    is_helpful=True,
                    case=pb.Case(trace_id=f"trace-{uuid.uuid4().hex}"),
                ),
                pb.KnowledgeFeedback(
                    knowledge_id=existing.id,
                    is_helpful=False,
                    case=pb.Case(timestamp=timestamp(-1)),
                ),
            ]
        ),
        metadata=bearer("alice"),
    )
    assert response.results[0].HasField("knowledge")
    assert response.results[1].error.code == "INVALID_ARGUMENT"
    assert response.results[1].error.message.startswith("feedback_list[1].case.timestamp:")
    after = alice.knowledge.get(existing.id)
    assert (after.eval.helpful, after.eval.harmful) == (
        before.eval.helpful + 1,
        before.eval.harmful,
    )


# ---- validate_only (AIP-163) -------------------------------------------------------------


def test_validate_only_answers_the_record_a_save_would_make_and_writes_nothing(
    server: Harness, alice: KnowHub, stub: knowledge_pb2_grpc.KnowledgeServiceStub
) -> None:
    before = visible_records(alice)
    answer = stub.SaveKnowledge(
        pb.SaveKnowledgeRequest(**VALID, validate_only=True), metadata=bearer("alice")
    ).knowledge
    assert answer.id == ""
    assert (
        answer.task,
        list(answer.scopes),
        answer.owner,
        answer.source.agent_id,
        answer.source.category,
    ) == (VALID["task"], ["org:acme"], "agent:alice_bot", "alice_bot", "exp")
    assert visible_records(alice) == before


@pytest.mark.parametrize(
    ("request_fields", "code", "field"),
    [
        ({**VALID, "task": ""}, "INVALID_ARGUMENT", "task"),
        ({**VALID, "scopes": ["org:globex"]}, "PERMISSION_DENIED", "scopes[0]"),
        ({**VALID, "owner": "user:bob"}, "PERMISSION_DENIED", "owner"),
        ({**VALID, "resource_ids": ["code/none"]}, "INVALID_ARGUMENT", "resource_ids[0]"),
    ],
)
def test_validate_only_refuses_what_a_save_would(
    alice: KnowHub,
    stub: knowledge_pb2_grpc.KnowledgeServiceStub,
    request_fields: dict[str, Any],
    code: str,
    field: str,
) -> None:
    before = visible_records(alice)
    found, message = failure(
        lambda: stub.SaveKnowledge(
            pb.SaveKnowledgeRequest(**request_fields, validate_only=True), metadata=bearer("alice")
        )
    )
    assert (found, message.split(":")[0]) == (code, field)
    assert visible_records(alice) == before


def test_a_batch_cannot_validate_only(
    alice: KnowHub, stub: knowledge_pb2_grpc.KnowledgeServiceStub
) -> None:
    assert_rejected(
        alice,
        lambda: stub.BatchSaveKnowledge(
            pb.BatchSaveKnowledgeRequest(
                requests=[
                    pb.SaveKnowledgeRequest(**VALID),
                    pb.SaveKnowledgeRequest(**VALID, validate_only=True),
                ]
            ),
            metadata=bearer("alice"),
        ),
        "requests[1].validate_only",
    )


# ---- DeleteKnowledge, SlimKnowledge ---------------------------------------------------------

OTHER_CASES: list[tuple[Call, str]] = [
    (lambda kh, _id: kh.knowledge.delete(""), "id"),
    (lambda kh, _id: kh.knowledge.delete("d" * 257), "id"),
    (lambda kh, _id: kh.knowledge.slim(model="m" * 257), "model"),
    (lambda kh, _id: kh.knowledge.slim(model="m" * 257, dry_run=True), "model"),
]


@pytest.mark.parametrize(
    ("call", "field"), OTHER_CASES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(OTHER_CASES)]
)
def test_delete_and_slim_reject(
    alice: KnowHub, existing: Knowledge, call: Call, field: str
) -> None:
    assert_rejected(alice, lambda: call(alice, existing.id), field)


def test_the_record_survived_every_rejection(alice: KnowHub, existing: Knowledge) -> None:
    """The rejected updates above left alice's record as the batch items made it."""
    got = alice.knowledge.get(existing.id)
    assert (got.task, got.content, got.types, got.tags) == (
        existing.task,
        existing.content,
        existing.types,
        existing.tags,
    )
    assert got.eval.score == existing.eval.score
    assert got.eval.harmful == existing.eval.harmful == 0
    assert alice.knowledge.versions(existing.id) == []


def test_no_rejection_left_records_behind(
    server: Harness, alice: KnowHub, existing: Knowledge
) -> None:
    """Only `existing` remains: every rejected save wrote nothing, and the accepted ones
    above were deleted again."""
    assert set(visible_records(alice)) == {existing.id}
    assert set(visible_records(server.client("admin"))) == {existing.id}
