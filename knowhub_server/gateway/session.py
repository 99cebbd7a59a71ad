"""Console sessions of a local hub: a one-time sign-in link, and the cookie it sets.

The console of a hub without a tokens file must act with the hub's local token without
ever holding it, so that nothing the gateway answers hands the token to a process that
cannot read the data directory (another account on the machine can reach every loopback
port). Whoever can read the token mints sign-in codes (`knowhub up` prints one, `knowhub
console-link` prints more): an HMAC under a key derived from the token, with an expiry
and a nonce the gateway accepts once. Opening the link starts a session that acts with
the local token on the gateway's side.

A session needs two things on every request: the cookie (HttpOnly, SameSite=Strict, so no
script reads it and no other site sends it) and the session's secret in a request header.
Cookies are scoped by host, not by port, so a page that another account serves on another
loopback port would receive the cookie; the secret reaches the console only in the URL
fragment of the sign-in redirect and is kept in the console origin's own storage, which
no other port can read.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
import threading
import time
from dataclasses import dataclass

from knowhub import errors
from starlette.requests import Request

from knowhub_server.gateway.translation import caller_token

COOKIE = "knowhub_session"
SECRET_HEADER = "x-knowhub-session"
_NONCE_BYTES = 16
_MAC_BYTES = 16
_CODE_BYTES = 8 + _NONCE_BYTES + _MAC_BYTES
_LOGIN_CONTEXT = b"knowhub console sign-in\0"


def _login_key(local_token: str) -> bytes:
    return hashlib.sha256(_LOGIN_CONTEXT + local_token.encode()).digest()


def _mac(key: bytes, expires: int, nonce: bytes) -> bytes:
    return hmac.new(key, struct.pack(">Q", expires) + nonce, hashlib.sha256).digest()[:_MAC_BYTES]


def mint_login_code(local_token: str, lifetime_seconds: float, now: float | None = None) -> str:
    """A sign-in code valid once, for `lifetime_seconds`, at the gateway of the hub whose
    local token this is."""
    expires = int((time.time() if now is None else now) + lifetime_seconds)
    nonce = secrets.token_bytes(_NONCE_BYTES)
    raw = struct.pack(">Q", expires) + nonce + _mac(_login_key(local_token), expires, nonce)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def login_url(gateway_url: str, code: str) -> str:
    return f"{gateway_url.rstrip('/')}/?login={code}"


@dataclass(frozen=True)
class Session:
    secret: str
    token: str
    expires: float


class Sessions:
    """The gateway's sign-in codes already used and its open sessions, in memory (a
    restart ends every session)."""

    def __init__(
        self, local_token: str | None, login_seconds: float, session_seconds: float
    ) -> None:
        self._token = local_token
        self._key = _login_key(local_token) if local_token else b""
        self.login_seconds = login_seconds
        self.session_seconds = session_seconds
        self._used: dict[bytes, float] = {}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    @property
    def local(self) -> bool:
        """Whether this gateway fronts a local hub (and so signs in with links)."""
        return self._token is not None

    def sign_in(self, code: str, now: float | None = None) -> tuple[str, Session]:
        """Spends a sign-in code: (the cookie's value, the new session)."""
        now = time.time() if now is None else now
        nonce = self._spend(code, now)
        if nonce is None or self._token is None:
            raise errors.Unauthenticated(
                "UNAUTHENTICATED",
                "login: this sign-in link is unknown, used or expired; "
                "`knowhub console-link` prints a new one",
            )
        cookie = secrets.token_urlsafe(32)
        session = Session(secrets.token_urlsafe(32), self._token, now + self.session_seconds)
        with self._lock:
            self._prune(now)
            self._sessions[cookie] = session
        return cookie, session

    def _spend(self, code: str, now: float) -> bytes | None:
        try:
            raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
        except ValueError:
            return None
        if not self._key or len(raw) != _CODE_BYTES:
            return None
        (expires,) = struct.unpack(">Q", raw[:8])
        nonce, mac = raw[8 : 8 + _NONCE_BYTES], raw[8 + _NONCE_BYTES :]
        if not hmac.compare_digest(mac, _mac(self._key, expires, nonce)):
            return None
        if not now < expires <= now + self.login_seconds + 60:
            return None  # expired, or minted to outlive what this gateway allows
        with self._lock:
            if nonce in self._used:
                return None
            self._used[nonce] = expires
        return nonce

    def token(self, cookie: str, secret: str | None, now: float | None = None) -> str:
        """The token a request with this session cookie and secret header acts with."""
        now = time.time() if now is None else now
        with self._lock:
            session = self._sessions.get(cookie)
        if (
            session is None
            or session.expires <= now
            or not secret
            or not hmac.compare_digest(secret.encode(), session.secret.encode())
        ):
            raise errors.Unauthenticated(
                "UNAUTHENTICATED",
                "session: unknown or expired (or sent without its "
                f"{SECRET_HEADER} header); sign in again with a link from `knowhub console-link`",
            )
        return session.token

    def sign_out(self, cookie: str, secret: str | None) -> None:
        """Ends the session (when the secret matches: a page that only got the cookie
        cannot end it either)."""
        self.token(cookie, secret)
        with self._lock:
            self._sessions.pop(cookie, None)

    def _prune(self, now: float) -> None:
        self._used = {n: e for n, e in self._used.items() if e > now}
        self._sessions = {c: s for c, s in self._sessions.items() if s.expires > now}


def request_token(request: Request) -> str | None:
    """The token a request acts with: its bearer token, else its console session's (the
    local token), else none."""
    authorization = request.headers.get("authorization")
    if authorization is not None:
        return caller_token(authorization)
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return None
    sessions: Sessions = request.app.state.sessions
    return sessions.token(cookie, request.headers.get(SECRET_HEADER))
