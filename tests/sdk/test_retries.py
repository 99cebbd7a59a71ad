"""Client-side retries (knowhub.channels' retryPolicy) through a real gRPC server whose
KnowledgeService fails the first attempts of each call with UNAVAILABLE."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from knowhub import AsyncKnowHub, KnowHub, errors
from knowhub.channels import RETRY_POLICY, read_methods
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

RECORD = knowledge_pb2.Knowledge(id="knowledge-20260101-0123456789ab", task="t", content="c")


class FlakyKnowledge(knowledge_pb2_grpc.KnowledgeServiceServicer):
    """Answers each method UNAVAILABLE `failures` times, then for real; counts attempts
    and records gRPC's retry header of each."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.attempts: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _attempt(self, method: str, context: grpc.ServicerContext) -> None:
        previous = dict(context.invocation_metadata()).get("grpc-previous-rpc-attempts", "")
        with self._lock:
            seen = self.attempts.setdefault(method, [])
            seen.append(str(previous))
            failing = len(seen) <= self.failures
        if failing:
            context.abort(grpc.StatusCode.UNAVAILABLE, "restarting")

    def GetKnowledge(
        self, request: knowledge_pb2.GetKnowledgeRequest, context: grpc.ServicerContext
    ) -> knowledge_pb2.GetKnowledgeResponse:
        self._attempt("GetKnowledge", context)
        return knowledge_pb2.GetKnowledgeResponse(knowledge=RECORD)

    def SaveKnowledge(
        self, request: knowledge_pb2.SaveKnowledgeRequest, context: grpc.ServicerContext
    ) -> knowledge_pb2.SaveKnowledgeResponse:
        self._attempt("SaveKnowledge", context)
        return knowledge_pb2.SaveKnowledgeResponse(knowledge=RECORD)


def serve(failures: int) -> Iterator[tuple[str, FlakyKnowledge]]:
    servicer = FlakyKnowledge(failures)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", servicer
    finally:
        server.stop(None)


@pytest.fixture
def flaky() -> Iterator[tuple[str, FlakyKnowledge]]:
    """Two failures per method: the third attempt of a read succeeds."""
    yield from serve(failures=2)


@pytest.fixture
def down() -> Iterator[tuple[str, FlakyKnowledge]]:
    """Every attempt fails."""
    yield from serve(failures=1000)


def test_a_read_that_meets_unavailable_is_retried_until_it_succeeds(
    flaky: tuple[str, FlakyKnowledge],
) -> None:
    address, servicer = flaky
    with KnowHub(address, timeout=10) as kh:
        assert kh.knowledge.get(RECORD.id).content == "c"
    # gRPC numbers the retries in a header of each attempt.
    assert servicer.attempts["GetKnowledge"] == ["", "1", "2"]


def test_the_asyncio_client_retries_reads_the_same_way(flaky: tuple[str, FlakyKnowledge]) -> None:
    address, servicer = flaky

    async def read() -> str:
        async with AsyncKnowHub(address, timeout=10) as kh:
            return (await kh.knowledge.get(RECORD.id)).content

    assert asyncio.run(read()) == "c"
    assert servicer.attempts["GetKnowledge"] == ["", "1", "2"]


def test_a_write_is_not_retried(flaky: tuple[str, FlakyKnowledge]) -> None:
    address, servicer = flaky
    with KnowHub(address, timeout=10) as kh, pytest.raises(errors.Unavailable):
        kh.knowledge.save(task="t", content="c", types=["plan"], request_id="r-1")
    assert servicer.attempts["SaveKnowledge"] == [""]


def test_a_read_gives_up_unavailable_after_the_policys_attempts(
    down: tuple[str, FlakyKnowledge],
) -> None:
    address, servicer = down
    with KnowHub(address, timeout=10) as kh, pytest.raises(errors.Unavailable) as raised:
        kh.knowledge.get(RECORD.id)
    assert raised.value.message == "restarting"
    assert len(servicer.attempts["GetKnowledge"]) == RETRY_POLICY["maxAttempts"]


def test_reads_are_retried_and_writes_are_not() -> None:
    retried = {(m["service"].rsplit(".", 1)[1], m["method"]) for m in read_methods()}
    assert {
        ("KnowledgeService", "GetKnowledge"),
        ("KnowledgeService", "SearchKnowledge"),
        ("ResourceService", "BatchGetResources"),
        ("CognitionService", "ExportLog"),
        ("CognitionService", "PendingEvaluations"),
        ("DreamService", "SearchEvents"),
        ("DreamService", "GetMemoryDocument"),
    } <= retried
    writes = {
        "SaveKnowledge",
        "BatchSaveKnowledge",
        "UpdateKnowledge",
        "DeleteKnowledge",
        "SlimKnowledge",
        "SaveResource",
        "DestroyResource",
        "RotateMasterKey",
        "AppendEvents",
        "SignalTrigger",
        "AckTriggers",
        "SubmitEvaluation",
        "SavePendingExtraction",
        "ReviewExtraction",
        "CommitExtractions",
        "ImportLog",
        "ConsumeReflections",
        "Remember",
        "RestoreProfileRevision",
        "RetryFailedJob",
        "RunDream",
        "ScheduleDream",
        "DeleteSchedule",
        "WatchTriggers",
    }
    assert not writes & {method for _, method in retried}
