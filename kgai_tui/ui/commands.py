"""The explorer's commands, each defined once: key, action, key-bar label, help row,
palette entry.

Everything a user learns about keys comes from :data:`COMMANDS`: the bindings of
the app, of each view and of each dialog (:func:`bindings`), the key bar at the
bottom of every screen (:func:`bar_items`), the help screen (:func:`help_sections`),
the palette (:func:`system_commands`) and ``docs/keybindings.md``
(:func:`keybindings_markdown`; a test keeps the file equal to it). A command's
``scope`` says where it acts: ``app`` everywhere, a view id in that view, a dialog's
name in that dialog. Keys a widget binds itself (``enter`` in a list, the arrows)
are listed with ``bind=False``, so they show in the bar and the help all the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final

from textual.app import SystemCommand
from textual.binding import Binding, BindingType

from kgai_tui.ui.views.query_examples import QUERY_EXAMPLES

if TYPE_CHECKING:
    from textual.app import App

VIEWS: Final[tuple[tuple[str, str], ...]] = (
    ("elements", "Elements"),
    ("graph", "Graph"),
    ("timeline", "Timeline"),
    ("conflicts", "Conflicts"),
    ("search", "Search"),
    ("paths", "Paths"),
    ("people", "People"),
    ("query", "Query"),
)
"""Every view of the switcher: its id and title (keys 1 to 8, in this order)."""

SCOPES: Final[tuple[tuple[str, str], ...]] = (
    ("app", "Everywhere"),
    ("slider", "Time slider (everywhere)"),
    *VIEWS,
    ("decision", "A decision's record"),
    ("story", "An element's story"),
    ("resolve", "Resolving a conflict"),
    ("resolve-choose", "Resolving: choose"),
    ("resolve-write", "Resolving: write a new decision"),
    ("resolve-confirm", "Resolving: confirm"),
    ("moment", "Going to a moment"),
    ("diff", "What changed"),
    ("agent", "What an agent sees"),
)
"""Every scope, in the order the help and the docs list them, with its heading."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command.

    Attributes:
        id: stable, ``kgai.<scope>.<name>``.
        scope: where it acts (see :data:`SCOPES`).
        keys: Textual key names, comma-separated (``left_square_bracket``).
        action: the action it runs on the scope's owner (the app, a view, a dialog).
        shown: the keys as a person reads them (``[ ]``, ``⏎``).
        label: a word or two for the key bar (``filter``).
        help: what it does, for the help screen and the docs (``""``: the row of
            the command before it covers it, as ``[ ]`` covers ``]``).
        bar: its rank in the key bar (0: never there; higher first when room is short).
        bind: ``False`` for a key a widget binds itself (listed, not bound here).
        priority: a priority binding (it acts before the focused widget).
        palette: its palette entry (``None``: none) and ``palette_help`` its line.
        typing: its key-bar label while a text box has the focus (``""``: not
            listed then, its key is typed into the box).
    """

    id: str
    scope: str
    keys: str
    action: str
    shown: str
    label: str
    help: str
    bar: int = 0
    bind: bool = True
    priority: bool = False
    palette: str | None = None
    palette_help: str = ""
    typing: str = ""


def _view(n: int, key: str, title: str, does: str) -> Command:
    return Command(
        f"kgai.view.{key}",
        "app",
        str(n),
        f"view('{key}')",
        str(n),
        title,
        f"{title}: {does}",
        palette=f"view: {title}",
        palette_help=f"Show the {title} view",
    )


_VIEW_HELP: Final = {
    "elements": "elements by kind, their props, links and story",
    "graph": "an element's neighbourhood, walked with the arrows",
    "timeline": "every decision in time order, filtered",
    "conflicts": "elements decided two ways, side by side, and resolving them",
    "search": "search decisions and elements as of the slider",
    "paths": "what governs a file path or glob (recall by paths)",
    "people": "who decided what, whose decisions were replaced, stale elements",
    "query": "ask the graph anything in read-only Cypher, as `kgai-tui query`",
}

# fmt: off
COMMANDS: Final[tuple[Command, ...]] = (
    # ------------------------------------------------------------------ everywhere
    *(
        _view(n, key, title, _VIEW_HELP[key])
        for n, (key, title) in enumerate(VIEWS, start=1)
    ),
    Command("kgai.app.search", "app", "slash", "search_box", "/", "search",
        "search: the Search view with its box focused", bar=2),
    Command("kgai.app.back", "app", "escape", "go_back", "esc", "back",
        "back one level: leave a text box, then the view or element you came from",
        bar=6, typing="leave box"),
    Command("kgai.app.home", "app", "home,end", "", "Home End", "first/last",
        "first / last row of the focused list", bind=False),
    Command("kgai.app.doctor", "app", "d", "doctor", "d", "doctor",
        "integrity report of every shard (what `doctor` finds)",
        palette="store: Doctor", palette_help="Integrity report of every shard"),
    Command("kgai.app.agent", "app", "A", "agent", "A", "agent",
        "what an agent receives: the exact recall JSON for a path or topic (on an "
        "element: its paths)",
        palette="agent: what an agent sees",
        palette_help="Recall JSON for a path/topic"),
    Command("kgai.app.reload", "app", "", "reload", "", "reload",
        "re-read the shards now", palette="store: Reload",
        palette_help="Re-read the shards now"),
    Command("kgai.app.sync", "app", "", "sync", "", "sync",
        "sync with the store's remote (git or S3), as `kgai-tui sync`",
        palette="store: Sync with the remote",
        palette_help="Share decisions through the store's git or S3 remote"),
    Command("kgai.app.palette", "app", "ctrl+p", "command_palette", "^p", "palette",
        "command palette: jump to any element or decision, every command", bar=1,
        bind=False),
    Command("kgai.app.help", "app", "question_mark", "help", "?", "help",
        "this help: every key, by view, and the legend", bar=100),
    Command("kgai.app.quit", "app", "q", "quit_or_back", "q", "quit",
        "back one level; quit when there is nothing to go back to (ctrl+q quits)",
        bar=100),
    # ------------------------------------------------------------------ time slider
    Command("kgai.slider.prev", "slider", "left_square_bracket", "slide(-1)", "[ ]",
        "step", "previous / next recorded decision", bar=4),
    Command("kgai.slider.next", "slider", "right_square_bracket", "slide(1)", "]",
        "later", ""),
    Command("kgai.slider.month-back", "slider", "left_curly_bracket", "slide_month(-1)",
        "{ }", "month", "about a month back / forward"),
    Command("kgai.slider.month-on", "slider", "right_curly_bracket", "slide_month(1)",
        "}", "month on", ""),
    Command("kgai.slider.first", "slider", "less_than_sign", "slide_to('start')", "< >",
        "first/now", "the first recorded decision / now"),
    Command("kgai.slider.now", "slider", "greater_than_sign", "slide_to('end')", ">",
        "now", ""),
    Command("kgai.slider.goto", "slider", "t", "goto_moment", "t", "time",
        "go to a moment: a date, a date-time, or -3m, -90d, -2w, -12h, now", bar=5,
        palette="time: go to a moment",
        palette_help="Type a date or a relative moment (-3m, -90d)"),
    Command("kgai.slider.mark", "slider", "m", "mark_moment", "m", "mark",
        "mark the slider's position (D then shows what changed since)", bar=3,
        palette="time: mark this position",
        palette_help="Remember the slider position for a diff"),
    Command("kgai.slider.diff", "slider", "D", "diff_since_mark", "D", "diff",
        "what changed between the mark and the slider, and why", bar=3,
        palette="time: diff since mark",
        palette_help="What changed between the marked position and this one"),
    Command("kgai.slider.diff-30", "slider", "", "diff_last(30)", "", "last 30 days",
        "what changed in the 30 days up to the slider",
        palette="time: what changed in the last 30 days",
        palette_help="The diff of the 30 days up to the slider's moment"),
    Command("kgai.slider.diff-90", "slider", "", "diff_last(90)", "", "last 90 days",
        "what changed in the 90 days up to the slider",
        palette="time: what changed in the last 90 days",
        palette_help="The diff of the 90 days up to the slider's moment"),
    # ------------------------------------------------------------------ views
    Command("kgai.elements.filter", "elements", "f", "filter", "f", "filter",
        "filter the tree by name, kind or path (enter or esc returns)", bar=50),
    Command("kgai.elements.open", "elements", "enter", "", "⏎", "open",
        "open: the element, a link to follow, a decision's record", bar=10, bind=False,
        typing="to the tree"),
    Command("kgai.elements.story", "elements", "s", "story", "s", "story",
        "the element's story: every decision, oldest first, whole", bar=48),
    Command("kgai.elements.copy", "elements", "y", "copy_id", "y", "copy",
        "copy the highlighted decision's id (or the element's)", bar=47),
    Command("kgai.graph.pick", "graph", "up,down", "", "↑ ↓", "pick",
        "pick a neighbour", bar=50, bind=False),
    Command("kgai.graph.walk", "graph", "enter,right", "", "⏎", "walk",
        "walk to the picked neighbour", bar=49, bind=False),
    Command("kgai.graph.walk-back", "graph", "backspace,left", "", "⌫", "walk back",
        "walk back to where you came from", bar=48, bind=False),
    Command("kgai.graph.depth", "graph", "plus,minus", "", "+ -", "depth",
        "one ring more / less (depth 1 to 3)", bar=47, bind=False),
    Command("kgai.timeline.open", "timeline", "enter", "", "⏎", "open",
        "open the highlighted decision's record", bar=50, bind=False),
    Command("kgai.timeline.filters", "timeline", "tab", "cycle(1)", "tab", "filters",
        "the writer, author, kind and status filters in turn, then the list", bar=49),
    Command("kgai.timeline.filters-back", "timeline", "shift+tab", "cycle(-1)",
        "shift+tab", "", "the same, backwards"),
    Command("kgai.conflicts.resolve", "conflicts", "r", "resolve", "r", "resolve",
        "resolve the highlighted conflict (the slider at now)", bar=50),
    Command("kgai.conflicts.open", "conflicts", "enter", "", "⏎", "element",
        "show the contested element in Elements", bar=49, bind=False),
    Command("kgai.search.go", "search", "enter", "", "⏎", "hits/open",
        "in the box: go to the hits; on a hit: open it", bar=50, bind=False,
        typing="hits"),
    Command("kgai.search.all", "search", "ctrl+t", "toggle_all", "^t", "+superseded",
        "include superseded decisions and dead ends, or not", bar=49,
        typing="+superseded"),
    Command("kgai.paths.open", "paths", "enter", "", "⏎", "element",
        "in the box: go to the answer; on an element: show it", bar=50, bind=False,
        typing="answer"),
    Command("kgai.paths.agent", "paths", "A", "", "A", "agent JSON",
        "the exact JSON an agent receives for the path typed", bar=49, bind=False),
    Command("kgai.people.open", "people", "enter", "", "⏎", "shaped",
        "list the elements the highlighted person shaped", bar=50, bind=False),
    Command("kgai.query.run", "query", "enter", "", "⏎", "run/open",
        "in the box: run the query; on a cell with an id: open it", bar=50,
        bind=False, typing="run"),
    *(
        Command(f"kgai.query.example-{n}", "query", "", f"query_example({n})", "",
            name, f"saved query: {name}", palette=f"query: {name}",
            palette_help=cypher[:70])
        for n, (name, cypher) in enumerate(QUERY_EXAMPLES)
    ),
    # ------------------------------------------------------------------ dialogs
    Command("kgai.decision.close", "decision", "escape", "dismiss(None)", "esc",
        "close", "close the record", bar=100),
    Command("kgai.decision.follow", "decision", "enter", "", "⏎", "follow",
        "follow the highlighted element or decision", bar=50, bind=False),
    Command("kgai.decision.copy", "decision", "y", "copy_id", "y", "copy id",
        "copy the decision's id", bar=49),
    Command("kgai.story.close", "story", "escape,q", "dismiss(None)", "esc", "back",
        "back to the element", bar=100),
    Command("kgai.story.open", "story", "enter", "", "⏎", "open",
        "open the highlighted decision's record", bar=50, bind=False),
    Command("kgai.story.copy", "story", "y", "copy_id", "y", "copy id",
        "copy the highlighted decision's id", bar=49),
    Command("kgai.resolve.pick", "resolve-choose", "1,n", "", "1-9 n", "keep / new",
        "keep that side, or write a new decision", bar=51, bind=False),
    Command("kgai.resolve.choose", "resolve-choose", "enter", "", "⏎", "choose",
        "choose the highlighted way (nothing is written yet)", bar=49, bind=False),
    Command("kgai.resolve.next", "resolve-write", "tab", "", "tab", "next field",
        "the next field; each prop's [n] button copies that side's value", bar=50,
        bind=False),
    Command("kgai.resolve.preview", "resolve-write", "ctrl+n", "", "^n", "preview",
        "check the title and why, then preview the line", bar=49),
    Command("kgai.resolve.append", "resolve-confirm", "a", "", "a", "append",
        "append the previewed decision to the log (Enter never does)", bar=51,
        bind=False),
    Command("kgai.resolve.cancel", "resolve", "escape", "cancel", "esc", "back",
        "one step back; from the first step, cancel (nothing is written)", bar=100),
    Command("kgai.moment.go", "moment", "enter", "", "⏎", "go",
        "go to the moment typed", bar=50, bind=False),
    Command("kgai.moment.cancel", "moment", "escape", "dismiss(None)", "esc", "cancel",
        "stay where the slider is", bar=100),
    Command("kgai.diff.close", "diff", "escape,q", "dismiss(None)", "esc", "close",
        "close", bar=100),
    Command("kgai.agent.close", "agent", "escape", "dismiss(None)", "esc", "close",
        "close", bar=100),
)
"""Every command, in help order within each scope."""
# fmt: on

PALETTE: Final[tuple[str, ...]] = (
    *(f"kgai.view.{key}" for key, _ in VIEWS),
    "kgai.slider.goto",
    "kgai.slider.mark",
    "kgai.slider.diff",
    "kgai.slider.diff-30",
    "kgai.slider.diff-90",
    "kgai.app.agent",
    "kgai.app.doctor",
    "kgai.app.reload",
    "kgai.app.sync",
    *(f"kgai.query.example-{n}" for n in range(len(QUERY_EXAMPLES))),
)
"""The palette's own entries, in the order it lists them."""

_BY_ID: Final = {c.id: c for c in COMMANDS}


def command(command_id: str) -> Command:
    """The command with this id."""
    return _BY_ID[command_id]


def bindings(*scopes: str) -> list[BindingType]:
    """The bindings of the commands of ``scopes`` that bind a key here."""
    return [
        Binding(c.keys, c.action, c.label, show=False, priority=c.priority, id=c.id)
        for c in COMMANDS
        if c.scope in scopes and c.bind and c.keys and c.action
    ]


@dataclass(frozen=True, slots=True)
class BarItem:
    """One entry of the key bar: the keys as read, a label, a rank."""

    keys: str
    label: str
    rank: int


VIEW_KEYS: Final = BarItem(f"1-{len(VIEWS)}", "views", 8)
"""The bar's one entry for the view keys (each is listed in the help)."""


def bar_items(scope: str, *, back: bool = False, typing: bool = False) -> list[BarItem]:
    """The key bar of ``scope``: its own commands, then (on the main screen) the
    ones that act everywhere; in display order, ranks deciding what stays.
    ``back``: there is somewhere to go back to (Escape is listed, ``q`` goes back).
    ``typing``: a text box has the focus, so a key that is a character goes into
    it: only the commands that still act are listed, with their ``typing`` label
    (the view keys, ``?`` and ``q`` would be typed)."""
    parent = scope.partition("-")[0]  # a dialog's step shares the dialog's keys
    if typing:
        acting = [c for c in COMMANDS if c.typing and c.scope in (scope, parent)]
        acting += [c for c in COMMANDS if c.typing and c.scope == "app"]  # esc last
        return [BarItem(c.shown, c.typing, 100) for c in acting]
    own = [c for c in COMMANDS if c.scope in (scope, parent) and c.bar]
    items = [BarItem(c.shown, c.label, c.bar) for c in own]
    if scope in dict(VIEWS):
        shared = [
            c
            for c in COMMANDS
            if c.scope in ("app", "slider")
            and c.bar
            and (back or c.id != "kgai.app.back")
        ]
        pinned = [c for c in shared if c.bar >= 100]
        middle = [c for c in shared if c.bar < 100]
        items += [VIEW_KEYS]
        items += [BarItem(c.shown, c.label, c.bar) for c in middle]
        items += [
            BarItem(c.shown, "back" if back and c.label == "quit" else c.label, c.bar)
            for c in pinned
        ]
    return items


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """The help screen and the docs: per scope, ``(keys, what they do)`` rows."""
    out = []
    for scope, heading in SCOPES:
        rows = [
            (c.shown, c.help) if c.shown else ("^p", f"“{c.palette}”: {c.help}")
            for c in COMMANDS
            if c.scope == scope
            and c.help  # no help: the row above covers it
            and (c.shown or c.palette)
        ]
        if rows:
            out.append((heading, rows))
    return out


def system_commands(app: App[None]) -> Iterator[SystemCommand]:
    """The palette entries of :data:`PALETTE`, each running its action on ``app``."""
    for command_id in PALETTE:
        spec = _BY_ID[command_id]
        assert spec.palette is not None
        yield SystemCommand(
            spec.palette, spec.palette_help, partial(app.run_action, spec.action)
        )


def keybindings_markdown() -> str:
    """The key tables of ``docs/keybindings.md`` (a test keeps the file equal)."""
    from kgai_tui.core.reads.legend import LEGEND, MARKS

    lines = [
        "<!-- generated by `python -m kgai_tui.ui.commands`; edit kgai_tui/ui/commands.py -->",
        "",
    ]
    for heading, rows in help_sections():
        lines += [f"### {heading}", "", "| key | does |", "|---|---|"]
        lines += [f"| `{keys}` | {does} |" for keys, does in rows]
        lines.append("")
    lines += ["### Marks", "", "| mark | means |", "|---|---|"]
    lines += [
        f"| `{MARKS[status]}` {status.value} | {means} |" for status, means in LEGEND
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(keybindings_markdown(), end="")
