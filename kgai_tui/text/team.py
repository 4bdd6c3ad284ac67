"""Plain-text renderings of the team reads: ``people`` and ``stale``.

Store text (authors, names, titles) is made visible first (never a control
sequence on the terminal), as in :mod:`kgai_tui.text.render`.
"""

from __future__ import annotations

from typing import Any

from kgai_tui.core.safe_text import visible_tree

__all__ = ["render_people", "render_stale"]


def _day(when: str | None) -> str:
    return when[:10] if when else "-"


def render_people(obj: dict[str, Any]) -> str:
    """One line per author: decisions, in force, superseded, dead ends, elements."""
    shown: dict[str, Any] = visible_tree(obj)
    rows = shown["people"]
    head = f"people as of {shown['as_of']}" if shown["as_of"] else "people"
    if not rows:
        return f"{head}: no decisions yet"
    width = max(len(r["author"]) for r in rows)
    lines = [
        f"{head} — decisions · in force · superseded · dead ends · elements · conflicts",
    ]
    for r in rows:
        lines.append(
            f"{r['author']:<{width}}  {r['decisions']:>6} · {r['in_force']:>6} · "
            f"{r['superseded']:>6} · {r['dead_ends']:>5} · {r['elements']:>5} · "
            f"{r['conflicts']:>3}   {_day(r['first'])} → {_day(r['last'])}"
        )
    return "\n".join(lines)


def render_stale(obj: dict[str, Any]) -> str:
    """Oldest first: the element, the age of its newest decision in force, its title."""
    shown: dict[str, Any] = visible_tree(obj)
    rows = shown["stale"]
    days = shown["older_than_seconds"] // 86400
    if not rows:
        return f"✓ nothing stale: every element has a decision in force from the last {days} days"
    lines = [
        f"{len(rows)} element(s) whose newest decision in force is older than {days} days"
    ]
    for r in rows:
        age = "age unknown" if r["age_days"] is None else f"{r['age_days']} days"
        lines.append(
            f"{r['kind']}:{r['name']}  {age}  {r['title']}  ({r['author']}, {_day(r['when'])})"
        )
    return "\n".join(lines)
