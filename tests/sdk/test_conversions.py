"""Nothing is lost between a proto message and its SDK model: for every message the SDK
converts, a message with every field set (walking its descriptor) goes proto -> model ->
proto and comes back equal. A field added to a proto and not to its model fails here."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import knowhub.models
import pytest
from knowhub.models import MemoryDocument, ProtoList, ProtoModel
from knowhub.models.base import descriptor_of
from knowhub_contracts.v1 import cognition_pb2, dream_pb2, knowledge_pb2, resource_pb2

from tests.support.messages import differences, filled

SERVICES = [
    service
    for module in (knowledge_pb2, resource_pb2, cognition_pb2, dream_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
]
# Responses the SDK reads more than one field of without a model of their own.
BY_HAND = {dream_pb2.GetMemoryDocumentResponse.DESCRIPTOR.full_name}

MODELS = sorted(
    (
        model
        for _, model in inspect.getmembers(knowhub.models, inspect.isclass)
        if issubclass(model, ProtoModel | ProtoList) and "PROTO" in vars(model)
    ),
    key=lambda model: model.__name__,
)


def test_the_models_cover_every_message_with_a_model() -> None:
    converted = {descriptor_of(model.PROTO).full_name for model in MODELS}
    assert {
        "knowhub.v1.Knowledge",
        "knowhub.v1.SearchKnowledgeResponse",
        "knowhub.v1.Resource",
        "knowhub.v1.Event",
        "knowhub.v1.GetTraceViewResponse",
        "knowhub.v1.CognitiveEvent",
        "knowhub.v1.DreamRun",
        "knowhub.v1.ListMemoryDocumentsResponse",
    } <= converted
    assert len(MODELS) == len(converted)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_message_survives_its_model(
    model: type[ProtoModel[Any]] | type[ProtoList[Any, Any]],
) -> None:
    for message in filled(descriptor_of(model.PROTO)):
        assert message.ByteSize() > 0
        back = model.from_proto(message).to_proto()
        assert back == message, f"{model.__name__} loses {differences(message, back)}"


def test_a_memory_document_keeps_its_revisions() -> None:
    [response] = filled(dream_pb2.GetMemoryDocumentResponse.DESCRIPTOR)
    document = MemoryDocument.from_response(response)
    back = dream_pb2.GetMemoryDocumentResponse(
        document=document.to_proto(), revisions=[r.to_proto() for r in document.revisions]
    )
    assert back == response


@pytest.mark.parametrize("service", SERVICES, ids=lambda service: service.name)
def test_every_answer_is_modelled_or_has_one_field(service: Any) -> None:
    """A response is a model's message, or the SDK returns its one field: a second field
    added to such a response needs a model (or the SDK drops it)."""
    modelled = {descriptor_of(model.PROTO).full_name for model in MODELS} | BY_HAND
    unmodelled = {
        method.output_type.full_name: len(method.output_type.fields)
        for method in service.methods
        if method.output_type.full_name not in modelled
    }
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
