"""The knowledge use cases: save, read, search, feedback, evolve, edit, delete and
undelete, slim, forget."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    Aborted,
    Busy,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unavailable,
)
from knowhub_server.common.base.scopes import validate_scope
from knowhub_server.common.base.times import now
from knowhub_server.common.llm.chat import LLM, LLMError
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.forget import forget_subject
from knowhub_server.common.storage.vectors import Where
from knowhub_server.knowledge import prompts
from knowhub_server.knowledge.cognition_client import CognitionClient
from knowhub_server.knowledge.config import KnowledgeSettings
from knowhub_server.knowledge.domain import (
    BATCH_MAX,
    MAX_SEQUENCE,
    NAME_MAX,
    PAGE_SIZE_MAX,
    QUERY_MAX,
    TOP_K_MAX,
    Case,
    Change,
    Draft,
    Edit,
    Feedback,
    Knowledge,
    KnowledgeVersion,
    add_case,
    cast_ballot,
    change_fields,
    check_writable_scopes,
    fingerprint,
    fold_into,
    near_duplicate_groups,
    new_knowledge,
    new_knowledge_id,
    remember_request,
    same_knowledge,
    validate_case,
    validate_draft,
    validate_feedback,
    validate_knowledge_id,
    validate_types,
)
from knowhub_server.knowledge.ranking import Selection, above, rank
from knowhub_server.knowledge.resource_client import DELETED, MISSING, USABLE, ResourceClient
from knowhub_server.knowledge.store import Candidate, KnowledgeStore, Recall, visible_where

log = logging.getLogger(__name__)


@dataclass
class SearchHit:
    knowledge: Knowledge
    quality_score: float
    relevance: float
    # (resource id, "missing" | "expired" | "deleted") for references the caller cannot use.
    unavailable_resources: list[tuple[str, str]] = field(default_factory=list)
    resources_unverified: bool = False  # the resource service could not be asked


@dataclass
class SearchResult:
    hits: list[SearchHit]
    selection: Selection

    @property
    def routed(self) -> bool:
        return self.selection is Selection.ROUTED


@dataclass
class QueryLog:
    """Where AskKnowledge logs its question: a trace, at a sequence, under a goal."""

    trace_id: str
    sequence: int
    goal_id: str = ""


@dataclass
class Answer:
    text: str
    cited_ids: list[str]
    search: SearchResult
    event_id: str = ""


@dataclass
class SlimGroup:
    kept_id: str
    removed_ids: list[str]
    merged_by_llm: bool = False
    note: str = ""


@dataclass
class SlimReport:
    groups: list[SlimGroup] = field(default_factory=list)
    examined: int = 0
    dry_run: bool = False


@dataclass
class FeedbackItem:
    """One entry of BatchUpdateKnowledge's feedback_list."""

    knowledge_id: str
    is_helpful: bool
    case: Case
    request_id: str = ""


class _AlreadyApplied(Exception):
    def __init__(self, record: Knowledge) -> None:
        self.record = record


class _ContentMoved(Exception):
    def __init__(self, record: Knowledge) -> None:
        self.record = record


class KnowledgeOperations:
    def __init__(
        self,
        store: KnowledgeStore,
        settings: KnowledgeSettings,
        llm: LLM | None,
        links: ResourceClient,
        cognition: CognitionClient,
        language: str = "en",
    ) -> None:
        self._store = store
        self._settings = settings
        self._llm = llm
        self._links = links
        self._cognition = cognition
        self._language = language

    # -- save --

    def save(
        self, principal: Principal, draft: Draft, *, validate_only: bool = False
    ) -> tuple[Knowledge, bool]:
        """Saves one draft: (the record, whether it existed already). With `validate_only`,
        checks it as a save would and returns the record it would make, without an id and
        without writing (AIP-163)."""
        if validate_only:
            record = self._prepare(principal, [draft], prefix_items=False)[0]
            return replace(record, id=""), False
        records, existed = self.save_batch(principal, [draft], prefix_items=False)
        return records[0], existed[0]

    def save_batch(
        self, principal: Principal, drafts: list[Draft], *, prefix_items: bool = True
    ) -> tuple[list[Knowledge], list[bool]]:
        """Validates every draft, then writes them all; ids are unique. A draft that a
        record of the same owner and scopes already says (`same_knowledge`), stored or
        earlier in the batch, is not written unless it allows a duplicate: that record
        stands in its place. Returns the records and, for each, whether it existed
        already."""
        if prefix_items:
            check.count(len(drafts), "requests", BATCH_MAX, required=True)
        records = self._prepare(principal, drafts, prefix_items)
        claimed = self._claim_requests(principal, drafts, records)
        same = self._same_records(drafts, records, claimed)
        fresh = [i for i in range(len(records)) if i not in same]
        written = dict(
            zip(fresh, self._write_new([records[i] for i in fresh], claimed), strict=True)
        )
        for index, earlier in sorted(same.items()):
            written[index] = earlier if isinstance(earlier, Knowledge) else written[earlier]
        return [written[i] for i in range(len(records))], [i in same for i in range(len(records))]

    def _same_records(
        self, drafts: list[Draft], records: list[Knowledge], claimed: dict[str, Knowledge | None]
    ) -> dict[int, Knowledge | int]:
        """The records a save does not write, by position: each with the stored record
        `same_knowledge` calls the same (the oldest), or the position of an earlier record
        of the batch that is (the batch saves as its records would one after the other).
        A draft that allows a duplicate is written, and a retried request answered, as it
        is."""
        prints = [fingerprint(r) for r in records]
        looked_up = {
            i
            for i, (draft, record) in enumerate(zip(drafts, records, strict=True))
            if not draft.allow_duplicate and claimed.get(record.id) is None
        }
        stored = self._store.with_fingerprints(prints[i] for i in looked_up) if looked_up else {}
        same: dict[int, Knowledge | int] = {}
        batch: dict[str, list[int]] = {}  # fingerprint -> records of the batch written
        for index, (record, key) in enumerate(zip(records, prints, strict=True)):
            if claimed.get(record.id) is not None:
                continue
            if index in looked_up:
                found = _first_same(record, stored.get(key, ()), batch.get(key, ()), records)
                if found is not None:
                    same[index] = found
                    continue
            batch.setdefault(key, []).append(index)
        return same

    def _write_new(
        self, records: list[Knowledge], claimed: dict[str, Knowledge | None]
    ) -> list[Knowledge]:
        """Inserts the records not claimed by an earlier request; each record's stored
        version, in order."""
        pending = [r for r in records if claimed.get(r.id) is None]
        for _ in range(5):
            created = self._store.insert(pending)
            failed = [r for r, ok in zip(pending, created, strict=True) if not ok]
            pending = []
            for record in failed:
                if record.id in claimed:  # another attempt of the same request saved it
                    claimed[record.id] = self._store.get(record.id)
                else:  # an id collision: draw again
                    record.id = new_knowledge_id(record.created_at)
                    pending.append(record)
            if not pending:
                return [claimed.get(r.id) or r for r in records]
        raise Aborted("could not allocate unique knowledge ids; try again")

    def _prepare(
        self, principal: Principal, drafts: list[Draft], prefix_items: bool
    ) -> list[Knowledge]:
        """The records the drafts make, each checked field by field, against what the
        caller may write, and for resources it can use."""
        started = now()
        records = []
        for index, draft in enumerate(drafts):
            prefix = f"requests[{index}]." if prefix_items else ""
            validate_draft(draft, prefix)
            # A microsecond apart, so the records of a batch keep their order when listed.
            at = round(started + index * 1e-6, 6)  # whole microseconds, as now()
            records.append(new_knowledge(draft, principal, at, prefix))
        self._check_resources(principal, drafts, prefix_items)
        return records

    def _check_resources(
        self, principal: Principal, drafts: list[Draft], prefix_items: bool
    ) -> None:
        self._check_links(
            principal,
            [
                (f"{f'requests[{index}].' if prefix_items else ''}resource_ids[{position}]", r)
                for index, draft in enumerate(drafts)
                for position, r in enumerate(draft.resource_ids)
            ],
        )

    def _check_links(self, principal: Principal, links: list[tuple[str, str]]) -> None:
        """Every (field, resource id) must name a resource the caller can see that is not
        deleted (an expired one is fine: it is still there)."""
        if not links:
            return
        try:
            states = self._links.states(principal, [principal.qualify(r) for _, r in links])
        except Unavailable as exc:
            raise Unavailable(
                f"resource_ids cannot be checked, so nothing was saved: {exc.message}"
            ) from None
        for field_name, resource_id in links:
            state = states.get(principal.qualify(resource_id), MISSING)
            if state in (MISSING, DELETED):
                problem = (
                    "is deleted" if state == DELETED else "is not a resource the caller can see"
                )
                raise InvalidArgument(field_name, f"{resource_id!r} {problem}")

    def _claim_requests(
        self, principal: Principal, drafts: list[Draft], records: list[Knowledge]
    ) -> dict[str, Knowledge | None]:
        """Binds each request_id to the id of the record it creates; a request_id seen
        before gives its record the id claimed first. Returns every bound id with the
        record already saved under it, or None (not saved yet, or the first attempt died
        before saving it)."""
        claimed: dict[str, Knowledge | None] = {}
        for draft, record in zip(drafts, records, strict=True):
            if not draft.request_id:
                continue
            key = request_key(principal, draft.request_id)
            record.id = self._store.claim_request(key, record.id)
            claimed[record.id] = self._store.get(record.id)
        return claimed

    # -- read --

    def get(self, principal: Principal, knowledge_id: str) -> Knowledge:
        validate_knowledge_id(knowledge_id)
        return self._visible(principal, knowledge_id)

    def versions(self, principal: Principal, knowledge_id: str) -> list[KnowledgeVersion]:
        return self.get(principal, knowledge_id).versions

    def list_page(
        self,
        principal: Principal,
        *,
        page_size: int,
        page_token: str,
        types: list[str],
        scopes: list[str],
        order: str,
    ) -> tuple[list[Knowledge], str]:
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        validate_types(types, "types", required=False)
        for index, value in enumerate(scopes):
            validate_scope(value, f"scopes[{index}]")
        visible = principal.visible_scopes
        wanted = visible.intersection(map(principal.qualify_scope, scopes)) if scopes else visible
        if not wanted:
            if page_token:  # an empty listing has no second page: the token is another's
                raise InvalidArgument("page_token", "belongs to a list with other filters or order")
            return [], ""
        return self._store.page(visible_where(wanted, types=types), order, page_size, page_token)

    # -- search --

    def search(
        self,
        principal: Principal,
        query: str,
        *,
        top_k: int,
        min_score: int,
        types: list[str],
        min_relevance: float | None = None,
    ) -> SearchResult:
        """Stage 1 keeps the records that answer the query: the LLM's pick when routing
        gives a usable one, else those recalled at or above the relevance floor
        (`min_relevance`, else the setting for the kind of relevance recall computed).
        Stage 2 orders them (`ranking.rank`). A `min_relevance` given applies to the
        LLM's pick too."""
        check.text(query, "query", QUERY_MAX, required=True)
        check.int_range(top_k, "top_k", 1, TOP_K_MAX)
        check.int_range(min_score, "min_score", 1, 5)
        validate_types(types, "types", required=False)
        if min_relevance is not None:
            check.number_range(min_relevance, "min_relevance", 0.0, 1.0)
        where = visible_where(principal.visible_scopes, types=types, min_score=min_score)
        candidates = max(top_k, math.ceil(top_k * self._settings.search_recall_multiplier))
        routed = None
        if self._llm is not None and self._settings.search_routing:
            recall, routed = self._routed(query, where, candidates)
        else:
            recall = self._store.recall(query, where, candidates)
        if routed is not None:
            chosen, selection = above(routed, min_relevance), Selection.ROUTED
        else:
            floor = min_relevance if min_relevance is not None else self._floor(recall)
            chosen = above(recall.candidates[:candidates], floor)
            selection = Selection.DEGRADED if recall.degraded else Selection.RECALL
        # Votes count for the voter's organisation: rank by the caller's organisation's.
        ranked = rank(
            [c.seen_by(principal.voters) for c in chosen],
            band=self._settings.search_relevance_band,
            visible=principal.visible_scopes,
        )
        hits = [SearchHit(c.knowledge, c.quality_score, c.relevance) for c in ranked[:top_k]]
        self._mark_unavailable_resources(principal, hits)
        return SearchResult(hits, selection)

    def _floor(self, recall: Recall) -> float:
        settings = self._settings
        return (
            settings.search_min_relevance_bm25 if recall.lexical else settings.search_min_relevance
        )

    def _routed(self, query: str, where: Where, pick: int) -> tuple[Recall, list[Candidate] | None]:
        """Stage 1 with the LLM: the recall, and the LLM's pick among the caller's whole
        catalog when that is small enough for one prompt, else among a wide recall; None
        when it gives no usable answer within the routing timeout."""
        settings = self._settings
        recall = self._store.recall(query, where, max(pick, settings.search_routing_pool))
        catalog = recall.candidates
        if self._store.count(where) <= settings.search_routing_catalog_max:
            catalog = self._store.catalog(where, first=recall.candidates)
        return recall, self._route(query, catalog, pick) if catalog else None

    def ask(
        self,
        principal: Principal,
        query: str,
        *,
        top_k: int,
        min_score: int,
        types: list[str],
        log: QueryLog | None,
        min_relevance: float | None = None,
    ) -> Answer:
        """Searches, then has the LLM answer from the hits citing their ids; with `log`,
        appends the question and answer to the trace as its query event."""
        if self._llm is None:
            raise FailedPrecondition("AskKnowledge needs an LLM: set KNOWHUB_LLM_BASE_URL")
        if log is not None:
            check.trace_id(log.trace_id)
            check.int_range(log.sequence, "sequence", 0, MAX_SEQUENCE)
            check.text(log.goal_id, "goal_id", NAME_MAX)
        result = self.search(
            principal,
            query,
            top_k=top_k,
            min_score=min_score,
            types=types,
            min_relevance=min_relevance,
        )
        records = [h.knowledge for h in result.hits]
        text, cited = "", []
        if records:
            try:
                text = prompts.read_answer(
                    self._llm.complete(
                        prompts.ASK_SYSTEM[self._language],
                        prompts.ask_prompt(
                            query,
                            records,
                            [principal.show_scope(k.owner) for k in records],
                            self._language,
                        ),
                        purpose="ask",
                    )
                )
            except LLMError as exc:
                raise Unavailable(f"the LLM did not answer (nothing was logged): {exc}") from exc
            cited = prompts.cited_ids(text, [k.id for k in records])
        answer = Answer(text, cited, result)
        if log is not None:
            sources = [k for k in records if k.id in cited] or records
            answer.event_id = self._cognition.log_query(
                principal,
                log.trace_id,
                sequence=log.sequence,
                goal_id=log.goal_id,
                query=query,
                response=text,
                sources=[(k.id, k.task, k.content) for k in sources],
            )
        return answer

    def _mark_unavailable_resources(self, principal: Principal, hits: list[SearchHit]) -> None:
        """Says which referenced resources the caller cannot use; when the resource
        service cannot answer, the search still does, with those hits unverified."""
        linked = [i for h in hits for i in h.knowledge.resource_ids]
        if not linked:
            return
        try:
            states = self._links.states(principal, linked)
        except Unavailable as exc:
            log.warning("search: resource references not checked: %s", exc.message)
            for hit in hits:
                hit.resources_unverified = bool(hit.knowledge.resource_ids)
            return
        for hit in hits:
            hit.unavailable_resources = [
                (i, states.get(i, MISSING))
                for i in hit.knowledge.resource_ids
                if states.get(i, MISSING) != USABLE
            ]

    def _route(self, query: str, recalled: list[Candidate], pick: int) -> list[Candidate] | None:
        """Stage 1: the LLM's choice among the recalled records, or None to keep recall
        order (no LLM answer within the routing timeout, retries included, or an
        unusable one: no JSON list of ids, or none of the candidates)."""
        assert self._llm is not None
        records = [c.knowledge for c in recalled]
        try:
            reply = self._llm.complete(
                prompts.ROUTING_SYSTEM,
                prompts.routing_prompt(query, records, pick),
                purpose="search_routing",
                timeout=self._settings.search_routing_timeout_seconds,
            )
            chosen = prompts.read_routing(reply, [k.id for k in records], pick)
        except (LLMError, Busy) as exc:  # a read never waits for a busy model
            log.warning("search routing fell back to recall order: %s", exc)
            return None
        by_id = {c.knowledge.id: c for c in recalled}
        return [by_id[i] for i in chosen]

    # -- feedback and evolve --

    def update(
        self, principal: Principal, knowledge_id: str, feedback: Feedback, prefix: str = ""
    ) -> Knowledge:
        validate_knowledge_id(knowledge_id, f"{prefix}id")
        validate_feedback(feedback, knowledge_id, prefix)
        if principal.delegation is not None:
            cases = [c for c in (feedback.helpful_case, feedback.harmful_case) if c]
            principal.delegation.check_feedback(
                knowledge_id,
                trace_ids={c.trace_id for c in cases},
                cases_only=feedback.feedback_only,
            )
        if feedback.request_id:  # so no one else can claim a key first, and void this call
            feedback = replace(feedback, request_id=request_key(principal, feedback.request_id))
        current = self._visible(principal, knowledge_id)
        if feedback.score is not None and not principal.may_modify(current.owner, current.creator):
            raise PermissionDenied(
                f"{prefix}update_score: only the owner "
                f"({principal.show_scope(current.owner)}) or an admin may "
                "set the author's score"
            )
        rewrites = feedback.evolve_feedback or feedback.edit is not None
        if rewrites and not principal.may_modify(current.owner, current.creator):
            action = "evolve" if feedback.evolve_feedback else "edit"
            raise PermissionDenied(
                f"only the owner ({principal.show_scope(current.owner)}) "
                f"or an admin may {action} this knowledge"
            )
        if feedback.evolve_feedback and self._llm is None:
            raise FailedPrecondition(
                "evolve_feedback needs an LLM: set KNOWHUB_LLM_BASE_URL (nothing was changed)"
            )
        edits = self._edit_values(principal, feedback.edit) if feedback.edit else {}
        if feedback.request_id and feedback.request_id in current.applied_requests:
            return current
        by = principal.default_owner(principal.acting_agent(""))
        ballot = _Ballot(
            principal.user_scope, principal.voters, self._settings.feedback_untraced_max, prefix
        )
        for _ in range(3):
            content = (
                self._evolve(current, feedback.evolve_feedback)
                if feedback.evolve_feedback
                else None
            )
            try:
                return self._store.update(
                    knowledge_id,
                    functools.partial(
                        _apply_feedback,
                        feedback=feedback,
                        write=_Write(content, current.content, edits, by),
                        ballot=ballot,
                    ),
                )
            except _AlreadyApplied as done:
                return done.record
            except _ContentMoved as moved:
                current = moved.record  # evolved meanwhile: evolve the new content
        raise Aborted(f"knowledge {knowledge_id!r} kept changing during evolve; try again")

    def _edit_values(self, principal: Principal, edit: Edit) -> dict[str, object]:
        """An edit's values as the record keeps them (names qualified), once the caller
        may write its scopes and use its resources."""
        values = edit.values()
        if "scopes" in values:
            scopes = [principal.qualify_scope(s) for s in edit.scopes]
            check_writable_scopes(principal, scopes, "knowledge.scopes")
            values["scopes"] = scopes
        if "resource_ids" in values:
            self._check_links(
                principal,
                [(f"knowledge.resource_ids[{i}]", r) for i, r in enumerate(edit.resource_ids)],
            )
            values["resource_ids"] = [principal.qualify(r) for r in edit.resource_ids]
        return values

    def _evolve(self, record: Knowledge, feedback: str) -> str:
        assert self._llm is not None
        try:
            return prompts.read_evolve(
                self._llm.complete(
                    prompts.EVOLVE_SYSTEM, prompts.evolve_prompt(record, feedback), purpose="evolve"
                )
            )
        except LLMError as exc:
            raise Unavailable(f"evolve failed, nothing was changed: {exc}") from exc

    def batch_update(
        self, principal: Principal, items: list[FeedbackItem | ServiceError]
    ) -> list[Knowledge | ServiceError]:
        """Applies each item on its own; an item's failure is returned in its place (an
        item that could not even be read arrives as its error and stays so)."""
        check.count(len(items), "feedback_list", BATCH_MAX, required=True)
        results: list[Knowledge | ServiceError] = []
        for index, item in enumerate(items):
            if isinstance(item, ServiceError):
                results.append(item)
                continue
            prefix = f"feedback_list[{index}]."
            try:
                validate_knowledge_id(item.knowledge_id, f"{prefix}knowledge_id")
                validate_case(item.case, f"{prefix}case")
                feedback = Feedback(
                    helpful_case=item.case if item.is_helpful else None,
                    harmful_case=None if item.is_helpful else item.case,
                    request_id=item.request_id,
                )
                results.append(self.update(principal, item.knowledge_id, feedback, prefix))
            except ServiceError as error:
                results.append(error)
        return results

    # -- delete --

    def delete(self, principal: Principal, knowledge_id: str) -> float:
        """Moves the record to the deleted ones; returns when it will be purged."""
        validate_knowledge_id(knowledge_id)
        record = self._visible(principal, knowledge_id)
        if not principal.may_modify(record.owner, record.creator):
            raise PermissionDenied(
                f"only the owner ({principal.show_scope(record.owner)}) or "
                "an admin may delete this knowledge"
            )
        at = now()
        purge_at = at + self._settings.knowledge_retention_hours * 3600
        self._store.soft_delete(record, deleted_at=at, purge_at=purge_at)
        return purge_at

    def undelete(self, principal: Principal, knowledge_id: str) -> Knowledge:
        """Brings a deleted record back before its purge time."""
        validate_knowledge_id(knowledge_id)
        deleted = self._store.deleted(knowledge_id)
        if (
            deleted is None
            or principal.visible_scopes.isdisjoint(deleted.record.scopes)
            or deleted.purge_at <= now()
        ):
            if self._store.get(knowledge_id) is not None:
                self._visible(principal, knowledge_id)  # NOT_FOUND unless the caller sees it
                raise FailedPrecondition(f"knowledge {knowledge_id!r} is not deleted")
            raise NotFound(f"no deleted knowledge {knowledge_id!r} (never deleted, or purged)")
        record = deleted.record
        if not principal.may_modify(record.owner, record.creator):
            raise PermissionDenied(
                f"only the owner ({principal.show_scope(record.owner)}) or "
                "an admin may undelete this knowledge"
            )
        return self._store.restore(record)

    def purge_expired(self) -> int:
        """Erases the deleted records whose purge time has come; returns how many."""
        return self._store.purge_deleted(before=now())

    # -- forget --

    def forget(self, principal: Principal, subject: str) -> dict[str, int]:
        """Erases every record `subject` owns, live or deleted; counts by kind."""
        owner = forget_subject(principal, subject)
        live, deleted = self._store.erase_owned(owner)
        return {"knowledge": live, "deleted_knowledge": deleted}

    # -- slim --

    def slim(self, principal: Principal, *, model: str, dry_run: bool) -> SlimReport:
        check.text(model, "model", NAME_MAX)
        if model and self._llm is None:
            raise FailedPrecondition(
                "model was given but no LLM is configured: set KNOWHUB_LLM_BASE_URL"
            )
        if self._llm is not None:
            model = self._llm.model_for(model)
        records = [
            r
            for r in self._store.scan(visible_where(principal.visible_scopes))
            if principal.may_modify(r.owner, r.creator)
        ]
        report = SlimReport(examined=len(records), dry_run=dry_run)
        records = self._drop_absorbed(records, report)
        tokens = [self._store.vectors.token_set(r) for r in records]
        for group in near_duplicate_groups(records, tokens, self._settings.slim_similarity):
            kept, others = group[0], group[1:]
            outcome = SlimGroup(kept.id, [o.id for o in others])
            if not dry_run:
                self._merge(
                    kept,
                    others,
                    model,
                    outcome,
                    principal.default_owner(principal.acting_agent("")),
                )
            report.groups.append(outcome)
        return report

    def _drop_absorbed(self, records: list[Knowledge], report: SlimReport) -> list[Knowledge]:
        """Records an interrupted slim already folded into another: finish removing them."""
        absorbed = {i for r in records for i in r.absorbed_ids}
        leftovers = [r for r in records if r.id in absorbed]
        if leftovers and not report.dry_run:
            self._store.delete([r.id for r in leftovers])
        return [r for r in records if r.id not in absorbed]

    def _merge(
        self, kept: Knowledge, others: list[Knowledge], model: str, outcome: SlimGroup, by: str
    ) -> None:
        merged: tuple[str, str] | None = None
        if self._llm is not None:
            try:
                merged = prompts.read_slim(
                    self._llm.complete(
                        prompts.SLIM_SYSTEM,
                        prompts.slim_prompt([kept, *others]),
                        purpose="slim",
                        model=model or None,
                    )
                )
                outcome.merged_by_llm = True
            except LLMError as exc:
                outcome.note = f"LLM merge failed, kept the best record's content: {exc}"

        def change(record: Knowledge) -> Knowledge:
            fold_into(record, others)
            at = now()
            if merged is not None:
                change_fields(
                    record, {"task": merged[0], "content": merged[1]}, at, Change("slim", by)
                )
            record.updated_at = at
            return record

        self._store.update(kept.id, change)
        self._store.delete([o.id for o in others])

    # -- helpers --

    def _visible(self, principal: Principal, knowledge_id: str) -> Knowledge:
        """The record if the caller can see it; NOT_FOUND either way otherwise."""
        record = self._store.get(knowledge_id)
        if record is None or principal.visible_scopes.isdisjoint(record.scopes):
            raise NotFound(f"knowledge {knowledge_id!r} not found")
        return record


def _first_same(
    record: Knowledge, stored: Iterable[Knowledge], earlier: Iterable[int], batch: list[Knowledge]
) -> Knowledge | int | None:
    """The first stored record `same_knowledge` calls the same as `record`, else the
    position of the first such record earlier in the batch, else None."""
    for candidate in stored:
        if same_knowledge(candidate, record):
            return candidate
    return next((i for i in earlier if same_knowledge(batch[i], record)), None)


def request_key(principal: Principal, request_id: str) -> str:
    """An idempotency key as the store keeps it: the caller's own, never another's."""
    return f"{principal.user_scope}:{request_id}"


@dataclass(frozen=True)
class _Write:
    """What an update writes besides feedback: evolved content (and the content it was
    evolved from), edited fields, and who writes them."""

    content: str | None
    basis: str
    edits: dict[str, object]
    by: str


@dataclass(frozen=True)
class _Ballot:
    """Who adds a case: the user it counts once per trace for, its community of voters,
    and how many cases without a trace it may add."""

    user: str
    voters: str
    untraced_max: int
    prefix: str

    def count(self, record: Knowledge, case: Case, *, helpful: bool, at: float) -> bool:
        """Adds the case if it counts; whether it did."""
        field_name = f"{self.prefix}add_{'helpful' if helpful else 'harmful'}_case"
        if not cast_ballot(record, self.user, case.trace_id, self.untraced_max, field_name):
            return False
        add_case(record, _stamped(case, at), helpful=helpful, voters=self.voters)
        return True


def _apply_feedback(
    record: Knowledge, feedback: Feedback, write: _Write, ballot: _Ballot
) -> Knowledge:
    """One update, applied to the freshest copy of the record inside the CAS loop."""
    if feedback.request_id and feedback.request_id in record.applied_requests:
        raise _AlreadyApplied(record)
    content = write.content
    if content is not None and record.content != write.basis:
        raise _ContentMoved(record)
    at = now()
    counted = [
        ballot.count(record, case, helpful=helpful, at=at)
        for case, helpful in ((feedback.helpful_case, True), (feedback.harmful_case, False))
        if case is not None
    ]
    if (
        counted
        and not any(counted)
        and feedback.score is None
        and content is None
        and not write.edits
    ):
        raise _AlreadyApplied(record)  # this user's trace counted already: nothing to write
    if feedback.score is not None:
        record.eval.score = feedback.score
    if content is not None:
        change_fields(
            record, {"content": content}, at, Change("evolve", write.by, feedback.evolve_feedback)
        )
    if write.edits:
        change_fields(
            record,
            write.edits,
            at,
            Change("edit", write.by, feedback.edit.note if feedback.edit else ""),
        )
    remember_request(record, feedback.request_id)
    record.updated_at = at
    return record


def _stamped(case: Case, at: float) -> Case:
    return case if case.timestamp else replace(case, timestamp=at)
