"""Snippets: the best matching field of a hit, with plain match spans (no tantivy here).

The index module analyses a field's text into tokens (stemmed text, unstemmed text,
code point offsets); this module decides which tokens match the query, picks the field
and cuts a window of at most :data:`WINDOW` characters around the first match.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from kgai_tui.core.search.model import Snippet

__all__ = [
    "WINDOW",
    "Matcher",
    "Token",
    "best_snippet",
    "flat",
    "typo_distance",
    "within_edits",
]

#: The longest snippet text, in characters (ellipses included).
WINDOW: Final = 160
_LEAD: Final = 40
_ELLIPSIS: Final = "…"


class Token(NamedTuple):
    """One analysed word of a field: its index term, its surface form and offsets."""

    term: str
    surface: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Matcher:
    """Which tokens count as matches of a query.

    Attributes:
        terms: Analysed query terms (exact match on the stemmed term).
        prefixes: Prefixes (matched against the unstemmed, lower-cased word).
        fuzzy: Whether a term within the typo distance also matches.
    """

    terms: frozenset[str]
    prefixes: tuple[str, ...] = ()
    fuzzy: bool = False

    def __call__(self, token: Token) -> bool:
        """Tell whether one token matches."""
        if token.term in self.terms:
            return True
        if any(token.surface.startswith(p) for p in self.prefixes):
            return True
        if self.fuzzy:
            return any(_typo_of(token.term, t) for t in self.terms)
        return False


@functools.lru_cache(maxsize=1 << 16)
def _typo_of(word: str, term: str) -> bool:
    """Whether ``word`` is within the typo distance of the query ``term`` (cached)."""
    return within_edits(word, term, typo_distance(term))


def typo_distance(term: str) -> int:
    """The edit distance a typo-tolerant search allows: one edit (a swap counts one)."""
    del term
    return 1


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether the Damerau (adjacent transposition) edit distance is at most ``limit``.

    Args:
        a: One word.
        b: The other word.
        limit: The largest distance accepted.

    Returns:
        True when ``a`` can be turned into ``b`` with at most ``limit`` insertions,
        deletions, substitutions or swaps of neighbours.
    """
    if abs(len(a) - len(b)) > limit:
        return False
    if a == b:
        return True
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return False
        prev2, prev = prev, cur
    return prev[-1] <= limit


def flat(text: str) -> str:
    """Put text on one line without moving any character (CR and LF become spaces)."""
    return text.replace("\r", " ").replace("\n", " ")


def _window(field: str, line: str, spans: list[tuple[int, int]]) -> Snippet:
    if len(line) <= WINDOW:
        return Snippet(field, line, tuple(spans))
    start = 0
    if spans and spans[0][0] > _LEAD:
        start = spans[0][0] - _LEAD
        space = line.find(" ", start, spans[0][0])
        if space >= 0:
            start = space + 1
    head = _ELLIPSIS if start > 0 else ""
    room = WINDOW - len(head)
    end = start + room
    tail = ""
    if end < len(line):
        end -= 1
        tail = _ELLIPSIS
    shift = len(head) - start
    kept = tuple((a + shift, b + shift) for a, b in spans if a >= start and b <= end)
    return Snippet(field, head + line[start:end] + tail, kept)


def best_snippet(
    fields: Sequence[tuple[str, str]],
    tokenize: Callable[[str], list[Token]],
    match: Callable[[Token], bool],
) -> Snippet | None:
    """Pick the first field (in the given priority order) that has a match.

    Args:
        fields: ``(field name, text)`` pairs, most important first.
        tokenize: Analyses one line of text into tokens with offsets.
        match: Whether a token matches the query.

    Returns:
        A snippet of the first field with a match; failing that, of the first
        non-empty field (without spans); ``None`` when every field is empty.
    """
    fallback: tuple[str, str] | None = None
    for name, text in fields:
        line = flat(text)
        if not line.strip():
            continue
        spans = [(t.start, t.end) for t in tokenize(line) if match(t)]
        if spans:
            return _window(name, line, spans)
        if fallback is None:
            fallback = (name, line)
    if fallback is None:
        return None
    return _window(fallback[0], fallback[1], [])
