"""The app's commands, each defined once: its key binding, palette entry and help row.

:data:`COMMANDS` is in help order. :func:`bindings` feeds ``KgaiApp.BINDINGS``,
:func:`system_commands` the command palette (in :data:`PALETTE` order) and
:func:`help_rows` the help screen. Keys bound by a view or by Textual (``enter``,
``r``, the Graph keys, ``ctrl+p``) appear here for the help screen only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.binding import Binding

if TYPE_CHECKING:
    from textual.app import App

VIEWS: tuple[tuple[str, str], ...] = (
    ("elements", "Elements"),
    ("graph", "Graph"),
    ("timeline", "Timeline"),
    ("conflicts", "Conflicts"),
    ("search", "Search"),
)
"""The first five views: their id and title (keys 1 to 5)."""

PEOPLE: tuple[str, str] = ("people", "People")
"""The People view (key 7: 6 is the agent's recall)."""

ALL_VIEWS: tuple[tuple[str, str], ...] = (*VIEWS, PEOPLE)
"""Every view of the switcher, in palette order."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the app.

    ``key``/``action``/``title`` make the binding (none when ``key`` is ``None``: the
    key is bound elsewhere); ``palette``/``palette_help`` its palette entry; ``help``
    its row on the help screen as ``(keys, what it does)``, ``None`` when the row of
    an earlier command covers it (``1 … 5``).
    """

    id: str
    key: str | None = None
    action: str = ""
    title: str = ""
    show: bool = False
    priority: bool = False
    palette: str | None = None
    palette_help: str = ""
    help: tuple[str, str] | None = None


def _view(
    n: int,
    key: str,
    title: str,
    *,
    show: bool = True,
    help: tuple[str, str] | None = None,
) -> Command:
    return Command(
        id=f"kgai.view.{key}",
        key=str(n),
        action=f"view('{key}')",
        title=title,
        show=show,
        palette=f"view: {title}",
        palette_help=f"Show the {title} view",
        help=("1 … 5", ", ".join(t for _, t in VIEWS)) if n == 1 else help,
    )


COMMANDS: tuple[Command, ...] = (
    *(_view(n, key, title) for n, (key, title) in enumerate(VIEWS, start=1)),
    Command(
        "kgai.search.focus",
        "slash",
        "view('search')",
        "Search",
        help=("/", "focus the search box"),
    ),
    Command(
        "kgai.slider.prev",
        "left_square_bracket",
        "slide(-1)",
        "Earlier",
        help=("[  ]", "time slider: previous / next recorded decision"),
    ),
    Command("kgai.slider.next", "right_square_bracket", "slide(1)", "Later"),
    Command(
        "kgai.slider.month-back",
        "left_curly_bracket",
        "slide_month(-1)",
        "Month back",
        help=("{  }", "time slider: a month back / forward"),
    ),
    Command(
        "kgai.slider.month-on", "right_curly_bracket", "slide_month(1)", "Month on"
    ),
    Command(
        "kgai.slider.first",
        "home",
        "slide_to('start')",
        "First",
        priority=True,
        help=("Home  End", "time slider: first decision / now"),
    ),
    Command("kgai.slider.now", "end", "slide_to('end')", "Now", priority=True),
    Command("kgai.open", help=("enter", "open (element, link, decision, hit)")),
    Command(
        "kgai.back", "escape", "leave_text", "Back", help=("escape", "back / close")
    ),
    Command(
        "kgai.conflicts.resolve",
        help=("r", "resolve the highlighted conflict (Conflicts)"),
    ),
    Command(
        "kgai.graph.walk",
        help=("↑ ↓ enter ⌫ + -", "Graph: pick, walk to, walk back, depth"),
    ),
    Command(
        "kgai.slider.mark",
        "m",
        "mark_moment",
        "Mark",
        palette="time: mark this position",
        palette_help="Remember the slider position for a diff",
        help=("m  D", "mark a slider position / show what changed since the mark"),
    ),
    Command(
        "kgai.slider.diff",
        "D",
        "diff_since_mark",
        "Diff",
        palette="time: diff since mark",
        palette_help="What changed between the marked position and this one, and why",
    ),
    Command(
        "kgai.view.agent",
        "6",
        "agent",
        "Agent",
        palette="agent: what an agent sees",
        palette_help="Recall JSON for a path/topic",
        help=("6", "what an agent would receive for a path or topic (recall)"),
    ),
    _view(
        7,
        *PEOPLE,
        show=False,
        help=("7", "People: who decided what, whose decisions were replaced, stale"),
    ),
    Command(
        "kgai.store.doctor",
        "d",
        "doctor",
        "Doctor",
        palette="store: Doctor",
        palette_help="Integrity report of every shard",
        help=("d", "integrity report (doctor)"),
    ),
    Command(
        "kgai.store.reload",
        action="reload",
        palette="store: Reload",
        palette_help="Re-read the shards now",
    ),
    Command(
        "kgai.store.sync",
        action="sync",
        palette="store: Sync with the remote",
        palette_help="Share decisions through the store's git or S3 remote (kgai-tui sync)",
    ),
    Command(
        "kgai.palette",
        help=("ctrl+p", "command palette: jump to any element or decision"),
    ),
    Command(
        "kgai.help", "question_mark", "help", "Help", show=True, help=("?", "this help")
    ),
    Command("kgai.quit", "q", "quit", "Quit", show=True, help=("q", "quit")),
)

PALETTE: tuple[str, ...] = (
    *(f"kgai.view.{key}" for key, _ in ALL_VIEWS),
    "kgai.store.doctor",
    "kgai.view.agent",
    "kgai.slider.mark",
    "kgai.slider.diff",
    "kgai.store.reload",
    "kgai.store.sync",
)
"""The palette's own entries, in the order it lists them."""

_BY_ID = {command.id: command for command in COMMANDS}


def bindings() -> list[Binding]:
    """The app's key bindings, one per command with a key."""
    return [
        Binding(c.key, c.action, c.title, show=c.show, priority=c.priority, id=c.id)
        for c in COMMANDS
        if c.key is not None
    ]


def help_rows() -> list[tuple[str, str]]:
    """The help screen's rows: ``(keys, what they do)``."""
    return [c.help for c in COMMANDS if c.help is not None]


def command(command_id: str) -> Command:
    """The command with this id."""
    return _BY_ID[command_id]


def system_commands(app: App[None]) -> Iterator[SystemCommand]:
    """The palette entries of :data:`PALETTE`, each running its action on ``app``."""
    for command_id in PALETTE:
        spec = _BY_ID[command_id]
        assert spec.palette is not None
        yield SystemCommand(
            spec.palette, spec.palette_help, partial(app.run_action, spec.action)
        )
