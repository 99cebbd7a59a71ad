"""`knowhub mcp`: the agent tools as an MCP server (stdio or streamable HTTP)."""
