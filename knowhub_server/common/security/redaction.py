"""Keeps secrets out of the logs: bearer tokens, secure_body values, master keys, API keys.

Two nets: the secret values this process knows (tokens, keys and passwords from its
settings, registered with `keep_out_of_logs`; a call's bearer token and the secure_body
it sends or reads, for that call's records), and patterns that catch the others in the
forms they take in messages and tracebacks (`Bearer x`, `secure_body='x'`, `sk-...`,
`api_key=x`, `redis://user:password@host`). The filter runs on every record of the
handlers `configure_logging` installs, message and exception text alike.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable

from knowhub_server.common.base.calls import current_call

REDACTED = "[REDACTED]"
# Shorter values (such as the placeholder API key "none") would blank ordinary words.
MIN_SECRET_LENGTH = 6

# Every repeat is bounded, so no message makes a pattern backtrack for long.
_QUOTED = r"""(?:b?'(?:[^'\\]|\\.){0,70000}'|b?"(?:[^"\\]|\\.){0,70000}")"""
# A name holding one of these words (llm_api_key, master_key_retired, x-auth-token).
_NAME_WORDS = ("secure_body", "master_key", "api_key", "apikey", "password", "secret", "token")
_SECRET_NAME = rf"(?:{'|'.join(_NAME_WORDS)})\w{{0,40}}"
# Each pattern with the text (case-folded) it cannot match without: a record holding none
# is not scanned by it, so most records cost a few substring checks, not five regex scans.
_PATTERNS = [
    # Eight characters at least, so "bearer token" in a message stays readable.
    (("bearer",), re.compile(r"(?i)(bearer\s{1,8})[A-Za-z0-9._~+/=-]{8,}"), rf"\1{REDACTED}"),
    # name=value (keyword arguments, settings) and "name": "value" (JSON, dicts, protobuf
    # text); "name: message" without quotes is how errors name a field, and stays.
    (
        _NAME_WORDS,
        re.compile(rf"(?i)({_SECRET_NAME}\s{{0,8}}=\s{{0,8}})(?:{_QUOTED}|[^\s,;)}}\]]+)"),
        rf"\1{REDACTED}",
    ),
    (
        _NAME_WORDS,
        re.compile(rf"""(?i)({_SECRET_NAME}['"]?\s{{0,8}}:\s{{0,8}}){_QUOTED}"""),
        rf"\1{REDACTED}",
    ),
    (("sk-",), re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    # The password of a URL: scheme://user:password@host
    (
        ("://",),
        re.compile(r"(\b[a-z][a-z0-9+.-]{0,30}://[^:/@\s]{0,256}:)[^@\s]{1,256}@"),
        rf"\1{REDACTED}@",
    ),
]

_known: set[str] = set()
_known_lock = threading.Lock()
_NOTHING = re.compile(r"(?!)")
# One alternation of the known values, replaced whole (readers never see it change).
_known_pattern = _NOTHING


def keep_out_of_logs(*values: str | None) -> None:
    """Registers secret values this process holds; they are blanked wherever they occur."""
    global _known_pattern
    with _known_lock:
        _known.update(v for v in values if v and len(v) >= MIN_SECRET_LENGTH)
        _known_pattern = _alternation(_known)


def _alternation(values: Iterable[str]) -> re.Pattern[str]:
    """Matches any of `values`, longest first, so none is blanked only in part."""
    ordered = sorted(values, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else _NOTHING


def keep_out_of_call_logs(*values: str) -> None:
    """Registers secret values of the RPC being handled (a secure_body it read), blanked
    in the call's own log records."""
    call = current_call.get()
    if call is not None:
        call.secrets.update(values)


def redact(text: str, also: Iterable[str] = ()) -> str:
    """`text` with every known secret value, those in `also`, and secret-looking patterns
    blanked."""
    text = _known_pattern.sub(REDACTED, text)
    call_values = [v for v in also if len(v) >= MIN_SECRET_LENGTH]
    if call_values:
        text = _alternation(call_values).sub(REDACTED, text)
    folded = text.casefold()
    for needles, pattern, replacement in _PATTERNS:
        if any(needle in folded for needle in needles):
            text = pattern.sub(replacement, text)
    return text


class RedactSecrets(logging.Filter):
    """Rewrites each record's message, exception and stack text with secrets blanked."""

    def filter(self, record: logging.LogRecord) -> bool:
        call = current_call.get()
        also = call.secrets if call else ()
        record.msg, record.args = redact(record.getMessage(), also), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, also)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, also)
        return True
