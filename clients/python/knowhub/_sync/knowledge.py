# Generated from knowhub/_async/knowledge.py by `make sdk-sync`: edit that file, not this one.
"""`kh.knowledge`: the knowledge tools as methods."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from knowhub._requests.knowledge import (
    SLIM_TIMEOUT,
    case_message,
    edit_request,
    feedback_message,
    list_request,
    save_request,
)
from knowhub._transport import Transport
from knowhub.models.base import from_timestamp
from knowhub.models.knowledge import (
    Answer,
    Case,
    FeedbackResult,
    Knowledge,
    KnowledgeVersion,
    Page,
    SavedKnowledge,
    SavedKnowledgeList,
    SearchResults,
    SlimReport,
)
from knowhub.v1 import knowledge_pb2, knowledge_pb2_grpc


class KnowledgeAPI:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._stub = knowledge_pb2_grpc.KnowledgeServiceStub(transport.channel)

    def save(
        self,
        task: str,
        content: str,
        types: Sequence[str],
        tags: Mapping[str, str] | None = None,
        scopes: Sequence[str] | None = None,
        owner: str | None = None,
        source_name: str = "",
        source_category: str = "exp",
        urls: Sequence[str] | None = None,
        agent_id: str = "",
        submitted_by: str = "",
        score: int = 3,
        message_id: str = "",
        resource_ids: Sequence[str] | None = None,
        request_id: str | None = None,
        trace_id: str = "",
        allow_duplicate: bool = False,
    ) -> Knowledge:
        """Saves new knowledge (knowledge_save). When a record of the same owner and scopes
        already holds this task and content (ignoring case and spacing), nothing is written
        and that record is returned, unless `allow_duplicate` (`save_unless_exists` says
        which happened). With `request_id`, a retried call returns the record the first
        one created instead of saving it twice."""
        request = save_request(
            task,
            content,
            types,
            tags=tags,
            scopes=scopes,
            owner=owner,
            source_name=source_name,
            source_category=source_category,
            urls=urls,
            agent_id=agent_id,
            submitted_by=submitted_by,
            score=score,
            message_id=message_id,
            resource_ids=resource_ids,
            request_id=request_id,
            trace_id=trace_id,
            allow_duplicate=allow_duplicate,
        )
        return self._transport.call(
            self._stub.SaveKnowledge, request, lambda r: Knowledge.from_proto(r.knowledge)
        )

    def save_unless_exists(
        self, task: str, content: str, types: Sequence[str], **save_arguments: Any
    ) -> SavedKnowledge:
        """`save`, telling whether a record of the same owner and scopes already held this
        task and content (ignoring case and spacing): then `knowledge` is that record and
        `existing` is true."""
        request = save_request(task, content, types, **save_arguments)
        return self._transport.call(self._stub.SaveKnowledge, request, SavedKnowledge.from_proto)

    def save_many(self, items: Sequence[Mapping[str, Any]]) -> SavedKnowledgeList:
        """Saves up to 500 records at once; each item takes `save`'s keyword arguments.
        Nothing is written unless every item is valid. The records in order; `existing`
        says which were there already (nothing written for them)."""
        request = knowledge_pb2.BatchSaveKnowledgeRequest(
            requests=[save_request(**item) for item in items]
        )
        return self._transport.call(
            self._stub.BatchSaveKnowledge, request, SavedKnowledgeList.from_proto
        )

    def get(self, knowledge_id: str) -> Knowledge:
        """One record the caller can see (NotFound otherwise), with its eval histories."""
        return self._transport.call(
            self._stub.GetKnowledge,
            knowledge_pb2.GetKnowledgeRequest(id=knowledge_id),
            lambda r: Knowledge.from_proto(r.knowledge),
        )

    def list(
        self,
        limit: int = 10,
        types: Sequence[str] | None = None,
        scopes: Sequence[str] | None = None,
        order: str = "updated",
        page_token: str = "",
    ) -> Page:
        """Lists visible knowledge (knowledge_list), newest first or, with
        order="confidence", by confidence then helpful."""
        request = list_request(limit, types, scopes, order, page_token)
        return self._transport.call(self._stub.ListKnowledge, request, Page.from_proto)

    def search(
        self, query: str, top_k: int = 5, min_score: int = 3, types: Sequence[str] | None = None
    ) -> SearchResults:
        """Two-stage search (knowledge_search): hits best first."""
        request = knowledge_pb2.SearchKnowledgeRequest(
            query=query, top_k=top_k, min_score=min_score, types=list(types or [])
        )
        return self._transport.call(self._stub.SearchKnowledge, request, SearchResults.from_proto)

    def ask(
        self,
        query: str,
        top_k: int = 5,
        min_score: int = 3,
        types: Sequence[str] | None = None,
        *,
        trace_id: str | None = None,
        sequence: int = 0,
        goal_id: str = "",
    ) -> Answer:
        """Asks the hub (knowledge_ask): it searches, and its LLM answers from the hits,
        citing their ids. With `trace_id`, the question and answer are logged to that
        trace as its query event at `sequence`, for evaluation later."""
        request = knowledge_pb2.AskKnowledgeRequest(
            query=query,
            top_k=top_k,
            min_score=min_score,
            types=list(types or []),
            trace_id=trace_id or "",
            sequence=sequence,
            goal_id=goal_id,
        )
        return self._transport.call(self._stub.AskKnowledge, request, Answer.from_proto)

    def update(
        self,
        knowledge_id: str,
        add_helpful_case: Case | Mapping[str, Any] | None = None,
        add_harmful_case: Case | Mapping[str, Any] | None = None,
        update_score: int | None = None,
        evolve_feedback: str | None = None,
        request_id: str | None = None,
    ) -> Knowledge:
        """Feedback and evolution (knowledge_update). `request_id` makes a retried call
        count once."""
        request = knowledge_pb2.UpdateKnowledgeRequest(
            id=knowledge_id,
            add_helpful_case=case_message(add_helpful_case),
            add_harmful_case=case_message(add_harmful_case),
            update_score=update_score,
            evolve_feedback=evolve_feedback or "",
            request_id=request_id or "",
        )
        return self._transport.call(
            self._stub.UpdateKnowledge, request, lambda r: Knowledge.from_proto(r.knowledge)
        )

    def batch_update(
        self, feedback_list: Sequence[Mapping[str, Any]]
    ) -> builtins.list[FeedbackResult]:
        """knowledge_batch_update: items of {knowledge_id, is_helpful, case}. Each item
        succeeds or fails on its own."""
        request = knowledge_pb2.BatchUpdateKnowledgeRequest(
            feedback_list=[feedback_message(item) for item in feedback_list]
        )
        return self._transport.call(
            self._stub.BatchUpdateKnowledge,
            request,
            lambda r: [FeedbackResult.from_proto(x) for x in r.results],
        )

    def edit(
        self,
        knowledge_id: str,
        *,
        task: str | None = None,
        content: str | None = None,
        tags: Mapping[str, str] | None = None,
        types: Sequence[str] | None = None,
        scopes: Sequence[str] | None = None,
        resource_ids: Sequence[str] | None = None,
        note: str = "",
    ) -> Knowledge:
        """Writes the fields given (the others stay), keeping the record's state before as
        a version with who edited it and `note` (why). Owner, creator or admin."""
        request = edit_request(
            knowledge_id,
            task=task,
            content=content,
            tags=tags,
            types=types,
            scopes=scopes,
            resource_ids=resource_ids,
            note=note,
        )
        return self._transport.call(
            self._stub.UpdateKnowledge, request, lambda r: Knowledge.from_proto(r.knowledge)
        )

    def delete(self, knowledge_id: str) -> datetime | None:
        """Deletes a record (its owner, the user who created it, or an admin); returns when
        it will be purged: `undelete` brings it back until then."""
        return self._transport.call(
            self._stub.DeleteKnowledge,
            knowledge_pb2.DeleteKnowledgeRequest(id=knowledge_id),
            lambda r: from_timestamp(r.purge_time),
        )

    def undelete(self, knowledge_id: str) -> Knowledge:
        """Restores a deleted record, with its id, counters and versions."""
        return self._transport.call(
            self._stub.UndeleteKnowledge,
            knowledge_pb2.UndeleteKnowledgeRequest(id=knowledge_id),
            lambda r: Knowledge.from_proto(r.knowledge),
        )

    def slim(self, model: str | None = None, dry_run: bool = False) -> SlimReport:
        """Merges near-duplicates (knowledge_slim); `dry_run` only reports."""
        return self._transport.call(
            self._stub.SlimKnowledge,
            knowledge_pb2.SlimKnowledgeRequest(model=model or "", dry_run=dry_run),
            SlimReport.from_proto,
            timeout=SLIM_TIMEOUT,
        )

    def versions(self, knowledge_id: str) -> builtins.list[KnowledgeVersion]:
        """Earlier states replaced by edits, evolve or slim, newest first."""
        return self._transport.call(
            self._stub.ListKnowledgeVersions,
            knowledge_pb2.ListKnowledgeVersionsRequest(id=knowledge_id),
            lambda r: [KnowledgeVersion.from_proto(v) for v in r.versions],
        )
