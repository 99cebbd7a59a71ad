"""The services the command line composes a server of: each name has its registration,
and the server is handed services, never names it must look up."""

from __future__ import annotations

import pytest

from knowhub_server.composition import SERVICE_NAMES, services, split


def test_every_service_name_has_its_registration_in_that_order() -> None:
    composed = services()
    assert [s.name for s in composed] == list(SERVICE_NAMES)
    assert len({s.full_name for s in composed}) == len(SERVICE_NAMES)


def test_an_unknown_service_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown service 'search'; choose from knowledge, "):
        services(["knowledge", "search"])


@pytest.mark.parametrize(
    ("processes", "gateway", "away"),
    [
        (1, True, []),
        (2, True, ["gateway"]),
        (3, True, ["gateway", "cognition"]),
        (2, False, ["cognition"]),
    ],
)
def test_the_gateway_leaves_the_main_process_first_then_cognition(
    processes: int, gateway: bool, away: list[str]
) -> None:
    assert split(processes, gateway=gateway) == away


def test_more_processes_than_parts_is_refused() -> None:
    with pytest.raises(ValueError, match="--processes 4: at most 3"):
        split(4, gateway=True)
