"""gRPC face of the dream service: one gRPC service (DreamService) over two subsystems,
the memory (`memory/`: remember, the historian, events and profiles) and dream runs
(`runs/`: reflection, integration, schedules and the server-side evaluator)."""

from __future__ import annotations

from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub_server.common.runtime.rpc import unary
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.dream.memory.operations import MemoryOperations
from knowhub_server.dream.memory.servicer import MemoryServicer
from knowhub_server.dream.runs.operations import DreamOperations
from knowhub_server.dream.runs.servicer import RunsServicer


class DreamServicer(MemoryServicer, RunsServicer, dream_pb2_grpc.DreamServiceServicer):
    def __init__(
        self, authenticator: Authenticator, memory: MemoryOperations, dreams: DreamOperations
    ) -> None:
        self.authenticator = authenticator
        self._memory = memory
        self._dreams = dreams

    @unary
    def ForgetDreamSubject(
        self, request: dream_pb2.ForgetDreamSubjectRequest, principal: Principal
    ) -> dream_pb2.ForgetDreamSubjectResponse:
        erased = self._memory.forget(principal, request.subject)
        erased.update(self._dreams.forget(principal, request.subject))
        return dream_pb2.ForgetDreamSubjectResponse(erased=erased)
