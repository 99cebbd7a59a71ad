"""What every `knowhub` subcommand shares: the server address and token options, and
progress bars. Kept light: `knowhub --help` imports this module and nothing heavy."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK (grpc) loads when a command runs, not for `--help`
    from knowhub import KnowHub

DEFAULT_TARGET = "127.0.0.1:50051"
TARGET_ENV = "KNOWHUB_TARGET"


def add_target_option(
    parser: argparse.ArgumentParser, *, default: str = DEFAULT_TARGET, legacy_address: bool = False
) -> None:
    """`--target` (else $KNOWHUB_TARGET, else `default`): the server a client command calls.
    `legacy_address` keeps the old `--address` spelling working, unlisted."""
    parser.add_argument(
        "--target", metavar="HOST:PORT", help=f"the server (default ${TARGET_ENV}, else {default})"
    )
    if legacy_address:
        parser.add_argument("--address", dest="target", help=argparse.SUPPRESS)


def add_token_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token",
        help="bearer token (default $KNOWHUB_TOKEN, else the local token of a hub on this machine)",
    )


def add_client_options(parser: argparse.ArgumentParser, *, legacy_address: bool = False) -> None:
    """--target and --token."""
    add_target_option(parser, legacy_address=legacy_address)
    add_token_option(parser)


def connected(
    run: Callable[[KnowHub, argparse.Namespace], int],
) -> Callable[[object, argparse.Namespace], int]:
    """A client command: `run` gets an SDK client of the --target hub; an error the hub
    answers is one line and exit code 1."""

    def command(_settings: object, args: argparse.Namespace) -> int:
        from knowhub import KnowHub, errors

        with KnowHub(target(args), token=args.token) as kh:
            try:
                return run(kh, args)
            except errors.KnowHubError as error:
                print(f"knowhub: {error.code}: {error.message}", file=sys.stderr)
                return 1

    return command


def target(args: argparse.Namespace, default: str = DEFAULT_TARGET) -> str:
    """The server to call: --target, else $KNOWHUB_TARGET, else `default`."""
    return args.target or os.environ.get(TARGET_ENV) or default


def invalid_settings(error: Any, prefix: str = "KNOWHUB_") -> str:
    """A pydantic ValidationError of settings as one line naming each variable (never its
    value: it may be a key)."""
    problems = []
    for item in error.errors():
        name = prefix + "_".join(str(part) for part in item["loc"]).upper()
        problems.append(f"{name}: {item['msg']}" if item["loc"] else item["msg"])
    return "invalid setting: " + "; ".join(problems)


def progress_bar(description: str, total: int | None = None, unit: str = "record") -> Any:
    """A tqdm progress bar on stderr, silent when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        dynamic_ncols=True,
        leave=True,
    )


_UNITS = {"redis": "key", "files": "file"}


class StageBars:
    """One progress bar per stage (a collection, "redis", ...), made when the stage first
    reports; `update` is a progress callback of (stage, done, total)."""

    def __init__(self) -> None:
        self._bars: dict[str, Any] = {}

    def update(self, stage: str, done: int, total: int) -> None:
        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = progress_bar(stage, total, _UNITS.get(stage, "record"))
        bar.total = total
        bar.update(done - bar.n)

    def __enter__(self) -> StageBars:
        return self

    def __exit__(self, *_exc: object) -> None:
        for bar in self._bars.values():
            bar.close()


@contextlib.contextmanager
def waiting(description: str) -> Iterator[None]:
    """For one call to the hub that reports no progress of its own (an import, a slim):
    the time it has taken so far, on a terminal, so a long call is not mistaken for a
    hang."""
    bar = progress_bar(description)
    bar.bar_format = "{desc}: {elapsed}"
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.5):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    if not bar.disable:
        ticker.start()
    try:
        yield
    finally:
        stop.set()
        bar.close()
