"""Text analysis: the index's analyzers, and the terms a query searches for.

Documents and queries go through the same tantivy analyzers (camelCase split,
lower-cased, ASCII-folded, stopwords dropped, English stems); the ``exact`` field
and a query's exact forms skip the stemming; docs/search.md#analysis.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import tantivy

from kgai_tui.core.recall.scoring import STOPWORDS
from kgai_tui.core.search.query import (
    ParsedQuery,
    camel_positions,
    parse_query,
    split_camel,
)
from kgai_tui.core.search.snippet import Token

__all__ = [
    "ANALYZER",
    "EXACT",
    "EXACT_ANALYZER",
    "SURFACE",
    "TEXT",
    "Analysed",
    "analyse",
    "query_terms",
    "tokenize",
]

ANALYZER: Final = "kg_text"
#: The analyzer of the ``exact`` field: :data:`TEXT` without the stemmer.
EXACT_ANALYZER: Final = "kg_exact"
_MAX_TERMS: Final = 48


def _analyzer(*, stopwords: bool, stem: bool) -> tantivy.TextAnalyzer:
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    if stopwords:
        builder = builder.filter(tantivy.Filter.custom_stopword(sorted(STOPWORDS)))
    if stem:
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


TEXT: Final = _analyzer(stopwords=True, stem=True)
#: Words as written (lower-cased, folded), stopwords dropped: the ``exact`` field.
EXACT: Final = _analyzer(stopwords=True, stem=False)
SURFACE: Final = _analyzer(stopwords=False, stem=False)


_WORD: Final = re.compile(r"[^\W_]+")
_ASCII_RUN: Final = re.compile(r"[A-Za-z0-9]+")
_ASCII_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")


@functools.lru_cache(maxsize=1 << 16)
def _analysed_word(word: str) -> tuple[str, str]:
    """The index term (``""`` for a stopword) and the folded surface of one word."""
    stems = TEXT.analyze(word)
    surface = SURFACE.analyze(word)
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


def tokenize(text: str) -> list[Token]:
    """Analyse one line into tokens with code point offsets into ``text``.

    Each distinct word is analysed once by the index's analyzers (cached).
    """
    out = []
    for start, end in _spans_of(text):
        term, surface = _analysed_word(text[start:end])
        if term or surface:
            out.append(Token(term, surface, start, end))
    return out


def _terms(text: str, analyzer: tantivy.TextAnalyzer = TEXT) -> list[str]:
    """Analysed terms of query text; words under two characters are dropped."""
    split = split_camel(text)
    return [
        t.text
        for t in analyzer.pre_tokenize(split).tokens
        if t.char_offset_to - t.char_offset_from >= 2
    ]


def _phrase_terms(text: str) -> list[tuple[int, str]]:
    """Terms of a quoted phrase with their relative positions (stopwords leave gaps,
    as they do in the index)."""
    tokens = TEXT.pre_tokenize(split_camel(text)).tokens
    if not tokens:
        return []
    first = tokens[0].position
    return [(t.position - first, t.text) for t in tokens]


@dataclass(frozen=True, slots=True)
class Analysed:
    """A parsed query analysed into index terms."""

    words: tuple[str, ...]
    phrases: tuple[tuple[tuple[int, str], ...], ...]
    prefixes: tuple[str, ...]
    #: The unstemmed forms of the words and phrase words, as the ``exact`` field
    #: holds them: a document with one of them is an exact match (ranked first).
    exact: tuple[str, ...] = ()

    @property
    def scoring(self) -> bool:
        return bool(self.words or self.phrases or self.prefixes)


def _prefix_parts(chunk: str) -> tuple[list[str], list[str]]:
    """Split ``InvoiceRend`` into leading terms and the prefixes of its last word.

    The last word is kept unstemmed (lower-cased, folded) and, when different, also
    stemmed, since the index holds stems (``invoices*`` must find ``invoic``).
    """
    split = split_camel(chunk)
    surface = SURFACE.pre_tokenize(split).tokens
    if not surface:
        return [], []
    last = surface[-1]
    lead = _terms(split[: last.char_offset_from])
    if len(last.text) < 2:
        return lead, []
    stems = TEXT.analyze(last.text)
    forms = [last.text] + [s for s in stems[:1] if len(s) >= 2 and s != last.text]
    return lead, forms


def analyse(pq: ParsedQuery) -> Analysed:
    words: list[str] = []
    exact: list[str] = []
    for chunk in pq.words:
        words.extend(_terms(chunk))
        exact.extend(_terms(chunk, EXACT))
    prefixes: list[str] = []
    for chunk in pq.prefixes:
        lead, forms = _prefix_parts(chunk)
        words.extend(lead)
        prefixes.extend(forms)
        if lead:
            split = split_camel(chunk)
            last = SURFACE.pre_tokenize(split).tokens[-1]
            exact.extend(_terms(split[: last.char_offset_from], EXACT))
    phrases = []
    for chunk in pq.phrases:
        exact.extend(_terms(chunk, EXACT))
        terms = _phrase_terms(chunk)
        if len(terms) == 1:
            words.append(terms[0][1])
        elif terms:
            phrases.append(tuple(terms[:_MAX_TERMS]))
    return Analysed(
        tuple(dict.fromkeys(words))[:_MAX_TERMS],
        tuple(dict.fromkeys(phrases)),
        tuple(dict.fromkeys(prefixes))[:_MAX_TERMS],
        tuple(dict.fromkeys(exact))[:_MAX_TERMS],
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
    return list(analyse(parse_query(text)).words)
