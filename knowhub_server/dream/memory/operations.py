"""The memory's use cases: remember, recent memos, event and profile search,
profile revisions, the failed historian jobs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from knowhub_server.common.base.times import now
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.forget import forget_subject, subject_parts
from knowhub_server.common.storage.redis_store import reachable
from knowhub_server.dream.memory.config import MemorySettings
from knowhub_server.dream.memory.domain import (
    CURRENT,
    DEFAULT_PAGE_SIZE,
    DELETED,
    DISPLAY_NAME_MAX,
    JOB_DONE,
    JOB_FAILED,
    MEMO_MAX,
    OBSERVATION_MAX,
    PAGE_SIZE_MAX,
    PROFILE_SUMMARY_MAX,
    PROFILE_TAG_MAX,
    PROFILE_TAGS_MAX,
    SUPERSEDED,
    CognitiveEvent,
    Context,
    FailedJob,
    Job,
    JobStatus,
    Memo,
    Profile,
    ProfileRecord,
    ProfileRevision,
    conversation,
    decayed_score,
    describe_gate,
    gate_hits,
    isolation,
    memory_scope,
    new_job_id,
    restored_profile,
    searched_scopes,
    sibling_ids,
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
WAIT_MAX_SECONDS = 60.0
_WAIT_POLL_SECONDS = 0.05
PROFILE_FIELDS = ("name", "tags", "summary")


@dataclass
class RememberResult:
    job_id: str = ""
    enqueued: bool = False
    memo_recorded: bool = False
    warnings: list[str] = field(default_factory=list)
    job: JobStatus | None = None  # with a wait: the job as it stood when the wait ended

    def to_json(self) -> str:
        return json.dumps({k: v for k, v in vars(self).items() if k != "job"})

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
    def __init__(
        self,
        queue: HistorianQueue,
        events: EventStore,
        profiles: ProfileStore,
        settings: MemorySettings,
        on_enqueue: Callable[[], None],
    ) -> None:
        self._queue = queue
        self._events = events
        self._profiles = profiles
        self._settings = settings
        self._on_enqueue = on_enqueue

    # -- short-term memory and the historian queue --

    def remember(
        self,
        principal: Principal,
        *,
        memo: str,
        observations: list[str],
        context: Context,
        force: bool,
        scope: str,
        request_id: str = "",
        wait_seconds: float = 0.0,
    ) -> RememberResult:
        """Records the memo and enqueues its historian job; a replayed request_id (same
        caller, within the TTL) returns the first call's result and records nothing. With
        `wait_seconds`, waits that long at most for the job to be done or failed."""
        if not 0 <= wait_seconds <= WAIT_MAX_SECONDS:
            raise InvalidArgument("wait_timeout", f"must be 0 to {WAIT_MAX_SECONDS:g} seconds")
        result = self._remember(
            principal,
            memo=memo,
            observations=observations,
            context=context,
            force=force,
            scope=scope,
            request_id=request_id,
        )
        if wait_seconds and result.job_id:
            result.job = self._wait_for_job(result.job_id, wait_seconds)
        return result

    def _wait_for_job(self, job_id: str, seconds: float) -> JobStatus | None:
        deadline = time.monotonic() + seconds
        while True:
            with reachable("job status"):
                status = self._queue.job_status(job_id)
            if (
                status is None
                or status.state in (JOB_DONE, JOB_FAILED)
                or time.monotonic() >= deadline
            ):
                return status
            time.sleep(min(_WAIT_POLL_SECONDS, max(deadline - time.monotonic(), 0)))

    def job(self, principal: Principal, job_id: str) -> JobStatus:
        """A job's status: for admins, and callers who see its scope."""
        self._require_enabled()
        check.text(job_id, "job_id", 128, required=True)
        with reachable("job status"):
            status = self._queue.job_status(job_id)
        if status is None or not (principal.is_admin or status.scope in principal.visible_scopes):
            raise NotFound(
                f"memory job {job_id!r} not found (statuses are kept "
                f"{self._settings.memory_job_keep_hours} hours)"
            )
        return status

    def _remember(
        self,
        principal: Principal,
        *,
        memo: str,
        observations: list[str],
        context: Context,
        force: bool,
        scope: str,
        request_id: str,
    ) -> RememberResult:
        self._require_enabled()
        at = now()
        validate_remember(memo, observations, context, at)
        validate_request_id(request_id)
        scope = memory_scope(principal, scope)
        settings = self._settings
        context, warnings = truncated_context(
            context,
            source_max=settings.historian_source_message_max_len,
            recent_k=settings.historian_recent_messages_inject_k,
            line_max=settings.historian_recent_message_line_max_len,
        )
        if not memo.strip() and not observations:
            return RememberResult(warnings=warnings)
        job = Job(
            job_id=new_job_id(),
            scope=scope,
            context=context,
            memo=memo,
            observations=list(observations),
            force=force,
            created_at=at,
            written_by=principal.user_scope,
        )
        note = (
            Memo(
                text=memo,
                created_at=at,
                sender_id=context.sender_id or context.user_id,
                job_id=job.job_id,
                written_by=principal.user_scope,
            )
            if memo.strip()
            else None
        )
        result = RememberResult(job.job_id, True, note is not None, warnings)
        with reachable("remember"):
            first = self._queue.remember(
                job,
                note,
                request_id=request_id,
                response=result.to_json() if request_id else "",
                request_ttl_seconds=settings.memory_remember_request_ttl_hours * 3600,
            )
        if first is not None:
            return RememberResult.from_json(first)
        self._on_enqueue()
        return result

    def recent_memos(
        self,
        principal: Principal,
        *,
        request_type: str,
        user_id: str,
        group_id: str,
        limit: int,
        scope: str,
    ) -> list[Memo]:
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
                scope, conversation(request_type, user_id, group_id), min(limit, keep)
            )

    def update_memo(
        self,
        principal: Principal,
        *,
        request_type: str,
        user_id: str,
        group_id: str,
        scope: str,
        job_id: str,
        text: str,
    ) -> Memo:
        check.text(text, "text", MEMO_MAX, required=True)
        scope, talk, memo = self._own_memo(
            principal, request_type, user_id, group_id, scope, job_id
        )
        edited = Memo(
            text=text,
            created_at=memo.created_at,
            sender_id=memo.sender_id,
            job_id=memo.job_id,
            written_by=memo.written_by,
            edited_at=now(),
        )
        with reachable("update memo"):
            if not self._queue.replace_memo(scope, talk, job_id, edited):
                raise NotFound(f"no memo of job {job_id!r} in this conversation")
        return edited

    def delete_memo(
        self,
        principal: Principal,
        *,
        request_type: str,
        user_id: str,
        group_id: str,
        scope: str,
        job_id: str,
    ) -> str:
        scope, talk, _ = self._own_memo(principal, request_type, user_id, group_id, scope, job_id)
        with reachable("delete memo"):
            if not self._queue.replace_memo(scope, talk, job_id, None):
                raise NotFound(f"no memo of job {job_id!r} in this conversation")
        return job_id

    def _own_memo(
        self,
        principal: Principal,
        request_type: str,
        user_id: str,
        group_id: str,
        scope: str,
        job_id: str,
    ) -> tuple[str, str, Memo]:
        """The memo a change may touch: the caller's own (any for an admin)."""
        self._require_enabled()
        validate_conversation(request_type, user_id, group_id)
        check.text(job_id, "job_id", 128, required=True)
        scope = memory_scope(principal, scope)
        talk = conversation(request_type, user_id, group_id)
        with reachable("read memo"):
            memo = self._queue.memo(scope, talk, job_id)
        if memo is None:
            raise NotFound(f"no memo of job {job_id!r} in this conversation")
        _require_writer(principal, memo.written_by, "memo")
        return scope, talk, memo

    # -- events --

    def search_events(
        self,
        principal: Principal,
        *,
        query: str,
        target_user_id: str,
        target_group_id: str,
        top_k: int | None,
        time_from: float | None,
        time_to: float | None,
        mode: str,
        scope: str,
        include_history: bool = False,
    ) -> EventSearch:
        self._require_enabled()
        settings = self._settings
        if top_k is None:
            top_k = (
                settings.memory_auto_top_k if mode == AUTO else settings.memory_tool_default_top_k
            )
        validate_query(query, top_k)
        validate_id(target_user_id, "target_user_id", required=False)
        validate_id(target_group_id, "target_group_id", required=False)
        warnings = []
        if time_from is not None and time_to is not None and time_from > time_to:
            time_from, time_to = time_to, time_from
            warnings.append("time_from was after time_to; they were swapped")
        scopes = searched_scopes(principal, scope)
        where = event_where(
            scopes,
            isolation(target_user_id, target_group_id),
            time_from,
            time_to,
            include_history=include_history,
        )
        multiplier = settings.memory_rerank_candidate_multiplier
        rerank = settings.memory_time_decay_enabled
        recalled = self._events.recall(query, where, top_k * multiplier if rerank else top_k)
        half_life = (
            settings.memory_time_decay_half_life_days_auto
            if mode == AUTO
            else settings.memory_time_decay_half_life_days_tool
        )
        current = time.time()
        scored = sorted(
            (
                (
                    decayed_score(
                        c.similarity,
                        current - c.timestamp,
                        half_life_days=half_life,
                        boost=settings.memory_time_decay_boost,
                        min_similarity=settings.memory_time_decay_min_similarity,
                    )
                    if rerank
                    else c.similarity,
                    c,
                )
                for c in recalled
            ),
            key=lambda s: (-s[0], -s[1].timestamp),
        )
        hits = [EventHit(c.event, c.similarity, score) for score, c in scored[:top_k]]
        return EventSearch(hits, warnings)

    def get_event(self, principal: Principal, *, event_id: str, scope: str) -> CognitiveEvent:
        return self._visible_event(principal, event_id, scope)

    def update_event(
        self, principal: Principal, *, event_id: str, scope: str, text: str
    ) -> CognitiveEvent:
        """Corrects the text of the event and its copies (stored as written: absolute only
        if it passes the gate)."""
        check.text(text, "text", OBSERVATION_MAX, required=True)
        event = self._own_event(principal, event_id, scope)
        if event.state == DELETED:
            raise FailedPrecondition(f"event {event_id!r} is deleted; undelete it first")
        hits = gate_hits(text)
        at = now()

        def change(copy: CognitiveEvent) -> CognitiveEvent:
            copy.text, copy.is_absolute, copy.edited_at = text, not hits, at
            copy.warning = f"edited; the gate found {describe_gate(hits, [])}" if hits else ""
            return copy

        return self._changed(event, change)

    def delete_event(self, principal: Principal, *, event_id: str, scope: str) -> CognitiveEvent:
        """Deletes the event and its copies, undoable until the retention window ends."""
        event = self._own_event(principal, event_id, scope)
        at = now()
        purge_at = at + self._settings.memory_delete_retention_hours * 3600

        def change(copy: CognitiveEvent) -> CognitiveEvent:
            if copy.state != DELETED:
                copy.state, copy.deleted_at, copy.purge_at = DELETED, at, purge_at
            return copy

        return self._changed(event, change)

    def undelete_event(self, principal: Principal, *, event_id: str, scope: str) -> CognitiveEvent:
        event = self._own_event(principal, event_id, scope)
        if event.state != DELETED:
            raise FailedPrecondition(f"event {event_id!r} is not deleted")

        def change(copy: CognitiveEvent) -> CognitiveEvent:
            if copy.state == DELETED:
                copy.state = CURRENT if copy.superseded_at is None else SUPERSEDED
                copy.deleted_at = copy.purge_at = None
            return copy

        return self._changed(event, change)

    def _changed(
        self, event: CognitiveEvent, change: Callable[[CognitiveEvent], CognitiveEvent]
    ) -> CognitiveEvent:
        changed = self._events.change(sibling_ids(event.event_id), change)
        found = next((e for e in changed if e.event_id == event.event_id), None)
        if found is None:
            raise NotFound(f"event {event.event_id!r} not found")
        return found

    def _visible_event(self, principal: Principal, event_id: str, scope: str) -> CognitiveEvent:
        self._require_enabled()
        check.text(event_id, "event_id", 300, required=True)
        wanted = memory_scope(principal, scope) if scope else ""
        found = self._events.get([event_id])
        event = found[0] if found else None
        if (
            event is None
            or (wanted and event.scope != wanted)
            or not (principal.is_admin or event.scope in principal.visible_scopes)
        ):
            raise NotFound(f"event {event_id!r} not found")
        return event

    def _own_event(self, principal: Principal, event_id: str, scope: str) -> CognitiveEvent:
        event = self._visible_event(principal, event_id, scope)
        _require_writer(principal, event.written_by, "event")
        return event

    def list_events(
        self,
        principal: Principal,
        *,
        target_user_id: str,
        target_group_id: str,
        time_from: float | None,
        time_to: float | None,
        scope: str,
        page_size: int,
        page_token: str,
        include_history: bool = False,
    ) -> tuple[list[CognitiveEvent], str]:
        self._require_enabled()
        validate_id(target_user_id, "target_user_id", required=False)
        validate_id(target_group_id, "target_group_id", required=False)
        page_size = page_size or DEFAULT_PAGE_SIZE
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        if time_from is not None and time_to is not None and time_from > time_to:
            raise InvalidArgument("time_from", "is after time_to")
        where = event_where(
            searched_scopes(principal, scope),
            isolation(target_user_id, target_group_id),
            time_from,
            time_to,
            include_history=include_history,
        )
        return self._events.page(where, page_size, page_token)

    # -- profiles --

    def get_profile(
        self, principal: Principal, *, entity_type: str, entity_id: str, scope: str
    ) -> Profile:
        return self._profile_record(principal, entity_type, entity_id, scope).profile

    def search_profiles(
        self, principal: Principal, *, query: str, entity_type: str, top_k: int | None, scope: str
    ) -> list[tuple[Profile, float]]:
        self._require_enabled()
        top_k = self._settings.memory_profile_top_k if top_k is None else top_k
        validate_query(query, top_k)
        if entity_type:
            validate_entity_type(entity_type, "entity_type")
        where = profile_where(searched_scopes(principal, scope), entity_type)
        return self._profiles.recall(query, where, top_k)

    def update_profile(
        self,
        principal: Principal,
        *,
        entity_type: str,
        entity_id: str,
        scope: str,
        mask: list[str],
        name: str,
        tags: list[str],
        summary: str,
    ) -> Profile:
        """Sets the masked fields; the replaced revision is kept."""
        if not mask:
            raise InvalidArgument(
                "update_mask", f"is required: some of {', '.join(PROFILE_FIELDS)}"
            )
        for index, path in enumerate(mask):
            if path not in PROFILE_FIELDS:
                raise InvalidArgument(
                    f"update_mask.paths[{index}]",
                    f"{path!r} is not one of {', '.join(PROFILE_FIELDS)}",
                )
        check.text(name, "name", DISPLAY_NAME_MAX)
        check.items(tags, "tags", PROFILE_TAGS_MAX)
        for index, tag in enumerate(tags):
            check.text(tag, f"tags[{index}]", PROFILE_TAG_MAX, required=True)
        if "summary" in mask:
            check.text(summary, "summary", PROFILE_SUMMARY_MAX, required=True)
        current = self._profile_record(principal, entity_type, entity_id, scope).profile
        keep = self._settings.memory_profile_revision_keep

        def change(record: ProfileRecord) -> ProfileRecord:
            at, old = now(), record.profile
            record.replace(
                Profile(
                    scope=old.scope,
                    entity_type=old.entity_type,
                    entity_id=old.entity_id,
                    name=name if "name" in mask else old.name,
                    tags=list(tags) if "tags" in mask else old.tags,
                    summary=summary if "summary" in mask else old.summary,
                    updated_at=at,
                    source_event_id=old.source_event_id,
                    revision=old.revision + 1,
                    reason=f"edit by {principal.show_scope(principal.user_scope)}",
                ),
                at,
                keep,
            )
            return record

        return self._profiles.update(current.scope, entity_type, entity_id, change).profile

    def delete_profile(
        self, principal: Principal, *, entity_type: str, entity_id: str, scope: str
    ) -> Profile:
        """Removes the profile with its revisions; returns it as it was."""
        current = self._profile_record(principal, entity_type, entity_id, scope).profile
        if not self._profiles.delete(current.scope, entity_type, entity_id):
            raise NotFound(f"no profile of {entity_type} {entity_id!r} in {current.scope}")
        return current

    def list_profiles(
        self, principal: Principal, *, entity_type: str, scope: str, page_size: int, page_token: str
    ) -> tuple[list[Profile], str]:
        self._require_enabled()
        if entity_type:
            validate_entity_type(entity_type, "entity_type")
        page_size = page_size or DEFAULT_PAGE_SIZE
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        where = profile_where(searched_scopes(principal, scope), entity_type)
        return self._profiles.page(where, page_size, page_token)

    def profile_revisions(
        self, principal: Principal, *, entity_type: str, entity_id: str, scope: str
    ) -> list[ProfileRevision]:
        return self._profile_record(principal, entity_type, entity_id, scope).revisions

    def restore_profile(
        self, principal: Principal, *, entity_type: str, entity_id: str, scope: str, revision: int
    ) -> Profile:
        """Makes an earlier revision current; the one it replaces becomes a revision."""
        if revision < 1:
            raise InvalidArgument(
                "revision", "is required: a revision number from ListProfileRevisions"
            )
        current = self._profile_record(principal, entity_type, entity_id, scope)
        keep = self._settings.memory_profile_revision_keep

        def change(record: ProfileRecord) -> ProfileRecord:
            earlier = next(
                (r.profile for r in record.revisions if r.profile.revision == revision), None
            )
            if earlier is None:
                raise NotFound(
                    f"revision {revision} of {entity_type} {entity_id!r} is not "
                    f"kept (the last {keep} are)"
                )
            at = now()
            record.replace(restored_profile(record.profile, earlier, at), at, keep)
            return record

        profile = current.profile
        return self._profiles.update(profile.scope, entity_type, entity_id, change).profile

    def _profile_record(
        self, principal: Principal, entity_type: str, entity_id: str, scope: str
    ) -> ProfileRecord:
        self._require_enabled()
        validate_entity_type(entity_type, "entity_type")
        validate_id(entity_id, "entity_id")
        scope = memory_scope(principal, scope)
        record = self._profiles.get(scope, entity_type, entity_id)
        if record is None:
            raise NotFound(f"no profile of {entity_type} {entity_id!r} in {scope}")
        return record

    # -- failed historian jobs --

    def failed_jobs(
        self, principal: Principal, *, page_size: int, page_token: str
    ) -> tuple[list[FailedJob], str]:
        self._require_enabled()
        check.int_range(page_size or DEFAULT_PAGE_SIZE, "page_size", 1, PAGE_SIZE_MAX)
        with reachable("failed jobs"):
            return self._queue.failed_page(
                page_size or DEFAULT_PAGE_SIZE, page_token, _failed_job_visibility(principal)
            )

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
            raise FailedPrecondition(
                "memory is disabled (KNOWHUB_MEMORY_ENABLED=false); "
                "queued jobs wait until it is enabled again"
            )


def _require_writer(principal: Principal, written_by: str, what: str) -> None:
    """Only whoever remembered it (or an admin) changes a memory event or memo."""
    if not principal.is_admin and written_by != principal.user_scope:
        raise PermissionDenied(
            f"only the caller that remembered this {what}, or an admin, may change it"
        )


def memory_ids(principal: Principal, subject: str) -> frozenset[str]:
    """The ids a stored subject goes by in conversations: a user's id; an agent's name as
    stored and as the caller writes it."""
    _, entity_id = subject_parts(subject)
    return frozenset({entity_id, principal.show(entity_id)})


def _failed_job_visibility(principal: Principal) -> Callable[[FailedJob], bool]:
    """Admins see every failed job; others those of the scopes they can see."""

    def visible(job: FailedJob) -> bool:
        return principal.is_admin or (
            job.job is not None and job.job.scope in principal.visible_scopes
        )

    return visible
