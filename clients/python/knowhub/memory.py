"""`kh.memory`: seed 002's memory tools as methods (the dream service's memory RPCs).

    kh.memory.remember("answered a Python question", ["Alice likes asyncio"],
                       context={"user_id": "10001", "group_id": "20002"})
    hits = kh.memory.search_events("asyncio", target_group_id="20002")
    kh.memory.get_profile("user", "10001").markdown

Every method returns its result from `KnowHub` and an awaitable of it from
`AsyncKnowHub`. Request types are "group" / "private", entity types "user" / "group",
search modes "tool" / "auto".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowhub._transport import AsyncTransport, Transport
from knowhub.models import (
    EventHit,
    EventResults,
    FailedJob,
    FailedJobsPage,
    Memo,
    Profile,
    ProfileHit,
    ProfileRevision,
    RememberResult,
    TimeLike,
    to_timestamp,
)
from knowhub.v1 import dream_pb2, dream_pb2_grpc

_REQUEST_TYPES = {"group": dream_pb2.REQUEST_TYPE_GROUP,
                  "private": dream_pb2.REQUEST_TYPE_PRIVATE}
_ENTITY_TYPES = {"user": dream_pb2.ENTITY_TYPE_USER, "group": dream_pb2.ENTITY_TYPE_GROUP}
_MODES = {"tool": dream_pb2.SEARCH_MODE_TOOL, "auto": dream_pb2.SEARCH_MODE_AUTO}
_CONTEXT_KEYS = frozenset({"user_id", "group_id", "sender_id", "request_type",
                           "source_message", "recent_messages", "sender_name", "group_name",
                           "timestamp"})


def _choice(names: Mapping[str, int], value: str, what: str) -> int:
    if value not in names:
        raise ValueError(f"{what} must be one of {', '.join(names)}, not {value!r}")
    return names[value]


def _request_type(request_type: str | None, group_id: str) -> int:
    """The named request type, else group when a group is given, else private."""
    return _choice(_REQUEST_TYPES, request_type or ("group" if group_id else "private"),
                   "request_type")


def context_to_proto(context: Mapping[str, Any]) -> dream_pb2.MemoryContext:
    """Seed 002's context object: user_id, group_id, sender_id, request_type,
    source_message, recent_messages (plus sender_name, group_name, timestamp)."""
    unknown = set(context) - _CONTEXT_KEYS
    if unknown:
        raise ValueError(f"unknown context field(s): {', '.join(sorted(unknown))}")
    group_id = str(context.get("group_id") or "")
    return dream_pb2.MemoryContext(
        user_id=str(context.get("user_id") or ""), group_id=group_id,
        sender_id=str(context.get("sender_id") or ""),
        request_type=_request_type(context.get("request_type"), group_id),
        source_message=context.get("source_message") or "",
        recent_messages=list(context.get("recent_messages") or []),
        sender_name=context.get("sender_name") or "",
        group_name=context.get("group_name") or "",
        timestamp=to_timestamp(context.get("timestamp")))


def _events(response: dream_pb2.SearchEventsResponse) -> EventResults:
    results = EventResults(EventHit.from_proto(h) for h in response.hits)
    results.warnings = tuple(response.warnings)
    return results


def _failed_page(response: dream_pb2.ListFailedJobsResponse) -> FailedJobsPage:
    page = FailedJobsPage(FailedJob.from_proto(j) for j in response.jobs)
    page.next_page_token = response.next_page_token
    return page


def _profile(response: Any) -> Profile:
    return Profile.from_proto(response.profile)


class MemoryAPI:
    def __init__(self, transport: Transport | AsyncTransport) -> None:
        self._transport = transport
        self._stub = dream_pb2_grpc.DreamServiceStub(transport.channel)

    def remember(self, memo: str = "", observations: Sequence[str] | None = None, *,
                 context: Mapping[str, Any], force: bool = False,
                 scope: str | None = None, request_id: str | None = None) -> RememberResult:
        """Records the memo and hands the observations to the historian (seed 002's
        `end`); returns at once. `context` holds user_id (required), group_id, sender_id,
        request_type ("group" when a group_id is given, else "private"), source_message
        and recent_messages. With `request_id`, a retry records nothing and returns the
        first call's result."""
        request = dream_pb2.RememberRequest(
            memo=memo, observations=list(observations or []),
            context=context_to_proto(context), force=force, scope=scope or "",
            request_id=request_id or "")
        return self._transport.call(self._stub.Remember, request, RememberResult.from_proto)

    def recent_memos(self, *, user_id: str = "", group_id: str = "",
                     request_type: str | None = None, limit: int = 0,
                     scope: str | None = None) -> list[Memo]:
        """The conversation's last memos, oldest first (the group's when group_id is
        given, else the user's private one)."""
        request = dream_pb2.RecentMemosRequest(
            request_type=_request_type(request_type, group_id), user_id=user_id,
            group_id=group_id, limit=limit, scope=scope or "")
        return self._transport.call(self._stub.RecentMemos, request,
                                    lambda r: [Memo.from_proto(m) for m in r.memos])

    def search_events(self, query: str, target_user_id: str | None = None,
                      target_group_id: str | None = None, top_k: int | None = None,
                      time_from: TimeLike = None, time_to: TimeLike = None,
                      mode: str = "tool", scope: str | None = None) -> EventResults:
        """Seed 002's cognitive.search_events: isolated by group or user, time-filtered,
        reranked by time decay (`mode` "auto" for prompt injection)."""
        request = dream_pb2.SearchEventsRequest(
            query=query, target_user_id=target_user_id or "",
            target_group_id=target_group_id or "", top_k=top_k,
            time_from=to_timestamp(time_from), time_to=to_timestamp(time_to),
            mode=_choice(_MODES, mode, "mode"), scope=scope or "")
        return self._transport.call(self._stub.SearchEvents, request, _events)

    def get_profile(self, entity_type: str, entity_id: str,
                    scope: str | None = None) -> Profile:
        """Seed 002's cognitive.get_profile."""
        request = dream_pb2.GetProfileRequest(
            entity_type=_choice(_ENTITY_TYPES, entity_type, "entity_type"),
            entity_id=entity_id, scope=scope or "")
        return self._transport.call(self._stub.GetProfile, request, _profile)

    def search_profiles(self, query: str, entity_type: str | None = None,
                        top_k: int | None = None, scope: str | None = None) -> list[ProfileHit]:
        """Seed 002's cognitive.search_profiles."""
        request = dream_pb2.SearchProfilesRequest(
            query=query, top_k=top_k, scope=scope or "",
            entity_type=_choice(_ENTITY_TYPES, entity_type, "entity_type") if entity_type
            else dream_pb2.ENTITY_TYPE_UNSPECIFIED)
        return self._transport.call(self._stub.SearchProfiles, request,
                                    lambda r: [ProfileHit.from_proto(h) for h in r.hits])

    def profile_revisions(self, entity_type: str, entity_id: str,
                          scope: str | None = None) -> list[ProfileRevision]:
        """The profile's earlier revisions, newest first."""
        request = dream_pb2.ListProfileRevisionsRequest(
            entity_type=_choice(_ENTITY_TYPES, entity_type, "entity_type"),
            entity_id=entity_id, scope=scope or "")
        return self._transport.call(
            self._stub.ListProfileRevisions, request,
            lambda r: [ProfileRevision.from_proto(v) for v in r.revisions])

    def restore_profile(self, entity_type: str, entity_id: str, revision: int,
                        scope: str | None = None) -> Profile:
        """Makes an earlier revision current again (seed 002's level-2 rollback)."""
        request = dream_pb2.RestoreProfileRevisionRequest(
            entity_type=_choice(_ENTITY_TYPES, entity_type, "entity_type"),
            entity_id=entity_id, revision=revision, scope=scope or "")
        return self._transport.call(self._stub.RestoreProfileRevision, request, _profile)

    def failed_jobs(self, limit: int = 20, page_token: str = "") -> FailedJobsPage:
        """Historian jobs that failed past their retries, newest first."""
        request = dream_pb2.ListFailedJobsRequest(page_size=limit, page_token=page_token)
        return self._transport.call(self._stub.ListFailedJobs, request, _failed_page)

    def retry_failed_job(self, job_id: str) -> str:
        """Puts a failed job back on the historian queue; returns its id."""
        return self._transport.call(self._stub.RetryFailedJob,
                                    dream_pb2.RetryFailedJobRequest(job_id=job_id),
                                    lambda r: r.job_id)
