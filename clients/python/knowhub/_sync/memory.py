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
    EventResults,
    FailedJobsPage,
    Memo,
    Profile,
    ProfileHit,
    ProfileRevision,
    RememberResult,
)
from knowhub.v1 import dream_pb2, dream_pb2_grpc


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
    ) -> RememberResult:
        """Records this turn's memo and hands the observations to the historian, which rewrites
        them into events that stand on their own (the memory_remember tool); returns at once.

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

        Returns:
            The memo's id and the historian job's id ("" when nothing was queued).

        Raises:
            InvalidArgument: No user_id, or too many or blank observations; the message
                names the field.
            PermissionDenied: A scope the caller cannot see.
            FailedPrecondition: Memory is disabled on this hub (KNOWHUB_MEMORY_ENABLED=false).
        """
        request = dream_pb2.RememberRequest(
            memo=memo,
            observations=list(observations or []),
            context=context_to_proto(context),
            force=force,
            scope=scope or "",
            request_id=request_id or "",
        )
        return self._transport.call(self._stub.Remember, request, RememberResult.from_proto)

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
        )
        return self._transport.call(self._stub.SearchEvents, request, EventResults.from_proto)

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
