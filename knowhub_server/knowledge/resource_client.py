"""The resources knowledge refers to (resource_ids), asked of the resource service.

Knowledge never reads resources itself: it calls BatchGetResources as the caller, so a
resource counts as present only if that caller can see it.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowhub_contracts.v1 import resource_pb2, resource_pb2_grpc

from knowhub_server.common.base.errors import Unavailable
from knowhub_server.common.runtime.peers import PeerRefused, Peers, call_as
from knowhub_server.common.security.auth import Principal

BATCH = 100  # BatchGetResources' limit
USABLE, MISSING, EXPIRED, DELETED = "usable", "missing", "expired", "deleted"


class ResourceClient:
    def __init__(self, peers: Peers, timeout: float) -> None:
        self._peers = peers
        self._timeout = timeout

    def states(self, principal: Principal, resource_ids: Sequence[str]) -> dict[str, str]:
        """Each resource's state for this caller, by its id as stored (qualified by its
        org): usable, missing (or invisible), expired or deleted. UNAVAILABLE when the
        resource service cannot answer."""
        stub = resource_pb2_grpc.ResourceServiceStub(self._peers.channel("resource"))
        unique = list(dict.fromkeys(resource_ids))
        states: dict[str, str] = {}
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            request = resource_pb2.BatchGetResourcesRequest(
                ids=[principal.show(i) for i in batch], view=resource_pb2.RESOURCE_VIEW_BASIC
            )
            try:
                response = call_as(
                    principal, stub.BatchGetResources, request, timeout=self._timeout
                )
            except PeerRefused as refused:
                raise Unavailable(
                    f"the resource service refused the check "
                    f"({refused.code.name}): {refused.message}"
                ) from None
            # The results come in the order of the ids asked for.
            states.update(zip(batch, map(_state, response.results), strict=True))
        return states


def _state(result: resource_pb2.ResourceResult) -> str:
    if not result.HasField("resource"):
        return MISSING
    if result.resource.deleted:
        return DELETED
    return EXPIRED if result.resource.expired else USABLE
