"""Score bounds: the exact top k without scoring every match, when the best score
the common words can reach (BM25 as tantivy computes it) settles the ranking.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from typing import Final

import tantivy

from kgai_tui.core.search.backend import (
    DISMAX_TIE,
    MUST,
    SHOULD,
    Backend,
    Q,
    Restrictable,
    filter_clause,
    term_query,
)
from kgai_tui.core.search.model import round_score
from kgai_tui.core.search.plan import Filters, Pair, Plan
from kgai_tui.core.search.rank import Cand, top_k_bounded

__all__ = ["BOUND_MIN_DOCS", "Freqs", "bounded_top", "match_bound"]

#: BM25 as tantivy computes it: a term's score in a document is
#: ``idf * (1 + K1) * tf / (tf + norm)``, always below ``idf * (1 + K1)``.
_K1: Final = 1.2
#: Relative slack over the exact bound: tantivy scores in f32.
_SLACK: Final = 1e-3
#: Indexes smaller than this are always searched whole (bounding costs more).
BOUND_MIN_DOCS: Final = 50_000


class Freqs:
    """Document frequencies in one searcher, each asked of tantivy once a query."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self._searcher = searcher
        self._known: dict[tuple[str, str], int] = {}

    def __call__(self, field: str, term: str) -> int:
        found = self._known.get((field, term))
        if found is None:
            found = self._known[field, term] = int(self._searcher.doc_freq(field, term))
        return found


def match_bound(df: Freqs, plan: Plan, filters: Filters) -> int | None:
    """At least the number of documents ``plan`` matches, from document frequencies.

    A match has one of the scoring terms, every required phrase and one term of
    every filter; ``None`` when nothing bounds it (a fuzzy plan without filter).
    """
    bounds = [sum(df(f, t) for f, t in pairs) for pairs in filters.terms]
    if plan.clauses:
        bounds.append(sum(df(f, t) for pairs in plan.clauses for f, t, _ in pairs))
    for phrase in plan.phrases:
        bounds.append(sum(min(df(f, t) for t in terms) for f, _, terms in phrase))
    return min(bounds) if bounds else None


def _idf(df: int, docs: int) -> float:
    """tantivy's BM25 idf (``docs`` counts every document: the indexes never delete)."""
    return math.log1p((docs - df + 0.5) / (df + 0.5))


def _dismax_bound(bounds: Sequence[float]) -> float:
    """Upper bound of a disjunction-max over clauses bounded by ``bounds``."""
    if not bounds:
        return 0.0
    top = max(bounds)
    return top + DISMAX_TIE * (sum(bounds) - top)


def bounded_top(
    backend: Backend,
    plan: Plan,
    k: int,
    allowed: Container[int] | None,
    expect: int | None,
    doc_freq: Freqs,
) -> list[Cand] | None:
    """The exact top ``k`` without scoring every match, when scores allow it.

    A word found in most documents has an idf near zero, so the documents that only
    match such words score (rounded) below the ``k``-th hit, or all round to 0 and
    then rank by key alone. Each clause's best possible score follows from its
    document frequencies (see :data:`_K1`); clauses found in few documents are
    *rare* and the rest *common*. :func:`~kgai_tui.core.search.rank.top_k_bounded` then ranks the
    rare clauses' matches (a small set) and settles the rest from the bound.

    Returns:
        The hits, or ``None`` when the bound settles nothing (search everything).
    """
    if plan.clauses is None:
        return None
    docs = backend.doc_count
    rare_limit = max(1_000, docs // 64)
    weight = 1.0 + _K1

    def pair_bound(field: str, term: str, boost: float) -> tuple[float, int]:
        df = doc_freq(field, term)
        return (boost * weight * _idf(df, docs) if df else 0.0), df

    rare: list[Pair] = []
    rest = 0.0
    common = bool(plan.phrases)
    for pairs in plan.clauses:
        bounds = [pair_bound(f, t, w) for f, t, w in pairs]
        clause = _dismax_bound([b for b, _ in bounds])
        if sum(df for _, df in bounds) <= rare_limit:
            rare.extend(p for p, (_, df) in zip(pairs, bounds, strict=True) if df)
        else:
            rest += clause
            common = True
    if not common:
        return None  # every match matches a rare clause: nothing to narrow
    for phrase in plan.phrases:
        per_field = []
        for field, boost, terms in phrase:
            idfs = [pair_bound(field, t, 1.0) for t in terms]
            if all(df for _, df in idfs):
                per_field.append(boost * sum(b for b, _ in idfs))
        rest += _dismax_bound(per_field)
    rest = rest * (1 + _SLACK) + 1e-9
    if not rare and round_score(rest) > 0.0:
        return None
    narrow = None
    if rare:
        either = Q.boolean_query([(SHOULD, term_query(f, t)) for f, t, _ in rare])
        restricted = plan.query if plan.restricted is None else plan.restricted(either)
        narrow = Q.boolean_query([(MUST, restricted), filter_clause(either)])
    whole = Restrictable(plan.query, plan.restricted)
    return top_k_bounded(
        backend, whole, k, narrow, rest, allowed=allowed, expect=expect
    )
