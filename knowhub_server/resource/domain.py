"""Resources, their versions, their rules, and validation."""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from knowhub_contracts.v1 import resource_pb2

from knowhub_server.common.base import validation as check
from knowhub_server.common.base.convert import ProtoEnum
from knowhub_server.common.base.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from knowhub_server.common.base.scopes import validate_owner, validate_scope
from knowhub_server.common.security.auth import Principal

# "text", "code", "credential", "cookie": the contract's ResourceContentType names.
CONTENT_TYPES = ProtoEnum(resource_pb2.ResourceContentType).names
SECURE_READER = "secure_reader"

# Size limits, documented in the docs (docs/concepts) and in resource.proto.
TITLE_MAX = 512
BODY_MAX = 262_144
SECURE_BODY_MAX = 65_536
METADATA_BYTES_MAX = 16_384
METADATA_DEPTH_MAX = 8
SCOPES_MAX = 16
QUERY_MAX = 2_000
TOP_K_MAX = 100
PAGE_SIZE_MAX = 100
BATCH_GET_MAX = 100
AUDIT_PAGE_MAX = 1_000

DEFAULT_TOP_K = 5
DEFAULT_PAGE_SIZE = 10
DEFAULT_AUDIT_PAGE = 100

# Times a caller may give (as knowhub_server.common.base.times): 1970 up to the end of 9999.
_LATEST_TIME = 253402300799.0


@dataclass
class Content:
    """What one version holds besides its secure_body."""

    title: str
    body: str
    content_type: str
    metadata: dict[str, Any]
    scopes: list[str]
    owner: str
    expires_at: float | None


@dataclass
class VersionInfo:
    """A kept version, as the resource's head lists it."""

    version: int
    key: str  # the key of its record in the versions collection
    created_at: float
    saved_by: str
    has_secure_body: bool
    deleted_at: float = 0.0


@dataclass
class Head:
    """A resource: the latest version's content, who created it, its kept versions."""

    id: str
    content: Content
    creator: str
    created_at: float
    versions: list[VersionInfo]  # newest first, never empty

    @property
    def latest(self) -> VersionInfo:
        return self.versions[0]

    @property
    def version(self) -> int:
        return self.latest.version

    def info(self, version: int) -> VersionInfo | None:
        return next((v for v in self.versions if v.version == version), None)


@dataclass
class Resource:
    """One version as a caller reads it."""

    id: str
    version: int
    content: Content
    created_at: float
    updated_at: float
    has_secure_body: bool
    deleted_at: float
    expired: bool
    secure_body: str | None = field(default=None, repr=False)


def resource_view(head: Head, info: VersionInfo, content: Content, at: float) -> Resource:
    expired = content.expires_at is not None and content.expires_at <= at
    return Resource(
        id=head.id,
        version=info.version,
        content=content,
        created_at=head.created_at,
        updated_at=info.created_at,
        has_secure_body=info.has_secure_body,
        deleted_at=info.deleted_at,
        expired=expired,
    )


def version_key(resource_id: str, version: int) -> str:
    """A version record's key: unique per write, so a save that loses a race, or dies
    before its head is written, leaves an unreferenced record, never a clobbered one."""
    return f"{resource_id}@{version}.{secrets.token_hex(4)}"


def path_prefixes(resource_id: str) -> list[str]:
    """`a/b/c` -> [`a`, `a/b`, `a/b/c`]: what ListResources' prefix matches."""
    parts = resource_id.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def may_change(principal: Principal, head: Head) -> bool:
    return principal.may_modify(head.content.owner, head.creator)


def may_read_secure(principal: Principal, head: Head) -> bool:
    """The owner, the user who created the resource, a secure_reader, or an admin."""
    return may_change(principal, head) or principal.has_role(SECURE_READER)


def visible(principal: Principal, head: Head) -> bool:
    return not principal.visible_scopes.isdisjoint(head.content.scopes)


# ---- Saving ------------------------------------------------------------------------------


@dataclass
class Draft:
    """What a caller asks to save (SaveResourceRequest)."""

    id: str
    title: str
    body: str = ""
    secure_body: str = field(default="", repr=False)
    content_type: str = "text"
    metadata: dict[str, Any] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    owner: str = ""
    expires_at: float | None = None
    expected_version: int | None = None


def validate_draft(draft: Draft) -> float | None:
    """Checks every field; returns the effective expiry (expires_at or
    metadata.expires_at)."""
    check.resource_id(draft.id, "id")
    check.text(draft.title, "title", TITLE_MAX, required=True)
    check.text(draft.body, "body", BODY_MAX)
    check.text(draft.secure_body, "secure_body", SECURE_BODY_MAX)
    validate_content_type(draft.content_type, "content_type")
    validate_metadata(draft.metadata)
    check.items(draft.scopes, "scopes", SCOPES_MAX)
    for index, value in enumerate(draft.scopes):
        validate_scope(value, f"scopes[{index}]")
    if draft.owner:
        validate_owner(draft.owner, "owner")
    if draft.expected_version is not None and draft.expected_version < 0:
        raise InvalidArgument("expected_version", "must not be negative")
    return effective_expiry(draft)


def validate_content_type(value: str, field_name: str) -> str:
    if value not in CONTENT_TYPES:
        raise InvalidArgument(field_name, f"{value!r} is not one of {', '.join(CONTENT_TYPES)}")
    return value


def validate_metadata(metadata: dict[str, Any]) -> None:
    try:
        size = len(json.dumps(metadata, allow_nan=False, separators=(",", ":")).encode())
    except ValueError:
        raise InvalidArgument("metadata", "numbers must be finite") from None
    if size > METADATA_BYTES_MAX:
        raise InvalidArgument(
            "metadata", f"is {size} bytes as JSON; the limit is {METADATA_BYTES_MAX}"
        )
    if _depth(metadata) > METADATA_DEPTH_MAX:
        raise InvalidArgument("metadata", f"nests deeper than {METADATA_DEPTH_MAX} levels")


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def effective_expiry(draft: Draft) -> float | None:
    """expires_at, else metadata.expires_at (a credential's own expiry); both must agree."""
    from_metadata = None
    if "expires_at" in draft.metadata:
        from_metadata = parse_time(draft.metadata["expires_at"], "metadata.expires_at")
    if draft.expires_at is None:
        return from_metadata
    if from_metadata is not None and round(from_metadata, 6) != round(draft.expires_at, 6):
        raise InvalidArgument(
            "expires_at", "differs from metadata.expires_at; give one, or the same time in both"
        )
    return draft.expires_at


def parse_time(value: Any, field_name: str) -> float:
    """An ISO 8601 time (UTC when it names no zone) or epoch seconds."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, (int, float)) and math.isfinite(value):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidArgument(
                field_name, f"{value[:64]!r} is not an ISO 8601 time, e.g. 2026-03-07T10:00:00Z"
            ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        seconds = parsed.timestamp()
    else:
        raise InvalidArgument(field_name, "must be an ISO 8601 time or epoch seconds")
    if not 0 <= seconds <= _LATEST_TIME:
        raise InvalidArgument(field_name, "is not a valid time (1970-01-01 to 9999-12-31)")
    return round(seconds, 6)


def qualified_draft(principal: Principal, draft: Draft) -> Draft:
    """A validated draft with its id, scopes and owner as the store keeps them: names of
    the caller's organisation qualified by it (ids are per organisation)."""
    return replace(
        draft,
        id=principal.qualify(draft.id),
        scopes=[principal.qualify_scope(s) for s in draft.scopes],
        owner=principal.qualify_scope(draft.owner) if draft.owner else "",
    )


def check_may_save(principal: Principal, draft: Draft, current: Head | None) -> None:
    """Who may save this version: anyone for a new id; for an existing one a caller who
    sees it and owns it (or created it, or is admin). Also the check-and-set. Ids are per
    organisation, so `current` is one of the caller's organisation (or of one an admin
    named)."""
    shown_id = principal.show(draft.id)
    unseen = current is None or not visible(principal, current)
    if unseen and not principal.names_own(draft.id) and not principal.is_admin:
        # The same answer whether the other organisation has the id or not.
        raise PermissionDenied(
            f"id: {shown_id!r} names a resource of another "
            "organisation; save under an id of your own organisation"
        )
    if current is not None and not visible(principal, current) and not principal.is_admin:
        raise AlreadyExists(
            f"the resource id {shown_id!r} is taken by a resource of your "
            "organisation that you cannot see; choose another id"
        )
    if current is not None and not may_change(principal, current):
        raise PermissionDenied(
            f"only the owner ({principal.show_scope(current.content.owner)}), the user who "
            f"created {shown_id!r} or an admin may save a new version"
        )
    found = current.version if current is not None else 0
    if draft.expected_version is not None and draft.expected_version != found:
        state = f"is at version {found}" if found else "does not exist"
        raise FailedPrecondition(
            f"expected_version is {draft.expected_version} but "
            f"{shown_id!r} {state}; nothing was saved"
        )


def new_content(
    principal: Principal, draft: Draft, expiry: float | None, current: Head | None
) -> Content:
    """The version's content; scopes and owner default to the current version's (for a
    new resource: the caller's default scope and identity), and what the caller names
    must be its own to give."""
    for index, value in enumerate(draft.scopes):
        if value not in principal.visible_scopes and not principal.is_admin:
            raise PermissionDenied(
                f"scopes[{index}]: cannot write into "
                f"{principal.show_scope(value)!r}, a scope the caller "
                "cannot see"
            )
    if draft.owner and draft.owner not in principal.identities() and not principal.is_admin:
        raise PermissionDenied(
            f"owner: {principal.show_scope(draft.owner)!r} is not the "
            "caller; only an admin may save on behalf of another owner"
        )
    scopes = draft.scopes or (
        list(current.content.scopes) if current else [principal.default_scope]
    )
    owner = draft.owner or (
        current.content.owner if current else principal.default_owner(principal.acting_agent(""))
    )
    return Content(
        title=draft.title,
        body=draft.body,
        content_type=draft.content_type,
        metadata=dict(draft.metadata),
        scopes=list(scopes),
        owner=owner,
        expires_at=expiry,
    )


# ---- Reading -----------------------------------------------------------------------------


def validate_id(value: str, field_name: str = "id") -> str:
    return check.resource_id(value, field_name)


def validate_prefix(value: str) -> str:
    """A path to list under; a trailing slash is ignored. "" lists everything."""
    path = value[:-1] if value.endswith("/") else value
    return check.resource_id(path, "prefix") if path else ""
