"""Pure functions from core data to Rich ``Text``; every store string goes via ``plain``.

Kept free of widgets so the look can be unit-tested without running an app. Colours
come from the :class:`~kgai_tui.ui.theme.Palette` passed in (the app's theme).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rich.console import Group
from rich.style import Style
from rich.text import Text

from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.reads.legend import Status
from kgai_tui.ui.safe_text import TITLE_CHARS, bounded, one_line, plain
from kgai_tui.ui.theme import Palette

if TYPE_CHECKING:
    from kgai_tui.core.reads.story import StoryEntry
    from kgai_tui.core.reads.view import Decision, KgView
    from kgai_tui.core.wire.model import Mutation

DIM: Final = "dim"


def day(d: Decision) -> str:
    """The recorded day of a decision, ``YYYY-MM-DD`` (or ``—``)."""
    stamp = d.time
    if stamp is None:
        return "—"
    return format_epoch(stamp)[:10]


def absent_element(now: KgView, eid: str) -> Text:
    """An element chosen but absent at the slider's moment: its label and the day
    it was first decided, read from the store ``now``, so the user knows where to
    slide."""
    first = now.history(eid)[:1]
    since = f" · first decided {day(now.decision(first[0]))}" if first else ""
    return Text.assemble(
        bounded(now.label(eid)), (f" does not exist at this moment{since}", "dim")
    )


def element_details(
    v: KgView,
    eid: str,
    *,
    palette: Palette,
    width: int = 80,
    sets: Mapping[int, Sequence[tuple[str, str]]] | None = None,
) -> Text:
    """An element's name, the decisions in force on it, then its props, as one
    Text (what governs it first: at 80x24 the pane shows a few lines).

    Its links and its story (every decision, oldest first) follow in the view's
    list, where each can be followed or opened. ``sets`` gives, per decision in
    force, the props it sets on the element (shown under it: what it says now).
    """
    from kgai_tui.core.wire.props import parse_props

    element = v.element(eid)
    kind, name, blob = (
        (element.kind, element.name, element.props) if element else ("", "", "")
    )
    out = Text()
    out.append_text(bounded(name or "(unnamed)", "bold", limit=TITLE_CHARS))
    out.append(f"  {kind}  ", DIM)
    out.append(eid, DIM)
    out.append("\n")
    heads = v.heads(eid)
    if len(heads) > 1:
        out.append(
            f"⚠ contested: {len(heads)} decisions in force · 4 then r resolves\n",
            palette.contested,
        )
    out.append("\nIn force\n", "bold underline")
    if not heads:
        out.append("  no decision in force on it\n", DIM)
    for idx in heads:
        d = v.decision(idx)
        out.append("  ")
        out.append_text(palette.mark(v.status_on(eid, idx)))
        out.append(" ")
        out.append_text(bounded(d.title, "bold", limit=TITLE_CHARS))
        out.append(f"\n    {day(d)} · ", DIM)
        out.append_text(bounded(d.author or "unknown", DIM))
        out.append(f" · {d.id}\n", DIM)
        for key, value in (sets or {}).get(idx, ()):
            out.append("    sets ", DIM)
            out.append_text(plain(one_line(key, 30), palette.field))
            out.append(" = ")
            out.append_text(plain(one_line(value, width)))
            out.append("\n")
        if d.rationale:
            out.append("    ")
            out.append_text(plain(one_line(d.rationale, width * 2)))
            out.append("\n")
    props = parse_props(blob)
    if props:
        out.append("\nProps\n", "bold underline")
        for key in sorted(props):
            out.append("  ")
            out.append_text(bounded(key, palette.field))
            out.append(" = ")
            out.append_text(bounded(props[key]))
            out.append("\n")
    return out


def story_row(v: KgView, entry: StoryEntry, palette: Palette, width: int) -> Text:
    """One decision of an element's story: mark, day, author, title; then what it
    replaced and what replaced it on this element (tig-log style, a few lines,
    each cut to ``width``)."""
    d = entry.decision
    muted = entry.status not in (Status.IN_FORCE, Status.CONTESTED)
    author = one_line(d.author or "unknown", 16)
    line = palette.mark(entry.status)
    line.append(f" {day(d)} ", DIM)
    line.append_text(plain(author, palette.field))
    line.append("  ")
    room = max(width - 15 - len(author), 10)
    line.append_text(plain(one_line(d.title or d.id, room), DIM if muted else ""))
    for word, others in (
        ("replaces", entry.replaces),
        ("replaced by", entry.replaced_by),
        ("replaced elsewhere by", entry.replaced_elsewhere),
    ):
        if others:
            line.append(f"\n  {word} ", DIM)
            names = ", ".join(v.title(o) or v.decision(o).id for o in others)
            line.append_text(
                plain(one_line(names, max(width - 3 - len(word), 10)), DIM)
            )
    return line


def mutation_lines(
    v: KgView, mutations: Sequence[Mutation], palette: Palette
) -> list[Text]:
    """One readable line per mutation, element ids shown as ``kind:name``."""
    lines = []
    for m in mutations:
        line = Text(f"{m.op} ", palette.field)
        if m.op == "upsert_element":
            line.append_text(bounded(f"{m.kind}:{m.name}" if m.kind else m.name))
            for key, value in m.props:
                line.append("  ")
                line.append_text(bounded(f"{key}={value}", DIM))
        elif m.op == "set_prop":
            line.append_text(bounded(v.label(m.element_id)))
            line.append(" ")
            line.append_text(bounded(f"{m.key} = {m.value}", "bold"))
        elif m.op in ("add_link", "retire_link"):
            line.append_text(bounded(v.label(m.from_id)))
            line.append(" ─")
            line.append_text(bounded(m.link_kind, palette.link))
            line.append("→ ")
            line.append_text(bounded(v.label(m.to_id)))
        else:
            line.append_text(plain(m.element_id or "?", DIM))
        lines.append(line)
    return lines


def _append_changes(
    out: Text,
    v: KgView,
    d: Decision,
    mutations: Sequence[Mutation],
    heading: tuple[str, str],
    summary_heading: str,
    palette: Palette,
) -> None:
    """Append the mutations under ``heading``, or the stored summary without them."""
    if mutations:
        out.append(*heading)
        for line in mutation_lines(v, mutations, palette):
            out.append("  ")
            out.append_text(line)
            out.append("\n")
    elif d.summary:
        out.append(summary_heading, heading[1])
        out.append_text(bounded(d.summary))
        out.append("\n")


def decision_record(
    v: KgView,
    idx: int,
    mutations: Sequence[Mutation] | None = None,
    *,
    palette: Palette,
) -> Text:
    """Everything about one decision: fields, changes, shapes, what it replaced."""
    d = v.decision(idx)
    out = Text()
    out.append_text(bounded(d.title or "(untitled stub)", "bold", limit=TITLE_CHARS))
    out.append(f"\n{d.id}  lamport {d.lamport}  {day(d)}\n", DIM)
    out.append("by ")
    out.append_text(bounded(d.author or "unknown"))
    out.append("  writer ")
    out.append_text(bounded(d.install or "?", DIM))
    out.append("\n")
    if d.rationale:
        out.append("\nWhy\n", "bold underline")
        out.append_text(bounded(d.rationale, keep_newlines=True))
        out.append("\n")
    _append_changes(
        out,
        v,
        d,
        mutations or (),
        ("\nMutations\n", "bold underline"),
        "\nWhat it changes\n",
        palette,
    )
    if d.refs:
        out.append("\nRefs\n", "bold underline")
        out.append_text(bounded(d.refs))
        out.append("\n")
    status = v.status(idx)
    out.append("\nStatus  ", "bold")
    out.append_text(palette.mark(status))
    out.append(f" {status.value}\n")
    if d.shapes:
        out.append("\nShapes (its status on each)\n", "bold underline")
        for eid in d.shapes:
            on = v.status_on(eid, idx)
            out.append("  ")
            out.append_text(palette.mark(on))
            out.append(" ")
            out.append_text(bounded(v.label(eid)))
            out.append(f"  {on.value}\n", DIM)
    for label, ids in (("Replaces", d.supersedes), ("Replaced by", d.superseded_by)):
        if ids:
            out.append(f"\n{label}\n", "bold underline")
            for other in v.oldest_first(ids):
                o = v.decision(other)
                out.append("  ")
                out.append_text(palette.mark(v.status(other)))
                out.append(f" {day(o)}  ", DIM)
                out.append_text(plain(one_line(o.title or o.id, 70)))
                out.append(f"  {o.id}\n", DIM)
    return out


def head_card(
    v: KgView,
    idx: int,
    number: int,
    mutations: Sequence[Mutation] | None = None,
    *,
    palette: Palette,
) -> Group:
    """One side of a conflict: title, date, author, id, rationale, changes, replaced.

    The decision id has a line of its own that never wraps: a card too narrow for it
    cuts it with an ellipsis rather than breaking it in two.
    """
    d = v.decision(idx)
    top = Text()
    top.append(f"[{number}] ", "bold reverse")
    top.append_text(bounded(d.title, "bold", limit=TITLE_CHARS))
    top.append(f"\n{day(d)} · ", DIM)
    top.append_text(bounded(d.author or "unknown", DIM))
    ident = plain(d.id, DIM)
    ident.no_wrap = True
    ident.overflow = "ellipsis"
    out = Text("\n")
    if d.rationale:
        out.append_text(bounded(d.rationale, keep_newlines=True))
        out.append("\n\n")
    # A bare upsert (no props) only names the element; it changes nothing visible.
    changes = [m for m in mutations or () if m.op != "upsert_element" or m.props]
    _append_changes(out, v, d, changes, ("changes:\n", "bold"), "changes: ", palette)
    replaced = d.supersedes
    out.append("replaced: ", "bold")
    if replaced:
        out.append_text(plain(", ".join(one_line(v.title(r), 40) for r in replaced)))
    else:
        out.append("nothing", DIM)
    return Group(top, ident, out)


@dataclass(frozen=True, slots=True)
class GraphLine:
    """One rendered line of the neighbourhood drawing and the neighbour it shows."""

    text: Text
    target: str | None


def neighbourhood(
    v: KgView,
    center: str,
    *,
    depth: int,
    selected: int,
    width: int,
    palette: Palette,
) -> tuple[list[GraphLine], list[str]]:
    """Draw an element, its neighbours as boxes, and the link kinds on the edges.

    A vertical bus leaves the centre box; every neighbour hangs off it on an edge
    labelled with the link kind and an arrow for its direction. With more than ten
    neighbours the boxes shrink to one line each, so forty stay readable.

    Returns:
        The lines, and the neighbour element ids in the order they can be selected.
    """
    contested = v.conflicts()
    rows: list[tuple[bool, str, str]] = []  # (outgoing, kind, neighbour)
    rows += [(True, link.kind, link.other) for link in v.links_out(center)]
    rows += [(False, link.kind, link.other) for link in v.links_in(center)]
    lines: list[GraphLine] = []
    label = one_line(v.label(center), max(width - 8, 16))
    style: Style | str = palette.contested if center in contested else "bold"
    inner = len(label) + 2
    lines.append(GraphLine(Text("┏" + "━" * inner + "┓", style), None))
    body = Text("┃ ", style)
    body.append_text(plain(label, style))
    body.append(" ┃", style)
    lines.append(GraphLine(body, None))
    lines.append(GraphLine(Text("┗━━┯" + "━" * (inner - 3) + "┛", style), None))
    if not rows:
        lines.append(GraphLine(Text("   (no links)", DIM), None))
        return lines, []
    compact = len(rows) > 10
    kind_w = min(max(len(k) for _, k, _ in rows), 22)
    order: list[str] = []
    for n, (outgoing, kind, other) in enumerate(rows):
        last = n == len(rows) - 1
        chosen = n == selected
        name = one_line(v.label(other), max(width - kind_w - 16, 12))
        box_style = palette.contested if other in contested else Style()
        if chosen:
            box_style += Style(reverse=True)
        edge = one_line(kind, kind_w)
        if outgoing:
            wire = Text("─ ", DIM)
            wire.append_text(plain(edge, palette.link))
            wire.append(" " + "─" * (kind_w - len(edge)) + "─▶", DIM)
        else:
            wire = Text("◀─ ", DIM)
            wire.append_text(plain(edge, palette.link))
            wire.append(" " + "─" * (kind_w - len(edge)) + "─", DIM)
        pad = " " * (kind_w + 5)
        stem = "   │" if not last else "    "
        if compact:
            line = Text("   └" if last else "   ├", DIM)
            line.append_text(wire)
            line.append(" [ ", box_style)
            line.append_text(plain(name, box_style))
            line.append(" ]", box_style)
            lines.append(GraphLine(line, other))
        else:
            top = Text("   │" + pad + "┌" + "─" * (len(name) + 2) + "┐", DIM)
            mid = Text("   └" if last else "   ├", DIM)
            mid.append_text(wire)
            mid.append("┤", DIM)
            mid.append(" ", box_style)
            mid.append_text(plain(name, box_style or Style(bold=True)))
            mid.append(" ", box_style)
            mid.append("│", DIM)
            bottom = Text(stem + pad + "└" + "─" * (len(name) + 2) + "┘", DIM)
            lines += [
                GraphLine(top, other),
                GraphLine(mid, other),
                GraphLine(bottom, other),
            ]
        order.append(other)
        if depth > 1:
            lines.extend(_second_ring(v, other, center, depth, last, width))
    return lines, order


def _second_ring(
    v: KgView, eid: str, center: str, depth: int, last: bool, width: int
) -> list[GraphLine]:
    around = sorted(
        {(link.kind, link.other) for link in v.links_out(eid) if link.other != center}
        | {(link.kind, link.other) for link in v.links_in(eid) if link.other != center}
    )
    out: list[GraphLine] = []
    stem = "    " if last else "   │"
    for k, other in around[:6]:
        line = Text(stem + "      ⋯ ", DIM)
        line.append_text(plain(one_line(k, 20), DIM))
        line.append(" ")
        line.append_text(plain(one_line(v.label(other), width - 40), DIM))
        if depth > 2:
            degree = v.degree(other)
            line.append(f"  ({degree} link{'s' if degree != 1 else ''})", DIM)
        out.append(GraphLine(line, other))
    if len(around) > 6:
        out.append(
            GraphLine(Text(stem + f"      ⋯ and {len(around) - 6} more", DIM), None)
        )
    return out
