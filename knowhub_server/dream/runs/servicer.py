"""gRPC face of dream runs (the dream service's run, schedule and document RPCs)."""

from __future__ import annotations

from knowhub_contracts.v1 import dream_pb2

from knowhub_server.common.base.times import from_timestamp, to_timestamp
from knowhub_server.common.runtime.rpc import unary
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.dream.runs.convert import (
    PHASES,
    STATUSES,
    WRITE_MODES,
    document_to_proto,
    run_to_proto,
    schedule_to_proto,
)
from knowhub_server.dream.runs.domain import DEFAULT_PAGE_SIZE
from knowhub_server.dream.runs.operations import DreamOperations


class RunsServicer:
    """The dream-run RPCs of DreamService: runs and their schedules."""

    authenticator: Authenticator
    _dreams: DreamOperations

    @unary
    def RunDream(
        self, request: dream_pb2.RunDreamRequest, principal: Principal
    ) -> dream_pb2.RunDreamResponse:
        run = self._dreams.run_dream(
            principal,
            agent_id=request.agent_id,
            trace_ids=list(request.trace_ids),
            phases=PHASES.names_of(request.phases, "phases"),
        )
        return dream_pb2.RunDreamResponse(run=run_to_proto(run, principal))

    @unary
    def GetDreamRun(
        self, request: dream_pb2.GetDreamRunRequest, principal: Principal
    ) -> dream_pb2.GetDreamRunResponse:
        return dream_pb2.GetDreamRunResponse(
            run=run_to_proto(self._dreams.get_run(principal, request.run_id), principal)
        )

    @unary
    def ListDreamRuns(
        self, request: dream_pb2.ListDreamRunsRequest, principal: Principal
    ) -> dream_pb2.ListDreamRunsResponse:
        runs, token = self._dreams.list_runs(
            principal,
            agent_id=request.agent_id,
            status=STATUSES.name(request.status, "status"),
            page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token,
        )
        return dream_pb2.ListDreamRunsResponse(
            runs=[run_to_proto(r, principal) for r in runs], next_page_token=token
        )

    @unary
    def ScheduleDream(
        self, request: dream_pb2.ScheduleDreamRequest, principal: Principal
    ) -> dream_pb2.ScheduleDreamResponse:
        view, existing = self._dreams.schedule(
            principal,
            agent_id=request.agent_id,
            every_minutes=request.every_minutes,
            cron=request.cron,
            time_zone=request.time_zone,
            phases=PHASES.names_of(request.phases, "phases"),
            start_time=from_timestamp(request.start_time, "start_time"),
            allow_duplicate=request.allow_duplicate,
        )
        return dream_pb2.ScheduleDreamResponse(
            schedule=schedule_to_proto(view, principal), existing=existing
        )

    @unary
    def ListSchedules(
        self, request: dream_pb2.ListSchedulesRequest, principal: Principal
    ) -> dream_pb2.ListSchedulesResponse:
        views, token = self._dreams.schedules(
            principal,
            agent_id=request.agent_id,
            page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token,
        )
        return dream_pb2.ListSchedulesResponse(
            schedules=[schedule_to_proto(v, principal) for v in views], next_page_token=token
        )

    @unary
    def DeleteSchedule(
        self, request: dream_pb2.DeleteScheduleRequest, principal: Principal
    ) -> dream_pb2.DeleteScheduleResponse:
        return dream_pb2.DeleteScheduleResponse(
            schedule_id=self._dreams.delete_schedule(principal, request.schedule_id)
        )

    @unary
    def ListMemoryDocuments(
        self, request: dream_pb2.ListMemoryDocumentsRequest, principal: Principal
    ) -> dream_pb2.ListMemoryDocumentsResponse:
        documents, token = self._dreams.documents(
            principal,
            agent_id=request.agent_id,
            page_size=request.page_size or DEFAULT_PAGE_SIZE,
            page_token=request.page_token,
        )
        return dream_pb2.ListMemoryDocumentsResponse(
            documents=[
                document_to_proto(d, principal, with_content=request.include_content)
                for d in documents
            ],
            next_page_token=token,
        )

    @unary
    def GetMemoryDocument(
        self, request: dream_pb2.GetMemoryDocumentRequest, principal: Principal
    ) -> dream_pb2.GetMemoryDocumentResponse:
        document, revisions = self._dreams.document(
            principal, agent_id=request.agent_id, path=request.path, revision=request.revision
        )
        return dream_pb2.GetMemoryDocumentResponse(
            document=document_to_proto(document, principal, with_content=True),
            revisions=[
                dream_pb2.MemoryDocumentRevision(
                    revision=r.document.revision,
                    updated_at=to_timestamp(r.document.updated_at),
                    replaced_at=to_timestamp(r.replaced_at),
                    run_id=r.document.run_id,
                )
                for r in revisions
            ],
        )

    @unary
    def WriteMemoryDocument(
        self, request: dream_pb2.WriteMemoryDocumentRequest, principal: Principal
    ) -> dream_pb2.WriteMemoryDocumentResponse:
        document = self._dreams.write_document(
            principal,
            agent_id=request.agent_id,
            path=request.path,
            content=request.content,
            mode=WRITE_MODES.name(request.mode, "mode"),
            expected_revision=request.expected_revision
            if request.HasField("expected_revision")
            else None,
        )
        return dream_pb2.WriteMemoryDocumentResponse(
            document=document_to_proto(document, principal, with_content=True)
        )

    @unary
    def DeleteMemoryDocument(
        self, request: dream_pb2.DeleteMemoryDocumentRequest, principal: Principal
    ) -> dream_pb2.DeleteMemoryDocumentResponse:
        return dream_pb2.DeleteMemoryDocumentResponse(
            path=self._dreams.delete_document(
                principal, agent_id=request.agent_id, path=request.path
            )
        )
