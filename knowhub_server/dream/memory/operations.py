"""The memory's use cases (seed 002): remember, recent memos, event and profile search,
profile revisions, the failed historian jobs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from knowhub_server.common import validation as check
from knowhub_server.common.auth import Principal
from knowhub_server.common.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from knowhub_server.common.forget import forget_subject, subject_parts
from knowhub_server.common.redis_store import reachable
from knowhub_server.common.times import now
from knowhub_server.dream.memory.config import MemorySettings
from knowhub_server.dream.memory.domain import (
    DEFAULT_PAGE_SIZE,
    PAGE_SIZE_MAX,
    CognitiveEvent,
    Context,
    FailedJob,
    Job,
    Memo,
    Profile,
    ProfileRecord,
    ProfileRevision,
    conversation,
    decayed_score,
    isolation,
    memory_scope,
    new_job_id,
    restored_profile,
    searched_scopes,
    truncated_context,
    validate_conversation,
    validate_entity_type,
    validate_id,
    validate_query,
    validate_remember,
    validate_request_id,
)
from knowhub_server.dream.memory.queue import HistorianQueue
from knowhub_server.dream.memory.store import EventStore, ProfileStore, event_where, profile_where

TOOL, AUTO = "tool", "auto"


@dataclass
class RememberResult:
    job_id: str = ""
    enqueued: bool = False
    memo_recorded: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(vars(self))

    @classmethod
    def from_json(cls, raw: str) -> RememberResult:
        return cls(**json.loads(raw))


@dataclass
class EventHit:
    event: CognitiveEvent
    similarity: float
    score: float


@dataclass
class EventSearch:
    hits: list[EventHit]
    warnings: list[str]


class MemoryOperations:
    def __init__(self, queue: HistorianQueue, events: EventStore, profiles: ProfileStore,
                 settings: MemorySettings, on_enqueue: Callable[[], None]) -> None:
        self._queue = queue
        self._events = events
        self._profiles = profiles
        self._settings = settings
        self._on_enqueue = on_enqueue

    # -- short-term memory and the historian queue --

    def remember(self, principal: Principal, *, memo: str, observations: list[str],
                 context: Context, force: bool, scope: str,
                 request_id: str = "") -> RememberResult:
        """Records the memo and enqueues its historian job; a replayed request_id (same
        caller, within the TTL) returns the first call's result and records nothing."""
        self._require_enabled()
        at = now()
        validate_remember(memo, observations, context, at)
        validate_request_id(request_id)
        scope = memory_scope(principal, scope)
        settings = self._settings
        context, warnings = truncated_context(
            context, source_max=settings.historian_source_message_max_len,
            recent_k=settings.historian_recent_messages_inject_k,
            line_max=settings.historian_recent_message_line_max_len)
        if not memo.strip() and not observations:
            return RememberResult(warnings=warnings)
        job = Job(job_id=new_job_id(), scope=scope, context=context, memo=memo,
                  observations=list(observations), force=force, created_at=at,
                  written_by=principal.user_scope)
        note = Memo(text=memo, created_at=at, sender_id=context.sender_id or context.user_id,
                    job_id=job.job_id) if memo.strip() else None
        result = RememberResult(job.job_id, True, note is not None, warnings)
        with reachable("remember"):
            first = self._queue.remember(
                job, note, request_id=request_id, response=result.to_json(),
                request_ttl_seconds=settings.memory_remember_request_ttl_hours * 3600)
        if first is not None:
            return RememberResult.from_json(first)
        self._on_enqueue()
        return result

    def recent_memos(self, principal: Principal, *, request_type: str, user_id: str,
                     group_id: str, limit: int, scope: str) -> list[Memo]:
        self._require_enabled()
        validate_conversation(request_type, user_id, group_id)
        keep = self._settings.memory_recent_memos_keep
        check.int_range(limit, "limit", 0, keep)
        scope = memory_scope(principal, scope)
        limit = limit or self._settings.memory_recent_memos_inject_k
        if not limit:
            return []
        with reachable("recent memos"):
            return self._queue.recent_memos(
                scope, conversation(request_type, user_id, group_id), min(limit, keep))

    # -- events --

    def search_events(self, principal: Principal, *, query: str, target_user_id: str,
                      target_group_id: str, top_k: int | None, time_from: float | None,
                      time_to: float | None, mode: str, scope: str) -> EventSearch:
        self._require_enabled()
        settings = self._settings
        if top_k is None:
            top_k = settings.memory_auto_top_k if mode == AUTO \
                else settings.memory_tool_default_top_k
        validate_query(query, top_k)
        validate_id(target_user_id, "target_user_id", required=False)
        validate_id(target_group_id, "target_group_id", required=False)
        warnings = []
        if time_from is not None and time_to is not None and time_from > time_to:
            time_from, time_to = time_to, time_from
            warnings.append("time_from was after time_to; they were swapped")
        scopes = searched_scopes(principal, scope)
        where = event_where(scopes, isolation(target_user_id, target_group_id), time_from,
                            time_to)
        multiplier = settings.memory_rerank_candidate_multiplier
        rerank = settings.memory_time_decay_enabled and multiplier >= 2
        recalled = self._events.recall(query, where, top_k * multiplier if rerank else top_k)
        half_life = settings.memory_time_decay_half_life_days_auto if mode == AUTO \
            else settings.memory_time_decay_half_life_days_tool
        current = time.time()
        scored = sorted(((decayed_score(
            c.similarity, current - c.timestamp, half_life_days=half_life,
            boost=settings.memory_time_decay_boost,
            min_similarity=settings.memory_time_decay_min_similarity) if rerank
            else c.similarity, c) for c in recalled), key=lambda s: (-s[0], -s[1].timestamp))
        hits = [EventHit(c.event, c.similarity, score) for score, c in scored[:top_k]]
        return EventSearch(hits, warnings)

    def list_events(self, principal: Principal, *, target_user_id: str, target_group_id: str,
                    time_from: float | None, time_to: float | None, scope: str,
                    page_size: int, page_token: str) -> tuple[list[CognitiveEvent], str]:
        self._require_enabled()
        validate_id(target_user_id, "target_user_id", required=False)
        validate_id(target_group_id, "target_group_id", required=False)
        page_size = page_size or DEFAULT_PAGE_SIZE
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if time_from is not None and time_to is not None and time_from > time_to:
            raise InvalidArgument("time_from", "is after time_to")
        where = event_where(searched_scopes(principal, scope),
                            isolation(target_user_id, target_group_id), time_from, time_to)
        return self._events.page(where, page_size, page_token)

    # -- profiles --

    def get_profile(self, principal: Principal, *, entity_type: str, entity_id: str,
                    scope: str) -> Profile:
        return self._profile_record(principal, entity_type, entity_id, scope).profile

    def search_profiles(self, principal: Principal, *, query: str, entity_type: str,
                        top_k: int | None, scope: str) -> list[tuple[Profile, float]]:
        self._require_enabled()
        top_k = self._settings.memory_profile_top_k if top_k is None else top_k
        validate_query(query, top_k)
        if entity_type:
            validate_entity_type(entity_type, "entity_type")
        where = profile_where(searched_scopes(principal, scope), entity_type)
        return self._profiles.recall(query, where, top_k)

    def list_profiles(self, principal: Principal, *, entity_type: str, scope: str,
                      page_size: int, page_token: str) -> tuple[list[Profile], str]:
        self._require_enabled()
        if entity_type:
            validate_entity_type(entity_type, "entity_type")
        page_size = page_size or DEFAULT_PAGE_SIZE
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        where = profile_where(searched_scopes(principal, scope), entity_type)
        return self._profiles.page(where, page_size, page_token)

    def profile_revisions(self, principal: Principal, *, entity_type: str, entity_id: str,
                          scope: str) -> list[ProfileRevision]:
        return self._profile_record(principal, entity_type, entity_id, scope).revisions

    def restore_profile(self, principal: Principal, *, entity_type: str, entity_id: str,
                        scope: str, revision: int) -> Profile:
        """Makes an earlier revision current; the one it replaces becomes a revision."""
        if revision < 1:
            raise InvalidArgument("revision", "is required: a revision number from "
                                  "ListProfileRevisions")
        current = self._profile_record(principal, entity_type, entity_id, scope)
        keep = self._settings.memory_profile_revision_keep

        def change(record: ProfileRecord) -> ProfileRecord:
            earlier = next((r.profile for r in record.revisions
                            if r.profile.revision == revision), None)
            if earlier is None:
                raise NotFound(f"revision {revision} of {entity_type} {entity_id!r} is not "
                               f"kept (the last {keep} are)")
            at = now()
            record.replace(restored_profile(record.profile, earlier, at), at, keep)
            return record

        profile = current.profile
        return self._profiles.update(profile.scope, entity_type, entity_id, change).profile

    def _profile_record(self, principal: Principal, entity_type: str, entity_id: str,
                        scope: str) -> ProfileRecord:
        self._require_enabled()
        validate_entity_type(entity_type, "entity_type")
        validate_id(entity_id, "entity_id")
        scope = memory_scope(principal, scope)
        record = self._profiles.get(scope, entity_type, entity_id)
        if record is None:
            raise NotFound(f"no profile of {entity_type} {entity_id!r} in {scope}")
        return record

    # -- failed historian jobs --

    def failed_jobs(self, principal: Principal, *, page_size: int,
                    page_token: str) -> tuple[list[FailedJob], str]:
        self._require_enabled()
        check.int_range(page_size or DEFAULT_PAGE_SIZE, "page_size", 1, PAGE_SIZE_MAX)
        with reachable("failed jobs"):
            return self._queue.failed_page(page_size or DEFAULT_PAGE_SIZE, page_token,
                                           _failed_job_visibility(principal))

    def retry_failed_job(self, principal: Principal, job_id: str) -> str:
        self._require_enabled()
        check.text(job_id, "job_id", 128, required=True)
        with reachable("retry failed job"):
            self._queue.retry_failed(job_id, _failed_job_visibility(principal))
        self._on_enqueue()
        return job_id

    def forget(self, principal: Principal, subject: str) -> dict[str, int]:
        """Erases the events a subject is the user or sender of, its memos, its profile
        and the historian jobs about it: in every scope for an admin, else in the
        caller's."""
        people = memory_ids(principal, forget_subject(principal, subject))
        scopes = None if principal.is_admin else principal.visible_scopes
        with reachable("forgetting a subject's memory"):
            erased = self._queue.erase_about(people, scopes)  # first: no job writes more
            erased["events"] = self._events.erase_about(people, scopes)
            erased["profiles"] = self._profiles.erase_of(people, scopes)
        return erased

    def _require_enabled(self) -> None:
        if not self._settings.memory_enabled:
            raise FailedPrecondition("memory is disabled (KNOWHUB_MEMORY_ENABLED=false); "
                                     "queued jobs wait until it is enabled again")


def memory_ids(principal: Principal, subject: str) -> frozenset[str]:
    """The ids a stored subject goes by in conversations: a user's id; an agent's name as
    stored and as the caller writes it."""
    _, entity_id = subject_parts(subject)
    return frozenset({entity_id, principal.show(entity_id)})


def _failed_job_visibility(principal: Principal) -> Callable[[FailedJob], bool]:
    """Admins see every failed job; others those of the scopes they can see."""
    def visible(job: FailedJob) -> bool:
        return principal.is_admin or (job.job is not None
                                      and job.job.scope in principal.visible_scopes)
    return visible
