"""Pure functions from core data to Rich ``Text``; every store string goes via ``plain``.

Kept free of widgets so the look can be unit-tested without running an app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rich.text import Text

from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.ui.safe_text import one_line, plain

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.wire.model import Mutation

DIM: Final = "dim"
HEAD: Final = "bold green"
CONTESTED: Final = "bold red"
DEAD_END: Final = "italic yellow"


def day(p: ProjectionView, idx: int) -> str:
    """The recorded day of a decision, ``YYYY-MM-DD`` (or ``—``)."""
    stamp = p.dec_time[idx]
    if stamp is None:
        return "—"
    return format_epoch(stamp)[:10]


def element_label(p: ProjectionView, eid: str) -> str:
    """``kind:name`` of an element (``(unnamed)`` for a stub)."""
    kind, name, _ = p.element(eid) or ("", "", "")
    if not name:
        return f"(unnamed {eid})"
    return f"{kind}:{name}" if kind else name


def is_dead_end(p: ProjectionView, idx: int) -> bool:
    """A decision with no authority anywhere: a provenance-only note."""
    shaped = p.dec_shapes[idx]
    return bool(shaped) and not any(p.el_shapes[e].get(idx) for e in shaped)


def element_details(p: ProjectionView, eid: str, *, width: int = 80) -> Text:
    """Props, links, decisions in force and history of one element, as one Text."""
    from kgai_tui.core.reads.kg import history_order
    from kgai_tui.core.wire.props import parse_props

    kind, name, blob = p.element(eid) or ("", "", "")
    out = Text()
    out.append_text(plain(name or "(unnamed)", "bold"))
    out.append(f"  {kind}  ", DIM)
    out.append(eid, DIM)
    out.append("\n")
    heads = p.heads_of(eid)
    if len(heads) > 1:
        out.append(f"⚠ contested: {len(heads)} decisions in force\n", CONTESTED)
    props = parse_props(blob)
    if props:
        out.append("\nProps\n", "bold underline")
        for key in sorted(props):
            out.append("  ")
            out.append_text(plain(key, "cyan"))
            out.append(" = ")
            out.append_text(plain(props[key]))
            out.append("\n")
    graph = p.graph
    outs = sorted((k, t) for _, t, k in graph.out_edges(eid, keys=True))
    ins = sorted((k, f) for f, _, k in graph.in_edges(eid, keys=True))
    if outs or ins:
        out.append("\nLinks\n", "bold underline")
        for k, t in outs:
            out.append("  → ")
            out.append_text(plain(k, "magenta"))
            out.append(" ")
            out.append_text(plain(element_label(p, t)))
            out.append("\n")
        for k, f in ins:
            out.append("  ← ")
            out.append_text(plain(k, "magenta"))
            out.append(" ")
            out.append_text(plain(element_label(p, f)))
            out.append("\n")
    out.append("\nIn force\n", "bold underline")
    if not heads:
        out.append("  no decision in force\n", DIM)
    for idx in heads:
        style = CONTESTED if len(heads) > 1 else HEAD
        out.append("  ● ", style)
        out.append_text(plain(p.dec_title[idx], "bold"))
        out.append(f"\n    {day(p, idx)} · ", DIM)
        out.append_text(plain(p.dec_author[idx] or "unknown", DIM))
        out.append(f" · {p.dec_id[idx]}\n", DIM)
        if p.dec_rationale[idx]:
            out.append("    ")
            out.append_text(plain(one_line(p.dec_rationale[idx], width * 3)))
            out.append("\n")
    shapers = p.el_shapes.get(eid, {})
    out.append(f"\nHistory ({len(shapers)}, oldest first)\n", "bold underline")
    head_set = set(heads)
    for idx in history_order(p, list(shapers)):
        if idx in head_set:
            mark, style = "●", CONTESTED if len(heads) > 1 else HEAD
        elif is_dead_end(p, idx):
            mark, style = "✗", DEAD_END
        elif not shapers[idx]:
            mark, style = "·", DIM
        else:
            mark, style = "○", DIM
        out.append(f"  {mark} {day(p, idx)} ", style)
        title_style = "" if idx in head_set else DIM
        out.append_text(plain(one_line(p.dec_title[idx], width), title_style))
        if is_dead_end(p, idx):
            out.append("  (dead end)", DEAD_END)
        out.append("\n")
    return out


def mutation_lines(p: ProjectionView, mutations: Sequence[Mutation]) -> list[Text]:
    """One readable line per mutation, element ids shown as ``kind:name``."""
    lines = []
    for m in mutations:
        line = Text(f"{m.op} ", "cyan")
        if m.op == "upsert_element":
            line.append_text(plain(f"{m.kind}:{m.name}" if m.kind else m.name))
            for key, value in m.props:
                line.append("  ")
                line.append_text(plain(f"{key}={value}", DIM))
        elif m.op == "set_prop":
            line.append_text(plain(element_label(p, m.element_id)))
            line.append(" ")
            line.append_text(plain(f"{m.key} = {m.value}", "bold"))
        elif m.op in ("add_link", "retire_link"):
            line.append_text(plain(element_label(p, m.from_id)))
            line.append(" ─")
            line.append_text(plain(m.link_kind, "magenta"))
            line.append("→ ")
            line.append_text(plain(element_label(p, m.to_id)))
        else:
            line.append_text(plain(m.element_id or "?", DIM))
        lines.append(line)
    return lines


def _append_changes(
    out: Text,
    p: ProjectionView,
    idx: int,
    mutations: Sequence[Mutation],
    heading: tuple[str, str],
    summary_heading: str,
) -> None:
    """Append the mutations under ``heading``, or the stored summary without them."""
    if mutations:
        out.append(*heading)
        for line in mutation_lines(p, mutations):
            out.append("  ")
            out.append_text(line)
            out.append("\n")
    elif p.dec_summary[idx]:
        out.append(summary_heading, heading[1])
        out.append_text(plain(p.dec_summary[idx]))
        out.append("\n")


def decision_record(
    p: ProjectionView, idx: int, mutations: Sequence[Mutation] | None = None
) -> Text:
    """Everything about one decision: fields, changes, shapes, what it replaced."""
    out = Text()
    out.append_text(plain(p.dec_title[idx] or "(untitled stub)", "bold"))
    out.append(f"\n{p.dec_id[idx]}  lamport {p.dec_lamport[idx]}  {day(p, idx)}\n", DIM)
    out.append("by ")
    out.append_text(plain(p.dec_author[idx] or "unknown"))
    out.append("  writer ")
    out.append_text(plain(p.dec_install[idx] or "?", DIM))
    out.append("\n")
    if p.dec_rationale[idx]:
        out.append("\nWhy\n", "bold underline")
        out.append_text(plain(p.dec_rationale[idx], keep_newlines=True))
        out.append("\n")
    _append_changes(
        out,
        p,
        idx,
        mutations or (),
        ("\nMutations\n", "bold underline"),
        "\nWhat it changes\n",
    )
    if p.dec_refs[idx]:
        out.append("\nRefs\n", "bold underline")
        out.append_text(plain(p.dec_refs[idx]))
        out.append("\n")
    if p.dec_shapes[idx]:
        out.append("\nShapes\n", "bold underline")
        for eid in p.dec_shapes[idx]:
            authority = p.el_shapes[eid].get(idx)
            out.append("  ● " if authority else "  · ", HEAD if authority else DIM)
            out.append_text(plain(element_label(p, eid)))
            out.append("\n")
    for label, ids in (
        ("Replaces", p.dec_supersedes[idx]),
        ("Replaced by", p.dec_superseded_by[idx]),
    ):
        if ids:
            out.append(f"\n{label}\n", "bold underline")
            for other in ids:
                out.append(f"  {p.dec_id[other]}  ", DIM)
                out.append_text(plain(one_line(p.dec_title[other], 70)))
                out.append("\n")
    return out


def head_card(
    p: ProjectionView,
    idx: int,
    number: int,
    mutations: Sequence[Mutation] | None = None,
) -> Text:
    """One side of a conflict: title, rationale, author, date, changes, replaced."""
    out = Text()
    out.append(f"[{number}] ", "bold reverse")
    out.append_text(plain(p.dec_title[idx], "bold"))
    out.append(f"\n{day(p, idx)} · ", DIM)
    out.append_text(plain(p.dec_author[idx] or "unknown", DIM))
    out.append(f" · {p.dec_id[idx]}\n\n", DIM)
    if p.dec_rationale[idx]:
        out.append_text(plain(p.dec_rationale[idx], keep_newlines=True))
        out.append("\n\n")
    # A bare upsert (no props) only names the element; it changes nothing visible.
    changes = [m for m in mutations or () if m.op != "upsert_element" or m.props]
    _append_changes(out, p, idx, changes, ("changes:\n", "bold"), "changes: ")
    replaced = p.dec_supersedes[idx]
    out.append("replaced: ", "bold")
    if replaced:
        out.append_text(
            plain(", ".join(one_line(p.dec_title[r], 40) for r in replaced))
        )
    else:
        out.append("nothing", DIM)
    out.append("\n")
    return out


@dataclass(frozen=True, slots=True)
class GraphLine:
    """One rendered line of the neighbourhood drawing and the neighbour it shows."""

    text: Text
    target: str | None


def neighbourhood(
    p: ProjectionView, center: str, *, depth: int, selected: int, width: int
) -> tuple[list[GraphLine], list[str]]:
    """Draw an element, its neighbours as boxes, and the link kinds on the edges.

    A vertical bus leaves the centre box; every neighbour hangs off it on an edge
    labelled with the link kind and an arrow for its direction. With more than ten
    neighbours the boxes shrink to one line each, so forty stay readable.

    Returns:
        The lines, and the neighbour element ids in the order they can be selected.
    """
    graph = p.graph
    contested = p.contested
    rows: list[tuple[bool, str, str]] = []  # (outgoing, kind, neighbour)
    for _, t, k in sorted(
        graph.out_edges(center, keys=True), key=lambda e: (e[2], e[1])
    ):
        rows.append((True, k, t))
    for f, _, k in sorted(
        graph.in_edges(center, keys=True), key=lambda e: (e[2], e[0])
    ):
        rows.append((False, k, f))
    lines: list[GraphLine] = []
    label = one_line(element_label(p, center), max(width - 8, 16))
    style = CONTESTED if center in contested else "bold"
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
        name = one_line(element_label(p, other), max(width - kind_w - 16, 12))
        box_style = CONTESTED if other in contested else ""
        if chosen:
            box_style = (box_style + " reverse").strip()
        edge = one_line(kind, kind_w)
        if outgoing:
            wire = Text("─ ", DIM)
            wire.append_text(plain(edge, "magenta"))
            wire.append(" " + "─" * (kind_w - len(edge)) + "─▶", DIM)
        else:
            wire = Text("◀─ ", DIM)
            wire.append_text(plain(edge, "magenta"))
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
            mid.append_text(plain(name, box_style or "bold"))
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
            lines.extend(_second_ring(p, other, center, depth, last, width))
    return lines, order


def _second_ring(
    p: ProjectionView, eid: str, center: str, depth: int, last: bool, width: int
) -> list[GraphLine]:
    graph = p.graph
    around = sorted(
        {(k, t) for _, t, k in graph.out_edges(eid, keys=True) if t != center}
        | {(k, f) for f, _, k in graph.in_edges(eid, keys=True) if f != center}
    )
    out: list[GraphLine] = []
    stem = "    " if last else "   │"
    for k, other in around[:6]:
        line = Text(stem + "      ⋯ ", DIM)
        line.append_text(plain(one_line(k, 20), DIM))
        line.append(" ")
        line.append_text(plain(one_line(element_label(p, other), width - 40), DIM))
        if depth > 2:
            degree = graph.degree(other)
            line.append(f"  ({degree} link{'s' if degree != 1 else ''})", DIM)
        out.append(GraphLine(line, other))
    if len(around) > 6:
        out.append(
            GraphLine(Text(stem + f"      ⋯ and {len(around) - 6} more", DIM), None)
        )
    return out
