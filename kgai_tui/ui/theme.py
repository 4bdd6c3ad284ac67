"""The explorer's colours, taken from the running Textual theme.

The render functions stay pure: they take a :class:`Palette` of Rich styles, which the
app builds from its theme's variables (``$text-success``, ``$text-error``,
``$text-warning``, ``$text-accent``, ``$text-primary``, ``$success``, ``$error``) and
builds again whenever the theme changes. :data:`ANSI` (the terminal's own colours)
serves where no app is at hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rich.style import Style
from rich.text import Text
from textual.color import Color, ColorParseError

from kgai_tui.core.reads.legend import MARKS, Status

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["ANSI", "Palette", "palette_from_variables", "palette_of"]


@dataclass(frozen=True, slots=True)
class Palette:
    """What each mark of the explorer looks like (Rich styles, never markup)."""

    head: Style
    """A decision in force."""
    contested: Style
    """An element with two or more decisions in force, and its heads."""
    dead_end: Style
    """A decision with no authority anywhere (a provenance-only note)."""
    link: Style
    """A link kind."""
    field: Style
    """A prop key, a mutation's op, an author, a key on the help screen."""
    new: Style
    """An element new since the previous slider position."""
    ok: Style
    """Good news: no open conflict, every shard sound."""
    error: Style
    """Bad news: a failed open, problems found."""
    ok_badge: Style
    """The header's ``✓ healthy`` badge."""
    error_badge: Style
    """The header's ``✗ n problem(s)`` badge."""

    def of(self, status: Status) -> Style:
        """The style of a status's mark (the one legend: ``core.reads.legend``)."""
        if status is Status.IN_FORCE:
            return self.head
        if status is Status.CONTESTED:
            return self.contested
        if status is Status.DEAD_END:
            return self.dead_end
        return _QUIET

    def mark(self, status: Status) -> Text:
        """The status's mark, in its style."""
        return Text(MARKS[status], self.of(status))


_QUIET: Final = Style(dim=True)
"""Superseded and no-authority marks: present, not loud."""


ANSI: Final = Palette(
    head=Style.parse("bold green"),
    contested=Style.parse("bold red"),
    dead_end=Style.parse("italic yellow"),
    link=Style.parse("magenta"),
    field=Style.parse("cyan"),
    new=Style.parse("bold green"),
    ok=Style.parse("green"),
    error=Style.parse("bold red"),
    ok_badge=Style.parse("bold black on green"),
    error_badge=Style.parse("bold white on red"),
)
"""The terminal's sixteen colours: the look without a theme (unit tests, defaults)."""


def _colour(variables: Mapping[str, str], name: str) -> Color | None:
    """The theme variable ``name`` as a colour, ``None`` when missing or not a colour."""
    value = variables.get(name)
    if not value:
        return None
    try:
        return Color.parse(value)
    except ColorParseError:
        return None


def _text(
    variables: Mapping[str, str],
    name: str,
    fallback: Style,
    *,
    bold: bool | None = None,
    italic: bool | None = None,
) -> Style:
    colour = _colour(variables, name)
    if colour is None:
        return fallback
    return Style(color=colour.rich_color, bold=bold, italic=italic)


def _badge(variables: Mapping[str, str], name: str, fallback: Style) -> Style:
    colour = _colour(variables, name)
    if colour is None:
        return fallback
    ink = colour.get_contrast_text(1.0)
    return Style(bold=True, color=ink.rich_color, bgcolor=colour.rich_color)


def palette_from_variables(variables: Mapping[str, str]) -> Palette:
    """The palette of a theme, from its CSS variables (``App.get_css_variables()``).

    A variable that is missing or not a colour keeps that mark's :data:`ANSI` style.
    """
    return Palette(
        head=_text(variables, "text-success", ANSI.head, bold=True),
        contested=_text(variables, "text-error", ANSI.contested, bold=True),
        dead_end=_text(variables, "text-warning", ANSI.dead_end, italic=True),
        link=_text(variables, "text-accent", ANSI.link),
        field=_text(variables, "text-primary", ANSI.field),
        new=_text(variables, "text-success", ANSI.new, bold=True),
        ok=_text(variables, "text-success", ANSI.ok),
        error=_text(variables, "text-error", ANSI.error, bold=True),
        ok_badge=_badge(variables, "success", ANSI.ok_badge),
        error_badge=_badge(variables, "error", ANSI.error_badge),
    )


def palette_of(app: App[Any]) -> Palette:
    """The palette of ``app``'s current theme."""
    return palette_from_variables(app.get_css_variables())
