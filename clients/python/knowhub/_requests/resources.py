"""Resource requests' parts from the resource methods' arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2

from knowhub.models.resources import CONTENT_TYPES


def struct(values: Mapping[str, Any] | None) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(dict(values or {}))
    return message


def content_type_value(name: str | None) -> str:
    """text, code, credential or cookie; any (to list or search) when None."""
    return CONTENT_TYPES.proto_name(name or "", "content_type")


def view(basic: bool) -> str:
    return "RESOURCE_VIEW_BASIC" if basic else "RESOURCE_VIEW_UNSPECIFIED"
