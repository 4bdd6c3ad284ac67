"""The human rendering of ``diff`` (the CLI prints it; the explorer's diff modal too).

Plain text only: the terminal app wraps it in a literal ``Text`` (never markup), so
store strings cannot inject styles there, and the CLI prints it as is. Every string
of the diff is made visible first, so none can act on the terminal either.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from kgai_tui.core.gosem.gojson import Blocks
from kgai_tui.core.safe_text import visible_tree

_WHY_LIMIT: Final = 160
_TITLES: Final = {
    "decisions_recorded": "Decisions recorded",
    "decisions_superseded": "Decisions superseded",
    "elements_added": "Elements added",
    "elements_removed": "Elements removed",
    "elements_changed": "Elements relabelled",
    "props_changed": "Props changed",
    "links_added": "Links added",
    "links_retired": "Links retired",
    "conflicts_opened": "Conflicts opened",
    "conflicts_resolved": "Conflicts resolved",
}


_ONE: Final = {
    "decisions_recorded": "decision recorded",
    "decisions_superseded": "decision superseded",
    "elements_added": "element added",
    "elements_removed": "element removed",
    "elements_changed": "element relabelled",
    "props_changed": "prop changed",
    "links_added": "link added",
    "links_retired": "link retired",
    "conflicts_opened": "conflict opened",
    "conflicts_resolved": "conflict resolved",
}


def _readable(key: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """People read labels: sort element, prop and link rows by them (ids break ties).

    The JSON keeps its documented id order; this only reorders the text.
    """
    if key.startswith(("elements_", "conflicts_")):
        return sorted(rows, key=lambda r: (_element(r), r["element_id"]))
    if key == "props_changed":
        return sorted(rows, key=lambda r: (r["element"], r["element_id"], r["key"]))
    if key.startswith("links_"):
        return sorted(
            rows,
            key=lambda r: (r["from"], r["kind"], r["to"], r["from_id"], r["to_id"]),
        )
    return rows


def one_line(text: str, limit: int = _WHY_LIMIT) -> str:
    """Collapse white space to one line and cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _day(when: str) -> str:
    return when[:10] if when else "undated"


def _by(by: dict[str, Any] | None, indent: str = "      ") -> list[str]:
    if by is None:
        return [f"{indent}by: (no single decision; see the decisions recorded)"]
    who = f"{by['author']}, " if by.get("author") else ""
    lines = [f"{indent}by “{one_line(by['title'], 90)}” ({who}{_day(by['when'])})"]
    if by.get("rationale"):
        lines.append(f"{indent}why: {one_line(by['rationale'])}")
    return lines


def _element(row: dict[str, Any]) -> str:
    if row["kind"] and row["name"]:
        return f"{row['kind']}:{row['name']}"
    return str(row["name"] or row["element_id"])


def _value(value: str | None) -> str:
    return "(unset)" if value is None else f"“{one_line(value, 60)}”"


def _section(key: str, rows: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for row in rows:
        if key == "decisions_recorded":
            who = f" — {row['author']}" if row["author"] else ""
            out.append(f"  {_day(row['when'])}  “{one_line(row['title'], 90)}”{who}")
            if row["elements"]:
                out.append(f"      shapes {', '.join(row['elements'])}")
        elif key == "decisions_superseded":
            out.append(f"  ○ “{one_line(row['title'], 90)}” ({_day(row['when'])})")
            for by in row["by"]:
                out.extend(_by(by))
        elif key.startswith("elements_"):
            sign = {"elements_added": "+", "elements_removed": "-"}.get(key, "~")
            line = f"  {sign} {_element(row)}"
            if key == "elements_changed":
                line += f"  (was {row['was_kind']}:{row['was_name']})"
            out.append(line)
            if key != "elements_removed":
                out.extend(_by(row["by"]))
        elif key == "props_changed":
            out.append(
                f"  ~ {row['element']}.{row['key']}: {_value(row['old'])} → "
                f"{_value(row['new'])}"
            )
            out.extend(_by(row["by"]))
        elif key.startswith("links_"):
            sign = "+" if key == "links_added" else "-"
            out.append(f"  {sign} {row['from']} -{row['kind']}-> {row['to']}")
            out.extend(_by(row["by"]))
        elif key == "conflicts_opened":
            titles = " vs ".join(f"“{one_line(h['title'], 50)}”" for h in row["heads"])
            out.append(f"  ⚠ {_element(row)}: {titles}")
            for head in row["heads"]:
                out.extend(_by(head))
        elif key == "conflicts_resolved":
            out.append(f"  ✓ {_element(row)}")
            for by in row["by"]:
                out.extend(_by(by))
    return out


def render_diff(obj: Mapping[str, Any], limit: int | None = None) -> str:
    """Render a ``diff_obj`` result for people, sections in a fixed order
    (:func:`diff_lines`, joined)."""
    return "\n".join(diff_lines(obj, limit))


def diff_lines(obj: Mapping[str, Any], limit: int | None = None) -> Iterator[str]:
    """The lines of :func:`render_diff`, made a block of rows at a time.

    A section streamed from the store (:class:`Blocks`: the decisions recorded
    and superseded) is never held as text: a day of the 1M bench store is 27 MB
    of it. ``limit``: rows a section shows at most, then a line counting the
    rest (the explorer's), and only those rows are made."""
    counts = obj["counts"]
    head = f"What changed from {visible_tree(obj['from'])} to {visible_tree(obj['to'])}"
    parts = [
        f"{n} {_TITLES[key].lower() if n != 1 else _ONE[key]}"
        for key, n in counts.items()
        if n
    ]
    if not parts:
        yield head
        yield "nothing changed"
        return
    yield head
    yield " · ".join(parts)
    for key, title in _TITLES.items():
        if not len(obj[key]):
            continue
        yield ""
        yield title
        shown = 0
        for rows in _row_blocks(key, obj[key], limit):
            yield from _section(key, rows)
            shown += len(rows)
        if shown < counts[key]:
            more = counts[key] - shown
            yield f"  … and {more:,} more: kgai-tui diff prints every one"


def _row_blocks(
    key: str, value: Blocks | list[dict[str, Any]], limit: int | None
) -> Iterator[list[dict[str, Any]]]:
    """A section's rows as the text orders them, made visible, a block at a time
    (the first ``limit`` of them)."""
    if not isinstance(value, Blocks):
        rows = _readable(key, visible_tree(value))
        yield rows if limit is None else rows[:limit]
        return
    left = limit
    for block in value.blocks():  # in history order already
        rows = visible_tree(block if left is None else block[:left])
        yield rows
        if left is not None:
            left -= len(rows)
            if left <= 0:
                return
