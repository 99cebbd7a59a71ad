"""KnowHub Python SDK: the knowledge and memory hub for LLM agents, over gRPC.

    from knowhub import KnowHub
    kh = KnowHub("127.0.0.1:50051")
    k = kh.knowledge.save(task="...", content="...", types=["tool"])
    hits = kh.knowledge.search("...")
"""

from knowhub import errors, tools
from knowhub.client import AsyncKnowHub, KnowHub
from knowhub.models import (
    AuditEvent,
    Case,
    Eval,
    FeedbackResult,
    Knowledge,
    KnowledgeVersion,
    Page,
    Resource,
    ResourceHit,
    ResourceVersion,
    SearchHit,
    SearchResults,
    SlimReport,
    Source,
)

__all__ = [
    "AsyncKnowHub",
    "AuditEvent",
    "Case",
    "Eval",
    "FeedbackResult",
    "KnowHub",
    "Knowledge",
    "KnowledgeVersion",
    "Page",
    "Resource",
    "ResourceHit",
    "ResourceVersion",
    "SearchHit",
    "SearchResults",
    "SlimReport",
    "Source",
    "errors",
    "tools",
]
