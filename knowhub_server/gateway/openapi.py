"""GET /openapi.json: the gateway's OpenAPI 3.1 document, generated so it cannot drift.

Every request and response schema comes from the proto descriptors (proto3 JSON mapping),
the agent tool routes' envelopes included: the HTTP API changes only when a contract does.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from knowhub.knowledge import ORDERS
from knowhub_contracts import enum_names
from knowhub_contracts.v1 import admin_pb2, cognition_pb2, knowledge_pb2, resource_pb2

from knowhub_server.gateway import openapi_examples
from knowhub_server.gateway.translation import RPCS, SERVICES, Rpc

Schema = dict[str, Any]
SELECTIONS = enum_names(knowledge_pb2.Selection.DESCRIPTOR)

_INT_BOUNDS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
}
_INT64_BOUNDS = {
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
# Well-known types have JSON forms of their own.
_WELL_KNOWN: dict[str, Schema] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]{1,9})?s$"},
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Empty": {"type": "object", "additionalProperties": False},
    "google.protobuf.FieldMask": {"type": "string"},
    "google.protobuf.Any": {"type": "object"},
}
ERROR: Schema = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "gRPC status code name"},
                "message": {"type": "string"},
            },
        }
    },
}


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


# ---- Proto messages ----------------------------------------------------------------------


def _scalar(field: FieldDescriptor) -> Schema:
    if field.type in _INT_BOUNDS:
        low, high = _INT_BOUNDS[field.type]
        return {"type": "integer", "minimum": low, "maximum": high}
    if field.type in _INT64_BOUNDS:  # a number when exact, else a decimal string
        low, high = _INT64_BOUNDS[field.type]
        return {
            "anyOf": [
                {"type": "integer", "minimum": low, "maximum": high},
                {"type": "string", "pattern": r"^-?[0-9]{1,20}$"},
            ]
        }
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return {"type": "number"}
    if field.type == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if field.type == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    if field.type == FieldDescriptor.TYPE_ENUM and field.enum_type is not None:
        names = [value.name for value in field.enum_type.values]
        return {
            "anyOf": [
                {"type": "string", "enum": names},
                {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1},
            ]
        }
    return {"type": "string"}


def _value(field: FieldDescriptor, found: dict[str, Descriptor]) -> Schema:
    if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
        return _message_ref(field.message_type, found)
    return _scalar(field)


def _descriptor(message: type[Message]) -> Descriptor:
    # protobuf's stubs type it as the C++ or the Python descriptor; both read alike
    return cast(Descriptor, message.DESCRIPTOR)


def _message_ref(descriptor: Descriptor, found: dict[str, Descriptor]) -> Schema:
    if descriptor.full_name in _WELL_KNOWN:
        return dict(_WELL_KNOWN[descriptor.full_name])
    found.setdefault(descriptor.full_name, descriptor)
    return _ref(descriptor.full_name)


def _field(field: FieldDescriptor, found: dict[str, Descriptor]) -> Schema:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value = field.message_type.fields_by_name["value"]
        return {"type": "object", "additionalProperties": _value(value, found)}
    if field.is_repeated:
        return {"type": "array", "items": _value(field, found)}
    return _value(field, found)


def _message(descriptor: Descriptor, found: dict[str, Descriptor]) -> Schema:
    return {
        "type": "object",
        "additionalProperties": False,
        "title": descriptor.full_name,
        "properties": {f.name: _field(f, found) for f in descriptor.fields},
    }


def _proto_components(found: dict[str, Descriptor]) -> dict[str, Schema]:
    """The schema of every message in `found` and of every message they refer to."""
    components: dict[str, Schema] = {}
    while len(components) < len(found):
        for name, descriptor in list(found.items()):
            if name not in components:
                components[name] = _message(descriptor, found)
    return components


def _search_hit(found: dict[str, Descriptor]) -> Schema:
    """The REST search result: the Knowledge message's fields, flat, then SearchHit's."""
    hit = _message(_descriptor(knowledge_pb2.Knowledge), found)
    own = _message(_descriptor(knowledge_pb2.SearchHit), found)["properties"]
    hit["properties"].update({name: schema for name, schema in own.items() if name != "knowledge"})
    hit["title"] = "knowledge search result"
    return hit


def _obj(**properties: Schema) -> Schema:
    return {"type": "object", "properties": properties, "required": list(properties)}


# ---- Operations ---------------------------------------------------------------------------


def _json(schema: Schema) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _operation(
    summary: str,
    ok: Schema,
    *,
    status: str = "200",
    tag: str = "agent tools",
    body: Schema | None = None,
    parameters: list[Schema] | None = None,
    operation_id: str,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "operationId": operation_id,
        "tags": [tag],
        "responses": {
            status: {"description": "OK", "content": _json(ok)},
            "default": {
                "description": "An error; `code` is the gRPC status name.",
                "content": _json(_ref("Error")),
            },
        },
    }
    if body is not None:
        operation["requestBody"] = {"required": False, "content": _json(body)}
    if parameters:
        operation["parameters"] = parameters
    return operation


def _param(
    name: str, where: str, schema: Schema, description: str = "", required: bool = False
) -> Schema:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": description,
    }


def _without(message: Schema, *names: str) -> Schema:
    """A request message's schema less the fields the URL path gives."""
    body = copy.deepcopy(message)
    for name in names:
        body["properties"].pop(name)
    return body


def _rpc_operation(rpc: Rpc, found: dict[str, Descriptor]) -> dict[str, Any]:
    request = _message_ref(rpc.method.input_type, found)
    response = _message_ref(rpc.method.output_type, found)
    operation = _operation(
        f"{rpc.method.containing_service.name}.{rpc.name}",
        response,
        tag=rpc.service,
        body=request,
        operation_id=f"{rpc.service}.{rpc.name}",
    )
    if rpc.streaming:
        operation["description"] = (
            "Server-streaming: the answer is NDJSON, one response message (proto3 JSON) "
            "per line as it arrives, until the caller disconnects; a failure after the "
            'stream started is a last line {"error": {...}}.'
        )
        operation["responses"]["200"]["content"] = {
            "application/x-ndjson": {"schema": {"type": "string"}}
        }
    return operation


def _rest_paths(found: dict[str, Descriptor]) -> dict[str, Any]:
    def ref(message: type[Message]) -> Schema:
        return _message_ref(_descriptor(message), found)

    knowledge = ref(knowledge_pb2.Knowledge)
    list_text = {"type": "string"}
    selection = {
        "type": "string",
        "enum": list(SELECTIONS.names),
        "description": "how the candidates were chosen: routed (by the LLM), "
        "recall (above the relevance floor), degraded (BM25 alone)",
    }
    feedback = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "feedback_list": {
                "type": "array",
                "items": {
                    "allOf": [
                        _message_ref(_descriptor(knowledge_pb2.KnowledgeFeedback), found),
                        {"required": ["is_helpful"]},
                    ]
                },
            }
        },
    }
    return {
        "/api/knowledge/search": {
            "get": _operation(
                "knowledge_search: two-stage search, best first",
                _obj(
                    results={"type": "array", "items": _ref("SearchHit")},
                    count={"type": "integer"},
                    selection=selection,
                ),
                operation_id="knowledge_search",
                parameters=[
                    _param("q", "query", {"type": "string"}, "the search text", required=True),
                    _param("top_k", "query", {"type": "integer"}, "1-100, default 5"),
                    _param("min_score", "query", {"type": "integer"}, "default 3"),
                    _param("types", "query", list_text, "comma-separated knowledge types"),
                    _param(
                        "min_relevance",
                        "query",
                        {"type": "number", "minimum": 0, "maximum": 1},
                        "0-1: only records at least this relevant; default: the hub's floor",
                    ),
                ],
            )
        },
        "/api/knowledge/ask": {
            "post": _operation(
                "knowledge_ask: search, then the LLM's answer citing the hits; with "
                "trace_id, logged as that trace's query event",
                _obj(
                    answer={"type": "string"},
                    cited_ids={"type": "array", "items": {"type": "string"}},
                    results={"type": "array", "items": _ref("SearchHit")},
                    count={"type": "integer"},
                    routed={"type": "boolean"},
                    selection=selection,
                    event_id={"type": "string"},
                ),
                operation_id="knowledge_ask",
                body=_ref(knowledge_pb2.AskKnowledgeRequest.DESCRIPTOR.full_name),
            )
        },
        "/api/knowledge": {
            "get": _operation(
                "knowledge_list: visible knowledge, newest first",
                _obj(
                    items={"type": "array", "items": knowledge},
                    count={"type": "integer"},
                    next_page_token={"type": "string"},
                ),
                operation_id="knowledge_list",
                parameters=[
                    _param("limit", "query", {"type": "integer"}, "1-100, default 10"),
                    _param("types", "query", list_text, "comma-separated knowledge types"),
                    _param("scopes", "query", list_text, "comma-separated scopes"),
                    _param(
                        "page_token",
                        "query",
                        {"type": "string"},
                        "next_page_token of the previous page; empty for the first",
                    ),
                    _param(
                        "order",
                        "query",
                        {"type": "string", "enum": list(ORDERS.names)},
                        "updated (newest first, the default) or confidence",
                    ),
                ],
            ),
            "post": _operation(
                "knowledge_save (201; 200 when the same knowledge of the same owner and "
                "scopes was there already: that record, nothing written)",
                knowledge,
                status="201",
                operation_id="knowledge_save",
                body=_ref(knowledge_pb2.SaveKnowledgeRequest.DESCRIPTOR.full_name),
            ),
        },
        "/api/knowledge/{id}": {
            "put": _operation(
                "knowledge_update: feedback, score, evolution, edits by update_mask",
                knowledge,
                operation_id="knowledge_update",
                body=_without(
                    _message(_descriptor(knowledge_pb2.UpdateKnowledgeRequest), found), "id"
                ),
                parameters=[_param("id", "path", {"type": "string"}, "the record's id")],
            ),
            "patch": _operation(
                "knowledge_edit: write the fields update_mask names (AIP-134), keeping the "
                "state before as a version",
                knowledge,
                operation_id="knowledge_edit",
                body=knowledge,
                parameters=[
                    _param("id", "path", {"type": "string"}, "the record's id"),
                    _param(
                        "update_mask",
                        "query",
                        list_text,
                        "comma-separated: task, "
                        "content, tags, types, scopes, resource_ids, or *; default: "
                        "the fields the body sets",
                    ),
                    _param("change_note", "query", {"type": "string"}, "why"),
                ],
            ),
            "delete": _operation(
                "knowledge_delete: soft delete, undone by undelete until purge_time",
                ref(knowledge_pb2.DeleteKnowledgeResponse),
                operation_id="knowledge_delete",
                parameters=[_param("id", "path", {"type": "string"}, "the record's id")],
            ),
        },
        "/api/knowledge/{id}/undelete": {
            "post": _operation(
                "knowledge_undelete: restore a deleted record",
                knowledge,
                operation_id="knowledge_undelete",
                parameters=[_param("id", "path", {"type": "string"}, "the record's id")],
            )
        },
        "/api/knowledge/{id}/versions": {
            "get": _operation(
                "knowledge_versions: earlier states, newest first",
                _obj(versions={"type": "array", "items": ref(knowledge_pb2.KnowledgeVersion)}),
                operation_id="knowledge_versions",
                parameters=[_param("id", "path", {"type": "string"}, "the record's id")],
            )
        },
        "/api/forget": {
            "post": _operation(
                "forget: erase everything about a user or an agent in every service (an "
                "admin, or a user about itself)",
                ref(admin_pb2.ForgetSubjectResponse),
                operation_id="forget",
                body=_ref(admin_pb2.ForgetSubjectRequest.DESCRIPTOR.full_name),
            )
        },
        "/api/knowledge/batch_update": {
            "post": _operation(
                "knowledge_batch_update: each item on its own",
                _obj(
                    results={"type": "array", "items": ref(knowledge_pb2.KnowledgeFeedbackResult)},
                    updated={"type": "integer"},
                ),
                operation_id="knowledge_batch_update",
                body=feedback,
            )
        },
        "/api/knowledge/slim": {
            "post": _operation(
                "knowledge_slim: merge near-duplicates",
                ref(knowledge_pb2.SlimKnowledgeResponse),
                operation_id="knowledge_slim",
                body=_ref(knowledge_pb2.SlimKnowledgeRequest.DESCRIPTOR.full_name),
            )
        },
        "/api/resource/{id}": {
            "get": _operation(
                "resource_get: one resource (secure_body on request)",
                ref(resource_pb2.Resource),
                operation_id="resource_get",
                parameters=[
                    _param("id", "path", {"type": "string"}, "path-like, may hold /"),
                    _param(
                        "include_secure",
                        "query",
                        {"type": "boolean"},
                        "with the decrypted secure_body, when allowed (audited)",
                    ),
                    _param(
                        "version",
                        "query",
                        {"type": "integer"},
                        "a kept version; the latest by default",
                    ),
                ],
            )
        },
        "/api/traces/{tid}/extractions/{eid}/review": {
            "post": _operation(
                "Extraction review: approve, edit or discard",
                ref(cognition_pb2.Extraction),
                operation_id="extraction_review",
                body=_without(
                    _message(_descriptor(cognition_pb2.ReviewExtractionRequest), found),
                    "trace_id",
                    "extraction_id",
                ),
                parameters=[
                    _param("tid", "path", {"type": "string"}, "the trace's id"),
                    _param("eid", "path", {"type": "string"}, "the extraction's id (pending-...)"),
                ],
            )
        },
    }


def _overview_path() -> dict[str, Any]:
    part_error = _obj(error=ERROR["properties"]["error"])
    count = {"anyOf": [_obj(count={"type": "integer"}, more={"type": "boolean"}), part_error]}
    error_item = _obj(
        what={"type": "string"},
        id={"type": "string"},
        message={"type": "string"},
        time={"type": "string"},
    )
    text = {"type": "string"}
    return {
        "/api/overview": {
            "get": _operation(
                "The console's overview: the hub's configuration (never a secret; admins only), "
                "counts of what "
                "the token sees (up to 1,000 each; more: at least that many) and recent failures",
                _obj(
                    configuration={
                        "anyOf": [
                            _obj(
                                mode=text,
                                model=text,
                                model_configured={"type": "boolean"},
                                embeddings=text,
                                storage=text,
                                metrics_port={"type": ["integer", "null"]},
                            ),
                            part_error,
                            {"type": "null"},
                        ]
                    },
                    counts=_obj(
                        records=count, traces=count, pending_reviews=count, failed_jobs=count
                    ),
                    recent_errors={
                        "anyOf": [_obj(items={"type": "array", "items": error_item}), part_error]
                    },
                    knowledge_types={"type": "array", "items": text},
                    links={"type": "object", "additionalProperties": text},
                ),
                tag="console",
                operation_id="overview",
            )
        }
    }


def _with_examples(paths: dict[str, Any]) -> dict[str, Any]:
    """Each operation's request body and URL parameters with their example."""
    for item in paths.values():
        for operation in item.values():
            name = operation["operationId"]
            if "requestBody" in operation and name in openapi_examples.BODIES:
                operation["requestBody"]["content"]["application/json"]["example"] = (
                    openapi_examples.BODIES[name]
                )
            values = openapi_examples.PARAMETERS.get(name, {})
            for parameter in operation.get("parameters", []):
                if parameter["name"] in values:
                    parameter["example"] = values[parameter["name"]]
    return paths


@functools.cache
def document() -> dict[str, Any]:
    found: dict[str, Descriptor] = {}
    paths: dict[str, Any] = {
        f"/api/v1/{rpc.service}/{rpc.name}": {"post": _rpc_operation(rpc, found)}
        for rpc in RPCS.values()
    }
    paths = {**_rest_paths(found), **_overview_path(), **paths}
    search_hit = _search_hit(found)
    schemas = {**_proto_components(found), "SearchHit": search_hit, "Error": ERROR}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "KnowHub REST gateway",
            "version": "1",
            "description": "The agent tools' knowledge API, the review call, and every "
            "RPC of the " + ", ".join(SERVICES) + " services at "
            "POST /api/v1/{service}/{Method} (proto3 JSON).",
        },
        "paths": _with_examples(paths),
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The same tokens as gRPC (KNOWHUB_TOKENS_FILE).",
                }
            },
        },
        "security": [{"bearer": []}, {}],
    }
