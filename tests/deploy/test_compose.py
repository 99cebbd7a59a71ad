"""docker-compose.yml holds together: the commands are the CLI's, the variables are
settings, the ports and addresses agree, images are pinned, Redis keeps an fsynced AOF,
the knowledge service can be scaled, and the host reaches one gRPC entry (every service),
the gateway and MCP, on loopback only."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
import yaml

from knowhub_server.cli import _parser
from knowhub_server.common.auth import TokenRegistry
from knowhub_server.common.server import SERVICE_MODULES
from tests.test_docs import settings_classes
from tests.test_server import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
KNOWHUB = sorted(SERVICE_MODULES)
SETTINGS = {f"{c.model_config.get('env_prefix', '')}{name}".upper()
            for c in settings_classes() for name in c.model_fields}
INTERPOLATION = re.compile(r"^\$\{(?P<name>\w+)(:-(?P<default>[^}]*))?\}$")
PINNED = re.compile(r"^[\w./-]+:v?\d+\.\d+\.\d+[\w.-]*$")


def environment(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in (SERVICES[service].get("environment") or {}).items()}


def resolved(value: str) -> str:
    """A `${NAME:-default}` value as compose runs it without that variable set."""
    match = INTERPOLATION.match(value)
    return (match.group("default") or "") if match else value


def port_of(service: str) -> int:
    return int(environment(service)["KNOWHUB_PORT"])


FRONT_DOORS = ("front", "gateway", "mcp")


def test_the_four_services_their_front_doors_and_the_two_stores_are_there() -> None:
    assert set(SERVICES) == {*KNOWHUB, *FRONT_DOORS, "qdrant", "redis"}


def test_the_host_reaches_grpc_rest_and_mcp_on_loopback_and_nothing_else() -> None:
    published = {name: definition["ports"] for name, definition in SERVICES.items()
                 if definition.get("ports")}
    assert published == {"front": ["127.0.0.1:50051:50051"],
                         "gateway": ["127.0.0.1:8080:8080"],
                         "mcp": ["127.0.0.1:8931:8931"]}


def test_the_front_passes_every_service_on_to_its_replicas() -> None:
    args = _parser().parse_args(SERVICES["front"]["command"])
    assert (args.command, args.service) == ("serve", "front")
    env = environment("front")
    for service in KNOWHUB:
        assert env[f"KNOWHUB_{service.upper()}_ADDRESS"] == f"dns:///{service}:50051"
        assert SERVICES["front"]["depends_on"][service] == {"condition": "service_healthy"}
    probe = _parser().parse_args(SERVICES["front"]["healthcheck"]["test"][2:])
    assert (probe.command, probe.target) == ("health", f"127.0.0.1:{port_of('front')}")


def test_the_gateway_serves_rest_the_console_and_the_docs_with_tokens() -> None:
    args = _parser().parse_args(SERVICES["gateway"]["command"])
    assert (args.command, args.service, args.host, args.port) == (
        "serve", "gateway", "0.0.0.0", 8080)
    env = environment("gateway")
    assert env["KNOWHUB_TOKENS_FILE"] == "/run/secrets/knowhub-tokens"
    assert "knowhub-tokens" in SERVICES["gateway"]["secrets"]
    for service in KNOWHUB:
        assert env[f"KNOWHUB_{service.upper()}_ADDRESS"] == f"dns:///{service}:50051"
    assert "8080" in SERVICES["gateway"]["expose"]
    assert "http://127.0.0.1:8080/openapi.json" in SERVICES["gateway"]["healthcheck"]["test"][3]


def test_mcp_speaks_streamable_http_to_the_front() -> None:
    args = _parser().parse_args(SERVICES["mcp"]["command"])
    assert (args.command, args.transport, args.mcp_host, args.mcp_port) == (
        "mcp", "http", "0.0.0.0", 8931)
    assert environment("mcp")["KNOWHUB_TARGET"] == f"dns:///front:{port_of('front')}"
    assert SERVICES["mcp"]["depends_on"]["front"] == {"condition": "service_healthy"}


@pytest.mark.parametrize("service", FRONT_DOORS)
def test_front_doors_set_only_real_settings_and_their_probes_are_python(service: str) -> None:
    unknown = sorted(set(environment(service)) - SETTINGS)
    assert not unknown, f"{service} sets variables that are no setting: {unknown}"
    test = SERVICES[service]["healthcheck"]["test"]
    if test[1] == "python":
        compile(test[3], f"{service} healthcheck", "exec")


@pytest.mark.parametrize("service", KNOWHUB)
def test_each_service_runs_a_real_knowhub_command(service: str) -> None:
    command = SERVICES[service]["command"]
    args = _parser().parse_args(command)
    assert (args.command, args.service) == ("serve", service)
    assert SERVICES[service]["build"] == "."
    assert (REPO / "Dockerfile").is_file()


@pytest.mark.parametrize("service", KNOWHUB)
def test_each_healthcheck_is_a_grpc_health_probe_of_its_own_service(service: str) -> None:
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[:2] == ["CMD", "knowhub"]
    args = _parser().parse_args(test[2:])
    assert (args.command, args.service) == ("health", service)
    # Its own container on the port it listens on, never a replica behind the name.
    assert args.target == f"127.0.0.1:{port_of(service)}"


@pytest.mark.parametrize("service", KNOWHUB)
def test_every_variable_is_a_real_setting_with_a_valid_value(
        service: str, monkeypatch: pytest.MonkeyPatch) -> None:
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
        monkeypatch.setenv(name, resolved(value))
    for settings in settings_classes():
        settings()  # raises if a value is not valid for its setting


@pytest.mark.parametrize("service", KNOWHUB)
def test_ports_and_addresses_agree(service: str) -> None:
    definition = SERVICES[service]
    port = port_of(service)
    assert environment(service)["KNOWHUB_HOST"] == "0.0.0.0"
    assert str(port) in [str(p) for p in definition.get("expose", [])]
    for mapping in definition.get("ports", []):
        assert mapping.startswith("127.0.0.1:"), "publish on the host's loopback only"
        assert mapping.rsplit(":", 1)[1] == str(port)
    for other in KNOWHUB:  # every service finds every other one where it listens
        address = environment(service)[f"KNOWHUB_{other.upper()}_ADDRESS"]
        assert address == f"dns:///{other}:{port_of(other)}", \
            "dns:/// so calls spread over every replica (round-robin)"


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


def test_redis_keeps_an_fsynced_append_only_file_on_a_volume() -> None:
    command = " ".join(SERVICES["redis"]["command"])
    assert "--appendonly yes" in command
    assert "--appendfsync always" in command
    assert any(v.endswith(":/data") for v in SERVICES["redis"]["volumes"])
    assert any(v.endswith(":/qdrant/storage") for v in SERVICES["qdrant"]["volumes"])
    named = {v.split(":", 1)[0] for d in SERVICES.values() for v in d.get("volumes", [])}
    assert named <= set(COMPOSE["volumes"])


def test_knowledge_can_be_scaled() -> None:
    knowledge = SERVICES["knowledge"]
    assert "ports" not in knowledge, "a fixed host port collides between replicas"
    assert "container_name" not in knowledge
    assert "volumes" not in knowledge, "replicas keep no local state"


def test_a_public_bind_comes_with_the_mounted_tokens_file() -> None:
    secret = COMPOSE["secrets"]["knowhub-tokens"]["file"]
    assert secret == "./deploy/tokens.json"
    assert "deploy/tokens.json" in (REPO / ".gitignore").read_text().splitlines()
    for service in KNOWHUB:
        assert "knowhub-tokens" in SERVICES[service]["secrets"]
        assert environment(service)["KNOWHUB_TOKENS_FILE"] == "/run/secrets/knowhub-tokens"
    example = TokenRegistry.from_file(REPO / "deploy/tokens.example.json")
    dream = example.principal_for("replace-with-a-long-random-dream-token")
    assert dream is not None and "dreamer" in dream.roles
    assert "KNOWHUB_DREAM_SERVICE_TOKEN" in environment("dream")


def test_the_dockerignore_keeps_secrets_and_the_virtualenv_out() -> None:
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    for entry in (".git", ".venv", ".knowhub", "deploy", "tests"):
        assert entry in ignored


def test_no_service_listens_on_a_port_another_publishes() -> None:
    published = [m.split(":")[1] for d in SERVICES.values() for m in d.get("ports", [])]
    assert len(published) == len(set(published))
