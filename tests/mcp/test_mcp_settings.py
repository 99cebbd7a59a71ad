"""The MCP server's settings (tests/test_docs.py checks that the settings reference lists
them, with every other setting)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from knowhub_server.mcp.config import McpSettings


@pytest.mark.parametrize("token", ["t\u00f6ken", "two words"])
def test_a_token_grpc_metadata_cannot_carry_is_an_invalid_setting(token: str) -> None:
    with pytest.raises(ValidationError, match="token"):
        McpSettings(token=token)
    assert McpSettings(token="token-alice").token == "token-alice"
