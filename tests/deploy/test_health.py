"""`knowhub health`: one gRPC health check, one line, exit 0 only when SERVING."""

from __future__ import annotations

import pytest

from knowhub_server.cli import main
from knowhub_server.common.runtime.health_probe import health_name, probe_address
from knowhub_server.composition import SERVICE_NAMES, services
from tests.conftest import StartHub
from tests.support.harness import Harness


def test_a_short_name_is_the_registered_service_name() -> None:
    assert [health_name(s.name) for s in services()] == [s.full_name for s in services()]
    assert [s.name for s in services()] == list(SERVICE_NAMES)


def test_a_serving_service_exits_0(hub: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "--target", hub.address, "--service", "cognition"]) == 0
    assert capsys.readouterr().out == f"cognition at {hub.address}: SERVING\n"
    assert main(["health", "--target", hub.address]) == 0
    assert capsys.readouterr().out == f"server at {hub.address}: SERVING\n"


def test_a_service_the_server_does_not_run_exits_1(
    start_hub: StartHub, capsys: pytest.CaptureFixture[str]
) -> None:
    knowledge_only = start_hub(services=["knowledge"])
    assert main(["health", "--target", knowledge_only.address, "--service", "dream"]) == 1
    # stderr also carries the server's own log lines (same process); the probe prints one.
    assert (
        f"dream at {knowledge_only.address}: not served there (NOT_FOUND)"
        in capsys.readouterr().err.splitlines()
    )


def test_the_default_address_is_this_process_port_on_loopback() -> None:
    assert probe_address("0.0.0.0", 50051) == "127.0.0.1:50051"
    assert probe_address("10.1.2.3", 7000) == "10.1.2.3:7000"
