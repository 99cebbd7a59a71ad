"""What the hub-wide admin calls answer."""

from __future__ import annotations

from dataclasses import dataclass

from knowhub_contracts.v1 import admin_pb2

from knowhub.models.base import ProtoList, ProtoModel


@dataclass
class ServiceErasure(ProtoModel[admin_pb2.ServiceErasure]):
    """What one service erased: counts by kind (`knowledge`, `events`, `traces`, ...)."""

    service: str
    erased: dict[str, int]


class Erasure(ProtoList[ServiceErasure, admin_pb2.ForgetSubjectResponse]):
    """One entry per service (knowledge, resource, cognition, dream)."""

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """service -> kind -> how many were erased."""
        return {item.service: dict(item.erased) for item in self}

    @property
    def total(self) -> int:
        return sum(sum(item.erased.values()) for item in self)
