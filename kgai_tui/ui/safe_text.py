"""Store text made safe for the terminal: never markup, controls made visible.

Every string that comes from a store (names, titles, rationale, props) reaches a widget
through :func:`plain` as a ``rich.text.Text``, which Textual never parses as markup, so
``[/]`` cannot crash the app and ``[@click=app.quit]`` cannot quit it. Control,
bidi and zero-width characters are marked by the core's one safe-text function
(:func:`kgai_tui.core.safe_text.visible`), the same marks the CLI prints.
"""

from __future__ import annotations

from typing import Final

from rich.style import Style
from rich.text import Text

from kgai_tui.core.safe_text import one_line, visible

__all__ = [
    "PROSE_LINES",
    "TEXT_CHARS",
    "TITLE_CHARS",
    "bounded",
    "one_line",
    "plain",
    "visible",
]

#: Characters of one store string (a title, a name, a prop) a pane lays out.
#: Whole, a title of 100,000 characters filled 2,000 lines of the details, and a
#: rationale of 100,000 lines took the decision record 5.6 s to open, the UI
#: frozen (measured); the CLI's ``--json`` prints every byte.
TEXT_CHARS: Final = 2000
#: A title's or a name's (a few lines of a pane).
TITLE_CHARS: Final = 300
#: Lines, and characters, of prose (a rationale) a pane lays out.
PROSE_LINES: Final = 400
PROSE_CHARS: Final = 40_000


def plain(s: str, style: str | Style = "", *, keep_newlines: bool = False) -> Text:
    """Return store text as a literal ``Text`` with controls made visible."""
    return Text(visible(s, keep_newlines=keep_newlines), style=style)


def bounded(
    s: str,
    style: str | Style = "",
    *,
    keep_newlines: bool = False,
    limit: int = TEXT_CHARS,
) -> Text:
    """:func:`plain`, cut to ``limit`` characters (prose: :data:`PROSE_LINES`
    lines and :data:`PROSE_CHARS`), then a dim note of how much more there is."""
    head = s[: PROSE_CHARS if keep_newlines else limit]
    if keep_newlines and head.count("\n") >= PROSE_LINES:
        head = "\n".join(head.split("\n")[:PROSE_LINES])
    out = plain(head, style, keep_newlines=keep_newlines)
    if len(head) < len(s):
        rest = s[len(head) :]
        lines = rest.count("\n")
        more = (
            f"{lines:,} more lines"
            if keep_newlines and lines
            else (f"{len(rest):,} more characters")
        )
        out.append(f" … ({more}; the CLI's --json prints it whole)", "dim")
    return out
