"""A hub that is not there: the SDK's error names the address it tried and how to start
one, instead of gRPC's connection trace."""

from __future__ import annotations

import pytest
from knowhub import KnowHub, errors

from knowhub_server.common.runtime.health_probe import check
from tests.support.ports import free_port


def test_no_hub_at_the_address_says_how_to_start_one() -> None:
    address = f"127.0.0.1:{free_port()}"
    with KnowHub(address, token="t", timeout=5) as kh, pytest.raises(errors.Unavailable) as refused:
        kh.knowledge.list()
    assert refused.value.message.startswith(
        f"no KnowHub hub answers at {address}: start one with `knowhub up`, or give the "
        "address of yours (KNOWHUB_TARGET, --target, target=)"
    ), refused.value.message
    serving, line = check(address, "", timeout=3)
    assert not serving and "start one with `knowhub up`" in line
