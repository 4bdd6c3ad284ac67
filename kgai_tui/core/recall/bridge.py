"""The bridge between an agent's words and the team's: WordNet's synonyms and
broader terms of each topic word, scored against the store, for the hints of a
thin recall answer (:mod:`.hints`).

An agent asks for "picture compression"; the team wrote "images". Nothing in the
store links the two words, so the store alone cannot bridge them; WordNet does
(``picture`` and ``image`` share a synset). The bridge only *suggests*: recall's
items stay kg's, byte for byte; an element the bridge reaches becomes a hint, which
an agent follows with one more recall (docs/agents.md, "Hints").

The algorithm (docs/agents.md, "The bridge", is its reference):

1. **Alternatives of a topic word.** The first part of speech (noun, verb,
   adjective, adverb) under which WordNet knows the word or, by morphy's rules, a
   base form of it: a topic is mostly nouns, and a verb sense of a noun ("picture"
   as *render*) misleads. Of its first :data:`SENSES` senses (WordNet's order, most
   frequent first) every synonym (weight :data:`SYNONYM_WEIGHT`), then every
   lemma of their direct hypernyms, "broader" (weight :data:`BROADER_WEIGHT`). A
   lemma is kept once, at its first place; one whose tokens are only the word or
   its base forms is dropped; the first :data:`ALTERNATIVES` are kept.
2. **What an alternative reaches.** Its tokens are scored as a recall topic of
   their own (the same relevance as recall: element name, kind, props and the
   decisions shaping it); an element counts only where that relevance passes
   recall's own filter (at least 1): where the alternative alone would recall it.
3. **The bridged score** of an element is, summed over the distinct topic words,
   the best ``weight x relevance`` among that word's alternatives, divided by the
   number of topic tokens (the normalisation of recall's own about score). The
   hints add it to their score; the weights keep a bridged element below one the
   topic's own words reach as well.

Deterministic: the WordNet files are those of a pinned distribution, every order
above is fixed, and nothing depends on a hash seed. No network, no model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kgai_tui.core.recall.scoring import tokenize
from kgai_tui.core.recall.wordnet import POS, WordNet, wordnet

if TYPE_CHECKING:
    from kgai_tui.core.recall.tokens import F64, I64

__all__ = [
    "ALTERNATIVES",
    "BROADER_WEIGHT",
    "SENSES",
    "SYNONYM_WEIGHT",
    "Alternative",
    "Bridged",
    "alternatives",
    "bridged",
]

#: The senses of a word looked at, most frequent first.
SENSES: Final = 3
#: At most this many alternatives of one word (the first ones): each costs one
#: relevance pass, 0.4-30 ms at 1M decisions (benchmarks/hints_cost.py).
ALTERNATIVES: Final = 12
#: The weight of a synonym's relevance.
SYNONYM_WEIGHT: Final = 0.5
#: The weight of a broader term's (a direct hypernym's) relevance.
BROADER_WEIGHT: Final = 0.25
#: An alternative reaches an element where its own relevance is at least this
#: (recall's filter).
REACHES: Final = 1.0
_HYPERNYMS: Final = frozenset({"@", "@i"})


@dataclass(frozen=True, slots=True)
class Alternative:
    """One word WordNet offers for a topic word."""

    word: str
    lemma: str
    toks: tuple[str, ...]
    weight: float
    relation: str  # "synonym" or "broader"


def _lemmas(wn: WordNet, word: str) -> tuple[list[str], list[str], list[str]]:
    """The base forms, synonyms and broader lemmas of ``word`` (see step 1)."""
    for pos in POS:
        forms = wn.base_forms(word, pos)
        if not forms:
            continue
        same: list[str] = []
        broader: list[str] = []
        for form in forms:
            for offset in wn.offsets(form, pos)[:SENSES]:
                synset = wn.synset(pos, offset)
                same.extend(synset.lemmas)
                for symbol, ptr_pos, ptr_offset in synset.pointers:
                    if symbol in _HYPERNYMS:
                        broader.extend(wn.synset(ptr_pos, ptr_offset).lemmas)
        return forms, same, broader
    return [], [], []


def alternatives(word: str) -> list[Alternative]:
    """The alternatives of one topic token, in their fixed order (step 1)."""
    wn = wordnet()
    if wn is None or not word.isascii():
        return []
    forms, same, broader = _lemmas(wn, word)
    own = {word, *forms}
    out: list[Alternative] = []
    seen: set[str] = set()
    for lemmas, weight, relation in (
        (same, SYNONYM_WEIGHT, "synonym"),
        (broader, BROADER_WEIGHT, "broader"),
    ):
        for lemma in lemmas:
            if lemma in seen:
                continue
            seen.add(lemma)
            text = lemma.replace("_", " ")
            toks = tuple(tokenize(text))
            if not toks or set(toks) <= own:
                continue
            out.append(Alternative(word, text, toks, weight, relation))
    return out[:ALTERNATIVES]


@dataclass(frozen=True, slots=True)
class Bridged:
    """Every element's bridged score and, where it is above 0, the alternative
    that gave the most (``best[k]`` indexes ``alts``; -1: none) and that
    alternative's weighted part (``part[k]``)."""

    score: F64
    best: I64
    part: F64
    alts: list[Alternative]


def bridged(
    q_toks: Sequence[str], relevance_of: Callable[[Sequence[str]], F64], n: int
) -> Bridged:
    """The bridged scores of ``n`` elements for a topic (steps 2 and 3).

    Args:
        q_toks: the topic's tokens.
        relevance_of: recall's relevance of every element (the hints' order) for
            a token list, with no path filter.
        n: how many elements.
    """
    import numpy as np

    total = np.zeros(n, dtype=np.float64)
    top = np.zeros(n, dtype=np.float64)
    best = np.full(n, -1, dtype=np.int64)
    every: list[Alternative] = []
    if not q_toks:
        return Bridged(total, best, top, every)
    scored: dict[tuple[str, ...], F64] = {}
    for word in dict.fromkeys(q_toks):
        word_best = np.zeros(n, dtype=np.float64)
        word_alt = np.full(n, -1, dtype=np.int64)
        for alt in alternatives(word):
            rel = scored.get(alt.toks)
            if rel is None:
                rel = scored[alt.toks] = relevance_of(alt.toks)
            value = np.where(rel >= REACHES, alt.weight * rel, 0.0)
            better = value > word_best
            if better.any():
                word_best[better] = value[better]
                word_alt[better] = len(every)
            every.append(alt)
        total += word_best
        wins = word_best > top
        top[wins] = word_best[wins]
        best[wins] = word_alt[wins]
    total /= len(q_toks)
    return Bridged(total, best, top, every)
