"""Knowledge records, search hits and the results of feedback and slimming."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import common_pb2, knowledge_pb2

from knowhub.models.base import ProtoList, ProtoModel, to_timestamp

# How a search chose its candidates: routed, recall or degraded.
# The names a record's `types` takes (the KnowledgeType enum's, in lower case).
KNOWLEDGE_TYPES: tuple[str, ...] = EnumNames(common_pb2.KnowledgeType.DESCRIPTOR).names
SELECTIONS = EnumNames(knowledge_pb2.Selection.DESCRIPTOR)


@dataclass
class Case(ProtoModel[knowledge_pb2.Case]):
    task: str = ""
    outcome: str = ""
    reason: str = ""
    trace_id: str = ""
    timestamp: datetime | None = None
    query_sequence: int = 0

    def to_proto(self: Case | Mapping[str, Any]) -> knowledge_pb2.Case:
        """The message of this case, or (as `Case.to_proto(case)`) of a dict with the same
        keys, its timestamp a datetime, an ISO 8601 string or epoch seconds."""
        if isinstance(self, Case):
            return ProtoModel.to_proto(self)
        unknown = set(self) - _CASE_FIELDS
        if unknown:
            raise ValueError(f"unknown case field(s): {', '.join(sorted(unknown))}")
        return knowledge_pb2.Case(
            task=self.get("task") or "",
            outcome=self.get("outcome") or "",
            reason=self.get("reason") or "",
            trace_id=self.get("trace_id") or "",
            timestamp=to_timestamp(self.get("timestamp")),
            query_sequence=int(self.get("query_sequence") or 0),
        )


_CASE_FIELDS = frozenset(f.name for f in fields(Case))


@dataclass
class Source(ProtoModel[knowledge_pb2.Source]):
    name: str = ""
    category: str = ""
    urls: list[str] = field(default_factory=list)
    agent_id: str = ""
    submitted_by: str = ""
    timestamp: datetime | None = None
    message_id: str = ""
    trace_id: str = ""


@dataclass
class Eval(ProtoModel[knowledge_pb2.Eval]):
    score: int = 0
    helpful: int = 0
    harmful: int = 0
    confidence: float = 0.0
    helpful_history: list[Case] = field(default_factory=list)
    harmful_history: list[Case] = field(default_factory=list)


@dataclass
class Knowledge(ProtoModel[knowledge_pb2.Knowledge]):
    id: str
    message_id: str
    types: list[str]
    task: str
    tags: dict[str, str]
    scopes: list[str]
    owner: str
    content: str
    resource_ids: list[str]
    source: Source
    eval: Eval
    created_at: datetime | None
    updated_at: datetime | None


@dataclass
class UnavailableResource(ProtoModel[knowledge_pb2.UnavailableResource]):
    """A resource a knowledge search hit refers to that the caller cannot use now."""

    resource_id: str
    reason: str  # missing, expired or deleted


@dataclass
class SearchHit(ProtoModel[knowledge_pb2.SearchHit]):
    knowledge: Knowledge
    quality_score: float
    relevance: float
    # The record's resource_ids the caller cannot use now (missing, expired or deleted).
    unavailable_resources: list[UnavailableResource] = field(default_factory=list)
    # True when the resource service could not be asked about them.
    resources_unverified: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The record's fields plus quality_score and relevance, and which of its
        resources cannot be used."""
        return {
            **self.knowledge.to_dict(),
            "quality_score": self.quality_score,
            "relevance": self.relevance,
            "unavailable_resources": [u.to_dict() for u in self.unavailable_resources],
            "resources_unverified": self.resources_unverified,
        }


class SearchResults(ProtoList[SearchHit, knowledge_pb2.SearchKnowledgeResponse]):
    """The hits, best first; `selection` tells how the candidates were chosen: "routed"
    (the LLM picked them), "recall" (recall above the relevance floor) or "degraded"
    (BM25 alone: the embedding model failed); `routed` is selection == "routed"."""

    routed: bool = False
    selection: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [h.to_dict() for h in self],
            "count": len(self),
            "selection": self.selection,
        }


@dataclass
class Answer(ProtoModel[knowledge_pb2.AskKnowledgeResponse]):
    """AskKnowledge's answer: the LLM's text citing hits as [knowledge-id], the ids it
    cites, the hits it was given, and the query event's id when a trace was named."""

    answer: str
    cited_ids: list[str]
    hits: list[SearchHit]
    routed: bool
    event_id: str
    selection: str = ""  # how the search chose its candidates (see SearchResults)

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "cited_ids": self.cited_ids,
            "results": [h.to_dict() for h in self.hits],
            "routed": self.routed,
            "selection": self.selection,
            "event_id": self.event_id,
        }


@dataclass
class SavedKnowledge(ProtoModel[knowledge_pb2.SaveKnowledgeResponse]):
    """A save that may have found the record already there (`existing`)."""

    knowledge: Knowledge
    existing: bool


class SavedKnowledgeList(ProtoList[Knowledge, knowledge_pb2.BatchSaveKnowledgeResponse]):
    """The records of a batch save, in order; `existing[i]` says record i was there
    already (the same task and content, owner and scopes) and nothing was written for it."""

    existing: list[bool] = []  # noqa: RUF012 (read from the response, one per record)


class Page(ProtoList[Knowledge, knowledge_pb2.ListKnowledgeResponse]):
    """One page of a list; pass `next_page_token` back for the next ("" at the end)."""

    next_page_token: str = ""


@dataclass
class FeedbackResult(ProtoModel[knowledge_pb2.KnowledgeFeedbackResult]):
    """The outcome of one batch feedback item: `knowledge` on success, else `error`."""

    knowledge_id: str
    knowledge: Knowledge | None
    error: dict[str, str] | None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class SlimGroup(ProtoModel[knowledge_pb2.SlimGroup]):
    kept_id: str
    removed_ids: list[str]
    merged_by_llm: bool
    note: str


@dataclass
class SlimReport(ProtoModel[knowledge_pb2.SlimKnowledgeResponse]):
    groups: list[SlimGroup]
    examined: int
    dry_run: bool


@dataclass
class KnowledgeVersion(ProtoModel[knowledge_pb2.KnowledgeVersion]):
    """A record's editable fields before one change (`reason`: edit, evolve or slim) by
    `changed_by` replaced them; `feedback` says why."""

    content: str
    replaced_at: datetime | None
    reason: str
    feedback: str
    task: str = ""
    types: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    resource_ids: list[str] = field(default_factory=list)
    changed_by: str = ""
    changed_fields: list[str] = field(default_factory=list)
