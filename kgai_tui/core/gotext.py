"""Go's string semantics (case mapping, white space, RFC 3339 time) for byte-exact ids.

The reference engine is written in Go, and ids hash Go-normalised text. Python's own
``str.lower``/``str.split`` differ on a handful of code points (U+0130, final sigma,
U+001C..U+001F), so every id-bearing string goes through these helpers instead.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
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


def normalize(s: str) -> str:
    """Normalise a kind or name as the reference ``Normalize`` does (spec 2.5)."""
    return " ".join(go_fields(go_lower(s)))


def go_fold_key(s: str) -> str:
    """Fold a JSON object key as Go's encoding/json does when matching struct fields."""
    if s.isascii():
        return s.upper()
    return "".join(
        ch.upper() if ch.isascii() else _upper_rune(_lower_rune(ch)) for ch in s
    )


_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z"
)
_NAIVE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\Z")
_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")


def parse_rfc3339(s: str) -> datetime | None:
    """Parse what Go's ``time.Parse(time.RFC3339, s)`` accepts; ``None`` otherwise.

    Fractional seconds are accepted and dropped, a lower-case ``z`` is refused, and the
    result is an aware UTC datetime with whole seconds.
    """
    m = _RFC3339.match(s)
    if m is None:
        return None
    year, month, day, hour, minute, sec = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    if hour > 23 or minute > 59 or sec > 59:
        return None
    try:
        base = datetime(year, month, day, hour, minute, sec, tzinfo=UTC)
    except ValueError:
        return None
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        base -= sign * timedelta(hours=zh, minutes=zm)
    return base


def parse_recorded(s: str) -> datetime | None:
    """Parse a stored ``recorded_at`` as the projection does (RFC3339, naive, date)."""
    parsed = parse_rfc3339(s)
    if parsed is not None:
        return parsed
    m = _NAIVE.match(s) or _DATE.match(s)
    if m is None:
        return None
    parts = [int(g) for g in m.groups()]
    try:
        if len(parts) == 6 and (parts[3] > 23 or parts[4] > 59 or parts[5] > 59):
            return None
        return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type, misc]
    except ValueError:
        return None


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
