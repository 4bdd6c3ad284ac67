"""Plain-text renderings of the CLI's JSON shapes, for people at a terminal.

Each function takes the exact object ``--json`` would print, so text and JSON can
never disagree about what a command found. Every string in it is made visible first
(:func:`~kgai_tui.core.safe_text.visible_tree`), so store text, file names and paths
cannot act on the terminal, whichever fields a rendering picks.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from kgai_tui.core.reads.legend import MARKS, Status
from kgai_tui.core.safe_text import visible, visible_tree

P = ParamSpec("P")


def _marks_controls(
    render: Callable[Concatenate[dict[str, Any], P], str],
) -> Callable[Concatenate[dict[str, Any], P], str]:
    """Make a renderer see only visible text (see the module docstring).

    Only the object is marked; a renderer marks any other argument it prints.
    """

    @wraps(render)
    def wrapper(obj: dict[str, Any], /, *args: P.args, **kwargs: P.kwargs) -> str:
        shown: dict[str, Any] = visible_tree(obj)
        return render(shown, *args, **kwargs)

    return wrapper


def _short(dec_id: str) -> str:
    return dec_id[:10]


def _day(when: str) -> str:
    return when[:10] if when else "????-??-??"


@_marks_controls
def render_conflicts(obj: dict[str, Any], about: str = "") -> str:
    """Render ``conflicts``: each contested element and its competing heads.

    Args:
        obj: the answer.
        about: the ``--about`` words the answer was filtered by, if any: "no
            conflicts" then says about what, not that the store has none.
    """
    groups = obj.get("conflicts") or []
    if not groups and about:
        return (
            f"✓ no conflicts about {visible(about)}: no contested element's name "
            "contains it"
        )
    if not groups:
        return "✓ no conflicts: every element has at most one decision in force"
    lines = [f"⚠ {len(groups)} element(s) decided two ways"]
    for g in groups:
        lines.append(f"{g['kind']}:{g['name']}  ({g['element_id']})")
        for head, title in zip(g["heads"], g["titles"], strict=False):
            lines.append(f"├─ {title}  {_short(head)}")
        lines.append(
            "└─ resolve: kgai-tui resolve-conflict "
            f"{g['element_id']} --keep <decision id>"
        )
    return "\n".join(lines)


@_marks_controls
def render_heads(obj: dict[str, Any]) -> str:
    """Render ``heads``: the decisions in force per element."""
    rows = obj.get("heads") or []
    if not rows:
        return "no decisions in force"
    lines = []
    for row in rows:
        lines.append(f"{row['kind']}:{row['name']}")
        for d in row["decisions"]:
            lines.append(
                f"  ● {d['title']}  ({_day(d['when'])}, {d['author']}, "
                f"{_short(d['id'])})"
            )
    return "\n".join(lines)


@_marks_controls
def render_history(obj: dict[str, Any], statuses: Sequence[str] = ()) -> str:
    """Render ``history``: oldest first, each decision marked with its status on
    the element (the one legend, ``core.reads.legend``; ``statuses`` in the
    decisions' order, else in force or not from ``is_head``)."""
    decisions = obj["decisions"]
    lines = [
        f"{obj['kind']}:{obj['name']} — {len(decisions)} decision(s), oldest first"
    ]
    for n, d in enumerate(decisions):
        if n < len(statuses):
            status = Status(statuses[n])
        else:
            status = Status.IN_FORCE if d["is_head"] else Status.SUPERSEDED
        mark = f"{MARKS[status]} {status.value}"
        lines.append(f"{_day(d['when'])}  {d['title']}  {mark}")
        if d.get("rationale"):
            lines.append(f"    why: {d['rationale'].splitlines()[0]}")
        lines.append(f"    by {d['author'] or 'unknown'} · {_short(d['id'])}")
    return "\n".join(lines)


@_marks_controls
def render_resolve(obj: dict[str, Any]) -> str:
    """Render ``resolve``: the id, whether it exists, and its heads."""
    state = "exists" if obj["existed"] else "does not exist yet"
    lines = [f"{obj['kind']}:{obj['name']} → {obj['element_id']} ({state})"]
    for head in obj.get("head_decisions", []):
        lines.append(f"  ● {head}")
    return "\n".join(lines)


@_marks_controls
def render_context(obj: dict[str, Any]) -> str:
    """Render ``context``: elements in play, their links and decisions in force."""
    lines: list[str] = []
    for item in obj["items"]:
        lines.append(f"{item['name']} ({item['kind']})")
        for k, v in item.get("props", {}).items():
            lines.append(f"  {k}={v}")
        for link in item.get("links", []):
            arrow = "→" if link["dir"] == "out" else "←"
            lines.append(f"  {arrow} {link['kind']} {link['neighbor']}")
        for why in item.get("why", []):
            text = f"  ● {why['title']}"
            if why.get("rationale"):
                text += f" — {why['rationale']}"
            lines.append(text)
    if not obj["items"]:
        lines.append("nothing recalled: no element matches these paths or this topic")
    lines.append(f"({obj['shown']} shown, {obj['omitted']} more omitted)")
    if obj.get("note"):
        lines.append(obj["note"])
    lines += _hint_lines(obj.get("hints"))
    return "\n".join(lines)


def _hint_lines(hints: list[dict[str, str]] | None) -> list[str]:
    """A thin recall's hints: the names to retry with, and why the first is near."""
    if hints is None:
        return []
    if not hints:
        return [
            "no hint: nothing in the store is near these words (try kgai-tui search)"
        ]
    names = ", ".join(f"{h['name']} ({h['kind']})" for h in hints)
    first = hints[0]
    return [
        f"did you mean: {names}",
        f"  retry with --about {shlex.quote(first['name'])}: {first['why']}",
    ]


@_marks_controls
def render_as_of(obj: dict[str, Any]) -> str:
    """Render ``as-of``: counts, then elements, links and conflicts at that moment."""
    elements = obj.get("elements") or []
    links = obj.get("links") or []
    conflicts = obj.get("conflicts") or []
    lines = [
        f"as of {obj['at']}: {len(elements)} element(s), {len(links)} link(s), "
        f"{len(conflicts)} conflict(s)"
    ]
    lines += [f"  {name or '(unnamed)'}" for name in elements]
    lines += [f"  {ln['from']} -{ln['kind']}-> {ln['to']}" for ln in links]
    for g in conflicts:
        lines.append(f"  ⚠ {g['kind']}:{g['name']}: " + " | ".join(g["titles"]))
    return "\n".join(lines)


@_marks_controls
def render_status(obj: dict[str, Any]) -> str:
    """Render ``status``: one line per fact."""
    keys = [
        "root",
        "install_id",
        "actor",
        "events",
        "elements",
        "decisions",
        "conflicts",
        "shards",
        "skipped_lines",
        "sync_transport",
    ]
    lines = [f"{k}: {obj[k]}" for k in keys if k in obj]
    if obj.get("pending_approval"):
        lines.append(
            f"⚠ {obj['pending_approval']} waits for your approval on this machine: "
            "its store and capture rules do not apply yet (`kgai-tui trust --show`)"
        )
    return "\n".join(lines)


@_marks_controls
def render_doctor(obj: dict[str, Any]) -> str:
    """Render ``doctor``: a verdict, then every problem on its own line."""
    problems = obj.get("problems") or []
    if not problems:
        return (
            f"✓ healthy: {obj['events']} event(s) in {obj['root']}, "
            "every hash, decision id and chain checks out"
        )
    return "\n".join(
        [f"✗ {len(problems)} problem(s) in {obj['root']}"]
        + [f"  {p}" for p in problems]
    )


@_marks_controls
def render_search(obj: dict[str, Any]) -> str:
    """Render search hits for a person: ``●`` first hit, ``○`` the rest (spec 11.5).

    Args:
        obj: The ``{"hits", "ok"}`` object ``--json`` prints.

    Returns:
        Lines of text, every store string made visible.
    """
    hits = obj.get("hits")
    notes = [f"  {n}" for n in obj.get("notes") or ()]
    if obj.get("did_you_mean"):
        notes.append(f"  try: kgai-tui search {shlex.quote(obj['did_you_mean'])}")
    if hits is None:
        return "\n".join(
            ["nothing to search for: the query has no searchable words", *notes]
        )
    if not hits:
        return "\n".join(["no matches", *notes])
    lines = []
    for i, hit in enumerate(hits):
        mark = "●" if i == 0 else "○"
        if hit["kind"] == "element":
            lines.append(
                f"{mark} {hit['name'] or '(unnamed)'}  {hit.get('extra', '')} element"
            )
            continue
        lines.append(f"{mark} {hit['name'] or '(untitled)'}  decision {hit['id'][:10]}")
        if hit.get("extra"):
            lines.append(f"    {hit['extra']}")
        if hit.get("elements"):
            lines.append("    → " + ", ".join(hit["elements"]))
    return "\n".join([*lines, *notes])
