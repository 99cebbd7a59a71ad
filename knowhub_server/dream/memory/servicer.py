"""gRPC face of the memory (the dream service's memory RPCs): messages in and out."""

from __future__ import annotations

from knowhub_contracts.v1 import dream_pb2

from knowhub_server.common.base.times import from_timestamp
from knowhub_server.common.runtime.rpc import unary
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.dream.memory.convert import (
    ENTITY_TYPES,
    REQUEST_TYPES,
    SEARCH_MODES,
    context_from_proto,
    event_hit_to_proto,
    event_to_proto,
    failed_job_to_proto,
    job_to_proto,
    memo_to_proto,
    profile_hit_to_proto,
    profile_revision_to_proto,
    profile_to_proto,
)
from knowhub_server.dream.memory.operations import MemoryOperations


class MemoryServicer:
    """The memory RPCs of DreamService: remember, memos, events, profiles and jobs."""

    authenticator: Authenticator
    _memory: MemoryOperations

    @unary
    def Remember(
        self, request: dream_pb2.RememberRequest, principal: Principal
    ) -> dream_pb2.RememberResponse:
        result = self._memory.remember(
            principal,
            memo=request.memo,
            observations=list(request.observations),
            context=context_from_proto(request.context),
            force=request.force,
            scope=request.scope,
            request_id=request.request_id,
            wait_seconds=request.wait_timeout.ToTimedelta().total_seconds(),
        )
        return dream_pb2.RememberResponse(
            job_id=result.job_id,
            enqueued=result.enqueued,
            memo_recorded=result.memo_recorded,
            warnings=result.warnings,
            job=job_to_proto(result.job, principal) if result.job else None,
        )

    @unary
    def RecentMemos(
        self, request: dream_pb2.RecentMemosRequest, principal: Principal
    ) -> dream_pb2.RecentMemosResponse:
        memos = self._memory.recent_memos(
            principal,
            request_type=REQUEST_TYPES.name(request.request_type, "request_type"),
            user_id=request.user_id,
            group_id=request.group_id,
            limit=request.limit,
            scope=request.scope,
        )
        return dream_pb2.RecentMemosResponse(memos=[memo_to_proto(m) for m in memos])

    @unary
    def SearchEvents(
        self, request: dream_pb2.SearchEventsRequest, principal: Principal
    ) -> dream_pb2.SearchEventsResponse:
        result = self._memory.search_events(
            principal,
            query=request.query,
            target_user_id=request.target_user_id,
            target_group_id=request.target_group_id,
            top_k=request.top_k if request.HasField("top_k") else None,
            time_from=from_timestamp(request.time_from, "time_from"),
            time_to=from_timestamp(request.time_to, "time_to"),
            mode=SEARCH_MODES.name(request.mode, "mode"),
            scope=request.scope,
            include_history=request.include_history,
        )
        return dream_pb2.SearchEventsResponse(
            hits=[event_hit_to_proto(h, principal) for h in result.hits], warnings=result.warnings
        )

    @unary
    def ListEvents(
        self, request: dream_pb2.ListEventsRequest, principal: Principal
    ) -> dream_pb2.ListEventsResponse:
        events, token = self._memory.list_events(
            principal,
            target_user_id=request.target_user_id,
            target_group_id=request.target_group_id,
            time_from=from_timestamp(request.time_from, "time_from"),
            time_to=from_timestamp(request.time_to, "time_to"),
            scope=request.scope,
            page_size=request.page_size,
            page_token=request.page_token,
            include_history=request.include_history,
        )
        return dream_pb2.ListEventsResponse(
            events=[event_to_proto(e, principal) for e in events], next_page_token=token
        )

    @unary
    def GetProfile(
        self, request: dream_pb2.GetProfileRequest, principal: Principal
    ) -> dream_pb2.GetProfileResponse:
        profile = self._memory.get_profile(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            entity_id=request.entity_id,
            scope=request.scope,
        )
        return dream_pb2.GetProfileResponse(profile=profile_to_proto(profile, principal))

    @unary
    def SearchProfiles(
        self, request: dream_pb2.SearchProfilesRequest, principal: Principal
    ) -> dream_pb2.SearchProfilesResponse:
        hits = self._memory.search_profiles(
            principal,
            query=request.query,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            top_k=request.top_k if request.HasField("top_k") else None,
            scope=request.scope,
        )
        return dream_pb2.SearchProfilesResponse(
            hits=[profile_hit_to_proto(p, score, principal) for p, score in hits]
        )

    @unary
    def ListProfiles(
        self, request: dream_pb2.ListProfilesRequest, principal: Principal
    ) -> dream_pb2.ListProfilesResponse:
        profiles, token = self._memory.list_profiles(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            scope=request.scope,
            page_size=request.page_size,
            page_token=request.page_token,
        )
        return dream_pb2.ListProfilesResponse(
            profiles=[profile_to_proto(p, principal) for p in profiles], next_page_token=token
        )

    @unary
    def ListProfileRevisions(
        self, request: dream_pb2.ListProfileRevisionsRequest, principal: Principal
    ) -> dream_pb2.ListProfileRevisionsResponse:
        revisions = self._memory.profile_revisions(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            entity_id=request.entity_id,
            scope=request.scope,
        )
        return dream_pb2.ListProfileRevisionsResponse(
            revisions=[profile_revision_to_proto(r, principal) for r in revisions]
        )

    @unary
    def RestoreProfileRevision(
        self, request: dream_pb2.RestoreProfileRevisionRequest, principal: Principal
    ) -> dream_pb2.RestoreProfileRevisionResponse:
        profile = self._memory.restore_profile(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            entity_id=request.entity_id,
            scope=request.scope,
            revision=request.revision,
        )
        return dream_pb2.RestoreProfileRevisionResponse(
            profile=profile_to_proto(profile, principal)
        )

    @unary
    def ListFailedJobs(
        self, request: dream_pb2.ListFailedJobsRequest, principal: Principal
    ) -> dream_pb2.ListFailedJobsResponse:
        jobs, token = self._memory.failed_jobs(
            principal, page_size=request.page_size, page_token=request.page_token
        )
        return dream_pb2.ListFailedJobsResponse(
            jobs=[failed_job_to_proto(j, principal) for j in jobs], next_page_token=token
        )

    @unary
    def RetryFailedJob(
        self, request: dream_pb2.RetryFailedJobRequest, principal: Principal
    ) -> dream_pb2.RetryFailedJobResponse:
        job_id = self._memory.retry_failed_job(principal, request.job_id)
        return dream_pb2.RetryFailedJobResponse(job_id=job_id)

    @unary
    def GetMemoryJob(
        self, request: dream_pb2.GetMemoryJobRequest, principal: Principal
    ) -> dream_pb2.GetMemoryJobResponse:
        return dream_pb2.GetMemoryJobResponse(
            job=job_to_proto(self._memory.job(principal, request.job_id), principal)
        )

    @unary
    def GetEvent(
        self, request: dream_pb2.GetEventRequest, principal: Principal
    ) -> dream_pb2.GetEventResponse:
        event = self._memory.get_event(principal, event_id=request.event_id, scope=request.scope)
        return dream_pb2.GetEventResponse(event=event_to_proto(event, principal))

    @unary
    def UpdateEvent(
        self, request: dream_pb2.UpdateEventRequest, principal: Principal
    ) -> dream_pb2.UpdateEventResponse:
        event = self._memory.update_event(
            principal, event_id=request.event_id, scope=request.scope, text=request.text
        )
        return dream_pb2.UpdateEventResponse(event=event_to_proto(event, principal))

    @unary
    def DeleteEvent(
        self, request: dream_pb2.DeleteEventRequest, principal: Principal
    ) -> dream_pb2.DeleteEventResponse:
        event = self._memory.delete_event(principal, event_id=request.event_id, scope=request.scope)
        return dream_pb2.DeleteEventResponse(event=event_to_proto(event, principal))

    @unary
    def UndeleteEvent(
        self, request: dream_pb2.UndeleteEventRequest, principal: Principal
    ) -> dream_pb2.UndeleteEventResponse:
        event = self._memory.undelete_event(
            principal, event_id=request.event_id, scope=request.scope
        )
        return dream_pb2.UndeleteEventResponse(event=event_to_proto(event, principal))

    @unary
    def UpdateMemo(
        self, request: dream_pb2.UpdateMemoRequest, principal: Principal
    ) -> dream_pb2.UpdateMemoResponse:
        memo = self._memory.update_memo(
            principal,
            request_type=REQUEST_TYPES.name(request.request_type, "request_type"),
            user_id=request.user_id,
            group_id=request.group_id,
            scope=request.scope,
            job_id=request.job_id,
            text=request.text,
        )
        return dream_pb2.UpdateMemoResponse(memo=memo_to_proto(memo))

    @unary
    def DeleteMemo(
        self, request: dream_pb2.DeleteMemoRequest, principal: Principal
    ) -> dream_pb2.DeleteMemoResponse:
        job_id = self._memory.delete_memo(
            principal,
            request_type=REQUEST_TYPES.name(request.request_type, "request_type"),
            user_id=request.user_id,
            group_id=request.group_id,
            scope=request.scope,
            job_id=request.job_id,
        )
        return dream_pb2.DeleteMemoResponse(job_id=job_id)

    @unary
    def UpdateProfile(
        self, request: dream_pb2.UpdateProfileRequest, principal: Principal
    ) -> dream_pb2.UpdateProfileResponse:
        profile = self._memory.update_profile(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            entity_id=request.entity_id,
            scope=request.scope,
            mask=list(request.update_mask.paths),
            name=request.name,
            tags=list(request.tags),
            summary=request.summary,
        )
        return dream_pb2.UpdateProfileResponse(profile=profile_to_proto(profile, principal))

    @unary
    def DeleteProfile(
        self, request: dream_pb2.DeleteProfileRequest, principal: Principal
    ) -> dream_pb2.DeleteProfileResponse:
        profile = self._memory.delete_profile(
            principal,
            entity_type=ENTITY_TYPES.name(request.entity_type, "entity_type"),
            entity_id=request.entity_id,
            scope=request.scope,
        )
        return dream_pb2.DeleteProfileResponse(profile=profile_to_proto(profile, principal))
