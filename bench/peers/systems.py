"""The peer systems, each in a virtualenv of its own with pinned versions, made on first
use under the benchmark's cache directory (and remade when its pins change)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Peer:
    name: str  # the worker's name for it
    label: str  # how the table names it
    requirements: tuple[str, ...]


PEERS = (
    Peer("mem0", "mem0 2.2.1 (in-process library, its local Qdrant)", ("mem0ai==2.2.1",)),
    Peer("chromadb", "chromadb 1.5.9 (in-process, dense)", ("chromadb==1.5.9",)),
    # txtai needs torch; 2.13.0 is the CPU build on this machine's disk.
    Peer("txtai", "txtai 9.14.0 hybrid (in-process)", ("torch==2.13.0", "txtai==9.14.0")),
    Peer(
        "qdrant-edge",
        "Qdrant engine, hybrid RRF (in-process)",
        ("qdrant-edge-py==0.9.0", "numpy==2.4.6"),
    ),
)
WORKER = Path(__file__).resolve().parent / "worker.py"


def interpreter(cache: Path, peer: Peer) -> Path:
    """The peer's virtualenv's python, after making the virtualenv if it is missing or
    was made with other pins."""
    home = cache / peer.name
    python = home / "bin" / "python"
    stamp = home / "knowhub-bench.json"
    wanted = json.dumps(list(peer.requirements))
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(
        f"making the {peer.name} virtualenv in {home} ({', '.join(peer.requirements)})", flush=True
    )
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(home)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *peer.requirements], check=True)
    stamp.write_text(wanted)
    return python
