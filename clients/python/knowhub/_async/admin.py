"""`kh.admin`: calls on the whole hub rather than on one service."""

from __future__ import annotations

from knowhub_contracts.v1 import admin_pb2, admin_pb2_grpc

from knowhub._transport import AsyncTransport
from knowhub.models.admin import Erasure


class AsyncAdminAPI:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport
        self._stub = admin_pb2_grpc.AdminServiceStub(transport.channel)

    async def forget(self, subject: str) -> Erasure:
        """Erases everything the hub holds about `subject` (`user:ID` or `agent:ID`) in
        every service: its knowledge, resources, traces, memory events, memos, profile,
        memory documents and schedules; audit records keep a tombstone without content.
        An admin, or a user about itself. Safe to repeat (a repeat erases nothing)."""
        return await self._transport.call(
            self._stub.ForgetSubject,
            admin_pb2.ForgetSubjectRequest(subject=subject),
            Erasure.from_proto,
        )
