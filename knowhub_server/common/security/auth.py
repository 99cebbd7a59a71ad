"""Bearer tokens to principals, and what a principal may see and own."""

from __future__ import annotations

import hashlib
import json
import logging
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from knowhub.local import local_token_file

from knowhub_server.common.base.errors import PermissionDenied, Unauthenticated
from knowhub_server.common.base.scopes import (
    ORG_SEPARATOR,
    PUBLIC,
    is_valid_entity_id,
    qualified,
    qualified_scope,
    scope,
    shown,
    shown_scope,
)
from knowhub_server.common.security.delegation import HEADER as DELEGATION_HEADER
from knowhub_server.common.security.delegation import Delegation, DelegationKeys
from knowhub_server.common.security.local_token import ensure_local_token
from knowhub_server.common.security.redaction import keep_out_of_logs

log = logging.getLogger(__name__)

ADMIN = "admin"
# Reads every trace's log and submits evaluations for it (the server-side evaluator).
EVALUATOR_ROLE = "evaluator"
# The dream service's role: reads every trace's log and adds reflections to it.
DREAMER_ROLE = "dreamer"
# Writes knowledge into the `public` scope, which every organisation reads.
PUBLISHER_ROLE = "publisher"
_TOKEN_CHARACTERS = frozenset(string.ascii_letters + string.digits + string.punctuation)
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
AGENT_SHOWN = 128  # characters of a refused agent id an error repeats


@dataclass(frozen=True)
class Principal:
    """Who is calling. Visibility is computed here, never taken from a request.

    Agent ids and resource ids are names within the caller's organisation (its
    `namespace`, see common/base/scopes.py): `qualify` turns a name the caller sends into the
    one the store keeps, `show` a stored name into the one the caller reads. Everything
    below that speaks of agents (`agents`, `acting_agent`, the agent scopes) speaks of
    qualified names."""

    user_id: str
    # The agent a call acts for when it names none ("" for none), as the token names it.
    agent_id: str = ""
    # Further agents the caller may act as by naming them (agent_id is always one).
    agent_ids: tuple[str, ...] = ()
    org_id: str = ""
    project_ids: tuple[str, ...] = ()
    team_ids: tuple[str, ...] = ()
    roles: frozenset[str] = frozenset()
    # The bearer token the caller presented, passed on when a service calls another.
    token: str = field(default="", repr=False, compare=False)
    # Set when a service acts for this user under a grant (common/security/delegation.py).
    delegation: Delegation | None = field(default=None, compare=False)
    # The organisation whose agent and resource names the caller's are: its org_id, or
    # "" (the shared namespace) for the local mode's one principal (None: the org_id).
    namespace: str | None = None
    visible_scopes: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        if self.namespace is None:
            object.__setattr__(self, "namespace", self.org_id)
        visible = {scope("user", self.user_id), PUBLIC}
        visible.update(scope("agent", a) for a in self.agents)
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
    def voters(self) -> str:
        """Whose feedback counts with this caller's: its organisation's (a caller without
        one is a community of its own). Search ranks by these voters' counters."""
        return scope("org", self.org_id) if self.org_id else self.user_scope

    @property
    def user_scope(self) -> str:
        return scope("user", self.user_id)

    @property
    def default_scope(self) -> str:
        """The org scope when the caller has one, else its user scope."""
        return scope("org", self.org_id) if self.org_id else self.user_scope

    def qualify(self, name: str) -> str:
        """An agent or resource name the caller sent, as the store keeps it."""
        return qualified(self.namespace or "", name)

    def show(self, name: str) -> str:
        """A stored agent or resource name, as the caller reads it."""
        return shown(self.namespace or "", name)

    def names_own(self, name: str) -> bool:
        """Whether a stored name is of the caller's own organisation (or, for a caller
        without one, of the shared namespace)."""
        return ORG_SEPARATOR not in self.show(name)

    def qualify_scope(self, value: str) -> str:
        """A scope or owner the caller sent, as the store keeps it."""
        return qualified_scope(self.namespace or "", value)

    def show_scope(self, value: str) -> str:
        return shown_scope(self.namespace or "", value)

    @property
    def agents(self) -> frozenset[str]:
        """The agents this caller may act as, qualified (admins: any agent they name)."""
        return frozenset(self.qualify(a) for a in (self.agent_id, *self.agent_ids) if a)

    def acting_agent(self, named_agent: str, field: str = "agent_id") -> str:
        """The agent a call acts for, qualified: the one it names, else the token's own
        ("" for none). Naming an agent the token does not list is PERMISSION_DENIED
        (`field`)."""
        if not named_agent:
            return self.qualify(self.agent_id)
        agent = self.qualify(named_agent)
        if agent not in self.agents and not self.is_admin:
            allowed = ", ".join(sorted(self.show(a) for a in self.agents)) or "none"
            raise PermissionDenied(
                f"{field}: this token may not act as agent "
                f"{named_agent[:AGENT_SHOWN]!r} (its agents: {allowed})"
            )
        return agent

    def identities(self, named_agent: str = "") -> frozenset[str]:
        """The owners this caller may act as: itself and its agents (and the one a call
        names, once acting_agent allowed it)."""
        ids = {self.user_scope, *(scope("agent", a) for a in self.agents)}
        if named_agent:
            ids.add(scope("agent", named_agent))
        return frozenset(ids)

    def default_owner(self, agent: str) -> str:
        """The owner of what a call acting for `agent` (may be "") creates."""
        return scope("agent", agent) if agent else self.user_scope

    def may_modify(self, owner: str, creator: str) -> bool:
        """Owner rights: the owner itself (the user or one of its agents), the user who
        created the record, or an admin."""
        return self.is_admin or creator == self.user_scope or owner in self.identities()


# One person, alone on the hub: its names need no organisation (and stay as an earlier
# version stored them).
LOCAL_PRINCIPAL = Principal(user_id="local", org_id="local", roles=frozenset({ADMIN}), namespace="")


@dataclass(frozen=True)
class LegacyNames:
    """Where the bare agent and resource names of data stored before names had
    organisations belong: a record's names are its writer's org's (the user who created
    it, as the tokens file places that user now); a memory document, which no user wrote,
    is its agent's org's when one org's tokens alone list that agent (or the operator
    assigned it)."""

    user_orgs: Mapping[str, str]  # user scope -> org
    agent_orgs: Mapping[str, str]  # agent id -> org

    def of_writer(self, user_scope: str) -> str:
        """The org of the user who wrote a record ("" when no org: its names stay)."""
        return self.user_orgs.get(user_scope, "")

    def of_agent(self, agent: str) -> str:
        return self.agent_orgs.get(agent, "")


class TokenRegistry:
    """Tokens from a JSON file: {"tokens": [{"token" | "token_sha256", "user_id", ...}]}.

    An entry's `agent_id` is the agent its calls act for by default; `agent_ids` lists
    further agents a call may name. Naming any other agent is refused."""

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

    def legacy_names(self, assigned: Mapping[str, str]) -> LegacyNames:
        """The orgs of the file's users and agents, for moving names stored bare into
        them; `assigned` settles agents that several orgs' tokens list."""
        user_orgs = {p.user_scope: p.org_id for p in self._by_digest.values() if p.org_id}
        listed: dict[str, set[str]] = {}
        for principal in self._by_digest.values():
            for agent in (principal.agent_id, *principal.agent_ids):
                if agent and principal.org_id:
                    listed.setdefault(agent, set()).add(principal.org_id)
        agent_orgs = {a: next(iter(orgs)) for a, orgs in listed.items() if len(orgs) == 1}
        return LegacyNames(user_orgs, {**agent_orgs, **assigned})

    @property
    def only_principal(self) -> Principal | None:
        """The principal of a registry of one token."""
        return next(iter(self._by_digest.values())) if len(self) == 1 else None

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
    lists = {
        name: _string_list(entry.get(name, []), f"{where}.{name}")
        for name in ("agent_ids", "project_ids", "team_ids", "roles")
    }
    for name, value in [
        *ids.items(),
        *[(n, v) for n in ("agent_ids", "project_ids", "team_ids") for v in lists[n]],
    ]:
        if value and not is_valid_entity_id(value):
            raise ValueError(f"{where}.{name}: {value!r} is not a valid id")
    keep_out_of_logs(token)
    principal = Principal(
        user_id=ids["user_id"],
        agent_id=ids["agent_id"],
        org_id=ids["org_id"],
        agent_ids=tuple(lists["agent_ids"]),
        project_ids=tuple(lists["project_ids"]),
        team_ids=tuple(lists["team_ids"]),
        roles=frozenset(lists["roles"]),
        token=token,
    )
    return digest, principal


def _string_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return value


class Authenticator:
    """Resolves the caller of each RPC from its `authorization: Bearer <token>` metadata.

    In local mode (no tokens file) the one token is the data directory's local token,
    and its principal is LOCAL_PRINCIPAL. A call may carry a delegation grant besides its
    token (common/security/delegation.py): it then acts for the user the grant names, narrowed."""

    def __init__(
        self,
        registry: TokenRegistry,
        *,
        local_token_file: Path | None = None,
        delegations: DelegationKeys | None = None,
    ) -> None:
        self._registry = registry
        self._local_token_file = local_token_file
        self.delegations = delegations

    @classmethod
    def local(
        cls, token: str, token_file: Path, delegations: DelegationKeys | None = None
    ) -> Authenticator:
        keep_out_of_logs(token)
        digest = hashlib.sha256(token.encode()).hexdigest()
        return cls(
            TokenRegistry({digest: replace(LOCAL_PRINCIPAL, token=token)}),
            local_token_file=token_file,
            delegations=delegations,
        )

    @property
    def local_mode(self) -> bool:
        """True when no tokens file is configured: the local token is the only one."""
        return self._local_token_file is not None

    @property
    def local_principal(self) -> Principal | None:
        """LOCAL_PRINCIPAL with the local token, in local mode."""
        return self._registry.only_principal if self.local_mode else None

    def authenticate(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> Principal:
        """The caller; with a delegation grant, the user it acts for, narrowed to it."""
        principal = self._caller(metadata or ())
        grant = _metadata_value(metadata or (), DELEGATION_HEADER)
        if not grant:
            return principal
        if self.delegations is None:
            raise Unauthenticated(f"{DELEGATION_HEADER}: this server accepts no grants")
        return self.delegations.principal(principal, grant, EVALUATOR_ROLE, self.principal_of_user)

    def _caller(self, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        token = _bearer_token(metadata)
        if not token:
            raise Unauthenticated(
                "missing bearer token: send 'authorization: Bearer "
                f"<token>'{self._where_local_token()}"
            )
        principal = self._registry.principal_for(token)
        if principal is None:
            raise Unauthenticated(f"unknown bearer token{self._where_local_token()}")
        return principal

    def principal_of_user(self, user_id: str) -> Principal | None:
        return self._registry.principal_of_user(user_id)

    def _where_local_token(self) -> str:
        if self._local_token_file is None:
            return ""
        return (
            f"; this hub runs in local mode and accepts the token in "
            f"{self._local_token_file} (the SDK and the CLI read it from there, given "
            "KNOWHUB_DATA_DIR)"
        )


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


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """The gRPC metadata that presents `token` (none without a token)."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def load_authenticator(
    tokens_file: Path | None, host: str, data_dir: Path, delegations: DelegationKeys | None = None
) -> Authenticator:
    """The tokens file's tokens; without one, the data directory's local token, and then
    only on a loopback address."""
    if tokens_file is None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(
                f"refusing to bind {host} without tokens: set KNOWHUB_TOKENS_FILE, "
                "or bind 127.0.0.1"
            )
        token_file = local_token_file(data_dir.resolve())
        authenticator = Authenticator.local(ensure_local_token(data_dir), token_file, delegations)
        log.warning(
            "no KNOWHUB_TOKENS_FILE: local mode, bound to loopback only; callers "
            "send the local token in %s and act as user:local (org:local, admin)",
            token_file,
        )
        return authenticator
    registry = TokenRegistry.from_file(tokens_file)
    log.info("loaded %d tokens from %s", len(registry), tokens_file)
    return Authenticator(registry, delegations=delegations)
