"""Resources (code, credentials, cookies), their versions and their audit trail."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import resource_pb2

from knowhub.models.base import ProtoList, ProtoModel

CONTENT_TYPES = EnumNames(resource_pb2.ResourceContentType.DESCRIPTOR)


def content_type_name(number: int) -> str:
    """ "code" for RESOURCE_CONTENT_TYPE_CODE, and so on."""
    return CONTENT_TYPES.name(number)


def content_type_number(name: str) -> int:
    return resource_pb2.ResourceContentType.Value(CONTENT_TYPES.proto_name(name, "content_type"))


@dataclass
class Resource(ProtoModel[resource_pb2.Resource]):
    """One version of a resource. `secure_body` is None unless it was asked for with
    include_secure (and it is left out of repr, so it does not end up in logs)."""

    id: str
    title: str
    body: str
    content_type: str
    metadata: dict[str, Any]
    scopes: list[str]
    owner: str
    expires_at: datetime | None
    version: int
    created_at: datetime | None
    updated_at: datetime | None
    expired: bool
    has_secure_body: bool
    deleted: bool
    deleted_at: datetime | None
    secure_body: str | None = field(default=None, repr=False)


@dataclass
class ResourceHit(ProtoModel[resource_pb2.ResourceHit]):
    resource: Resource
    relevance: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.resource.to_dict(), "relevance": self.relevance}


class ResourcePage(ProtoList[Resource, resource_pb2.ListResourcesResponse]):
    """One page of resources; pass `next_page_token` back for the next ("" at the end)."""

    next_page_token: str = ""


@dataclass
class ResourceResult(ProtoModel[resource_pb2.ResourceResult]):
    """One id of a batch read: `resource` when found, else `error`."""

    id: str
    resource: Resource | None
    error: dict[str, str] | None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class ResourceVersion(ProtoModel[resource_pb2.ResourceVersion]):
    version: int
    created_at: datetime | None
    saved_by: str
    has_secure_body: bool
    deleted: bool
    deleted_at: datetime | None


@dataclass
class AuditEvent(ProtoModel[resource_pb2.AuditEvent]):
    id: str
    time: datetime | None
    actor: str
    agent_id: str
    action: str
    resource_id: str
    version: int
    outcome: str
    detail: str


class AuditPage(ProtoList[AuditEvent, resource_pb2.ListAuditEventsResponse]):
    """Audit events, newest first; pass `next_page_token` back for older ones."""

    next_page_token: str = ""


@dataclass
class KeyRotation(ProtoModel[resource_pb2.RotateMasterKeyResponse]):
    active_key_id: str
    created: bool
    rewrapped: int
    remaining: int
