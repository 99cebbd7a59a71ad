"""KnowHub Python SDK: the knowledge and memory hub for LLM agents, over gRPC.

    from knowhub import KnowHub
    kh = KnowHub("127.0.0.1:50051")
    k = kh.knowledge.save(task="...", content="...", types=["tool"])
    hits = kh.knowledge.search("...")
    kh.cognition.inject_knowledge_for_goal("trace-1", "g1", "log in to site A", sequence=3)
"""

from knowhub import errors, tools
from knowhub.client import AsyncKnowHub, KnowHub
from knowhub.models import (
    AuditEvent,
    Case,
    CognitiveEvent,
    CommitReport,
    Eval,
    EvaluationReport,
    Event,
    EventHit,
    EventResults,
    Extraction,
    FailedJob,
    FailedJobsPage,
    FeedbackResult,
    Knowledge,
    KnowledgeInjection,
    KnowledgeVersion,
    Memo,
    Page,
    Profile,
    ProfileHit,
    ProfileRevision,
    RememberResult,
    Resource,
    ResourceHit,
    ResourceVersion,
    SearchHit,
    SearchResults,
    SlimReport,
    Source,
    Trace,
    TraceView,
    Trigger,
)

__all__ = [
    "AsyncKnowHub",
    "AuditEvent",
    "Case",
    "CognitiveEvent",
    "CommitReport",
    "Eval",
    "EvaluationReport",
    "Event",
    "EventHit",
    "EventResults",
    "Extraction",
    "FailedJob",
    "FailedJobsPage",
    "FeedbackResult",
    "KnowHub",
    "Knowledge",
    "KnowledgeInjection",
    "KnowledgeVersion",
    "Memo",
    "Page",
    "Profile",
    "ProfileHit",
    "ProfileRevision",
    "RememberResult",
    "Resource",
    "ResourceHit",
    "ResourceVersion",
    "SearchHit",
    "SearchResults",
    "SlimReport",
    "Source",
    "Trace",
    "TraceView",
    "Trigger",
    "errors",
    "tools",
]
