"""Moments as people type and read them: ``-3m``, ``2026-03-05``, "3 months ago".

:func:`parse_moment` takes what ``as-of`` takes (RFC3339, or a date meaning the end
of that day, UTC), a date-time without a zone (UTC), ``now``, and a relative
moment back from ``now``: ``-90d``, ``-2w``, ``-12h``, ``-3m`` (calendar months,
the day clamped to the month's end) or ``-1y``. :func:`ago` says how long before
``now`` a moment is, in the largest whole unit.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import UTC, datetime, timedelta
from typing import Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.kg import parse_as_of

__all__ = ["ago", "months_back", "parse_moment"]

_RELATIVE: Final = re.compile(r"-\s*(\d{1,4})\s*([hdwmy])")
_ZONELESS: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{1,2}):(\d{2})(?::(\d{2}))?"
)
_HINT: Final = (
    "type a date (2026-03-31), a date-time (2026-03-31 14:00, UTC), now, or a "
    "moment back from now: -12h, -90d, -2w, -3m, -1y"
)


def months_back(moment: datetime, months: int) -> datetime:
    """``moment`` ``months`` calendar months earlier (the day clamped)."""
    index = moment.year * 12 + moment.month - 1 - months
    year, month = divmod(index, 12)
    day = min(moment.day, monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def parse_moment(text: str, now: datetime) -> datetime:
    """The moment ``text`` names (see the module docstring), in UTC.

    Raises:
        UsageError: nothing here parses it (the message says what does).
    """
    typed = text.strip()
    if typed.lower() == "now":
        return now
    rel = _RELATIVE.fullmatch(typed.lower())
    if rel is not None:
        count, unit = int(rel[1]), rel[2]
        if unit == "m":
            return months_back(now, count)
        if unit == "y":
            return months_back(now, 12 * count)
        hours = {"h": 1, "d": 24, "w": 24 * 7}[unit] * count
        return now - timedelta(hours=hours)
    zoneless = _ZONELESS.fullmatch(typed)
    if zoneless is not None:
        y, mo, d, h, mi, s = (int(g or 0) for g in zoneless.groups())
        try:
            return datetime(y, mo, d, h, mi, s, tzinfo=UTC)
        except ValueError:
            raise UsageError(f"no such moment {typed!r}: {_HINT}") from None
    try:
        return parse_as_of(typed).astimezone(UTC)
    except UsageError:
        raise UsageError(f"cannot read {typed!r} as a moment: {_HINT}") from None


def ago(moment: datetime, now: datetime) -> str:
    """``3 months ago``, ``12 days ago``, ``just now``, ``in 2 days``: the gap in
    its largest whole unit (a month is 30 days, a year 365)."""
    seconds = int((now - moment).total_seconds())
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in (
        (365 * 86400, "year"),
        (30 * 86400, "month"),
        (7 * 86400, "week"),
        (86400, "day"),
        (3600, "hour"),
        (60, "minute"),
    ):
        if seconds >= size:
            n = seconds // size
            words = f"{n} {unit}{'s' if n != 1 else ''}"
            return f"in {words}" if future else f"{words} ago"
    return "just now"
