"""PathsView: "which decisions govern this file?", answered as recall answers it.

Type a path or a glob (several, comma-separated): the elements whose ``paths``
prop matches it (spec 6.4.1, the matching ``kgai-tui context --paths`` does), and
the decisions in force on each, newest first, with their why. Enter on an element
shows it in Elements. The answer is the store as of the slider; ``A`` shows the
exact JSON an agent receives for the same paths (always the store as it is now).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from kgai_tui.core.reads.legend import Status
from kgai_tui.ui.render import DIM
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import ElementRequested, Snapshot
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.threads import thread_worker

DEBOUNCE_SECONDS = 0.2
#: At most this many elements in an answer (recall's --max).
LIMIT = 50
#: Stored paths offered as examples while the box is empty.
EXAMPLES = 4


@dataclass(frozen=True, slots=True)
class PathAnswer:
    """What the view shows for one query: recall's items, and what each matched."""

    query: str
    items: list[dict[str, Any]]
    matched: list[list[str]]  # per item: its stored paths that match the query
    total: int
    examples: list[str]  # a few stored paths of the store, for an empty state


def path_answer(snapshot: Snapshot, query: str) -> PathAnswer:
    """Recall by paths on the snapshot (run it in a worker)."""
    from kgai_tui.core.answers.answer import split_paths
    from kgai_tui.core.reads.context import context_obj
    from kgai_tui.core.recall.scoring import glob_match
    from kgai_tui.core.recall.scoring import split_paths as split_stored

    wanted = split_paths(query)
    examples: list[str] = []
    if not wanted:
        stored = snapshot.view.element_paths()
        examples = sorted({p for paths in stored.values() for p in paths})[:EXAMPLES]
        return PathAnswer(query, [], [], 0, examples)
    out = context_obj(snapshot.projection, paths=wanted, about="", limit=LIMIT)
    matched = []
    for item in out["items"]:
        own = split_stored(item.get("props", {}).get("paths", ""))
        matched.append([p for p in own if any(glob_match(p, q) for q in wanted)])
    if not out["items"]:
        stored = snapshot.view.element_paths()
        examples = sorted({p for paths in stored.values() for p in paths})[:EXAMPLES]
    return PathAnswer(query, out["items"], matched, int(out["total"]), examples)


def answer_rows(answer: PathAnswer, palette: Palette, width: int) -> list[Option]:
    """One option per element: its label, the paths it matched, its heads."""
    options = []
    for item, matched in zip(answer.items, answer.matched, strict=True):
        line = plain(one_line(f"{item['kind']}:{item['name']}", width), "bold")
        if matched:
            line.append("  ")
            line.append_text(plain(one_line(", ".join(matched), width // 2), DIM))
        why = item.get("why", [])
        if not why:
            line.append("\n   no decision in force on it", DIM)
        for entry in why:
            line.append("\n   ")
            line.append_text(palette.mark(Status.IN_FORCE))
            line.append(f" {str(entry['when'])[:10]} ", DIM)
            line.append_text(plain(one_line(entry["title"], width - 16)))
            if entry.get("rationale"):
                line.append("\n     ")
                line.append_text(plain(one_line(entry["rationale"], width - 6), DIM))
        options.append(Option(line, id=item["element_id"]))
    return options


class PathsView(Vertical):
    """A path box, a caption that says what the answer is, and the elements."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "to_answer", "Go to the answer", show=False, priority=True),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.answer: PathAnswer | None = None
        self._timer: Timer | None = None
        self._generation = 0

    def compose(self) -> ComposeResult:
        """The box, the caption, the answer."""
        yield Input(
            placeholder="a file path or glob, e.g. services/checkout/order/api.go",
            id="paths-input",
        )
        yield Static(id="paths-caption")
        yield OptionList(id="paths-results", markup=False)

    @property
    def query_text(self) -> str:
        """The paths typed."""
        return self.query_one("#paths-input", Input).value

    def show(self, snapshot: Snapshot) -> None:
        """Answer again for a new snapshot (not for a new look of the same data)."""
        same = self.snapshot is not None and self.snapshot.revision == snapshot.revision
        self.snapshot = snapshot
        if not same:
            self._schedule(0.0)

    @on(Input.Changed, "#paths-input")
    def _typed(self) -> None:
        self._schedule(DEBOUNCE_SECONDS)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter goes to the answer only from the box (on an element, it opens it)."""
        if action == "to_answer":
            return self.screen.focused is self.query_one("#paths-input", Input)
        return True

    def action_to_answer(self) -> None:
        """Answer now and move to the elements (the focus comes back to the box
        when the answer has none: it never stays on an empty list)."""
        results = self.query_one("#paths-results", OptionList)
        self.screen.set_focus(results)
        if results.option_count:
            results.highlighted = 0
        self._schedule(0.0)

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._generation += 1
        generation = self._generation
        self._timer = self.set_timer(max(delay, 0.001), lambda: self._run(generation))

    def _run(self, generation: int) -> None:
        if self.snapshot is not None:
            self._compute(self.snapshot, self.query_text, generation)

    @thread_worker("paths")
    def _compute(self, snapshot: Snapshot, query: str, generation: int) -> None:
        answer = path_answer(snapshot, query)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._present, snapshot, answer, generation)

    def _present(self, snapshot: Snapshot, answer: PathAnswer, generation: int) -> None:
        if generation != self._generation or snapshot is not self.snapshot:
            return
        self.answer = answer
        results = self.query_one("#paths-results", OptionList)
        results.clear_options()
        width = max(self.size.width - 6, 40)
        results.add_options(answer_rows(answer, snapshot.palette, width))
        self.query_one("#paths-caption", Static).update(self._caption(answer))
        if self.screen.focused is results:
            if results.option_count:
                results.highlighted = 0
            else:
                self.screen.set_focus(self.query_one("#paths-input", Input))

    def _caption(self, answer: PathAnswer) -> Text:
        moment = (
            ""
            if self.snapshot is None or self.snapshot.moment is None
            else (f" as of {self.snapshot.moment.strftime('%Y-%m-%d')}")
        )
        examples = ", ".join(answer.examples)
        if not answer.query.strip():
            text = Text(
                "Type a path or a glob: the elements whose paths match it and the "
                "decisions in force on them, as `context --paths` answers.",
                DIM,
            )
            if examples:
                text.append("\npaths in this store: ", DIM)
                text.append_text(plain(one_line(examples, 100)))
            else:
                text.append("\nNo element declares paths yet (a `paths` prop).", DIM)
            return text
        if not answer.items:
            text = Text.assemble(
                "no element's paths match ",
                plain(f"“{one_line(answer.query.strip(), 50)}”"),
                moment,
                style=DIM,
            )
            text.append(
                f"\npaths in this store: {one_line(examples, 90)}"
                if examples
                else "\nno element declares paths (a `paths` prop) at this moment",
                DIM,
            )
            return text
        shown = len(answer.items)
        more = (
            f", {answer.total - shown} more not shown" if answer.total > shown else ""
        )
        text = Text(f"{shown} element(s) govern ", DIM)
        text.append_text(plain(f"“{one_line(answer.query.strip(), 50)}”"))
        text.append(f"{moment}{more} · enter shows one · A the agent's JSON", DIM)
        return text

    @on(OptionList.OptionSelected, "#paths-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.post_message(ElementRequested(event.option.id))
