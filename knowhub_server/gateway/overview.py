"""GET /api/overview: what the console's landing page shows, in one read-only call.

The hub's configuration as the process serving the gateway reads it (never a key or a
password; for admins only, as it names hosts and paths), and counts and recent failures
read through the services with the caller's own token, so a caller sees the counts of
what it may see and nothing without a valid token. A count stops at COUNT_LIMIT ("at
least" beyond it); a part the token may not read (a service disabled, a role missing)
carries its error instead of a number.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from google.protobuf.message import Message
from knowhub import errors
from knowhub_contracts import enum_names
from knowhub_contracts.v1 import cognition_pb2, common_pb2, dream_pb2, knowledge_pb2, resource_pb2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.gateway.routes import Query
from knowhub_server.gateway.session import request_token
from knowhub_server.gateway.translation import error_body, find_rpc

PAGE_SIZE = 100
COUNT_LIMIT = 1000
RECENT_ERRORS = 5


@dataclass(frozen=True)
class HubFacts:
    """The configuration the overview reports: what is on, never a secret."""

    mode: str
    model: str
    model_configured: bool
    embeddings: str
    storage: str
    metrics_port: int | None

    @classmethod
    def of(cls, settings: CommonSettings) -> HubFacts:
        return cls(
            mode=_mode(settings),
            model=_model(settings),
            model_configured=bool(settings.llm_base_url),
            embeddings=_embeddings(settings),
            storage=_storage(settings),
            metrics_port=settings.metrics_port,
        )


def _mode(settings: CommonSettings) -> str:
    tls = ", TLS" if settings.tls_cert_file else ""
    if settings.tokens_file is None:
        return f"local (no tokens file: the local token, loopback only{tls})"
    return f"tokens (KNOWHUB_TOKENS_FILE{tls})"


def _endpoint(url: str) -> str:
    """An endpoint's scheme, host and port: no user, password or query."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


def _model(settings: CommonSettings) -> str:
    if not settings.llm_base_url:
        return "none (KNOWHUB_LLM_BASE_URL unset: ask, evolve, dreams and profiles are off)"
    return f"{settings.llm_model} at {_endpoint(settings.llm_base_url)}"


def _embeddings(settings: CommonSettings) -> str:
    if settings.embedding_model_path is not None:
        return f"hybrid (BM25 and dense), in-process model {settings.embedding_model_path.name}"
    if settings.embedding_base_url:
        return (
            f"hybrid (BM25 and dense), {settings.embedding_model} at "
            f"{_endpoint(settings.embedding_base_url)}"
        )
    return "off (BM25 only)"


def _storage(settings: CommonSettings) -> str:
    vectors = (
        f"Qdrant at {_endpoint(settings.qdrant_url)}"
        if settings.qdrant_url
        else "embedded Qdrant edge"
    )
    redis = "Redis server" if settings.redis_url else "embedded Redis"
    return f"{vectors}, {redis}, data in {settings.data_dir}"


Call = Callable[[str, str, Message], Awaitable[Any]]


async def _count(
    call: Call, service: str, method: str, request: Message, field: str
) -> dict[str, Any]:
    """How many items the list RPC gives, page by page, up to COUNT_LIMIT."""
    total = 0
    while True:
        response = await call(service, method, request)
        total += len(getattr(response, field))
        if not response.next_page_token or total >= COUNT_LIMIT:
            return {"count": total, "more": bool(response.next_page_token)}
        request.page_token = response.next_page_token  # type: ignore[attr-defined]


async def _part(action: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """One part of the overview; an error of the token's (not a missing token) in place
    of its figures."""
    try:
        return await action
    except errors.KnowHubError as error:
        if error.code == "UNAUTHENTICATED":
            raise
        return error_body(error)


async def _recent_errors(call: Call) -> dict[str, Any]:
    jobs = await call(
        "dream", "ListFailedJobs", dream_pb2.ListFailedJobsRequest(page_size=RECENT_ERRORS)
    )
    runs = await call(
        "dream",
        "ListDreamRuns",
        dream_pb2.ListDreamRunsRequest(
            status=dream_pb2.DREAM_RUN_STATUS_FAILED, page_size=RECENT_ERRORS
        ),
    )
    items = [
        {
            "what": "historian job",
            "id": job.job_id,
            "message": job.error,
            "time": job.failed_at.ToJsonString() if job.HasField("failed_at") else "",
        }
        for job in jobs.jobs
    ]
    items += [
        {
            "what": "dream run",
            "id": run.run_id,
            "message": run.reason,
            "time": run.finished_at.ToJsonString() if run.HasField("finished_at") else "",
        }
        for run in runs.runs
    ]
    items.sort(key=lambda item: item["time"], reverse=True)
    return {"items": items[:RECENT_ERRORS]}


async def _configuration(call: Call, facts: HubFacts | None) -> dict[str, Any] | None:
    """The facts, for a caller the resource service lets read its audit log (admins)."""
    if facts is None:
        return None
    try:
        await call("resource", "ListAuditEvents", resource_pb2.ListAuditEventsRequest(page_size=1))
    except errors.KnowHubError as error:
        if error.code == "UNAUTHENTICATED":
            raise
        return error_body(
            errors.PermissionDenied("PERMISSION_DENIED", "configuration: shown to admins only")
        )
    return asdict(facts)


def overview_route(facts: HubFacts | None) -> Callable[[Request], Awaitable[Response]]:
    async def overview(request: Request) -> Response:
        Query(request, ())
        token = request_token(request)  # a bearer token, else the console session's
        backend = request.app.state.backend

        async def call(service: str, method: str, message: Message) -> Any:
            return await backend.call(find_rpc(service, method), message, token)

        # First, alone: a refused token answers 401 before anything else is read.
        records = await _part(
            _count(
                call,
                "knowledge",
                "ListKnowledge",
                knowledge_pb2.ListKnowledgeRequest(page_size=PAGE_SIZE),
                "knowledge",
            )
        )
        counts = {
            "records": records,
            "traces": await _part(
                _count(
                    call,
                    "cognition",
                    "ListTraces",
                    cognition_pb2.ListTracesRequest(page_size=PAGE_SIZE),
                    "traces",
                )
            ),
            "pending_reviews": await _part(
                _count(
                    call,
                    "cognition",
                    "ListExtractions",
                    cognition_pb2.ListExtractionsRequest(states=["pending"], page_size=PAGE_SIZE),
                    "extractions",
                )
            ),
            "failed_jobs": await _part(
                _count(
                    call,
                    "dream",
                    "ListFailedJobs",
                    dream_pb2.ListFailedJobsRequest(page_size=PAGE_SIZE),
                    "jobs",
                )
            ),
        }
        return JSONResponse(
            {
                "configuration": await _configuration(call, facts),
                "counts": counts,
                "recent_errors": await _part(_recent_errors(call)),
                "knowledge_types": list(enum_names(common_pb2.KnowledgeType.DESCRIPTOR).names),
                "links": {"api_docs": "/docs/", "openapi": "/openapi.json"},
            }
        )

    return overview
