"""Extractions (extract, review, commit): candidate knowledge is saved
as pending, reviewed by a person (the latest review wins), and committed through the
knowledge service with the request id "extraction:<trace>:<extraction id>", so a commit
that is retried or races another saves the knowledge once and logs it once."""

from __future__ import annotations

from knowhub_server.cognition.domain import (
    COMMITTABLE_STATES,
    EXTRACTION_STATES,
    IDS_PER_CALL_MAX,
    LIST_PAGE_MAX,
    Body,
    CommitFailure,
    Committed,
    Extraction,
    Trace,
    TraceRef,
    choices,
    extraction_request_id,
    new_extraction_id,
    validate_entity_name,
    validate_extraction,
    validate_review,
)
from knowhub_server.cognition.knowledge_client import KnowledgeClient
from knowhub_server.cognition.operations import TraceAccess, read_cursor, stamped
from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServiceError,
    Unavailable,
)
from knowhub_server.common.base.paging import write_token
from knowhub_server.common.base.times import now
from knowhub_server.common.runtime.peers import PeerRefused
from knowhub_server.common.security.auth import Principal


class ExtractionOperations:
    def __init__(self, access: TraceAccess, knowledge: KnowledgeClient) -> None:
        self._access = access
        self._store = access.store
        self._knowledge = knowledge

    def save_pending(
        self,
        principal: Principal,
        trace_id: str,
        *,
        owner: str,
        sequence: int,
        goal_id: str,
        branch_id: str,
        payload: Body | None,
        request_id: str,
    ) -> tuple[Extraction, CommitFailure | None]:
        """Writes extraction_pending; with the trace's auto_commit, approves and commits it
        at once (a failed commit leaves it approved and is returned)."""
        ref = self._access.ref(principal, trace_id, owner)
        check.text(request_id, "request_id", check.NAME_MAX)
        extraction_id = new_extraction_id(trace_id, request_id)
        body = validate_extraction(
            {
                "extraction_id": extraction_id,
                "sequence": sequence,
                "goal_id": goal_id,
                "branch_id": branch_id,
                "payload": payload,
            }
        )
        body["payload"] = self._knowledge.resolve(principal, body["payload"], "payload")
        trace = self._store.trace(ref)
        auto_commit = trace is not None and trace.auto_commit
        events = [("extraction_pending", body)]
        if auto_commit:
            events.append(
                ("extraction_reviewed", {"extraction_id": extraction_id, "decision": "approve"})
            )
        try:
            self._access.append(principal, ref, stamped(events, now()))
        except AlreadyExists:
            if not request_id:
                raise
            return self._extraction(ref, extraction_id), None  # a retried save
        extraction = self._extraction(ref, extraction_id)
        if not auto_commit:
            return extraction, None
        assert trace is not None
        outcome = self._commit_one(principal, trace, extraction)
        failure = outcome if isinstance(outcome, CommitFailure) else None
        return self._extraction(ref, extraction_id), failure

    def list_page(
        self,
        principal: Principal,
        *,
        trace_id: str,
        owner: str,
        states: list[str],
        page_size: int,
        page_token: str,
    ) -> tuple[list[Extraction], str]:
        """Oldest first, in one trace or across the caller's traces (all for an admin)."""
        check.int_range(page_size, "page_size", 1, LIST_PAGE_MAX)
        choices(states, EXTRACTION_STATES, "states")
        wanted = states or list(EXTRACTION_STATES)
        if owner and not trace_id:
            raise InvalidArgument("owner", "names the owner of trace_id: give trace_id too")
        listed_owner = None if principal.is_admin else principal.user_scope
        filters = ("extractions", trace_id, owner, listed_owner, sorted(wanted))
        cursor = read_cursor(page_token, filters) if page_token else None
        if trace_id:
            trace = self._access.readable(principal, trace_id, owner)
            found, after = self._trace_page(trace.ref, wanted, cursor, page_size)
        else:
            found, after = self._store.extraction_page(listed_owner, wanted, cursor, page_size)
        return found, write_token(list(after), filters) if after else ""

    def _trace_page(
        self, ref: TraceRef, states: list[str], cursor: tuple[float, str] | None, size: int
    ) -> tuple[list[Extraction], tuple[float, str] | None]:
        ordered = [
            (x.created_at, f"{ref.key}|{x.extraction_id}", x)
            for x in self._store.trace_extractions(ref)
            if x.state in states
        ]
        ordered.sort(key=lambda item: item[:2])
        if cursor is not None:
            ordered = [item for item in ordered if item[:2] > cursor]
        page = ordered[:size]
        after = page[-1][:2] if len(ordered) > size else None
        return [x for _, _, x in page], after

    def review(
        self,
        principal: Principal,
        trace_id: str,
        owner: str,
        extraction_id: str,
        decision: str,
        edited_payload: Body | None,
    ) -> Extraction:
        check.trace_id(trace_id)
        validate_entity_name(extraction_id, "extraction_id")
        validate_review(decision, edited_payload, "")
        if edited_payload:
            edited_payload = self._knowledge.resolve(principal, edited_payload, "edited_payload")
        trace = self._access.readable(principal, trace_id, owner)
        current = self._extraction(trace.ref, extraction_id)
        if current.state == "committed":
            raise FailedPrecondition(
                f"extraction {extraction_id!r} is already committed; it can no longer be reviewed"
            )
        body: Body = {"extraction_id": extraction_id, "decision": decision}
        if edited_payload:
            body["edited_payload"] = edited_payload
        self._access.append(principal, trace.ref, stamped([("extraction_reviewed", body)], now()))
        return self._extraction(trace.ref, extraction_id)

    def commit(
        self, principal: Principal, trace_id: str, owner: str, extraction_ids: list[str]
    ) -> tuple[list[Committed], list[CommitFailure]]:
        """Saves approved and edited extractions as knowledge (or links each to the record
        that already says the same): the committed ones, and why the others failed."""
        check.trace_id(trace_id)
        check.items(extraction_ids, "extraction_ids", IDS_PER_CALL_MAX)
        for index, extraction_id in enumerate(extraction_ids):
            validate_entity_name(extraction_id, f"extraction_ids[{index}]")
        trace = self._access.readable(principal, trace_id, owner)
        by_id = {x.extraction_id: x for x in self._store.trace_extractions(trace.ref)}
        committed: list[Committed] = []
        failed: list[CommitFailure] = []
        if extraction_ids:
            chosen = []
            for extraction_id in extraction_ids:
                outcome = _requested(by_id.get(extraction_id), extraction_id)
                if isinstance(outcome, Extraction):
                    chosen.append(outcome)
                elif isinstance(outcome, CommitFailure):
                    failed.append(outcome)
                else:
                    committed.append(outcome)
        else:
            chosen = [x for x in by_id.values() if x.state in COMMITTABLE_STATES]
        for extraction in chosen:
            result = self._commit_one(principal, trace, extraction)
            if isinstance(result, CommitFailure):
                failed.append(result)
            else:
                committed.append(result)
        return committed, failed

    def _commit_one(
        self, principal: Principal, trace: Trace, extraction: Extraction
    ) -> Committed | CommitFailure:
        """Saves one extraction (or finds the record that already says the same) and logs
        extraction_committed; what it became, or why not (nothing logged)."""
        eid = extraction.extraction_id
        try:
            knowledge_id, linked = self._knowledge.save(
                principal,
                extraction.commit_payload,
                extraction_request_id(trace.ref, principal.user_scope, eid),
            )
        except (PeerRefused, Unavailable) as error:
            code = error.code.name if isinstance(error, PeerRefused) else "UNAVAILABLE"
            return CommitFailure(eid, code, error.message)
        event = {"extraction_id": eid, "knowledge_id": knowledge_id}
        try:
            self._access.append(
                principal, trace.ref, stamped([("extraction_committed", event)], now())
            )
        except ServiceError as error:
            return CommitFailure(eid, error.code.name, error.message)
        return Committed(eid, knowledge_id, linked)

    def _extraction(self, ref: TraceRef, extraction_id: str) -> Extraction:
        found = self._store.extraction(ref, extraction_id)
        if found is None:
            raise NotFound(f"trace {ref.trace_id!r} has no extraction {extraction_id!r}")
        return found


def _requested(
    extraction: Extraction | None, extraction_id: str
) -> Extraction | CommitFailure | Committed:
    """A named extraction: to commit, why it cannot be, or what it became if it was."""
    if extraction is None:
        return CommitFailure(
            extraction_id, "NOT_FOUND", f"no extraction {extraction_id!r} in this trace"
        )
    if extraction.state == "committed":
        return Committed(extraction_id, extraction.knowledge_id)
    if extraction.state not in COMMITTABLE_STATES:
        return CommitFailure(
            extraction_id,
            "FAILED_PRECONDITION",
            f"extraction {extraction_id!r} is {extraction.state}; approve or edit it first",
        )
    return extraction
