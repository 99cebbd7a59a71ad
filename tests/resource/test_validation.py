"""Every validation rule of the resource RPCs: INVALID_ARGUMENT naming the field, and
nothing changed (no resource, no version, no audit record).

Rules live in knowhub_server/resource/domain.py and
knowhub_server/common/base/validation.py. Inputs the SDK can express go through it; the
rest (bad Timestamps, unknown enum numbers, metadata the SDK cannot build) go through
the generated stub.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub import KnowHub
from knowhub_contracts.v1 import resource_pb2 as pb
from knowhub_contracts.v1 import resource_pb2_grpc

from knowhub_server.common.storage.redis_store import connect
from tests.resource.conftest import Principals
from tests.resource.support import CREDENTIAL, everything
from tests.support.harness import Harness
from tests.support.shared import bearer, failure

EXISTING = "credentials/existing"
Call = Callable[[KnowHub], object]
RawCall = Callable[[resource_pb2_grpc.ResourceServiceStub], object]


@pytest.fixture(scope="module")
def alice(clients: Principals) -> KnowHub:
    clients["alice"].resources.save(EXISTING, **CREDENTIAL, secure_body="pw")
    return clients["alice"]


@pytest.fixture(scope="module")
def stub(server: Harness) -> Iterator[resource_pb2_grpc.ResourceServiceStub]:
    channel = grpc.insecure_channel(server.address)
    yield resource_pb2_grpc.ResourceServiceStub(channel)
    channel.close()


def audit_length(server: Harness, module_redis: dict[str, str]) -> int:
    return connect(module_redis["redis_url"]).xlen(f"{module_redis['redis_prefix']}audit")


def assert_rejected(
    server: Harness,
    module_redis: dict[str, str],
    client: KnowHub,
    call: Callable[[], object],
    field: str,
) -> None:
    """The call fails with INVALID_ARGUMENT naming `field`, and nothing changed."""
    before, audited = everything(client), audit_length(server, module_redis)
    code, message = failure(call)
    assert code == "INVALID_ARGUMENT", message
    assert message.startswith(f"{field}:") or message.startswith(f"{field} "), message
    assert everything(client) == before
    assert audit_length(server, module_redis) == audited


def save(**overrides: Any) -> Call:
    fields = {"id": "code/new", "title": "t", "body": "b", **overrides}
    return lambda kh: kh.resources.save(**fields)


SAVE_CASES: list[tuple[Call, str]] = [
    (save(id=""), "id"),
    (save(id="/code/abs"), "id"),
    (save(id="code/abs/"), "id"),
    (save(id="Code/upper"), "id"),
    (save(id="code//double"), "id"),
    (save(id="code/../up"), "id"),
    (save(id=".."), "id"),
    (save(id="code/white space"), "id"),
    (save(id="code/ünï"), "id"),
    (save(id="code@1"), "id"),
    (save(id="c" * 257), "id"),
    (save(title=""), "title"),
    (save(title="  \n"), "title"),
    (save(title="t" * 513), "title"),
    (save(title="a\x00b"), "title"),
    (save(body="b" * 262_145), "body"),
    (save(body="a\x00b"), "body"),
    (save(secure_body="s" * 65_537), "secure_body"),
    (save(secure_body="a\x00b"), "secure_body"),
    (save(metadata={"blob": "x" * 16_400}), "metadata"),
    (save(metadata={"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}}), "metadata"),
    (save(metadata={"expires_at": "tomorrow"}), "metadata.expires_at"),
    (save(metadata={"expires_at": True}), "metadata.expires_at"),
    (save(metadata={"expires_at": {"at": 1}}), "metadata.expires_at"),
    (save(metadata={"expires_at": -5}), "metadata.expires_at"),
    (save(metadata={"expires_at": "10000-01-01T00:00:00Z"}), "metadata.expires_at"),
    (
        save(metadata={"expires_at": "2030-01-01T00:00:00Z"}, expires_at="2031-01-01T00:00:00Z"),
        "expires_at",
    ),
    (save(scopes=["org"]), "scopes[0]"),
    (save(scopes=["org:acme", "galaxy:far"]), "scopes[1]"),
    (save(scopes=["org:acme", "org:acme"]), "scopes[1]"),
    (save(scopes=[f"user:u{i}" for i in range(17)]), "scopes"),
    (save(owner="team:t1"), "owner"),
    (save(owner="alice"), "owner"),
    (save(expected_version=-1), "expected_version"),
]


@pytest.mark.parametrize(
    ("call", "field"), SAVE_CASES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(SAVE_CASES)]
)
def test_save_rejects(
    server: Harness, module_redis: dict[str, str], alice: KnowHub, call: Call, field: str
) -> None:
    assert_rejected(server, module_redis, alice, lambda: call(alice), field)


def test_the_sdk_refuses_an_unknown_content_type(alice: KnowHub) -> None:
    with pytest.raises(ValueError, match="content_type"):
        alice.resources.save("code/new", "t", "b", content_type="binary")


def raw_save(**fields: Any) -> pb.SaveResourceRequest:
    request = pb.SaveResourceRequest(id="code/new", title="t")
    for name, value in fields.items():
        if isinstance(value, int):
            setattr(request, name, value)
        else:
            getattr(request, name).CopyFrom(value)
    return request


def struct(values: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(values)
    return message


RAW_SAVE_CASES: list[tuple[pb.SaveResourceRequest, str]] = [
    (raw_save(content_type=9), "content_type"),
    (raw_save(expires_at=Timestamp(seconds=-1)), "expires_at"),
    (raw_save(expires_at=Timestamp(seconds=253402300800)), "expires_at"),
    (raw_save(expires_at=Timestamp(seconds=1, nanos=-5)), "expires_at"),
    (raw_save(metadata=struct({"n": float("nan")})), "metadata"),
    (raw_save(metadata=struct({"n": float("inf")})), "metadata"),
    (raw_save(metadata=struct({"expires_at": float("nan")})), "metadata"),
]


@pytest.mark.parametrize(("request_", "field"), RAW_SAVE_CASES)
def test_save_rejects_raw(
    server: Harness,
    module_redis: dict[str, str],
    alice: KnowHub,
    stub: resource_pb2_grpc.ResourceServiceStub,
    request_: pb.SaveResourceRequest,
    field: str,
) -> None:
    assert_rejected(
        server,
        module_redis,
        alice,
        lambda: stub.SaveResource(request_, metadata=bearer("alice")),
        field,
    )


def test_save_accepts_the_limits(alice: KnowHub) -> None:
    """The boundary values themselves are valid (so the limits above are the real ones)."""
    deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}  # 8 levels
    resource_id = "x" * 200 + "/" + "y-._" * 13 + "z" * 3
    assert len(resource_id) == 256
    saved = alice.resources.save(
        resource_id,
        "t" * 512,
        "b" * 262_144,
        secure_body="s" * 65_536,
        metadata={**deep, "pad": "p" * 16_000},
        content_type="cookie",
        scopes=["user:alice", "org:acme", "public"],
        owner="user:alice",
        expires_at="9999-12-31T23:59:59Z",
    )
    got = alice.resources.get(resource_id, include_secure=True)
    assert (len(got.title), len(got.body), len(got.secure_body or "")) == (512, 262_144, 65_536)
    assert got.metadata["a"] == deep["a"] and saved.content_type == "cookie"
    alice.resources.destroy(resource_id)


READ_CASES: list[tuple[Call, str]] = [
    (lambda kh: kh.resources.get("Bad/Id"), "id"),
    (lambda kh: kh.resources.get(""), "id"),
    (lambda kh: kh.resources.get(EXISTING, version=-1), "version"),
    (lambda kh: kh.resources.get_many([]), "ids"),
    (lambda kh: kh.resources.get_many([f"code/r{i}" for i in range(101)]), "ids"),
    (lambda kh: kh.resources.get_many([EXISTING, "/bad"]), "ids[1]"),
    (lambda kh: kh.resources.get_many([EXISTING, EXISTING]), "ids[1]"),
    (lambda kh: kh.resources.list(prefix="/code"), "prefix"),
    (lambda kh: kh.resources.list(prefix="code//x"), "prefix"),
    (lambda kh: kh.resources.list(prefix="code/.."), "prefix"),
    (lambda kh: kh.resources.list(limit=101), "page_size"),
    (lambda kh: kh.resources.list(limit=-1), "page_size"),
    (lambda kh: kh.resources.list(page_token="garbage!"), "page_token"),
    (lambda kh: kh.resources.search(""), "query"),
    (lambda kh: kh.resources.search("q" * 2001), "query"),
    (lambda kh: kh.resources.search("q", top_k=0), "top_k"),
    (lambda kh: kh.resources.search("q", top_k=101), "top_k"),
    (lambda kh: kh.resources.versions("Bad"), "id"),
]
CHANGE_CASES: list[tuple[Call, str]] = [
    (lambda kh: kh.resources.delete("/bad"), "id"),
    (lambda kh: kh.resources.undelete("bad/"), "id"),
    (lambda kh: kh.resources.destroy(""), "id"),
]


@pytest.mark.parametrize(
    ("call", "field"),
    READ_CASES + CHANGE_CASES,
    ids=[f"{i}-{f}" for i, (_, f) in enumerate(READ_CASES + CHANGE_CASES)],
)
def test_reads_and_changes_reject(
    server: Harness, module_redis: dict[str, str], alice: KnowHub, call: Call, field: str
) -> None:
    assert_rejected(server, module_redis, alice, lambda: call(alice), field)


def test_a_page_token_belongs_to_its_filters(
    server: Harness, module_redis: dict[str, str], alice: KnowHub
) -> None:
    for i in range(3):
        alice.resources.save(f"notes/page{i}", "note", "n")
    page = alice.resources.list(prefix="notes", limit=1)
    assert page.next_page_token
    assert_rejected(
        server,
        module_redis,
        alice,
        lambda: alice.resources.list(prefix="code", limit=1, page_token=page.next_page_token),
        "page_token",
    )
    assert_rejected(
        server,
        module_redis,
        alice,
        lambda: server.client("bob").resources.list(
            prefix="notes", limit=1, page_token=page.next_page_token
        ),
        "page_token",
    )


RAW_READ_CASES: list[tuple[RawCall, str]] = [
    (
        lambda s: s.ListResources(
            pb.ListResourcesRequest(content_type=7), metadata=bearer("alice")
        ),
        "content_type",
    ),
    (
        lambda s: s.SearchResources(
            pb.SearchResourcesRequest(query="q", content_type=-2), metadata=bearer("alice")
        ),
        "content_type",
    ),
    (
        lambda s: s.BatchGetResources(
            pb.BatchGetResourcesRequest(ids=[EXISTING], view=5), metadata=bearer("alice")
        ),
        "view",
    ),
]


@pytest.mark.parametrize(("call", "field"), RAW_READ_CASES)
def test_raw_reads_reject(
    server: Harness,
    module_redis: dict[str, str],
    alice: KnowHub,
    stub: resource_pb2_grpc.ResourceServiceStub,
    call: RawCall,
    field: str,
) -> None:
    assert_rejected(server, module_redis, alice, lambda: call(stub), field)


AUDIT_CASES: list[tuple[Call, str]] = [
    (lambda kh: kh.resources.audit_events(limit=1001), "page_size"),
    (lambda kh: kh.resources.audit_events(limit=-3), "page_size"),
    (lambda kh: kh.resources.audit_events(page_token="12-x"), "page_token"),
    (lambda kh: kh.resources.audit_events(resource_id="/x"), "resource_id"),
]


@pytest.mark.parametrize(("call", "field"), AUDIT_CASES)
def test_audit_listing_rejects(
    server: Harness, module_redis: dict[str, str], clients: Principals, call: Call, field: str
) -> None:
    admin = clients["admin"]
    assert_rejected(server, module_redis, admin, lambda: call(admin), field)
