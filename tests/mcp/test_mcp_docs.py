"""The README documents the MCP server's settings (tests/test_docs.py covers the
services' own)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from knowhub_server.mcp.config import McpSettings
from tests import test_docs


def test_the_mcp_settings_are_in_the_readme() -> None:
    test_docs.test_every_setting_is_in_the_readme(McpSettings)


@pytest.mark.parametrize("token", ["t\u00f6ken", "two words"])
def test_a_token_grpc_metadata_cannot_carry_is_an_invalid_setting(token: str) -> None:
    with pytest.raises(ValidationError, match="token"):
        McpSettings(token=token)
    assert McpSettings(token="token-alice").token == "token-alice"
