"""Pure reads behind the People view: supersession flow, shaped elements, monthly bars.

Each takes a :class:`ProjectionView` (the snapshot at the time slider) and returns
plain data; the view turns it into ``Text`` through :func:`safe_text.plain`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.reads.legend import Status, decision_status

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "Flow",
    "elements_shaped",
    "monthly_counts",
    "spark",
    "supersession_flows",
]

BARS: Final = "▁▂▃▄▅▆▇█"
"""The sparkline's eight heights (a blank for an empty month)."""


@dataclass(frozen=True, slots=True)
class Flow:
    """How many of a person's decisions are superseded, and by whom."""

    author: str
    decisions: int
    replaced: int
    by: tuple[tuple[str, int], ...]
    """Authors of the superseding decisions with their counts, most first."""


def supersession_flows(
    p: ProjectionView, people: Sequence[Mapping[str, Any]]
) -> dict[str, Flow]:
    """Each author's supersession flow: of their recorded decisions, those the
    legend calls superseded (in force nowhere, replaced; ``core.reads.legend``),
    and who replaced them. ``people`` are the rows of ``people`` for ``p``: their
    "decisions" and "superseded" are the flow's counts, so only who replaced whom
    is read here (the model groups it in one query; a projection in memory is
    walked; in the view's worker, never per highlighted row on the UI thread)."""
    by: dict[str, Counter[str]] = {}
    stored = p.stored
    if stored is not None:
        for who, other, n in stored.superseders():
            by.setdefault(who, Counter())[other] += n
    else:
        authors = p.dec_author
        for i, (ev_hash, who, later) in enumerate(
            zip(p.dec_hash, authors, p.dec_superseded_by, strict=True)
        ):
            if ev_hash and later and decision_status(p, i) is Status.SUPERSEDED:
                by.setdefault(who, Counter()).update({authors[j] for j in later})
    flows = {}
    for row in people:
        who = str(row["author"])
        ranked = sorted(by.get(who, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        flows[who] = Flow(
            who, int(row["decisions"]), int(row["superseded"]), tuple(ranked)
        )
    return flows


def elements_shaped(p: ProjectionView, author: str) -> list[str]:
    """``kind:name`` of every element ``author``'s decisions shape, sorted."""
    ids: set[str] = set()
    stored = p.stored
    if stored is not None:  # the model's per-author counts
        ids.update(stored.shaped_by(author))
    else:
        for ev_hash, who, shapes in zip(
            p.dec_hash, p.dec_author, p.dec_shapes, strict=True
        ):
            if ev_hash and who == author:
                ids.update(shapes)
    out = []
    for eid in ids:
        kind, name, _ = p.element(eid) or ("", "", "")
        out.append(f"{kind}:{name or eid}")
    return sorted(out)


def _month(stamp: int) -> tuple[int, int]:
    moment = datetime.fromtimestamp(stamp, UTC)
    return moment.year, moment.month


def monthly_counts(p: ProjectionView) -> tuple[list[str], dict[str, list[int]]]:
    """Every calendar month (UTC) from the first decision to the last, ``YYYY-MM``,
    and each author's decisions per month (undated decisions are left out)."""
    per: dict[str, Counter[tuple[int, int]]] = {}
    stored = p.stored
    if stored is not None:  # the model's rows, grouped by day in one query
        for who, day, n in stored.author_days():
            per.setdefault(who, Counter())[_month(day * 86400)] += n
    else:
        columns = zip(p.dec_hash, p.dec_author, p.dec_time, strict=True)
        for ev_hash, who, stamp in columns:
            if ev_hash and stamp is not None:
                per.setdefault(who, Counter())[_month(stamp)] += 1
    seen = [m for c in per.values() for m in c]
    if not seen:
        return [], {}
    (y, m), last = min(seen), max(seen)
    months: list[tuple[int, int]] = []
    while (y, m) <= last:
        months.append((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    labels = [f"{y:04d}-{m:02d}" for y, m in months]
    return labels, {who: [c[k] for k in months] for who, c in per.items()}


def spark(counts: list[int], top: int | None = None) -> str:
    """One character per count, ``▁`` to ``█`` scaled to ``top`` (a blank for 0)."""
    peak = top if top is not None else max(counts, default=0)
    if peak <= 0:
        return " " * len(counts)
    return "".join(
        " " if n <= 0 else BARS[min(len(BARS) - 1, (n * len(BARS) - 1) // peak)]
        for n in counts
    )
