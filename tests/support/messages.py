"""Messages and domain records with every field set, for the conversion completeness tests.

`filled(descriptor)` gives a proto message with every field set to a value that is not its
default (recursively: enums non-zero, repeated fields and maps with two items, each real
oneof's members in turn); `filled_record(cls)` does the same for a domain dataclass from
its type hints. `unset_fields` names a message's fields a conversion left at the default;
`unread_fields` names a message's fields a conversion ignores.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

# Datetimes keep microseconds, so the filled times have no finer part.
A_TIME = Timestamp(seconds=1_767_225_600, nanos=123_456_000)


# ---- Messages ------------------------------------------------------------------------------


def real_oneof(oneof: OneofDescriptor) -> bool:
    """Not the synthetic oneof of a proto3 `optional` field."""
    return len(oneof.fields) > 1 or oneof.name != "_" + oneof.fields[0].name


def scalar(field: FieldDescriptor, number: int) -> Any:
    """A value of the field's type that is not its default; `number` tells items apart."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.values[-number % len(field.enum_type.values)].number or 1
    if field.type == FieldDescriptor.TYPE_BOOL:
        return True
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return 0.5 * number
    if field.type == FieldDescriptor.TYPE_STRING:
        return f"{field.name}-{number}"
    if field.type == FieldDescriptor.TYPE_BYTES:
        return f"{field.name}-{number}".encode()
    wide = field.cpp_type in (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64)
    return 2**40 + number if wide else 7 + number


def fill(message: Message, number: int = 1, chosen: FieldDescriptor | None = None) -> Message:
    """Sets every field of `message` (of each real oneof only its first member, or
    `chosen`) to a value that is not the default."""
    for field in message.DESCRIPTOR.fields:
        oneof = field.containing_oneof
        if (
            oneof is not None
            and real_oneof(oneof)
            and field is not (chosen if chosen in oneof.fields else oneof.fields[0])
        ):
            continue
        set_field(message, field, number)
    return message


def set_field(message: Message, field: FieldDescriptor, number: int) -> None:
    target = getattr(message, field.name)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        for n in (number, number + 1):
            key = f"key-{n}"
            if value_field.message_type is None:
                target[key] = scalar(value_field, n)
            else:
                fill(target[key], n)
    elif field.is_repeated:
        for n in (number, number + 1):
            if field.message_type is None:
                target.append(scalar(field, n))
            else:
                set_message(target.add(), n)
    elif field.message_type is not None:
        set_message(target, number)
    else:
        setattr(message, field.name, scalar(field, number))


def set_message(message: Message, number: int) -> None:
    if isinstance(message, Timestamp):
        message.CopyFrom(Timestamp(seconds=A_TIME.seconds + number, nanos=A_TIME.nanos))
    elif isinstance(message, Struct):
        message.update({"language": "python", "lines": float(number), "tags": ["a", "b"]})
    else:
        fill(message, number)


def filled(descriptor: Descriptor) -> Iterator[Message]:
    """The message with every field set, once for each member of its real oneofs."""
    message_class = message_factory.GetMessageClass(descriptor)
    choices = [f for o in descriptor.oneofs if real_oneof(o) for f in o.fields] or [None]
    for chosen in choices:
        yield fill(message_class(), chosen=chosen)


def differences(expected: Message, got: Message) -> list[str]:
    return [
        f.name
        for f in expected.DESCRIPTOR.fields
        if getattr(expected, f.name) != getattr(got, f.name)
    ]


def unset_fields(message: Message, path: str = "") -> list[str]:
    """The paths of the fields of `message` left at their default (an empty repeated
    field or map, an absent message), looking into every item; of a real oneof, one
    member set is enough."""
    found = []
    for field in message.DESCRIPTOR.fields:
        where = f"{path}{field.name}"
        oneof = field.containing_oneof
        if oneof is not None and real_oneof(oneof):
            chosen = message.WhichOneof(oneof.name)
            if chosen is None and field is oneof.fields[0]:
                found.append(f"{path}{oneof.name}")
            if chosen != field.name:
                continue
        found += _unset(message, field, where)
    return found


def _unset(message: Message, field: FieldDescriptor, where: str) -> list[str]:
    value = getattr(message, field.name)
    is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
    if field.is_repeated or is_map:
        if not value:
            return [where]
        items = value.values() if is_map else value
        return [
            path
            for index, item in enumerate(items)
            if isinstance(item, Message)
            for path in unset_fields(item, f"{where}[{index}].")
        ]
    if field.message_type is None:
        return [] if value != field.default_value else [where]
    if not message.HasField(field.name) or (isinstance(value, Struct) and not value):
        return [where]
    if isinstance(value, Timestamp | Struct):
        return []
    return unset_fields(value, f"{where}.")


def assert_writes_every_field(
    name: str, records: Mapping[str, tuple[Callable[[], Any], Callable[[Any], Message]]]
) -> None:
    """records[name] makes a full record and converts it to message `name`: no field of
    the message may stay unset."""
    make, to_proto = records[name]
    message = to_proto(make())
    assert message.DESCRIPTOR.name == name
    assert unset_fields(message) == []


def unread_fields(message: Message, convert: Callable[[Message], Any]) -> list[str]:
    """The fields of `message` that `convert` ignores: clearing one of them (on its own)
    leaves the result equal."""
    whole = convert(message)
    ignored = []
    for field in message.DESCRIPTOR.fields:
        oneof = field.containing_oneof
        if oneof is not None and real_oneof(oneof) and message.WhichOneof(oneof.name) != field.name:
            continue
        without = type(message)()
        without.CopyFrom(message)
        without.ClearField(field.name)
        if convert(without) == whole:
            ignored.append(field.name)
    return ignored


# ---- Domain records ------------------------------------------------------------------------


def filled_record(cls: type, values: Mapping[str, Any] | None = None, number: int = 1) -> Any:
    """An instance of dataclass `cls` with every field set to a value that is not the
    default, from its type hints (nested dataclasses filled too); `values` gives the
    fields whose values must be of a kind (an enum's name, an ISO time), by field name at
    any depth, or as "Class.field" for one class's."""
    values = values or {}
    hints = typing.get_type_hints(cls)
    found = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        for key in (f"{cls.__name__}.{field.name}", field.name):
            if key in values:
                found[field.name] = values[key]
                break
        else:
            found[field.name] = _value(hints[field.name], field.name, values, number)
    return cls(**found)


def _value(hint: Any, name: str, values: Mapping[str, Any], number: int) -> Any:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in arguments if a is not type(None)), name, values, number)
    if origin in (list, tuple) and arguments:
        items = [_value(arguments[0], name, values, n) for n in (number, number + 1)]
        return items if origin is list else tuple(items)
    if origin is dict or hint is dict:
        return {
            f"key-{n}": _value(arguments[1], name, values, n) if arguments else n
            for n in (number, number + 1)
        }
    if dataclasses.is_dataclass(hint):
        return filled_record(typing.cast(type, hint), values, number)
    if hint is bool:
        return True
    if hint is float:
        return 1_767_225_600.25 + number  # a time, when it is one
    if hint is int:
        return 7 + number
    if hint is str:
        return f"{name}-{number}"
    if hint is Any:
        return f"{name}-{number}"
    raise TypeError(f"no filled value for {name}: {hint!r}")
