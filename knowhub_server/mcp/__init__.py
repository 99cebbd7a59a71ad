"""`knowhub mcp`: seed 001's agent tools as an MCP server (stdio or streamable HTTP)."""
