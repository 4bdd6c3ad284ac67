"""Store text made safe for the terminal: never markup, controls made visible.

Every string that comes from a store (names, titles, rationale, props) reaches a widget
through :func:`plain` as a ``rich.text.Text``, which Textual never parses as markup, so
``[/]`` cannot crash the app and ``[@click=app.quit]`` cannot quit it. Control,
bidi and zero-width characters are marked by the core's one safe-text function
(:func:`kgai_tui.core.safe_text.visible`), the same marks the CLI prints.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from kgai_tui.core.safe_text import one_line, visible

__all__ = ["one_line", "plain", "visible"]


def plain(s: str, style: str | Style = "", *, keep_newlines: bool = False) -> Text:
    """Return store text as a literal ``Text`` with controls made visible."""
    return Text(visible(s, keep_newlines=keep_newlines), style=style)
