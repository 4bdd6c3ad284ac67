"""ResolveScreen: end a conflict in three steps, nothing written until the last.

1. **Choose**, with every side's card on screen: keep one side, or record a new
   decision.
2. **Write** (a new decision): a title, a why (required), and the properties the
   sides set on the element, each pre-filled with the element's value now and
   editable, with every side's value beside it; they become ``set_prop``
   mutations, so the element agrees with the decision that ends the conflict.
3. **Confirm**: exactly what will be appended (:func:`plan_resolution`: id, title,
   why, author, supersedes, mutations, the writer's shard). The focus starts on
   *Back*; appending takes ``a`` or the *Append* button. Enter never writes.

Escape goes one step back, and from the first step closes without writing.
The screen returns the ingest result's decision id, or ``None``.

Keys reach the app one at a time (:mod:`kgai_tui.ui.key_order`); a step change
also moves the focus before the next key is read: the choice keys and Enter on a
choice are priority bindings that show the next step at once, and a step takes
the focus with ``set_focus`` (``focus()`` waits for the app's queue), so a title
typed right after ``n`` lands in the title.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import DIM, head_card, mutation_lines
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from kgai_tui.core.wire.model import Mutation
    from kgai_tui.core.write.resolve import ResolutionPlan


@dataclass(frozen=True, slots=True)
class ContestedProp:
    """A property some side of the conflict sets on the element."""

    key: str
    now: str  # the element's value now ("" when unset)
    sides: tuple[str | None, ...]  # each side's value (None: that side leaves it)

    @property
    def differs(self) -> bool:
        """Whether the sides disagree on it (or only some of them set it)."""
        return len(set(self.sides)) > 1


def contested_props(
    v: KgView, eid: str, mutations: list[tuple[Mutation, ...]]
) -> list[ContestedProp]:
    """Every prop a head sets on ``eid``; the disagreeing ones first, then by key."""
    from kgai_tui.core.wire.props import parse_props

    per_side: list[dict[str, str]] = []
    for muts in mutations:
        values: dict[str, str] = {}
        for m in muts:
            if m.op == "set_prop" and m.element_id == eid:
                values[m.key.strip()] = m.value
            elif m.op == "upsert_element" and m.element_id == eid:
                values.update((k.strip(), val) for k, val in m.props)
        per_side.append(values)
    element = v.element(eid)
    now = parse_props(element.props) if element else {}
    keys = sorted({k for side in per_side for k in side})
    props = [
        ContestedProp(k, now.get(k, ""), tuple(side.get(k) for side in per_side))
        for k in keys
    ]
    return sorted(props, key=lambda p: (not p.differs, p.key))


#: Where each step puts the focus first.
_FIRST_FOCUS: Final = {
    "choose": "#resolve-choice",
    "write": "#resolve-title",
    "confirm": "#confirm-back",
}


class ResolveScreen(ModalScreen[str | None]):
    """Choose, write, confirm; returns the appended decision's id, or ``None``."""

    #: Textual focuses this when the screen is shown, before it is mounted: the
    #: first focusable widget (the sides' scroll) held the focus until the mount
    #: placed it, and a key arriving then went there.
    AUTO_FOCUS = _FIRST_FOCUS["choose"]

    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("resolve"),
        Binding("a", "append", "Append", show=False),
        Binding("ctrl+n", "preview", "Preview", show=False),
        Binding("n", "pick('new')", "New decision", show=False, priority=True),
        *(
            Binding(str(n), f"pick('{n}')", f"Keep {n}", show=False, priority=True)
            for n in range(1, 10)
        ),
        Binding("enter", "pick('highlighted')", "Choose", show=False, priority=True),
    ]

    def __init__(
        self,
        root: Path,
        view: KgView,
        element_id: str,
        mutations: list[tuple[Mutation, ...]],
        *,
        palette: Palette,
    ) -> None:
        """Resolve the conflict on ``element_id`` of the store at ``root``.

        ``mutations`` are each head's (in :meth:`KgView.heads` order).
        """
        super().__init__()
        self.root = root
        self.view = view
        self.element_id = element_id
        self.heads = view.heads(element_id)
        self.mutations = mutations
        self.palette = palette
        self.props = contested_props(view, element_id, mutations)
        self.step = "choose"
        self.plan: ResolutionPlan | None = None
        self._keep: str | None = None
        self._placed: Widget | None = None  # a step's first focus (not scrolled to)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        """Heading, the sides, the current step, the key bar."""
        v = self.view
        with Vertical(id="resolve-box"):
            heading = Text("Resolve ", "bold")
            heading.append_text(plain(one_line(v.label(self.element_id), 50), "bold"))
            heading.append(
                f" · {len(self.heads)} in force · nothing written until you confirm",
                DIM,
            )
            yield Static(heading, id="resolve-heading")
            with VerticalScroll(id="resolve-sides"), Horizontal(id="resolve-cards"):
                for n, idx in enumerate(self.heads, start=1):
                    yield Static(
                        head_card(
                            v, idx, n, self.mutations[n - 1], palette=self.palette
                        ),
                        classes="resolve-card",
                    )
            with VerticalScroll(id="resolve-step"):
                yield from self._choose()
                yield from self._write()
                yield from self._confirm()
        yield KeyBar("resolve-choose")

    def _choose(self) -> ComposeResult:
        options = [
            Option(
                Text.assemble(
                    (f"{n}  keep [{n}]: ", "bold"),
                    plain(one_line(self.view.title(idx), 70)),
                ),
                id=f"keep:{self.view.decision(idx).id}",
            )
            for n, idx in enumerate(self.heads, start=1)
        ]
        options.append(
            Option(
                Text.assemble(
                    ("n  record a new decision", "bold"),
                    (" that replaces every side (title, why, the props)", DIM),
                ),
                id="new",
            )
        )
        yield Static(Text("Choose how to end it:", "bold"), classes="choose-part")
        yield OptionList(
            *options, id="resolve-choice", markup=False, classes="choose-part"
        )

    def _write(self) -> ComposeResult:
        part = "write-part"
        yield Label("Title of the new decision", classes=part)
        yield Input(placeholder="what is decided now", id="resolve-title", classes=part)
        yield Label("Why (required: the reason the sides are reconciled)", classes=part)
        yield TextArea(id="resolve-rationale", classes=part)
        if self.props:
            yield Static(
                Text(
                    "Props the sides set on the element (edit to what is decided; "
                    "each becomes a set_prop):",
                    "bold",
                ),
                classes=part,
            )
        for n, prop in enumerate(self.props):
            hint = Text("  ")
            for side, value in enumerate(prop.sides, start=1):
                hint.append(f"[{side}] ", "bold")
                hint.append_text(
                    plain(one_line(value, 30) if value is not None else "(unset)", DIM)
                )
                hint.append("  ")
            key = plain(prop.key, self.palette.field)
            if prop.differs:
                key.append(" ⚠ contested", self.palette.contested)
            yield Static(key, classes=f"prop-key {part}")
            with Horizontal(classes=f"prop-row {part}"):
                yield Input(prop.now, id=f"prop-{n}", classes="prop-value")
                for side, value in enumerate(prop.sides, start=1):
                    if value is not None:
                        yield Button(f"use [{side}]", id=f"use-{n}-{side}")
            yield Static(hint, classes=f"prop-hint {part}")
        with Horizontal(classes=f"resolve-actions {part}"):
            yield Button("Preview", id="to-preview", variant="primary")
            yield Button("Back", id="write-back")

    def _confirm(self) -> ComposeResult:
        yield Static(id="resolve-preview", classes="confirm-part")
        with Horizontal(classes="resolve-actions confirm-part"):
            yield Button("Back", id="confirm-back")
            yield Button("Append to the log (a)", id="append", variant="error")

    def on_mount(self) -> None:
        """Start at the first step, the focus on the choice."""
        self._show("choose")

    def _show(self, step: str) -> None:
        """Show one step's widgets, hide the others', move the focus there."""
        self.step = step
        self.query_one(KeyBar).show_scope(f"resolve-{step}")
        self.set_class(step != "choose", "-later")
        for name in ("choose", "write", "confirm"):
            for widget in self.query(f".{name}-part"):
                widget.display = name == step
        self._placed = self.query_one(_FIRST_FOCUS[step])
        self.set_focus(self._placed, scroll_visible=False)
        self.call_after_refresh(self._step_in_view)

    def _step_in_view(self) -> None:
        """Once the step is laid out: its top, or the field the focus has reached
        meanwhile (keys typed ahead of the screen)."""
        focused = self.focused
        if focused is None or focused is self.query_one(_FIRST_FOCUS[self.step]):
            self.query_one("#resolve-step", VerticalScroll).scroll_home(animate=False)
        else:
            focused.scroll_visible(animate=False)

    @on(DescendantFocus)
    def _keep_in_view(self, event: DescendantFocus) -> None:
        """Tab to a field below the fold scrolls it into view (80x24); a step
        starts at its top, whatever its first focus is."""
        if event.widget is self._placed:
            self._placed = None
            return
        event.widget.scroll_visible(animate=False)

    # ------------------------------------------------------------------ steps

    @on(OptionList.OptionSelected, "#resolve-choice")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        """A choice clicked (keys choose through :meth:`action_pick`)."""
        if self.step == "choose":
            self._take(event.option.id or "")

    def _take(self, choice: str) -> None:
        """Go on with ``choice``: an option's id (``new``, ``keep:<id>``)."""
        if choice == "new":
            self._keep = None
            self._show("write")
        elif choice.startswith("keep:"):
            self._keep = choice.removeprefix("keep:")
            self._plan(self._keep, None, None, {})

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        ident = event.button.id or ""
        if ident == "to-preview":
            self.action_preview()
        elif ident == "write-back":
            self._show("choose")
        elif ident == "confirm-back":
            self.action_cancel()
        elif ident == "append":
            self.action_append()
        elif ident.startswith("use-"):
            _, n, side = ident.split("-")
            value = self.props[int(n)].sides[int(side) - 1]
            self.query_one(f"#prop-{n}", Input).value = value or ""

    def action_preview(self) -> None:
        """Check the new decision's fields, then show the line it would append."""
        if self.step == "write":
            self._preview_new()

    def _preview_new(self) -> None:
        title = self.query_one("#resolve-title", Input).value.strip()
        why = self.query_one("#resolve-rationale", TextArea).text.strip()
        if not title:
            self.notify("The new decision needs a title.", severity="error")
            self.set_focus(self.query_one("#resolve-title"))
            return
        if not why:
            self.notify(
                "Say why: a resolution without a reason cannot be reviewed later.",
                severity="error",
            )
            self.set_focus(self.query_one("#resolve-rationale"))
            return
        props: dict[str, str] = {}
        for n, prop in enumerate(self.props):
            value = self.query_one(f"#prop-{n}", Input).value
            if prop.differs or value != prop.now:
                props[prop.key] = value
        self._plan(None, title, why, props)

    @thread_worker("resolve-plan")
    def _plan(
        self,
        keep: str | None,
        title: str | None,
        why: str | None,
        props: dict[str, str],
    ) -> None:
        from kgai_tui.core.errors import KgaiError
        from kgai_tui.core.write.resolve import plan_resolution

        try:
            plan = plan_resolution(
                self.root,
                self.element_id,
                keep=keep,
                title=title,
                rationale=why,
                props=props,
            )
        except KgaiError as exc:
            self.app.call_from_thread(
                self.notify, one_line(str(exc), 200), severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._planned, plan)

    def _planned(self, plan: ResolutionPlan) -> None:
        self.plan = plan
        width = max(self.size.width - 4, 40)
        self.query_one("#resolve-preview", Static).update(
            preview_text(self.view, plan, self.palette, width)
        )
        self._show("confirm")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The choice keys act only in the first step (later they are typed, and
        Enter is the focused widget's)."""
        if action == "pick":
            return self.step == "choose"
        return True

    def action_pick(self, choice: str) -> None:
        """``1``…``9`` keep that side; ``n`` writes a new decision; Enter takes the
        highlighted way. At once, so the keys typed next reach the next step."""
        choices = self.query_one("#resolve-choice", OptionList)
        if choice == "highlighted":
            index = choices.highlighted
        else:
            index = len(self.heads) if choice == "new" else int(choice) - 1
        if index is None or not 0 <= index < choices.option_count:
            return
        choices.highlighted = index
        self._take(choices.get_option_at_index(index).id or "")

    def action_cancel(self) -> None:
        """One step back; from the first step, close without writing."""
        if self.step == "confirm":
            self._show("write" if self._keep is None else "choose")
        elif self.step == "write":
            self._show("choose")
        else:
            self.dismiss(None)

    def action_append(self) -> None:
        """Append the previewed decision (only from the confirm step)."""
        if self.step != "confirm" or self.plan is None:
            return
        self.query_one("#append", Button).disabled = True
        # The app's worker, not this screen's: the screen closes when the write
        # is done, and a screen cancels its workers as it goes (the finished
        # write was then reported as cancelled).
        self.app.run_worker(
            partial(self._append, self.plan),
            thread=True,
            exclusive=True,
            group="write",
            exit_on_error=False,
        )

    def _append(self, plan: ResolutionPlan) -> None:
        """Write the resolution (in a worker thread), then close with its id."""
        from kgai_tui.core.errors import KgaiError
        from kgai_tui.core.write.resolve import resolve_conflict

        d, keep = plan.decision, self._keep
        props = {} if keep else {m.key: m.value for m in d.mutations or ()}
        try:
            resolve_conflict(
                self.root,
                plan.element_id,
                keep=keep,
                title=None if keep else d.title,
                rationale=None if keep else d.rationale,
                props=props,
                expect=d,
            )
        except KgaiError as exc:
            self.app.call_from_thread(self._failed, one_line(str(exc), 200))
            return
        self.app.call_from_thread(self.dismiss, d.id)

    def _failed(self, message: str) -> None:
        self.notify(message, severity="error", markup=False, timeout=10)
        self.query_one("#append", Button).disabled = False


def preview_text(
    v: KgView, plan: ResolutionPlan, palette: Palette, width: int = 80
) -> Group:
    """Exactly what will be appended, field by field (values wrap in their column)."""
    d = plan.decision
    head = Text("This line will be appended to ", "bold")
    head.append(f"log/{plan.install_id}.ndjson", "bold")
    if plan.new_writer:
        head.append(" (a new shard: this store's own writer has not written yet)", DIM)
    fields = Table.grid(padding=(0, 1))
    fields.add_column(style=palette.field, no_wrap=True)
    fields.add_column(overflow="fold")
    author = plain(d.author or "unknown")
    author.append("  (the store's actor, kg.config.json)", DIM)
    fields.add_row("id", d.id)
    fields.add_row("title", plain(d.title))
    fields.add_row("author", author)
    fields.add_row("why", plain(d.rationale.strip(), keep_newlines=True))
    fields.add_row("decides", plain(plan.label))
    for n, sid in enumerate(d.supersedes):
        idx = v.decision_index(sid)
        line = Text(sid + "  ", DIM)
        line.append_text(
            plain(one_line(v.title(idx) if idx is not None else "", width))
        )
        fields.add_row("supersedes" if n == 0 else "", line)
    changes = [m for m in d.mutations or () if m.op != "upsert_element" or m.props]
    if not changes:
        fields.add_row("changes", Text("nothing on the element (its props stay)", DIM))
    for n, change in enumerate(mutation_lines(v, changes, palette)):
        fields.add_row("changes" if n == 0 else "", change)
    foot = Text(
        "The log is append-only: this cannot be undone, only superseded later.", DIM
    )
    return Group(head, Text(""), fields, Text(""), foot)
