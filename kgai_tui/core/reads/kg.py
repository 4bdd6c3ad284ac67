"""Reads over a projection, each returning the reference engine's JSON shape (spec 6).

Every function is a pure function of the projection and its arguments; every order is
total (see docs/determinism.md), so the same store gives the same bytes anywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.errors import NotFoundError, UsageError
from kgai_tui.core.gosem.gotext import (
    format_epoch,
    go_lower,
    go_trim_space,
    normalize,
    parse_rfc3339,
)
from kgai_tui.core.safe_text import visible
from kgai_tui.core.wire.ids import resolve_ref

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

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
                f" (element {eid}){did_you_mean(p, token)}"
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


def close_elements(p: ProjectionView, token: str, limit: int = 3) -> list[str]:
    """Name up to ``limit`` elements a token that matched none may have meant.

    First the elements with the token's very name under another kind
    (``feature:Invoice`` for ``Invoice``), then those with the closest names
    (:func:`difflib.get_close_matches`); names compare folded as element ids fold
    them, the kind is left out (a shared ``feature:`` would make every feature look
    close). Within a name, elements of the token's kind come first, then by
    ``kind:name``, the form each is shown in. The order depends only on the set of
    elements, so every face says the same. It walks every element: call it only
    once the token is known to match none.
    """
    from difflib import get_close_matches

    kind, name, eid = resolve_ref(token)
    if not name:
        return []
    folded, folded_kind = normalize(name), normalize(kind)
    by_name: dict[str, list[tuple[bool, str]]] = {}
    for node, el_kind, el_name in p.element_names():
        if node == eid:
            continue
        # Shown on the error's one line: a line feed in a name must not end it.
        label = visible(f"{el_kind}:{el_name}")
        other_kind = normalize(el_kind) != folded_kind
        by_name.setdefault(normalize(el_name), []).append((other_kind, label))
    found: list[str] = []
    # The very name scores 1.0, so it comes first when there is one.
    for key in get_close_matches(folded, sorted(by_name), n=limit):
        found.extend(label for _, label in sorted(by_name[key]))
    return found[:limit]


def did_you_mean(p: ProjectionView, token: str) -> str:
    """``"; did you mean feature:Invoice?"`` for a token that matched no element,
    or ``""`` when no element is close (see :func:`close_elements`)."""
    close = close_elements(p, token)
    if not close:
        return ""
    return "; did you mean " + " or ".join(close) + "?"


def history_order(p: ProjectionView, indices: Iterable[int]) -> list[int]:
    """Order decisions oldest first: time (none last), then lamport, then id.

    A few are sorted by their fields, their rows fetched together (a view over
    the read model reads a single item a query); many by :func:`history_ranks`."""
    chosen = list(indices)
    if len(chosen) >= _RANKED:
        import numpy as np

        ranks = history_ranks(p, np.asarray(chosen, dtype=np.int64))
        order = np.empty(len(chosen), dtype=np.int64)
        order[ranks] = chosen
        return order.tolist()
    p.prefetch(chosen)
    times, lamports, ids = p.dec_time, p.dec_lamport, p.dec_id

    def key(i: int) -> tuple[int, int, int, str]:
        stamp = times[i]
        return (stamp is None, stamp or 0, lamports[i], ids[i])

    return sorted(chosen, key=key)


#: From this many decisions on, :func:`history_order` ranks them with numpy.
_RANKED: Final = 4096
#: Decisions whose sort keys are read per query.
_KEYS: Final = 65536


def history_ranks(p: ProjectionView, chosen: NDArray[np.int64]) -> NDArray[np.int64]:
    """The place of each of ``chosen`` (distinct decisions) in history order: their
    recorded times and lamports read in a few queries that keep nothing
    (``decision_fields``) and sorted together, their ids read and compared only
    within a run of equal times and lamports (a week of a million decisions: 1.1M
    keys, where three whole columns were copied and a tuple made per decision)."""
    import numpy as np

    n = len(chosen)
    none = np.zeros(n, dtype=np.bool_)
    times = np.zeros(n, dtype=np.int64)
    lamports = np.zeros(n, dtype=np.int64)
    for at in range(0, n, _KEYS):
        got = p.decision_fields(chosen[at : at + _KEYS].tolist(), ("time", "lamport"))
        end = at + len(got)
        stamps = [t for t, _ in got]
        none[at:end] = [t is None for t in stamps]
        times[at:end] = [0 if t is None else t for t in stamps]
        lamports[at:end] = [lam for _, lam in got]
    order = np.lexsort((lamports, times, none))
    tied = np.ones(max(n - 1, 0), dtype=np.bool_)
    for column in (none[order], times[order], lamports[order]):
        tied &= column[1:] == column[:-1]
    edges = np.flatnonzero(np.diff(np.concatenate(([0], tied.astype(np.int8), [0]))))
    for start, stop in zip(
        edges[0::2].tolist(), (edges[1::2] + 1).tolist(), strict=True
    ):
        run = order[start:stop]
        ids = [i for (i,) in p.decision_fields(chosen[run].tolist(), ("id",))]
        order[start:stop] = run[sorted(range(len(run)), key=ids.__getitem__)]
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n, dtype=np.int64)
    return ranks


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
            f" (element {eid}){did_you_mean(p, token)}"
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
        fixed = _repaired_moment(text)
        raise UsageError(
            f"invalid timestamp {json.dumps(text, ensure_ascii=False)}: use RFC3339 "
            "with seconds and a zone (2026-03-31T12:00:00Z, 2026-03-31T14:00:00+02:00)"
            " or a date (2026-03-31, the end of that day in UTC)"
            + (f"; did you mean {fixed}?" if fixed else "")
        )
    return day.replace(hour=23, minute=59, second=59)


# A moment almost in RFC3339: a space or "t" for "T", no seconds, no zone, a
# lower-case "z", a zone without its colon.
_ALMOST: Final = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(:\d{2}(?:\.\d+)?)?"
    r"\s*(?:([Zz])|([+-]\d{2}):?(\d{2}))?)?"
)


def _repaired_moment(text: str) -> str:
    """The valid moment ``text`` most likely meant (UTC when it names no zone), or
    ``""`` when there is none to offer."""
    m = _ALMOST.fullmatch(text.strip())
    if m is None:
        return ""
    year, month, day, hour, minute, seconds, _z, zone_h, zone_m = m.groups()
    date = f"{year}-{int(month):02d}-{int(day):02d}"
    if hour is None:
        fixed = date
        valid = len(fixed) == 10 and _is_day(fixed)
    else:
        zone = f"{zone_h}:{zone_m}" if zone_h else "Z"
        fixed = f"{date}T{int(hour):02d}:{minute}{seconds or ':00'}{zone}"
        valid = parse_rfc3339(fixed) is not None
    return fixed if valid and fixed != text else ""


def _is_day(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        return False
    return True
