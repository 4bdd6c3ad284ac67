"""The query plan: an analysed query turned into the tantivy query of one index,
with the terms and phrases its scores can be bounded by (:mod:`.bounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import tantivy

from kgai_tui.core.search.analysis import Analysed
from kgai_tui.core.search.backend import (
    FIELDS,
    MUST,
    MUST_NOT,
    SCHEMA,
    SHOULD,
    DocType,
    Q,
    dismax,
    filter_clause,
    term_query,
)
from kgai_tui.core.search.snippet import typo_distance

__all__ = ["Filters", "Pair", "Plan", "plan_query"]

_PREFIX_TERMS: Final = 64
_FUZZY_MIN, _FUZZY_MAX = 3, 40
#: Typo tolerance looks at names, titles and rationales, not at props or authors.
_FUZZY_FIELDS: Final = frozenset({"title", "elnames", "body", "name", "kind"})


@dataclass(frozen=True, slots=True)
class Filters:
    """A query's required filters, and the one that selects fewest documents."""

    clauses: list[tuple[tantivy.Occur, tantivy.Query]]
    #: An ``element:`` filter (an element's decisions are few); ``None`` without.
    subset: tantivy.Query | None = None
    #: Per required filter, its (field, term) pairs: a match has one of them.
    terms: tuple[tuple[tuple[str, str], ...], ...] = ()


#: A scoring term of a plan: (field, analysed term, weight).
Pair = tuple[str, str, float]


@dataclass(frozen=True, slots=True)
class Plan:
    """The text part of a query, built once per index.

    ``clauses`` (the scoring term queries of each optional clause, a word or a
    prefix) and ``phrases`` (each required phrase as (field, weight, terms)) let
    :func:`~kgai_tui.core.search.bounds.bounded_top` bound scores; they are ``None`` for a fuzzy plan, whose
    terms are not known up front.
    """

    query: tantivy.Query
    scored: bool
    clauses: tuple[tuple[Pair, ...], ...] | None = None
    phrases: tuple[tuple[tuple[str, float, tuple[str, ...]], ...], ...] = ()
    #: The same query with every scoring leaf limited to a subset (see
    #: :func:`~kgai_tui.core.search.bounds.bounded_top`); ``None`` for a fuzzy plan.
    restricted: Callable[[tantivy.Query], tantivy.Query] | None = None


def _field_weights(doctypes: Sequence[DocType]) -> list[tuple[str, float]]:
    return [fw for dt in doctypes for fw in FIELDS[dt]]


def _same(query: tantivy.Query) -> tantivy.Query:
    return query


def _word_clause(
    term: str,
    fields: Sequence[tuple[str, float]],
    fuzzy: bool,
    leaf: Callable[[tantivy.Query], tantivy.Query] = _same,
) -> tantivy.Query | None:
    if not fuzzy:
        return dismax([leaf(Q.boost_query(term_query(f, term), w)) for f, w in fields])
    if not _FUZZY_MIN <= len(term) <= _FUZZY_MAX:
        return None
    dist = typo_distance(term)
    return dismax(
        [
            Q.boost_query(Q.fuzzy_term_query(SCHEMA, f, term, dist, True), w)
            for f, w in fields
            if f in _FUZZY_FIELDS
        ]
    )


def _prefix_pairs(
    searcher: tantivy.Searcher, prefix: str, fields: Sequence[tuple[str, float]]
) -> tuple[Pair, ...]:
    """Expand a prefix into the first 64 matching index terms (in term order).

    The first 64 terms of the union of the fields are among the first 64 of each
    field, so each field is asked for 64 at most, and only (field, term) pairs that
    exist become term queries.

    Returns:
        The (field, term, weight) pairs of the clause; none when no term has the
        prefix.
    """
    per_field = {
        field: {
            t for t, _ in searcher.terms_with_prefix(field, prefix, None, _PREFIX_TERMS)
        }
        for field, _ in fields
    }
    chosen = set(sorted(set().union(*per_field.values()))[:_PREFIX_TERMS])
    pairs = tuple(
        (field, term, weight)
        for field, weight in fields
        for term in sorted(per_field[field] & chosen)
    )
    return pairs


def _pairs_clause(
    pairs: Sequence[Pair], leaf: Callable[[tantivy.Query], tantivy.Query] = _same
) -> tantivy.Query:
    return dismax([leaf(Q.boost_query(term_query(f, t), w)) for f, t, w in pairs])


def plan_query(
    a: Analysed,
    searcher: tantivy.Searcher,
    doctypes: Sequence[DocType],
    clauses: Sequence[tuple[tantivy.Occur, tantivy.Query]],
    fuzzy: bool,
    typed: bool = True,
    subset: tantivy.Query | None = None,
) -> Plan | None:
    """Build the tantivy query; ``None`` when it cannot match anything.

    ``typed=False`` (the history index, decisions only) needs no ``doctype`` filter;
    a query left with only excluding clauses then gets a filter matching everything,
    as tantivy matches nothing without a required or optional clause.

    ``subset`` is a required filter among ``clauses`` that matches few documents
    (an ``element:`` filter): every scoring leaf is limited to it as well, so
    tantivy walks its few documents instead of a common word's postings (the
    scores are the same; see ``restricted`` below).
    """
    fields = _field_weights(doctypes)
    words: list[str] = []
    pairs: list[tuple[Pair, ...]] = []
    for term in a.words:
        if not fuzzy or _FUZZY_MIN <= len(term) <= _FUZZY_MAX:  # see _word_clause
            words.append(term)
            pairs.append(tuple((f, term, w) for f, w in fields))
    expanded: list[tuple[Pair, ...]] = []
    for prefix in a.prefixes:
        found = _prefix_pairs(searcher, prefix, fields)
        if found:
            expanded.append(found)
            pairs.append(found)

    def build(leaf: Callable[[tantivy.Query], tantivy.Query]) -> tantivy.Query | None:
        """The query, each scoring term or phrase query passed through ``leaf``."""
        should = [_word_clause(t, fields, fuzzy, leaf) for t in words]
        should.extend(_pairs_clause(found, leaf) for found in expanded)
        must: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for phrase in a.phrases:
            must.append(
                (
                    MUST,
                    dismax(
                        [
                            leaf(
                                Q.boost_query(
                                    Q.phrase_query(SCHEMA, f, list(phrase)), w
                                )
                            )
                            for f, w in fields
                        ]
                    ),
                )
            )
        if a.scoring and not should and not must:
            return None
        if should:
            must.append(
                (
                    MUST,
                    Q.boolean_query([(SHOULD, q) for q in should if q is not None]),
                )
            )
        if len(doctypes) == 1 and typed:
            must.append(filter_clause(term_query("doctype", doctypes[0])))
        must.extend(clauses)
        if not typed and must and all(occur == MUST_NOT for occur, _ in must):
            must.append(filter_clause(Q.all_query()))
        if not must:
            return Q.all_query()
        return Q.boolean_query(must)

    def limited(*more: tantivy.Query) -> Callable[[tantivy.Query], tantivy.Query]:
        subsets = [q for q in (subset, *more) if q is not None]
        if not subsets:
            return _same
        return lambda q: Q.boolean_query([(MUST, q), *map(filter_clause, subsets)])

    query = build(limited())
    if query is None:
        return None
    if (
        not pairs
        and not a.phrases
        and not clauses
        and not (len(doctypes) == 1 and typed)
    ):
        return Plan(query, False)
    phrases = tuple(
        tuple((f, w, tuple(t for _, t in phrase)) for f, w in fields)
        for phrase in a.phrases
    )

    def restricted(part: tantivy.Query) -> tantivy.Query:
        # Each leaf limited to the part: tantivy then walks the part's few
        # documents instead of seeking a common word's disjunction through its
        # postings one by one. A zero-score filter adds 0.0: the same scores.
        narrowed = build(limited(part))
        assert narrowed is not None
        return narrowed

    return Plan(
        query,
        a.scoring,
        None if fuzzy else tuple(pairs),
        phrases,
        None if fuzzy else restricted,
    )
