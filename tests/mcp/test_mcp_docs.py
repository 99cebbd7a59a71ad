"""The README documents the MCP server's settings (tests/test_docs.py covers the
services' own)."""

from __future__ import annotations

from services.mcp.config import McpSettings
from tests import test_docs


def test_the_mcp_settings_are_in_the_readme() -> None:
    test_docs.test_every_setting_is_in_the_readme(McpSettings)
