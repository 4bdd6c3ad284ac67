"""Full-text search: a deterministic tantivy BM25 index over elements and decisions.

This is the only module that imports tantivy. The design (docs/search.md has the long
form):

* **Two indexes.** *history* holds one document per hash-verified decision event and
  only ever grows (decisions are immutable, documents are built from the event alone),
  so appended events are indexed incrementally and its BM25 statistics are those of a
  fresh build. *live* holds the current elements and the decisions in force; it is a
  pure function of the projection and is rebuilt whole (never updated in place) when
  that changes, so no delete ever drifts its statistics. The default search reads
  *live*; ``include_all`` and ``as_of`` read decisions from *history*.
* **Deterministic ranking.** Hits are ordered by score rounded to 4 decimals (desc),
  then by id. tantivy breaks ties by internal document address, which differs between
  builds, so :mod:`search_rank` over-fetches until every document whose rounded score
  ties the last kept one has been seen, and for huge tie groups walks the key space (a
  fast field ordered like the id) in ranges. Scores themselves are bit-identical across
  builds because every build holds the same documents.
* **Queries never fail.** User text is parsed by :mod:`search_query` and analysed by
  the same analyzer as the documents; queries are built from terms, never by tantivy's
  query parser.
* **Persistent and incremental** (:mod:`search_cache`): the index lives in the user
  cache directory, checked against a fingerprint of the shards and a recorded state.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import re
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import orjson
import tantivy

from kgai_tui.core.errors import WriteError
from kgai_tui.core.gosem.gotext import normalize
from kgai_tui.core.recall.scoring import STOPWORDS, one_line
from kgai_tui.core.search.build import history_items
from kgai_tui.core.search.cache import (
    IndexState,
    PartState,
    cache_dir_for,
    dir_manifest,
    load_state,
    prints_from_disk,
    save_state,
    write_lock,
)
from kgai_tui.core.search.docs import (
    KEY_BIN_SHIFT,
    LIVE_KEYS,
    DocRecord,
    decision_key,
    history_fields,
    index_fields,
    live_key,
)
from kgai_tui.core.search.live import LiveSet, live_set, touched_by
from kgai_tui.core.search.model import SearchHit, hit_order, round_score
from kgai_tui.core.search.query import (
    ParsedQuery,
    camel_positions,
    parse_query,
    split_camel,
)
from kgai_tui.core.search.rank import Cand, top_k, top_k_bounded
from kgai_tui.core.search.snippet import Matcher, Token, best_snippet, typo_distance
from kgai_tui.core.store.shard_print import ShardPrint, compare_prints
from kgai_tui.core.wire.codec import event_from_obj
from kgai_tui.core.wire.ids import resolve_ref

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["MAX_LIMIT", "STAMP", "IndexInfo", "SearchIndex", "query_terms"]

#: Bumped whenever documents, fields or analysis change; an index with another stamp
#: is foreign and rebuilt.
SCHEMA_VERSION: Final = "kgai-search-3"
STAMP: Final = f"{SCHEMA_VERSION}/tantivy-{getattr(tantivy, '__version__', '?')}"

#: The largest ``limit`` a search honours (tantivy allocates per requested hit).
MAX_LIMIT: Final = 10_000
_ANALYZER: Final = "kg_text"
#: Text fields and their weights, per document type (the reference's weights).
_FIELDS: Final = {
    "decision": (("title", 3.0), ("elnames", 1.5), ("body", 1.0), ("meta", 0.5)),
    "element": (("name", 3.0), ("kind", 2.0), ("props", 1.0)),
}
_FILTER_FIELDS: Final = ("doctype", "f_kind", "f_author", "f_writer", "f_el", "f_name")
_DISMAX_TIE: Final = 0.1
_PREFIX_TERMS: Final = 64
_MAX_TERMS: Final = 48
_FUZZY_MIN, _FUZZY_MAX = 3, 40
#: Typo tolerance looks at names, titles and rationales, not at props or authors.
_FUZZY_FIELDS: Final = frozenset({"title", "elnames", "body", "name", "kind"})
_BUILD_HEAP: Final = 256_000_000
_LOCK_WAIT: Final = 120.0
_UPDATE_HEAP: Final = 64_000_000
#: Documents built before they are handed to tantivy together (see _write_docs).
_BURST: Final = 1024
#: A key range over fewer ``kbin`` values than this is found through their terms.
_NARROW_BINS: Final = 256
DocType = Literal["decision", "element"]


def _tantivy_failure(exc: BaseException) -> bool:
    """Whether an exception is an error from tantivy (including a Rust panic)."""
    return isinstance(exc, Exception) or type(exc).__module__ == "pyo3_runtime"


def _analyzer(*, stem: bool) -> tantivy.TextAnalyzer:
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if stem:
        builder = builder.filter(
            tantivy.Filter.custom_stopword(sorted(STOPWORDS))
        ).filter(tantivy.Filter.stemmer("english"))
    return builder.build()


_TEXT: Final = _analyzer(stem=True)
_SURFACE: Final = _analyzer(stem=False)


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    for fields in _FIELDS.values():
        for name, _ in fields:
            sb.add_text_field(name, tokenizer_name=_ANALYZER)
    for name in (*_FILTER_FIELDS, "flags"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    # Fast fields only: ranges over them scan the column. Indexed, each document
    # added a unique term to each, which cost tantivy more than all the text fields;
    # "kbin" (see KEY_BIN_SHIFT) finds the documents of a narrow key range instead.
    sb.add_unsigned_field("key", fast=True)
    sb.add_unsigned_field("kbin", indexed=True)
    sb.add_integer_field("time", fast=True)
    sb.add_bytes_field("disp", stored=True)
    return sb.build()


_SCHEMA: Final = _schema()


def _register(index: tantivy.Index) -> tantivy.Index:
    """Register the custom analyzers (they are not persisted: after every open)."""
    index.register_tokenizer(_ANALYZER, _TEXT)
    return index


# --------------------------------------------------------------------- analysis


_WORD: Final = re.compile(r"[^\W_]+")
_ASCII_RUN: Final = re.compile(r"[A-Za-z0-9]+")
_ASCII_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")


@functools.lru_cache(maxsize=1 << 16)
def _analysed_word(word: str) -> tuple[str, str]:
    """The index term (``""`` for a stopword) and the folded surface of one word."""
    stems = _TEXT.analyze(word)
    surface = _SURFACE.analyze(word)
    return (stems[0] if stems else "", surface[0] if surface else "")


def _spans_of(text: str) -> Iterator[tuple[int, int]]:
    """Word spans as the index tokenizer sees them (camelCase split included)."""
    if text.isascii():
        for m in _ASCII_RUN.finditer(text):
            run = m.group()
            if run.islower() or run.isupper() or run.isdigit():
                yield m.span()
                continue
            start = m.start()
            cuts = [start + c.start() for c in _ASCII_CAMEL.finditer(run)]
            yield from zip([start, *cuts], [*cuts, m.end()], strict=True)
        return
    cuts = camel_positions(text)
    for m in _WORD.finditer(text):
        start, end = m.span()
        inner = [c for c in cuts if start < c < end]
        yield from zip([start, *inner], [*inner, end], strict=True)


def _tokens(text: str) -> list[Token]:
    """Analyse one line into tokens with code point offsets into ``text``.

    Each distinct word is analysed once by the index's analyzers (cached).
    """
    out = []
    for start, end in _spans_of(text):
        term, surface = _analysed_word(text[start:end])
        if term or surface:
            out.append(Token(term, surface, start, end))
    return out


def _terms(text: str) -> list[str]:
    """Analysed terms of query text; words under two characters are dropped."""
    split = split_camel(text)
    return [
        t.text
        for t in _TEXT.pre_tokenize(split).tokens
        if t.char_offset_to - t.char_offset_from >= 2
    ]


def _phrase_terms(text: str) -> list[tuple[int, str]]:
    """Terms of a quoted phrase with their relative positions (stopwords leave gaps,
    as they do in the index)."""
    tokens = _TEXT.pre_tokenize(split_camel(text)).tokens
    if not tokens:
        return []
    first = tokens[0].position
    return [(t.position - first, t.text) for t in tokens]


@dataclass(frozen=True, slots=True)
class _Analysed:
    """A parsed query analysed into index terms."""

    words: tuple[str, ...]
    phrases: tuple[tuple[tuple[int, str], ...], ...]
    prefixes: tuple[str, ...]

    @property
    def scoring(self) -> bool:
        return bool(self.words or self.phrases or self.prefixes)


def _prefix_parts(chunk: str) -> tuple[list[str], list[str]]:
    """Split ``InvoiceRend`` into leading terms and the prefixes of its last word.

    The last word is kept unstemmed (lower-cased, folded) and, when different, also
    stemmed, since the index holds stems (``invoices*`` must find ``invoic``).
    """
    split = split_camel(chunk)
    surface = _SURFACE.pre_tokenize(split).tokens
    if not surface:
        return [], []
    last = surface[-1]
    lead = _terms(split[: last.char_offset_from])
    if len(last.text) < 2:
        return lead, []
    stems = _TEXT.analyze(last.text)
    forms = [last.text] + [s for s in stems[:1] if len(s) >= 2 and s != last.text]
    return lead, forms


def _analyse(pq: ParsedQuery) -> _Analysed:
    words: list[str] = []
    for chunk in pq.words:
        words.extend(_terms(chunk))
    prefixes: list[str] = []
    for chunk in pq.prefixes:
        lead, forms = _prefix_parts(chunk)
        words.extend(lead)
        prefixes.extend(forms)
    phrases = []
    for chunk in pq.phrases:
        terms = _phrase_terms(chunk)
        if len(terms) == 1:
            words.append(terms[0][1])
        elif terms:
            phrases.append(tuple(terms[:_MAX_TERMS]))
    return _Analysed(
        tuple(dict.fromkeys(words))[:_MAX_TERMS],
        tuple(dict.fromkeys(phrases)),
        tuple(dict.fromkeys(prefixes))[:_MAX_TERMS],
    )


def query_terms(text: str) -> list[str]:
    """The index terms a query's plain words search for (stemmed, no stopwords).

    ``"How is InvoiceRendering structured in the billing-module?"`` gives
    ``["invoic", "render", "structur", "bill", "modul"]``: camelCase, kebab and snake
    case are split, words are lower-cased, stopwords dropped and English stemmed.

    Args:
        text: Query text (filters, phrases and prefixes are parsed out first).

    Returns:
        The distinct terms in order.
    """
    return list(_analyse(parse_query(text)).words)


# --------------------------------------------------------------------- queries

_Q = tantivy.Query
_SHOULD, _MUST, _MUST_NOT = (
    tantivy.Occur.Should,
    tantivy.Occur.Must,
    tantivy.Occur.MustNot,
)


def _term(field: str, value: str) -> tantivy.Query:
    return _Q.term_query(_SCHEMA, field, value)


def _any_term(field: str, values: Iterable[str]) -> tantivy.Query:
    clauses = [(_SHOULD, _term(field, v)) for v in dict.fromkeys(values) if v]
    return _Q.boolean_query(clauses) if clauses else _Q.empty_query()


def _dismax(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return _Q.disjunction_max_query(list(queries), _DISMAX_TIE)


def _filter(query: tantivy.Query) -> tuple[tantivy.Occur, tantivy.Query]:
    """A required clause that does not change scores."""
    return (_MUST, _Q.const_score_query(query, 0.0))


@dataclass(frozen=True, slots=True)
class _Source:
    """One index read for one query: which documents, with which restrictions."""

    index: tantivy.Index
    doctypes: tuple[DocType, ...]
    clauses: tuple[tuple[tantivy.Occur, tantivy.Query], ...] = ()
    allowed: frozenset[int] | None = None
    keys: tuple[int, int] = (0, 1 << 64)
    #: Whether the index mixes document types (has a ``doctype`` field to filter on).
    typed: bool = True


@dataclass(frozen=True, slots=True)
class _Filters:
    """A query's required filters, and the one that selects fewest documents."""

    clauses: list[tuple[tantivy.Occur, tantivy.Query]]
    #: An ``element:`` filter (an element's decisions are few); ``None`` without.
    subset: tantivy.Query | None = None
    #: Per required filter, its (field, term) pairs: a match has one of them.
    terms: tuple[tuple[tuple[str, str], ...], ...] = ()


#: A scoring term of a plan: (field, analysed term, weight).
_Pair = tuple[str, str, float]


@dataclass(frozen=True, slots=True)
class _Plan:
    """The text part of a query, built once per index.

    ``clauses`` (the scoring term queries of each optional clause, a word or a
    prefix) and ``phrases`` (each required phrase as (field, weight, terms)) let
    :func:`_bounded_top` bound scores; they are ``None`` for a fuzzy plan, whose
    terms are not known up front.
    """

    query: tantivy.Query
    scored: bool
    clauses: tuple[tuple[_Pair, ...], ...] | None = None
    phrases: tuple[tuple[tuple[str, float, tuple[str, ...]], ...], ...] = ()
    #: The same query with every scoring leaf limited to a subset (see
    #: :func:`_bounded_top`); ``None`` for a fuzzy plan.
    restricted: Callable[[tantivy.Query], tantivy.Query] | None = None


def _field_weights(doctypes: Sequence[DocType]) -> list[tuple[str, float]]:
    return [fw for dt in doctypes for fw in _FIELDS[dt]]


def _same(query: tantivy.Query) -> tantivy.Query:
    return query


def _word_clause(
    term: str,
    fields: Sequence[tuple[str, float]],
    fuzzy: bool,
    leaf: Callable[[tantivy.Query], tantivy.Query] = _same,
) -> tantivy.Query | None:
    if not fuzzy:
        return _dismax([leaf(_Q.boost_query(_term(f, term), w)) for f, w in fields])
    if not _FUZZY_MIN <= len(term) <= _FUZZY_MAX:
        return None
    dist = typo_distance(term)
    return _dismax(
        [
            _Q.boost_query(_Q.fuzzy_term_query(_SCHEMA, f, term, dist, True), w)
            for f, w in fields
            if f in _FUZZY_FIELDS
        ]
    )


def _prefix_pairs(
    searcher: tantivy.Searcher, prefix: str, fields: Sequence[tuple[str, float]]
) -> tuple[_Pair, ...]:
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
    pairs: Sequence[_Pair], leaf: Callable[[tantivy.Query], tantivy.Query] = _same
) -> tantivy.Query:
    return _dismax([leaf(_Q.boost_query(_term(f, t), w)) for f, t, w in pairs])


def _plan(
    a: _Analysed,
    searcher: tantivy.Searcher,
    doctypes: Sequence[DocType],
    clauses: Sequence[tuple[tantivy.Occur, tantivy.Query]],
    fuzzy: bool,
    typed: bool = True,
    subset: tantivy.Query | None = None,
) -> _Plan | None:
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
    pairs: list[tuple[_Pair, ...]] = []
    for term in a.words:
        if not fuzzy or _FUZZY_MIN <= len(term) <= _FUZZY_MAX:  # see _word_clause
            words.append(term)
            pairs.append(tuple((f, term, w) for f, w in fields))
    expanded: list[tuple[_Pair, ...]] = []
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
                    _MUST,
                    _dismax(
                        [
                            leaf(
                                _Q.boost_query(
                                    _Q.phrase_query(_SCHEMA, f, list(phrase)), w
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
                    _MUST,
                    _Q.boolean_query([(_SHOULD, q) for q in should if q is not None]),
                )
            )
        if len(doctypes) == 1 and typed:
            must.append(_filter(_term("doctype", doctypes[0])))
        must.extend(clauses)
        if not typed and must and all(occur == _MUST_NOT for occur, _ in must):
            must.append(_filter(_Q.all_query()))
        if not must:
            return _Q.all_query()
        return _Q.boolean_query(must)

    def limited(*more: tantivy.Query) -> Callable[[tantivy.Query], tantivy.Query]:
        subsets = [q for q in (subset, *more) if q is not None]
        if not subsets:
            return _same
        return lambda q: _Q.boolean_query([(_MUST, q), *map(_filter, subsets)])

    query = build(limited())
    if query is None:
        return None
    if (
        not pairs
        and not a.phrases
        and not clauses
        and not (len(doctypes) == 1 and typed)
    ):
        return _Plan(query, False)
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

    return _Plan(
        query,
        a.scoring,
        None if fuzzy else tuple(pairs),
        phrases,
        None if fuzzy else restricted,
    )


# --------------------------------------------------------------------- bounds

#: BM25 as tantivy computes it: a term's score in a document is
#: ``idf * (1 + K1) * tf / (tf + norm)``, always below ``idf * (1 + K1)``.
_K1: Final = 1.2
#: Relative slack over the exact bound: tantivy scores in f32.
_SLACK: Final = 1e-3
#: Indexes smaller than this are always searched whole (bounding costs more).
_BOUND_MIN_DOCS: Final = 50_000


class _Freqs:
    """Document frequencies in one searcher, each asked of tantivy once a query."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self._searcher = searcher
        self._known: dict[tuple[str, str], int] = {}

    def __call__(self, field: str, term: str) -> int:
        found = self._known.get((field, term))
        if found is None:
            found = self._known[field, term] = int(self._searcher.doc_freq(field, term))
        return found


def _match_bound(df: _Freqs, plan: _Plan, filters: _Filters) -> int | None:
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
    return top + _DISMAX_TIE * (sum(bounds) - top)


def _bounded_top(
    backend: _Backend,
    plan: _Plan,
    k: int,
    allowed: frozenset[int] | None,
    expect: int | None,
    doc_freq: _Freqs,
) -> list[Cand] | None:
    """The exact top ``k`` without scoring every match, when scores allow it.

    A word found in most documents has an idf near zero, so the documents that only
    match such words score (rounded) below the ``k``-th hit, or all round to 0 and
    then rank by key alone. Each clause's best possible score follows from its
    document frequencies (see :data:`_K1`); clauses found in few documents are
    *rare* and the rest *common*. :func:`search_rank.top_k_bounded` then ranks the
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

    rare: list[_Pair] = []
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
        either = _Q.boolean_query([(_SHOULD, _term(f, t)) for f, t, _ in rare])
        restricted = plan.query if plan.restricted is None else plan.restricted(either)
        narrow = _Q.boolean_query([(_MUST, restricted), _filter(either)])
    whole = _Restrictable(plan.query, plan.restricted)
    return top_k_bounded(
        backend, whole, k, narrow, rest, allowed=allowed, expect=expect
    )


# --------------------------------------------------------------------- ranking


@dataclass(frozen=True, slots=True)
class _Restrictable:
    """A plan's query with the way to limit its scoring leaves to a subset."""

    query: tantivy.Query
    restricted: Callable[[tantivy.Query], tantivy.Query] | None


class _Backend:
    """The :class:`~kgai_tui.core.search.rank.Backend` of one tantivy searcher.

    Queries are tantivy queries or :class:`_Restrictable` plans.
    """

    def __init__(self, searcher: tantivy.Searcher, keys: tuple[int, int]) -> None:
        self.searcher = searcher
        self.bounds = keys

    def top(self, query: Any, n: int) -> Sequence[tuple[float, Any]]:
        return self.searcher.search(_plain(query), n, count=False).hits

    @property
    def doc_count(self) -> int:
        return int(self.searcher.num_docs)

    def keys(self, addrs: Sequence[Any]) -> list[int]:
        values = self.searcher.fast_field_values("key", list(addrs))
        return [int(v) if v is not None else 0 for v in values]

    @property
    def key_range(self) -> tuple[int, int]:
        return self.bounds

    def counted(self, query: Any, n: int) -> tuple[Sequence[tuple[float, Any]], int]:
        found = self.searcher.search(_plain(query), n, count=True)
        return found.hits, _count(found)

    def by_key(self, query: Any, n: int) -> Sequence[Any]:
        found = self.searcher.search(
            _plain(query), n, count=False, order_by_field="key", order=tantivy.Order.Asc
        )
        return [addr for _, addr in found.hits]

    def restrict(self, query: Any, low: int, high: int) -> Any:
        """Exact on the ``key`` column; a narrow range also requires its ``kbin``
        terms, so tantivy checks the column only for the few documents they hold
        (a wide range scans the column: cheaper than thousands of terms)."""
        unsigned = tantivy.FieldType.Unsigned
        window = _Q.range_query(_SCHEMA, "key", unsigned, low, high, True, True, False)
        clauses = [(_MUST, _plain(query)), _filter(window)]
        first, last = low >> KEY_BIN_SHIFT, high >> KEY_BIN_SHIFT
        if last - first < _NARROW_BINS:
            bins = _Q.range_query(
                _SCHEMA, "kbin", unsigned, first, last, True, True, True
            )
            if isinstance(query, _Restrictable) and query.restricted is not None:
                # Each scoring leaf limited to the bins as well (same scores).
                clauses[0] = (_MUST, query.restricted(bins))
            clauses.append(_filter(bins))
        return _Q.boolean_query(clauses)


def _plain(query: Any) -> tantivy.Query:
    """The tantivy query of a query or a :class:`_Restrictable` plan."""
    return query.query if isinstance(query, _Restrictable) else query


def _count(found: tantivy.SearchResult) -> int:
    # The bundled stubs omit SearchResult.count, which tantivy-py has.
    return int(found.count)  # type: ignore[attr-defined]


# --------------------------------------------------------------------- building


def _document(rec: DocRecord) -> tantivy.Document:
    """Build the index document of a record.

    One ``from_dict`` call instead of a dozen ``add_*`` calls: the build is bound by
    the Python work per document (tantivy indexes on its own thread meanwhile).
    """
    return tantivy.Document.from_dict(index_fields(rec), _SCHEMA)


def _new_index(path: Path | None) -> tantivy.Index:
    if path is None:
        return _register(tantivy.Index(_SCHEMA))
    path.mkdir(parents=True, exist_ok=False)
    return _register(tantivy.Index(_SCHEMA, path=str(path), reuse=False))


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building documents.

    Building creates no reference cycles, and with an engine of a million decisions
    alive a full collection walks tens of millions of objects (about a second); an
    update of the index allocates enough to trigger one.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _write(
    index: tantivy.Index, docs: Iterable[tantivy.Document | str], heap: int
) -> int:
    """Add documents (or their JSON) with one indexing thread, commit, and wait for
    merges. One thread writes one segment: a query then runs once, not per segment
    (measured at 1M: `--all` p95 6.5-7.9 ms on two segments, 4.2-6.0 ms on one)."""
    with _no_gc():
        return _write_docs(index, docs, heap)


def _write_docs(
    index: tantivy.Index, docs: Iterable[tantivy.Document | str], heap: int
) -> int:
    """Add documents in bursts of :data:`_BURST` (the order is unchanged).

    tantivy's indexing thread is faster than Python builds documents: fed one at a
    time, it empties its channel after each, sleeps, and every add wakes it (a futex
    call on both sides, a third of that thread's CPU in a full build). Added in a
    burst, the channel fills and the thread stays awake until it has drained it.
    """
    writer = index.writer(heap_size=heap, num_threads=1)
    add, add_json = writer.add_document, writer.add_json
    pending = iter(docs)
    count = 0
    try:
        while burst := list(islice(pending, _BURST)):
            for doc in burst:
                if isinstance(doc, str):
                    add_json(doc)  # made by search_build's helper process
                else:
                    add(doc)
            count += len(burst)
        writer.commit()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.rollback()
        raise
    finally:
        writer.wait_merging_threads()
    index.reload()
    return count


def _decision_objs(
    engine: Engine, after_lines: dict[str, int] | None = None
) -> Iterator[tuple[dict[str, Any], bool]]:
    """The engine's hash-verified decision events as dicts (no Event per line)."""
    return engine.decision_objs(after_lines)


def _history_docs(
    items: Iterable[tuple[dict[str, Any], bool]],
) -> Iterator[tantivy.Document]:
    """History documents of hash-verified decision events, in the given order."""
    schema = _SCHEMA
    from_dict = tantivy.Document.from_dict
    for obj, id_ok in items:
        fields = history_fields(obj, id_ok)
        if fields is not None:
            yield from_dict(fields, schema)


def _all_history_docs(
    engine: Engine, keys: Iterable[tuple[int, str, str, int, int, int]] | None = None
) -> Iterator[tantivy.Document]:
    """``_history_docs(_decision_objs(engine))`` in one loop (the tests hold them
    equal): a full build runs it a million times on the core that feeds tantivy.

    ``keys`` (from ``engine.decision_order()``) limits it to those events.
    """
    from kgai_tui.core.replay.order import LineSource
    from kgai_tui.core.store.logscan import DECISION_ID_OK

    scans = engine.scans
    gates = [scan.flags for scan in scans]
    schema = _SCHEMA
    from_dict = tantivy.Document.from_dict
    source = LineSource(engine.log_dir, scans)
    load = source.load
    try:
        for key in engine.decision_order() if keys is None else keys:
            si, i = key[4], key[5]
            fields = history_fields(load(si, i), gates[si][i] & DECISION_ID_OK != 0)
            if fields is not None:
                yield from_dict(fields, schema)
    finally:
        source.release()


def _live_docs(live: LiveSet) -> Iterator[tantivy.Document]:
    return (entry.document(_document) for entry in live.entries)


def _appended(engine: Engine, state: IndexState) -> list[tuple[dict[str, Any], bool]]:
    """The decision events on lines after those the index state covers."""
    return list(_decision_objs(engine, {p.name: p.lines for p in state.shards}))


#: The live documents last written per cache directory, for incremental updates in
#: long-running processes (the terminal app, the MCP server).
_LIVE_MEMO: dict[str, LiveSet] = {}


def _engine_prints(engine: Engine) -> tuple[ShardPrint, ...]:
    """The fingerprint of the log the engine read, with each shard's line count."""
    return tuple(
        sorted(
            (replace(s.shard_print(), lines=s.newline_count) for s in engine.scans),
            key=lambda p: p.name.encode("utf-8", "surrogateescape"),
        )
    )


def _open_part(cache: Path, part: PartState) -> tantivy.Index | None:
    """Open one recorded index directory, or ``None`` if anything does not match."""
    path = cache / part.dir
    try:
        if dir_manifest(path) != part.files:
            return None
        index = _register(tantivy.Index.open(str(path)))
        if index.searcher().num_docs != part.docs:
            return None
        return index
    except BaseException as exc:
        if not _tantivy_failure(exc):
            raise
        return None


def _remove_stale(cache: Path, keep: Iterable[str]) -> None:
    keep_set = set(keep)
    for entry in cache.iterdir():
        if entry.is_dir() and entry.name not in keep_set:
            shutil.rmtree(entry, ignore_errors=True)


# --------------------------------------------------------------------- the index


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """What an index holds and how it was obtained.

    Attributes:
        how: ``"cached"`` (reused as is), ``"appended"`` (incremental),
            ``"built"`` (full build) or ``"memory"`` (no store path: not persisted).
        history_docs: Decision events indexed.
        live_docs: Current elements plus decisions in force.
        path: The cache directory, if persisted.
        added: History documents added by this open.
    """

    how: str
    history_docs: int
    live_docs: int
    path: Path | None
    added: int = 0


@dataclass(slots=True)
class _Moment:
    head_keys: frozenset[int]
    element_keys: frozenset[int]


class SearchIndex:
    """A search index over one store, opened for queries.

    Obtain one with :meth:`for_engine` (builds or updates as needed) or
    :meth:`open_cached` (only if the cache is current; no log reading), then call
    :meth:`search`.
    """

    def __init__(
        self,
        live: tantivy.Index,
        history: tantivy.Index,
        info: IndexInfo,
        *,
        root: Path | None,
        engine: Engine | None,
    ) -> None:
        """Wrap opened indexes (use the class methods instead)."""
        self._live = live
        self._history = history
        self.info = info
        self._root = root
        self._engine = engine
        self._moments: dict[datetime, _Moment] = {}

    # ------------------------------------------------------------ opening

    @classmethod
    def for_engine(
        cls, engine: Engine, *, cache_base: Path | None = None
    ) -> SearchIndex:
        """Open the index of an engine's store, building or updating it if needed.

        The cached index is reused when the shard fingerprint is unchanged, extended
        when shards were only appended to, and rebuilt from scratch otherwise or when
        it is missing, corrupt, half-written or foreign. An engine without a store
        path (built from shards in memory) gets an in-memory index.

        Args:
            engine: The opened store.
            cache_base: Override for the user cache directory (tests).

        Returns:
            The opened index. When the cache directory cannot be written (a
            read-only home) or another process holds its lock for over two minutes,
            the index is built in memory instead (same answers, not persisted).
        """
        with _no_gc():
            if engine.root is None:
                return cls._in_memory(engine)
            root = engine.root.resolve()
            cache = cache_dir_for(root, cache_base)
            try:
                return cls._persisted(engine, root, cache)
            except (OSError, WriteError):
                return cls._in_memory(engine)

    @classmethod
    def _persisted(cls, engine: Engine, root: Path, cache: Path) -> SearchIndex:
        prints = _engine_prints(engine)
        opened = cls._reuse(cache, str(root), prints, engine)
        if opened is not None:
            return opened
        with write_lock(cache, timeout=_LOCK_WAIT):
            opened = cls._reuse(cache, str(root), prints, engine)
            if opened is not None:
                return opened
            state = load_state(cache, STAMP, str(root))
            if (
                state is not None
                and compare_prints(state.shards, prints, root / "log") == "append"
            ):
                try:
                    appended = cls._append(cache, state, prints, engine)
                except BaseException as exc:
                    if not _tantivy_failure(exc) or isinstance(exc, OSError):
                        raise
                    appended = None
                if appended is not None:
                    return appended
            return cls._build(cache, str(root), prints, engine)

    @classmethod
    def open_cached(
        cls, root: Path, *, cache_base: Path | None = None
    ) -> SearchIndex | None:
        """Open the cached index if it matches the store exactly, without reading logs.

        Args:
            root: The store directory.
            cache_base: Override for the user cache directory (tests).

        Returns:
            The index, or ``None`` when there is no trustworthy index for the store as
            it is now (then use :meth:`for_engine`).
        """
        root = root.resolve()
        cache = cache_dir_for(root, cache_base)
        state = load_state(cache, STAMP, str(root))
        if state is None:
            return None
        now = prints_from_disk(root)
        if len(now) != len(state.shards) or not all(
            a.same_file(b) for a, b in zip(state.shards, now, strict=True)
        ):
            return None
        return cls._open_state(cache, state, "cached", None, root)

    @classmethod
    def _open_state(
        cls, cache: Path, state: IndexState, how: str, engine: Engine | None, root: Path
    ) -> SearchIndex | None:
        live = _open_part(cache, state.live)
        history = _open_part(cache, state.history)
        if live is None or history is None:
            return None
        info = IndexInfo(how, state.history.docs, state.live.docs, cache)
        return cls(live, history, info, root=root, engine=engine)

    @classmethod
    def _reuse(
        cls, cache: Path, store: str, prints: tuple[ShardPrint, ...], engine: Engine
    ) -> SearchIndex | None:
        state = load_state(cache, STAMP, store)
        if (
            state is None
            or compare_prints(state.shards, prints, Path(store) / "log") != "same"
        ):
            return None
        return cls._open_state(cache, state, "cached", engine, Path(store))

    @classmethod
    def _in_memory(cls, engine: Engine) -> SearchIndex:
        history = _new_index(None)
        added = _write(history, _all_history_docs(engine), _BUILD_HEAP)
        live = _new_index(None)
        count = _write(live, _live_docs(live_set(engine.projection)), _UPDATE_HEAP)
        info = IndexInfo("memory", added, count, None, added)
        return cls(live, history, info, root=None, engine=engine)

    @classmethod
    def _build(
        cls, cache: Path, store: str, prints: tuple[ShardPrint, ...], engine: Engine
    ) -> SearchIndex:
        gen = uuid.uuid4().hex[:12]
        history = _new_index(cache / f"history-{gen}")
        added = _write(history, history_items(engine, _all_history_docs), _BUILD_HEAP)
        live_docs = live_set(engine.projection)
        live = _new_index(cache / f"live-{gen}")
        _write(live, _live_docs(live_docs), _UPDATE_HEAP)
        state = IndexState(
            STAMP,
            store,
            prints,
            PartState(f"history-{gen}", added, dir_manifest(cache / f"history-{gen}")),
            PartState(
                f"live-{gen}",
                len(live_docs.entries),
                dir_manifest(cache / f"live-{gen}"),
                live_docs.digest,
            ),
        )
        save_state(cache, state)
        _LIVE_MEMO[str(cache)] = live_docs
        _remove_stale(cache, (state.history.dir, state.live.dir))
        info = IndexInfo("built", added, len(live_docs.entries), cache, added)
        return cls(live, history, info, root=Path(store), engine=engine)

    @classmethod
    def _append(
        cls,
        cache: Path,
        state: IndexState,
        prints: tuple[ShardPrint, ...],
        engine: Engine,
    ) -> SearchIndex | None:
        history = _open_part(cache, state.history)
        if history is None:
            return None
        fresh = _appended(engine, state)
        added = _write(history, _history_docs(fresh), _UPDATE_HEAP)
        hist_part = PartState(
            state.history.dir,
            state.history.docs + added,
            dir_manifest(cache / state.history.dir),
        )
        previous = _LIVE_MEMO.get(str(cache))
        if previous is not None and previous.digest == state.live.digest:
            touched = touched_by(event_from_obj(obj) for obj, _ in fresh)
            live_docs = live_set(engine.projection, previous, touched)
        else:
            live_docs = live_set(engine.projection)
        live_part = state.live
        if live_docs.digest != state.live.digest:
            name = f"live-{uuid.uuid4().hex[:12]}"
            _write(_new_index(cache / name), _live_docs(live_docs), _UPDATE_HEAP)
            live_part = PartState(
                name,
                len(live_docs.entries),
                dir_manifest(cache / name),
                live_docs.digest,
            )
        new_state = IndexState(STAMP, state.store, prints, hist_part, live_part)
        save_state(cache, new_state)
        _LIVE_MEMO[str(cache)] = live_docs
        _remove_stale(cache, (hist_part.dir, live_part.dir))
        live = _open_part(cache, live_part)
        if live is None or history.searcher().num_docs != hist_part.docs:
            return None
        info = IndexInfo("appended", hist_part.docs, live_part.docs, cache, added)
        return cls(live, history, info, root=Path(state.store), engine=engine)

    # ------------------------------------------------------------ searching

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        include_all: bool = False,
        as_of: datetime | None = None,
        projection_at: ProjectionView | None = None,
    ) -> list[SearchHit] | None:
        """Search elements and decisions.

        Args:
            query: User text (see :mod:`kgai_tui.core.search.query` for the syntax).
            limit: How many hits at most (``<= 0`` means the default 20; at most
                :data:`MAX_LIMIT`).
            include_all: Also search superseded decisions and dead ends.
            as_of: Only what had been recorded by then (decisions recorded at or
                before it, elements that existed then, and, without ``include_all``,
                the decisions in force then).
            projection_at: The projection at ``as_of`` if the caller already has it
                (``as_of.project_as_of`` or a time slider's cache); otherwise the
                log is replayed up to ``as_of`` once and the result cached.

        Returns:
            The hits, best first; ``None`` when the query has nothing to search for
            (only stopwords, punctuation or nothing), like kg's ``"hits": null``.
        """
        pq = parse_query(query)
        analysed = _analyse(pq)
        if not analysed.scoring and not pq.has_filters:
            return None
        limit = 20 if limit <= 0 else min(limit, MAX_LIMIT)
        if as_of is not None and as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=UTC)
        if as_of is not None and projection_at is not None:
            self._remember(as_of, projection_at)
        hits = self._run(pq, analysed, limit, include_all, as_of, fuzzy=False)
        if not hits and analysed.words:
            hits = self._run(pq, analysed, limit, include_all, as_of, fuzzy=True)
        return hits

    def _run(
        self,
        pq: ParsedQuery,
        a: _Analysed,
        limit: int,
        include_all: bool,
        as_of: datetime | None,
        *,
        fuzzy: bool,
    ) -> list[SearchHit]:
        filters = self._filter_clauses(pq)
        if filters is None:
            return []
        cands: list[tuple[Cand, dict[str, Any]]] = []
        for source in self._sources(pq, include_all, as_of, filters.clauses):
            searcher = source.index.searcher()
            plan = _plan(
                a,
                searcher,
                source.doctypes,
                source.clauses,
                fuzzy,
                source.typed,
                filters.subset,
            )
            if plan is None:
                continue
            backend = _Backend(searcher, source.keys)
            docs = backend.doc_count
            big = docs >= _BOUND_MIN_DOCS
            doc_freq = _Freqs(searcher)
            expect = _match_bound(doc_freq, plan, filters) if big else docs
            top = None
            if plan.scored and big:
                top = _bounded_top(
                    backend, plan, limit, source.allowed, expect, doc_freq
                )
            if top is None:
                top = top_k(
                    backend,
                    plan.query,
                    limit,
                    scored=plan.scored,
                    allowed=source.allowed,
                    expect=expect,
                )
            cands.extend((cand, _disp(searcher, cand[2])) for cand in top)
        matcher = Matcher(
            frozenset(a.words) | {t for p in a.phrases for _, t in p}, a.prefixes, fuzzy
        )
        # Cut the sources' merged candidates first: a hit's snippet and element
        # names cost more than ordering by the stored fields.
        cands.sort(
            key=lambda c: hit_order(
                c[0][0], c[1]["id"], "element" if "kind" in c[1] else "decision"
            )
        )
        cut = cands[:limit]
        # The current names of the elements the decisions shaped, in one lookup.
        names = self._element_names(
            {
                eid
                for _, disp in cut
                if "kind" not in disp and "elements" not in disp
                for eid in disp["shapes"]
            }
        )
        return [self._hit(score, disp, matcher, names) for (score, _, _), disp in cut]

    def _sources(
        self,
        pq: ParsedQuery,
        include_all: bool,
        as_of: datetime | None,
        common: list[tuple[tantivy.Occur, tantivy.Query]],
    ) -> list[_Source]:
        want = set(pq.hit_kinds) or {"decision", "element"}
        if pq.authors:
            want.discard("element")
        moment = None if as_of is None else self._moment(as_of)
        out = []
        if as_of is None and not include_all:
            doctypes: tuple[DocType, ...] = tuple(
                dt for dt in ("decision", "element") if dt in want
            )
            if doctypes:
                keys = LIVE_KEYS[doctypes]
                out.append(_Source(self._live, doctypes, tuple(common), None, keys))
            return out
        if "element" in want:
            allowed = None if moment is None else moment.element_keys
            keys = LIVE_KEYS[("element",)]
            out.append(_Source(self._live, ("element",), tuple(common), allowed, keys))
        if "decision" in want:
            clauses = list(common)
            allowed = None
            if as_of is None:
                clauses.append((_MUST_NOT, _term("flags", "badid")))
            else:
                cut = int(as_of.timestamp())
                window = _Q.range_query(
                    _SCHEMA,
                    "time",
                    tantivy.FieldType.Integer,
                    None,
                    cut,
                    True,
                    True,
                    False,
                )
                clauses.append(_filter(window))
                if not include_all and moment is not None:
                    allowed = moment.head_keys
            out.append(
                _Source(
                    self._history, ("decision",), tuple(clauses), allowed, typed=False
                )
            )
        return out

    def _filter_clauses(self, pq: ParsedQuery) -> _Filters | None:
        """Required clauses for ``kind:``, ``author:`` and ``element:``; ``None``
        when a filter cannot match anything."""
        out = []
        terms: list[tuple[tuple[str, str], ...]] = []
        subset: tuple[tantivy.Query, int] | None = None
        if pq.kinds:
            kinds = [normalize(k) for k in pq.kinds]
            out.append(_filter(_any_term("f_kind", kinds)))
            terms.append(tuple(("f_kind", k) for k in kinds))
        if pq.authors:
            values = [normalize(v) for v in pq.authors]
            either = _Q.boolean_query(
                [
                    (_SHOULD, _any_term("f_author", values)),
                    (_SHOULD, _any_term("f_writer", values)),
                ]
            )
            out.append(_filter(either))
            terms.append(
                tuple((f, v) for f in ("f_author", "f_writer") for v in values)
            )
        for value in pq.elements:
            ids = self._element_ids(value)
            if not ids:
                return None
            either = _any_term("f_el", ids)
            out.append(_filter(either))
            terms.append(tuple(("f_el", i) for i in ids))
            if subset is None or len(ids) < subset[1]:
                subset = (either, len(ids))
        return _Filters(out, None if subset is None else subset[0], tuple(terms))

    def _element_ids(self, value: str) -> list[str]:
        """Resolve an ``element:`` value (id, ``kind:name`` or name) to element ids."""
        ids = {value} if value.startswith("el_") else set()
        if ":" in value:
            ids.add(resolve_ref(value)[2])
        name = normalize(value)
        if name:
            searcher = self._live.searcher()
            query = _Q.boolean_query(
                [(_MUST, _term("f_name", name)), (_MUST, _term("doctype", "element"))]
            )
            hits = searcher.search(query, 1000, count=False).hits
            for _, addr in hits:
                ids.add(_disp(searcher, addr)["id"])
        return sorted(ids)

    # ------------------------------------------------------------ hits

    def _hit(
        self,
        score: float,
        disp: dict[str, Any],
        matcher: Matcher,
        names: dict[str, str],
    ) -> SearchHit:
        """The hit of a document's stored fields (see :func:`_disp`); ``names``
        holds the current name of each element a decision shaped."""
        if "kind" in disp:
            fields = [
                ("name", disp["name"]),
                ("props", disp["props"]),
                ("kind", disp["kind"]),
            ]
            return SearchHit(
                kind="element",
                id=disp["id"],
                name=disp["name"],
                extra=disp["kind"],
                score=score,
                snippet=best_snippet(fields, _tokens, matcher),
            )
        if "elements" in disp:
            shaped = tuple(disp["elements"])
        else:
            found = (names.get(eid, "") for eid in set(disp["shapes"]))
            shaped = tuple(sorted(name for name in found if name))
        fields = [
            ("title", disp["title"]),
            ("rationale", disp["rationale"]),
            ("summary", disp["summary"]),
            ("elements", ", ".join(shaped)),
        ]
        return SearchHit(
            kind="decision",
            id=disp["id"],
            name=disp["title"],
            extra=one_line(disp["rationale"]),
            elements=shaped,
            score=score,
            snippet=best_snippet(fields, _tokens, matcher),
            lamport=disp["lamport"],
            recorded_at=disp["at"],
        )

    def _element_names(self, ids: set[str]) -> dict[str, str]:
        """The current name of each element in ``ids`` that exists, from the live
        index (an element's document has its id as its only ``f_el`` term)."""
        if not ids:
            return {}
        searcher = self._live.searcher()
        query = _Q.boolean_query(
            [
                (_MUST, _any_term("f_el", sorted(ids))),
                (_MUST, _term("doctype", "element")),
            ]
        )
        hits = searcher.search(query, len(ids) + 8, count=False).hits
        docs = (_disp(searcher, addr) for _, addr in hits)
        return {doc["id"]: doc["name"] for doc in docs}

    # ------------------------------------------------------------ as-of

    def _moment(self, cut: datetime) -> _Moment:
        """Heads and elements at ``cut`` (from the time index; cached)."""
        found = self._moments.get(cut)
        if found is not None:
            return found
        from kgai_tui.core.reads.as_of import as_of_view

        engine = self._ensure_engine()
        return self._remember(cut, as_of_view(engine, cut))

    def _remember(self, cut: datetime, then: ProjectionView) -> _Moment:
        """Cache the decisions in force and the elements of the projection at ``cut``."""
        found = self._moments.get(cut)
        if found is not None:
            return found
        heads = {then.dec_id[i] for hs in then.heads.values() for i in hs}
        moment = _Moment(
            frozenset(decision_key(d) for d in heads),
            frozenset(live_key("element", e) for e in then.graph.nodes),
        )
        if len(self._moments) >= 16:
            self._moments.pop(next(iter(self._moments)))
        self._moments[cut] = moment
        return moment

    def _ensure_engine(self) -> Engine:
        if self._engine is None:
            if self._root is None:
                raise RuntimeError("as_of needs the engine of an in-memory index")
            from kgai_tui.core.engine.open import open_engine

            self._engine = open_engine(self._root)
        return self._engine


def _disp(searcher: tantivy.Searcher, addr: Any) -> dict[str, Any]:
    value = searcher.doc(addr).get_first("disp")
    obj = orjson.loads(value if isinstance(value, bytes) else b"{}")
    return obj if isinstance(obj, dict) else {}
