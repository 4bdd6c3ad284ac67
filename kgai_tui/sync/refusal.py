"""What a sync refused from a remote, named safely for a terminal and for JSON.

A remote chooses its path names, so a name may hold escape sequences, bidi overrides
or invalid UTF-8. :func:`shown_path` keeps printable ASCII and writes everything else
as a visible ``\\xNN``/``\\uNNNN`` escape, so a refusal can be printed as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["MAX_LISTED", "Refusal", "refusal_summary", "shown_path"]

#: Refusals kept for the report; a tree of a million junk paths is counted, not listed.
MAX_LISTED: Final = 100
_MAX_NAME: Final = 200
_IN_SUMMARY: Final = 3


@dataclass(frozen=True, slots=True)
class Refusal:
    """One path (or a shard's lines) the sync did not take, and why."""

    path: str
    reason: str

    def to_obj(self) -> dict[str, Any]:
        """The JSON shape: ``{"path", "reason"}``."""
        return {"path": self.path, "reason": self.reason}


def _escape(char: str) -> str:
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return char
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown_path(raw: bytes) -> str:
    """A path from git as printable ASCII (escapes for the rest), at most 200 chars."""
    text = raw.decode("utf-8", "backslashreplace")
    shown = "".join(map(_escape, text))
    return shown if len(shown) <= _MAX_NAME else shown[: _MAX_NAME - 1] + "…"


def refusal_summary(refused: tuple[Refusal, ...], total: int) -> str:
    """One line for ``sync.detail``: how many, and the first few with their reasons."""
    if not total:
        return ""
    named = "; ".join(f"{r.path} ({r.reason})" for r in refused[:_IN_SUMMARY])
    more = total - min(len(refused), _IN_SUMMARY)
    tail = f"; and {more} more" if more > 0 else ""
    return f"refused {total} path(s) from the remote: {named}{tail}"
