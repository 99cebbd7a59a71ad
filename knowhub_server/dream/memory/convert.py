"""The memory's protobuf messages to and from its domain (dream.proto, memory half)."""

from __future__ import annotations

from knowhub_contracts.v1 import dream_pb2

from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.times import from_timestamp, optional_timestamp, to_timestamp
from knowhub_server.common.security.auth import Principal
from knowhub_server.dream.memory.domain import (
    CognitiveEvent,
    Context,
    Decision,
    FailedJob,
    JobStatus,
    Memo,
    Profile,
    ProfileRevision,
)
from knowhub_server.dream.memory.operations import TOOL, EventHit

REQUEST_TYPES = ProtoEnum(dream_pb2.RequestType)
ENTITY_TYPES = ProtoEnum(dream_pb2.EntityType)
SEARCH_MODES = ProtoEnum(dream_pb2.SearchMode, unspecified=TOOL)
EVENT_STATES = ProtoEnum(dream_pb2.EventState)
JOB_STATES = ProtoEnum(dream_pb2.MemoryJobState)
ACTIONS = ProtoEnum(dream_pb2.MemoryAction)


def context_from_proto(context: dream_pb2.MemoryContext) -> Context:
    return Context(
        request_type=REQUEST_TYPES.name(context.request_type, "context.request_type"),
        user_id=context.user_id,
        group_id=context.group_id,
        sender_id=context.sender_id,
        source_message=context.source_message,
        recent_messages=list(context.recent_messages),
        sender_name=context.sender_name,
        group_name=context.group_name,
        timestamp=from_timestamp(context.timestamp, "context.timestamp"),
    )


def memo_to_proto(memo: Memo) -> dream_pb2.Memo:
    return dream_pb2.Memo(
        text=memo.text,
        created_at=to_timestamp(memo.created_at),
        sender_id=memo.sender_id,
        job_id=memo.job_id,
        edited_at=optional_timestamp(memo.edited_at or 0),
    )


def event_to_proto(event: CognitiveEvent, viewer: Principal) -> dream_pb2.CognitiveEvent:
    return dream_pb2.CognitiveEvent(
        event_id=event.event_id,
        text=event.text,
        user_id=event.user_id,
        group_id=event.group_id,
        sender_id=event.sender_id,
        timestamp=to_timestamp(event.timestamp_epoch),
        timestamp_local=event.timestamp_local,
        request_type=event.request_type,
        perspective=event.perspective,
        is_absolute=event.is_absolute,
        schema_version=event.schema_version,
        scope=viewer.show_scope(event.scope),
        warning=event.warning,
        job_id=event.job_id,
        state=EVENT_STATES.value(event.state),
        superseded_at=optional_timestamp(event.superseded_at or 0),
        superseded_by=event.superseded_by,
        supersedes=event.supersedes,
        deleted_at=optional_timestamp(event.deleted_at or 0),
        purge_at=optional_timestamp(event.purge_at or 0),
        edited_at=optional_timestamp(event.edited_at or 0),
        confirmed_at=optional_timestamp(event.confirmed_at or 0),
    )


def decision_to_proto(decision: Decision) -> dream_pb2.MemoryDecision:
    return dream_pb2.MemoryDecision(
        observation_index=decision.observation_index,
        action=ACTIONS.value(decision.action),
        event_id=decision.event_id,
        target_event_id=decision.target_event_id,
        reason=decision.reason,
    )


def job_to_proto(status: JobStatus, viewer: Principal) -> dream_pb2.MemoryJob:
    return dream_pb2.MemoryJob(
        job_id=status.job_id,
        state=JOB_STATES.value(status.state),
        error=status.error,
        event_ids=status.event_ids,
        decisions=[decision_to_proto(d) for d in status.decisions],
        deliveries=status.deliveries,
        created_at=to_timestamp(status.created_at),
        updated_at=to_timestamp(status.updated_at),
        scope=viewer.show_scope(status.scope),
    )


def event_hit_to_proto(hit: EventHit, viewer: Principal) -> dream_pb2.EventHit:
    return dream_pb2.EventHit(
        event=event_to_proto(hit.event, viewer), similarity=hit.similarity, score=hit.score
    )


def profile_hit_to_proto(profile: Profile, score: float, viewer: Principal) -> dream_pb2.ProfileHit:
    return dream_pb2.ProfileHit(profile=profile_to_proto(profile, viewer), score=score)


def profile_revision_to_proto(
    revision: ProfileRevision, viewer: Principal
) -> dream_pb2.ProfileRevision:
    return dream_pb2.ProfileRevision(
        profile=profile_to_proto(revision.profile, viewer),
        replaced_at=to_timestamp(revision.replaced_at),
    )


def profile_to_proto(profile: Profile, viewer: Principal) -> dream_pb2.Profile:
    return dream_pb2.Profile(
        entity_type=ENTITY_TYPES.value(profile.entity_type),
        entity_id=profile.entity_id,
        name=profile.name,
        tags=profile.tags,
        summary=profile.summary,
        markdown=profile.markdown,
        updated_at=to_timestamp(profile.updated_at),
        source_event_id=profile.source_event_id,
        revision=profile.revision,
        scope=viewer.show_scope(profile.scope),
        reason=profile.reason,
    )


def failed_job_to_proto(failed: FailedJob, viewer: Principal) -> dream_pb2.FailedJob:
    message = dream_pb2.FailedJob(
        job_id=failed.job_id,
        error=failed.error,
        deliveries=failed.deliveries,
        failed_at=to_timestamp(failed.failed_at),
    )
    job = failed.job
    if job is not None:
        message.scope, message.memo = viewer.show_scope(job.scope), job.memo
        message.request_type = REQUEST_TYPES.value(job.context.request_type)
        message.user_id, message.group_id = job.context.user_id, job.context.group_id
        message.observations.extend(job.observations)
    return message
