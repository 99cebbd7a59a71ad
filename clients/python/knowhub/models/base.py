"""What every SDK model shares: times, enum names, and conversion to and from proto by
field name.

A `ProtoModel[P]` is a dataclass whose fields carry the names of proto message P's fields;
`from_proto` and `to_proto` convert each field by its name and its proto type:

- a Timestamp is a `datetime` (UTC) or None when unset;
- an enum is its short name (`EnumNames`, from knowhub_contracts): RESOURCE_CONTENT_TYPE_CODE
  is "code";
- a Struct is a dict; a nested message is its model (the field's type hint names it),
  or, where the hint is a dict, the message's fields as JSON (proto field names);
- a field with presence whose hint allows None is None when unset.

A `ProtoList[Item, P]` is a list of models Item from response P's repeated field of
them, with P's other fields (`next_page_token`, ...) as attributes.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, Generic, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub_contracts import enum_names, message_dict, message_from_dict

TimeLike = datetime | str | float | int | None
P = TypeVar("P", bound=Message)
ItemT = TypeVar("ItemT", bound="ProtoModel[Any]")
M = TypeVar("M", bound="ProtoModel[Any]")
L = TypeVar("L", bound="ProtoList[Any, Any]")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TIMESTAMP = Timestamp.DESCRIPTOR.full_name
_STRUCT = Struct.DESCRIPTOR.full_name


# ---- Times -----------------------------------------------------------------------------------


def from_timestamp(stamp: Timestamp) -> datetime | None:
    """A UTC datetime; None for an unset (zero) Timestamp. (Timestamp.ToDatetime's value,
    at a quarter of its cost: conversions of many records spend their time here.)"""
    seconds, nanos = stamp.seconds, stamp.nanos
    if seconds == 0 and nanos == 0:
        return None
    return _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)


def to_timestamp(value: TimeLike) -> Timestamp | None:
    """A Timestamp from a datetime, an ISO 8601 string or epoch seconds (None stays None)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        # Exact, from the datetime's own fields: through a float, a time the hub gave out
        # could come back a fraction of a microsecond later than itself.
        delta = value - _EPOCH
        return Timestamp(
            seconds=delta.days * 86_400 + delta.seconds, nanos=delta.microseconds * 1000
        )
    seconds, micros = divmod(round(float(value) * 1e6), 1_000_000)
    return Timestamp(seconds=seconds, nanos=micros * 1000)


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


# ---- Models ----------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A value as JSON-ready data: models as dicts, datetimes as ISO 8601 strings."""
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass
class Model:
    """A result; `to_dict()` gives its JSON shape (times as ISO 8601 strings)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass
class ProtoModel(Model, Generic[P]):
    """A model of proto message P (its type argument), converted field by field name."""

    PROTO: ClassVar[type[Message]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        proto = _type_argument(cls, ProtoModel, 0)
        if proto is not None:
            cls.PROTO = proto

    @classmethod
    def from_proto(cls: type[M], message: Message) -> M:
        return typing.cast(M, _field_plan(cls).read(message))

    def to_proto(self) -> P:
        return typing.cast(P, _field_plan(type(self)).write(self))


class ProtoList(list[ItemT], Generic[ItemT, P]):
    """A list of models (ItemT) from response P's repeated field of them; P's other fields
    that the class annotates (e.g. `next_page_token: str = ""`) are attributes."""

    PROTO: ClassVar[type[Message]]
    ITEM: ClassVar[type[ProtoModel[Any]]]
    ITEMS: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        item, proto = _type_argument(cls, ProtoList, 0), _type_argument(cls, ProtoList, 1)
        if item is not None and proto is not None:
            cls.ITEM, cls.PROTO = item, proto
            cls.ITEMS = next(
                f.name
                for f in proto.DESCRIPTOR.fields
                if f.is_repeated and f.message_type is item.PROTO.DESCRIPTOR
            )

    @classmethod
    def from_proto(cls: type[L], message: Message) -> L:
        result = cls(map(cls.ITEM.from_proto, getattr(message, cls.ITEMS)))
        for name, value in _field_plan(cls).read(message).items():
            setattr(result, name, value)
        return result

    def to_proto(self) -> P:
        values = _field_plan(type(self)).write(self)
        values[self.ITEMS] = [item.to_proto() for item in self]
        return typing.cast(P, self.PROTO(**values))


def _type_argument(cls: type, generic: type, index: int) -> Any:
    for base in getattr(cls, "__orig_bases__", ()):
        if typing.get_origin(base) is generic:
            argument = typing.get_args(base)[index]
            return None if isinstance(argument, TypeVar) else argument
    return None


# ---- Conversion by field ---------------------------------------------------------------------

Convert = Callable[[Any], Any]


class _FieldPlan:
    """How a class converts, worked out once per class: for each field of cls.PROTO that
    cls has (a dataclass field or, on a ProtoList, an annotated attribute), an expression
    that reads it from a message and one that writes it, compiled into one function each
    way, as dataclasses compiles `__init__`: a call then runs the conversions and nothing
    else, as fast as a conversion written out by hand."""

    def __init__(self, cls: type[ProtoModel[Any]] | type[ProtoList[Any, Any]]) -> None:
        hints = typing.get_type_hints(cls)
        self._helpers: dict[str, Any] = {}
        reads, writes = [], []
        for field in descriptor_of(cls.PROTO).fields:
            hint = hints.get(field.name)
            if hint is not None and not _is_class_var(hint):
                read, write = self._expressions(field, hint)
                reads.append((field.name, read))
                writes.append((field.name, write))
        into_model = cls if issubclass(cls, ProtoModel) else dict
        into_message = cls.PROTO if issubclass(cls, ProtoModel) else dict
        self.read: Convert = self._compile("m", into_model, reads)
        self.write: Convert = self._compile("o", into_message, writes)

    def _expressions(self, field: FieldDescriptor, hint: Any) -> tuple[str, str]:
        """The field's read (of message `m`) and write (of model `o`), as Python."""
        name = field.name
        got, given = f"m.{name}", f"o.{name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            load, dump = self._helper(value_field, typing.get_args(hint)[1])
            if load is None:
                return f"dict({got})", given
            return (
                f"{{k: {load}(v) for k, v in {got}.items()}}",
                f"{{k: {dump}(v) for k, v in {given}.items()}}",
            )
        if field.is_repeated:
            load, dump = self._helper(field, typing.get_args(hint)[0])
            sequence = "tuple" if typing.get_origin(hint) is tuple else "list"
            if load is None:
                return f"{sequence}({got})", given
            read = f"[{load}(v) for v in {got}]"
            return (
                read if sequence == "list" else f"tuple({read})",
                f"[{dump}(v) for v in {given}]",
            )
        present, hint = _without_none(hint)
        load, dump = self._helper(field, hint)
        read, write = (got, given) if load is None else (f"{load}({got})", f"{dump}({given})")
        if present and field.has_presence:
            return (
                f"({read} if m.HasField({name!r}) else None)",
                f"(None if {given} is None else {write})",
            )
        return read, write

    def _helper(self, field: FieldDescriptor, hint: Any) -> tuple[str | None, str | None]:
        """The names the compiled code calls one value's converters by; None for a value
        that passes as it is."""
        load, dump = _element(field, hint)
        if load is _same:
            return None, None
        number = len(self._helpers) // 2
        self._helpers[f"_load{number}"], self._helpers[f"_dump{number}"] = load, dump
        return f"_load{number}", f"_dump{number}"

    def _compile(self, argument: str, into: Any, values: list[tuple[str, str]]) -> Convert:
        keywords = ", ".join(f"{name}={expression}" for name, expression in values)
        source = f"def convert({argument}):\n    return _into({keywords})\n"
        namespace = {**self._helpers, "_into": into}
        exec(compile(source, f"<{into.__name__} conversion>", "exec"), namespace)
        return typing.cast(Convert, namespace["convert"])


_PLANS: dict[type, _FieldPlan] = {}
_PLANNING: set[type] = set()  # the classes whose plans are being made (a model may nest)


def _field_plan(cls: type[ProtoModel[Any]] | type[ProtoList[Any, Any]]) -> _FieldPlan:
    """The class's conversions, made on first use, when every model a hint names exists."""
    plan = _PLANS.get(cls)
    if plan is None:
        _PLANNING.add(cls)
        try:
            plan = _PLANS[cls] = _FieldPlan(cls)
        finally:
            _PLANNING.discard(cls)
    return plan


def _model_reader(model: type[ProtoModel[Any]]) -> Callable[[Message], Any]:
    """A nested model's reader: its compiled one, or its from_proto where the model has
    its own or while its compiled one is being made (a model within itself)."""
    own = model.from_proto.__func__ is not ProtoModel.from_proto.__func__  # type: ignore[attr-defined]
    return model.from_proto if own or model in _PLANNING else _field_plan(model).read


def descriptor_of(message: type[Message]) -> Descriptor:
    """The message's descriptor (the C implementation's, typed as the Python one's)."""
    return typing.cast(Descriptor, message.DESCRIPTOR)


def _is_class_var(hint: Any) -> bool:
    return hint is ClassVar or typing.get_origin(hint) is ClassVar


def _without_none(hint: Any) -> tuple[bool, Any]:
    """(whether the hint allows None, the hint without None)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(hint) if a is not type(None)]
        return len(kept) < len(typing.get_args(hint)), kept[0]
    return False, hint


def _element(field: FieldDescriptor, hint: Any) -> tuple[Convert, Convert]:
    """How one value of the field converts, given its model-side type hint."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = enum_names(field.enum_type)
        return names.name, lambda value: names.proto_name(value, field.name)
    message = field.message_type
    if message is None:
        return _same, _same
    if message.full_name == _TIMESTAMP:
        return from_timestamp, to_timestamp
    if message.full_name == _STRUCT:
        return json_format.MessageToDict, lambda value: message_from_dict(message, value)
    if isinstance(hint, type) and issubclass(hint, ProtoModel):
        return _model_reader(hint), lambda value: value.to_proto()
    return message_dict, lambda value: message_from_dict(message, value)


def _same(value: Any) -> Any:
    return value
