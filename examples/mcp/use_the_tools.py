"""An MCP client that starts the server of an MCP configuration (the `mcpServers` file of
Claude Desktop, Cursor and others) over stdio, lists its tools and calls two of them,
as a desktop client would.

    .venv/bin/python examples/mcp/use_the_tools.py examples/mcp/claude_desktop_config.json

Replace `/path/to/knowhub` in the configuration with the folder where `knowhub up` runs
(this script does that for you when you pass `--root`, to try it from a clone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def server_of(config_file: Path, root: Path | None) -> StdioServerParameters:
    text = config_file.read_text(encoding="utf-8")
    if root is not None:
        text = text.replace("/path/to/knowhub", str(root.resolve()))
    server = json.loads(text)["mcpServers"]["knowhub"]
    return StdioServerParameters(command=server["command"], args=server.get("args", []),
                                 env=server.get("env"))


async def use_tools(server: StdioServerParameters) -> None:
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        print("tools:", ", ".join(sorted(tool.name for tool in listed.tools)))
        saved = await session.call_tool("knowledge_save", {
            "task": "Log in to site A", "content": "Use undetected_chromedriver.",
            "types": ["tool"]})
        print("saved:", saved.structured_content["id"] if saved.structured_content else saved)
        found = await session.call_tool("knowledge_search", {"query": "site A login"})
        print("found:", [hit["id"] for hit in (found.structured_content or {})["results"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path, help="an MCP configuration file")
    parser.add_argument("--root", type=Path,
                        help="the folder to put in place of /path/to/knowhub")
    args = parser.parse_args()
    asyncio.run(use_tools(server_of(args.config, args.root)))


if __name__ == "__main__":
    main()
