"""Store text made safe for the terminal: never markup, controls made visible.

Every string that comes from a store (names, titles, rationale, props) reaches a widget
through :func:`plain` as a ``rich.text.Text``, which Textual never parses as markup, so
``[/]`` cannot crash the app and ``[@click=app.quit]`` cannot quit it. Control
characters (ESC, BEL, C1 controls, DEL) are shown as visible symbols instead of being
sent to the terminal.
"""

from __future__ import annotations

import re
from typing import Final

from rich.style import Style
from rich.text import Text

_BREAKS: Final = re.compile("[\n\r\t\u2028\u2029]")
_SPACES: Final = re.compile(" {2,}")
_C0_PICTURES: Final = {i: chr(0x2400 + i) for i in range(0x20)}
_TABLE: Final = {
    **_C0_PICTURES,
    0x7F: "\u2421",
    **{i: f"\\x{i:02x}" for i in range(0x80, 0xA0)},
    0x2028: "\u21b5",
    0x2029: "\u00b6",
}


def visible(s: str, *, keep_newlines: bool = False) -> str:
    """Replace control characters with visible symbols (``␛`` for ESC, ...)."""
    if s.isprintable():  # no control character at all: the common case, and fast
        return s
    if keep_newlines:
        table = dict(_TABLE)
        table.pop(0x0A)
        return s.translate(table)
    return s.translate(_TABLE)


def plain(s: str, style: str | Style = "", *, keep_newlines: bool = False) -> Text:
    """Return store text as a literal ``Text`` with controls made visible."""
    return Text(visible(s, keep_newlines=keep_newlines), style=style)


def one_line(s: str, limit: int = 0) -> str:
    """Collapse white space to one line, visible controls, optionally cut."""
    if s.isprintable() and "  " not in s and s == s.strip():
        flat = s  # already one clean line (isprintable excludes every break)
    else:
        flat = _SPACES.sub(" ", visible(_BREAKS.sub(" ", s))).strip()
    if limit and len(flat) > limit:
        return flat[: max(limit - 1, 0)] + "…"
    return flat
