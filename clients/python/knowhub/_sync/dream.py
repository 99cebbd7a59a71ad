# Generated from knowhub/_async/dream.py by `make sdk-sync`: edit that file, not this one.
"""`kh.dream`: dream runs (the dream service's run, schedule and memory document RPCs).
`kh.memory` is the memory in the same service.

    run = kh.dream.run()                          # the token's agent, both phases
    kh.dream.get_run(run.run_id).status           # queued, running, done, skipped, failed
    kh.dream.list_runs(status="failed")           # the caller's runs, newest first
    kh.dream.schedule(cron="0 3 * * *", time_zone="Asia/Shanghai")
    for doc in kh.dream.documents(include_content=True):
        print(doc.path, doc.content)

Phases are "per_trace_reflect" and "cross_trace_integrate".
"""

from __future__ import annotations

from collections.abc import Sequence

from knowhub._requests.dream import phases as phase_values
from knowhub._requests.dream import run_status
from knowhub._transport import Transport
from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.dream import (
    DreamRun,
    DreamRunPage,
    DreamSchedule,
    MemoryDocument,
    MemoryDocumentPage,
    SchedulePage,
)
from knowhub.v1 import dream_pb2, dream_pb2_grpc


class DreamAPI:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._stub = dream_pb2_grpc.DreamServiceStub(transport.channel)

    def run(
        self,
        agent_id: str | None = None,
        trace_ids: Sequence[str] | None = None,
        phases: Sequence[str] | None = None,
    ) -> DreamRun:
        """Queues a dream run of the agent (the token's by default) over the traces the
        caller may read (or `trace_ids`); returns it queued. Both phases by default."""
        request = dream_pb2.RunDreamRequest(
            agent_id=agent_id or "", trace_ids=list(trace_ids or []), phases=phase_values(phases)
        )
        return self._transport.call(
            self._stub.RunDream, request, lambda r: DreamRun.from_proto(r.run)
        )

    def get_run(self, run_id: str) -> DreamRun:
        """One dream run: its status (queued, running, done, skipped, failed), counts and
        failures."""
        return self._transport.call(
            self._stub.GetDreamRun,
            dream_pb2.GetDreamRunRequest(run_id=run_id),
            lambda r: DreamRun.from_proto(r.run),
        )

    def list_runs(
        self,
        agent_id: str | None = None,
        status: str | None = None,
        limit: int = 20,
        page_token: str = "",
    ) -> DreamRunPage:
        """The runs the caller requested (every run for an admin), newest first; only
        `agent_id`'s, only those in `status` (queued, running, done, skipped, failed)."""
        request = dream_pb2.ListDreamRunsRequest(
            agent_id=agent_id or "",
            status=run_status(status),
            page_size=limit,
            page_token=page_token,
        )
        return self._transport.call(self._stub.ListDreamRuns, request, DreamRunPage.from_proto)

    def schedule(
        self,
        every_minutes: int | None = None,
        cron: str | None = None,
        *,
        agent_id: str | None = None,
        time_zone: str | None = None,
        phases: Sequence[str] | None = None,
        start_time: TimeLike = None,
    ) -> DreamSchedule:
        """Runs the agent's dream every N minutes or on a five-field cron expression (in
        `time_zone`, UTC by default), from `start_time` on."""
        request = dream_pb2.ScheduleDreamRequest(
            agent_id=agent_id or "",
            every_minutes=every_minutes or 0,
            cron=cron or "",
            time_zone=time_zone or "",
            phases=phase_values(phases),
            start_time=to_timestamp(start_time),
        )
        return self._transport.call(
            self._stub.ScheduleDream, request, lambda r: DreamSchedule.from_proto(r.schedule)
        )

    def schedules(
        self, agent_id: str | None = None, limit: int = 20, page_token: str = ""
    ) -> SchedulePage:
        """The caller's schedules (every one for an admin), oldest first."""
        request = dream_pb2.ListSchedulesRequest(
            agent_id=agent_id or "", page_size=limit, page_token=page_token
        )
        return self._transport.call(self._stub.ListSchedules, request, SchedulePage.from_proto)

    def delete_schedule(self, schedule_id: str) -> str:
        """Removes one of the caller's dream schedules; returns its id."""
        return self._transport.call(
            self._stub.DeleteSchedule,
            dream_pb2.DeleteScheduleRequest(schedule_id=schedule_id),
            lambda r: r.schedule_id,
        )

    def documents(
        self,
        agent_id: str | None = None,
        include_content: bool = False,
        limit: int = 20,
        page_token: str = "",
    ) -> MemoryDocumentPage:
        """The agent's memory documents by path (content only with `include_content`)."""
        request = dream_pb2.ListMemoryDocumentsRequest(
            agent_id=agent_id or "",
            include_content=include_content,
            page_size=limit,
            page_token=page_token,
        )
        return self._transport.call(
            self._stub.ListMemoryDocuments, request, MemoryDocumentPage.from_proto
        )

    def document(self, path: str, agent_id: str | None = None, revision: int = 0) -> MemoryDocument:
        """A memory document with its content (an earlier kept revision when given) and
        the list of its kept revisions."""
        request = dream_pb2.GetMemoryDocumentRequest(
            agent_id=agent_id or "", path=path, revision=revision
        )
        return self._transport.call(
            self._stub.GetMemoryDocument, request, MemoryDocument.from_response
        )

    def write_document(
        self,
        path: str,
        content: str,
        *,
        append: bool = False,
        expected_revision: int | None = None,
        agent_id: str | None = None,
    ) -> MemoryDocument:
        """Creates or rewrites one of the agent's memory documents (with `append`, adds
        `content` at its end); the replaced revision is kept. `expected_revision` (0: must
        not exist yet) refuses the write if someone else wrote first."""
        request = dream_pb2.WriteMemoryDocumentRequest(
            agent_id=agent_id or "",
            path=path,
            content=content,
            mode="DOCUMENT_WRITE_MODE_APPEND" if append else "DOCUMENT_WRITE_MODE_REPLACE",
            expected_revision=expected_revision,
        )
        return self._transport.call(
            self._stub.WriteMemoryDocument, request, lambda r: MemoryDocument.from_proto(r.document)
        )

    def delete_document(self, path: str, agent_id: str | None = None) -> str:
        """Deletes one of the agent's memory documents with its kept revisions."""
        request = dream_pb2.DeleteMemoryDocumentRequest(agent_id=agent_id or "", path=path)
        return self._transport.call(self._stub.DeleteMemoryDocument, request, lambda r: r.path)
