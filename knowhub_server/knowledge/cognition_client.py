"""The cognition service as the knowledge service reaches it: AskKnowledge logs its
question and answer as the caller's query event, through AppendEvents as the caller (so
the trace must be one the caller may write)."""

from __future__ import annotations

from collections.abc import Sequence

from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.common.runtime.peers import PeerRefused, Peers, call_as
from knowhub_server.common.security.auth import Principal

SOURCE_CONTENT_KEPT = 500  # a query's sources are logged with their content cut


class CognitionClient:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers

    def log_query(
        self,
        principal: Principal,
        trace_id: str,
        *,
        sequence: int,
        goal_id: str,
        query: str,
        response: str,
        sources: Sequence[tuple[str, str, str]],
    ) -> str:
        """Appends the query event (sources as (id, task, content)); its event id.
        Raises PeerRefused or Unavailable."""
        event = cognition_pb2.Event(
            query=cognition_pb2.QueryEvent(
                sequence=sequence,
                goal_id=goal_id,
                query=query,
                response=response,
                source_ids=[i for i, _, _ in sources],
                sources=[
                    cognition_pb2.QuerySource(
                        id=i, task=task, content=content[:SOURCE_CONTENT_KEPT]
                    )
                    for i, task, content in sources
                ],
            )
        )
        stub = cognition_pb2_grpc.CognitionServiceStub(self._peers.channel("cognition"))
        request = cognition_pb2.AppendEventsRequest(trace_id=trace_id, events=[event])
        try:
            return call_as(principal, stub.AppendEvents, request).event_ids[0]
        except PeerRefused as refused:  # name the fields as AskKnowledge's request does
            raise PeerRefused(
                refused.code, refused.message.replace("events[0].query.", "")
            ) from None
