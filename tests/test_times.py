"""Times on the wire: what KnowHub gives out comes back from a client equal."""

from __future__ import annotations

import random

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from knowhub.models import base as sdk

from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.times import from_timestamp, now, to_timestamp


def test_a_time_given_out_and_sent_back_through_a_datetime_is_the_same_float() -> None:
    rng = random.Random(7)
    times = [now(), *(round(rng.uniform(0, 4e9), 6) for _ in range(20_000))]
    for seconds in times:
        through_client = Timestamp()
        through_client.FromDatetime(to_timestamp(seconds).ToDatetime())  # as the SDK does
        assert from_timestamp(through_client, "updated_since") == seconds


def test_a_time_given_out_and_sent_back_through_the_sdk_is_the_same_float() -> None:
    """The SDK's own datetime conversions: a trace's updated_at sent back as updated_since
    must not come back later than itself (through a float it did, a few times in a hundred)."""
    rng = random.Random(11)
    times = [now(), *(round(rng.uniform(1e9, 4e9), 6) for _ in range(20_000))]
    for seconds in times:
        given_out = sdk.from_timestamp(to_timestamp(seconds))
        assert from_timestamp(sdk.to_timestamp(given_out), "updated_since") == seconds
        assert from_timestamp(sdk.to_timestamp(seconds), "updated_since") == seconds


def test_a_timestamp_keeps_whole_microseconds() -> None:
    assert to_timestamp(1_700_000_000.123457) == Timestamp(seconds=1_700_000_000, nanos=123_457_000)
    assert from_timestamp(Timestamp(seconds=5, nanos=7), "t") == 5.000000007


def test_an_unset_timestamp_is_none_and_one_out_of_range_is_refused_by_name() -> None:
    assert from_timestamp(Timestamp(), "updated_since") is None
    for bad in (
        Timestamp(seconds=-1),
        Timestamp(seconds=253402300800),
        Timestamp(seconds=1, nanos=-1),
        Timestamp(seconds=1, nanos=1_000_000_000),
    ):
        with pytest.raises(InvalidArgument, match="updated_since"):
            from_timestamp(bad, "updated_since")
