# Generated from knowhub/_async/knowledge.py by `make sdk-sync`: edit that file, not this one.
"""`kh.knowledge`: the knowledge tools as methods."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc

from knowhub._requests.knowledge import (
    SLIM_TIMEOUT,
    VIEWS,
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
        """Saves new knowledge (the knowledge_save tool). When a record of the same owner
        in the same scopes already holds this task and content (ignoring case and
        spacing), nothing is written and that record is returned (`save_unless_exists`
        says which happened).

        Args:
            task: The situation it applies to (required, at most 2,000 characters).
            content: The knowledge itself (required, at most 65,536 characters).
            types: At least one of user_profile, strategy, tool, usecase, definition, plan.
            tags: Up to 32 key/value labels, e.g. `{"domain": "crawling"}`.
            scopes: Who may see it: `user:ID`, `agent:ID`, `project:ID`, `team:ID`, `org:ID`
                or `public`; the caller's org scope (else its user scope) by default.
            owner: `agent:ID` or `user:ID`, one of the caller's own identities (any, for an
                admin); the acting agent, else the caller's user, by default.
            source_name: The tool or resource the knowledge came from.
            source_category: paper, exp, skill, book, ...
            urls: Reference URLs (http or https).
            agent_id: The agent that created it, one the caller's token may act as.
            submitted_by: The person responsible for the agent.
            score: The author's rating, 1 to 5.
            message_id: The message the knowledge came from.
            resource_ids: Up to 32 resources (visible, not deleted) the knowledge refers to.
            request_id: An idempotency key: a retried call with the same key returns the record
                the first one created instead of saving it twice.
            trace_id: The trace the knowledge came from.
            allow_duplicate: Save a second record even when the same one exists.

        Returns:
            The saved record, with its id (or the record that already said the same).

        Raises:
            InvalidArgument: A field is missing or out of range; the message names it.
            PermissionDenied: A scope the caller may not write, or another's owner.
        """
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
        task and content (ignoring case and spacing).

        Args:
            task: As in `save`.
            content: As in `save`.
            types: As in `save`.
            **save_arguments: Any other argument of `save`.

        Returns:
            The new record, or the one already there with `existing` true.

        Raises:
            InvalidArgument: As in `save`.
            PermissionDenied: As in `save`.
        """
        request = save_request(task, content, types, **save_arguments)
        return self._transport.call(self._stub.SaveKnowledge, request, SavedKnowledge.from_proto)

    def save_many(
        self, items: Sequence[Mapping[str, Any]], view: str = "full"
    ) -> SavedKnowledgeList:
        """Saves up to 500 records in one call; nothing is written unless every item is valid.

        Args:
            items: One mapping per record, each holding `save`'s keyword arguments.
            view: "full" returns each whole record; "basic" only its id (the other fields
                empty), for bulk loads that keep the ids: less to build, send and read.

        Returns:
            The saved records, in the order of `items`; `existing[i]` is true when record i
            was there already (nothing was written for it).

        Raises:
            InvalidArgument: An item is invalid; the message names it (`requests[3].task`).
            PermissionDenied: As in `save`.
        """
        request = knowledge_pb2.BatchSaveKnowledgeRequest(
            requests=[save_request(**item) for item in items],
            view=VIEWS.proto_name(view, "view"),
        )
        return self._transport.call(
            self._stub.BatchSaveKnowledge, request, SavedKnowledgeList.from_proto
        )

    def get(self, knowledge_id: str) -> Knowledge:
        """One record with its evaluation histories.

        Args:
            knowledge_id: The record's id.

        Returns:
            The record.

        Raises:
            NotFound: No record with this id that the caller can see.
        """
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
        """Lists the knowledge the caller can see (the knowledge_list tool).

        Args:
            limit: Records per page, 1 to 100.
            types: Only records with at least one of these types.
            scopes: Only records in one of these scopes.
            order: "updated" (newest first) or "confidence" (by confidence, then helpful).
            page_token: The previous page's `next_page_token`; "" for the first page.

        Returns:
            One page of records; its `next_page_token` is "" on the last page.

        Raises:
            InvalidArgument: A limit out of range, an unknown type or order, or a stale page_token.
        """
        request = list_request(limit, types, scopes, order, page_token)
        return self._transport.call(self._stub.ListKnowledge, request, Page.from_proto)

    def search(
        self,
        query: str,
        top_k: int | None = None,
        min_score: int | None = None,
        types: Sequence[str] | None = None,
        min_relevance: float | None = None,
    ) -> SearchResults:
        """Two-stage search (the knowledge_search tool): the records that answer the query
        (the LLM's pick, or recall by BM25, or hybrid BM25 and dense vectors when
        embeddings are on, above a relevance floor), most relevant first; among records of
        similar relevance, the better rated (score + helpful - 2 * harmful) first.

        Args:
            query: What the agent needs to know (required, at most 2,000 characters).
            top_k: How many hits, 1 to 100; None for the hub's default (5).
            min_score: 1 to 5: records the author rated lower are left out; None for the
                hub's default (3).
            types: Only records with at least one of these types.
            min_relevance: 0 to 1: only records at least this relevant; None for the
                hub's floor.

        Returns:
            The hits, best first; each has the record, its `quality_score` and `relevance`;
            `selection` says how they were chosen (routed, recall or degraded).

        Raises:
            InvalidArgument: An empty query, or top_k, min_score, min_relevance or a type
                out of range.
        """
        request = knowledge_pb2.SearchKnowledgeRequest(
            query=query,
            top_k=top_k,
            min_score=min_score,
            types=list(types or []),
            min_relevance=min_relevance,
        )
        return self._transport.call(self._stub.SearchKnowledge, request, SearchResults.from_proto)

    def ask(
        self,
        query: str,
        top_k: int | None = None,
        min_score: int | None = None,
        types: Sequence[str] | None = None,
        *,
        trace_id: str | None = None,
        sequence: int = 0,
        goal_id: str = "",
        min_relevance: float | None = None,
    ) -> Answer:
        """Asks the hub (the knowledge_ask tool): it searches, and its LLM answers from the hits,
        citing their ids.

        Args:
            query: The question (required, at most 2,000 characters).
            top_k: How many hits the answer may draw on, 1 to 100; None for the hub's
                default (5).
            min_score: 1 to 5: records the author rated lower are left out; None for the
                hub's default (3).
            types: Only records with at least one of these types.
            trace_id: A trace of the caller's: the question and answer are logged there as its
                query event, so the knowledge used can be evaluated later.
            sequence: The query event's sequence number in the trace.
            goal_id: The goal of the trace the question serves.
            min_relevance: As in `search`.

        Returns:
            The answer, the ids it cites, the hits it was given and the logged event's id.

        Raises:
            InvalidArgument: As in `search`.
            FailedPrecondition: The hub has no LLM configured (KNOWHUB_LLM_BASE_URL).
            Unavailable: The LLM could not be reached.
        """
        request = knowledge_pb2.AskKnowledgeRequest(
            query=query,
            top_k=top_k,
            min_score=min_score,
            types=list(types or []),
            trace_id=trace_id or "",
            sequence=sequence,
            goal_id=goal_id,
            min_relevance=min_relevance,
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
        """Feedback and evolution of one record (the knowledge_update tool).

        Args:
            knowledge_id: The record's id.
            add_helpful_case: A use where it helped: `{task, outcome, reason, trace_id,
                timestamp, query_sequence}` or a `Case`; counts one more helpful.
            add_harmful_case: A use where it harmed, in the same shape; counts one more harmful.
            update_score: The author's new rating, 1 to 5.
            evolve_feedback: What to change: the hub's LLM rewrites the content with it (the
                old content is kept as a version).
            request_id: An idempotency key: a retried call with the same key counts once.

        Returns:
            The record as updated.

        Raises:
            NotFound: No record with this id that the caller can see.
            PermissionDenied: `evolve_feedback` on a record the caller does not own.
            FailedPrecondition: `evolve_feedback` on a hub without an LLM.
        """
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
        """Feedback on many records at once (the knowledge_batch_update tool); each item succeeds
        or fails on its own.

        Args:
            feedback_list: Items of `{knowledge_id, is_helpful, case, request_id}`.

        Returns:
            One result per item, in order: the updated record, or the item's error.

        Raises:
            InvalidArgument: The list is empty or too long (an item's own error is in
                its result).
        """
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
        """Writes the fields given and leaves the others (UpdateKnowledge with a field
        mask); the record's state before is kept as a version, with who and why.

        Args:
            knowledge_id: The record's id.
            task: The new task.
            content: The new content.
            tags: The new tags (`{}` clears them).
            types: The new types.
            scopes: The new scopes, each one the caller can see.
            resource_ids: The new resource links (`[]` clears them).
            note: Why, kept with the version.

        Returns:
            The record as edited.

        Raises:
            InvalidArgument: A field is wrong; the message names it (`knowledge.types[0]`).
            NotFound: No record with this id that the caller can see.
            PermissionDenied: Not the owner, its creator or an admin; or a scope the caller
                cannot see.
        """
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
        """Deletes a record (its owner, the user who created it, or an admin); `undelete`
        brings it back until its purge time.

        Args:
            knowledge_id: The record's id.

        Returns:
            When the record will be purged for good.

        Raises:
            NotFound: No record with this id that the caller can see.
            PermissionDenied: The caller may see the record but not delete it.
        """
        return self._transport.call(
            self._stub.DeleteKnowledge,
            knowledge_pb2.DeleteKnowledgeRequest(id=knowledge_id),
            lambda r: from_timestamp(r.purge_time),
        )

    def undelete(self, knowledge_id: str) -> Knowledge:
        """Restores a deleted record before its purge time, with its id, counters and
        versions.

        Args:
            knowledge_id: The record's id.

        Returns:
            The record, restored.

        Raises:
            NotFound: No deleted record with this id the caller can see (or it was purged).
            FailedPrecondition: The record is not deleted.
            PermissionDenied: Not the owner, its creator or an admin.
        """
        return self._transport.call(
            self._stub.UndeleteKnowledge,
            knowledge_pb2.UndeleteKnowledgeRequest(id=knowledge_id),
            lambda r: Knowledge.from_proto(r.knowledge),
        )

    def slim(self, model: str | None = None, dry_run: bool = False) -> SlimReport:
        """Merges near-duplicates among the records the caller may change (the
        knowledge_slim tool); the merged ones are removed and their feedback added to the
        record kept. With an LLM the contents are merged by it, else the kept record's
        content stays.

        Args:
            model: The LLM model that merges the contents; the hub's default when None.
            dry_run: Only report the groups it would merge.

        Returns:
            The groups merged (or to merge): the record kept and those removed in each.

        Raises:
            FailedPrecondition: A `model` named on a hub without an LLM.
        """
        return self._transport.call(
            self._stub.SlimKnowledge,
            knowledge_pb2.SlimKnowledgeRequest(model=model or "", dry_run=dry_run),
            SlimReport.from_proto,
            timeout=SLIM_TIMEOUT,
        )

    def versions(self, knowledge_id: str) -> builtins.list[KnowledgeVersion]:
        """The earlier states of a record, replaced by edits, evolution or a slim merge,
        each with who changed it (`changed_by`), which fields and why (`feedback`).

        Args:
            knowledge_id: The record's id.

        Returns:
            The versions, newest first.

        Raises:
            NotFound: No record with this id that the caller can see.
        """
        return self._transport.call(
            self._stub.ListKnowledgeVersions,
            knowledge_pb2.ListKnowledgeVersionsRequest(id=knowledge_id),
            lambda r: [KnowledgeVersion.from_proto(v) for v in r.versions],
        )
