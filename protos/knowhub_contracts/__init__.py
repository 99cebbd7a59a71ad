"""KnowHub's contracts in Python: the code generated from `protos/knowhub/v1/*.proto`
(`knowhub_contracts.v1`: messages in `*_pb2`, service stubs and servicers in
`*_pb2_grpc`, typed by the `.pyi` next to them), and the two conventions the hub and its
SDK both follow on top of them: an enum value's short name (`EnumNames`) and a message's
JSON shape (`message_dict`). The wheel also carries the `.proto` files, under
`knowhub_contracts/proto/knowhub/v1/` (a folder to pass to protoc as `-I`).

The proto package stays `knowhub.v1` (the services' full names, such as
`knowhub.v1.KnowledgeService`, and the descriptors' file names): only the Python import
path of the generated code is `knowhub_contracts.v1`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor
from google.protobuf.message import Message

__all__ = ["EnumNames", "enum_names", "message_dict", "message_from_dict"]

_JSON_OPTIONS: dict[str, Any] = {
    "preserving_proto_field_name": True,
    "always_print_fields_with_no_presence": True,
    "unquote_int64_if_possible": True,
}


class EnumNames:
    """A proto enum's values by short name: the value's name without the enum's prefix
    (its own name in UPPER_SNAKE_CASE, as buf's ENUM_VALUE_PREFIX rule has it), in lower
    case. The zero value (*_UNSPECIFIED) is named `unspecified` ("" unless given)."""

    def __init__(self, enum: EnumDescriptor, unspecified: str = "") -> None:
        prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
        self._names = {
            value.number: value.name.removeprefix(prefix).lower() for value in enum.values
        }
        self._names[0] = unspecified
        self._proto_names = {self._names[value.number]: value.name for value in enum.values}

    @property
    def names(self) -> tuple[str, ...]:
        """The names a caller can pass, in the enum's order."""
        return tuple(name for name in self._proto_names if name)

    def name(self, number: int) -> str:
        """The short name; "" for a number these contracts do not know (a newer peer's)."""
        return self._names.get(number, "")

    def proto_name(self, name: str, what: str) -> str:
        """The proto value's name for short name `name` (a message's constructor takes
        it); ValueError naming `what` for an unknown name."""
        if name not in self._proto_names:
            raise ValueError(f"unknown {what} {name!r}: use one of {', '.join(self.names)}")
        return self._proto_names[name]


@functools.cache
def enum_names(enum: EnumDescriptor) -> EnumNames:
    """The enum's `EnumNames` with an unnamed zero value, made once per enum."""
    return EnumNames(enum)


def message_dict(message: Message) -> dict[str, Any]:
    """A message's fields as JSON with proto field names (every field, in the proto's order)."""
    found = json_format.MessageToDict(message, **_JSON_OPTIONS)
    return {f.name: found[f.name] for f in message.DESCRIPTOR.fields if f.name in found}


def message_from_dict(descriptor: Descriptor, data: dict[str, Any]) -> Message:
    """The message that message_dict gave `data` for."""
    message = message_factory.GetMessageClass(descriptor)()
    json_format.ParseDict(data, message)
    return message
