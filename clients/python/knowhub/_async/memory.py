"""`kh.memory`: the memory tools as methods (the dream service's memory RPCs).

    kh.memory.remember("answered a Python question", ["Alice likes asyncio"],
                       context={"user_id": "10001", "group_id": "20002"})
    hits = kh.memory.search_events("asyncio", target_group_id="20002")
    kh.memory.get_profile("user", "10001").markdown

Request types are "group" / "private", entity types "user" / "group", search modes
"tool" / "auto".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.field_mask_pb2 import FieldMask

from knowhub._requests.memory import (
    MODES,
    auto_inject_query,
    context_to_proto,
    entity_type_value,
    request_type_value,
)
from knowhub._transport import AsyncTransport
from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.memory import (
    CognitiveEvent,
    EventResults,
    FailedJobsPage,
    Memo,
    MemoryJob,
    Profile,
    ProfileHit,
    ProfileRevision,
    RememberResult,
)
from knowhub.v1 import dream_pb2, dream_pb2_grpc


class AsyncMemoryAPI:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport
        self._stub = dream_pb2_grpc.DreamServiceStub(transport.channel)

    async def remember(self, memo: str = "", observations: Sequence[str] | None = None, *,
                       context: Mapping[str, Any], force: bool = False,
                       scope: str | None = None, request_id: str | None = None,
                       wait: float = 0.0) -> RememberResult:
        """Records the memo and hands the observations to the historian; returns at once,
        or with `wait` (seconds, at most 60) when the job is done or failed or the wait
        ends (`result.job` tells which). `context` holds user_id (required), group_id,
        sender_id, request_type ("group" when a group_id is given, else "private"),
        source_message and recent_messages. With `request_id`, a retry records nothing and
        returns the first call's result."""
        timeout = Duration()
        timeout.FromNanoseconds(int(wait * 1e9))
        request = dream_pb2.RememberRequest(
            memo=memo, observations=list(observations or []),
            context=context_to_proto(context), force=force, scope=scope or "",
            request_id=request_id or "", wait_timeout=timeout)
        return await self._transport.call(self._stub.Remember, request,
                                          RememberResult.from_proto,
                                          timeout=self._transport.timeout + wait)

    async def job(self, job_id: str) -> MemoryJob:
        """A historian job's state (pending, processing, done, failed), the events it
        wrote and what it decided for each observation."""
        return await self._transport.call(
            self._stub.GetMemoryJob, dream_pb2.GetMemoryJobRequest(job_id=job_id),
            lambda r: MemoryJob.from_proto(r.job))

    async def recent_memos(self, *, user_id: str = "", group_id: str = "",
                           request_type: str | None = None, limit: int = 0,
                           scope: str | None = None) -> list[Memo]:
        """The conversation's last memos, oldest first (the group's when group_id is
        given, else the user's private one)."""
        request = dream_pb2.RecentMemosRequest(
            request_type=request_type_value(request_type, group_id), user_id=user_id,
            group_id=group_id, limit=limit, scope=scope or "")
        return await self._transport.call(self._stub.RecentMemos, request,
                                          lambda r: [Memo.from_proto(m) for m in r.memos])

    async def search_events(self, query: str, target_user_id: str | None = None,
                            target_group_id: str | None = None, top_k: int | None = None,
                            time_from: TimeLike = None, time_to: TimeLike = None,
                            mode: str = "tool", scope: str | None = None,
                            include_history: bool = False) -> EventResults:
        """Current cognitive events (with `include_history`, superseded ones too)
        isolated by group or user, time-filtered, reranked by time decay (`mode` "auto"
        for prompt injection)."""
        request = dream_pb2.SearchEventsRequest(
            query=query, target_user_id=target_user_id or "",
            target_group_id=target_group_id or "", top_k=top_k,
            time_from=to_timestamp(time_from), time_to=to_timestamp(time_to),
            mode=MODES.proto_name(mode, "mode"), scope=scope or "",
            include_history=include_history)
        return await self._transport.call(self._stub.SearchEvents, request,
                                          EventResults.from_proto)

    async def search_for_prompt(self, question: str, context: Mapping[str, Any], *,
                                mentioned: bool = False, top_k: int | None = None,
                                scope: str | None = None,
                                language: str | None = None) -> EventResults:
        """Automatic injection: the events to put in this turn's prompt. The
        query is the current <message><content> of `question` (else all of it), with a
        line of context when it is short (`auto_inject_query`); the search is in auto
        mode, within the conversation of `context` (its group, else its user)."""
        query = auto_inject_query(question, context, mentioned=mentioned,
                                  language_name=language)
        group_id = str(context.get("group_id") or "")
        return await self.search_events(
            query, target_group_id=group_id or None,
            target_user_id=None if group_id else str(context.get("user_id") or "") or None,
            top_k=top_k, mode="auto", scope=scope)

    async def get_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """One event in any state (current, superseded, deleted until purged)."""
        request = dream_pb2.GetEventRequest(event_id=event_id, scope=scope or "")
        return await self._transport.call(self._stub.GetEvent, request,
                                          lambda r: CognitiveEvent.from_proto(r.event))

    async def update_event(self, event_id: str, text: str,
                           scope: str | None = None) -> CognitiveEvent:
        """Corrects an event's text (every perspective's copy); only its rememberer or
        an admin."""
        request = dream_pb2.UpdateEventRequest(event_id=event_id, text=text, scope=scope or "")
        return await self._transport.call(self._stub.UpdateEvent, request,
                                          lambda r: CognitiveEvent.from_proto(r.event))

    async def delete_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """Deletes an event (and its copies); `undelete_event` brings it back until
        `purge_at`."""
        request = dream_pb2.DeleteEventRequest(event_id=event_id, scope=scope or "")
        return await self._transport.call(self._stub.DeleteEvent, request,
                                          lambda r: CognitiveEvent.from_proto(r.event))

    async def undelete_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """Undoes a delete within the retention window."""
        request = dream_pb2.UndeleteEventRequest(event_id=event_id, scope=scope or "")
        return await self._transport.call(self._stub.UndeleteEvent, request,
                                          lambda r: CognitiveEvent.from_proto(r.event))

    async def update_memo(self, job_id: str, text: str, *, user_id: str = "",
                          group_id: str = "", request_type: str | None = None,
                          scope: str | None = None) -> Memo:
        """Corrects the memo of `job_id` in the conversation (the group's when group_id
        is given, else the user's)."""
        request = dream_pb2.UpdateMemoRequest(
            request_type=request_type_value(request_type, group_id), user_id=user_id,
            group_id=group_id, scope=scope or "", job_id=job_id, text=text)
        return await self._transport.call(self._stub.UpdateMemo, request,
                                          lambda r: Memo.from_proto(r.memo))

    async def delete_memo(self, job_id: str, *, user_id: str = "", group_id: str = "",
                          request_type: str | None = None, scope: str | None = None) -> str:
        """Removes the memo of `job_id` from the conversation's short-term list."""
        request = dream_pb2.DeleteMemoRequest(
            request_type=request_type_value(request_type, group_id), user_id=user_id,
            group_id=group_id, scope=scope or "", job_id=job_id)
        return await self._transport.call(self._stub.DeleteMemo, request,
                                          lambda r: r.job_id)

    async def update_profile(self, entity_type: str, entity_id: str, *,
                             name: str | None = None, tags: Sequence[str] | None = None,
                             summary: str | None = None,
                             scope: str | None = None) -> Profile:
        """Sets the given fields of a profile (the others stay); the replaced revision
        is kept."""
        given = {"name": name, "tags": tags, "summary": summary}
        request = dream_pb2.UpdateProfileRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id,
            scope=scope or "", name=name or "", tags=list(tags or []), summary=summary or "",
            update_mask=FieldMask(paths=[k for k, v in given.items() if v is not None]))
        return await self._transport.call(self._stub.UpdateProfile, request,
                                          lambda r: Profile.from_proto(r.profile))

    async def delete_profile(self, entity_type: str, entity_id: str,
                             scope: str | None = None) -> Profile:
        """Deletes a profile with its revisions; returns it as it was."""
        request = dream_pb2.DeleteProfileRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or "")
        return await self._transport.call(self._stub.DeleteProfile, request,
                                          lambda r: Profile.from_proto(r.profile))

    async def get_profile(self, entity_type: str, entity_id: str,
                          scope: str | None = None) -> Profile:
        """The profile of a user or a group."""
        request = dream_pb2.GetProfileRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or "")
        return await self._transport.call(self._stub.GetProfile, request,
                                          lambda r: Profile.from_proto(r.profile))

    async def search_profiles(self, query: str, entity_type: str | None = None,
                              top_k: int | None = None,
                              scope: str | None = None) -> list[ProfileHit]:
        """Profiles by relevance to `query`, of one entity type or both."""
        request = dream_pb2.SearchProfilesRequest(
            query=query, top_k=top_k, scope=scope or "", entity_type=entity_type_value(entity_type))
        return await self._transport.call(self._stub.SearchProfiles, request,
                                          lambda r: [ProfileHit.from_proto(h) for h in r.hits])

    async def profile_revisions(self, entity_type: str, entity_id: str,
                                scope: str | None = None) -> list[ProfileRevision]:
        """The profile's earlier revisions, newest first."""
        request = dream_pb2.ListProfileRevisionsRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or "")
        return await self._transport.call(
            self._stub.ListProfileRevisions, request,
            lambda r: [ProfileRevision.from_proto(v) for v in r.revisions])

    async def restore_profile(self, entity_type: str, entity_id: str, revision: int,
                              scope: str | None = None) -> Profile:
        """Makes an earlier revision current again."""
        request = dream_pb2.RestoreProfileRevisionRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, revision=revision,
            scope=scope or "")
        return await self._transport.call(self._stub.RestoreProfileRevision, request,
                                          lambda r: Profile.from_proto(r.profile))

    async def failed_jobs(self, limit: int = 20, page_token: str = "") -> FailedJobsPage:
        """Historian jobs that failed past their retries, newest first."""
        request = dream_pb2.ListFailedJobsRequest(page_size=limit, page_token=page_token)
        return await self._transport.call(self._stub.ListFailedJobs, request,
                                          FailedJobsPage.from_proto)

    async def retry_failed_job(self, job_id: str) -> str:
        """Puts a failed job back on the historian queue; returns its id."""
        return await self._transport.call(
            self._stub.RetryFailedJob, dream_pb2.RetryFailedJobRequest(job_id=job_id),
            lambda r: r.job_id)
