"""Shared benchmark plumbing: a KnowHub server process, percentiles, synthetic text."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_TOKEN = "bench-token"


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99)}


def timed_calls(call: Callable[[int], object], count: int, warmup: int) -> list[float]:
    """Milliseconds of `call(n)` for n in 0..count-1, after `warmup` calls numbered -1, -2,
    ... (so a call can tell warm-up from measured runs)."""
    for n in range(warmup):
        call(-1 - n)
    samples = []
    for n in range(count):
        started = time.perf_counter()
        call(n)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def timed_ms(call: Callable[[], object], repeat: int, warmup: int = 50) -> list[float]:
    return timed_calls(lambda _n: call(), repeat, warmup)


def write_tokens(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokens.json"
    path.write_text(
        json.dumps(
            {
                "tokens": [
                    {
                        "token": BENCH_TOKEN,
                        "user_id": "bench",
                        "agent_id": "bench_agent",
                        "org_id": "acme",
                        "roles": ["admin"],
                    },
                ]
            }
        )
    )
    return path


@contextmanager
def server_process(
    data_dir: Path,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
    *,
    root: Path = ROOT,
    python: str = sys.executable,
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`knowhub up` (with `args`) in its own process, as deployed; yields (process, port).
    `root` and `python`: another checkout's server (and its interpreter), to compare."""
    # The server gets the search settings of the caller's environment, nothing else.
    clean_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KNOWHUB_") or k.startswith("KNOWHUB_SEARCH_")
    }
    clean_env.update(
        {
            "KNOWHUB_TOKENS_FILE": str(write_tokens(data_dir.parent)),
            "KNOWHUB_LOG_LEVEL": "WARNING",
            **(env or {}),
        }
    )
    process = subprocess.Popen(
        [
            python,
            "-m",
            "knowhub_server.cli",
            "up",
            "--data-dir",
            str(data_dir),
            "--port",
            "0",
            *(args or []),
        ],
        cwd=root,
        env=clean_env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"listening on [\d.]+:(\d+)", line)
    if not match:
        process.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    try:
        yield process, int(match.group(1))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set size (VmHWM) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (its children, theirs, ...), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # ended while we looked
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def tree_peak_rss_mb(pid: int) -> float:
    """The peak resident set sizes of `pid` and every process below it, summed (MiB)."""
    return sum(peak_rss_mb(p) for p in [pid, *descendants(pid)])


class TextGenerator:
    """Synthetic agent experience: Zipf-distributed words over a fixed vocabulary."""

    def __init__(self, seed: int = 7, vocabulary: int = 20_000) -> None:
        self._random = random.Random(seed)
        self._words = [f"{_syllables(i)}" for i in range(vocabulary)]
        # Cumulative once: choices() would sum the 20,000 weights on every call (the
        # same draws, a millisecond slower each).
        self._cum_weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(vocabulary)))

    def words(self, count: int) -> str:
        return " ".join(self._random.choices(self._words, cum_weights=self._cum_weights, k=count))

    def query(self) -> str:
        return self.words(self._random.randint(3, 6))


def _syllables(number: int) -> str:
    consonants, vowels = "bcdfghjklmnprstvz", "aeiou"
    word = ""
    while True:
        number, c = divmod(number, len(consonants))
        number, v = divmod(number, len(vowels))
        word += consonants[c] + vowels[v]
        if number == 0:
            return word
