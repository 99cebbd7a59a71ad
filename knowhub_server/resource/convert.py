"""The resource service's protobuf messages to and from its domain (resource.proto).
Resource ids, scopes and owners leave as the `viewer` reads them (its own org's bare)."""

from __future__ import annotations

from google.protobuf import json_format, struct_pb2
from knowhub_contracts.v1 import resource_pb2

from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.times import from_timestamp, to_timestamp
from knowhub_server.common.security.auth import Principal
from knowhub_server.resource.audit import AuditEvent
from knowhub_server.resource.domain import Draft, Resource, VersionInfo
from knowhub_server.resource.operations import Rotation

# "text", "code", "credential", "cookie"; "" when unspecified (a save takes it as text).
CONTENT_TYPES = ProtoEnum(resource_pb2.ResourceContentType)
# "basic" (no bodies); "" when unspecified (everything but secure_body).
VIEWS = ProtoEnum(resource_pb2.ResourceView)


def draft_from_proto(request: resource_pb2.SaveResourceRequest) -> Draft:
    return Draft(
        id=request.id,
        title=request.title,
        body=request.body,
        secure_body=request.secure_body,
        content_type=CONTENT_TYPES.name(request.content_type, "content_type") or "text",
        metadata=metadata_from_proto(request.metadata),
        scopes=list(request.scopes),
        owner=request.owner,
        expires_at=from_timestamp(request.expires_at, "expires_at"),
        expected_version=request.expected_version if request.HasField("expected_version") else None,
    )


def metadata_from_proto(struct: struct_pb2.Struct) -> dict[str, object]:
    try:
        return json_format.MessageToDict(struct)
    except (json_format.Error, ValueError):  # NaN or infinity
        raise InvalidArgument("metadata", "numbers must be finite") from None


def resource_to_proto(resource: Resource, viewer: Principal) -> resource_pb2.Resource:
    content = resource.content
    message = resource_pb2.Resource(
        id=viewer.show(resource.id),
        title=content.title,
        body=content.body,
        content_type=CONTENT_TYPES.value(content.content_type),
        scopes=[viewer.show_scope(s) for s in content.scopes],
        owner=viewer.show_scope(content.owner),
        version=resource.version,
        created_at=to_timestamp(resource.created_at),
        updated_at=to_timestamp(resource.updated_at),
        expired=resource.expired,
        has_secure_body=resource.has_secure_body,
        deleted=bool(resource.deleted_at),
    )
    message.metadata.update(content.metadata)
    if content.expires_at is not None:
        message.expires_at.CopyFrom(to_timestamp(content.expires_at))
    if resource.deleted_at:
        message.deleted_at.CopyFrom(to_timestamp(resource.deleted_at))
    if resource.secure_body is not None:
        message.secure_body = resource.secure_body
    return message


def hit_to_proto(
    resource: Resource, relevance: float, viewer: Principal
) -> resource_pb2.ResourceHit:
    return resource_pb2.ResourceHit(
        resource=resource_to_proto(resource, viewer), relevance=relevance
    )


def version_to_proto(info: VersionInfo) -> resource_pb2.ResourceVersion:
    message = resource_pb2.ResourceVersion(
        version=info.version,
        created_at=to_timestamp(info.created_at),
        saved_by=info.saved_by,
        has_secure_body=info.has_secure_body,
        deleted=bool(info.deleted_at),
    )
    if info.deleted_at:
        message.deleted_at.CopyFrom(to_timestamp(info.deleted_at))
    return message


def event_to_proto(event: AuditEvent, viewer: Principal) -> resource_pb2.AuditEvent:
    return resource_pb2.AuditEvent(
        id=event.id,
        time=to_timestamp(event.time),
        actor=event.actor,
        agent_id=viewer.show(event.agent_id),
        action=event.action,
        resource_id=viewer.show(event.resource_id),
        version=event.version,
        outcome=event.outcome,
        detail=event.detail,
    )


def rotation_to_proto(rotation: Rotation) -> resource_pb2.RotateMasterKeyResponse:
    return resource_pb2.RotateMasterKeyResponse(
        active_key_id=rotation.active_key_id,
        created=rotation.created,
        rewrapped=rotation.rewrapped,
        remaining=rotation.remaining,
    )
