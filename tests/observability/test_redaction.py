"""The log filter's patterns: each still blanks its secrets in any letter case (a pattern
is skipped only when the text lacks the word it needs), and ordinary text stays."""

from __future__ import annotations

import pytest

from knowhub_server.common.security.redaction import REDACTED, redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: BEARER abcdefgh12345678", "abcdefgh12345678"),
        ("LLM_API_KEY=s3cr3t-value", "s3cr3t-value"),
        ('{"Secure_Body": "the body"}', "the body"),
        ("Password = 'hunter2!'", "hunter2!"),
        ("key sk-ABCDEFGHIJKLMNOPQRST", "sk-ABCDEFGHIJKLMNOPQRST"),
        ("redis://user:pa55word@Host:6379", "pa55word"),
    ],
)
def test_each_pattern_blanks_its_secret_in_any_case(text: str, secret: str) -> None:
    blanked = redact(text)
    assert secret not in blanked and REDACTED in blanked


def test_text_without_secrets_is_left_as_it_is() -> None:
    text = "rpc=SaveKnowledge code=OK ms=1.23 a bearer token is checked; field: message"
    assert redact(text) == text
