"""Bearer tokens to principals, and what a principal may see and own (seed 003)."""

from __future__ import annotations

import hashlib
import json
import logging
import string
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from knowhub_server.common.delegation import HEADER as DELEGATION_HEADER
from knowhub_server.common.delegation import Delegation, DelegationKeys
from knowhub_server.common.errors import Unauthenticated
from knowhub_server.common.redaction import keep_out_of_logs
from knowhub_server.common.scopes import PUBLIC, is_valid_entity_id, scope

log = logging.getLogger(__name__)

ADMIN = "admin"
# Reads every trace's log and submits evaluations for it (the server-side evaluator).
EVALUATOR_ROLE = "evaluator"
# The dream service's role: reads every trace's log and adds reflections to it.
DREAMER_ROLE = "dreamer"
_TOKEN_CHARACTERS = frozenset(string.ascii_letters + string.digits + string.punctuation)
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True)
class Principal:
    """Who is calling. Visibility is computed here, never taken from a request."""

    user_id: str
    agent_id: str = ""
    org_id: str = ""
    project_ids: tuple[str, ...] = ()
    team_ids: tuple[str, ...] = ()
    roles: frozenset[str] = frozenset()
    # The bearer token the caller presented, passed on when a service calls another.
    token: str = field(default="", repr=False, compare=False)
    # Set when a service acts for this user under a grant (common/delegation.py).
    delegation: Delegation | None = field(default=None, compare=False)
    visible_scopes: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        visible = {scope("user", self.user_id), PUBLIC}
        if self.agent_id:
            visible.add(scope("agent", self.agent_id))
        if self.org_id:
            visible.add(scope("org", self.org_id))
        visible.update(scope("project", p) for p in self.project_ids)
        visible.update(scope("team", t) for t in self.team_ids)
        object.__setattr__(self, "visible_scopes", frozenset(visible))

    @property
    def is_admin(self) -> bool:
        return ADMIN in self.roles

    def has_role(self, role: str) -> bool:
        return role in self.roles or self.is_admin

    @property
    def user_scope(self) -> str:
        return scope("user", self.user_id)

    @property
    def default_scope(self) -> str:
        """The org scope when the caller has one, else its user scope."""
        return scope("org", self.org_id) if self.org_id else self.user_scope

    def acting_agent(self, named_agent: str) -> str:
        """The agent a call acts for: the token's own agent, else the one the call names."""
        return self.agent_id or named_agent

    def identities(self, named_agent: str = "") -> frozenset[str]:
        """The owners this caller may act as."""
        ids = {self.user_scope}
        agent = self.acting_agent(named_agent)
        if agent:
            ids.add(scope("agent", agent))
        return frozenset(ids)

    def default_owner(self, named_agent: str) -> str:
        agent = self.acting_agent(named_agent)
        return scope("agent", agent) if agent else self.user_scope

    def may_modify(self, owner: str, creator: str) -> bool:
        """Owner rights: the owner itself, the user who created the record, or an admin."""
        return self.is_admin or creator == self.user_scope or owner in self.identities()


LOCAL_PRINCIPAL = Principal(user_id="local", org_id="local", roles=frozenset({ADMIN}))


class TokenRegistry:
    """Tokens from a JSON file: {"tokens": [{"token" | "token_sha256", "user_id", ...}]}."""

    def __init__(self, principals_by_digest: dict[str, Principal]) -> None:
        self._by_digest = principals_by_digest

    @classmethod
    def from_file(cls, path: Path) -> TokenRegistry:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read tokens file {path}: {exc}") from exc
        entries = document.get("tokens") if isinstance(document, dict) else None
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"tokens file {path} must hold a non-empty list under 'tokens'")
        by_digest = {}
        for index, entry in enumerate(entries):
            digest, principal = _parse_token_entry(entry, f"{path}: tokens[{index}]")
            by_digest[digest] = principal
        return cls(by_digest)

    def __len__(self) -> int:
        return len(self._by_digest)

    def principal_of_user(self, user_id: str) -> Principal | None:
        """The user's principal as the file says now: its entry without an agent, else
        its first one; None when no token names the user."""
        entries = [p for p in self._by_digest.values() if p.user_id == user_id]
        return next((p for p in entries if not p.agent_id), entries[0] if entries else None)

    def principal_for(self, token: str) -> Principal | None:
        digest = hashlib.sha256(token.encode()).hexdigest()
        principal = self._by_digest.get(digest)
        if principal is not None and not principal.token:  # a token_sha256 entry
            principal = self._by_digest[digest] = replace(principal, token=token)
        return principal


def _parse_token_entry(entry: object, where: str) -> tuple[str, Principal]:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    token = str(entry.get("token") or "")
    if token:
        digest = hashlib.sha256(token.encode()).hexdigest()
    elif entry.get("token_sha256"):
        digest = str(entry["token_sha256"]).lower()
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"{where}.token_sha256 must be 64 hex digits")
    else:
        raise ValueError(f"{where} needs 'token' or 'token_sha256'")
    if not entry.get("user_id"):
        raise ValueError(f"{where}.user_id is required")
    ids = {name: str(entry.get(name) or "") for name in ("user_id", "agent_id", "org_id")}
    lists = {name: _string_list(entry.get(name, []), f"{where}.{name}")
             for name in ("project_ids", "team_ids", "roles")}
    for name, value in [*ids.items(), *[(n, v) for n in ("project_ids", "team_ids")
                                        for v in lists[n]]]:
        if value and not is_valid_entity_id(value):
            raise ValueError(f"{where}.{name}: {value!r} is not a valid id")
    keep_out_of_logs(token)
    principal = Principal(**ids, project_ids=tuple(lists["project_ids"]),
                          team_ids=tuple(lists["team_ids"]), roles=frozenset(lists["roles"]),
                          token=token)
    return digest, principal


def _string_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return value


class Authenticator:
    """Resolves the caller of each RPC from its `authorization: Bearer <token>` metadata."""

    def __init__(self, registry: TokenRegistry | None,
                 delegations: DelegationKeys | None = None) -> None:
        self._registry = registry
        self.delegations = delegations

    @property
    def open_access(self) -> bool:
        """True when no tokens are configured and every caller is the local principal."""
        return self._registry is None

    def authenticate(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> Principal:
        """The caller; with a delegation grant, the user it acts for, narrowed to it."""
        principal = self._caller(metadata or ())
        grant = _metadata_value(metadata or (), DELEGATION_HEADER)
        if not grant:
            return principal
        if self.delegations is None:
            raise Unauthenticated(f"{DELEGATION_HEADER}: this server accepts no grants")
        return self.delegations.principal(principal, grant, EVALUATOR_ROLE,
                                          self.principal_of_user)

    def _caller(self, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        if self._registry is None:
            return LOCAL_PRINCIPAL
        token = _bearer_token(metadata)
        if not token:
            raise Unauthenticated("missing bearer token: send 'authorization: Bearer <token>'")
        principal = self._registry.principal_for(token)
        if principal is None:
            raise Unauthenticated("unknown bearer token")
        return principal

    def principal_of_user(self, user_id: str) -> Principal | None:
        if self._registry is None:
            return LOCAL_PRINCIPAL if user_id == LOCAL_PRINCIPAL.user_id else None
        return self._registry.principal_of_user(user_id)


def _bearer_token(metadata: Sequence[tuple[str, str | bytes]]) -> str:
    value = _metadata_value(metadata, "authorization")
    return bearer_token(value) or "" if value else ""


def _metadata_value(metadata: Sequence[tuple[str, str | bytes]], name: str) -> str:
    for key, value in metadata:
        if key.lower() == name and isinstance(value, str):
            return value
    return ""


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` value (gRPC metadata or an HTTP
    header); None without one. Anything else is refused, never passed on."""
    if authorization is None:
        return None
    kind, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if kind.lower() != "bearer" or not token:
        raise Unauthenticated("Authorization: expected 'Bearer <token>'")
    if not set(token) <= _TOKEN_CHARACTERS:
        raise Unauthenticated("Authorization: malformed token")
    return token


def load_authenticator(tokens_file: Path | None, host: str,
                       delegations: DelegationKeys | None = None) -> Authenticator:
    """Refuses to serve a non-loopback address without tokens; logs the local mode."""
    if tokens_file is None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(
                f"refusing to bind {host} without tokens: set KNOWHUB_TOKENS_FILE, "
                "or bind 127.0.0.1"
            )
        log.warning("no KNOWHUB_TOKENS_FILE: every caller acts as the local principal "
                    "user:local (org:local, admin); bound to loopback only")
        return Authenticator(None, delegations)
    registry = TokenRegistry.from_file(tokens_file)
    log.info("loaded %d tokens from %s", len(registry), tokens_file)
    return Authenticator(registry, delegations)
