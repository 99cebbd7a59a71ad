"""Memory records and their rules: jobs, memos, events, profiles,
the absolutization gate, time decay, and input validation."""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import InvalidArgument, PermissionDenied
from knowhub_server.common.base.scopes import validate_scope
from knowhub_server.common.base.times import iso
from knowhub_server.common.security.auth import Principal

GROUP, PRIVATE = "group", "private"
REQUEST_TYPES = (GROUP, PRIVATE)
USER, GROUP_ENTITY = "user", "group"
ENTITY_TYPES = (USER, GROUP_ENTITY)
# Perspectives: the group's memory, the sender's own, and the untargeted copy.
PERSPECTIVE_GROUP, PERSPECTIVE_SENDER, PERSPECTIVE_GLOBAL = "group", "sender", "global"
SCHEMA_VERSION = "final_v1"
MEMO_INDEX = "m"  # the event index of a memo-only job
# An event's state: a fact that holds, one a newer fact replaced (or that was retracted),
# and one deleted (undoable until purged).
CURRENT, SUPERSEDED, DELETED = "current", "superseded", "deleted"
# What the historian decides for a new observation against the subject's similar events.
ADD, UPDATE, RETRACT, NOOP = "add", "update", "delete", "noop"
ACTIONS = (ADD, UPDATE, RETRACT, NOOP)
# A job's progress.
JOB_PENDING, JOB_PROCESSING, JOB_DONE, JOB_FAILED = "pending", "processing", "done", "failed"

# Size limits, documented in the docs (docs/concepts) and in dream.proto.
MEMO_MAX = 4_000
OBSERVATION_MAX = 2_000
OBSERVATIONS_MAX = 20
ID_MAX = 128
DISPLAY_NAME_MAX = 128
REQUEST_ID_MAX = 256
QUERY_MAX = 2_000
TOP_K_MAX = 100
PAGE_SIZE_MAX = 100
DEFAULT_PAGE_SIZE = 20
FUTURE_SKEW_SECONDS = 86_400
PROFILE_SUMMARY_MAX = 8_000
PROFILE_TAGS_MAX = 32
PROFILE_TAG_MAX = 64
MERGED_JOBS_KEEP = 50  # job ids a profile remembers, so a redelivered job merges once

_ID_PATTERN = re.compile(r"[^\s\x00-\x1f\x7f]{1,128}")


# ---- Records ------------------------------------------------------------------------


@dataclass
class Context:
    """Where a Remember call comes from (RememberRequest.context)."""

    request_type: str
    user_id: str
    group_id: str = ""
    sender_id: str = ""
    source_message: str = ""
    recent_messages: list[str] = field(default_factory=list)
    sender_name: str = ""
    group_name: str = ""
    timestamp: float | None = None

    @property
    def conversation(self) -> str:
        """`group:G` or `private:U`: whose short-term list a memo goes to."""
        return conversation(self.request_type, self.user_id, self.group_id)


def conversation(request_type: str, user_id: str, group_id: str) -> str:
    return f"{GROUP}:{group_id}" if request_type == GROUP else f"{PRIVATE}:{user_id}"


@dataclass
class Job:
    """One historian job: what Remember enqueued, with its context already truncated."""

    job_id: str
    scope: str
    context: Context
    memo: str
    observations: list[str]
    force: bool
    created_at: float
    written_by: str  # the caller's user scope, for audit

    @property
    def timestamp(self) -> float:
        return self.context.timestamp if self.context.timestamp is not None else self.created_at

    def to_json(self) -> str:
        # vars(), not asdict(): asdict deep-copies, a quarter of Remember's own time.
        return compact_json({**vars(self), "context": vars(self.context)})

    @classmethod
    def from_json(cls, raw: str | bytes) -> Job:
        """Raises ValueError for anything but a job's JSON."""
        try:
            data = json.loads(raw)
            job = cls(context=Context(**data.pop("context")), **data)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a historian job: {exc}") from exc
        if job.context.request_type not in REQUEST_TYPES or not job.job_id:
            raise ValueError("not a historian job: no job id or request type")
        return job


# One encoder for every record Remember writes: json.dumps given options builds a new
# encoder per call, which costs as much as the encoding.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: dict[str, Any]) -> str:
    return _ENCODER.encode(value)


def new_job_id() -> str:
    """32 random hex digits (as a UUID4's hex, without building the UUID)."""
    return secrets.token_hex(16)


@dataclass
class Memo:
    text: str
    created_at: float
    sender_id: str
    job_id: str
    written_by: str = ""  # the Remember caller's user scope: who may edit or delete it
    edited_at: float | None = None

    def to_json(self) -> str:
        return compact_json(vars(self))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Memo:
        return cls(**json.loads(raw))


@dataclass
class CognitiveEvent:
    """One stored event with its metadata."""

    event_id: str
    scope: str
    text: str
    user_id: str
    group_id: str
    sender_id: str
    timestamp_epoch: float
    timestamp_utc: str
    timestamp_local: str
    request_type: str
    perspective: str
    is_absolute: bool
    job_id: str
    warning: str = ""
    observation: str = ""  # what the caller wrote, before the rewrite
    schema_version: str = SCHEMA_VERSION
    state: str = CURRENT
    superseded_at: float | None = None
    superseded_by: str = ""  # the newer event (its sender copy); empty when retracted
    supersedes: str = ""  # the event this one replaced
    confirmed_at: float | None = None  # the last time a no-op restated this fact
    deleted_at: float | None = None
    purge_at: float | None = None
    edited_at: float | None = None
    written_by: str = ""  # the Remember caller's user scope: who may edit or delete it

    @property
    def fact_id(self) -> str:
        """What the copies of one observation (one per perspective) share."""
        return self.event_id.rsplit("_", 1)[0]


def sibling_ids(event_id_: str) -> list[str]:
    """The ids of every perspective's copy of the event's observation."""
    fact = event_id_.rsplit("_", 1)[0]
    return [f"{fact}_{p}" for p in (PERSPECTIVE_GROUP, PERSPECTIVE_SENDER, PERSPECTIVE_GLOBAL)]


def normalized_fact(text: str) -> str:
    """What makes two event texts the same fact: case, spacing and the final stop aside."""
    return " ".join(text.casefold().split()).rstrip(".。!！ ")


@dataclass
class Decision:
    """What the historian did with one observation (index -1: a memo-only job)."""

    observation_index: int
    action: str
    event_id: str = ""
    target_event_id: str = ""
    reason: str = ""


@dataclass
class JobStatus:
    """A historian job as GetMemoryJob shows it."""

    job_id: str
    state: str
    scope: str
    written_by: str
    created_at: float
    updated_at: float
    error: str = ""
    deliveries: int = 0
    event_ids: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)  # whom the job is about, to forget


def event_id(job_id: str, index: int | str, perspective: str) -> str:
    """Deterministic, so a redelivered job overwrites its events rather than adding more."""
    return f"{job_id}_{index}_{perspective}"


def perspectives(request_type: str) -> tuple[str, ...]:
    """Group chats: the group's copy, the sender's and the global one; private chats:
    the user's and the global one."""
    if request_type == GROUP:
        return PERSPECTIVE_GROUP, PERSPECTIVE_SENDER, PERSPECTIVE_GLOBAL
    return PERSPECTIVE_SENDER, PERSPECTIVE_GLOBAL


def local_time(seconds: float, zone: str) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).astimezone(ZoneInfo(zone)).isoformat()


def events_for(
    job: Job,
    index: int | str,
    text: str,
    *,
    is_absolute: bool,
    warning: str,
    observation: str,
    zone: str,
    supersedes: str = "",
) -> list[CognitiveEvent]:
    """One event per perspective of the job's conversation."""
    context, at = job.context, job.timestamp
    return [
        CognitiveEvent(
            event_id=event_id(job.job_id, index, perspective),
            scope=job.scope,
            text=text,
            user_id=context.user_id,
            group_id=context.group_id,
            sender_id=context.sender_id or context.user_id,
            timestamp_epoch=at,
            timestamp_utc=iso(at),
            timestamp_local=local_time(at, zone),
            request_type=context.request_type,
            perspective=perspective,
            is_absolute=is_absolute,
            job_id=job.job_id,
            warning=warning,
            observation=observation,
            supersedes=supersedes,
            written_by=job.written_by,
        )
        for perspective in perspectives(context.request_type)
    ]


# ---- The absolutization gate --------------------------------------------------------------


def _words(words: str) -> str:
    """`me|my` -> `[Mm]e|[Mm]y`: lower case or capitalised, never all caps (US, IT)."""
    return "|".join(f"[{w[0].upper()}{w[0]}]{w[1:]}" for w in words.split("|"))


def _english(pattern: str) -> str:
    """A pattern of whole English words, any case."""
    return rf"(?i:\b(?:{pattern})\b)"


_EN_NUMBER = (
    r"\d{1,9}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|a few|few|several|a couple of|couple of"
)
_EN_UNIT = r"seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|decades?"
_EN_DAY = (
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|afternoon|"
    r"evening|night|week|weekend|month|year|summer|winter|spring|autumn|fall|"
    r"semester|quarter"
)
_ZH_NUMBER = r"(?<![0-9])[0-9]{1,2}|[一二三四五六七八九十两几半数]{1,8}"
_ZH_UNIT = r"天|日|周|星期|礼拜|个月|月|年|小时|分钟|晚"


@dataclass(frozen=True)
class GateRule:
    """One row of the absolutization gate: what it catches, in which language."""

    kind: str  # pronoun, relative_time or relative_place
    language: str  # zh or en
    pattern: str


# The gate: what an absolute event must not say. Each rule leaves alone the
# technical terms that share its letters (I/O, 排他锁, 其他, 本地部署, "there is").
# Every repeat is bounded ({1,8}, never + or *) where a failed match could retry it from
# each position of a long run: `re` backtracks, and an unbounded number before a unit
# word made a run of n characters cost n² steps. Bounded, a check stays linear in its text.
GATE_RULES: tuple[GateRule, ...] = (
    GateRule(
        "pronoun",
        "zh",
        r"(?<![自])我|(?<![迷])你|您|(?<![其吉利排])他|她|(?<![其])它|"
        r"咱|这位|那位|此人|这个人|那个人|这家伙|那家伙",
    ),
    GateRule(
        "pronoun",
        "en",
        r"(?<![\w/&.-])(?<!Type )(?<!Phase )(?<!Class )(?<!Tier )(?<!Level )"
        r"(?<!Stage )(?<!War )I(?![\w/&-])|\b(?:"
        + _words(
            "me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself|"
            "yourselves|he|him|his|himself|she|her|hers|herself|they|them|their|"
            "theirs|themselves"
        )
        + r")\b|"
        + _english(
            r"this (?:guy|person|man|woman|lady)|that (?:guy|person|man|woman|"
            r"lady)|the other (?:guy|person)"
        ),
    ),
    GateRule(
        "relative_time",
        "zh",
        r"今天|今日|今早|今晨|今晚|今夜|昨天|昨日|昨早|昨晚|昨夜|前天|前日|前晚|"
        r"大前天|明天|明日|明早|明晚|后天|大后天|刚才|刚刚|方才|稍后|待会|等会|"
        r"一会儿|上周|下周|本周|这周|上星期|下星期|这星期|本星期|上个星期|下个星期|"
        r"这个星期|上礼拜|下礼拜|这礼拜|上个礼拜|下个礼拜|上个月|下个月|这个月|本月|"
        r"上月|下月|去年|今年|明年|前年|后年|当年|那年|那天|那时|那会儿|这天|"
        r"最近|近来|近期|目前|现在|此刻|当时|前几天|这几天|过几天|"
        rf"(?:{_ZH_NUMBER})(?:{_ZH_UNIT})(?:前|后|以前|以后|之前|之后)",
    ),
    GateRule(
        "relative_time",
        "en",
        _english(
            r"today|tonight|yesterday|tomorrow|just now|right now|now|currently|recently|"
            r"lately|soon|nowadays|these days|back then|the other day|earlier today|"
            r"later today|that day|that night|at that time|"
            rf"(?:this|last|next|coming|past|previous) (?:{_EN_DAY})|"
            rf"(?:{_EN_NUMBER}) (?:{_EN_UNIT}) (?:ago|later|from now|earlier|before|after)"
        ),
    ),
    GateRule(
        "relative_place",
        "zh",
        r"这里|那里|这边|那边|这儿|那儿|当地|附近|此地|此处|该地|这个地方|那个地方|"
        r"隔壁|对面|(?:在|到|回|来|去)本地(?!部署|缓存|存储|文件|运行|环境|开发|测试|"
        r"服务|仓库|模型|化)",
    ),
    GateRule(
        "relative_place",
        "en",
        _english(
            r"here|over there|this place|that place|this city|this town|"
            r"nearby|around here|this area"
        )
        + r"|(?i:\bthere\b)(?!\s+(?:is|are|was|were|will|would|has|have|had|must|"
        r"may|might|can|could|should|seems?|exists?|appears?|remains?|\'s|’s)\b)"
        r"(?<!(?i:Is) there)(?<!(?i:re) there)",
    ),
)
_GATE = {
    kind: re.compile("|".join(f"(?:{r.pattern})" for r in GATE_RULES if r.kind == kind))
    for kind in dict.fromkeys(r.kind for r in GATE_RULES)
}
_ENTITY_ID = re.compile(r"(?<!\d)\d{5,12}(?!\d)")


def gate_hits(text: str) -> dict[str, list[str]]:
    """What the gate finds in a rewrite: pronouns, relative times and places (Chinese
    and English), each kind's distinct matches; empty when the text passes."""
    hits = {}
    for kind, pattern in _GATE.items():
        found = list(dict.fromkeys(m.group(0) for m in pattern.finditer(text)))
        if found:
            hits[kind] = found[:5]
    return hits


def ids_to_keep(observation: str, context: Context) -> list[str]:
    """Numeric entity ids (5-12 digits, e.g. QQ numbers) the observation names other than
    the conversation's own: a rewrite must keep each of them."""
    own = {context.user_id, context.group_id, context.sender_id}
    return [i for i in dict.fromkeys(_ENTITY_ID.findall(observation)) if i not in own]


def drifted_ids(required: list[str], text: str) -> list[str]:
    present = set(_ENTITY_ID.findall(text))
    return [i for i in required if i not in present]


def describe_gate(hits: dict[str, list[str]], drifted: list[str]) -> str:
    parts = [f"{kind.replace('_', ' ')}: {', '.join(found)}" for kind, found in hits.items()]
    if drifted:
        parts.append(f"missing entity ids: {', '.join(drifted)}")
    return "; ".join(parts)


# ---- Retrieval -------------------------------------------------------------------------


def decayed_score(
    similarity: float,
    age_seconds: float,
    *,
    half_life_days: float,
    boost: float,
    min_similarity: float,
) -> float:
    """The time-decayed score: sim * (1 + boost * 0.5^(age / half_life)), only when sim reaches
    min_similarity (so new but unrelated events do not rise)."""
    if similarity < min_similarity:
        return similarity
    decay: float = 0.5 ** (max(age_seconds, 0.0) / (half_life_days * 86_400))
    return similarity * (1 + boost * decay)


@dataclass(frozen=True)
class Isolation:
    """The hard filter: which events a search may see, by equality, never by
    similarity."""

    perspective: str
    user_id: str = ""
    group_id: str = ""


def isolation(target_user_id: str, target_group_id: str) -> Isolation:
    if target_group_id:
        return Isolation(PERSPECTIVE_GROUP, user_id=target_user_id, group_id=target_group_id)
    if target_user_id:
        return Isolation(PERSPECTIVE_SENDER, user_id=target_user_id)
    return Isolation(PERSPECTIVE_GLOBAL)


# ---- Profiles ----------------------------------------------------------------------------


@dataclass
class Profile:
    scope: str
    entity_type: str
    entity_id: str
    name: str
    tags: list[str]
    summary: str
    updated_at: float
    source_event_id: str
    revision: int = 1
    reason: str = "merge"

    @property
    def markdown(self) -> str:
        """Markdown with YAML front matter; strings are JSON-quoted, which
        YAML reads as double-quoted scalars."""

        def quoted(value: str) -> str:
            return json.dumps(value, ensure_ascii=False)

        tags = [f"  - {quoted(t)}" for t in self.tags]
        return "\n".join(
            [
                "---",
                f"entity_type: {self.entity_type}",
                f"entity_id: {quoted(self.entity_id)}",
                f"name: {quoted(self.name)}",
                "tags:" + ("" if tags else " []"),
                *tags,
                f"updated_at: {quoted(iso(self.updated_at))}",
                f"source_event_id: {quoted(self.source_event_id)}",
                "---",
                self.summary,
            ]
        )

    @property
    def indexed_text(self) -> str:
        return "\n".join([self.name, " ".join(self.tags), self.summary])


@dataclass
class ProfileRevision:
    profile: Profile
    replaced_at: float


@dataclass
class ProfileRecord:
    """A profile as stored: the current revision, the earlier ones, and the jobs merged."""

    profile: Profile
    revisions: list[ProfileRevision] = field(default_factory=list)  # newest first
    merged_jobs: list[str] = field(default_factory=list)

    def replace(self, profile: Profile, at: float, keep: int) -> None:
        """Makes `profile` current and keeps the replaced one as a revision."""
        self.revisions.insert(0, ProfileRevision(self.profile, at))
        del self.revisions[keep:]
        self.profile = profile

    def remember_job(self, job_id: str) -> None:
        self.merged_jobs.append(job_id)
        del self.merged_jobs[:-MERGED_JOBS_KEEP]


@dataclass
class ProfileUpdate:
    """What the profile merge asks to write for one entity."""

    entity_type: str
    entity_id: str
    name: str
    tags: list[str]
    summary: str


def profile_key(scope: str, entity_type: str, entity_id: str) -> str:
    return json.dumps([scope, entity_type, entity_id], separators=(",", ":"))


def profile_targets(job: Job) -> list[tuple[str, str]]:
    """The profiles a job's observations may update: the sender's, and the group's in a
    group chat."""
    context = job.context
    targets = [(USER, context.sender_id or context.user_id)]
    if context.request_type == GROUP:
        targets.append((GROUP_ENTITY, context.group_id))
    return targets


def updated_profile(
    current: Profile | None, update: ProfileUpdate, *, scope: str, at: float, source_event_id: str
) -> Profile:
    return Profile(
        scope=scope,
        entity_type=update.entity_type,
        entity_id=update.entity_id,
        name=update.name or (current.name if current else update.entity_id),
        tags=update.tags,
        summary=update.summary,
        updated_at=at,
        source_event_id=source_event_id,
        revision=current.revision + 1 if current else 1,
        reason="merge",
    )


def restored_profile(current: Profile, revision: Profile, at: float) -> Profile:
    return Profile(
        scope=current.scope,
        entity_type=current.entity_type,
        entity_id=current.entity_id,
        name=revision.name,
        tags=list(revision.tags),
        summary=revision.summary,
        updated_at=at,
        source_event_id=revision.source_event_id,
        revision=current.revision + 1,
        reason=f"restore of revision {revision.revision}",
    )


# ---- Failed jobs ---------------------------------------------------------------------------


@dataclass
class FailedJob:
    job_id: str
    error: str
    deliveries: int
    failed_at: float
    job: Job | None  # None when the job could not be read


# ---- Validation ---------------------------------------------------------------------------


def validate_id(value: str, field_name: str, *, required: bool = True) -> str:
    if not value:
        if required:
            raise InvalidArgument(field_name, "is required")
        return value
    if not _ID_PATTERN.fullmatch(value):
        raise InvalidArgument(
            field_name,
            f"{value[:40]!r} is not an id: use 1-{ID_MAX} "
            "characters without whitespace or control characters",
        )
    return value


def validate_request_type(value: str, field_name: str) -> str:
    if value not in REQUEST_TYPES:
        raise InvalidArgument(field_name, "is required: group or private")
    return value


def validate_entity_type(value: str, field_name: str) -> str:
    if value not in ENTITY_TYPES:
        raise InvalidArgument(field_name, "is required: user or group")
    return value


def validate_conversation(
    request_type: str, user_id: str, group_id: str, prefix: str = "", *, user_required: bool = False
) -> None:
    """A group conversation names its group, a private one its user and no group."""
    validate_request_type(request_type, f"{prefix}request_type")
    validate_id(user_id, f"{prefix}user_id", required=user_required or request_type == PRIVATE)
    if request_type == GROUP:
        validate_id(group_id, f"{prefix}group_id")
    elif group_id:
        raise InvalidArgument(f"{prefix}group_id", "must be empty for a private request")


def validate_remember(
    memo: str, observations: list[str], context: Context, now_seconds: float
) -> None:
    check.text(memo, "memo", MEMO_MAX)
    check.items(observations, "observations", OBSERVATIONS_MAX, unique=False)
    for index, observation in enumerate(observations):
        check.text(observation, f"observations[{index}]", OBSERVATION_MAX, required=True)
    validate_conversation(
        context.request_type, context.user_id, context.group_id, "context.", user_required=True
    )
    validate_id(context.sender_id, "context.sender_id", required=False)
    check.text(context.sender_name, "context.sender_name", DISPLAY_NAME_MAX)
    check.text(context.group_name, "context.group_name", DISPLAY_NAME_MAX)
    if context.timestamp is not None and context.timestamp > now_seconds + FUTURE_SKEW_SECONDS:
        raise InvalidArgument("context.timestamp", "is more than a day in the future")


def validate_request_id(value: str) -> str:
    check.text(value, "request_id", REQUEST_ID_MAX)
    if not value.isprintable():
        raise InvalidArgument("request_id", "must hold printable characters only")
    return value


def truncated_context(
    context: Context, *, source_max: int, recent_k: int, line_max: int
) -> tuple[Context, list[str]]:
    """The context cut to the historian's limits (source_max, recent_k, line_max), and
    one warning per cut."""
    warnings = []
    source = context.source_message
    if len(source) > source_max:
        source = source[:source_max]
        warnings.append(f"context.source_message: truncated to {source_max} characters")
    recent = context.recent_messages[-recent_k:] if recent_k else []
    if len(recent) < len(context.recent_messages):
        warnings.append(
            f"context.recent_messages: kept the last {len(recent)} of "
            f"{len(context.recent_messages)}"
        )
    if any(len(line) > line_max for line in recent):
        recent = [line[:line_max] for line in recent]
        warnings.append(f"context.recent_messages: lines truncated to {line_max} characters")
    return Context(
        request_type=context.request_type,
        user_id=context.user_id,
        group_id=context.group_id,
        sender_id=context.sender_id,
        source_message=source,
        recent_messages=recent,
        sender_name=context.sender_name,
        group_name=context.group_name,
        timestamp=context.timestamp,
    ), warnings


def validate_query(query: str, top_k: int) -> None:
    check.text(query, "query", QUERY_MAX, required=True)
    check.int_range(top_k, "top_k", 1, TOP_K_MAX)


def memory_scope(principal: Principal, scope: str, field_name: str = "scope") -> str:
    """The scope a call reads or writes, as the store keeps it: the one named (visible to
    the caller, or any for an admin), else the caller's org scope, else its user scope."""
    if not scope:
        return principal.default_scope
    validate_scope(scope, field_name)
    scope = principal.qualify_scope(scope)
    if scope not in principal.visible_scopes and not principal.is_admin:
        raise PermissionDenied(
            f"{field_name}: {principal.show_scope(scope)!r} is not a scope the caller can see"
        )
    return scope


def searched_scopes(principal: Principal, scope: str) -> tuple[str, ...]:
    """The scopes a search covers: the one named, else every scope the caller can see."""
    if scope:
        return (memory_scope(principal, scope),)
    return tuple(sorted(principal.visible_scopes))
