"""`kh.resources`: code, credentials and cookies next to knowledge.

A resource's `secure_body` is encrypted by the hub and returned only by
`get(..., include_secure=True)` to its owner, a `secure_reader` or an admin.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from knowhub_contracts.v1 import resource_pb2, resource_pb2_grpc

from knowhub._requests.resources import content_type_value, struct, view
from knowhub._transport import AsyncTransport
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


class AsyncResourcesAPI:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport
        self._stub = resource_pb2_grpc.ResourceServiceStub(transport.channel)

    async def save(
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
        """Creates the resource or saves a new version of it (the resource_save tool); each save
        replaces the whole content.

        Args:
            id: A path-like id, e.g. `credentials/website_a`: lowercase letters, digits and
                `_ - .` in `/`-separated segments, at most 256 characters.
            title: Required, at most 512 characters.
            body: The public, searchable part (at most 256 KiB).
            secure_body: The secret part (at most 65,536 characters), encrypted at rest and
                never searched; a save without it makes a version without one.
            content_type: text, code, credential or cookie.
            metadata: Free-form JSON values; `expires_at` there works as the argument does.
            scopes: Who may see it (up to 16); the current version's, for a new resource the
                caller's org scope (else its user scope), by default.
            expires_at: When it stops being valid: a datetime, an ISO 8601 string or epoch
                seconds; never by default.
            expected_version: Check-and-set: save only if the resource is still at this version
                (0: only if it does not exist yet).
            owner: Who may change it and read its secure_body, one of the caller's own
                identities (any, for an admin); the current owner, else the caller, by default.

        Returns:
            The saved version, without its secure_body.

        Raises:
            InvalidArgument: A field out of range or malformed; the message names it.
            PermissionDenied: Another's resource, a scope the caller cannot see, or another's owner.
            FailedPrecondition: The resource is not at `expected_version`; nothing was written.
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
        return await self._transport.call(
            self._stub.SaveResource, request, lambda r: Resource.from_proto(r.resource)
        )

    async def get(
        self, id: str, include_secure: bool = False, version: int | None = None
    ) -> Resource:
        """One resource (the resource_get tool): its latest version, or a kept one.

        Args:
            id: The resource's id.
            include_secure: Return its secure_body too: for its owner, the user who created it,
                the secure_reader role or an admin; the read is audited.
            version: A kept version; the latest when None.

        Returns:
            The resource; `secure_body` is None unless asked for.

        Raises:
            NotFound: No resource (or no such version) that the caller can see.
            PermissionDenied: `include_secure` by a caller who may not read the secret.
            FailedPrecondition: `include_secure` on a deleted version.
        """
        request = resource_pb2.GetResourceRequest(
            id=id, include_secure=include_secure, version=version or 0
        )
        return await self._transport.call(
            self._stub.GetResource, request, lambda r: Resource.from_proto(r.resource)
        )

    async def get_many(
        self, ids: Sequence[str], basic: bool = False
    ) -> builtins.list[ResourceResult]:
        """Up to 100 resources in one call, each found or not on its own.

        Args:
            ids: The resources' ids.
            basic: Leave the bodies out (enough to check that references are usable).

        Returns:
            One result per id, in order: the resource, or its NOT_FOUND error.

        Raises:
            InvalidArgument: No ids, more than 100, or a malformed id.
        """
        request = resource_pb2.BatchGetResourcesRequest(ids=list(ids), view=view(basic))
        return await self._transport.call(
            self._stub.BatchGetResources,
            request,
            lambda r: [ResourceResult.from_proto(x) for x in r.results],
        )

    async def list(
        self,
        prefix: str = "",
        content_type: str | None = None,
        include_expired: bool = False,
        show_deleted: bool = False,
        limit: int = 10,
        page_token: str = "",
    ) -> ResourcePage:
        """The resources the caller can see at or under a path, by id.

        Args:
            prefix: A path such as "credentials"; every resource when "".
            content_type: Only text, code, credential or cookie resources.
            include_expired: Include resources whose expires_at has passed.
            show_deleted: Include soft-deleted resources.
            limit: Resources per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of resources (without secure bodies) and its `next_page_token`.

        Raises:
            InvalidArgument: A malformed prefix, an unknown content type or a stale page_token.
        """
        request = resource_pb2.ListResourcesRequest(
            prefix=prefix,
            content_type=content_type_value(content_type),
            include_expired=include_expired,
            show_deleted=show_deleted,
            page_size=limit,
            page_token=page_token,
        )
        return await self._transport.call(
            self._stub.ListResources, request, ResourcePage.from_proto
        )

    async def search(
        self,
        query: str,
        top_k: int = 5,
        content_type: str | None = None,
        include_expired: bool = False,
    ) -> builtins.list[ResourceHit]:
        """BM25 search over the titles and bodies the caller can see (secure_body never).

        Args:
            query: The search text (required).
            top_k: How many hits, 1 to 100.
            content_type: Only text, code, credential or cookie resources.
            include_expired: Include resources whose expires_at has passed.

        Returns:
            The hits, best first.

        Raises:
            InvalidArgument: An empty query, or top_k out of range.
        """
        request = resource_pb2.SearchResourcesRequest(
            query=query,
            top_k=top_k,
            content_type=content_type_value(content_type),
            include_expired=include_expired,
        )
        return await self._transport.call(
            self._stub.SearchResources,
            request,
            lambda r: [ResourceHit.from_proto(h) for h in r.hits],
        )

    async def delete(self, id: str) -> Resource:
        """Soft delete: the latest version is marked deleted; `undelete` restores it.

        Args:
            id: The resource's id.

        Returns:
            The deleted version.

        Raises:
            NotFound: No resource that the caller can see.
            PermissionDenied: Only its owner, the user who created it or an admin may delete it.
        """
        return await self._transport.call(
            self._stub.DeleteResource,
            resource_pb2.DeleteResourceRequest(id=id),
            lambda r: Resource.from_proto(r.resource),
        )

    async def undelete(self, id: str) -> Resource:
        """Restores a soft-deleted resource's latest version.

        Args:
            id: The resource's id.

        Returns:
            The restored version.

        Raises:
            NotFound: No resource that the caller can see.
            PermissionDenied: Only its owner, the user who created it or an admin may restore it.
        """
        return await self._transport.call(
            self._stub.UndeleteResource,
            resource_pb2.UndeleteResourceRequest(id=id),
            lambda r: Resource.from_proto(r.resource),
        )

    async def destroy(self, id: str) -> int:
        """Erases every version of the resource for good.

        Args:
            id: The resource's id.

        Returns:
            How many versions there were.

        Raises:
            NotFound: No resource that the caller can see.
            PermissionDenied: Only its owner, the user who created it or an admin may destroy it.
        """
        return await self._transport.call(
            self._stub.DestroyResource,
            resource_pb2.DestroyResourceRequest(id=id),
            lambda r: r.destroyed_versions,
        )

    async def versions(self, id: str) -> builtins.list[ResourceVersion]:
        """The kept versions of a resource.

        Args:
            id: The resource's id.

        Returns:
            The versions, newest first (without secure bodies).

        Raises:
            NotFound: No resource that the caller can see.
        """
        return await self._transport.call(
            self._stub.ListResourceVersions,
            resource_pb2.ListResourceVersionsRequest(id=id),
            lambda r: [ResourceVersion.from_proto(v) for v in r.versions],
        )

    async def audit_events(
        self, limit: int = 100, page_token: str = "", resource_id: str = ""
    ) -> AuditPage:
        """The audit trail of secret reads, changes and denials, newest first (admin only).

        Args:
            limit: Events per page, 1 to 1,000.
            page_token: The previous page's `next_page_token`; "" for the first page.
            resource_id: Only the events of this resource.

        Returns:
            One page of audit events and its `next_page_token`.

        Raises:
            PermissionDenied: The caller is not an admin.
        """
        request = resource_pb2.ListAuditEventsRequest(
            page_size=limit, page_token=page_token, resource_id=resource_id
        )
        return await self._transport.call(self._stub.ListAuditEvents, request, AuditPage.from_proto)

    async def rotate_master_key(self) -> KeyRotation:
        """Makes a fresh master key active and re-wraps every data key with it (admin only).

        Returns:
            The new active key's id and how many data keys were re-wrapped.

        Raises:
            PermissionDenied: The caller is not an admin.
        """
        return await self._transport.call(
            self._stub.RotateMasterKey,
            resource_pb2.RotateMasterKeyRequest(),
            KeyRotation.from_proto,
        )
