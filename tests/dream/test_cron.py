"""The cron parser (five standard fields) and the slots a schedule fires at."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from services.common.errors import InvalidArgument
from services.dream.cron import parse
from services.dream.dreams import Schedule


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def test_fields_take_stars_numbers_ranges_steps_lists_and_names() -> None:
    cron = parse("*/15 9-17 * * MON-FRI")
    assert sorted(cron.minutes) == [0, 15, 30, 45]
    assert sorted(cron.hours) == list(range(9, 18))
    assert sorted(cron.weekdays) == [1, 2, 3, 4, 5] and len(cron.days) == 31
    assert sorted(parse("5/20 * * * *").minutes) == [5, 25, 45]
    assert sorted(parse("0,30 8,20 1,15 * *").hours) == [8, 20]
    assert sorted(parse("0 0 1 jan-Mar,dec *").months) == [1, 2, 3, 12]
    assert sorted(parse("0 0 * * 7").weekdays) == [0]  # 7 is Sunday too
    assert sorted(parse("0 0 * * 1-7/2").weekdays) == [0, 1, 3, 5]


@pytest.mark.parametrize("expression, problem", [
    ("* * * *", "has 4 fields; a cron expression has 5"),
    ("* * * * * *", "has 6 fields"),
    ("60 * * * *", "minute '60' is outside 0-59"),
    ("* 24 * * *", "hour '24' is outside 0-23"),
    ("* * 0 * *", "day-of-month '0' is outside 1-31"),
    ("* * * 13 *", "month '13' is outside 1-12"),
    ("* * * * 8", "day-of-week '8' is outside 0-7"),
    ("*/0 * * * *", "minute '*/0': a step must be 1 or more"),
    ("* 5-1 * * *", "hour '5-1': the range '5-1' runs backwards"),
    ("* * * foo *", "month: 'foo' is not a value (a number or a name)"),
    ("1,,2 * * * *", "minute: '' is not a value"),
    ("* * * * MON/x", "day-of-week: 'x' is not a step"),
    ("0 0 30 2 *", "never fires"),
    ("0 0 31 4,6 *", "never fires"),
])
def test_a_wrong_field_is_named(expression: str, problem: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse(expression)
    assert refused.value.field == "cron" and problem in refused.value.message


def test_latest_and_following_find_the_neighbouring_minutes() -> None:
    cron = parse("30 2 * * *")
    assert cron.latest(at("2026-03-01T03:00")) == at("2026-03-01T02:30")
    assert cron.latest(at("2026-03-01T02:30")) == at("2026-03-01T02:30")
    assert cron.latest(at("2026-03-01T02:29:59")) == at("2026-02-28T02:30")
    assert cron.following(at("2026-03-01T02:30")) == at("2026-03-02T02:30")
    leap = parse("0 12 29 2 *")
    assert leap.following(at("2026-03-01T00:00")) == at("2028-02-29T12:00")
    assert leap.latest(at("2026-03-01T00:00")) == at("2024-02-29T12:00")


def test_both_day_fields_restricted_match_either() -> None:
    either = parse("0 0 13 * FRI")  # Friday or the 13th (Vixie cron)
    assert either.following(at("2026-03-01T00:00")) == at("2026-03-06T00:00")  # a Friday
    assert either.following(at("2026-03-10T00:00")) == at("2026-03-13T00:00")  # the 13th
    only_13th = parse("0 0 13 * *")
    assert only_13th.following(at("2026-03-01T00:00")) == at("2026-03-13T00:00")
    stepped = parse("0 0 */2 * FRI")  # a day field starting with * counts as unrestricted
    assert stepped.following(at("2026-03-01T00:00")) == at("2026-03-13T00:00")


def schedule(**fields: object) -> Schedule:
    values: dict[str, object] = {"schedule_id": "s", "agent_id": "a", "phases": [],
                                 "requested_by": "user:u", "sees_all": False,
                                 "created_at": 0.0, "start_time": epoch("2026-03-01T00:00")}
    return Schedule(**{**values, **fields})  # type: ignore[arg-type]


def test_interval_slots_count_from_the_start_time() -> None:
    every = schedule(every_minutes=10)
    start = every.start_time
    assert every.latest_slot(start - 1) is None
    assert every.latest_slot(start) == start
    assert every.latest_slot(start + 1_199) == start + 600
    assert every.next_slot(start + 600) == start + 1_200
    assert every.next_slot(start - 100) == start


def test_cron_slots_follow_the_time_zone_and_the_start_time() -> None:
    nine = schedule(cron="0 9 * * *", time_zone="Asia/Shanghai")
    assert nine.latest_slot(epoch("2026-03-02T02:00")) == epoch("2026-03-02T01:00")
    assert nine.next_slot(epoch("2026-03-02T02:00")) == epoch("2026-03-03T01:00")
    late = schedule(cron="0 9 * * *", start_time=epoch("2026-03-05T00:00"))
    assert late.latest_slot(epoch("2026-03-04T12:00")) is None
    assert late.next_slot(epoch("2026-03-01T00:00")) == epoch("2026-03-05T09:00")
