"""Generates the blocking SDK (knowhub/_sync) from the asyncio one (knowhub/_async).

unasync drops `async` and `await` and renames the asyncio names (__aenter__,
AsyncIterator, ...) and ours below; ruff then sorts the imports (the renamed modules
sort elsewhere) and formats the result, whose lines lost their alignment with the
words. `make sdk-sync` runs this; `make sdk-sync-check` fails when the committed files
differ from what it generates.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import unasync

PACKAGE = Path(__file__).resolve().parents[1] / "knowhub"
SOURCE, TARGET = PACKAGE / "_async", PACKAGE / "_sync"
RENAMES = {
    "_async": "_sync",
    "AsyncTransport": "Transport",
    "AsyncStream": "Stream",
    "AsyncKnowHub": "KnowHub",
    "AsyncKnowledgeAPI": "KnowledgeAPI",
    "AsyncResourcesAPI": "ResourcesAPI",
    "AsyncCognitionAPI": "CognitionAPI",
    "AsyncMemoryAPI": "MemoryAPI",
    "AsyncDreamAPI": "DreamAPI",
    "AsyncAdminAPI": "AdminAPI",
}


def header(source: Path) -> str:
    name = source.relative_to(PACKAGE.parent).as_posix()
    return f"# Generated from {name} by `make sdk-sync`: edit that file, not this one.\n"


def main() -> None:
    sources = sorted(SOURCE.glob("*.py"))
    for stale in TARGET.glob("*.py"):
        stale.unlink()
    rule = unasync.Rule(fromdir="/_async/", todir="/_sync/", additional_replacements=RENAMES)
    unasync.unasync_files([str(path) for path in sources], [rule])
    for source in sources:
        target = TARGET / source.name
        target.write_text(header(source) + target.read_text())
    ruff = Path(sys.executable).parent / "ruff"
    subprocess.run(
        [str(ruff), "check", "--fix", "--quiet", "--select", "I", str(TARGET)], check=True
    )
    subprocess.run([str(ruff), "format", "--quiet", str(TARGET)], check=True)


if __name__ == "__main__":
    main()
