"""Times are float seconds since the epoch (UTC) inside KnowHub, Timestamps on the wire."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from google.protobuf.timestamp_pb2 import Timestamp

from knowhub_server.common.base.errors import InvalidArgument

# Timestamps a caller may send: 1970 up to the year 9999.
_MAX_SECONDS = 253402300799


def now() -> float:
    """Whole microseconds: such times survive the store's float conversion unchanged, so
    a record read back carries the very times its write returned."""
    return round(time.time(), 6)


def to_timestamp(seconds: float) -> Timestamp:
    return Timestamp(**timestamp_fields(seconds))


def optional_timestamp(seconds: float) -> Timestamp | None:
    """A Timestamp, None (unset) for 0: a time that has not come yet."""
    return to_timestamp(seconds) if seconds else None


def timestamp_fields(seconds: float) -> dict[str, int]:
    """A Timestamp's fields, to the microsecond: a float near 1.7e9 s resolves about
    0.24 µs, so finer digits are noise, and whole microseconds survive a client's datetime
    and come back equal. A dict, for building the Timestamp inside its parent message:
    protobuf builds a nested message from a dict in place, but copies a message passed in."""
    whole, micros = divmod(round(seconds * 1e6), 1_000_000)
    return {"seconds": whole, "nanos": micros * 1000}


def from_timestamp(stamp: Timestamp, field: str) -> float | None:
    """Seconds of a Timestamp the caller sent, None when unset; range-checked."""
    if stamp.seconds == 0 and stamp.nanos == 0:
        return None
    if not 0 <= stamp.seconds <= _MAX_SECONDS or not 0 <= stamp.nanos < 1_000_000_000:
        raise InvalidArgument(field, "is not a valid time (1970-01-01 to 9999-12-31)")
    # Parsed from decimal digits, so a time KnowHub gave out maps back to the very float
    # it stored (`seconds + nanos / 1e9` can land one unit of precision away).
    return float(f"{stamp.seconds}.{stamp.nanos:09d}")


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")
