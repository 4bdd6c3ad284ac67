"""Recall: the head set for the elements in play, for a path or a topic (spec 6.4).

One deliberate fix (spec 13.1): relevance alone decides the filter. The reference adds
``0.001 × lamport`` before the ``score >= 1`` cut, so from lamport 1000 on every
recently decided element passes any filter; here recency only orders elements whose
relevance is equal, and the printed ``score`` is the relevance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.reads.kg import when_of
from kgai_tui.core.recall.hints import is_thin
from kgai_tui.core.recall.scoring import (
    ABOUT_WEIGHT,
    DECISION_WEIGHT,
    PATH_WEIGHT,
    about_score,
    decision_about_score,
    glob_match,
    one_line,
    props_paths,
    tokenize,
)
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from kgai_tui.core.recall.index import RecallIndex
    from kgai_tui.core.recall.tokens import F64
    from kgai_tui.core.replay.projection_view import ProjectionView

DEFAULT_MAX: Final = 15
WHY_CAP: Final = 4


def decision_boost(p: ProjectionView, q_toks: list[str]) -> dict[str, float]:
    """Score every decision's text against the topic; each element keeps its best."""
    boost: dict[str, float] = {}
    for idx, shaped in enumerate(p.dec_shapes):
        if not shaped:
            continue
        score = decision_about_score(
            q_toks, p.dec_title[idx], p.dec_rationale[idx], p.dec_summary[idx]
        )
        if score <= 0:
            continue
        for eid in shaped:
            if score > boost.get(eid, 0.0):
                boost[eid] = score
    return boost


def _name(p: ProjectionView, eid: str) -> str:
    found = p.element(eid)
    return "" if found is None else found[1]


def element_links(p: ProjectionView, eid: str) -> list[dict[str, str]]:
    """Out-links then in-links, each ordered by kind, neighbour name, neighbour id."""
    outs = sorted((k, _name(p, t), t) for k, t in p.out_links(eid))
    ins = sorted((k, _name(p, f), f) for k, f in p.in_links(eid))
    return [{"dir": "out", "kind": k, "neighbor": n} for k, n, _ in outs] + [
        {"dir": "in", "kind": k, "neighbor": n} for k, n, _ in ins
    ]


def relevance(
    p: ProjectionView,
    eid: str,
    paths: list[str],
    q_toks: list[str],
    boost: dict[str, float],
) -> float:
    """Return the path and topic score of one element (no recency term)."""
    kind, name, blob = p.element(eid) or ("", "", "")
    score = 0.0
    if paths:
        stored = props_paths(blob)
        for query in paths:
            if any(glob_match(s, query) for s in stored):
                score += PATH_WEIGHT
    if q_toks:
        score += ABOUT_WEIGHT * about_score(q_toks, kind, name, blob)
        score += DECISION_WEIGHT * boost.get(eid, 0.0)
    return score


def _relevances(
    p: ProjectionView, paths: list[str], q_toks: list[str]
) -> Iterable[tuple[str, float]]:
    """Every element with its relevance: from the recall index when there is one.

    A live projection keeps a :class:`RecallIndex` (built on first use, exactly
    equal to the scan below); a point-in-time view is small enough to scan.
    """
    index = recall_index_for(p) if paths or q_toks else None
    if index is not None:
        ids, rel = index.relevance_array(paths, q_toks)
        return zip(ids, rel.tolist(), strict=True)
    boost = decision_boost(p, q_toks) if q_toks else {}
    return ((eid, relevance(p, eid, paths, q_toks, boost)) for eid in p.graph.nodes)


def _relevance_of(
    p: ProjectionView, index: RecallIndex | None
) -> Callable[[Sequence[str]], F64]:
    """Recall's relevance of every element for tokens and no paths, in the order
    :func:`_relevances` gives them (the bridge of the hints asks it): from the
    answer's own ``index``, or by the scan when there is none."""
    import numpy as np

    def relevance_of(toks: Sequence[str]) -> F64:
        if index is not None:
            return index.relevance_array([], list(toks))[1]
        boost = decision_boost(p, list(toks))
        rel = [relevance(p, e, [], list(toks), boost) for e in p.graph.nodes]
        return np.array(rel, dtype=np.float64)

    return relevance_of


def _order(row: tuple[float, int, str]) -> tuple[float, int, str]:
    """Recall's order: relevance, then the latest authority's lamport, then the id."""
    return (-row[0], -row[1], row[2])


def recall_index_for(p: ProjectionView) -> RecallIndex | None:
    """The recall index answering for ``p``: the model's stored one, the live
    projection's own, or none (a point-in-time view is small enough to scan).

    Imported here, like numpy: importing this module (the CLI does, for every
    command) loads neither NetworkX nor NumPy.
    """
    stored = p.stored
    if stored is not None:
        return stored.recall_index()
    from kgai_tui.core.replay.projection import Projection

    if isinstance(p, Projection):
        from kgai_tui.core.recall.index import recall_index_of

        return recall_index_of(p)
    return None


def _first_from_index(
    p: ProjectionView,
    ids: list[str],
    rel: F64,
    limit: int,
) -> tuple[list[tuple[float, int, str]], int]:
    """The first ``limit`` elements in recall's order and how many pass the filter,
    from the recall index's relevance array (``ids``, ``rel``).

    Every element is scored (10,000 at 1M decisions), but only those that can be
    among the first are ordered in Python: numpy ranks the rest by relevance and
    lamport, and the cut is widened over the whole group tied with the last one
    kept, so the id settles those ties exactly as a full sort would.
    """
    # The recall index (and numpy under it) loads only for recall.
    import numpy as np

    keep = np.flatnonzero(rel >= 1)
    total = len(keep)
    kept_rel = rel[keep]
    lamport = p.max_authority_lamport
    kept_lam = np.fromiter(
        (lamport(ids[k]) for k in keep.tolist()), dtype=np.int64, count=total
    )
    ranked = np.lexsort((kept_lam, kept_rel))[::-1]  # relevance, lamport: descending
    end = min(limit, total)
    if 0 < end < total:
        last = ranked[end - 1]
        tied = (kept_rel[ranked[end:]] == kept_rel[last]) & (
            kept_lam[ranked[end:]] == kept_lam[last]
        )
        end += int(np.argmin(tied)) if not tied.all() else len(tied)
    rows = [
        (float(kept_rel[j]), int(kept_lam[j]), ids[int(keep[j])])
        for j in ranked[:end].tolist()
    ]
    rows.sort(key=_order)
    return rows[:limit], total


def context_obj(
    p: ProjectionView, *, paths: list[str], about: str, limit: int = DEFAULT_MAX
) -> dict[str, Any]:
    """Return the recall payload ``{ok, items, shown, omitted, total, note?,
    hints?}``: ``hints`` only when the answer is thin (:mod:`..recall.hints`)."""
    limit = limit if limit > 0 else DEFAULT_MAX
    q_toks = tokenize(about) if about else []
    filtered = bool(paths) or bool(about)
    index = recall_index_for(p) if paths or q_toks else None
    arrays: tuple[list[str], F64] | None = None
    if index is not None:
        arrays = index.relevance_array(paths, q_toks)
        first, total = _first_from_index(p, *arrays, limit)
    else:
        scored: list[tuple[float, int, str]] = []
        every: list[tuple[str, float]] = []
        for eid, rel in _relevances(p, paths, q_toks):
            every.append((eid, rel))
            if filtered and rel < 1:
                continue
            scored.append((rel, p.max_authority_lamport(eid), eid))
        scored.sort(key=_order)
        first, total = scored[:limit], len(scored)
    items = [_item(p, eid, rel) for rel, _, eid in first]
    omitted = max(total - limit, 0)
    out: dict[str, Any] = {
        "ok": True,
        "items": items,
        "shown": len(items),
        "omitted": omitted,
        "total": total,
    }
    note = ""
    if omitted > 0:
        note = (
            f"{omitted} more element(s) omitted — narrow with --paths/--about "
            "or raise --max"
        )
    if not filtered:
        note = ("no filters — showing whole element graph. " + note).strip()
    if note:
        out["note"] = note
    if is_thin(total, q_toks):
        from kgai_tui.core.recall.hints import hints

        if arrays is None:
            import numpy as np

            arrays = (
                [e for e, _ in every],
                np.fromiter((r for _, r in every), dtype=np.float64, count=len(every)),
            )
        out["hints"] = [
            h.obj() for h in hints(p, q_toks, *arrays, index, _relevance_of(p, index))
        ]
    return out


def _item(p: ProjectionView, eid: str, rel: float) -> dict[str, Any]:
    kind, name, blob = p.element(eid) or ("", "", "")
    item: dict[str, Any] = {"element_id": eid, "name": name, "kind": kind}
    props = parse_props(blob)
    if props:
        item["props"] = dict(sorted(props.items()))
    links = element_links(p, eid)
    if links:
        item["links"] = links
    why = []
    for idx in p.heads_of(eid)[:WHY_CAP]:
        entry: dict[str, Any] = {"title": p.dec_title[idx]}
        rationale = one_line(p.dec_rationale[idx])
        if rationale:
            entry["rationale"] = rationale
        entry["when"] = when_of(p, idx)
        entry["is_head"] = True
        why.append(entry)
    if why:
        item["why"] = why
    item["score"] = rel
    return item
