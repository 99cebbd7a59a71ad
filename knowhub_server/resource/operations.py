"""The resource use cases: save, read, list, search, delete, destroy, audit, key rotation.

Every change is audited twice: an `attempt` record before anything is written (if it
cannot be written the change is refused with UNAVAILABLE, so no change goes unaudited)
and its outcome after. A secure_body read is audited before the answer; without the
record, no secret.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace

from knowhub_server.common.base import paging
from knowhub_server.common.base import validation as check
from knowhub_server.common.base.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
)
from knowhub_server.common.base.times import now
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.security.forget import forget_subject
from knowhub_server.resource.audit import AuditEvent, AuditLog
from knowhub_server.resource.config import ResourceSettings
from knowhub_server.resource.crypto import Keyring
from knowhub_server.resource.domain import (
    AUDIT_PAGE_MAX,
    BATCH_GET_MAX,
    PAGE_SIZE_MAX,
    QUERY_MAX,
    TOP_K_MAX,
    Content,
    Draft,
    Head,
    Resource,
    VersionInfo,
    check_may_save,
    may_change,
    may_read_secure,
    new_content,
    qualified_draft,
    resource_view,
    validate_content_type,
    validate_draft,
    validate_id,
    validate_prefix,
    version_key,
    visible,
)
from knowhub_server.resource.store import ResourceStore, VersionRecord, heads_where

log = logging.getLogger(__name__)

SAVE_ATTEMPTS = 32  # each lost race means another save won: N racers need < N tries


@dataclass
class Rotation:
    active_key_id: str
    created: bool
    rewrapped: int
    remaining: int


class _Moved(Exception):
    """The head changed version since the save read it."""


class _AlreadyActive(Exception):
    """A version record already uses the active key."""


class ResourceOperations:
    def __init__(
        self, store: ResourceStore, keyring: Keyring, audit: AuditLog, settings: ResourceSettings
    ) -> None:
        self._store = store
        self._keyring = keyring
        self._audit = audit
        self._keep = settings.resource_versions_keep

    # -- save --

    def save(self, principal: Principal, draft: Draft) -> Resource:
        expiry = validate_draft(draft)
        draft = qualified_draft(principal, draft)
        current = self._store.head(draft.id)
        next_version = current.version + 1 if current else 1
        with self._denials_noted(principal, "save", draft.id, next_version):
            check_may_save(principal, draft, current)
            new_content(principal, draft, expiry, current)  # may it give these scopes, owner
        self._audit.record(
            principal,
            AuditEvent("save", draft.id, next_version, "attempt"),
            unless="nothing was saved",
        )
        try:
            saved = self._write_version(principal, draft, expiry, current)
        except ServiceError as error:
            self._audit.note(
                principal, AuditEvent("save", draft.id, next_version, f"failed: {error.code.name}")
            )
            raise
        self._audit.note(principal, AuditEvent("save", draft.id, saved.version, "ok"))
        return saved

    def _write_version(
        self, principal: Principal, draft: Draft, expiry: float | None, current: Head | None
    ) -> Resource:
        """Writes the version record, then commits it with one write of the head; on a
        lost race the record is removed and the save starts over from the new head."""
        for _ in range(SAVE_ATTEMPTS):
            content = new_content(principal, draft, expiry, current)
            version = current.version + 1 if current else 1
            at = now()
            info = VersionInfo(
                version=version,
                key=version_key(draft.id, version),
                created_at=at,
                saved_by=principal.user_scope,
                has_secure_body=bool(draft.secure_body),
            )
            envelope = (
                self._keyring.seal(draft.secure_body, draft.id, version)
                if draft.secure_body
                else None
            )
            self._store.add_version(VersionRecord(info.key, draft.id, version, content, envelope))
            committed = self._commit(principal, draft.id, content, info, current)
            if committed is not None:
                head, dropped = committed
                self._store.delete_versions([v.key for v in dropped])
                return resource_view(head, info, content, at)
            self._store.delete_versions([info.key])
            current = self._store.head(draft.id)
            check_may_save(principal, draft, current)
        raise Aborted(
            f"resource {principal.show(draft.id)!r} kept changing while saving; try again"
        )

    def _commit(
        self,
        principal: Principal,
        resource_id: str,
        content: Content,
        info: VersionInfo,
        current: Head | None,
    ) -> tuple[Head, list[VersionInfo]] | None:
        """Makes `info` the latest version: the new head and the versions it no longer
        keeps, or None when another save got there first."""
        if current is None:
            head = Head(
                id=resource_id,
                content=content,
                creator=principal.user_scope,
                created_at=info.created_at,
                versions=[info],
            )
            return (head, []) if self._store.create_head(head) else None
        dropped: list[VersionInfo] = []

        def change(head: Head) -> Head:
            if head.version != info.version - 1:
                raise _Moved
            versions = [info, *head.versions]
            dropped[:] = versions[self._keep :]
            return replace(head, content=content, versions=versions[: self._keep])

        try:
            return self._store.update_head(resource_id, change), dropped
        except (_Moved, NotFound):
            return None

    # -- read --

    def get(
        self, principal: Principal, resource_id: str, *, include_secure: bool, version: int
    ) -> Resource:
        resource_id = principal.qualify(validate_id(resource_id))
        if version < 0:
            raise InvalidArgument("version", "must not be negative (0 reads the latest)")
        head = self._visible(principal, resource_id)
        info = head.latest if version == 0 else head.info(version)
        if info is None:
            raise NotFound(
                f"version {version} of {principal.show(resource_id)!r} is not "
                f"kept (the latest is "
                f"{head.version}; the last {self._keep} are kept)"
            )
        if include_secure:
            return self._read_secure(principal, head, info)
        if info.version == head.version:
            return resource_view(head, info, head.content, now())
        return resource_view(head, info, self._version(head, info).content, now())

    def _read_secure(self, principal: Principal, head: Head, info: VersionInfo) -> Resource:
        event = AuditEvent("read_secure", head.id, info.version, "ok")
        with self._denials_noted(principal, "read_secure", head.id, info.version):
            if not may_read_secure(principal, head):
                raise PermissionDenied(
                    f"reading the secure_body of {principal.show(head.id)!r} needs its owner "
                    f"({principal.show_scope(head.content.owner)}), the user who created it, "
                    "the secure_reader role or admin; read it without include_secure"
                )
        if info.deleted_at:
            raise FailedPrecondition(
                f"version {info.version} of {principal.show(head.id)!r} "
                "is deleted; UndeleteResource restores it"
            )
        stored = self._version(head, info)
        try:
            secret = (
                self._keyring.open(stored.envelope, head.id, info.version)
                if stored.envelope
                else ""
            )
        except ServiceError as error:
            self._audit.note(principal, replace(event, outcome=f"failed: {error.code.name}"))
            raise
        self._audit.record(principal, event, unless="the secure_body is not returned")
        resource = resource_view(head, info, stored.content, now())
        resource.secure_body = secret
        return resource

    def _version(self, head: Head, info: VersionInfo) -> VersionRecord:
        stored = self._store.version(info.key)
        if stored is None:  # erased by a concurrent save's retention or a destroy
            raise NotFound(f"version {info.version} is no longer kept")
        return stored

    def batch_get(
        self, principal: Principal, resource_ids: list[str], *, with_body: bool
    ) -> list[Resource | ServiceError]:
        check.items(resource_ids, "ids", BATCH_GET_MAX, required=True)
        for index, value in enumerate(resource_ids):
            validate_id(value, f"ids[{index}]")
        keys = [principal.qualify(i) for i in resource_ids]
        heads = self._store.heads(keys, with_body=with_body)
        at = now()
        results: list[Resource | ServiceError] = []
        for resource_id, key in zip(resource_ids, keys, strict=True):
            head = heads.get(key)
            if head is None or not visible(principal, head):
                results.append(NotFound(f"resource {resource_id!r} not found"))
            else:
                results.append(resource_view(head, head.latest, head.content, at))
        return results

    def versions(self, principal: Principal, resource_id: str) -> list[VersionInfo]:
        return self._visible(principal, principal.qualify(validate_id(resource_id))).versions

    def list_page(
        self,
        principal: Principal,
        *,
        prefix: str,
        content_type: str,
        include_expired: bool,
        show_deleted: bool,
        page_size: int,
        page_token: str,
    ) -> tuple[list[Resource], str]:
        path = principal.qualify(validate_prefix(prefix))
        if content_type:
            validate_content_type(content_type, "content_type")
        check.int_range(page_size, "page_size", 1, PAGE_SIZE_MAX)
        filters = (
            sorted(principal.visible_scopes),
            path,
            content_type,
            include_expired,
            show_deleted,
        )
        cursor = _point_cursor(paging.read_token(page_token, filters)) if page_token else None
        at = now()
        where = heads_where(
            principal.visible_scopes,
            now=at,
            prefix=path,
            content_type=content_type,
            include_expired=include_expired,
            show_deleted=show_deleted,
        )
        heads, next_cursor = self._store.page(where, page_size, cursor)
        resources = [resource_view(h, h.latest, h.content, at) for h in heads]
        return resources, paging.write_token(next_cursor, filters) if next_cursor else ""

    def search(
        self,
        principal: Principal,
        query: str,
        *,
        top_k: int,
        content_type: str,
        include_expired: bool,
    ) -> list[tuple[Resource, float]]:
        check.text(query, "query", QUERY_MAX, required=True)
        check.int_range(top_k, "top_k", 1, TOP_K_MAX)
        if content_type:
            validate_content_type(content_type, "content_type")
        at = now()
        where = heads_where(
            principal.visible_scopes,
            now=at,
            content_type=content_type,
            include_expired=include_expired,
        )
        return [
            (resource_view(h, h.latest, h.content, at), score)
            for h, score in self._store.search(query, where, top_k)
        ]

    # -- delete, undelete, destroy --

    def delete(self, principal: Principal, resource_id: str) -> Resource:
        return self._mark_deleted(principal, resource_id, deleted=True)

    def undelete(self, principal: Principal, resource_id: str) -> Resource:
        return self._mark_deleted(principal, resource_id, deleted=False)

    def _mark_deleted(self, principal: Principal, resource_id: str, *, deleted: bool) -> Resource:
        action = "delete" if deleted else "undelete"
        head = self._changeable(principal, resource_id, action)
        resource_id = head.id
        self._audit.record(
            principal,
            AuditEvent(action, resource_id, head.version, "attempt"),
            unless=f"nothing was {action}d",
        )

        def change(current: Head) -> Head:
            latest = replace(current.latest, deleted_at=now() if deleted else 0.0)
            if bool(current.latest.deleted_at) == deleted:
                return current
            return replace(current, versions=[latest, *current.versions[1:]])

        try:
            head = self._store.update_head(resource_id, change)
        except ServiceError as error:
            self._audit.note(
                principal,
                AuditEvent(action, resource_id, head.version, f"failed: {error.code.name}"),
            )
            raise
        self._audit.note(principal, AuditEvent(action, resource_id, head.version, "ok"))
        return resource_view(head, head.latest, head.content, now())

    def destroy(self, principal: Principal, resource_id: str) -> int:
        """Erases every version record of the resource, then its head; returns how many
        versions were erased."""
        head = self._changeable(principal, resource_id, "destroy")
        resource_id = head.id
        self._audit.record(
            principal,
            AuditEvent("destroy", resource_id, head.version, "attempt"),
            unless="nothing was destroyed",
        )
        keys = self._store.version_keys(resource_id)
        self._store.delete_versions(keys)
        self._store.delete_head(resource_id)
        self._audit.note(
            principal,
            AuditEvent("destroy", resource_id, head.version, "ok", detail=f"records={len(keys)}"),
        )
        return len(head.versions)

    def forget(self, principal: Principal, subject: str) -> dict[str, int]:
        """Erases every resource `subject` owns, as destroy does; each leaves a forget
        record in the audit trail (which names ids, never content)."""
        owner = forget_subject(principal, subject)
        heads = self._store.owned_by(owner)
        versions = 0
        for head in heads:
            self._audit.record(
                principal,
                AuditEvent("forget", head.id, head.version, "attempt"),
                unless="the subject's remaining resources were not erased",
            )
            keys = self._store.version_keys(head.id)
            self._store.delete_versions(keys)
            self._store.delete_head(head.id)
            self._audit.note(
                principal,
                AuditEvent("forget", head.id, head.version, "ok", detail=f"records={len(keys)}"),
            )
            versions += len(keys)
        return {"resources": len(heads), "versions": versions, "audit_tombstones": len(heads)}

    # -- audit and keys (admin) --

    def audit_events(
        self, principal: Principal, *, page_size: int, page_token: str, resource_id: str
    ) -> tuple[list[AuditEvent], str]:
        self._admin_only(principal, "ListAuditEvents")
        check.int_range(page_size, "page_size", 1, AUDIT_PAGE_MAX)
        if resource_id:
            resource_id = principal.qualify(validate_id(resource_id, "resource_id"))
        return self._audit.page(page_size, page_token, resource_id)

    def rotate_master_key(self, principal: Principal) -> Rotation:
        """Makes a fresh master key active (the key file gets a new one; from the
        environment, the key in KNOWHUB_MASTER_KEY) and re-wraps every data key that
        another key wraps. Reads go on throughout: each envelope names its key."""
        self._admin_only(principal, "RotateMasterKey")
        previous = self._keyring.active_id
        self._audit.record(
            principal,
            AuditEvent("rotate_key", "", 0, "attempt", detail=f"active={previous}"),
            unless="the key was not rotated",
        )
        created = self._keyring.rotate()
        active = self._keyring.active_id
        rewrapped = 0
        for stored in self._store.versions_under_keys(self._keyring.key_ids - {active}):
            rewrapped += self._rewrap(stored)
        remaining = self._store.count_encrypted(except_key=active)
        log.info(
            "master key rotation: %s active, %d data keys re-wrapped, %d remaining",
            active,
            rewrapped,
            remaining,
        )
        self._audit.note(
            principal,
            AuditEvent(
                "rotate_key",
                "",
                0,
                "ok",
                detail=f"active={active} created={created} rewrapped={rewrapped} "
                f"remaining={remaining}",
            ),
        )
        return Rotation(active, created, rewrapped, remaining)

    def _rewrap(self, stored: VersionRecord) -> int:
        """1 if this call re-wrapped the record's data key, else 0."""

        def change(record: VersionRecord) -> VersionRecord:
            envelope = record.envelope
            if envelope is None or envelope.key_id == self._keyring.active_id:
                raise _AlreadyActive
            return replace(
                record, envelope=self._keyring.rewrap(envelope, record.resource_id, record.version)
            )

        try:
            self._store.update_version(stored.key, change)
        except (_AlreadyActive, NotFound):  # re-wrapped or erased meanwhile
            return 0
        except ServiceError as error:
            log.warning(
                "could not re-wrap %s version %d: %s",
                stored.resource_id,
                stored.version,
                error.message,
            )
            return 0
        return 1

    # -- helpers --

    def _visible(self, principal: Principal, key: str) -> Head:
        """The head of the resource stored under `key` if the caller can see it; NOT_FOUND
        either way otherwise."""
        head = self._store.head(key)
        if head is None or not visible(principal, head):
            raise NotFound(f"resource {principal.show(key)!r} not found")
        return head

    def _changeable(self, principal: Principal, resource_id: str, action: str) -> Head:
        """The head of the resource the caller names, if it may `action` it."""
        head = self._visible(principal, principal.qualify(validate_id(resource_id)))
        with self._denials_noted(principal, action, head.id, head.version):
            if not may_change(principal, head):
                raise PermissionDenied(
                    f"only the owner ({principal.show_scope(head.content.owner)}), the user "
                    f"who created {resource_id!r} or an admin may {action} it"
                )
        return head

    @contextlib.contextmanager
    def _denials_noted(
        self, principal: Principal, action: str, resource_id: str, version: int
    ) -> Iterator[None]:
        """Notes a PERMISSION_DENIED raised inside it in the audit trail."""
        try:
            yield
        except PermissionDenied:
            self._audit.note(principal, AuditEvent(action, resource_id, version, "denied"))
            raise

    @staticmethod
    def _admin_only(principal: Principal, rpc: str) -> None:
        if not principal.is_admin:
            raise PermissionDenied(f"{rpc} needs the admin role")


def _point_cursor(cursor: object) -> str:
    """A listing's cursor: the point id (a UUID) the engine resumes at."""
    with contextlib.suppress(ValueError):
        if isinstance(cursor, str):
            return str(uuid.UUID(cursor))
    raise InvalidArgument("page_token", "is not a token this service issued")
