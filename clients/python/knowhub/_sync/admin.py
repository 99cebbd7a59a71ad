# Generated from knowhub/_async/admin.py by `make sdk-sync`: edit that file, not this one.
"""`kh.admin`: calls on the whole hub rather than on one service."""

from __future__ import annotations

from knowhub_contracts.v1 import admin_pb2, admin_pb2_grpc

from knowhub._transport import Transport
from knowhub.models.admin import Erasure


class AdminAPI:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._stub = admin_pb2_grpc.AdminServiceStub(transport.channel)

    def forget(self, subject: str) -> Erasure:
        """Erases everything the hub holds about `subject` (`user:ID` or `agent:ID`) in
        every service: its knowledge, resources, traces, memory events, memos, profile,
        memory documents and schedules; audit records keep a tombstone without content.
        An admin, or a user about itself. Safe to repeat (a repeat erases nothing)."""
        return self._transport.call(
            self._stub.ForgetSubject,
            admin_pb2.ForgetSubjectRequest(subject=subject),
            Erasure.from_proto,
        )
