"""The forgiving side of search: words corrected, notes for a search that found little.

A base of :class:`~kgai_tui.core.search.index.SearchIndex`: the typo tier (each
word no document holds replaced by its nearest known word, below every match of the
words as typed), and the notes a person or an agent gets when a search found little
(slips in the query, words the store does not hold and the nearest ones it does,
superseded decisions that would match). docs/search.md#when-nothing-matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Final

import tantivy

from kgai_tui.core.search.analysis import TEXT, Analysed, analyse
from kgai_tui.core.search.backend import FIELDS, SCHEMA, Q
from kgai_tui.core.search.model import SearchHit
from kgai_tui.core.search.moment import Moment
from kgai_tui.core.search.query import ParsedQuery, parse_query, query_problems
from kgai_tui.core.search.vocab import (
    SearchNotes,
    Vocabulary,
    bridge_query,
    corrected,
    unknown_words,
)

__all__ = ["ForgivingSearch"]

_SCORED_FIELDS: Final = tuple(f for fields in FIELDS.values() for f, _ in fields)
_NAME_FIELDS: Final = ("name", "title", "elnames")
#: "N superseded decisions do" counts up to this many.
_NOTE_COUNT: Final = 50


class ForgivingSearch:
    """Corrections and notes over the live and history indexes of a search index."""

    _live: tantivy.Index
    _history: tantivy.Index
    _vocab: tuple[tuple[int, int], Vocabulary] | None

    if TYPE_CHECKING:  # what SearchIndex, the one subclass, implements

        def search(
            self,
            query: str,
            *,
            limit: int = 20,
            include_all: bool = False,
            as_of: datetime | None = None,
        ) -> list[SearchHit] | None:
            """The search (the index's)."""
            ...

        def _run(
            self,
            pq: ParsedQuery,
            a: Analysed,
            limit: int,
            include_all: bool,
            as_of: datetime | None,
            moment: Moment | None,
            *,
            fuzzy: bool = False,
        ) -> list[SearchHit]:
            """One ranked pass (the index's)."""
            ...

        def _element_ids(self, value: str) -> list[str]:
            """The elements a filter value names (the index's)."""
            ...

    def notes(
        self,
        query: str,
        hits: Sequence[SearchHit] | None,
        *,
        include_all: bool = False,
        as_of: datetime | None = None,
    ) -> SearchNotes:
        """What to tell someone whose search found little: the slips in the query,
        the words the store does not hold and the nearest ones it does, and, when
        nothing in force matched, how many superseded decisions would
        (docs/search.md#when-nothing-matches). Deterministic, like the hits."""
        vocab = self._vocabulary()
        parsed = parse_query(query)
        lines = query_problems(
            parsed,
            kinds=self._kinds(),
            has_element=lambda value: bool(self._element_ids(value)),
        )
        if hits is None:
            return SearchNotes(tuple(lines))
        fixed, unknown = corrected(query, parsed, vocab, self._holds)
        for word, near in unknown:
            lines.append(
                f"no decision or element has the word {word!r}"
                + (f"; did you mean {near!r}?" if near else "")
            )
        if not hits and not include_all:
            older = self.search(query, limit=_NOTE_COUNT, include_all=True, as_of=as_of)
            n = sum(1 for h in older or () if h.kind == "decision")
            if n:
                many = f"{n}" if n < _NOTE_COUNT else f"at least {n}"
                lines.append(
                    f"no decision in force matches; {many} superseded or dead-end "
                    "decision(s) do (--all)"
                )
        return SearchNotes(tuple(lines), fixed)

    def _vocabulary(self) -> Vocabulary:
        """The indexes' vocabulary, made once per index (see :class:`Vocabulary`)."""
        searchers = (self._live.searcher(), self._history.searcher())
        key = (searchers[0].num_docs, searchers[1].num_docs)
        if self._vocab is not None and self._vocab[0] == key:
            return self._vocab[1]

        def adjacent(parts: tuple[str, ...]) -> bool:
            # The parts, stemmed as the index holds them, side by side in a name
            # or a title: written as one camelCase word somewhere.
            terms: list[str | tuple[int, str]] = [
                t for p in parts for t in TEXT.analyze(p)[:1]
            ]
            if len(terms) != len(parts):
                return False
            for searcher in searchers:
                for field in _NAME_FIELDS:
                    phrase = Q.phrase_query(SCHEMA, field, terms)
                    if searcher.search(phrase, 1, count=False).hits:
                        return True
            return False

        vocab = Vocabulary(searchers, adjacent)
        self._vocab = (key, vocab)
        return vocab

    def _holds(self, term: str) -> bool:
        """Whether some document's scored text has the (stemmed) index term."""
        searchers = (self._live.searcher(), self._history.searcher())
        return any(
            s.doc_freq(field, term) for s in searchers for field in _SCORED_FIELDS
        )

    def _kinds(self) -> list[str]:
        """The element kinds of the live index (its ``kind`` filter terms)."""
        searcher = self._live.searcher()
        return [t for t, _ in searcher.terms_with_prefix("f_kind", "", None, 512)]

    def _typo_tier(
        self,
        pq: ParsedQuery,
        vocab: Vocabulary,
        hits: list[SearchHit],
        limit: int,
        include_all: bool,
        as_of: datetime | None,
        moment: Moment | None,
    ) -> list[SearchHit]:
        """The hits, then (while there is room) what the query's unknown words find
        once corrected: each word no document holds is replaced by its nearest
        known word (:meth:`Vocabulary.nearest`, then split like any word), and
        one without is matched within one edit. ``stripe webhok`` finds the Stripe
        hits, then the webhook ones: below every match of the words as typed,
        never above (docs/search.md#determinism). Words the index holds are never
        corrected, so a query of known words ranks as it always did."""
        unknown = unknown_words(pq, vocab, self._holds)
        if not unknown:
            return hits
        out = list(hits)
        have = {(h.kind, h.id) for h in hits}

        def add(more: list[SearchHit]) -> None:
            for hit in more:
                if len(out) >= limit:
                    return
                if (hit.kind, hit.id) not in have:
                    have.add((hit.kind, hit.id))
                    out.append(hit)

        near = " ".join(n for _, n in unknown if n is not None)
        if near:
            fixed = bridge_query(
                replace(pq, words=(near,), phrases=(), prefixes=()), vocab
            )
            a = analyse(fixed)
            if a.words:
                add(self._run(fixed, a, limit, include_all, as_of, moment))
        rest = " ".join(w for w, n in unknown if n is None)
        if rest and len(out) < limit:
            loose = replace(pq, words=(rest,), phrases=(), prefixes=())
            a = analyse(loose)
            if a.words:
                add(self._run(loose, a, limit, include_all, as_of, moment, fuzzy=True))
        return out
