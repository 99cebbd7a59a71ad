"""Nothing is lost between a proto message and its SDK model: for every message the SDK
converts, a message with every field set (walking its descriptor) goes proto -> model ->
proto and comes back equal. A field added to a proto and not to its model fails here."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import knowhub.models
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub.models import MemoryDocument, ProtoList, ProtoModel
from knowhub.models.base import descriptor_of
from knowhub.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

# Datetimes keep microseconds, so the filled times have no finer part.
A_TIME = Timestamp(seconds=1_767_225_600, nanos=123_456_000)
SERVICES = [service for module in (knowledge_pb2, resource_pb2, cognition_pb2, dream_pb2)
            for service in module.DESCRIPTOR.services_by_name.values()]
# Responses the SDK reads more than one field of without a model of their own.
BY_HAND = {dream_pb2.GetMemoryDocumentResponse.DESCRIPTOR.full_name}

MODELS = sorted(
    (model for _, model in inspect.getmembers(knowhub.models, inspect.isclass)
     if issubclass(model, ProtoModel | ProtoList) and "PROTO" in vars(model)),
    key=lambda model: model.__name__)


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
    descriptor = message.DESCRIPTOR
    for field in descriptor.fields:
        oneof = field.containing_oneof
        if oneof is not None and real_oneof(oneof) and field is not (
                chosen if chosen in oneof.fields else oneof.fields[0]):
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
    return [f.name for f in expected.DESCRIPTOR.fields
            if getattr(expected, f.name) != getattr(got, f.name)]


def test_the_models_cover_every_message_with_a_model() -> None:
    converted = {descriptor_of(model.PROTO).full_name for model in MODELS}
    assert {"knowhub.v1.Knowledge", "knowhub.v1.SearchKnowledgeResponse",
            "knowhub.v1.Resource", "knowhub.v1.Event", "knowhub.v1.GetTraceViewResponse",
            "knowhub.v1.CognitiveEvent", "knowhub.v1.DreamRun",
            "knowhub.v1.ListMemoryDocumentsResponse"} <= converted
    assert len(MODELS) == len(converted)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_message_survives_its_model(model: type[ProtoModel[Any]] | type[ProtoList[Any, Any]],
                                      ) -> None:
    for message in filled(descriptor_of(model.PROTO)):
        assert message.ByteSize() > 0
        back = model.from_proto(message).to_proto()
        assert back == message, f"{model.__name__} loses {differences(message, back)}"


def test_a_memory_document_keeps_its_revisions() -> None:
    [response] = filled(dream_pb2.GetMemoryDocumentResponse.DESCRIPTOR)
    document = MemoryDocument.from_response(response)
    back = dream_pb2.GetMemoryDocumentResponse(
        document=document.to_proto(), revisions=[r.to_proto() for r in document.revisions])
    assert back == response


@pytest.mark.parametrize("service", SERVICES, ids=lambda service: service.name)
def test_every_answer_is_modelled_or_has_one_field(service: Any) -> None:
    """A response is a model's message, or the SDK returns its one field: a second field
    added to such a response needs a model (or the SDK drops it)."""
    modelled = {descriptor_of(model.PROTO).full_name for model in MODELS} | BY_HAND
    unmodelled = {method.output_type.full_name: len(method.output_type.fields)
                  for method in service.methods
                  if method.output_type.full_name not in modelled}
    assert {name: count for name, count in unmodelled.items() if count > 1} == {}


@dataclass
class SlimGroupWithoutNote(ProtoModel[knowledge_pb2.SlimGroup]):
    """SlimGroup's model as it would be had `note` been added to the proto only."""

    kept_id: str
    removed_ids: list[str]
    merged_by_llm: bool


def test_a_field_the_model_lacks_fails_the_round_trip() -> None:
    [message] = filled(knowledge_pb2.SlimGroup.DESCRIPTOR)
    back = SlimGroupWithoutNote.from_proto(message).to_proto()
    assert differences(message, back) == ["note"]
