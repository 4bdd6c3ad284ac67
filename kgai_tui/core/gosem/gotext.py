"""Go's string semantics (case mapping, white space, RFC 3339 time) for byte-exact ids.

The reference engine is written in Go, and ids hash Go-normalised text. Python's own
``str.lower``/``str.split`` differ on a handful of code points (U+0130, final sigma,
U+001C..U+001F), so every id-bearing string goes through these helpers instead.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Final

#: Go's ``unicode.IsSpace`` set (Latin-1 specials plus the White_Space property).
GO_SPACE_CHARS: Final = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_SPACE_RUN: Final = re.compile("[" + re.escape(GO_SPACE_CHARS) + "]+")


def _lower_rune(c: str) -> str:
    low = c.lower()
    if len(low) == 1:
        return low
    return "i" if c == "\u0130" else c


def _upper_rune(c: str) -> str:
    up = c.upper()
    return up if len(up) == 1 else c


def go_lower(s: str) -> str:
    """Lower-case like Go's ``strings.ToLower``: one rune to one rune, no context."""
    if s.isascii():
        return s.lower()
    return "".join(map(_lower_rune, s))


def go_upper(s: str) -> str:
    """Upper-case like Go's ``strings.ToUpper``: ``ß`` stays ``ß``."""
    if s.isascii():
        return s.upper()
    return "".join(map(_upper_rune, s))


def go_fields(s: str) -> list[str]:
    """Split on runs of Go white space, like ``strings.Fields``."""
    return [part for part in _SPACE_RUN.split(s) if part]


def go_trim_space(s: str) -> str:
    """Trim Go white space from both ends, like ``strings.TrimSpace``."""
    return s.strip(GO_SPACE_CHARS)


_SURROGATES: Final = re.compile("[\ud800-\udfff]")


def go_string(s: str) -> str:
    """Replace lone surrogates (undecodable bytes) with U+FFFD, as a Go string holds."""
    return _SURROGATES.sub("\ufffd", s) if _SURROGATES.search(s) else s


_PY_ONLY_SPACE: Final = re.compile("[\x1c-\x1f]")


def normalize(s: str) -> str:
    """Normalise a kind or name as the reference ``Normalize`` does (spec 2.5)."""
    if s.isascii() and not _PY_ONLY_SPACE.search(s):
        # ASCII fast path: Python's split() agrees with Go's Fields except that it
        # also splits on \x1c-\x1f, which the search above rules out.
        return " ".join(s.lower().split())
    return " ".join(go_fields(go_lower(go_string(s))))


def go_fold_key(s: str) -> str:
    """Fold a JSON object key as Go's encoding/json does when matching struct fields."""
    if s.isascii():
        return s.upper()
    return "".join(
        ch.upper() if ch.isascii() else _upper_rune(_lower_rune(ch)) for ch in s
    )


# Go's time.Parse reads ASCII digits only; Python's ``\d`` on text would also take
# any Unicode decimal digit ("٢٠٢٦"), dating an event the reference leaves undated.
_RFC3339: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})\Z"
)
_NAIVE: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\Z"
)
_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, no overflow)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _valid_date(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return day <= (29 if leap else 28)
    return day <= (30 if month in (4, 6, 9, 11) else 31)


def rfc3339_epoch(s: str) -> int | None:
    """Unix seconds of what Go's ``time.Parse(time.RFC3339, s)`` accepts, else ``None``.

    Works for every year Go accepts (0000-9999, any offset), so a far-off timestamp
    never overflows; fractional seconds are dropped and a lower-case ``z`` refused.
    What every writer stamps is read with its date cached (a time index build
    parses a million of them: 3.3 s by the pattern alone).
    """
    stamp = _utc_seconds_fast(s)
    return _rfc3339_parse(s) if stamp is None else stamp


def _rfc3339_parse(s: str) -> int | None:
    """:func:`rfc3339_epoch` by the pattern: every shape Go accepts."""
    m = _RFC3339.match(s)
    if m is None:
        return None
    year, month, day, hour, minute, sec = (int(g) for g in m.groups()[:6])
    if hour > 23 or minute > 59 or sec > 59 or not _valid_date(year, month, day):
        return None
    stamp = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec
    zone = m.group(8)
    if zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        stamp -= (1 if zone[0] == "+" else -1) * (zh * 3600 + zm * 60)
    return stamp


_DAY_SECONDS: dict[str, int | None] = {}


def _utc_seconds_fast(s: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (what every writer stamps) with the date cached.

    Returns ``None`` for any other shape, so the caller parses it fully.
    """
    if len(s) != 20 or s[19] != "Z" or s[10] != "T" or s[13] != ":" or s[16] != ":":
        return None
    day = _DAY_SECONDS.get(s[:10])
    if day is None:
        if s[:10] in _DAY_SECONDS or len(_DAY_SECONDS) > 100_000:
            return None
        day = _rfc3339_parse(s[:10] + "T00:00:00Z")
        _DAY_SECONDS[s[:10]] = day
        if day is None:
            return None
    hh, mm, ss = s[11:13], s[14:16], s[17:19]
    if not (hh + mm + ss).isascii() or not (hh + mm + ss).isdigit():
        return None
    hour, minute, sec = int(hh), int(mm), int(ss)
    if hour > 23 or minute > 59 or sec > 59:
        return None
    return day + hour * 3600 + minute * 60 + sec


def recorded_epoch(s: str) -> int | None:
    """Unix seconds of a stored ``recorded_at`` as the projection reads it.

    RFC3339 first, then ``YYYY-MM-DDTHH:MM:SS`` (UTC), then ``YYYY-MM-DD``.
    """
    stamp = rfc3339_epoch(s)
    if stamp is not None:
        return stamp
    m = _NAIVE.match(s) or _DATE.match(s)
    if m is None:
        return None
    parts = [int(g) for g in m.groups()] + [0, 0, 0]
    year, month, day, hour, minute, sec = parts[:6]
    if hour > 23 or minute > 59 or sec > 59 or not _valid_date(year, month, day):
        return None
    return _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The (year, month, day) of a day count since 1970-01-01 (any year)."""
    days += 719468
    era = (days if days >= 0 else days - 146096) // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return (yoe + era * 400 + (month <= 2), month, day)


def format_epoch(stamp: int) -> str:
    """Format Unix seconds as Go's RFC3339 in UTC (``2026-01-02T03:04:05Z``)."""
    days, rest = divmod(stamp, 86400)
    return _day_text(days) + _clock_text(rest)


@cache  # at most 86,400 (2 MB): a day's seconds
def _clock_text(rest: int) -> str:
    """``HH:MM:SSZ`` of a second of the day."""
    hour, rest = divmod(rest, 3600)
    minute, sec = divmod(rest, 60)
    return f"{hour:02d}:{minute:02d}:{sec:02d}Z"


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    """``YYYY-MM-DDT`` of a day count since 1970-01-01: a listing of half a million
    decisions spans a few hundred days (the date was half of each format)."""
    year, month, day = _civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}T"


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_to_datetime(stamp: int) -> datetime | None:
    """An aware UTC datetime for Unix seconds, or ``None`` outside years 1-9999."""
    try:
        return _EPOCH + timedelta(seconds=stamp)
    except OverflowError:
        return None


def parse_rfc3339(s: str) -> datetime | None:
    """Parse what Go's ``time.Parse(time.RFC3339, s)`` accepts; ``None`` otherwise.

    Fractional seconds are dropped, a lower-case ``z`` is refused, and the result is
    an aware UTC datetime with whole seconds (``None`` too when Python's datetime
    cannot hold the year, e.g. year 0; use :func:`rfc3339_epoch` for those).
    """
    stamp = rfc3339_epoch(s)
    return None if stamp is None else epoch_to_datetime(stamp)


def parse_recorded(s: str) -> datetime | None:
    """Parse a stored ``recorded_at`` as the projection does (RFC3339, naive, date)."""
    stamp = recorded_epoch(s)
    return None if stamp is None else epoch_to_datetime(stamp)


def format_rfc3339(moment: datetime) -> str:
    """Format an aware datetime as Go's ``time.RFC3339`` in UTC with whole seconds."""
    m = moment.astimezone(UTC)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
        f"T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"
    )


_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(s: str) -> str:
    """Quote like Go's ``%q`` (``strconv.Quote``): one line, printable runes kept."""
    out = ['"']
    for ch in s:
        short = _SHORT_ESCAPES.get(ch)
        if short is not None:
            out.append(short)
        elif ch == " " or (ch.isprintable() and ch != "\x7f"):
            out.append(ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)
