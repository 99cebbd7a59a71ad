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

from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

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
    ScheduledDream,
    SchedulePage,
)


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
        """Queues a dream run: reflections over the agent's traces, integrated into its memory
        documents.

        Args:
            agent_id: The agent, one the caller's token may act as (any, for an admin);
                the token's own by default.
            trace_ids: Only these traces; every trace of the agent the caller may read by default.
            phases: "per_trace_reflect" and/or "cross_trace_integrate"; both by default.

        Returns:
            The run, queued; follow it with `get_run`.

        Raises:
            InvalidArgument: An unknown phase or a malformed id.
            NotFound: A trace of `trace_ids` the caller cannot read.
            PermissionDenied: An agent the caller's token may not act as.
            FailedPrecondition: The dream service has no token with the dreamer role
                (KNOWHUB_DREAM_SERVICE_TOKEN).
        """
        request = dream_pb2.RunDreamRequest(
            agent_id=agent_id or "", trace_ids=list(trace_ids or []), phases=phase_values(phases)
        )
        return self._transport.call(
            self._stub.RunDream, request, lambda r: DreamRun.from_proto(r.run)
        )

    def get_run(self, run_id: str) -> DreamRun:
        """One dream run.

        Args:
            run_id: The run's id (`dream-...`).

        Returns:
            The run: its status (queued, running, done, skipped, failed), counts and failures.

        Raises:
            NotFound: No run with this id that the caller can see.
        """
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
        """The runs the caller requested (every run, for an admin), newest first.

        Args:
            agent_id: Only this agent's runs.
            status: Only runs in this status: queued, running, done, skipped or failed.
            limit: Runs per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of runs and its `next_page_token`.

        Raises:
            InvalidArgument: An unknown status, a limit out of range or a stale page_token.
        """
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
        allow_duplicate: bool = False,
    ) -> DreamSchedule:
        """Runs the agent's dream on a schedule: every N minutes, or on a cron expression.
        When the agent already has an equal schedule of this caller (cadence, time zone,
        phases, and start_time when given), that one is returned and nothing is added.

        Args:
            every_minutes: Run every this many minutes (give this or `cron`).
            cron: A five-field cron expression, e.g. "0 3 * * *" for 03:00 every day.
            agent_id: The agent, one the caller's token may act as (any, for an admin);
                the token's own by default.
            time_zone: The IANA time zone of `cron`, e.g. "Europe/Paris"; UTC by default.
            phases: "per_trace_reflect" and/or "cross_trace_integrate"; both by default.
            start_time: The first run's earliest time; now by default.
            allow_duplicate: Add the schedule even when an equal one exists.

        Returns:
            The schedule, with its id and next run time.

        Raises:
            InvalidArgument: Both or neither of every_minutes and cron, a malformed cron
                expression or an unknown time zone.
            PermissionDenied: An agent the caller's token may not act as.
        """
        scheduled = self.schedule_unless_exists(
            every_minutes,
            cron,
            agent_id=agent_id,
            time_zone=time_zone,
            phases=phases,
            start_time=start_time,
            allow_duplicate=allow_duplicate,
        )
        return scheduled.schedule

    def schedule_unless_exists(
        self,
        every_minutes: int | None = None,
        cron: str | None = None,
        *,
        agent_id: str | None = None,
        time_zone: str | None = None,
        phases: Sequence[str] | None = None,
        start_time: TimeLike = None,
        allow_duplicate: bool = False,
    ) -> ScheduledDream:
        """`schedule`, telling whether the agent already had an equal schedule of this
        caller.

        Args:
            every_minutes: As in `schedule`.
            cron: As in `schedule`.
            agent_id: As in `schedule`.
            time_zone: As in `schedule`.
            phases: As in `schedule`.
            start_time: As in `schedule`.
            allow_duplicate: As in `schedule`.

        Returns:
            The schedule added, or the equal one already there with `existing` true.

        Raises:
            InvalidArgument: As in `schedule`.
            PermissionDenied: As in `schedule`.
        """
        request = dream_pb2.ScheduleDreamRequest(
            agent_id=agent_id or "",
            every_minutes=every_minutes or 0,
            cron=cron or "",
            time_zone=time_zone or "",
            phases=phase_values(phases),
            start_time=to_timestamp(start_time),
            allow_duplicate=allow_duplicate,
        )
        return self._transport.call(self._stub.ScheduleDream, request, ScheduledDream.from_proto)

    def schedules(
        self, agent_id: str | None = None, limit: int = 20, page_token: str = ""
    ) -> SchedulePage:
        """The caller's dream schedules (every one, for an admin), oldest first.

        Args:
            agent_id: Only this agent's schedules.
            limit: Schedules per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of schedules and its `next_page_token`.

        Raises:
            InvalidArgument: A limit out of range or a stale page_token.
        """
        request = dream_pb2.ListSchedulesRequest(
            agent_id=agent_id or "", page_size=limit, page_token=page_token
        )
        return self._transport.call(self._stub.ListSchedules, request, SchedulePage.from_proto)

    def delete_schedule(self, schedule_id: str) -> str:
        """Removes one of the caller's dream schedules.

        Args:
            schedule_id: The schedule's id (`schedule-...`).

        Returns:
            The removed schedule's id.

        Raises:
            NotFound: No schedule with this id that the caller can see.
        """
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
        """The agent's memory documents (what its dream runs wrote), by path.

        Args:
            agent_id: The agent, one the caller's token may act as (any, for an admin);
                the token's own by default.
            include_content: Include each document's content.
            limit: Documents per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of documents and its `next_page_token`.

        Raises:
            InvalidArgument: A limit out of range or a stale page_token.
            PermissionDenied: An agent the caller's token may not act as.
        """
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
        """One memory document with its content and the list of its kept revisions.

        Args:
            path: The document's path, e.g. "MEMORY.md".
            agent_id: The agent, one the caller's token may act as (any, for an admin);
                the token's own by default.
            revision: An earlier kept revision; the current content when 0.

        Returns:
            The document.

        Raises:
            NotFound: No such document, or the revision is no longer kept.
            PermissionDenied: An agent the caller's token may not act as.
        """
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
        """Creates or rewrites one of the agent's memory documents, or appends to it; the
        replaced revision is kept.

        Args:
            path: The document's path, e.g. "people/alice.md".
            content: The new content, or with `append` the lines to add (the document holds
                at most 50,000 characters).
            append: Add `content` at the end rather than replace the document.
            expected_revision: Write only if the document is at this revision (0: only if it
                does not exist yet).
            agent_id: The agent; the caller's token's agent by default.

        Returns:
            The new current revision, with its content.

        Raises:
            InvalidArgument: A bad path, or too much content.
            PermissionDenied: Another agent's documents (only the agent itself or an admin).
            FailedPrecondition: The document is no longer at expected_revision.
        """
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
        """Deletes one of the agent's memory documents with its kept revisions.

        Args:
            path: The document's path.
            agent_id: The agent; the caller's token's agent by default.

        Returns:
            The path deleted.

        Raises:
            NotFound: The agent has no such document.
            PermissionDenied: Another agent's documents (only the agent itself or an admin).
        """
        request = dream_pb2.DeleteMemoryDocumentRequest(agent_id=agent_id or "", path=path)
        return self._transport.call(self._stub.DeleteMemoryDocument, request, lambda r: r.path)
