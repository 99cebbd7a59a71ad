"""Delegated feedback: the one thing a service may do with another user's rights.

The server-side evaluator answers evaluation triggers of every user's traces, but it may
not see their knowledge: a record in `org:acme` is invisible to an evaluator outside
acme. So when the cognition service applies an evaluation's helpful / harmful verdicts
for a caller who is not the trace's owner, it issues a grant and presents it to the
knowledge service beside the caller's own token. A grant is:

- signed (HS256 JWT, PyJWT) with a key the services share: KNOWHUB_DELEGATION_KEY_FILE;
  when unset, a random key of this process (enough when the services share one), or, for
  `knowhub up` with several processes, `<data_dir>/delegation_key`, made once (0600);
- short-lived (KNOWHUB_DELEGATION_GRANT_MAX_SECONDS): a grant claiming a longer life, or
  an expiry further ahead, is refused even when its signature holds; for one audience
  (the knowledge service);
- bound to its grantee: only the caller it was issued for, holding the evaluator role,
  may present it, so a grant seen anywhere is useless without that caller's token;
- narrow: the trace, the knowledge ids of that trace's queries it may rate, and nothing
  but UpdateKnowledge adding a helpful or harmful case for that trace.

The knowledge service then acts as the trace's owner as the tokens file knows that user
*now* (never an admin, whatever the owner's roles), so a verdict lands exactly where the
owner's own feedback could, and nowhere else.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import jwt

from knowhub_server.common.base.errors import PermissionDenied, Unauthenticated
from knowhub_server.common.security.local_token import create_secret_file
from knowhub_server.common.security.redaction import keep_out_of_logs

if TYPE_CHECKING:  # auth imports this module
    from knowhub_server.common.security.auth import Principal

HEADER = "x-knowhub-delegation"
GRANT_SECONDS = 120  # KNOWHUB_DELEGATION_GRANT_MAX_SECONDS's default
# Clock skew between the processes of one hub that a grant's expiry may carry.
SKEW_SECONDS = 5
AUDIENCE = "knowhub.knowledge"
ISSUER = "knowhub.cognition"
ALGORITHM = "HS256"
# The only RPC a delegated principal may call.
DELEGATED_METHODS = frozenset({"UpdateKnowledge"})
KEY_BYTES = 32
KEY_FILE = "delegation_key"


@dataclass(frozen=True)
class Delegation:
    """What a delegated principal may do: add cases for `trace_id` to these records."""

    trace_id: str
    knowledge_ids: frozenset[str]
    grantee: str  # the caller's user scope

    def check_method(self, method: str) -> None:
        if method not in DELEGATED_METHODS:
            raise PermissionDenied(f"a delegated feedback grant does not allow {method}")

    def check_feedback(self, knowledge_id: str, *, cases_only: bool, trace_ids: set[str]) -> None:
        """Only helpful / harmful cases of this trace, on the records granted."""
        if knowledge_id not in self.knowledge_ids:
            raise PermissionDenied(f"the delegated grant does not cover {knowledge_id!r}")
        if not cases_only or trace_ids != {self.trace_id}:
            raise PermissionDenied(
                f"a delegated grant allows only helpful or harmful cases of trace {self.trace_id!r}"
            )


def ensure_key_file(data_dir: Path) -> Path:
    """`<data_dir>/delegation_key`, made now with a random key if missing: the key every
    process of one `knowhub up` shares."""
    path = data_dir / KEY_FILE
    if not path.exists():
        create_secret_file(path, secrets.token_urlsafe(48))
    return path


class DelegationKeys:
    """Issues and verifies grants with the shared key."""

    def __init__(self, key: bytes, max_seconds: int = GRANT_SECONDS) -> None:
        if len(key) < KEY_BYTES:
            raise ValueError(f"a delegation key needs at least {KEY_BYTES} bytes")
        self._key = key
        self.max_seconds = max_seconds

    @classmethod
    def load(cls, key_file: Path | None, max_seconds: int = GRANT_SECONDS) -> DelegationKeys:
        """The key of KNOWHUB_DELEGATION_KEY_FILE (its text, stripped), else a random one;
        grants live `max_seconds`, and none living longer is accepted."""
        if key_file is None:
            return cls(secrets.token_bytes(KEY_BYTES), max_seconds)
        try:
            key = key_file.read_text(encoding="utf-8").strip().encode()
        except OSError as exc:
            raise ValueError(f"cannot read KNOWHUB_DELEGATION_KEY_FILE {key_file}: {exc}") from exc
        keep_out_of_logs(key.decode())
        return cls(key, max_seconds)

    def issue(
        self, *, owner_user_id: str, trace_id: str, knowledge_ids: list[str], grantee: str
    ) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "iat": now,
            "exp": now + self.max_seconds,
            "sub": owner_user_id,
            "trace": trace_id,
            "kids": sorted(knowledge_ids),
            "grantee": grantee,
        }
        return jwt.encode(claims, self._key, algorithm=ALGORITHM)

    def principal(
        self,
        caller: Principal,
        grant: str,
        evaluator_role: str,
        owner_of: Callable[[str], Principal | None],
    ) -> Principal:
        """The trace owner's principal, narrowed to the grant, for `caller` presenting it.
        Raises Unauthenticated for a grant this hub did not issue or that expired, and
        PermissionDenied for one issued to another caller or whose owner is unknown."""
        try:
            claims = jwt.decode(
                grant,
                self._key,
                algorithms=[ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                options={"require": ["exp", "iat", "sub", "aud", "iss"]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"{HEADER}: not a valid grant ({exc})") from None
        self._check_lifetime(claims)
        if claims.get("grantee") != caller.user_scope or not caller.has_role(evaluator_role):
            raise PermissionDenied(f"{HEADER}: the grant was not issued to this caller")
        owner = owner_of(str(claims["sub"]))
        if owner is None:
            raise PermissionDenied(
                f"{HEADER}: the trace's owner {claims['sub']!r} has no token on this hub any more"
            )
        delegation = Delegation(
            str(claims.get("trace", "")),
            frozenset(str(k) for k in claims.get("kids", [])),
            caller.user_scope,
        )
        return replace(owner, roles=frozenset(), token="", delegation=delegation)

    def _check_lifetime(self, claims: dict[str, object]) -> None:
        """A grant lives at most max_seconds: from its issue to its expiry, and from now."""
        issued, expires = claims["iat"], claims["exp"]
        if (
            not isinstance(issued, int)
            or not isinstance(expires, int)
            or expires - issued > self.max_seconds
            or expires > time.time() + self.max_seconds + SKEW_SECONDS
        ):
            raise Unauthenticated(
                f"{HEADER}: a grant lives at most {self.max_seconds} s "
                "(KNOWHUB_DELEGATION_GRANT_MAX_SECONDS); this one longer"
            )
