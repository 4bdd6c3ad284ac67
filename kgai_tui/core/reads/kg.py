"""Reads over a projection, each returning the reference engine's JSON shape (spec 6).

Every function is a pure function of the projection and its arguments; every order is
total (see docs/determinism.md), so the same store gives the same bytes anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kgai_tui.core.errors import NotFoundError, UsageError
from kgai_tui.core.gosem.gotext import (
    format_epoch,
    go_lower,
    go_trim_space,
    parse_rfc3339,
)
from kgai_tui.core.wire.ids import resolve_ref

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView


def when_of(p: ProjectionView, idx: int) -> str:
    """Format a decision's recorded time as RFC3339 UTC, or ``""`` when it has none."""
    stamp = p.dec_time[idx]
    if stamp is None:
        return ""
    return format_epoch(stamp)


# ------------------------------------------------------------------ conflicts


def conflict_groups(p: ProjectionView, about: str = "") -> list[dict[str, Any]]:
    """Return contested elements (two or more heads), by element id (spec 6.2)."""
    needle = go_lower(about)
    groups = []
    for eid in sorted(p.contested):
        kind, name, _ = p.element(eid) or ("", "", "")
        if about and needle not in go_lower(name):
            continue
        heads = p.heads_of(eid)
        groups.append(
            {
                "element_id": eid,
                "heads": [p.dec_id[i] for i in heads if p.dec_id[i]],
                "kind": kind,
                "name": name,
                "titles": [p.dec_title[i] for i in heads if p.dec_title[i]],
            }
        )
    return groups


def conflicts_obj(p: ProjectionView, about: str = "") -> dict[str, Any]:
    """Return ``{"conflicts", "count", "ok"}`` (``conflicts`` is null when none)."""
    groups = conflict_groups(p, about)
    return {"conflicts": groups or None, "count": len(groups), "ok": True}


# ------------------------------------------------------------------ heads


def heads_entry(p: ProjectionView, eid: str) -> dict[str, Any]:
    """Return one element's decisions in force, newest first."""
    kind, name, _ = p.element(eid) or ("", "", "")
    return {
        "decisions": [
            {
                "author": p.dec_author[i],
                "id": p.dec_id[i],
                "lamport": p.dec_lamport[i],
                "title": p.dec_title[i],
                "when": when_of(p, i),
            }
            for i in p.heads_of(eid)
        ],
        "element_id": eid,
        "kind": kind,
        "name": name,
    }


def heads_obj(p: ProjectionView, token: str | None = None) -> dict[str, Any]:
    """Return the head set of one element, or of every element that has one."""
    if token:
        eid = find_element(p, token)
        if not p.has_element(eid):
            raise NotFoundError(
                f"no element {json.dumps(go_trim_space(token), ensure_ascii=False)}"
                f" (element {eid})"
            )
        eids = [eid]
    else:
        held = [(e, h) for e, h in p.heads.items() if h]
        p.prefetch(i for _, h in held for i in h)
        eids = sorted(e for e, _ in held)
    rows = [heads_entry(p, e) for e in eids]
    return {"count": len(rows), "heads": rows, "ok": True}


# ------------------------------------------------------------------ history


def find_element(p: ProjectionView, token: str) -> str:
    """Resolve a history token: an existing element id, else ``kind:name``."""
    trimmed = go_trim_space(token)
    if p.has_element(trimmed):
        return trimmed
    return resolve_ref(trimmed)[2]


def history_order(p: ProjectionView, indices: Iterable[int]) -> list[int]:
    """Order decisions oldest first: time (none last), then lamport, then id."""

    def key(i: int) -> tuple[int, int, int, str]:
        stamp = p.dec_time[i]
        return (stamp is None, stamp or 0, p.dec_lamport[i], p.dec_id[i])

    return sorted(indices, key=key)


def history_obj(p: ProjectionView, token: str) -> dict[str, Any]:
    """Return every decision that shaped an element, oldest first (spec 6.3).

    Raises:
        NotFoundError: no decision touches the element.
    """
    eid = find_element(p, token)
    shapers = p.el_shapes.get(eid, {})
    if not shapers:
        raise NotFoundError(
            f"no decisions touch {json.dumps(go_trim_space(token), ensure_ascii=False)}"
            f" (element {eid})"
        )
    kind, name, _ = p.element(eid) or ("", "", "")
    heads = p.heads.get(eid, set())
    p.prefetch(shapers)
    rows = []
    for i in history_order(p, list(shapers)):
        row: dict[str, Any] = {"id": p.dec_id[i], "title": p.dec_title[i]}
        if p.dec_rationale[i]:
            row["rationale"] = p.dec_rationale[i]
        row["author"] = p.dec_author[i]
        row["when"] = when_of(p, i)
        row["lamport"] = p.dec_lamport[i]
        if p.dec_summary[i]:
            row["mutation"] = p.dec_summary[i]
        row["is_head"] = i in heads
        rows.append(row)
    return {
        "ok": True,
        "element_id": eid,
        "name": name,
        "kind": kind,
        "decisions": rows,
    }


# ------------------------------------------------------------------ resolve


def resolve_obj(p: ProjectionView, token: str) -> dict[str, Any]:
    """Resolve ``kind:name`` to its id, whether it exists, and its heads (spec 6.9)."""
    kind, name, eid = resolve_ref(token)
    out: dict[str, Any] = {
        "ok": True,
        "name": name,
        "kind": kind,
        "element_id": eid,
        "existed": p.has_element(eid),
    }
    heads = p.heads_of(eid)
    if heads:
        out["head_decisions"] = [p.dec_id[i] for i in heads]
    return out


# ------------------------------------------------------------------ time


def parse_as_of(text: str) -> datetime:
    """Parse an as-of moment: RFC3339, or a bare date meaning the end of that day.

    Raises:
        UsageError: neither form parses.
    """
    moment = parse_rfc3339(text)
    if moment is not None:
        return moment
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        day = None
    if day is None or len(text) != 10:
        raise UsageError(
            f"invalid timestamp {json.dumps(text, ensure_ascii=False)} "
            "(use RFC3339 or YYYY-MM-DD)"
        )
    return day.replace(hour=23, minute=59, second=59)
