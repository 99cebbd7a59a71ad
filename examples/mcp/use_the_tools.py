"""An MCP client that starts the server of an MCP configuration (the `mcpServers` file of
Claude Desktop, Cursor and others) over stdio, lists its tools and calls two of them,
as a desktop client would. With the hub running (`make run`), in the same folder:

    .venv/bin/python examples/mcp/use_the_tools.py examples/mcp/claude_desktop_config.json

`/path/to/knowhub` in the configuration stands for the folder where `knowhub up` runs: this
script puts the current folder in its place (or the folder given by `--root`); in a
desktop client's own configuration, write that folder yourself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent


def server_of(config_file: Path, root: Path) -> StdioServerParameters:
    text = config_file.read_text(encoding="utf-8")
    text = text.replace("/path/to/knowhub", str(root.resolve()))
    server = json.loads(text)["mcpServers"]["knowhub"]
    if not Path(server["command"]).is_file():
        sys.exit(
            f"{server['command']} does not exist: run this in the folder where "
            "`make run` installed KnowHub, or give that folder with --root"
        )
    return StdioServerParameters(
        command=server["command"], args=server.get("args", []), env=server.get("env")
    )


async def use_tools(server: StdioServerParameters) -> str | None:
    """Lists the tools, saves a record and finds it; the message of a tool call that failed
    (the hub not running, say), if one did."""
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        print("tools:", ", ".join(sorted(tool.name for tool in listed.tools)))
        saved = await session.call_tool(
            "knowledge_save",
            {
                "task": "Log in to site A",
                "content": "Use undetected_chromedriver.",
                "types": ["tool"],
            },
        )
        if saved.is_error or saved.structured_content is None:
            return error_of(saved)
        print("saved:", saved.structured_content["id"])
        found = await session.call_tool("knowledge_search", {"query": "site A login"})
        if found.is_error or found.structured_content is None:
            return error_of(found)
        print("found:", [hit["id"] for hit in found.structured_content["results"]])
    return None


def error_of(result: CallToolResult) -> str:
    return " ".join(part.text for part in result.content if isinstance(part, TextContent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path, help="an MCP configuration file")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path.cwd(),
        help="the folder to put in place of /path/to/knowhub (default: the current folder)",
    )
    args = parser.parse_args()
    failure = asyncio.run(use_tools(server_of(args.config, args.root)))
    if failure:
        sys.exit(f"a tool call failed: {failure}")


if __name__ == "__main__":
    main()
