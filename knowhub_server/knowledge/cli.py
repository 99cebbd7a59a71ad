"""`knowhub knowledge edit|delete|undelete|versions` and `knowhub forget`: managing what
the hub remembers, as clients of a server."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from knowhub_server.common.runtime.cli_support import add_client_options, connected, waiting

if TYPE_CHECKING:  # the SDK (grpc) loads when a command runs, not for `--help`
    from knowhub import KnowHub


def add_commands(commands: Any) -> None:
    """Adds `knowledge` and `forget` to the `knowhub` command's subcommands."""
    knowledge = commands.add_parser(
        "knowledge", help="correct, delete, restore a knowledge record, or see its versions"
    )
    actions = knowledge.add_subparsers(dest="action", required=True)
    edit = actions.add_parser(
        "edit", help="write the fields given; the state before is kept as a version"
    )
    edit.add_argument("id")
    edit.add_argument("--task")
    edit.add_argument("--content")
    edit.add_argument(
        "--type",
        dest="types",
        action="append",
        metavar="TYPE",
        help="a knowledge type (repeatable): the record's types become these",
    )
    edit.add_argument(
        "--tag",
        dest="tags",
        action="append",
        type=_tag,
        metavar="KEY=VALUE",
        help="a tag (repeatable): the record's tags become these",
    )
    edit.add_argument(
        "--scope",
        dest="scopes",
        action="append",
        metavar="SCOPE",
        help="a scope (repeatable): the record's scopes become these",
    )
    edit.add_argument(
        "--resource",
        dest="resource_ids",
        action="append",
        metavar="ID",
        help="a resource id (repeatable): the record's links become these",
    )
    edit.add_argument("--note", default="", help="why, kept with the version")
    add_client_options(edit)
    edit.set_defaults(run=_edit)
    for name, run, what in (
        ("delete", _delete, "delete a record (undelete restores it until its purge time)"),
        ("undelete", _undelete, "restore a deleted record"),
        ("versions", _versions, "the record's earlier states, newest first"),
    ):
        action = actions.add_parser(name, help=what)
        action.add_argument("id")
        add_client_options(action)
        action.set_defaults(run=run)

    forget = commands.add_parser(
        "forget",
        help="erase everything the hub holds about a user or an agent, in every "
        "service (an admin, or a user about itself)",
    )
    forget.add_argument("subject", help="user:ID or agent:ID")
    forget.add_argument(
        "--yes", action="store_true", required=True, help="confirm: the erasure cannot be undone"
    )
    add_client_options(forget)
    forget.set_defaults(run=_forget)


def _tag(text: str) -> tuple[str, str]:
    key, separator, value = text.partition("=")
    if not separator or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


@connected
def _edit(kh: KnowHub, args: argparse.Namespace) -> int:
    record = kh.knowledge.edit(
        args.id,
        task=args.task,
        content=args.content,
        types=args.types,
        tags=dict(args.tags) if args.tags is not None else None,
        scopes=args.scopes,
        resource_ids=args.resource_ids,
        note=args.note,
    )
    print(f"{record.id} edited: {record.task}")
    return 0


@connected
def _delete(kh: KnowHub, args: argparse.Namespace) -> int:
    purge_time = kh.knowledge.delete(args.id)
    print(
        f"{args.id} deleted; `knowhub knowledge undelete {args.id}` restores it until "
        f"{purge_time.isoformat() if purge_time else 'it is purged'}"
    )
    return 0


@connected
def _undelete(kh: KnowHub, args: argparse.Namespace) -> int:
    record = kh.knowledge.undelete(args.id)
    print(f"{record.id} restored: {record.task}")
    return 0


@connected
def _versions(kh: KnowHub, args: argparse.Namespace) -> int:
    for version in kh.knowledge.versions(args.id):
        when = version.replaced_at.isoformat() if version.replaced_at else "?"
        fields = ", ".join(version.changed_fields) or "content"
        who = f" by {version.changed_by}" if version.changed_by else ""
        why = f": {version.feedback}" if version.feedback else ""
        print(f"{when} {version.reason} of {fields}{who}{why}")
    return 0


@connected
def _forget(kh: KnowHub, args: argparse.Namespace) -> int:
    with waiting(f"forgetting {args.subject}"):
        erasure = kh.admin.forget(args.subject)
    for service, counts in erasure.counts.items():
        print(
            f"{service}: "
            + (", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing")
        )
    print(f"{erasure.total} items erased")
    return 0
