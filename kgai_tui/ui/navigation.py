"""The explorer's navigation: the eight views, the back stack, the slider's keys,
and opening an element, a decision or a story.

A mixin of :class:`~kgai_tui.ui.app.KgaiApp` (as :mod:`kgai_tui.ui.sync_actions`):
Escape and ``q`` pop the back stack, which remembers (view, element) places; the
key bar under the slider shows the keys of the view in front.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from textual import on
from textual.css.query import NoMatches
from textual.events import DescendantFocus
from textual.widgets import Input

from kgai_tui.ui.diff_view import DiffMark, DiffModal
from kgai_tui.ui.screens import DecisionModal, HelpScreen, TextModal, doctor_report
from kgai_tui.ui.snapshot import (
    DecisionRequested,
    ElementRequested,
    Snapshot,
    StoryRequested,
)
from kgai_tui.ui.sync_actions import SyncActions
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.views.agent import AgentScreen
from kgai_tui.ui.views.elements import ElementsView
from kgai_tui.ui.views.switcher import ViewSwitcher
from kgai_tui.ui.widgets.key_bar import KeyBar
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import Store

#: How many places the back stack remembers.
BACK_DEPTH = 64


class Navigation(SyncActions):
    """Views, the back stack, the slider's keys, and the dialogs they open."""

    snapshot: Snapshot | None
    engine: Store | None
    problems: list[str]
    back_stack: list[tuple[str, str | None]]
    diff_mark: DiffMark
    palette: Palette

    @property
    def selected_element(self) -> str | None:
        """The element the explorer is about: Elements' choice (one copy of it,
        so the Graph, the back stack and the tree never disagree)."""
        return self.query_one(ElementsView).choice

    @property
    def current_view(self) -> str:
        """The id of the view in front."""
        return self.query_one(ViewSwitcher).current or "elements"

    def show_view(self, key: str, *, remember: bool = True, back: bool = False) -> None:
        """Switch to a view by id; ``remember`` the one left for Escape and ``q``;
        ``back``: returning to it, its focus as it was left."""
        if remember and key != self.current_view:
            self._remember()
        self.query_one(ViewSwitcher).show_view(key, back=back)
        self._show_keys()

    def _remember(self) -> None:
        place = (self.current_view, self.selected_element)
        if not self.back_stack or self.back_stack[-1] != place:
            self.back_stack.append(place)
            del self.back_stack[:-BACK_DEPTH]

    def action_view(self, key: str) -> None:
        """Show one of the eight views (keys 1 to 8)."""
        self.show_view(key)

    def action_query_example(self, n: int) -> None:
        """A saved query of the palette, in the Query view, run."""
        from kgai_tui.ui.views.query import QueryView
        from kgai_tui.ui.views.query_examples import QUERY_EXAMPLES

        self.show_view("query")
        self.query_one(QueryView).set_query(QUERY_EXAMPLES[n][1])

    def action_search_box(self) -> None:
        """The Search view, its box focused (``/``)."""
        self.show_view("search")
        self.query_one("#search-input").focus()

    def search_for(self, words: str) -> None:
        """The Search view, searching ``words`` (the palette's decisions of a
        large store)."""
        from textual.widgets import Input

        self.action_search_box()
        self.query_one("#search-input", Input).value = words

    def action_go_back(self) -> None:
        """Back one level: leave a text box, else return to the previous place."""
        if self.query_one(ViewSwitcher).leave_text():
            self._show_keys()
            return
        if not self.back_stack:
            return
        view, element = self.back_stack.pop()
        if (
            element is not None
            and element != self.selected_element
            and self.snapshot is not None
        ):
            self.query_one(ViewSwitcher).select_element(self.snapshot, element)
        self.show_view(view, remember=False, back=True)

    def action_quit_or_back(self) -> None:
        """``q``: back one level, or quit when there is nothing to go back to."""
        if self.back_stack:
            self.action_go_back()
        else:
            self.exit()

    @on(DescendantFocus)
    def _focus_moved(self, _: DescendantFocus) -> None:
        self._show_keys()

    def _show_keys(self) -> None:
        """The key bar follows the view in front (and says whether q goes back,
        and whether a text box of its own screen has the focus: a dialog's box
        is the dialog's). None while the app closes (a focus landing late)."""
        try:
            bar = self.query_one(KeyBar)
        except NoMatches:
            return
        bar.show_scope(
            self.current_view,
            back=bool(self.back_stack),
            typing=isinstance(bar.screen.focused, Input),
        )

    def action_slide(self, delta: int) -> None:
        """Step the slider by one recorded moment."""
        self.query_one(TimeSlider).action_step(delta)

    def action_slide_month(self, direction: int) -> None:
        """Step the slider by about a month."""
        self.query_one(TimeSlider).step_month(direction)

    def action_slide_to(self, where: str) -> None:
        """Jump the slider to the first moment or to now."""
        self.query_one(TimeSlider).jump(to_start=where == "start")

    def action_goto_moment(self) -> None:
        """Ask for a moment (a date, ``-3m``) and move the slider there."""
        from kgai_tui.core.clock import now
        from kgai_tui.ui.moment import MomentScreen

        slider = self.query_one(TimeSlider)
        moments = slider.moments
        first, last = (moments[0], moments[-1]) if moments else (None, None)
        self.push_screen(MomentScreen(now(), first, last), self._moment_chosen)

    def _moment_chosen(self, moment: datetime | None) -> None:
        if moment is not None:
            self.query_one(TimeSlider).go_to(moment)

    def action_agent(self) -> None:
        """Show the exact recall payload an agent gets for a path or topic: the
        path typed in Paths, else the paths of the element looked at (what an
        agent editing its files is told)."""
        paths = ""
        if self.current_view == "paths":
            paths = self.query_one("#paths-input", Input).value
        elif (
            self.current_view in ("elements", "graph")
            and self.snapshot is not None
            and self.selected_element is not None
        ):
            # A path holding control characters is left out: a text box shows
            # what it holds as it is, and store text never reaches the terminal.
            stored = self.snapshot.view.paths_of(self.selected_element)
            paths = ", ".join(p for p in stored if p.isprintable())
        self.push_screen(AgentScreen(self.root, lambda: self.engine, paths=paths))

    def action_mark_moment(self) -> None:
        """Mark the slider position; ``D`` then shows what changed since."""
        self.diff_mark.mark(self)

    def action_diff_since_mark(self) -> None:
        """Show the diff between the marked slider position and this one."""
        self.diff_mark.show(self, self.engine)

    def action_diff_last(self, days: int) -> None:
        """Show what changed in the ``days`` up to the slider's moment."""
        from kgai_tui.core.clock import now

        if self.engine is None:
            self.notify("The store is still loading.", markup=False)
            return
        end = self.query_one(TimeSlider).moment
        start = (end or now()) - timedelta(days=days)
        self.push_screen(DiffModal(self.engine, start, end))

    def action_help(self) -> None:
        """Show every key."""
        self.push_screen(HelpScreen(self.palette))

    def action_doctor(self) -> None:
        """Show the integrity report."""
        self.push_screen(TextModal(doctor_report(self.problems, self.palette)))

    def _show_new_decision(self, element_id: str, decision_id: str) -> None:
        """After a resolution: the element in Elements, the new decision selected."""
        self.open_element(element_id)
        self.query_one(ViewSwitcher).highlight_decision(decision_id)

    def open_element(self, element_id: str, view: str = "elements") -> None:
        """Show an element in the Elements (or Graph) view."""
        if element_id != self.selected_element or view != self.current_view:
            self._remember()
        if self.snapshot is not None:
            self.query_one(ViewSwitcher).select_element(self.snapshot, element_id)
        self.show_view(view, remember=False)

    def open_decision(self, index: int) -> None:
        """Open a decision's full record."""
        if self.snapshot is None:
            return
        self.push_screen(
            DecisionModal(
                self.snapshot.view,
                index,
                self.snapshot.mutations_of(index),
                palette=self.palette,
            ),
            self._after_decision,
        )

    def _after_decision(self, choice: str | None) -> None:
        if not choice or self.snapshot is None:
            return
        kind, _, ref = choice.partition(":")
        if kind == "e":
            self.open_element(ref)
        elif (index := self.snapshot.view.decision_index(ref)) is not None:
            self.open_decision(index)

    @on(ElementRequested)
    def _element_requested(self, event: ElementRequested) -> None:
        self.open_element(event.element_id, event.view)

    @on(DecisionRequested)
    def _decision_requested(self, event: DecisionRequested) -> None:
        self.open_decision(event.decision_index)

    @on(StoryRequested)
    def _story_requested(self, event: StoryRequested) -> None:
        from kgai_tui.ui.story import StoryScreen

        if self.snapshot is not None:
            self.push_screen(
                StoryScreen(self.snapshot.view, event.element_id, palette=self.palette),
                self._after_decision,
            )
