"""Knowledge records, their rules, and input validation."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field, replace

from knowhub_contracts.v1 import common_pb2

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from knowhub_server.common.base.scopes import (
    AGENT_NAME_RULE,
    PUBLIC,
    is_valid_agent_name,
    validate_owner,
    validate_scope,
)
from knowhub_server.common.security.auth import PUBLISHER_ROLE, Principal

KNOWLEDGE_TYPES = ProtoEnum(common_pb2.KnowledgeType).names  # the contract's one list

# Size limits, documented in the docs (docs/concepts) and in knowledge.proto.
TASK_MAX = 2_000
CONTENT_MAX = 65_536
QUERY_MAX = 2_000
TAGS_MAX, TAG_KEY_MAX, TAG_VALUE_MAX = 32, 64, 1_024
SCOPES_MAX = 16
URLS_MAX = 32
RESOURCE_IDS_MAX = 32
NAME_MAX = check.NAME_MAX
CASE_TEXT_MAX = check.CASE_TEXT_MAX
FEEDBACK_MAX = 4_000
TOP_K_MAX = 100
BATCH_MAX = 500
PAGE_SIZE_MAX = 100
MAX_SEQUENCE = 2**53 - 1  # a trace's message sequence (cognition's limit)

DEFAULT_SCORE = 3
DEFAULT_TOP_K = 5
DEFAULT_MIN_SCORE = 3
DEFAULT_PAGE_SIZE = 10

HISTORY_KEEP = 100  # cases kept per history; the counters keep counting
VERSIONS_KEEP = 20  # earlier contents kept per record
REQUEST_IDS_KEEP = 200  # idempotency keys remembered per record
TRACED_BALLOTS_KEEP = 2_000  # (user, trace) pairs remembered per record, newest kept


@dataclass
class Case:
    task: str = ""
    outcome: str = ""
    reason: str = ""
    trace_id: str = ""
    timestamp: float = 0.0
    query_sequence: int = 0


@dataclass
class Source:
    name: str = ""
    category: str = ""
    urls: list[str] = field(default_factory=list)
    agent_id: str = ""
    submitted_by: str = ""
    timestamp: float = 0.0
    message_id: str = ""
    trace_id: str = ""


@dataclass
class Eval:
    score: int = DEFAULT_SCORE
    helpful: int = 1
    harmful: int = 0
    confidence: float = 0.5
    helpful_history: list[Case] = field(default_factory=list)
    harmful_history: list[Case] = field(default_factory=list)
    # Cases added by each community of voters (`Principal.voters`): [helpful, harmful].
    votes: dict[str, list[int]] = field(default_factory=dict)

    @property
    def quality_score(self) -> float:
        return quality_score(self.score, self.helpful, self.harmful)

    def seen_by(self, voters: str) -> Eval:
        """The counters as `voters` rank the record by (see `counted_by`)."""
        if all(k == voters for k in self.votes) and self.confidence == confidence(
            self.helpful, self.harmful
        ):
            return self  # no other community's cases: the same counters (a new record's)
        helpful, harmful = counted_by(self.helpful, self.harmful, self.votes, voters)
        return replace(
            self, helpful=helpful, harmful=harmful, confidence=confidence(helpful, harmful)
        )


def counted_by(
    helpful: int, harmful: int, votes: dict[str, list[int]], voters: str
) -> tuple[int, int]:
    """The helpful and harmful counts that move a record for `voters`: all of them but
    those other communities added. The initial helpful, and cases from before counts
    were kept per community, count for everyone."""
    others = [v for k, v in votes.items() if k != voters]
    return helpful - sum(v[0] for v in others), harmful - sum(v[1] for v in others)


def quality_score(score: int, helpful: int, harmful: int) -> float:
    """The quality stage 2 ranks by: score + helpful - 2 * harmful."""
    return float(score + helpful - 2 * harmful)


# The fields an edit may write (UpdateKnowledge's update_mask), in the record's order.
EDITABLE_FIELDS = ("task", "content", "tags", "types", "scopes", "resource_ids")


@dataclass
class KnowledgeVersion:
    """A record's editable fields as they were before one change replaced them."""

    content: str
    replaced_at: float
    reason: str  # "edit", "evolve" or "slim"
    feedback: str = ""  # why: the evolve feedback or the edit's note
    task: str = ""
    types: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    resource_ids: list[str] = field(default_factory=list)
    changed_by: str = ""
    changed_fields: list[str] = field(default_factory=list)


@dataclass
class Knowledge:
    id: str
    task: str
    content: str
    types: list[str]
    scopes: list[str]
    owner: str
    creator: str  # the user who saved it; keeps owner rights (not exposed)
    created_at: float
    updated_at: float
    tags: dict[str, str] = field(default_factory=dict)
    message_id: str = ""
    resource_ids: list[str] = field(default_factory=list)
    source: Source = field(default_factory=Source)
    eval: Eval = field(default_factory=Eval)
    versions: list[KnowledgeVersion] = field(default_factory=list)
    applied_requests: list[str] = field(default_factory=list)
    absorbed_ids: list[str] = field(default_factory=list)  # records slim folded into this one
    # Whose cases counted: "<user scope> <trace id>" -> 1 for a case with a trace,
    # "<user scope>" -> how many without one (`cast_ballot`).
    ballots: dict[str, int] = field(default_factory=dict)

    @property
    def indexed_text(self) -> str:
        """What recall matches against."""
        return f"{self.task}\n{self.content}"


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


def same_knowledge(a: Knowledge, b: Knowledge) -> bool:
    """Whether two records say the same thing for the same owner and scopes: task and
    content equal after trimming, collapsing whitespace and ignoring case."""
    return (
        a.owner == b.owner
        and sorted(a.scopes) == sorted(b.scopes)
        and _normalised(a.task) == _normalised(b.task)
        and _normalised(a.content) == _normalised(b.content)
    )


def fingerprint(record: Knowledge) -> str:
    """What `same_knowledge` compares, hashed: records it calls the same have the same
    fingerprint, and records with the same fingerprint are the same unless two of 2**128
    collide (a lookup by fingerprint checks `same_knowledge` too)."""
    key = _KEY_JSON.encode(
        [record.owner, sorted(record.scopes), _normalised(record.task), _normalised(record.content)]
    )
    return hashlib.blake2b(key.encode(errors="surrogatepass"), digest_size=16).hexdigest()


_KEY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def confidence(helpful: int, harmful: int) -> float:
    """helpful / (helpful + harmful + 1): 0.5 for a new record (1 helpful, 0 harmful),
    rising towards 1 with helpful cases and falling towards 0 with harmful ones."""
    return helpful / (helpful + harmful + 1)


def new_knowledge_id(at: float) -> str:
    day = time.strftime("%Y%m%d", time.gmtime(at))
    return f"knowledge-{day}-{secrets.token_hex(6)}"


def add_case(record: Knowledge, case: Case, *, helpful: bool, voters: str) -> None:
    """Adds the case and counts it, for everyone and for the caller's `voters`."""
    history = record.eval.helpful_history if helpful else record.eval.harmful_history
    history.append(case)
    del history[:-HISTORY_KEEP]
    tally = record.eval.votes.setdefault(voters, [0, 0])
    if helpful:
        record.eval.helpful += 1
        tally[0] += 1
    else:
        record.eval.harmful += 1
        tally[1] += 1
    record.eval.confidence = confidence(record.eval.helpful, record.eval.harmful)


def cast_ballot(
    record: Knowledge, user: str, trace_id: str, untraced_max: int, field_name: str
) -> bool:
    """Whether a case `user` adds counts: the first for a trace does (the others of the
    same trace do not), and at most `untraced_max` without a trace; one more of those is
    FAILED_PRECONDITION."""
    ballots = record.ballots
    if not trace_id:
        cast = ballots.get(user, 0)
        if cast >= untraced_max:
            raise FailedPrecondition(
                f"{field_name}: this caller already added {cast} case(s) without a trace_id "
                f"to this record, the most KNOWHUB_FEEDBACK_UNTRACED_MAX allows; give the "
                "case's trace_id (each trace counts once)"
            )
        ballots[user] = cast + 1
        return True
    key = f"{user} {trace_id}"
    if key in ballots:
        return False
    ballots[key] = 1
    traced = [k for k in ballots if " " in k]
    for old in traced[:-TRACED_BALLOTS_KEEP]:
        del ballots[old]
    return True


@dataclass(frozen=True)
class Change:
    """Who changes a record's editable fields, how and why."""

    reason: str  # "edit", "evolve" or "slim"
    by: str = ""  # `user:ID`, or `agent:ID` acting for an agent
    why: str = ""


def change_fields(
    record: Knowledge, values: dict[str, object], at: float, change: Change
) -> list[str]:
    """Writes `values` (editable field -> new value) and keeps the record's state before
    as a version; returns the fields that really changed (no version when none did)."""
    changed = [
        name for name in EDITABLE_FIELDS if name in values and values[name] != getattr(record, name)
    ]
    if not changed:
        return []
    record.versions.insert(
        0,
        KnowledgeVersion(
            content=record.content,
            replaced_at=at,
            reason=change.reason,
            feedback=change.why,
            task=record.task,
            types=list(record.types),
            tags=dict(record.tags),
            scopes=list(record.scopes),
            resource_ids=list(record.resource_ids),
            changed_by=change.by,
            changed_fields=changed,
        ),
    )
    del record.versions[VERSIONS_KEEP:]
    for name in changed:
        setattr(record, name, values[name])
    return changed


def remember_request(record: Knowledge, request_id: str) -> None:
    if request_id:
        record.applied_requests.append(request_id)
        del record.applied_requests[:-REQUEST_IDS_KEEP]


# ---- Inputs and their validation -------------------------------------------------------


@dataclass
class Draft:
    """What a caller asks to save (SaveKnowledgeRequest)."""

    task: str
    content: str
    types: list[str]
    tags: dict[str, str] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    owner: str = ""
    source: Source = field(default_factory=Source)
    score: int | None = None
    message_id: str = ""
    resource_ids: list[str] = field(default_factory=list)
    request_id: str = ""
    allow_duplicate: bool = False  # save even when the same record exists


@dataclass
class Edit:
    """An edit as the caller sent it: the fields UpdateKnowledge's update_mask names (or
    those its `knowledge` sets, without a mask), their new values, and why."""

    paths: list[str]
    task: str = ""
    content: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    types: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    resource_ids: list[str] = field(default_factory=list)
    record_id: str = ""  # the id its `knowledge` names, if any
    note: str = ""

    @property
    def fields(self) -> list[str]:
        """The fields it writes (`*` is all of them)."""
        return list(EDITABLE_FIELDS) if self.paths == ["*"] else list(self.paths)

    def values(self) -> dict[str, object]:
        """The fields it writes and their values."""
        return {name: getattr(self, name) for name in self.fields}


@dataclass
class Feedback:
    """What a caller asks to change (UpdateKnowledgeRequest)."""

    helpful_case: Case | None = None
    harmful_case: Case | None = None
    score: int | None = None
    evolve_feedback: str = ""
    request_id: str = ""
    edit: Edit | None = None

    @property
    def empty(self) -> bool:
        return (
            self.helpful_case is None
            and self.harmful_case is None
            and self.score is None
            and not self.evolve_feedback
            and self.edit is None
        )

    @property
    def feedback_only(self) -> bool:
        """Only cases: what a delegated grant may send."""
        return self.score is None and not self.evolve_feedback and self.edit is None


def validate_types(types: list[str], field_name: str, *, required: bool) -> list[str]:
    check.items(types, field_name, len(KNOWLEDGE_TYPES), required=required)
    for index, value in enumerate(types):
        if value not in KNOWLEDGE_TYPES:
            raise InvalidArgument(
                f"{field_name}[{index}]", f"{value!r} is not one of {', '.join(KNOWLEDGE_TYPES)}"
            )
    return types


def validate_draft(draft: Draft, prefix: str = "") -> Draft:
    check.text(draft.task, f"{prefix}task", TASK_MAX, required=True)
    check.text(draft.content, f"{prefix}content", CONTENT_MAX, required=True)
    validate_types(draft.types, f"{prefix}types", required=True)
    check.string_map(draft.tags, f"{prefix}tags", TAGS_MAX, TAG_KEY_MAX, TAG_VALUE_MAX)
    check.items(draft.scopes, f"{prefix}scopes", SCOPES_MAX)
    for index, value in enumerate(draft.scopes):
        validate_scope(value, f"{prefix}scopes[{index}]")
    if draft.owner:
        validate_owner(draft.owner, f"{prefix}owner")
    if draft.score is not None:
        check.int_range(draft.score, f"{prefix}score", 1, 5)
    check.text(draft.message_id, f"{prefix}message_id", NAME_MAX)
    check.text(draft.request_id, f"{prefix}request_id", NAME_MAX)
    check.items(draft.resource_ids, f"{prefix}resource_ids", RESOURCE_IDS_MAX)
    for index, value in enumerate(draft.resource_ids):
        check.resource_id(value, f"{prefix}resource_ids[{index}]")
    validate_source(draft.source, f"{prefix}source")
    return draft


def validate_source(source: Source, prefix: str) -> None:
    check.text(source.name, f"{prefix}.name", NAME_MAX)
    check.text(source.category, f"{prefix}.category", 64)
    check.text(source.agent_id, f"{prefix}.agent_id", NAME_MAX)
    if source.agent_id and not is_valid_agent_name(source.agent_id):
        # It names the acting agent, so it may become the owner `agent:{agent_id}`.
        raise InvalidArgument(
            f"{prefix}.agent_id", f"{source.agent_id!r} is not an agent id: use {AGENT_NAME_RULE}"
        )
    check.text(source.submitted_by, f"{prefix}.submitted_by", NAME_MAX)
    check.text(source.message_id, f"{prefix}.message_id", NAME_MAX)
    if source.trace_id:
        check.trace_id(source.trace_id, f"{prefix}.trace_id")
    check.items(source.urls, f"{prefix}.urls", URLS_MAX, unique=False)
    for index, value in enumerate(source.urls):
        check.url(value, f"{prefix}.urls[{index}]")


def validate_case(case: Case, prefix: str) -> Case:
    for name in ("task", "outcome", "reason"):
        check.text(getattr(case, name), f"{prefix}.{name}", CASE_TEXT_MAX)
    check.text(case.trace_id, f"{prefix}.trace_id", NAME_MAX)
    if case.query_sequence < 0:
        raise InvalidArgument(f"{prefix}.query_sequence", "must not be negative")
    return case


def validate_feedback(feedback: Feedback, knowledge_id: str, prefix: str = "") -> Feedback:
    if feedback.empty:
        raise InvalidArgument(
            f"{prefix}add_helpful_case",
            "nothing to update: give add_helpful_case, "
            "add_harmful_case, update_score, evolve_feedback, or knowledge with update_mask",
        )
    if feedback.edit is not None:
        if feedback.evolve_feedback:
            raise InvalidArgument(
                f"{prefix}update_mask",
                "cannot be combined with evolve_feedback: both change the content",
            )
        validate_edit(feedback.edit, knowledge_id, prefix)
    if feedback.helpful_case is not None:
        validate_case(feedback.helpful_case, f"{prefix}add_helpful_case")
    if feedback.harmful_case is not None:
        validate_case(feedback.harmful_case, f"{prefix}add_harmful_case")
    if feedback.score is not None:
        check.int_range(feedback.score, f"{prefix}update_score", 1, 5)
    check.text(feedback.evolve_feedback, f"{prefix}evolve_feedback", FEEDBACK_MAX)
    check.text(feedback.request_id, f"{prefix}request_id", NAME_MAX)
    return feedback


def validate_edit(edit: Edit, knowledge_id: str, prefix: str = "") -> Edit:
    """The mask names editable fields, and each one is valid as a save checks it; scopes
    may not become empty."""
    check.text(edit.note, f"{prefix}change_note", FEEDBACK_MAX)
    if edit.record_id and edit.record_id != knowledge_id:
        raise InvalidArgument(
            f"{prefix}knowledge.id",
            f"{edit.record_id!r} is not the id being updated ({knowledge_id!r})",
        )
    if not edit.paths:
        raise InvalidArgument(f"{prefix}update_mask", "names no field to edit")
    for index, path in enumerate(edit.paths):
        if path not in EDITABLE_FIELDS and edit.paths != ["*"]:
            raise InvalidArgument(
                f"{prefix}update_mask.paths[{index}]",
                f"{path[:100]!r} cannot be edited: use {', '.join(EDITABLE_FIELDS)} or *",
            )
    named = f"{prefix}knowledge."
    written = edit.fields
    if "task" in written:
        check.text(edit.task, f"{named}task", TASK_MAX, required=True)
    if "content" in written:
        check.text(edit.content, f"{named}content", CONTENT_MAX, required=True)
    if "types" in written:
        validate_types(edit.types, f"{named}types", required=True)
    if "tags" in written:
        check.string_map(edit.tags, f"{named}tags", TAGS_MAX, TAG_KEY_MAX, TAG_VALUE_MAX)
    if "scopes" in written:
        check.items(edit.scopes, f"{named}scopes", SCOPES_MAX, required=True)
        for index, value in enumerate(edit.scopes):
            validate_scope(value, f"{named}scopes[{index}]")
    if "resource_ids" in written:
        check.items(edit.resource_ids, f"{named}resource_ids", RESOURCE_IDS_MAX)
        for index, value in enumerate(edit.resource_ids):
            check.resource_id(value, f"{named}resource_ids[{index}]")
    return edit


def validate_knowledge_id(value: str, field_name: str = "id") -> str:
    check.text(value, field_name, NAME_MAX, required=True)
    return value


# ---- Building a record -------------------------------------------------------------------


def new_knowledge(draft: Draft, principal: Principal, at: float, prefix: str = "") -> Knowledge:
    """A new record from a validated draft, with the defaults, checked against
    what the caller may write; its agent and resource names qualified by their org."""
    agent = principal.acting_agent(draft.source.agent_id, f"{prefix}source.agent_id")
    scopes = [principal.qualify_scope(s) for s in draft.scopes] or [principal.default_scope]
    check_writable_scopes(principal, scopes, f"{prefix}scopes")
    owner = principal.qualify_scope(draft.owner) if draft.owner else principal.default_owner(agent)
    if draft.owner and not principal.is_admin and owner not in principal.identities(agent):
        raise PermissionDenied(
            f"{prefix}owner: {draft.owner!r} is not the caller; only an "
            "admin may save on behalf of another owner"
        )
    message_id = draft.message_id or draft.source.message_id
    given = draft.source
    source = Source(
        name=given.name,
        category=given.category or "exp",
        urls=list(given.urls),
        agent_id=agent,
        submitted_by=given.submitted_by,
        timestamp=given.timestamp or at,
        message_id=given.message_id or message_id,
        trace_id=given.trace_id,
    )
    score = draft.score if draft.score is not None else DEFAULT_SCORE
    return Knowledge(
        id=new_knowledge_id(at),
        task=draft.task,
        content=draft.content,
        types=list(draft.types),
        scopes=list(scopes),
        owner=owner,
        creator=principal.user_scope,
        created_at=at,
        updated_at=at,
        tags=dict(draft.tags),
        message_id=message_id,
        resource_ids=[principal.qualify(r) for r in draft.resource_ids],
        source=source,
        eval=Eval(score=score),
    )


def check_writable_scopes(principal: Principal, scopes: list[str], field_name: str) -> None:
    """A caller writes only into scopes it can see, and into `public` (every
    organisation's) only with the publisher role: others would otherwise place text in
    every tenant's searches and prompts."""
    for index, value in enumerate(scopes):
        if value not in principal.visible_scopes and not principal.is_admin:
            raise PermissionDenied(
                f"{field_name}[{index}]: cannot write into "
                f"{principal.show_scope(value)!r}, a scope the caller "
                "cannot see"
            )
        if value == PUBLIC and not principal.has_role(PUBLISHER_ROLE):
            raise PermissionDenied(
                f"{field_name}[{index}]: writing into 'public' needs the "
                f"{PUBLISHER_ROLE!r} role (the tokens file's roles)"
            )


# ---- Slim: near-duplicate groups and folding ---------------------------------------------


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_duplicate_groups(
    records: list[Knowledge], tokens: list[frozenset[int]], threshold: float
) -> list[list[Knowledge]]:
    """Groups of two or more records with the same owner, scopes and types whose token
    sets are at least `threshold` similar (transitively), each group best record first.
    Records of other types or scopes are never merged: the merged record would lose a
    type or widen who reads the other's text."""
    by_owner_scopes: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[int]] = {}
    for index, record in enumerate(records):
        key = (record.owner, tuple(sorted(set(record.scopes))), tuple(sorted(set(record.types))))
        by_owner_scopes.setdefault(key, []).append(index)
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in by_owner_scopes.values():
        for offset, i in enumerate(members):
            for j in members[offset + 1 :]:
                if root(i) != root(j) and jaccard(tokens[i], tokens[j]) >= threshold:
                    parent[root(j)] = root(i)
    clusters: dict[int, list[Knowledge]] = {}
    for index, record in enumerate(records):
        clusters.setdefault(root(index), []).append(record)
    groups = [sorted(c, key=_best_first) for c in clusters.values() if len(c) > 1]
    return sorted(groups, key=lambda g: g[0].id)


def _best_first(record: Knowledge) -> tuple[float, float, str]:
    """Highest quality_score first, newest on ties."""
    return (-record.eval.quality_score, -record.updated_at, record.id)


def fold_into(kept: Knowledge, others: list[Knowledge]) -> None:
    """Adds the others' counters, cases, resources and tags to `kept` (its own tags win);
    it keeps the highest author's score of them all."""
    for other in others:
        kept.eval.score = max(kept.eval.score, other.eval.score)
        kept.eval.helpful += other.eval.helpful
        kept.eval.harmful += other.eval.harmful
        for voters, (helpful, harmful) in other.eval.votes.items():
            tally = kept.eval.votes.setdefault(voters, [0, 0])
            tally[0] += helpful
            tally[1] += harmful
        for ballot, count in other.ballots.items():
            kept.ballots[ballot] = max(kept.ballots.get(ballot, 0), count)
        kept.eval.helpful_history += other.eval.helpful_history
        kept.eval.harmful_history += other.eval.harmful_history
        kept.resource_ids += [r for r in other.resource_ids if r not in kept.resource_ids]
        kept.tags = {**other.tags, **kept.tags}
        kept.absorbed_ids.append(other.id)
    for history in (kept.eval.helpful_history, kept.eval.harmful_history):
        history.sort(key=lambda case: case.timestamp)
        del history[:-HISTORY_KEEP]
    kept.eval.confidence = confidence(kept.eval.helpful, kept.eval.harmful)
