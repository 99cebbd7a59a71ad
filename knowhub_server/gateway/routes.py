"""The HTTP routes: the knowledge and resource API, ask and review, and every
RPC of the four services at POST /api/v1/{service}/{Method}.

Every answer is proto3 JSON of the services' messages, with the proto's field names: a
record has one shape on every route. The REST routes keep their own envelopes (search
`{results, count}` with each hit's record fields flat beside its scores).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Collection
from typing import Any

from google.protobuf.message import Message
from knowhub import errors
from knowhub.knowledge import ORDERS
from knowhub_contracts import enum_names
from knowhub_contracts.v1 import admin_pb2, cognition_pb2, knowledge_pb2, resource_pb2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from knowhub_server.gateway.session import request_token
from knowhub_server.gateway.translation import (
    Backend,
    M,
    Rpc,
    error_body,
    find_rpc,
    invalid,
    json_object,
    read_stream,
    to_json,
    to_message,
)

INT32_RANGE = range(-(2**31), 2**31)
# How long a streaming call may take to answer before the response starts anyway (its
# later failure is then the stream's last line).
FIRST_MESSAGE_WAIT_SECONDS = 0.5
NDJSON = "application/x-ndjson"
SELECTIONS = enum_names(knowledge_pb2.Selection.DESCRIPTOR)


class Query:
    """The query string, strictly: unknown parameters and repeated scalars are refused."""

    def __init__(self, request: Request, allowed: Collection[str]) -> None:
        self._params = request.query_params
        unknown = sorted(set(self._params.keys()) - set(allowed))
        if unknown:
            raise invalid(
                f"{unknown[0]}: unknown query parameter; allowed: {', '.join(sorted(allowed))}"
            )

    def _one(self, name: str) -> str | None:
        values = self._params.getlist(name)
        if len(values) > 1:
            raise invalid(f"{name}: given more than once")
        return values[0] if values else None

    def text(self, name: str, default: str = "") -> str:
        value = self._one(name)
        return default if value is None else value

    def integer(self, name: str, default: int | None = None) -> int | None:
        """The parameter as an integer; `default` when it is absent (None: the hub's)."""
        value = self._one(name)
        if value is None or value == "":
            return default
        try:
            number = int(value)
        except ValueError:
            raise invalid(f"{name}: must be an integer, not {value!r}") from None
        if number not in INT32_RANGE:
            raise invalid(f"{name}: {number} is out of range")
        return number

    def number(self, name: str) -> float | None:
        """A finite number, or None when not given."""
        value = self._one(name)
        if value is None or value == "":
            return None
        try:
            number = float(value)
        except ValueError:
            raise invalid(f"{name}: must be a number, not {value!r}") from None
        if not math.isfinite(number):
            raise invalid(f"{name}: must be a finite number, not {value!r}")
        return number

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self._one(name)
        if value is None or value == "":
            return default
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0"):
            return False
        raise invalid(f"{name}: must be true or false, not {value!r}")

    def items(self, name: str) -> list[str]:
        """A list given comma-separated, repeated, or both."""
        return [
            item.strip()
            for value in self._params.getlist(name)
            for item in value.split(",")
            if item.strip()
        ]


def _backend(request: Request) -> Backend:
    backend: Backend = request.app.state.backend
    return backend


async def _call(request: Request, service: str, method: str, message: Message) -> Any:
    token = request_token(request)
    return await _backend(request).call(find_rpc(service, method), message, token)


async def _body(request: Request, message_class: type[M], **path_fields: Any) -> M:
    return to_message(json_object(await request.body()), message_class, path_fields)


# ---- Knowledge ---------------------------------------------------------------------------


async def search_knowledge(request: Request) -> Response:
    query = Query(request, {"q", "top_k", "min_score", "types", "min_relevance"})
    text = query.text("q")
    if not text.strip():
        raise invalid("q: required (the search text)")
    message = knowledge_pb2.SearchKnowledgeRequest(
        query=text,
        top_k=query.integer("top_k"),
        min_score=query.integer("min_score"),
        types=query.items("types"),
        min_relevance=query.number("min_relevance"),
    )
    response = await _call(request, "knowledge", "SearchKnowledge", message)
    results = [search_hit_json(hit) for hit in response.hits]
    return JSONResponse(
        {
            "results": results,
            "count": len(results),
            "selection": SELECTIONS.name(response.selection),
        }
    )


def search_hit_json(hit: knowledge_pb2.SearchHit) -> dict[str, Any]:
    """The REST search result: the record's fields, flat, then the hit's own."""
    found = to_json(hit)
    return {**found.pop("knowledge"), **found}


async def list_knowledge(request: Request) -> Response:
    query = Query(request, {"limit", "types", "scopes", "page_token", "order"})
    order = query.text("order", "updated")
    if order not in ORDERS.names:
        raise invalid(f"order: must be {' or '.join(ORDERS.names)}, not {order!r}")
    message = knowledge_pb2.ListKnowledgeRequest(
        page_size=query.integer("limit", 10),
        page_token=query.text("page_token"),
        types=query.items("types"),
        scopes=query.items("scopes"),
        order_by=ORDERS.proto_name(order, "order"),
    )
    response = await _call(request, "knowledge", "ListKnowledge", message)
    items = [to_json(k) for k in response.knowledge]
    return JSONResponse(
        {"items": items, "count": len(items), "next_page_token": response.next_page_token}
    )


async def save_knowledge(request: Request) -> Response:
    Query(request, ())
    message = await _body(request, knowledge_pb2.SaveKnowledgeRequest)
    response = await _call(request, "knowledge", "SaveKnowledge", message)
    # 200, not 201: the same knowledge was there already, and nothing was written.
    return JSONResponse(to_json(response.knowledge), status_code=200 if response.existing else 201)


async def update_knowledge(request: Request) -> Response:
    Query(request, ())
    message = await _body(
        request, knowledge_pb2.UpdateKnowledgeRequest, id=request.path_params["id"]
    )
    response = await _call(request, "knowledge", "UpdateKnowledge", message)
    return JSONResponse(to_json(response.knowledge))


async def edit_knowledge(request: Request) -> Response:
    """PATCH (AIP-134): the body holds the record's new field values, `update_mask` the
    fields to write (those the body sets when absent), `change_note` why."""
    query = Query(request, {"update_mask", "change_note"})
    message = knowledge_pb2.UpdateKnowledgeRequest(
        id=request.path_params["id"],
        change_note=query.text("change_note"),
        knowledge=await _body(request, knowledge_pb2.Knowledge),
    )
    if query.items("update_mask"):
        message.update_mask.paths.extend(query.items("update_mask"))
    response = await _call(request, "knowledge", "UpdateKnowledge", message)
    return JSONResponse(to_json(response.knowledge))


async def delete_knowledge(request: Request) -> Response:
    Query(request, ())
    message = knowledge_pb2.DeleteKnowledgeRequest(id=request.path_params["id"])
    return JSONResponse(to_json(await _call(request, "knowledge", "DeleteKnowledge", message)))


async def undelete_knowledge(request: Request) -> Response:
    Query(request, ())
    message = knowledge_pb2.UndeleteKnowledgeRequest(id=request.path_params["id"])
    response = await _call(request, "knowledge", "UndeleteKnowledge", message)
    return JSONResponse(to_json(response.knowledge))


async def knowledge_versions(request: Request) -> Response:
    Query(request, ())
    message = knowledge_pb2.ListKnowledgeVersionsRequest(id=request.path_params["id"])
    response = await _call(request, "knowledge", "ListKnowledgeVersions", message)
    return JSONResponse({"versions": [to_json(v) for v in response.versions]})


async def forget_subject(request: Request) -> Response:
    Query(request, ())
    message = await _body(request, admin_pb2.ForgetSubjectRequest)
    return JSONResponse(to_json(await _call(request, "admin", "ForgetSubject", message)))


async def batch_update_knowledge(request: Request) -> Response:
    Query(request, ())
    data = json_object(await request.body())
    items = data.get("feedback_list")
    if isinstance(items, list):  # proto3 would read a forgotten is_helpful as false: harmful
        for index, item in enumerate(items):
            if isinstance(item, dict) and "is_helpful" not in item:
                raise invalid(f"feedback_list[{index}].is_helpful: required (true or false)")
    message = to_message(data, knowledge_pb2.BatchUpdateKnowledgeRequest)
    response = await _call(request, "knowledge", "BatchUpdateKnowledge", message)
    return JSONResponse(
        {
            "results": [to_json(r) for r in response.results],
            "updated": sum(1 for r in response.results if r.HasField("knowledge")),
        }
    )


async def ask_knowledge(request: Request) -> Response:
    Query(request, ())
    message = await _body(request, knowledge_pb2.AskKnowledgeRequest)
    response = await _call(request, "knowledge", "AskKnowledge", message)
    results = [search_hit_json(hit) for hit in response.hits]
    return JSONResponse(
        {
            "answer": response.answer,
            "cited_ids": list(response.cited_ids),
            "results": results,
            "count": len(results),
            "routed": response.routed,
            "selection": SELECTIONS.name(response.selection),
            "event_id": response.event_id,
        }
    )


async def slim_knowledge(request: Request) -> Response:
    Query(request, ())
    message = await _body(request, knowledge_pb2.SlimKnowledgeRequest)
    response = await _call(request, "knowledge", "SlimKnowledge", message)
    return JSONResponse(to_json(response))


# ---- Resources and review ------------------------------------------------------------------


async def get_resource(request: Request) -> Response:
    query = Query(request, {"include_secure", "version"})
    message = resource_pb2.GetResourceRequest(
        id=request.path_params["id"],
        include_secure=query.boolean("include_secure"),
        version=query.integer("version", 0),
    )
    response = await _call(request, "resource", "GetResource", message)
    return JSONResponse(to_json(response.resource))


async def review_extraction(request: Request) -> Response:
    Query(request, ())
    message = await _body(
        request,
        cognition_pb2.ReviewExtractionRequest,
        trace_id=request.path_params["tid"],
        extraction_id=request.path_params["eid"],
    )
    response = await _call(request, "cognition", "ReviewExtraction", message)
    return JSONResponse(to_json(response.extraction))


# ---- Every RPC ----------------------------------------------------------------------------


async def call_rpc(request: Request) -> Response:
    """POST /api/v1/{service}/{Method}: the request message as proto3 JSON in, the response
    message as proto3 JSON out; a server-streaming RPC answers NDJSON, one message a line."""
    Query(request, ())
    rpc = find_rpc(request.path_params["service"], request.path_params["method"])
    message = await _body(request, rpc.request_class)
    token = request_token(request)
    if rpc.streaming:
        return await _stream(_backend(request), rpc, message, token, request.app.state.closing)
    return JSONResponse(to_json(await _backend(request).call(rpc, message, token)))


_END = object()


async def _next(messages: AsyncIterator[Message]) -> Any:
    try:
        return await messages.__anext__()
    except StopAsyncIteration:
        return _END


def _line(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


async def _stream(
    backend: Backend, rpc: Rpc, message: Message, token: str | None, closing: asyncio.Event
) -> Response:
    """Waits briefly for the first message, so a call refused at once gets its HTTP status;
    after that, messages are lines and a failure is the last line {"error": ...}. The
    stream ends when the caller leaves or the gateway stops (`closing`)."""
    call = backend.stream(rpc, message, token)
    messages = read_stream(call)
    first = asyncio.ensure_future(_next(messages))
    await asyncio.wait({first}, timeout=FIRST_MESSAGE_WAIT_SECONDS)
    if first.done() and first.exception() is not None:
        call.cancel()
        raise first.exception()  # type: ignore[misc]

    async def lines() -> AsyncIterator[bytes]:
        stopping = asyncio.ensure_future(closing.wait())
        upcoming = first
        try:
            while True:
                await asyncio.wait({upcoming, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if not upcoming.done():
                    return
                item = upcoming.result()
                if item is _END:
                    return
                yield _line(to_json(item))
                upcoming = asyncio.ensure_future(_next(messages))
        except errors.KnowHubError as error:
            yield _line(error_body(error))
        finally:
            upcoming.cancel()
            stopping.cancel()
            call.cancel()

    return StreamingResponse(lines(), media_type=NDJSON)


ROUTES = [
    Route("/api/knowledge/search", search_knowledge, methods=["GET"]),
    Route("/api/knowledge/batch_update", batch_update_knowledge, methods=["POST"]),
    Route("/api/knowledge/slim", slim_knowledge, methods=["POST"]),
    Route("/api/knowledge/ask", ask_knowledge, methods=["POST"]),
    Route("/api/knowledge", list_knowledge, methods=["GET"]),
    Route("/api/knowledge", save_knowledge, methods=["POST"]),
    Route("/api/knowledge/{id}", update_knowledge, methods=["PUT"]),
    Route("/api/knowledge/{id}", edit_knowledge, methods=["PATCH"]),
    Route("/api/knowledge/{id}", delete_knowledge, methods=["DELETE"]),
    Route("/api/knowledge/{id}/undelete", undelete_knowledge, methods=["POST"]),
    Route("/api/knowledge/{id}/versions", knowledge_versions, methods=["GET"]),
    Route("/api/forget", forget_subject, methods=["POST"]),
    Route("/api/resource/{id:path}", get_resource, methods=["GET"]),
    Route("/api/traces/{tid}/extractions/{eid}/review", review_extraction, methods=["POST"]),
    Route("/api/v1/{service}/{method}", call_rpc, methods=["POST"]),
]
