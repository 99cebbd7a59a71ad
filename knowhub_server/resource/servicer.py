"""gRPC face of the resource service: protobuf messages in and out, nothing more."""

from __future__ import annotations

from knowhub_contracts.v1 import resource_pb2, resource_pb2_grpc

from knowhub_server.common.base.convert import item_error
from knowhub_server.common.base.errors import ServiceError
from knowhub_server.common.runtime.rpc import unary
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.resource.convert import (
    CONTENT_TYPES,
    VIEWS,
    draft_from_proto,
    event_to_proto,
    hit_to_proto,
    resource_to_proto,
    rotation_to_proto,
    version_to_proto,
)
from knowhub_server.resource.domain import DEFAULT_AUDIT_PAGE, DEFAULT_PAGE_SIZE, DEFAULT_TOP_K
from knowhub_server.resource.operations import ResourceOperations


class ResourceServicer(resource_pb2_grpc.ResourceServiceServicer):
    def __init__(self, authenticator: Authenticator, operations: ResourceOperations) -> None:
        self.authenticator = authenticator
        self._ops = operations

    @unary
    def SaveResource(
        self, request: resource_pb2.SaveResourceRequest, principal: Principal
    ) -> resource_pb2.SaveResourceResponse:
        saved = self._ops.save(principal, draft_from_proto(request))
        return resource_pb2.SaveResourceResponse(resource=resource_to_proto(saved, principal))

    @unary
    def GetResource(
        self, request: resource_pb2.GetResourceRequest, principal: Principal
    ) -> resource_pb2.GetResourceResponse:
        found = self._ops.get(
            principal, request.id, include_secure=request.include_secure, version=request.version
        )
        return resource_pb2.GetResourceResponse(resource=resource_to_proto(found, principal))

    @unary
    def BatchGetResources(
        self, request: resource_pb2.BatchGetResourcesRequest, principal: Principal
    ) -> resource_pb2.BatchGetResourcesResponse:
        view = VIEWS.name(request.view, "view")
        outcomes = self._ops.batch_get(principal, list(request.ids), with_body=view != "basic")
        results = []
        for resource_id, outcome in zip(request.ids, outcomes, strict=True):
            result = resource_pb2.ResourceResult(id=resource_id)
            if isinstance(outcome, ServiceError):
                result.error.CopyFrom(item_error(outcome))
            else:
                result.resource.CopyFrom(resource_to_proto(outcome, principal))
            results.append(result)
        return resource_pb2.BatchGetResourcesResponse(results=results)

    @unary
    def ListResources(
        self, request: resource_pb2.ListResourcesRequest, principal: Principal
    ) -> resource_pb2.ListResourcesResponse:
        resources, token = self._ops.list_page(
            principal,
            prefix=request.prefix,
            content_type=CONTENT_TYPES.name(request.content_type, "content_type"),
            include_expired=request.include_expired,
            show_deleted=request.show_deleted,
            page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token,
        )
        return resource_pb2.ListResourcesResponse(
            resources=[resource_to_proto(r, principal) for r in resources], next_page_token=token
        )

    @unary
    def SearchResources(
        self, request: resource_pb2.SearchResourcesRequest, principal: Principal
    ) -> resource_pb2.SearchResourcesResponse:
        hits = self._ops.search(
            principal,
            request.query,
            top_k=request.top_k if request.HasField("top_k") else DEFAULT_TOP_K,
            content_type=CONTENT_TYPES.name(request.content_type, "content_type"),
            include_expired=request.include_expired,
        )
        return resource_pb2.SearchResourcesResponse(
            hits=[hit_to_proto(r, score, principal) for r, score in hits]
        )

    @unary
    def DeleteResource(
        self, request: resource_pb2.DeleteResourceRequest, principal: Principal
    ) -> resource_pb2.DeleteResourceResponse:
        deleted = self._ops.delete(principal, request.id)
        return resource_pb2.DeleteResourceResponse(resource=resource_to_proto(deleted, principal))

    @unary
    def UndeleteResource(
        self, request: resource_pb2.UndeleteResourceRequest, principal: Principal
    ) -> resource_pb2.UndeleteResourceResponse:
        restored = self._ops.undelete(principal, request.id)
        return resource_pb2.UndeleteResourceResponse(
            resource=resource_to_proto(restored, principal)
        )

    @unary
    def DestroyResource(
        self, request: resource_pb2.DestroyResourceRequest, principal: Principal
    ) -> resource_pb2.DestroyResourceResponse:
        erased = self._ops.destroy(principal, request.id)
        return resource_pb2.DestroyResourceResponse(destroyed_versions=erased)

    @unary
    def ForgetResourceSubject(
        self, request: resource_pb2.ForgetResourceSubjectRequest, principal: Principal
    ) -> resource_pb2.ForgetResourceSubjectResponse:
        return resource_pb2.ForgetResourceSubjectResponse(
            erased=self._ops.forget(principal, request.subject)
        )

    @unary
    def ListResourceVersions(
        self, request: resource_pb2.ListResourceVersionsRequest, principal: Principal
    ) -> resource_pb2.ListResourceVersionsResponse:
        versions = self._ops.versions(principal, request.id)
        return resource_pb2.ListResourceVersionsResponse(
            versions=[version_to_proto(v) for v in versions]
        )

    @unary
    def ListAuditEvents(
        self, request: resource_pb2.ListAuditEventsRequest, principal: Principal
    ) -> resource_pb2.ListAuditEventsResponse:
        events, token = self._ops.audit_events(
            principal,
            page_size=request.page_size or DEFAULT_AUDIT_PAGE,
            page_token=request.page_token,
            resource_id=request.resource_id,
        )
        return resource_pb2.ListAuditEventsResponse(
            events=[event_to_proto(e, principal) for e in events], next_page_token=token
        )

    @unary
    def RotateMasterKey(
        self, request: resource_pb2.RotateMasterKeyRequest, principal: Principal
    ) -> resource_pb2.RotateMasterKeyResponse:
        return rotation_to_proto(self._ops.rotate_master_key(principal))
