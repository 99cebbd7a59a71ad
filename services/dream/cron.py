"""Cron expressions: the standard five fields and the minutes they name.

`minute hour day-of-month month day-of-week`, each `*`, a number, a range `a-b`, a step
`*/n`, `a-b/n` or `a/n` (from a to the field's end), or a comma-separated list of those.
Months and weekdays may also be named (JAN-DEC, SUN-SAT); weekday 0 and 7 are Sunday. As
in Vixie cron, when both day fields are restricted (neither starts with `*`) a day
matches if either does; otherwise both must.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from services.common.errors import InvalidArgument

FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12),
          ("day-of-week", 0, 7))
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAMES = {"month": {n: i for i, n in enumerate(_MONTHS, 1)},
          "day-of-week": {n: i for i, n in enumerate(_WEEKDAYS)}}
# The longest gap between two matching days: 29 February with a weekday that is `*`
# recurs within eight years (2096 -> 2104).
SEARCH_DAYS = 366 * 8 + 1
_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 (Sunday) to 6
    days_restricted: bool
    weekdays_restricted: bool

    def matches_day(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        by_day = day.day in self.days
        by_weekday = day.isoweekday() % 7 in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return by_day or by_weekday
        return by_day and by_weekday

    def latest(self, moment: datetime) -> datetime | None:
        """The latest matching minute at or before `moment` (naive, wall-clock time)."""
        day, hours = moment.date(), sorted(self.hours, reverse=True)
        for _ in range(SEARCH_DAYS):
            if self.matches_day(day):
                last = (moment.hour, moment.minute) if day == moment.date() else (23, 59)
                for hour in (h for h in hours if h <= last[0]):
                    fitting = [m for m in self.minutes if hour < last[0] or m <= last[1]]
                    if fitting:
                        return datetime.combine(day, time(hour, max(fitting)))
            day -= timedelta(days=1)
        return None

    def following(self, moment: datetime) -> datetime | None:
        """The earliest matching minute after `moment` (naive, wall-clock time)."""
        start = moment.replace(second=0, microsecond=0) + _MINUTE
        day, hours = start.date(), sorted(self.hours)
        for _ in range(SEARCH_DAYS):
            if self.matches_day(day):
                first = (start.hour, start.minute) if day == start.date() else (0, 0)
                for hour in (h for h in hours if h >= first[0]):
                    fitting = [m for m in self.minutes if hour > first[0] or m >= first[1]]
                    if fitting:
                        return datetime.combine(day, time(hour, min(fitting)))
            day += timedelta(days=1)
        return None


def parse(expression: str, field: str = "cron") -> Cron:
    """The expression's sets of minutes, hours, days, months and weekdays; INVALID_ARGUMENT
    naming `field` and the cron field at fault, also for a date that never comes."""
    parts = expression.split()
    if len(parts) != len(FIELDS):
        raise InvalidArgument(field, f"{expression[:100]!r} has {len(parts)} fields; a cron "
                              "expression has 5: minute hour day-of-month month day-of-week")
    values = [_field(part, name, low, high, field)
              for part, (name, low, high) in zip(parts, FIELDS, strict=True)]
    minutes, hours, days, months, weekdays = values
    cron = Cron(frozenset(minutes), frozenset(hours), frozenset(days), frozenset(months),
                frozenset(w % 7 for w in weekdays), days_restricted=not parts[2].startswith("*"),
                weekdays_restricted=not parts[4].startswith("*"))
    if cron.following(datetime(2000, 1, 1)) is None:
        raise InvalidArgument(field, f"day-of-month {parts[2]!r} never falls in month "
                              f"{parts[3]!r}: the expression never fires")
    return cron


def _field(part: str, name: str, low: int, high: int, field: str) -> set[int]:
    found: set[int] = set()
    for item in part.split(","):
        span, _, step_text = item.partition("/")
        step = _number(step_text, name, field, "step") if step_text else 1
        if step < 1:
            raise InvalidArgument(field, f"{name} {part!r}: a step must be 1 or more")
        if span == "*":
            first, last = low, high
        elif "-" in span:
            start, _, end = span.partition("-")
            first, last = _value(start, name, low, high, field), _value(end, name, low, high,
                                                                        field)
            if first > last:
                raise InvalidArgument(field, f"{name} {part!r}: the range {span!r} runs "
                                      "backwards")
        else:
            first = _value(span, name, low, high, field)
            last = high if step_text else first
        found.update(range(first, last + 1, step))
    return found


def _value(token: str, name: str, low: int, high: int, field: str) -> int:
    named = _NAMES.get(name, {}).get(token.lower())
    value = named if named is not None else _number(token, name, field, "value")
    if not low <= value <= high:
        raise InvalidArgument(field, f"{name} {token!r} is outside {low}-{high}")
    return value


def _number(token: str, name: str, field: str, what: str) -> int:
    if not token.isdigit() or not token.isascii():
        raise InvalidArgument(field, f"{name}: {token!r} is not a {what} (a number"
                              + (" or a name" if name in _NAMES and what == "value" else "")
                              + ")")
    return int(token)
