"""Nothing is lost in the dream service's conversions (memory and runs): every field of a
memory context reaches the domain, and a record with every field set leaves no field of
its message unset. A field added to dream.proto and not to a convert.py fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from knowhub_contracts.v1 import dream_pb2

from knowhub_server.common.security.auth import Principal
from knowhub_server.dream.memory import convert as memory
from knowhub_server.dream.memory.domain import CognitiveEvent, FailedJob, Memo, Profile
from knowhub_server.dream.runs import convert as runs
from knowhub_server.dream.runs.domain import DreamRun, MemoryDocument
from knowhub_server.dream.runs.operations import ScheduleView
from tests.support.messages import assert_writes_every_field, filled, filled_record, unread_fields

# A caller of the shared namespace: every name reads as stored.
VIEWER = Principal(user_id="viewer", namespace="")
PHASE = {"phase": "per_trace_reflect", "phases": ["per_trace_reflect", "cross_trace_integrate"]}
RECORDS: dict[str, tuple[Callable[[], Any], Callable[[Any], Message]]] = {
    "Memo": (lambda: filled_record(Memo), memory.memo_to_proto),
    "CognitiveEvent": (
        lambda: filled_record(CognitiveEvent, {"state": "superseded"}),
        lambda event: memory.event_to_proto(event, VIEWER),
    ),
    "Profile": (
        lambda: filled_record(Profile, {"entity_type": "user"}),
        lambda profile: memory.profile_to_proto(profile, VIEWER),
    ),
    "FailedJob": (
        lambda: filled_record(FailedJob, {"request_type": "group"}),
        lambda failed: memory.failed_job_to_proto(failed, VIEWER),
    ),
    "DreamRun": (
        lambda: filled_record(
            DreamRun,
            {
                **PHASE,
                "status": "failed",
                "counts": {f.name: 3 for f in dream_pb2.DreamRunCounts.DESCRIPTOR.fields},
            },
        ),
        lambda run: runs.run_to_proto(run, VIEWER),
    ),
    "DreamSchedule": (
        lambda: filled_record(ScheduleView, PHASE),
        lambda view: runs.schedule_to_proto(view, VIEWER),
    ),
    "MemoryDocument": (
        lambda: filled_record(MemoryDocument),
        lambda document: runs.document_to_proto(document, VIEWER, with_content=True),
    ),
}


def test_every_field_of_a_memory_context_reaches_the_domain() -> None:
    for message in filled(dream_pb2.MemoryContext.DESCRIPTOR):
        assert unread_fields(message, memory.context_from_proto) == []


@pytest.mark.parametrize("name", RECORDS)
def test_a_full_record_sets_every_field_of_its_message(name: str) -> None:
    assert_writes_every_field(name, RECORDS)
