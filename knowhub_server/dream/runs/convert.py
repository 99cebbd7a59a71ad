"""Dream runs' protobuf messages to and from their domain (dream.proto, runs half).
Agent ids leave as the `viewer` reads them (its own org's bare)."""

from __future__ import annotations

from knowhub_contracts.v1 import dream_pb2

from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.times import optional_timestamp, to_timestamp
from knowhub_server.common.security.auth import Principal
from knowhub_server.dream.runs.domain import REPLACE, DreamRun, MemoryDocument
from knowhub_server.dream.runs.operations import ScheduleView

PHASES = ProtoEnum(dream_pb2.DreamPhase)
STATUSES = ProtoEnum(dream_pb2.DreamRunStatus)


def run_to_proto(run: DreamRun, viewer: Principal) -> dream_pb2.DreamRun:
    return dream_pb2.DreamRun(
        run_id=run.run_id,
        agent_id=viewer.show(run.agent_id),
        trace_ids=run.trace_ids,
        phases=PHASES.values_of(run.phases),
        status=STATUSES.value(run.status),
        reason=run.reason,
        counts=dream_pb2.DreamRunCounts(**run.counts),
        failures=[
            dream_pb2.DreamFailure(
                phase=PHASES.value(f.phase), trace_id=f.trace_id, reason=f.reason
            )
            for f in run.failures
        ],
        schedule_id=run.schedule_id,
        requested_by=run.requested_by,
        created_at=to_timestamp(run.created_at),
        started_at=optional_timestamp(run.started_at),
        finished_at=optional_timestamp(run.finished_at),
        attempts=run.attempts,
    )


def schedule_to_proto(view: ScheduleView, viewer: Principal) -> dream_pb2.DreamSchedule:
    schedule, fired = view.schedule, view.fired
    message = dream_pb2.DreamSchedule(
        schedule_id=schedule.schedule_id,
        agent_id=viewer.show(schedule.agent_id),
        every_minutes=schedule.every_minutes,
        cron=schedule.cron,
        time_zone=schedule.time_zone,
        phases=PHASES.values_of(schedule.phases),
        start_time=to_timestamp(schedule.start_time),
        requested_by=schedule.requested_by,
        created_at=to_timestamp(schedule.created_at),
        next_run_at=optional_timestamp(view.next_run_at or 0.0),
    )
    if fired is not None:
        message.last_fired_at.CopyFrom(to_timestamp(fired.slot))
        message.last_run_id = fired.run_id
    return message


WRITE_MODES = ProtoEnum(dream_pb2.DocumentWriteMode, unspecified=REPLACE)


def document_to_proto(
    document: MemoryDocument, viewer: Principal, *, with_content: bool
) -> dream_pb2.MemoryDocument:
    return dream_pb2.MemoryDocument(
        agent_id=viewer.show(document.agent_id),
        path=document.path,
        content=document.content if with_content else "",
        revision=document.revision,
        updated_at=to_timestamp(document.updated_at),
        run_id=document.run_id,
        size=len(document.content),
        written_by=viewer.show_scope(document.written_by) if document.written_by else "",
    )
