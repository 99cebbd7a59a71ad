"""Hypothesis strategies that build any protobuf message from its descriptor.

Every field type gets random and edge values: strings empty, huge, unicode, with control
characters, or taken from a pool of plausible values (real ids, scopes, names) so that
calls get past the first checks; integers at and around every limit; enums with unknown
numbers; repeated fields empty, short or far too long; maps; nested messages; Timestamps
out of range; Structs too deep or with non-finite numbers; one member of each oneof.
A template (a valid request as a dict) can be mutated in one field, so the validation
deep inside a use case runs too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format, message_factory, struct_pb2, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

INT32_EDGES = (
    0,
    1,
    -1,
    2,
    3,
    5,
    6,
    12,
    20,
    99,
    100,
    101,
    128,
    500,
    501,
    1000,
    1001,
    527_040,
    527_041,
    2**31 - 1,
    -(2**31),
)
INT64_EDGES = (*INT32_EDGES, 2**53 - 1, 2**53, 2**63 - 1, -(2**63))
HUGE_LENGTHS = (129, 257, 513, 1_025, 2_001, 4_001, 65_537, 262_145, 1_000_001)
SUFFIXES = ("\x00", " ", "\n", "/", "/..", "..", ":", "é", "😀", "\u202e", "*", "%", "'")
# Seconds of 0001-01-01 and 9999-12-31 (the range Timestamp allows), and far beyond.
SECONDS_EDGES = (
    0,
    -1,
    -62_135_596_800,
    -62_135_596_801,
    253_402_300_799,
    253_402_300_800,
    2**62,
    -(2**62),
    1_800_000_000,
    1_700_000_000,
    4_102_444_800,
)
MAX_DEPTH = 4
_INT32_TYPES = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SFIXED32,
}
_INT64_TYPES = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
}
_UINT_TYPES = {
    FieldDescriptor.TYPE_UINT32: 32,
    FieldDescriptor.TYPE_FIXED32: 32,
    FieldDescriptor.TYPE_UINT64: 64,
    FieldDescriptor.TYPE_FIXED64: 64,
}


def _integers(bits: int, edges: Sequence[int]) -> st.SearchStrategy[int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from(edges), st.integers(-5, 1_100), st.integers(low, high))


def _unsigned(bits: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from((0, 1, 2**bits - 1)), st.integers(0, 2**bits - 1))


def _random_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(""),
        st.text(max_size=40),  # any code point but surrogates (protobuf strings are UTF-8)
        st.text(st.characters(max_codepoint=0x1F), min_size=1, max_size=8),
        st.text(st.characters(categories=("Lo", "So", "Mn", "Zs", "Cf")), max_size=20),
        st.sampled_from(HUGE_LENGTHS).map(lambda n: "a" * n),
    )


def timestamps() -> st.SearchStrategy[timestamp_pb2.Timestamp]:
    seconds = st.one_of(
        st.sampled_from(SECONDS_EDGES),
        st.integers(1_600_000_000, 1_900_000_000),
        st.integers(-(2**63), 2**63 - 1),
    )
    nanos = st.one_of(
        st.just(0),
        st.integers(0, 999_999_999),
        st.sampled_from((-1, 1_000_000_000, 2**31 - 1, -(2**31))),
    )
    return st.builds(lambda s, n: timestamp_pb2.Timestamp(seconds=s, nanos=n), seconds, nanos)


def _json_leaves() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.floats(),
        st.text(max_size=20),
        st.sampled_from(("2026-03-06T10:00:00Z", "1999-01-01", "not a time", "1e400", "")),
    )


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def structs() -> st.SearchStrategy[struct_pb2.Struct]:
    values = st.recursive(
        _json_leaves(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=10), inner, max_size=3)
        ),
        max_leaves=12,
    )
    expiry = st.one_of(
        _json_leaves(), st.integers(-(2**63), 2**63), st.sampled_from((1e20, -1.0, 1.8e9))
    )
    documents = st.one_of(
        st.dictionaries(st.text(max_size=12), values, max_size=5),
        st.fixed_dictionaries({"expires_at": expiry}),
        st.integers(1, 14).map(lambda depth: {"deep": _nested(depth, 1)}),
        st.sampled_from((2_000, 20_000)).map(lambda n: {"big": "b" * n}),
    )

    def to_struct(document: dict[str, Any]) -> struct_pb2.Struct:
        message = struct_pb2.Struct()
        message.update(document)
        return message

    return documents.map(to_struct)


WELL_KNOWN = {"google.protobuf.Timestamp": timestamps, "google.protobuf.Struct": structs}


class MessageFuzzer:
    """Builds strategies for messages: `fuzzer.messages(descriptor)`.

    `pools` maps a field name (or `Message.field`) to plausible string values for it;
    `general` are plausible for any string field."""

    def __init__(self, pools: Mapping[str, Sequence[str]], general: Sequence[str]) -> None:
        self._pools = pools
        self._general = list(general)

    def _pool(self, field: FieldDescriptor) -> list[str]:
        qualified = f"{field.containing_type.name}.{field.name}"
        return list(self._pools.get(qualified) or self._pools.get(field.name) or self._general)

    def _text(self, field: FieldDescriptor) -> st.SearchStrategy[str]:
        plausible = st.sampled_from(self._pool(field))
        altered = st.tuples(plausible, st.sampled_from(SUFFIXES)).map("".join)
        others = st.sampled_from(self._general)
        return st.one_of(plausible, plausible, altered, others, _random_text())

    def scalar(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        kind = field.type
        if kind == FieldDescriptor.TYPE_STRING:
            return self._text(field)
        if kind == FieldDescriptor.TYPE_BYTES:
            return st.binary(max_size=64)
        if kind == FieldDescriptor.TYPE_BOOL:
            return st.booleans()
        if kind in _INT32_TYPES:
            return _integers(32, INT32_EDGES)
        if kind in _INT64_TYPES:
            return _integers(64, INT64_EDGES)
        if kind in _UINT_TYPES:
            return _unsigned(_UINT_TYPES[kind])
        if kind == FieldDescriptor.TYPE_DOUBLE:
            return st.floats()
        if kind == FieldDescriptor.TYPE_FLOAT:
            return st.floats(width=32)
        if kind == FieldDescriptor.TYPE_ENUM:
            known = [value.number for value in field.enum_type.values]
            return st.one_of(
                st.sampled_from(known),
                st.sampled_from(known),
                _integers(32, (-1, max(known) + 1, 2**31 - 1)),
            )
        if kind == FieldDescriptor.TYPE_MESSAGE:
            return self.messages(field.message_type, depth + 1)
        raise TypeError(f"no strategy for field {field.full_name} of type {kind}")

    def _small(self, field: FieldDescriptor) -> st.SearchStrategy[Any]:
        """A value that stays small when repeated a thousand times."""
        if field.type == FieldDescriptor.TYPE_STRING:
            return st.sampled_from(self._pool(field))
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            return st.just(_new(field.message_type))
        return self.scalar(field, MAX_DEPTH)

    def value(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        """What to put in a field: a value, a list or a dict (maps)."""
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            key, value = (field.message_type.fields_by_name[n] for n in ("key", "value"))
            entries = st.dictionaries(
                self.scalar(key, depth), self.scalar(value, depth), max_size=4
            )
            if key.type != FieldDescriptor.TYPE_STRING:
                return entries
            many = st.tuples(st.sampled_from((33, 40)), self.scalar(value, depth)).map(
                lambda pair: {f"k{i}": pair[1] for i in range(pair[0])}
            )
            return st.one_of(entries, entries, many)
        if field.is_repeated:
            element = self.scalar(field, depth)
            few = st.lists(element, max_size=4)
            too_many = st.tuples(
                st.sampled_from((17, 33, 101, 501, 1_001)), self._small(field)
            ).map(lambda pair: [pair[1]] * pair[0])
            repeats = element.map(lambda item: [item, item])
            return st.one_of(few, few, few, too_many, repeats)
        return self.scalar(field, depth)

    def messages(self, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
        if descriptor.full_name in WELL_KNOWN:
            return WELL_KNOWN[descriptor.full_name]()
        if depth > MAX_DEPTH:
            return st.just(_new(descriptor))
        return self._message(descriptor, depth)

    def _message(self, descriptor: Descriptor, depth: int) -> st.SearchStrategy[Message]:
        oneofs = [oneof for oneof in descriptor.oneofs if len(oneof.fields) > 1]
        in_oneof = {f.name for oneof in oneofs for f in oneof.fields}

        @st.composite
        def build(draw: Any) -> Message:
            message = _new(descriptor)
            chosen = [draw(st.sampled_from([None, *oneof.fields])) for oneof in oneofs]
            for field in [f for f in chosen if f is not None] + [
                f for f in descriptor.fields if f.name not in in_oneof
            ]:
                if field.name in in_oneof or draw(st.booleans()):
                    set_field(message, field, draw(self.value(field, depth)))
            return message

        return build()

    def mutated(
        self, descriptor: Descriptor, templates: Sequence[Mapping[str, Any]]
    ) -> st.SearchStrategy[Message]:
        """A valid template, as it is or with one top-level field replaced or cleared."""
        fields = list(descriptor.fields)

        @st.composite
        def build(draw: Any) -> Message:
            message = json_format.ParseDict(
                draw(st.sampled_from(list(templates))), _new(descriptor)
            )
            field = draw(st.sampled_from([None, *fields]))
            if field is not None:
                message.ClearField(field.name)
                if draw(st.integers(0, 3)):
                    set_field(message, field, draw(self.value(field, 0)))
            return message

        return build()


def _new(descriptor: Descriptor) -> Message:
    return message_factory.GetMessageClass(descriptor)()


def set_field(message: Message, field: FieldDescriptor, value: Any) -> None:
    target = getattr(message, field.name)
    if isinstance(value, dict):  # a map
        for key, item in value.items():
            if isinstance(item, Message):
                target[key].CopyFrom(item)
            else:
                target[key] = item
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, Message):
                target.add().CopyFrom(item)
            else:
                target.append(item)
    elif isinstance(value, Message):
        target.CopyFrom(value)
    else:
        setattr(message, field.name, value)
