"""SearchView: a debounced query box over the BM25 index, hits with highlights.

Enter in the box moves to the hits at once, so the keys that follow (``1``, ``q``,
arrows) act on the hits, never on the query; it also runs the query without waiting
for the debounce. While the hits have the focus, the first of every new list of hits
is highlighted.

"At once" matters: keys typed together (a fast typist, a paste, tmux send-keys) are
handed to the focused widget as they are read. Enter is therefore a priority binding,
run while the app dispatches it, and moves the focus with ``Screen.set_focus`` rather
than ``Widget.focus`` (which waits its turn behind those keys).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList, Static, Switch
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from kgai_tui.core.recall.hints import THIN
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import DecisionRequested, ElementRequested, Snapshot
from kgai_tui.ui.theme import ANSI
from kgai_tui.ui.threads import thread_worker

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

DEBOUNCE_SECONDS = 0.25
#: At most this many names on the "did you mean" line.
SUGGESTIONS = 5
_FILTER = re.compile(r"\b\w+:")


def did_you_mean(
    projection: ProjectionView, query: str, found: AbstractSet[str] = frozenset()
) -> list[str]:
    """Element names recall knows for the query's words, for a search that found
    little: recall's own elements for them, then its hints (issue 20); not the
    elements the search ``found`` already (its hits' ids).

    Only where the recall index answers (the store as it is now): the scan of a
    past moment would cost a pass over every decision per keystroke.
    """
    from kgai_tui.core.reads.context import context_obj, recall_index_for

    words = _FILTER.sub(" ", query).replace("*", " ").replace('"', " ")
    if not words.strip() or recall_index_for(projection) is None:
        return []
    out = context_obj(projection, paths=[], about=words, limit=SUGGESTIONS)
    named = [*out["items"], *out.get("hints", [])]
    seen = [
        f"{e['name']} ({e['kind']})"
        for e in named
        if e["name"] and e["element_id"] not in found
    ]
    return list(dict.fromkeys(seen))[:SUGGESTIONS]


class SearchBox(Input):
    """The query box. A ``/`` typed into it while it is empty is the habit of
    "press / to search", not a query: it is dropped (the box has the focus)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.character == "/" and not self.value:
            event.prevent_default()
            event.stop()
            return
        await super()._on_key(event)


class SearchView(Vertical):
    """Type to search; Enter goes to the hits, Enter there opens the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "to_hits", "Go to the hits", show=False, priority=True),
        *bindings("search"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self._timer: Timer | None = None
        self._hits: list[Any] = []
        self._generation = 0

    def compose(self) -> ComposeResult:
        """Lay out the box, the toggle and the hits."""
        with Horizontal(id="search-bar"):
            yield SearchBox(
                placeholder='search decisions and elements…  ("phrases", kind:, author:, prefix*)',
                id="search-input",
            )
            yield Label("include superseded", id="search-all-label")
            yield Switch(False, id="search-all")
        yield Static(id="search-caption")
        yield OptionList(id="search-results", markup=False)

    def show(self, snapshot: Snapshot) -> None:
        """Re-run the query against a new snapshot (not for a new look of the same)."""
        same = self.snapshot is not None and self.snapshot.revision == snapshot.revision
        self.snapshot = snapshot
        if not same:
            self._schedule(0.0)

    @on(Input.Changed, "#search-input")
    def _typed(self) -> None:
        self._schedule(DEBOUNCE_SECONDS)

    @on(Switch.Changed, "#search-all")
    def _toggled(self) -> None:
        self._schedule(0.0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter goes to the hits only from the box (on a hit, it opens the hit)."""
        if action == "to_hits":
            return self.screen.focused is self.query_one("#search-input", Input)
        return True

    def action_to_hits(self) -> None:
        """Go to the hits now; search without the debounce; highlight the first
        hit. When the answer has none, the focus goes back to the box (see
        :meth:`_show_hits`): it never stays on an empty list."""
        results = self.query_one("#search-results", OptionList)
        self.screen.set_focus(results)
        if self._hits:
            results.highlighted = 0
        self._schedule(0.0)

    def action_toggle_all(self) -> None:
        """Include superseded decisions and dead ends, or not."""
        switch = self.query_one("#search-all", Switch)
        switch.value = not switch.value

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._generation += 1
        generation = self._generation
        self._timer = self.set_timer(max(delay, 0.001), lambda: self._run(generation))

    def _run(self, generation: int) -> None:
        if self.snapshot is None:
            return
        query = self.query_one("#search-input", Input).value
        include_all = self.query_one("#search-all", Switch).value
        self._search(query, include_all, generation)

    @thread_worker("search")
    def _search(self, query: str, include_all: bool, generation: int) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        from kgai_tui.ui.search_adapter import run_search

        hits, note, problems = run_search(snapshot, query, include_all=include_all)
        if get_current_worker().is_cancelled:
            return
        names: list[str] = []
        if query.strip() and len(hits) < THIN and snapshot.moment is None:
            found = {hit.id for hit in hits if hit.kind == "element"}
            names = did_you_mean(snapshot.projection, query, found)
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(
            self._show_hits, generation, query, hits, note, names, problems
        )

    def _show_hits(
        self,
        generation: int,
        query: str,
        hits: list[Any],
        note: str,
        names: list[str] | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        if generation != self._generation:
            return
        self._hits = hits
        results = self.query_one("#search-results", OptionList)
        results.clear_options()
        options = []
        palette = self.snapshot.palette if self.snapshot is not None else ANSI
        view = self.snapshot.view if self.snapshot is not None else None
        for n, hit in enumerate(hits):
            line = Text(f"{n + 1:>2} ", "dim")
            if hit.kind == "decision" and view is not None:
                index = view.decision_index(hit.id)
                if index is not None:
                    line.append_text(palette.mark(view.status(index)))
                    line.append(" ")
            line.append_text(plain(one_line(hit.name, 80), "bold"))
            kind = "decision" if hit.kind == "decision" else f"{hit.extra} element"
            line.append("  ")
            line.append_text(plain(kind, "dim"))
            if hit.snippet:
                line.append("\n   ")
                line.append_text(_highlight(hit.snippet, hit.spans))
            if hit.elements:
                line.append("\n   → ", "dim")
                line.append_text(plain(one_line(", ".join(hit.elements), 100), "dim"))
            options.append(Option(line, id=str(n)))
        if not options and query.strip():
            why = (
                "nothing matches, superseded decisions included"
                if self.query_one("#search-all", Switch).value
                else "no decision in force or element matches · ^t includes "
                "superseded decisions and dead ends"
            )
            options.append(Option(Text(why, "dim"), disabled=True))
        results.add_options(options)
        if self.screen.focused is results:
            if hits:
                results.highlighted = 0
            else:  # nothing to act on: back to the box, the caption says why
                self.screen.set_focus(self.query_one("#search-input", Input))
        caption = self.query_one("#search-caption", Static)
        if not query.strip():
            caption.update(
                Text(
                    "type to search the store as of the slider · enter goes to "
                    "the hits · ^t includes superseded",
                    "dim",
                )
            )
        else:
            text = Text(f"{len(hits)} hit(s) for “{one_line(query, 60)}”{note}", "dim")
            for problem in problems:
                text.append("\n")
                text.append_text(plain(one_line(problem, 120), "bold"))
            if names:
                text.append("\ndid you mean: ", "bold")
                text.append_text(plain(one_line(", ".join(names), 100)))
            caption.update(text)

    @on(OptionList.OptionSelected, "#search-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if self.snapshot is None or event.option.id is None:
            return
        hit = self._hits[int(event.option.id)]
        index = self.snapshot.view.decision_index(hit.id)
        if hit.kind == "element":
            self.post_message(ElementRequested(hit.id))
        elif index is not None:
            self.post_message(DecisionRequested(index))


def _highlight(text: str, spans: tuple[tuple[int, int], ...]) -> Text:
    """Return literal snippet text with the matched spans highlighted."""
    out = plain(text)
    for start, end in spans:
        out.stylize("bold reverse", start, end)
    return out
