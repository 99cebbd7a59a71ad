# Generated from knowhub/_async/resources.py by `make sdk-sync`: edit that file, not this one.
"""`kh.resources`: code, credentials and cookies next to knowledge.

A resource's `secure_body` is encrypted by the hub and returned only by
`get(..., include_secure=True)` to its owner, a `secure_reader` or an admin.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from knowhub._requests.resources import content_type_value, struct, view
from knowhub._transport import Transport
from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.resources import (
    AuditPage,
    KeyRotation,
    Resource,
    ResourceHit,
    ResourcePage,
    ResourceResult,
    ResourceVersion,
)
from knowhub.v1 import resource_pb2, resource_pb2_grpc


class ResourcesAPI:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._stub = resource_pb2_grpc.ResourceServiceStub(transport.channel)

    def save(
        self,
        id: str,
        title: str,
        body: str,
        secure_body: str | None = None,
        content_type: str = "text",
        metadata: Mapping[str, Any] | None = None,
        scopes: Sequence[str] | None = None,
        expires_at: TimeLike = None,
        expected_version: int | None = None,
        owner: str | None = None,
    ) -> Resource:
        """Creates the resource or saves a new version of it (resource_save).

        Each save replaces the whole content. `content_type` is text, code, credential or
        cookie; `expires_at` (or metadata["expires_at"]) is a datetime, ISO 8601 string
        or epoch seconds. With `expected_version` the save happens only if the resource
        is still at that version (0: only if it does not exist yet).
        """
        request = resource_pb2.SaveResourceRequest(
            id=id,
            title=title,
            body=body,
            secure_body=secure_body or "",
            content_type=content_type_value(content_type),
            metadata=struct(metadata),
            scopes=list(scopes or []),
            owner=owner or "",
            expires_at=to_timestamp(expires_at),
            expected_version=expected_version,
        )
        return self._transport.call(
            self._stub.SaveResource, request, lambda r: Resource.from_proto(r.resource)
        )

    def get(self, id: str, include_secure: bool = False, version: int | None = None) -> Resource:
        """The latest version, or `version`; with `include_secure`, its secure_body too
        (audited; PermissionDenied unless the caller may read it)."""
        request = resource_pb2.GetResourceRequest(
            id=id, include_secure=include_secure, version=version or 0
        )
        return self._transport.call(
            self._stub.GetResource, request, lambda r: Resource.from_proto(r.resource)
        )

    def get_many(self, ids: Sequence[str], basic: bool = False) -> builtins.list[ResourceResult]:
        """Up to 100 resources in one call, each found or NOT_FOUND on its own; `basic`
        leaves the bodies out."""
        request = resource_pb2.BatchGetResourcesRequest(ids=list(ids), view=view(basic))
        return self._transport.call(
            self._stub.BatchGetResources,
            request,
            lambda r: [ResourceResult.from_proto(x) for x in r.results],
        )

    def list(
        self,
        prefix: str = "",
        content_type: str | None = None,
        include_expired: bool = False,
        show_deleted: bool = False,
        limit: int = 10,
        page_token: str = "",
    ) -> ResourcePage:
        """Visible resources at or under the path `prefix` (e.g. "credentials")."""
        request = resource_pb2.ListResourcesRequest(
            prefix=prefix,
            content_type=content_type_value(content_type),
            include_expired=include_expired,
            show_deleted=show_deleted,
            page_size=limit,
            page_token=page_token,
        )
        return self._transport.call(self._stub.ListResources, request, ResourcePage.from_proto)

    def search(
        self,
        query: str,
        top_k: int = 5,
        content_type: str | None = None,
        include_expired: bool = False,
    ) -> builtins.list[ResourceHit]:
        """BM25 over title and body, best first (secure_body is never searched)."""
        request = resource_pb2.SearchResourcesRequest(
            query=query,
            top_k=top_k,
            content_type=content_type_value(content_type),
            include_expired=include_expired,
        )
        return self._transport.call(
            self._stub.SearchResources,
            request,
            lambda r: [ResourceHit.from_proto(h) for h in r.hits],
        )

    def delete(self, id: str) -> Resource:
        """Soft delete: the latest version is marked deleted; `undelete` restores it."""
        return self._transport.call(
            self._stub.DeleteResource,
            resource_pb2.DeleteResourceRequest(id=id),
            lambda r: Resource.from_proto(r.resource),
        )

    def undelete(self, id: str) -> Resource:
        """Restores a soft-deleted resource's latest version."""
        return self._transport.call(
            self._stub.UndeleteResource,
            resource_pb2.UndeleteResourceRequest(id=id),
            lambda r: Resource.from_proto(r.resource),
        )

    def destroy(self, id: str) -> int:
        """Erases every version for good; returns how many there were."""
        return self._transport.call(
            self._stub.DestroyResource,
            resource_pb2.DestroyResourceRequest(id=id),
            lambda r: r.destroyed_versions,
        )

    def versions(self, id: str) -> builtins.list[ResourceVersion]:
        """The kept versions, newest first."""
        return self._transport.call(
            self._stub.ListResourceVersions,
            resource_pb2.ListResourceVersionsRequest(id=id),
            lambda r: [ResourceVersion.from_proto(v) for v in r.versions],
        )

    def audit_events(
        self, limit: int = 100, page_token: str = "", resource_id: str = ""
    ) -> AuditPage:
        """The audit trail, newest first (admin only)."""
        request = resource_pb2.ListAuditEventsRequest(
            page_size=limit, page_token=page_token, resource_id=resource_id
        )
        return self._transport.call(self._stub.ListAuditEvents, request, AuditPage.from_proto)

    def rotate_master_key(self) -> KeyRotation:
        """Makes a fresh master key active and re-wraps every data key (admin only)."""
        return self._transport.call(
            self._stub.RotateMasterKey,
            resource_pb2.RotateMasterKeyRequest(),
            KeyRotation.from_proto,
        )
