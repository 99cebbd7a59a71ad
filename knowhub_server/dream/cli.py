"""`knowhub memory job|event|memo|profile|doc`: following historian jobs and correcting or
removing what the memory holds, for people, run as clients of a server. Each command prints
the record it read or changed as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from knowhub_server.common.runtime.cli_support import add_client_options, connected

if TYPE_CHECKING:  # the SDK (grpc) loads when a command runs, not for `--help`
    from knowhub import KnowHub


def add_commands(commands: Any) -> None:
    """Adds `memory` to the `knowhub` command's subcommands."""
    memory = commands.add_parser(
        "memory",
        help="follow historian jobs; edit, delete and undelete memory events; "
        "edit or delete memos, profiles and an agent's memory documents",
    )
    kinds = memory.add_subparsers(dest="kind", required=True)

    job = kinds.add_parser("job", help="a historian job's state, events and decisions")
    add_client_options(job)
    job.add_argument("job_id")
    job.set_defaults(run=_job)

    event = kinds.add_parser("event", help="show, edit, delete or undelete an event")
    actions = event.add_subparsers(dest="action", required=True)
    for name, help_text in (
        ("show", "one event in any state"),
        ("edit", "correct the text (every perspective's copy)"),
        ("delete", "delete it (undoable within the retention window)"),
        ("undelete", "bring a deleted event back"),
    ):
        parser = actions.add_parser(name, help=help_text)
        add_client_options(parser)
        parser.add_argument("event_id")
        parser.add_argument("--scope", help="the event's scope (default: yours)")
        if name == "edit":
            parser.add_argument("--text", required=True, help="the corrected text")
        parser.set_defaults(run=_event)

    memo = kinds.add_parser("memo", help="edit or delete a memo of a conversation")
    actions = memo.add_subparsers(dest="action", required=True)
    for name in ("edit", "delete"):
        parser = actions.add_parser(name, help=f"{name} the memo of a job")
        add_client_options(parser)
        parser.add_argument("job_id")
        parser.add_argument("--user", default="", help="the private conversation's user")
        parser.add_argument("--group", default="", help="the group conversation's group")
        parser.add_argument("--scope", help="the memo's scope (default: yours)")
        if name == "edit":
            parser.add_argument("--text", required=True)
        parser.set_defaults(run=_memo)

    profile = kinds.add_parser("profile", help="edit or delete a user's or group's profile")
    actions = profile.add_subparsers(dest="action", required=True)
    for name in ("edit", "delete"):
        parser = actions.add_parser(name, help=f"{name} a profile")
        add_client_options(parser)
        parser.add_argument("entity_type", choices=["user", "group"])
        parser.add_argument("entity_id")
        parser.add_argument("--scope", help="the profile's scope (default: yours)")
        if name == "edit":
            parser.add_argument("--name")
            parser.add_argument(
                "--tag", action="append", dest="tags", help="a tag (repeatable; replaces the tags)"
            )
            parser.add_argument("--summary")
        parser.set_defaults(run=_profile)

    doc = kinds.add_parser("doc", help="an agent's memory documents")
    actions = doc.add_subparsers(dest="action", required=True)
    for name, help_text in (
        ("list", "the documents by path"),
        ("show", "one document with its revisions"),
        ("write", "replace a document with stdin (created if missing)"),
        ("append", "append stdin to a document (created if missing)"),
        ("delete", "delete a document with its revisions"),
    ):
        parser = actions.add_parser(name, help=help_text)
        add_client_options(parser)
        if name != "list":
            parser.add_argument("path")
        parser.add_argument("--agent", help="the agent (default: your token's)")
        if name == "write":
            parser.add_argument(
                "--expected-revision",
                type=int,
                help="refuse if the document is no longer this revision",
            )
        parser.set_defaults(run=_document)


def _print(value: Any) -> int:
    print(json.dumps(value, ensure_ascii=False, indent=2))
    return 0


@connected
def _job(kh: KnowHub, args: argparse.Namespace) -> int:
    return _print(kh.memory.job(args.job_id).to_dict())


@connected
def _event(kh: KnowHub, args: argparse.Namespace) -> int:
    if args.action == "edit":
        event = kh.memory.update_event(args.event_id, args.text, scope=args.scope)
    else:
        call = {
            "show": kh.memory.get_event,
            "delete": kh.memory.delete_event,
            "undelete": kh.memory.undelete_event,
        }[args.action]
        event = call(args.event_id, scope=args.scope)
    return _print(event.to_dict())


@connected
def _memo(kh: KnowHub, args: argparse.Namespace) -> int:
    where = {"user_id": args.user, "group_id": args.group, "scope": args.scope}
    if args.action == "edit":
        return _print(kh.memory.update_memo(args.job_id, args.text, **where).to_dict())
    return _print({"deleted": kh.memory.delete_memo(args.job_id, **where)})


@connected
def _profile(kh: KnowHub, args: argparse.Namespace) -> int:
    if args.action == "edit":
        return _print(
            kh.memory.update_profile(
                args.entity_type,
                args.entity_id,
                name=args.name,
                tags=args.tags,
                summary=args.summary,
                scope=args.scope,
            ).to_dict()
        )
    return _print(
        kh.memory.delete_profile(args.entity_type, args.entity_id, scope=args.scope).to_dict()
    )


@connected
def _document(kh: KnowHub, args: argparse.Namespace) -> int:
    if args.action == "list":
        return _print([d.to_dict() for d in kh.dream.documents(agent_id=args.agent)])
    if args.action == "show":
        return _print(kh.dream.document(args.path, agent_id=args.agent).to_dict())
    if args.action == "delete":
        return _print({"deleted": kh.dream.delete_document(args.path, agent_id=args.agent)})
    content = sys.stdin.read()
    return _print(
        kh.dream.write_document(
            args.path,
            content,
            append=args.action == "append",
            agent_id=args.agent,
            expected_revision=getattr(args, "expected_revision", None),
        ).to_dict()
    )
