"""Nothing is lost in the resource service's conversions: every field of a request
reaches the domain, and a record with every field set leaves no field of its message
unset. A field added to resource.proto and not to convert.py fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from knowhub_contracts.v1 import resource_pb2

from knowhub_server.common.security.auth import Principal
from knowhub_server.resource import convert
from knowhub_server.resource.audit import AuditEvent
from knowhub_server.resource.domain import CONTENT_TYPES, Resource, VersionInfo
from knowhub_server.resource.operations import Rotation
from tests.support.messages import assert_writes_every_field, filled, filled_record, unread_fields

# A caller of the shared namespace: every name reads as stored.
VIEWER = Principal(user_id="viewer", namespace="")

RECORDS: dict[str, tuple[Callable[[], Any], Callable[[Any], Message]]] = {
    "Resource": (
        lambda: filled_record(Resource, {"content_type": "code"}),
        lambda resource: convert.resource_to_proto(resource, VIEWER),
    ),
    "ResourceHit": (
        lambda: filled_record(Resource, {"content_type": "cookie"}),
        lambda resource: convert.hit_to_proto(resource, 0.75, VIEWER),
    ),
    "ResourceVersion": (lambda: filled_record(VersionInfo), convert.version_to_proto),
    "AuditEvent": (
        lambda: filled_record(AuditEvent),
        lambda event: convert.event_to_proto(event, VIEWER),
    ),
    "RotateMasterKeyResponse": (lambda: filled_record(Rotation), convert.rotation_to_proto),
}


def test_every_field_of_a_save_reaches_the_draft() -> None:
    for message in filled(resource_pb2.SaveResourceRequest.DESCRIPTOR):
        assert unread_fields(message, convert.draft_from_proto) == []


@pytest.mark.parametrize("name", RECORDS)
def test_a_full_record_sets_every_field_of_its_message(name: str) -> None:
    assert_writes_every_field(name, RECORDS)


def test_the_content_types_are_the_enums_values() -> None:
    assert convert.CONTENT_TYPES.names == CONTENT_TYPES
    assert convert.VIEWS.names == ("basic",)
