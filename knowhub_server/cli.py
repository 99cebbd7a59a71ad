"""The `knowhub` command: run the stack or one service, and maintenance tasks."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

from pydantic import ValidationError

from knowhub_server.cognition.cli import add_commands as add_cognition_commands
from knowhub_server.common.config import CommonSettings
from knowhub_server.common.delegation import ensure_key_file
from knowhub_server.common.logs import configure_logging
from knowhub_server.common.processes import (
    GATEWAY,
    ChildProcess,
    child_env,
    die_with_parent,
    split,
)
from knowhub_server.common.runtime import Runtime, make_private_data_dir, open_vector_store
from knowhub_server.common.server import SERVICE_MODULES, KnowHubServer, serve_forever
from knowhub_server.common.vectors import StoreMismatch
from knowhub_server.mcp.cli import add_command as add_mcp_command

FRONT = "front"
# By measurement (bench/mixed_load.py, docs/operations/processes.md).
DEFAULT_PROCESSES = 1


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings(args)
    except ValidationError as exc:
        print(f"knowhub: invalid setting: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format,
                      process=getattr(args, "service", "knowhub"))
    try:
        return args.run(settings, args)
    except (StoreMismatch, ValueError, RuntimeError) as exc:
        print(f"knowhub: {exc}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="knowhub", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    up = commands.add_parser("up", help="start the embedded stack (every service, one port)")
    _server_options(up)
    up.add_argument("--gateway-port", type=int,
                    help="REST gateway port (default 8080; KNOWHUB_GATEWAY_ENABLED=false: none)")
    up.add_argument("--processes", type=int, default=DEFAULT_PROCESSES,
                    help="processes to run the stack in (default %(default)s): 1 runs "
                         "everything in this one; 2 to 5 move the gateway, then cognition, "
                         "dream and resource to processes of their own "
                         "(see docs/operations/processes.md)")
    up.set_defaults(run=_up)

    serve = commands.add_parser("serve", help="run one service on its own")
    serve.add_argument("service", choices=[*sorted(SERVICE_MODULES), GATEWAY, FRONT],
                       help="gateway: the REST gateway alone (--host/--port are its own); "
                            "front: every service on one port, each call passed on to "
                            "KNOWHUB_<SERVICE>_ADDRESS")
    _server_options(serve)
    # Given by `knowhub up --processes` to its children: die when that process does.
    serve.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    serve.set_defaults(run=_serve)

    reindex = commands.add_parser(
        "reindex", help="rebuild vectors with the configured embedding model (server stopped)")
    reindex.add_argument("--data-dir", type=Path, help="data directory (default ./.knowhub)")
    reindex.set_defaults(run=_reindex)

    keys = commands.add_parser("keys", help="the master key of resource secrets")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    rotate = key_commands.add_parser(
        "rotate", help="make a fresh master key active in the running server and re-wrap "
                       "every data key under it (admin token)")
    rotate.add_argument("--address", help="the resource service (default: "
                        "KNOWHUB_RESOURCE_ADDRESS, else KNOWHUB_HOST:KNOWHUB_PORT)")
    rotate.add_argument("--token", help="an admin's bearer token (default: KNOWHUB_TOKEN)")
    rotate.set_defaults(run=_rotate_key)
    generate = key_commands.add_parser("generate",
                                       help="print a new random key for KNOWHUB_MASTER_KEY")
    generate.set_defaults(run=_generate_key)

    health = commands.add_parser(
        "health", help="check that a server is serving (gRPC health); exit 0 only if so")
    health.add_argument("--address", help="host:port (default: this process's KNOWHUB_HOST "
                        "and KNOWHUB_PORT, 127.0.0.1 for a wildcard host)")
    health.add_argument("--service", default="", help="knowledge, resource, cognition, dream "
                        "or a full gRPC service name (default: the whole server)")
    health.add_argument("--timeout", type=float, default=5.0, help="seconds (default 5)")
    health.set_defaults(run=_health)

    add_cognition_commands(commands)
    add_mcp_command(commands)
    return parser


def _server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, help="data directory (default ./.knowhub)")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="gRPC port (default 50051)")


def _settings(args: argparse.Namespace) -> CommonSettings:
    overrides = {name: getattr(args, name) for name in ("data_dir", "host", "port")
                 if getattr(args, name, None) is not None}
    return CommonSettings(**overrides)


def _up(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.gateway.app import HubGateway

    if args.processes < 1:
        raise ValueError(f"--processes must be at least 1, not {args.processes}")
    away = split(args.processes, gateway=HubGateway.enabled())
    if away:
        return _up_in_processes(settings, args, away)
    gateway = [HubGateway(settings, args.gateway_port)] if HubGateway.enabled() else []
    serve_forever(KnowHubServer(Runtime.open(settings), list(SERVICE_MODULES)), gateway)
    return 0


def _up_in_processes(settings: CommonSettings, args: argparse.Namespace,
                     away: list[str]) -> int:
    """The main process keeps the public port and the services not `away`; the services
    and the gateway in `away` run as its children, sharing its keys, tokens and Redis."""
    from knowhub_server.gateway.app import hub_gateway_port

    make_private_data_dir(settings.data_dir)
    settings.delegation_key_file = (settings.delegation_key_file
                                    or ensure_key_file(settings.data_dir))
    runtime = Runtime.open(settings)
    settings.redis_url = runtime.redis_url()
    services_away = [s for s in away if s != GATEWAY]
    server = KnowHubServer(runtime, [s for s in SERVICE_MODULES if s not in services_away],
                           forwarded=services_away)

    def env() -> dict[str, str]:  # every service at the main process's loopback port
        main = f"127.0.0.1:{server.peer_port}"
        return child_env(settings, **{f"KNOWHUB_{s.upper()}_ADDRESS": main
                                      for s in SERVICE_MODULES})

    children = [ChildProcess(service, [service, "--host", "127.0.0.1", "--port", "0"], env,
                             reached=functools.partial(runtime.peers.host_elsewhere, service))
                for service in services_away]
    if GATEWAY in away:
        port = hub_gateway_port(settings, args.gateway_port)
        children.append(ChildProcess(GATEWAY, [GATEWAY, "--port", str(port)], env))
    serve_forever(server, children)
    return 1 if any(child.failed for child in children) else 0


def _serve(settings: CommonSettings, args: argparse.Namespace) -> int:
    if args.parent_pid is not None:
        die_with_parent(args.parent_pid)
    if args.service == "gateway":
        from knowhub_server.gateway.app import serve_gateway

        return serve_gateway(CommonSettings(), args.host, args.port)
    if args.service == FRONT:
        return _serve_front(settings)
    serve_forever(KnowHubServer(Runtime.open(settings), [args.service]))
    return 0


def _serve_front(settings: CommonSettings) -> int:
    """One public port for services that each run elsewhere (the compose stack's gRPC
    entry): it hosts none of them, so it opens no store."""
    services = list(SERVICE_MODULES)
    missing = [f"KNOWHUB_{s.upper()}_ADDRESS" for s in services
               if not getattr(settings, f"{s}_address")]
    if missing:
        raise ValueError(f"the front passes every call on: set {', '.join(missing)}")
    # Hosting no service it needs no Qdrant client (the embedded store opens on first use).
    no_store = settings.model_copy(update={"qdrant_url": None})
    serve_forever(KnowHubServer(Runtime.open(no_store), [], forwarded=services))
    return 0


def _health(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub_server.common.health_probe import check, probe_address
    from knowhub_server.common.tls import peer_ca

    address = args.address or probe_address(settings.host, settings.port)
    serving, line = check(address, args.service, tls_ca=peer_ca(settings),
                          timeout=args.timeout)
    print(line, file=sys.stdout if serving else sys.stderr)
    return 0 if serving else 1


def _reindex(settings: CommonSettings, _args: argparse.Namespace) -> int:
    from knowhub_server.common.embedding import DenseEmbedder
    from knowhub_server.dream.memory.store import reindex as reindex_memory
    from knowhub_server.knowledge.store import reindex as reindex_knowledge

    store = open_vector_store(settings)
    embedder = DenseEmbedder.from_settings(settings)
    try:
        for name, reindex in (("knowledge", reindex_knowledge), ("memory", reindex_memory)):
            count = reindex(store, embedder, progress=lambda n, name=name: print(
                f"\r{name}: {n} records re-embedded", end="", flush=True))
            print(f"\r{name}: {count} records re-embedded; done", flush=True)
    finally:
        store.close()
    return 0


def _rotate_key(settings: CommonSettings, args: argparse.Namespace) -> int:
    from knowhub import KnowHub, errors

    address = args.address or settings.resource_address or f"{settings.host}:{settings.port}"
    token = args.token or os.environ.get("KNOWHUB_TOKEN") or None
    try:
        with KnowHub(resource=address, token=token, timeout=3600) as kh:
            rotation = kh.resources.rotate_master_key()
    except errors.KnowHubError as error:
        print(f"knowhub: key rotation failed: {error}", file=sys.stderr)
        return 1
    made = "a new key" if rotation.created else "the key in KNOWHUB_MASTER_KEY"
    print(f"active master key {rotation.active_key_id} ({made}); {rotation.rewrapped} data "
          f"keys re-wrapped; {rotation.remaining} still under another key")
    return 0


def _generate_key(_settings: CommonSettings, _args: argparse.Namespace) -> int:
    from knowhub_server.resource.crypto import generate_key

    print(generate_key())
    return 0


if __name__ == "__main__":
    sys.exit(main())
