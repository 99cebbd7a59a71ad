"""Moves the code protoc generated for `knowhub/v1/*.proto` into its Python package,
`knowhub_contracts.v1` (`make proto`).

protoc names the generated modules after the proto files' paths, so the code imports
itself as `knowhub.v1`; this rewrites those imports (and the module names the classes
record) to `knowhub_contracts.v1`. The proto package stays `knowhub.v1`: the serialized
descriptors, the services' full names and the method paths are left as protoc wrote them.

    python scripts/proto_imports.py GENERATED_DIR PACKAGE_DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MODULE = r"\w+_pb2(?:_grpc)?"
REWRITES = [
    # from knowhub.v1 import common_pb2 as ...
    (re.compile(r"^from knowhub\.v1 import ", re.MULTILINE), "from knowhub_contracts.v1 import "),
    # the module name the classes record ('knowhub.v1.common_pb2'), in quotes
    (re.compile(rf"(['\"])knowhub\.v1\.({MODULE})\1"), r"\1knowhub_contracts.v1.\2\1"),
    # the generated file named in grpc's version check
    (re.compile(rf"\bknowhub/v1/({MODULE})\.py\b"), r"knowhub_contracts/v1/\1.py"),
]


def rewrite(text: str) -> str:
    for pattern, replacement in REWRITES:
        text = pattern.sub(replacement, text)
    return text


def main(generated: Path, package: Path) -> None:
    for source in sorted(generated.glob("*_pb2*.py*")):
        (package / source.name).write_text(rewrite(source.read_text("utf-8")), "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
