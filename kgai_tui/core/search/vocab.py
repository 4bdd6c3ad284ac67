"""The words the index holds, used to meet a query the way people type it.

The index splits ``PostgreSQL`` into ``postgre`` + ``sql`` (docs/search.md#analysis),
so a word typed in one case, ``postgresql``, is one term that matches neither. Rather
than index every compound a second time (which would change every BM25 score and the
index format), a query word the index does not hold is split against the index's own
vocabulary (the ``exact`` field: every word as written, lower-cased and folded), and
a camelCase word whose joined form the index does hold also searches that form. Both
depend only on the set of documents, so they are as deterministic as the scores.

The same vocabulary names the nearest word for a typo ("did you mean webhook?"):
one edit (an insertion, deletion, substitution or swap of neighbours), the word in
the most documents first, then the first in code point order.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

import tantivy

from kgai_tui.core.search.analysis import SURFACE, TEXT
from kgai_tui.core.search.backend import EXACT_FIELD
from kgai_tui.core.search.query import ParsedQuery, split_camel

__all__ = ["SearchNotes", "Vocabulary", "bridge_query", "corrected", "unknown_words"]

#: Words shorter than this are never split (``sql`` is a word, not ``s`` + ``ql``).
_SPLIT_MIN: Final = 5
#: Longer words are left alone (a hash, a pasted id): the split is quadratic.
_SPLIT_MAX: Final = 40
_PART_MIN: Final = 2
_PARTS_MAX: Final = 4
#: A typo is looked for in words of at least this many letters (as the typo tier).
_NEAREST_MIN: Final = 3
#: At most this many unknown words of a query get a nearest word.
_NEAREST_WORDS: Final = 8
#: With no word one edit away, a known word the typed one starts with, this many
#: characters shorter (``postgresql`` for ``postgres``, ``stripejs`` for
#: ``stripe``), and at least :data:`_SPLIT_MIN` long (``nodejs`` is not ``node``).
_SUFFIXES: Final = (2, 3)
_ALPHABET: Final = string.ascii_lowercase + string.digits
_RUN: Final = re.compile(r"[^\W_]+")
_LEFT_EDGE: Final = r"(?:(?<![^\W_])|(?<=[a-z])(?=[A-Z]))"
_RIGHT_EDGE: Final = r"(?:(?![^\W_])|(?<=[a-z])(?=[A-Z]))"


class Vocabulary:
    """Document frequencies of words as written, over the indexes a search reads."""

    def __init__(
        self,
        searchers: Sequence[tantivy.Searcher],
        adjacent: Callable[[tuple[str, ...]], bool] | None = None,
    ) -> None:
        """Look words up in ``searchers`` (the live and the history index);
        ``adjacent(parts)`` tells whether some document writes the parts side by
        side (``EventBus``), so a word also held whole is split too."""
        self._searchers = tuple(searchers)
        self._adjacent = adjacent
        self._seen: dict[str, int] = {}
        # The index behind a vocabulary never changes (a grown index is a new
        # SearchIndex), so splits and nearest words are kept: the CLI's answer asks
        # for them twice (the typo tier, then the notes).
        self._splits: dict[str, tuple[str, ...] | None] = {}
        self._nearest: dict[str, str | None] = {}

    def count(self, word: str) -> int:
        """In how many documents (summed over the indexes) ``word`` is written."""
        got = self._seen.get(word)
        if got is None:
            got = sum(s.doc_freq(EXACT_FIELD, word) for s in self._searchers)
            if len(self._seen) < 65_536:
                self._seen[word] = got
        return got

    def knows(self, word: str) -> bool:
        """Whether some document has ``word`` as written."""
        return self.count(word) > 0

    def split(self, word: str) -> tuple[str, ...] | None:
        """``word`` (lower-case, folded) as the fewest known words, or ``None``.

        Only for a word the index does not hold: ``postgresql`` is ``postgre sql``
        where the documents wrote ``PostgreSQL``. The fewest parts win, then the
        longest first part (then second...), so the split is one and the same
        everywhere. A plural or other inflection the whole split misses is tried
        through its stem (``postgresqls``).
        """
        if word not in self._splits and len(self._splits) < 4096:
            self._splits[word] = self._split(word)
        return self._splits[word] if word in self._splits else self._split(word)

    def _split(self, word: str) -> tuple[str, ...] | None:
        if not _SPLIT_MIN <= len(word) <= _SPLIT_MAX or not word.isalnum():
            return None
        if self.knows(word):
            # Held whole (``eventbus`` in one document) and written as a compound
            # in others (``EventBus``): search both, as ``EventBus`` typed does.
            # Not for words that merely contain words (``newsletter``).
            found = self._fewest(word)
            if found is None or self._adjacent is None or not self._adjacent(found):
                return None
            return found
        found = self._fewest(word)
        if found is None:
            stems = TEXT.analyze(word)
            if stems and stems[0] != word and len(stems[0]) >= _SPLIT_MIN:
                found = self._fewest(stems[0])
        return found

    def _fewest(self, word: str) -> tuple[str, ...] | None:
        n = len(word)
        # best[i]: the preferred split of word[i:] (fewest parts, longest first).
        best: list[tuple[str, ...] | None] = [None] * (n + 1)
        best[n] = ()
        for i in range(n - _PART_MIN, -1, -1):
            choice: tuple[str, ...] | None = None
            for j in range(n, i + _PART_MIN - 1, -1):  # longest part first
                rest = best[j]
                if rest is None or len(rest) >= _PARTS_MAX or (i == 0 and j == n):
                    continue
                part = word[i:j]
                if not self.knows(part):
                    continue
                if choice is None or len(rest) + 1 < len(choice):
                    choice = (part, *rest)
            best[i] = choice
        return best[0]

    def nearest(self, word: str) -> str | None:
        """The known word one edit from ``word`` (which the index lacks), else the
        known word it starts with two or three characters short, or ``None``.

        Ties go to the word in more documents, then the first in code point order.
        """
        if word not in self._nearest and len(self._nearest) < 4096:
            self._nearest[word] = self._near(word)
        return self._nearest[word] if word in self._nearest else self._near(word)

    def _near(self, word: str) -> str | None:
        if len(word) < _NEAREST_MIN or self.knows(word):
            return None
        best: tuple[int, str] | None = None
        for candidate in _one_edit(word):
            c = self.count(candidate)
            if c and (best is None or (-c, candidate) < (-best[0], best[1])):
                best = (c, candidate)
        if best is not None:
            return best[1]
        for cut in _SUFFIXES:  # the longer head first
            head = word[:-cut]
            if len(head) >= _SPLIT_MIN and self.count(head):
                return head
        return None


def _one_edit(word: str) -> Iterator[str]:
    """Every string one edit from ``word`` over ``a-z0-9`` (repeats included)."""
    n = len(word)
    for i in range(n):
        yield word[:i] + word[i + 1 :]
    for i in range(n - 1):
        yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    for i in range(n):
        for ch in _ALPHABET:
            if ch != word[i]:
                yield word[:i] + ch + word[i + 1 :]
    for i in range(n + 1):
        for ch in _ALPHABET:
            yield word[:i] + ch + word[i:]


def _surface_words(chunk: str) -> list[tuple[int, int, str]]:
    """The words of ``chunk`` as written (lower-cased, folded) with their spans in
    the camel-split text."""
    split = split_camel(chunk)
    return [
        (t.char_offset_from, t.char_offset_to, t.text)
        for t in SURFACE.pre_tokenize(split).tokens
    ]


def _bridged(
    chunk: str, vocab: Vocabulary, *, phrase: bool = False
) -> tuple[str, list[str]]:
    """``chunk`` with every unknown compound split, and the joined forms of its
    camelCase words that the index holds as one word. In a ``phrase`` a split
    word stands for its parts alone (the words must follow each other)."""
    split = split_camel(chunk)
    pieces: list[str] = []
    last = 0
    for start, end, word in _surface_words(chunk):
        parts = vocab.split(word)
        if parts is not None:
            pieces.append(split[last:start])
            whole = (word,) if vocab.knows(word) and not phrase else ()
            pieces.append(" ".join((*whole, *parts)))
            last = end
    pieces.append(split[last:])
    joined: list[str] = []
    for run in _RUN.findall(chunk):
        if split_camel(run) == run:
            continue  # no camelCase boundary: its words are as typed
        flat = SURFACE.analyze(run)
        if len(flat) == 1 and vocab.knows(flat[0]):
            joined.append(flat[0])
    return "".join(pieces), joined


def bridge_query(pq: ParsedQuery, vocab: Vocabulary) -> ParsedQuery:
    """``pq`` with its words and phrases met halfway by the index's vocabulary.

    A word the index lacks that is known words run together is searched as those
    words (``postgresql`` as ``postgre sql``, in a phrase too); a camelCase word
    the index holds joined (``PostgreSQL`` where a document wrote ``postgresql``)
    also searches the joined word. Prefixes and filters are left as typed.
    """
    words: list[str] = []
    extra: list[str] = []
    for chunk in pq.words:
        text, joined = _bridged(chunk, vocab)
        words.append(text)
        extra.extend(joined)
    phrases = [_bridged(chunk, vocab, phrase=True)[0] for chunk in pq.phrases]
    return replace(
        pq,
        words=(*words, *dict.fromkeys(extra)),
        phrases=tuple(phrases),
    )


@dataclass(frozen=True, slots=True)
class SearchNotes:
    """What a search that found little has to say, one line each, and the query
    with its typos corrected (``None``: nothing to correct)."""

    lines: tuple[str, ...] = ()
    did_you_mean: str | None = None


def unknown_words(
    pq: ParsedQuery, vocab: Vocabulary, holds: Callable[[str], bool]
) -> list[tuple[str, str | None]]:
    """The words of ``pq``'s plain words and phrases that no document holds (their
    stem in none, and no run of known words), each with its nearest known word.

    ``holds`` tells whether an index term (a stem) is in some document.
    """
    out: list[tuple[str, str | None]] = []
    for chunk in (*pq.words, *pq.phrases):
        for _, _, word in _surface_words(chunk):
            if len(word) < _NEAREST_MIN or word.isdigit():
                continue
            stems = TEXT.analyze(word)
            if not stems or holds(stems[0]) or vocab.split(word) is not None:
                continue
            if all(word != seen for seen, _ in out):
                # A nearest word costs ~150 lookups a letter: a hostile query of
                # fifty long unknown words stays a few ms by asking for the first few.
                near = vocab.nearest(word) if len(out) < _NEAREST_WORDS else None
                out.append((word, near))
    return out


def corrected(
    query: str,
    parsed: ParsedQuery,
    vocab: Vocabulary,
    holds: Callable[[str], bool],
) -> tuple[str | None, list[tuple[str, str | None]]]:
    """The words of ``query`` no document holds, each with its nearest known word,
    and the query with them replaced (``None`` when none has one).

    ``holds`` tells whether an index term (a stem) is in some document: a word is
    unknown when its stem is in none and it is no run of known words.
    """
    unknown = unknown_words(parsed, vocab, holds)
    fixed = query
    for word, near in unknown:
        if near is not None:
            # At a word's edge or a camelCase boundary (``SendGird``: ``Gird``).
            pattern = re.compile(rf"{_LEFT_EDGE}(?i:{re.escape(word)}){_RIGHT_EDGE}")
            fixed = pattern.sub(near, fixed, count=1)
    changed = fixed != query and any(near for _, near in unknown)
    return (fixed if changed else None), unknown
