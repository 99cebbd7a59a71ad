"""Keeps secrets out of the logs: bearer tokens, secure_body values, master keys, API keys.

Two nets: the secret values this process knows (tokens, keys and passwords from its
settings, registered with `keep_out_of_logs`), and patterns that catch the others in the
forms they take in messages and tracebacks (`Bearer x`, `secure_body='x'`, `sk-...`,
`api_key=x`, `redis://user:password@host`). The filter runs on every record of the
handlers `configure_logging` installs, message and exception text alike.
"""

from __future__ import annotations

import logging
import re
import threading

REDACTED = "[REDACTED]"
# Shorter values (such as the placeholder API key "none") would blank ordinary words.
MIN_SECRET_LENGTH = 8

_QUOTED_OR_WORD = r"""(?:b?'(?:[^'\\]|\\.)*'|b?"(?:[^"\\]|\\.)*"|[^\s,;)}\]]+)"""
_PATTERNS = [
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), rf"\1{REDACTED}"),
    (re.compile(r"(?i)\b((?:secure_body|master_key\w*|api_key|password|secret|token)"
                rf"""['"]?\s*[:=]\s*){_QUOTED_OR_WORD}"""), rf"\1{REDACTED}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+@"), rf"\1{REDACTED}@"),
]

_known: set[str] = set()
_known_lock = threading.Lock()


def keep_out_of_logs(*values: str | None) -> None:
    """Registers secret values this process holds; they are blanked wherever they occur."""
    with _known_lock:
        _known.update(v for v in values if v and len(v) >= MIN_SECRET_LENGTH)


def redact(text: str) -> str:
    """`text` with every known secret value and secret-looking pattern blanked."""
    for value in sorted(_known, key=len, reverse=True):  # longest first: no half-blanks
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactSecrets(logging.Filter):
    """Rewrites each record's message, exception and stack text with secrets blanked."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
