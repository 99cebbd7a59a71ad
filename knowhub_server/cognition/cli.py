"""`knowhub review` (the review of extracted knowledge, in the terminal) and
`knowhub cognition export|import|export-otel|signal|delete`: commands for people, run as
clients of a server."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from knowhub_server.common.runtime.cli_support import add_client_options, connected, waiting

if TYPE_CHECKING:  # the SDK (grpc) loads when a command runs, not for `--help`
    from knowhub import Extraction, KnowHub

CHOICES = "[a]pprove  [e]dit  [d]iscard  [s]kip  [c]ommit now  [q]uit > "


def add_commands(commands: Any) -> None:
    """Adds `review` and `cognition` to the `knowhub` command's subcommands."""
    review = commands.add_parser(
        "review",
        help="review pending extractions across traces: approve, edit in "
        "$EDITOR, discard, then commit",
    )
    add_client_options(review)
    review.add_argument("--trace", help="only this trace's extractions")
    review.set_defaults(run=_review)

    cognition = commands.add_parser(
        "cognition",
        help="export and import cognition logs as JSON files, send one to "
        "OpenTelemetry, signal an evaluation trigger, delete a trace",
    )
    actions = cognition.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write a trace's log as JSON")
    _add_trace_arguments(export)
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.set_defaults(run=_export)
    load = actions.add_parser(
        "import", help="create a trace from a JSON log file (also the legacy knowledge_log.json)"
    )
    add_client_options(load)
    load.add_argument("file", type=Path)
    load.add_argument("--trace-id", help="the trace to create (default: the file's)")
    load.set_defaults(run=_import)
    otel = actions.add_parser(
        "export-otel",
        help="send a trace to an OpenTelemetry collector as spans (GenAI "
        "semantic conventions) over OTLP/HTTP, from this machine",
    )
    _add_trace_arguments(otel)
    otel.add_argument(
        "--endpoint",
        type=_otlp_endpoint,
        help="the OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces "
        "(default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else "
        "$OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else localhost:4318)",
    )
    otel.add_argument(
        "--header",
        action="append",
        default=[],
        type=_header,
        metavar="NAME=VALUE",
        help="a header to send (repeatable), e.g. an API key",
    )
    otel.add_argument("--job", help="the runtime job to export (default: the latest)")
    otel.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to keep trying the endpoint (default 10)",
    )
    otel.add_argument(
        "--events",
        type=int,
        default=0,
        metavar="N",
        help="export the views of the log's first N events (at most 5,000; default 1,000)",
    )
    otel.set_defaults(run=_export_otel)
    signal = actions.add_parser(
        "signal",
        help="signal an evaluation trigger: publishes the trace's pending queries "
        "for the evaluator (again, after it gave up on them)",
    )
    _add_trace_arguments(signal)
    signal.add_argument(
        "--trigger",
        default="task_completion",
        choices=["goal_completion", "compression", "task_completion"],
        help="the trigger (default task_completion)",
    )
    signal.set_defaults(run=_signal)
    delete = actions.add_parser("delete", help="delete a trace with its whole log")
    _add_trace_arguments(delete)
    delete.set_defaults(run=_delete)


def _add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    add_client_options(parser)
    parser.add_argument("trace_id")
    parser.add_argument(
        "--owner", help="the trace's owner (user:ID), for an admin; default: your own trace"
    )


@connected
def _export(kh: KnowHub, args: argparse.Namespace) -> int:
    document = kh.cognition.export_log(args.trace_id, owner=args.owner)
    if args.output is None:
        print(document)
    else:
        args.output.write_text(document + "\n", encoding="utf-8")
    return 0


@connected
def _import(kh: KnowHub, args: argparse.Namespace) -> int:
    document = args.file.read_text(encoding="utf-8")
    with waiting(f"importing {args.file.name}"):
        result = kh.cognition.import_log(document, trace_id=args.trace_id)
    print(f"imported {result.imported} events into trace {result.trace.trace_id}")
    return 0


def _otlp_endpoint(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"{value!r} is not an http(s) URL")
    return value


def _header(value: str) -> tuple[str, str]:
    name, sep, content = value.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{value!r} is not NAME=VALUE")
    return name.strip(), content


@connected
def _export_otel(kh: KnowHub, args: argparse.Namespace) -> int:
    # Imported here: OpenTelemetry's SDK would slow down every other `knowhub` command.
    from knowhub_server.cognition.otel import ExportError, export_trace

    view = kh.cognition.trace_view(
        args.trace_id, job_id=args.job, owner=args.owner, page_size=args.events
    )
    if view.next_page_token:
        print(
            f"the views of the log's first {view.window_events} of "
            f"{view.trace.event_count} events (--events N for more)"
        )
    try:
        sent = export_trace(view, args.endpoint, headers=dict(args.header), timeout=args.timeout)
    except ExportError as error:
        print(f"knowhub: {error}", file=sys.stderr)
        return 1
    print(
        f"sent {sent} spans of trace {args.trace_id} to "
        f"{args.endpoint or 'the OTLP endpoint of the OTEL_EXPORTER_OTLP_* settings'}"
    )
    return 0


@connected
def _signal(kh: KnowHub, args: argparse.Namespace) -> int:
    signal = kh.cognition.signal_trigger(args.trace_id, args.trigger, owner=args.owner)
    if not signal.query_sequences:
        print(f"trace {args.trace_id}: no query waits for an evaluation; nothing published")
    elif signal.published:
        print(
            f"trace {args.trace_id}: published trigger {signal.trigger_id} for queries "
            f"{', '.join(map(str, signal.query_sequences))}"
        )
    else:
        print(
            f"trace {args.trace_id}: queries {', '.join(map(str, signal.query_sequences))} "
            f"already published (trigger {signal.trigger_id}); an evaluator has them"
        )
    return 0


@connected
def _delete(kh: KnowHub, args: argparse.Namespace) -> int:
    deleted = kh.cognition.delete_trace(args.trace_id, owner=args.owner)
    print(
        f"deleted trace {args.trace_id}: {deleted.deleted_events} events, "
        f"{deleted.deleted_extractions} extractions"
    )
    return 0


@connected
def _review(kh: KnowHub, args: argparse.Namespace) -> int:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return ReviewSession(kh, editor).run(args.trace)


class ReviewSession:
    """One pass over the pending extractions: a decision for each, then the commit of the
    traces where something was approved or edited."""

    def __init__(self, kh: KnowHub, editor: str) -> None:
        self._kh = kh
        self._editor = editor
        self._to_commit: set[tuple[str, str]] = set()  # (owner, trace id)
        self._failures = 0

    def run(self, trace_id: str | None) -> int:
        shown = 0
        for extraction in self._pending(trace_id):
            shown += 1
            self._show(shown, extraction)
            if not self._decide(extraction):
                break
        if shown == 0:
            print("nothing to review")
        self._commit()
        return 1 if self._failures else 0

    def _pending(self, trace_id: str | None) -> Iterator[Extraction]:
        token = ""
        while True:
            page = self._kh.cognition.list_extractions(
                trace_id, states=["pending"], limit=20, page_token=token
            )
            yield from page
            token = page.next_page_token
            if not token:
                return

    def _decide(self, extraction: Extraction) -> bool:
        """Asks until a decision is made; False when the reviewer quits."""
        while True:
            try:
                choice = input(CHOICES).strip().lower()[:1]
            except EOFError:
                return False
            if choice == "q":
                return False
            if choice == "s":
                return True
            if choice == "c":
                self._commit()
            elif choice in ("a", "d"):
                decision = "approve" if choice == "a" else "discard"
                return self._review(extraction, decision, None)
            elif choice == "e":
                edited = self._edit(extraction.payload)
                if edited is not None and self._review(extraction, "edit", edited):
                    return True
            else:
                print("choose a, e, d, s, c or q")

    def _review(self, extraction: Extraction, decision: str, edited: dict[str, Any] | None) -> bool:
        from knowhub import errors

        try:
            self._kh.cognition.review_extraction(
                extraction.trace_id,
                extraction.extraction_id,
                decision,
                edited_payload=edited,
                owner=extraction.owner,
            )
        except errors.InvalidArgument as error:
            print(f"not saved: {error.message}")
            return False
        if decision != "discard":
            self._to_commit.add((extraction.owner, extraction.trace_id))
        print(f"{decision}: {extraction.extraction_id}")
        return True

    def _edit(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The payload after the reviewer edited it as JSON in the editor, or None."""
        with tempfile.NamedTemporaryFile(
            "w", suffix=".json", delete=False, encoding="utf-8"
        ) as file:
            json.dump(payload, file, ensure_ascii=False, indent=2)
        path = Path(file.name)
        try:
            if subprocess.run([*shlex.split(self._editor), str(path)], check=False).returncode:
                print("the editor failed; nothing changed")
                return None
            edited: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            print(f"cannot use the edit: {error}")
            return None
        finally:
            path.unlink(missing_ok=True)
        if edited == payload:
            print("unchanged; nothing edited")
            return None
        return edited

    def _commit(self) -> None:
        for owner, trace_id in sorted(self._to_commit):
            report = self._kh.cognition.commit_extractions(trace_id, owner=owner)
            for extraction_id, knowledge_id in report.committed.items():
                print(f"committed {extraction_id} -> {knowledge_id}")
            for failure in report.failed:
                self._failures += 1
                print(f"failed {failure.extraction_id}: {failure.code}: {failure.message}")
        self._to_commit.clear()

    @staticmethod
    def _show(number: int, extraction: Extraction) -> None:
        payload = extraction.payload
        tags = ", ".join(f"{k}={v}" for k, v in payload.get("tags", {}).items())
        print()
        print(
            shown(
                f"[{number}] trace {extraction.trace_id} ({extraction.owner}) · "
                f"{extraction.extraction_id} · sequence {extraction.sequence}"
                + (f" · goal {extraction.goal_id}" if extraction.goal_id else "")
            )
        )
        print(f"task: {shown(payload['task'])}")
        print(
            shown(
                f"types: {', '.join(payload['types'])}   scopes: "
                f"{', '.join(payload['scopes']) or '(default)'}   owner: "
                f"{payload.get('owner') or '(default)'}   score: "
                f"{payload.get('score', 3)}" + (f"   tags: {tags}" if tags else "")
            )
        )
        print("content:\n  " + shown(payload["content"], lines=True).replace("\n", "\n  "))


def shown(text: str, *, lines: bool = False) -> str:
    """Text from the hub made safe for a terminal: control characters (escape sequences,
    carriage returns) and invisible format characters (bidirectional overrides) appear
    as escapes, so a payload cannot redraw or hide what the reviewer sees; with `lines`,
    line breaks stay."""
    return "".join(
        c
        if (lines and c == "\n") or unicodedata.category(c) not in _HIDDEN
        else c.encode("unicode_escape").decode()
        for c in text
    )


_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})
