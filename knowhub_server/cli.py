"""The `knowhub` command: run the stack or one service, and maintenance tasks."""

# Only argparse and light modules at the top: `knowhub --help` and every subcommand's
# `--help` must answer at once. Each command imports what it runs.

from __future__ import annotations

import argparse
import functools
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowhub_server.cognition.cli import add_commands as add_cognition_commands
from knowhub_server.common.base.paths import absolute
from knowhub_server.common.base.versions import installed_version
from knowhub_server.common.runtime.cli_support import (
    StageBars,
    add_client_options,
    add_target_option,
    connected,
    invalid_settings,
    target,
    waiting,
)
from knowhub_server.composition import GATEWAY, SERVICE_NAMES
from knowhub_server.dream.cli import add_commands as add_memory_commands
from knowhub_server.knowledge.cli import add_commands as add_knowledge_commands
from knowhub_server.mcp.cli import add_command as add_mcp_command

if TYPE_CHECKING:
    from knowhub import KnowHub

    from knowhub_server.common.base.config import CommonSettings

# By measurement (bench/mixed_load.py, docs/operations/processes.md).
DEFAULT_PROCESSES = 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = _config_file(args)
    except (OSError, ValueError) as exc:
        print(f"knowhub: {exc}", file=sys.stderr)
        return 2
    from knowhub_server.common.base.config import CONFIG_ENV
    from knowhub_server.common.base.environment import variable_set

    # every settings class reads the file, and so do the processes the command starts
    with variable_set(CONFIG_ENV, None if config is None else str(config)):
        return _main(args, config)


def _main(args: argparse.Namespace, config: Path | None) -> int:
    from pydantic import ValidationError

    from knowhub_server.common.storage.vectors import EmbeddingChanged

    try:
        settings = _settings(args)
    except ValidationError as exc:
        where = f" (in the environment or {config})" if config else ""
        print(f"knowhub: {invalid_settings(exc)}{where}", file=sys.stderr)
        return 2
    from knowhub_server.common.runtime.logs import configure_logging

    configure_logging(
        settings.log_level, settings.log_format, process=getattr(args, "service", "knowhub")
    )
    try:
        return int(args.run(settings, args))
    except EmbeddingChanged as exc:
        print(f"knowhub: {exc.problem}.\n{_reindex_advice(args, config)}", file=sys.stderr)
        return 1
    except _known_failures() as exc:
        print(f"knowhub: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("knowhub: interrupted", file=sys.stderr)
        return 130


def _config_file(args: argparse.Namespace) -> Path | None:
    """The configuration file this command reads (see `find_config_file`), checked: TOML
    that names only settings that exist."""
    import tomllib

    from knowhub_server.common.base.config import find_config_file
    from knowhub_server.settings_catalog import check_config_file

    config = find_config_file(getattr(args, "config", None), getattr(args, "data_dir", None))
    if config is not None:
        with config.open("rb") as file:
            try:
                values = tomllib.load(file)
            except ValueError as exc:  # TOMLDecodeError
                raise ValueError(f"{config} is not valid TOML: {exc}") from exc
        check_config_file(values, config)
    return config


def _reindex_advice(args: argparse.Namespace, config: Path | None) -> str:
    """What to do when the stores hold other vectors than the settings ask for, with the
    exact command that rebuilds them."""
    command = [_this_program(), "reindex"]
    if getattr(args, "data_dir", None) is not None:
        command += ["--data-dir", str(args.data_dir)]
    if getattr(args, "config", None) is not None:
        command += ["--config", str(args.config)]
    settings = (
        f"the embedding_* lines of {config}, or " if config else ""
    ) + "the KNOWHUB_EMBEDDING_* variables"
    return (
        f"To keep these vectors, start again with the settings they were built with "
        f"({settings}).\n"
        "To rebuild them for the settings in use now, stop every KnowHub that uses this "
        "data directory, then run here, with the same settings:\n"
        f"    {shlex.join(command)}"
    )


def _this_program() -> str:
    """How the user called `knowhub`: `.venv/bin/knowhub` after `make run`."""
    program = sys.argv[0] if Path(sys.argv[0]).name == "knowhub" else "knowhub"
    if Path(program).is_absolute() and Path(program).is_relative_to(Path.cwd()):
        return str(Path(program).relative_to(Path.cwd()))
    return program


def _known_failures() -> tuple[type[BaseException], ...]:
    """Failures the user can act on, told in one line: a data directory in use, a store
    built with another model, a port taken, a bad backup, a file that cannot be written."""
    from knowhub_server.common.base.errors import ServiceError
    from knowhub_server.common.storage.vectors import StoreMismatch

    return (StoreMismatch, ServiceError, ValueError, RuntimeError, OSError)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="knowhub", description=__doc__)
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    _config_option(parser)
    commands = parser.add_subparsers(dest="command", required=True)

    up = commands.add_parser("up", help="start the embedded stack (every service, one port)")
    _server_options(up)
    up.add_argument(
        "--gateway-port",
        type=int,
        help="REST gateway port (default 8080; KNOWHUB_GATEWAY_ENABLED=false: none)",
    )
    up.add_argument(
        "--processes",
        type=int,
        default=DEFAULT_PROCESSES,
        help="processes to run the stack in (default %(default)s): 1 runs "
        "everything in this one; 2 moves the gateway to a process of its "
        "own, 3 cognition too (see docs/operations/processes.md)",
    )
    up.set_defaults(run=_up)

    serve = commands.add_parser("serve", help="run one service on its own")
    serve.add_argument(
        "service",
        choices=[*sorted(SERVICE_NAMES), GATEWAY],
        help="gateway: the REST gateway alone (--host/--port are its own)",
    )
    _server_options(serve)
    # Given by `knowhub up --processes` to its children: die when that process does.
    serve.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    serve.set_defaults(run=_serve)

    reindex = commands.add_parser(
        "reindex", help="rebuild vectors with the configured embedding model (server stopped)"
    )
    _data_dir_option(reindex)
    reindex.set_defaults(run=_reindex)

    compact = commands.add_parser(
        "compact",
        help="rewrite the embedded stores without what was deleted, so no "
        "erased or deleted text stays on disk (server stopped)",
    )
    _data_dir_option(compact)
    compact.set_defaults(run=_compact)

    migrate = commands.add_parser(
        "migrate-names",
        help="move the agent and resource names of data stored before "
        "names had organisations into their organisations (server stopped; needs "
        "KNOWHUB_TOKENS_FILE)",
    )
    _data_dir_option(migrate)
    migrate.add_argument(
        "--agent-org",
        action="append",
        default=[],
        metavar="AGENT=ORG",
        help="the org whose agent a bare agent id is, for an agent that "
        "several orgs' tokens list (repeatable)",
    )
    migrate.set_defaults(run=_migrate_names)

    backup = commands.add_parser(
        "backup",
        help="write a backup of a running hub into a new directory on its machine (admin token)",
    )
    backup.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="DIR",
        help="the directory to create (it must not exist yet)",
    )
    add_client_options(backup)
    backup.set_defaults(run=_backup)

    restore = commands.add_parser(
        "restore",
        help="bring a backup back into a new or empty data directory (no server running on it)",
    )
    restore.add_argument(
        "--from",
        dest="source",
        type=Path,
        required=True,
        metavar="DIR",
        help="a directory `knowhub backup` wrote",
    )
    _data_dir_option(restore)
    restore.set_defaults(run=_restore)

    slim = commands.add_parser(
        "slim",
        help="merge near-duplicate knowledge with the LLM (admins: every record; "
        "others: their own)",
    )
    slim.add_argument("--dry-run", action="store_true", help="only report the groups")
    slim.add_argument("--model", help="the chat model (default: the hub's)")
    add_client_options(slim)
    slim.set_defaults(run=_slim)

    keys = commands.add_parser("keys", help="the master key of resource secrets")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    rotate = key_commands.add_parser(
        "rotate",
        help="make a fresh master key active in the running server and re-wrap "
        "every data key under it (admin token)",
    )
    add_client_options(rotate, legacy_address=True)
    rotate.set_defaults(run=_rotate_key)
    generate = key_commands.add_parser(
        "generate", help="print a new random key for KNOWHUB_MASTER_KEY"
    )
    generate.set_defaults(run=_generate_key)

    link = commands.add_parser(
        "console-link",
        help="print a one-time sign-in link to the console of the local hub "
        "of this data directory (one that runs without a tokens file)",
    )
    _data_dir_option(link)
    link.add_argument(
        "--url",
        help="the gateway's address (default http://KNOWHUB_GATEWAY_HOST:KNOWHUB_GATEWAY_PORT)",
    )
    link.set_defaults(run=_console_link)

    health = commands.add_parser(
        "health", help="check that a server is serving (gRPC health); exit 0 only if so"
    )
    add_target_option(
        health,
        default="KNOWHUB_HOST:KNOWHUB_PORT, 127.0.0.1 for a wildcard host",
        legacy_address=True,
    )
    health.add_argument(
        "--service",
        default="",
        help=f"{', '.join(SERVICE_NAMES)} or a full gRPC service name (default: the whole server)",
    )
    health.add_argument("--timeout", type=float, default=5.0, help="seconds (default 5)")
    health.set_defaults(run=_health)

    add_cognition_commands(commands)
    add_memory_commands(commands)
    add_knowledge_commands(commands)
    add_mcp_command(commands)
    return parser


class _Version(argparse.Action):
    """--version, reading the installed version only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        print(f"knowhub {installed_version()}")
        parser.exit()


def _config_option(parser: argparse.ArgumentParser) -> None:
    """--config, before the command or (for the commands with --data-dir) after it."""
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="configuration file (default $KNOWHUB_CONFIG, else knowhub.toml "
        "in the data directory when there is one); KNOWHUB_* "
        "environment variables override it",
    )


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", type=Path, help="data directory (default $KNOWHUB_DATA_DIR, else ./.knowhub)"
    )
    _config_option(parser)


def _server_options(parser: argparse.ArgumentParser) -> None:
    _data_dir_option(parser)
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="gRPC port (default 50051)")


def _settings(args: argparse.Namespace) -> CommonSettings:
    from knowhub_server.common.base.config import CommonSettings

    overrides = {
        name: getattr(args, name)
        for name in ("data_dir", "host", "port")
        if getattr(args, name, None) is not None
    }
    return CommonSettings(**overrides)


def _up(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.common.runtime.runtime import Runtime
    from knowhub_server.common.runtime.server import KnowHubServer, serve_forever
    from knowhub_server.common.storage.data_lock import hold_data_dir
    from knowhub_server.composition import services, split, subject_forgets
    from knowhub_server.gateway.app import HubGateway

    if args.processes < 1:
        raise ValueError(f"--processes must be at least 1, not {args.processes}")
    _check_ports(settings, args)
    away = split(args.processes, gateway=HubGateway.enabled())
    with hold_data_dir(settings.data_dir, "knowhub up"):
        if away:  # the children it starts share the data directory it holds
            return _up_in_processes(settings, args, away)
        gateway = [HubGateway(settings, args.gateway_port)] if HubGateway.enabled() else []
        serve_forever(
            KnowHubServer(Runtime.open(settings), services(), forgets=subject_forgets()),
            gateway,
        )
    return 0


def _check_ports(settings: CommonSettings, args: argparse.Namespace) -> None:
    """The ports `knowhub up` binds are free, before it creates anything."""
    from knowhub_server.common.runtime.http import check_free
    from knowhub_server.gateway.app import HubGateway, hub_gateway_port
    from knowhub_server.gateway.config import GatewaySettings

    check_free(settings.host, settings.port, "the gRPC port", "--port, KNOWHUB_PORT")
    if HubGateway.enabled():
        check_free(
            GatewaySettings().gateway_host,
            hub_gateway_port(settings, args.gateway_port),
            "the gateway's port",
            "--gateway-port, KNOWHUB_GATEWAY_PORT",
        )


def _up_in_processes(settings: CommonSettings, args: argparse.Namespace, away: list[str]) -> int:
    """The main process keeps the public port and the services not `away`; the services
    and the gateway in `away` run as its children, sharing its keys, tokens and Redis."""
    import functools

    from knowhub_server.common.runtime.processes import ChildProcess, child_env
    from knowhub_server.common.runtime.runtime import Runtime, make_private_data_dir
    from knowhub_server.common.runtime.server import KnowHubServer, serve_forever
    from knowhub_server.common.security.delegation import ensure_key_file
    from knowhub_server.composition import services, subject_forgets
    from knowhub_server.gateway.app import hub_gateway_port, sign_in_line
    from knowhub_server.gateway.config import GatewaySettings

    make_private_data_dir(settings.data_dir)
    settings.delegation_key_file = settings.delegation_key_file or ensure_key_file(
        settings.data_dir
    )
    runtime = Runtime.open(settings)
    settings.redis_url = runtime.redis_url()
    services_away = [s for s in away if s != GATEWAY]
    server = KnowHubServer(
        runtime,
        services(s for s in SERVICE_NAMES if s not in services_away),
        forwarded=services(services_away),
        forgets=subject_forgets(),
    )

    def env() -> dict[str, str]:  # every service at the main process's loopback port
        main = f"127.0.0.1:{server.peer_port}"
        return child_env(settings, **{f"KNOWHUB_{s.upper()}_ADDRESS": main for s in SERVICE_NAMES})

    children = [
        ChildProcess(
            service,
            [service, "--host", "127.0.0.1", "--port", "0"],
            env,
            reached=functools.partial(runtime.peers.host_elsewhere, service),
        )
        for service in services_away
    ]
    if GATEWAY in away:
        port = hub_gateway_port(settings, args.gateway_port)
        children.append(
            ChildProcess(
                GATEWAY,
                [GATEWAY, "--port", str(port)],
                env,
                note=functools.partial(sign_in_line, settings=settings, own=GatewaySettings()),
            )
        )
    serve_forever(server, children)
    return 1 if any(child.failed for child in children) else 0


def _serve(settings: CommonSettings, args: argparse.Namespace) -> int:
    if args.parent_pid is not None:
        from knowhub_server.common.runtime.processes import die_with_parent

        die_with_parent(args.parent_pid)
    if args.service == GATEWAY:
        from knowhub_server.common.base.config import CommonSettings
        from knowhub_server.gateway.app import serve_gateway

        return serve_gateway(CommonSettings(), args.host, args.port)
    from knowhub_server.common.runtime.http import check_free
    from knowhub_server.common.runtime.runtime import Runtime
    from knowhub_server.common.runtime.server import KnowHubServer, serve_forever
    from knowhub_server.common.storage.data_lock import hold_data_dir
    from knowhub_server.composition import services, subject_forgets

    check_free(settings.host, settings.port, "the gRPC port", "--port, KNOWHUB_PORT")
    with hold_data_dir(settings.data_dir, f"knowhub serve {args.service}"):
        serve_forever(
            KnowHubServer(
                Runtime.open(settings), services([args.service]), forgets=subject_forgets()
            )
        )
    return 0


def _console_link(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.gateway.app import console_link

    print(console_link(settings, args.url))
    return 0


def _health(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.common.runtime.health_probe import check, probe_address
    from knowhub_server.common.security.tls import peer_ca

    address = target(args, probe_address(settings.host, settings.port))
    serving, line = check(address, args.service, tls_ca=peer_ca(settings), timeout=args.timeout)
    print(line, file=sys.stdout if serving else sys.stderr)
    return 0 if serving else 1


def _reindex(settings: CommonSettings, _args: argparse.Namespace) -> int:
    from knowhub_server.common.llm.embedding import DenseEmbedder
    from knowhub_server.common.runtime.runtime import make_private_data_dir, open_vector_store
    from knowhub_server.common.storage.data_lock import hold_data_dir
    from knowhub_server.dream.memory.store import reindex as reindex_memory
    from knowhub_server.knowledge.store import reindex as reindex_knowledge

    if not settings.qdrant_url and not settings.data_dir.is_dir():
        raise FileNotFoundError(f"there is no data directory {settings.data_dir} to reindex")
    make_private_data_dir(settings.data_dir)  # the rebuilt shards, as private as the rest
    with hold_data_dir(settings.data_dir, "knowhub reindex"):
        store = open_vector_store(settings)
        embedder = DenseEmbedder.from_settings(settings)
        try:
            for name, reindex in (("knowledge", reindex_knowledge), ("memory", reindex_memory)):
                with StageBars() as bars:
                    count = reindex(store, embedder, progress=functools.partial(bars.update, name))
                print(f"{name}: {count} records re-embedded; done", flush=True)
        finally:
            store.close()
    return 0


def _compact(settings: CommonSettings, _args: argparse.Namespace) -> int:
    from knowhub_server.common.storage.data_lock import hold_data_dir
    from knowhub_server.common.storage.edge_store import EdgeStore
    from knowhub_server.common.storage.redis_store import EmbeddedRedis, rewrite_append_only_file

    if not settings.data_dir.is_dir():
        raise FileNotFoundError(f"there is no data directory {settings.data_dir} to compact")
    with hold_data_dir(settings.data_dir, "knowhub compact"):
        if settings.qdrant_url:
            print("vectors: on a Qdrant server, which compacts on its own; skipped")
        else:
            store = EdgeStore(settings.data_dir / "qdrant")
            for name in store.collection_names():
                print(f"{name}: {store.compact(name)} records kept", flush=True)
        if settings.redis_url:
            print(
                "redis: a server of its own (KNOWHUB_REDIS_URL), which rewrites its "
                "append-only file on its own; skipped"
            )
        elif (settings.data_dir / "redis").is_dir():
            embedded = EmbeddedRedis(settings.data_dir / "redis").start()
            try:
                rewrite_append_only_file(embedded.url)
            finally:
                embedded.stop()
            print("redis: append-only file rewritten", flush=True)
    return 0


def _migrate_names(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.cognition.store import CognitionStore
    from knowhub_server.common.runtime.runtime import Runtime
    from knowhub_server.common.security.auth import TokenRegistry
    from knowhub_server.common.storage.data_lock import hold_data_dir
    from knowhub_server.dream.runs.store import DreamStore
    from knowhub_server.knowledge.store import qualify_legacy_names
    from knowhub_server.resource.config import ResourceSettings
    from knowhub_server.resource.registration import keyring
    from knowhub_server.resource.store import ResourceStore, qualify_legacy_ids

    if settings.tokens_file is None:
        raise ValueError(
            "set KNOWHUB_TOKENS_FILE: the tokens file says which organisation "
            "each user and agent belongs to"
        )
    assigned = dict(_assignment(value) for value in args.agent_org)
    names = TokenRegistry.from_file(settings.tokens_file).legacy_names(assigned)
    with hold_data_dir(settings.data_dir, "knowhub migrate-names"):
        runtime = Runtime.open(settings)
        try:
            store = ResourceStore(runtime.vectors)
            moved = qualify_legacy_ids(store, keyring(ResourceSettings(), runtime, store), names)
            records = qualify_legacy_names(
                runtime.vectors,
                runtime.embedder,
                names,
                {old: new for old, new in moved.items() if new},
            )
            prefix = settings.redis_prefix
            traces = CognitionStore(runtime.redis, prefix).qualify_legacy_agents(names)
            dreams, left = DreamStore(runtime.redis, prefix).qualify_legacy_agents(names)
        finally:
            runtime.close()
    taken = sorted(old for old, new in moved.items() if not new)
    print(
        f"resources: {len(moved) - len(taken)} moved into their organisation"
        + (f"; left, their id taken since: {', '.join(taken)}" if taken else "")
    )
    print(
        f"knowledge: {records} records; traces: {traces}; memory documents and dream "
        f"schedules: {dreams}"
    )
    unsettled = sorted(left)
    if unsettled:
        print(
            "agents left as they are (several organisations list them, or none does; "
            f"settle with --agent-org AGENT=ORG): {', '.join(unsettled)}"
        )
    return 0


def _assignment(value: str) -> tuple[str, str]:
    agent, separator, org = value.partition("=")
    if not separator or not agent or not org:
        raise ValueError(f"--agent-org {value!r}: write AGENT=ORG")
    return agent, org


def _backup(settings: CommonSettings, args: argparse.Namespace) -> int:
    import json

    import grpc
    from knowhub.channels import open_channel
    from knowhub.errors import from_rpc_error
    from knowhub.local import default_token
    from knowhub_contracts.v1 import admin_pb2, admin_pb2_grpc

    from knowhub_server.common.security.tls import peer_ca

    address = target(args)
    token = args.token or default_token([address])
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    destination = absolute(args.to)
    ca = peer_ca(settings)
    with open_channel(address, tls_ca=ca) as channel, StageBars() as bars:
        stream = admin_pb2_grpc.AdminServiceStub(channel).CreateBackup(
            admin_pb2.CreateBackupRequest(destination=str(destination)), metadata=metadata
        )
        try:
            for answer in stream:
                if answer.HasField("progress"):
                    step = answer.progress
                    bars.update(step.stage, step.done, step.total)
                else:
                    manifest = json.loads(answer.backup.manifest_json)
        except grpc.RpcError as error:
            failure = from_rpc_error(error, address, ca is not None)
            print(f"knowhub: backup failed: {failure.code}: {failure.message}", file=sys.stderr)
            return 1
    print(f"backup written to {destination}: {_summary(manifest)}")
    return 0


def _restore(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.common.runtime.runtime import make_private_data_dir
    from knowhub_server.common.storage.backup import BackupError, read_manifest, restore_backup
    from knowhub_server.common.storage.data_lock import hold_data_dir

    data_dir, source = settings.data_dir, absolute(args.source)
    if settings.qdrant_url or settings.redis_url:
        raise BackupError(
            "restore writes the embedded stores of a data directory: unset "
            "KNOWHUB_QDRANT_URL and KNOWHUB_REDIS_URL"
        )
    read_manifest(source)
    existed = data_dir.exists()
    if existed and any(data_dir.iterdir()):
        raise BackupError(
            f"{data_dir} is not empty: restore into a new or empty data directory (--data-dir)"
        )
    try:
        with hold_data_dir(data_dir, "knowhub restore"), StageBars() as bars:
            make_private_data_dir(data_dir)
            manifest = restore_backup(source, data_dir, bars.update)
    except BaseException:
        _empty(data_dir, remove=not existed)  # a half restore would pass for a hub
        raise
    print(f"restored {source} into {data_dir}: {_summary(manifest)}")
    return 0


def _empty(directory: Path, *, remove: bool) -> None:
    import shutil

    if remove:
        shutil.rmtree(directory, ignore_errors=True)
        return
    for child in directory.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _summary(manifest: dict[str, Any]) -> str:
    records = ", ".join(f"{c['records']} {c['name']}" for c in manifest["collections"])
    return (
        f"{records or 'no collections'}; {manifest['redis']['keys']} Redis keys; "
        f"files: {', '.join(manifest['files']) or 'none'}"
    )


@connected
def _slim(kh: KnowHub, args: argparse.Namespace) -> int:
    with waiting("slimming"):
        report = kh.knowledge.slim(model=args.model, dry_run=args.dry_run)
    verb = "would merge" if report.dry_run else "merged"
    for group in report.groups:
        how = "by the LLM" if group.merged_by_llm else "kept as it was"
        print(
            f"{verb} {', '.join(group.removed_ids)} into {group.kept_id} ({how})"
            + (f": {group.note}" if group.note else "")
        )
    removed = sum(len(g.removed_ids) for g in report.groups)
    print(
        f"{report.examined} records examined; {len(report.groups)} groups, {removed} "
        f"records {'to remove' if report.dry_run else 'removed'}"
    )
    return 0


def _rotate_key(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub import KnowHub, errors

    address = target(args, settings.resource_address or f"{settings.host}:{settings.port}")
    try:
        with KnowHub(resource=address, token=args.token, timeout=3600) as kh:
            rotation = kh.resources.rotate_master_key()
    except errors.KnowHubError as error:
        print(f"knowhub: key rotation failed: {error}", file=sys.stderr)
        return 1
    made = "a new key" if rotation.created else "the key in KNOWHUB_MASTER_KEY"
    print(
        f"active master key {rotation.active_key_id} ({made}); {rotation.rewrapped} data "
        f"keys re-wrapped; {rotation.remaining} still under another key"
    )
    return 0


def _generate_key(_settings: CommonSettings, _args: argparse.Namespace) -> int:
    from knowhub_server.resource.crypto import generate_key

    print(generate_key())
    return 0


if __name__ == "__main__":
    sys.exit(main())
