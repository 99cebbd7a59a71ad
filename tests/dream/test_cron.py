"""Cron schedules: the expressions accepted (five standard fields, via cronsim) and the
slots a schedule fires at, across time zones and clock changes."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.dream.runs.domain import Schedule, validate_cron

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def epoch(text: str, zone: str = "UTC") -> float:
    moment = datetime.fromisoformat(text)
    tz = timezone.utc if zone == "UTC" else ZoneInfo(zone)
    return moment.replace(tzinfo=tz).timestamp()


@pytest.mark.parametrize(
    "expression",
    [
        "*/15 9-17 * * MON-FRI",
        "5/20 * * * *",
        "0,30 8,20 1,15 * *",
        "0 0 1 jan-Mar,dec *",
        "0 0 * * 7",
        "0 0 * * 1-7/2",
    ],
)
def test_standard_expressions_are_accepted(expression: str) -> None:
    assert validate_cron(expression) == expression


@pytest.mark.parametrize(
    "expression, problem",
    [
        ("* * * *", "has 4 fields; a cron expression has 5"),
        ("* * * * * *", "has 6 fields"),
        ("60 * * * *", "bad minute"),
        ("* 24 * * *", "bad hour"),
        ("* * 0 * *", "bad day-of-month"),
        ("* * * 13 *", "bad month"),
        ("* * * * 8", "bad day-of-week"),
        ("*/0 * * * *", "bad minute"),
        ("* 5-1 * * *", "bad hour"),
        ("* * * foo *", "bad month"),
        ("0 0 30 2 *", "bad day-of-month"),  # never comes
        ("0 0 31 4,6 *", "bad day-of-month"),
    ],
)
def test_a_wrong_expression_is_refused_naming_its_field(expression: str, problem: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_cron(expression)
    assert refused.value.field == "cron" and problem in refused.value.message


def schedule(**fields: object) -> Schedule:
    values: dict[str, object] = {
        "schedule_id": "s",
        "agent_id": "a",
        "phases": [],
        "requested_by": "user:u",
        "sees_all": False,
        "created_at": 0.0,
        "start_time": epoch("2026-01-01T00:00"),
    }
    return Schedule(**{**values, **fields})  # type: ignore[arg-type]


def test_interval_slots_count_from_the_start_time() -> None:
    every = schedule(every_minutes=10)
    start = every.start_time
    assert every.latest_slot(start - 1) is None
    assert every.latest_slot(start) == start
    assert every.latest_slot(start + 1_199) == start + 600
    assert every.next_slot(start + 600) == start + 1_200
    assert every.next_slot(start - 100) == start


def test_the_latest_slot_includes_now_and_the_next_excludes_it() -> None:
    daily = schedule(cron="30 2 * * *")
    assert daily.latest_slot(epoch("2026-03-01T03:00")) == epoch("2026-03-01T02:30")
    assert daily.latest_slot(epoch("2026-03-01T02:30")) == epoch("2026-03-01T02:30")
    assert daily.latest_slot(epoch("2026-03-01T02:29:59.5")) == epoch("2026-02-28T02:30")
    assert daily.next_slot(epoch("2026-03-01T02:30")) == epoch("2026-03-02T02:30")
    leap = schedule(cron="0 12 29 2 *")
    assert leap.next_slot(epoch("2026-03-01T00:00")) == epoch("2028-02-29T12:00")


def test_both_day_fields_restricted_match_either() -> None:
    either = schedule(cron="0 0 13 * FRI")  # Friday or the 13th (Vixie cron)
    assert either.next_slot(epoch("2026-03-01T00:00")) == epoch("2026-03-06T00:00")
    assert either.next_slot(epoch("2026-03-10T00:00")) == epoch("2026-03-13T00:00")


def test_cron_slots_follow_the_time_zone_and_the_start_time() -> None:
    nine = schedule(cron="0 9 * * *", time_zone="Asia/Shanghai")
    assert nine.latest_slot(epoch("2026-03-02T02:00")) == epoch("2026-03-02T01:00")
    assert nine.next_slot(epoch("2026-03-02T02:00")) == epoch("2026-03-03T01:00")
    late = schedule(cron="0 9 * * *", start_time=epoch("2026-03-05T00:00"))
    assert late.latest_slot(epoch("2026-03-04T12:00")) is None
    assert late.next_slot(epoch("2026-03-01T00:00")) == epoch("2026-03-05T09:00")


def test_clock_changes_neither_skip_nor_repeat_a_day() -> None:
    """Berlin springs forward at 02:00 on 29 March 2026 (02:30 does not exist that day:
    the slot fires when the clock resumes, 03:00) and falls back at 03:00 on 25 October
    (02:30 happens twice: it fires once)."""
    berlin = schedule(cron="30 2 * * *", time_zone="Europe/Berlin")
    spring = berlin.next_slot(epoch("2026-03-28T12:00", "Europe/Berlin"))
    assert spring == epoch("2026-03-29T03:00", "Europe/Berlin")
    assert berlin.next_slot(spring) == epoch("2026-03-30T02:30", "Europe/Berlin")
    autumn = berlin.next_slot(epoch("2026-10-24T12:00", "Europe/Berlin"))
    following = berlin.next_slot(autumn)
    assert following is not None and following - autumn >= 23 * 3600
    assert datetime.fromtimestamp(following, ZoneInfo("Europe/Berlin")).day == 26
