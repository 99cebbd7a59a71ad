# Generated from knowhub/_async/memory.py by `make sdk-sync`: edit that file, not this one.
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
from knowhub_contracts.v1 import dream_pb2, dream_pb2_grpc

from knowhub._requests.memory import (
    MODES,
    auto_inject_query,
    context_to_proto,
    entity_type_value,
    request_type_value,
)
from knowhub._transport import Transport
from knowhub.models.base import TimeLike, to_timestamp
from knowhub.models.memory import (
    CognitiveEvent,
    EventResults,
    EventsPage,
    FailedJobsPage,
    Memo,
    MemoryJob,
    Profile,
    ProfileHit,
    ProfileRevision,
    ProfilesPage,
    RememberResult,
)


class MemoryAPI:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._stub = dream_pb2_grpc.DreamServiceStub(transport.channel)

    def remember(
        self,
        memo: str = "",
        observations: Sequence[str] | None = None,
        *,
        context: Mapping[str, Any],
        force: bool = False,
        scope: str | None = None,
        request_id: str | None = None,
        wait: float = 0.0,
    ) -> RememberResult:
        """Records this turn's memo and hands the observations to the historian, which rewrites
        them into events that stand on their own (the memory_remember tool); returns at once,
        or with `wait` once the job is done or failed or the wait ends.

        Args:
            memo: What the agent did this turn, briefly (at most 4,000 characters).
            observations: Up to 20 new facts about the user or group, each its own event.
            context: The conversation: user_id (required), group_id, sender_id, request_type
                ("group" when a group_id is given, else "private"), source_message and
                recent_messages.
            force: Store a rewrite that fails the absolutization check.
            scope: The memory's scope; the caller's org scope, else its user scope, by default.
            request_id: An idempotency key: a retry records nothing and returns the first
                call's result.
            wait: Seconds (at most 60) to wait for the historian to finish the job.

        Returns:
            The memo's id and the historian job's id ("" when nothing was queued); with
            `wait`, the job as it stood when the wait ended (`result.job`).

        Raises:
            InvalidArgument: No user_id, too many or blank observations, or a wait over 60
                seconds; the message names the field.
            PermissionDenied: A scope the caller cannot see.
            FailedPrecondition: Memory is disabled on this hub (KNOWHUB_MEMORY_ENABLED=false).
        """
        timeout = Duration()
        timeout.FromNanoseconds(int(wait * 1e9))
        request = dream_pb2.RememberRequest(
            memo=memo,
            observations=list(observations or []),
            context=context_to_proto(context),
            force=force,
            scope=scope or "",
            request_id=request_id or "",
            wait_timeout=timeout,
        )
        return self._transport.call(
            self._stub.Remember,
            request,
            RememberResult.from_proto,
            timeout=self._transport.timeout + wait,
        )

    def job(self, job_id: str) -> MemoryJob:
        """A historian job as it progresses (follow what Remember queued).

        Args:
            job_id: The job_id Remember returned.

        Returns:
            Its state (pending, processing, done or failed, with the error), the events it
            wrote and what it decided for each observation (add, update, delete, noop).

        Raises:
            InvalidArgument: An empty job_id.
            NotFound: No such job in a scope the caller sees (or its status has expired).
        """
        return self._transport.call(
            self._stub.GetMemoryJob,
            dream_pb2.GetMemoryJobRequest(job_id=job_id),
            lambda r: MemoryJob.from_proto(r.job),
        )

    def recent_memos(
        self,
        *,
        user_id: str = "",
        group_id: str = "",
        request_type: str | None = None,
        limit: int = 0,
        scope: str | None = None,
    ) -> list[Memo]:
        """The conversation's last memos, oldest first (the memory_recent_memos tool).

        Args:
            user_id: The user, for a private conversation.
            group_id: The group, for a group conversation.
            request_type: "group" or "private"; "group" when group_id is given, else "private".
            limit: How many memos; the hub's KNOWHUB_MEMORY_RECENT_MEMOS_INJECT_K when 0.
            scope: The memory's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The memos, oldest first.

        Raises:
            InvalidArgument: A private request without user_id, or a group one without group_id.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.RecentMemosRequest(
            request_type=request_type_value(request_type, group_id),
            user_id=user_id,
            group_id=group_id,
            limit=limit,
            scope=scope or "",
        )
        return self._transport.call(
            self._stub.RecentMemos, request, lambda r: [Memo.from_proto(m) for m in r.memos]
        )

    def search_events(
        self,
        query: str,
        target_user_id: str | None = None,
        target_group_id: str | None = None,
        top_k: int | None = None,
        time_from: TimeLike = None,
        time_to: TimeLike = None,
        mode: str = "tool",
        scope: str | None = None,
        include_history: bool = False,
    ) -> EventResults:
        """Searches the events the historian stored (the memory_search_events tool), isolated by
        user or group, filtered by time, reranked by time decay.

        Args:
            query: The search text (required, at most 2,000 characters).
            target_user_id: Only this user's events (with target_group_id: what the user said
                in that group).
            target_group_id: Only this group's events.
            top_k: How many hits, 1 to 100; 12 in "tool" mode and 3 in "auto" mode by default.
            time_from: Only events at or after this time (datetime, ISO 8601 or epoch seconds).
            time_to: Only events at or before this time.
            mode: "tool" (an agent's explicit search) or "auto" (injection into a prompt).
            scope: Search only this scope; every scope the caller can see by default.
            include_history: Also return superseded events (facts a newer one replaced).

        Returns:
            The hits, best first, each with its event and score.

        Raises:
            InvalidArgument: An empty query, or top_k or mode out of range.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.SearchEventsRequest(
            query=query,
            target_user_id=target_user_id or "",
            target_group_id=target_group_id or "",
            top_k=top_k,
            time_from=to_timestamp(time_from),
            time_to=to_timestamp(time_to),
            mode=MODES.proto_name(mode, "mode"),
            scope=scope or "",
            include_history=include_history,
        )
        return self._transport.call(self._stub.SearchEvents, request, EventResults.from_proto)

    def list_events(
        self,
        target_user_id: str | None = None,
        target_group_id: str | None = None,
        time_from: TimeLike = None,
        time_to: TimeLike = None,
        scope: str | None = None,
        limit: int = 20,
        page_token: str = "",
        include_history: bool = False,
    ) -> EventsPage:
        """Current events newest first without a query, isolated as in `search_events` (a
        user's, a group's, or with neither every event of the scopes) and time-filtered.

        Args:
            target_user_id: Only this user's events (with target_group_id: what the user said
                in that group).
            target_group_id: Only this group's events.
            time_from: Only events at or after this time (datetime, ISO 8601 or epoch seconds).
            time_to: Only events at or before this time.
            scope: List only this scope; every scope the caller can see by default.
            limit: How many events a page holds, 1 to 100.
            page_token: The `next_page_token` of the previous page; "" for the first.
            include_history: Also list superseded events (facts a newer one replaced).

        Returns:
            One page of events, newest first, and `next_page_token` ("" after the last).

        Raises:
            InvalidArgument: A limit out of range, an invalid id, time_from after time_to,
                or a page token this listing did not give.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.ListEventsRequest(
            target_user_id=target_user_id or "",
            target_group_id=target_group_id or "",
            time_from=to_timestamp(time_from),
            time_to=to_timestamp(time_to),
            scope=scope or "",
            page_size=limit,
            page_token=page_token,
            include_history=include_history,
        )
        return self._transport.call(self._stub.ListEvents, request, EventsPage.from_proto)

    def search_for_prompt(
        self,
        question: str,
        context: Mapping[str, Any],
        *,
        mentioned: bool = False,
        top_k: int | None = None,
        scope: str | None = None,
        language: str | None = None,
    ) -> EventResults:
        """Automatic injection: the events to put into this turn's prompt. The query is the
        current `<message><content>` of `question` (else all of it), with a line of context
        when it is short; the search runs in "auto" mode within the conversation of `context`
        (its group, else its user).

        Args:
            question: The turn's input as the agent received it.
            context: The conversation, as in `remember` (user_id, group_id, ...).
            mentioned: Whether the agent was mentioned in a group message.
            top_k: How many hits; 3 by default in "auto" mode.
            scope: Search only this scope; every scope the caller can see by default.
            language: The language of the context line ("zh" or "en"); KNOWHUB_LANGUAGE by default.

        Returns:
            The hits, best first.

        Raises:
            InvalidArgument: As in `search_events`.
            PermissionDenied: A scope the caller cannot see.
        """
        query = auto_inject_query(question, context, mentioned=mentioned, language_name=language)
        group_id = str(context.get("group_id") or "")
        return self.search_events(
            query,
            target_group_id=group_id or None,
            target_user_id=None if group_id else str(context.get("user_id") or "") or None,
            top_k=top_k,
            mode="auto",
            scope=scope,
        )

    def get_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """One event in any state: current, superseded, or deleted until it is purged.

        Args:
            event_id: The event's id (`{job_id}_{index}_{perspective}`).
            scope: The event's scope; any scope the caller sees by default.

        Returns:
            The event, with its state and supersession times and links.

        Raises:
            NotFound: No such event in a scope the caller sees.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.GetEventRequest(event_id=event_id, scope=scope or "")
        return self._transport.call(
            self._stub.GetEvent, request, lambda r: CognitiveEvent.from_proto(r.event)
        )

    def update_event(self, event_id: str, text: str, scope: str | None = None) -> CognitiveEvent:
        """Corrects an event's text; every perspective's copy of it follows.

        Args:
            event_id: Any copy of the event.
            text: The corrected text (1-2,000 characters), stored as written.
            scope: The event's scope; any scope the caller sees by default.

        Returns:
            The copy named, with its new text and edited_at.

        Raises:
            InvalidArgument: An empty or too long text.
            NotFound: No such event in a scope the caller sees.
            PermissionDenied: Not the caller that remembered it, nor an admin.
            FailedPrecondition: The event is deleted (undelete it first).
        """
        request = dream_pb2.UpdateEventRequest(event_id=event_id, text=text, scope=scope or "")
        return self._transport.call(
            self._stub.UpdateEvent, request, lambda r: CognitiveEvent.from_proto(r.event)
        )

    def delete_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """Deletes an event and its copies; undelete_event brings it back until purge_at.

        Args:
            event_id: Any copy of the event.
            scope: The event's scope; any scope the caller sees by default.

        Returns:
            The copy named, in state deleted, with deleted_at and purge_at.

        Raises:
            NotFound: No such event in a scope the caller sees.
            PermissionDenied: Not the caller that remembered it, nor an admin.
        """
        request = dream_pb2.DeleteEventRequest(event_id=event_id, scope=scope or "")
        return self._transport.call(
            self._stub.DeleteEvent, request, lambda r: CognitiveEvent.from_proto(r.event)
        )

    def undelete_event(self, event_id: str, scope: str | None = None) -> CognitiveEvent:
        """Undoes a delete within the retention window.

        Args:
            event_id: Any copy of the deleted event.
            scope: The event's scope; any scope the caller sees by default.

        Returns:
            The copy named, current again (or superseded, if it was).

        Raises:
            NotFound: No such event (or it was purged).
            PermissionDenied: Not the caller that remembered it, nor an admin.
            FailedPrecondition: The event is not deleted.
        """
        request = dream_pb2.UndeleteEventRequest(event_id=event_id, scope=scope or "")
        return self._transport.call(
            self._stub.UndeleteEvent, request, lambda r: CognitiveEvent.from_proto(r.event)
        )

    def update_memo(
        self,
        job_id: str,
        text: str,
        *,
        user_id: str = "",
        group_id: str = "",
        request_type: str | None = None,
        scope: str | None = None,
    ) -> Memo:
        """Corrects a memo of a conversation's short-term list.

        Args:
            job_id: The job the memo was remembered with (Memo.job_id).
            text: The new text (1-4,000 characters).
            user_id: The user, for a private conversation.
            group_id: The group, for a group conversation.
            request_type: "group" or "private"; "group" when group_id is given.
            scope: The memo's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The memo, with edited_at.

        Raises:
            InvalidArgument: An empty text, or a conversation without its id.
            NotFound: The conversation holds no memo of that job.
            PermissionDenied: Not the caller that remembered it, nor an admin.
        """
        request = dream_pb2.UpdateMemoRequest(
            request_type=request_type_value(request_type, group_id),
            user_id=user_id,
            group_id=group_id,
            scope=scope or "",
            job_id=job_id,
            text=text,
        )
        return self._transport.call(
            self._stub.UpdateMemo, request, lambda r: Memo.from_proto(r.memo)
        )

    def delete_memo(
        self,
        job_id: str,
        *,
        user_id: str = "",
        group_id: str = "",
        request_type: str | None = None,
        scope: str | None = None,
    ) -> str:
        """Removes a memo from a conversation's short-term list.

        Args:
            job_id: The job the memo was remembered with (Memo.job_id).
            user_id: The user, for a private conversation.
            group_id: The group, for a group conversation.
            request_type: "group" or "private"; "group" when group_id is given.
            scope: The memo's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The job_id of the memo removed.

        Raises:
            NotFound: The conversation holds no memo of that job.
            PermissionDenied: Not the caller that remembered it, nor an admin.
        """
        request = dream_pb2.DeleteMemoRequest(
            request_type=request_type_value(request_type, group_id),
            user_id=user_id,
            group_id=group_id,
            scope=scope or "",
            job_id=job_id,
        )
        return self._transport.call(self._stub.DeleteMemo, request, lambda r: r.job_id)

    def update_profile(
        self,
        entity_type: str,
        entity_id: str,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        summary: str | None = None,
        scope: str | None = None,
    ) -> Profile:
        """Edits a profile: the fields given are set, the others stay; the replaced
        revision is kept.

        Args:
            entity_type: "user" or "group".
            entity_id: The user's or group's id.
            name: The new name, if given.
            tags: The new tags (replacing the old ones), if given.
            summary: The new Markdown body, if given.
            scope: The profile's scope; the caller's org scope, else its user scope.

        Returns:
            The new current profile (reason "edit by user:ID").

        Raises:
            InvalidArgument: No field given, or one out of its limits.
            NotFound: No such profile in the scope.
            PermissionDenied: A scope the caller cannot see.
        """
        given = {"name": name, "tags": tags, "summary": summary}
        request = dream_pb2.UpdateProfileRequest(
            entity_type=entity_type_value(entity_type),
            entity_id=entity_id,
            scope=scope or "",
            name=name or "",
            tags=list(tags or []),
            summary=summary or "",
            update_mask=FieldMask(paths=[k for k, v in given.items() if v is not None]),
        )
        return self._transport.call(
            self._stub.UpdateProfile, request, lambda r: Profile.from_proto(r.profile)
        )

    def delete_profile(self, entity_type: str, entity_id: str, scope: str | None = None) -> Profile:
        """Deletes a profile with its kept revisions.

        Args:
            entity_type: "user" or "group".
            entity_id: The user's or group's id.
            scope: The profile's scope; the caller's org scope, else its user scope.

        Returns:
            The profile as it was.

        Raises:
            NotFound: No such profile in the scope.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.DeleteProfileRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or ""
        )
        return self._transport.call(
            self._stub.DeleteProfile, request, lambda r: Profile.from_proto(r.profile)
        )

    def get_profile(self, entity_type: str, entity_id: str, scope: str | None = None) -> Profile:
        """The profile of a user or a group (the memory_get_profile tool).

        Args:
            entity_type: "user" or "group".
            entity_id: The user's or group's id.
            scope: The memory's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The profile, with its Markdown text.

        Raises:
            NotFound: No profile of this entity in the scope.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.GetProfileRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or ""
        )
        return self._transport.call(
            self._stub.GetProfile, request, lambda r: Profile.from_proto(r.profile)
        )

    def search_profiles(
        self,
        query: str,
        entity_type: str | None = None,
        top_k: int | None = None,
        scope: str | None = None,
    ) -> list[ProfileHit]:
        """Profiles by relevance to a query (the memory_search_profiles tool).

        Args:
            query: The search text (required, at most 2,000 characters).
            entity_type: Only "user" or only "group" profiles; both when None.
            top_k: How many hits, 1 to 100; KNOWHUB_MEMORY_PROFILE_TOP_K by default.
            scope: Search only this scope; every scope the caller can see by default.

        Returns:
            The hits, best first, each with its profile and score.

        Raises:
            InvalidArgument: An empty query or top_k out of range.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.SearchProfilesRequest(
            query=query, top_k=top_k, scope=scope or "", entity_type=entity_type_value(entity_type)
        )
        return self._transport.call(
            self._stub.SearchProfiles, request, lambda r: [ProfileHit.from_proto(h) for h in r.hits]
        )

    def list_profiles(
        self,
        entity_type: str | None = None,
        scope: str | None = None,
        limit: int = 20,
        page_token: str = "",
    ) -> ProfilesPage:
        """The profiles of the scopes the caller sees, without a query.

        Args:
            entity_type: Only "user" or only "group" profiles; both when None.
            scope: List only this scope; every scope the caller can see by default.
            limit: How many profiles a page holds, 1 to 100.
            page_token: The `next_page_token` of the previous page; "" for the first.

        Returns:
            One page of profiles and `next_page_token` ("" after the last).

        Raises:
            InvalidArgument: An unknown entity type, a limit out of range, or a page token
                this listing did not give.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.ListProfilesRequest(
            entity_type=entity_type_value(entity_type),
            scope=scope or "",
            page_size=limit,
            page_token=page_token,
        )
        return self._transport.call(self._stub.ListProfiles, request, ProfilesPage.from_proto)

    def profile_revisions(
        self, entity_type: str, entity_id: str, scope: str | None = None
    ) -> list[ProfileRevision]:
        """The earlier revisions of a profile, kept when the historian rewrote it.

        Args:
            entity_type: "user" or "group".
            entity_id: The user's or group's id.
            scope: The memory's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The revisions, newest first.

        Raises:
            NotFound: No profile of this entity in the scope.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.ListProfileRevisionsRequest(
            entity_type=entity_type_value(entity_type), entity_id=entity_id, scope=scope or ""
        )
        return self._transport.call(
            self._stub.ListProfileRevisions,
            request,
            lambda r: [ProfileRevision.from_proto(v) for v in r.revisions],
        )

    def restore_profile(
        self, entity_type: str, entity_id: str, revision: int, scope: str | None = None
    ) -> Profile:
        """Makes an earlier revision of a profile current again (the current one is kept as a
        revision).

        Args:
            entity_type: "user" or "group".
            entity_id: The user's or group's id.
            revision: The revision to restore, as `profile_revisions` lists it.
            scope: The memory's scope; the caller's org scope, else its user scope, by default.

        Returns:
            The profile as restored.

        Raises:
            NotFound: No such profile, or the revision is no longer kept.
            PermissionDenied: A scope the caller cannot see.
        """
        request = dream_pb2.RestoreProfileRevisionRequest(
            entity_type=entity_type_value(entity_type),
            entity_id=entity_id,
            revision=revision,
            scope=scope or "",
        )
        return self._transport.call(
            self._stub.RestoreProfileRevision, request, lambda r: Profile.from_proto(r.profile)
        )

    def failed_jobs(self, limit: int = 20, page_token: str = "") -> FailedJobsPage:
        """Historian jobs that failed past their retries, newest first (every one for an admin,
        else those of scopes the caller can see).

        Args:
            limit: Jobs per page, 1 to 100.
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of failed jobs, with their errors, and its `next_page_token`.

        Raises:
            InvalidArgument: A limit out of range or a stale page_token.
        """
        request = dream_pb2.ListFailedJobsRequest(page_size=limit, page_token=page_token)
        return self._transport.call(self._stub.ListFailedJobs, request, FailedJobsPage.from_proto)

    def retry_failed_job(self, job_id: str) -> str:
        """Puts a failed historian job back on the queue.

        Args:
            job_id: A job id from `failed_jobs`.

        Returns:
            The job's id.

        Raises:
            NotFound: No failed job with this id that the caller can see.
        """
        return self._transport.call(
            self._stub.RetryFailedJob,
            dream_pb2.RetryFailedJobRequest(job_id=job_id),
            lambda r: r.job_id,
        )
