"""Text matching shared by search and context, byte-for-byte like the Go engine.

This ports the reference engine's tokenizer, fuzzy token scoring, path globbing,
one-line summaries and its scan search (spec 6.4 steps 4, 5 and 8, 6.4.1 and 6.5):

* :func:`tokenize` splits on non-word runes and camelCase, keeps tokens of at least
  two runes, lower-cases them like Go and drops the 36 stopwords.
* :func:`match_strength` grades one query token against one document token on their
  UTF-8 **bytes**; :func:`fields_score`, :func:`about_score` and
  :func:`decision_about_score` aggregate it over weighted fields.
* :func:`go_path_match` is a faithful port of Go's ``path.Match`` (which also works on
  bytes, decoding runes only for ``?`` and classes); :func:`glob_match` adds the
  engine's trimmed-suffix contains fallback, over-matching quirks included.
* :func:`one_line` cuts at a byte offset and renders a split character as one U+FFFD
  per stray byte, as Go's JSON encoder does.
* :class:`ScanScorer` over :func:`scan_corpus` is ``kg search`` itself: every element
  and decision scored for every query. kgai-tui searches with a BM25 index
  (:mod:`kgai_tui.core.search.index`); the scan is the benchmark baseline.
"""

from __future__ import annotations

import codecs
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.gosem.gopath import go_path_match
from kgai_tui.core.gosem.gotext import go_fields, go_lower, go_trim_space
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "STOPWORDS",
    "ScanDoc",
    "ScanScorer",
    "about_score",
    "decision_about_score",
    "fields_score",
    "glob_match",
    "go_path_match",
    "match_strength",
    "one_line",
    "scan_corpus",
    "split_paths",
    "tokenize",
    "trim_glob_suffix",
]

#: The engine's stopwords, compared after Go lower-casing (spec 6.5).
# Relevance weights of recall (spec 6.5): a path glob, the about score, decisions.
PATH_WEIGHT: Final = 10.0
ABOUT_WEIGHT: Final = 6.0
DECISION_WEIGHT: Final = 5.0

STOPWORDS: Final[frozenset[str]] = frozenset(
    {
        "the", "a", "an", "of", "to", "in", "on", "for", "and", "or", "is", "are",
        "be", "with", "that", "this", "it", "as", "at", "by", "from", "we", "was",
        "were", "how", "what", "why", "does", "do", "should", "must", "our", "its",
        "into", "about",
    }
)  # fmt: skip

_ASCII_RUN: Final = re.compile(r"[A-Za-z0-9]+")
_ASCII_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")

_ONE_LINE_MAX: Final = 160
_ONE_LINE_CUT: Final = 157

_BYTE_REPLACE: Final = "kgai-byte-replace"


def _byte_replace(err: UnicodeError) -> tuple[str, int]:
    """Replace one invalid byte with U+FFFD, as Go's ``utf8.DecodeRune`` does."""
    if not isinstance(err, UnicodeDecodeError):
        raise err
    return ("\ufffd", err.start + 1)


codecs.register_error(_BYTE_REPLACE, _byte_replace)


def _utf8(s: str) -> bytes:
    """Encode like a Go string conversion; lone surrogates never raise."""
    return s.encode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- tokens


def _finish(token: str, out: list[str]) -> None:
    """Keep a finished token if it has two runes and is no stopword after lowering."""
    if len(token) >= 2:
        low = go_lower(token)
        if low not in STOPWORDS:
            out.append(low)


def _tokenize_runes(s: str) -> list[str]:
    """Tokenize rune by rune with Unicode categories (the general path)."""
    out: list[str] = []
    start = -1
    prev_lower = False
    for i, c in enumerate(s):
        cat = unicodedata.category(c)
        if cat[0] == "L" or cat == "Nd":
            if start < 0:
                start = i
            elif prev_lower and cat == "Lu":
                _finish(s[start:i], out)
                start = i
            prev_lower = cat == "Ll"
        else:
            if start >= 0:
                _finish(s[start:i], out)
                start = -1
            prev_lower = False
    if start >= 0:
        _finish(s[start:], out)
    return out


def tokenize(s: str) -> list[str]:
    """Split text into search tokens like the engine's ``tokenize`` (spec 6.5).

    A word rune is a letter (any ``L*`` category) or a decimal digit (``Nd``); any
    other rune ends the token. An upper-case letter (``Lu``) right after a lower-case
    one (``Ll``) starts a new token, so ``InvoiceRendering`` gives two tokens while
    ``HTMLParser`` stays whole. Tokens shorter than two runes are dropped, the rest
    are Go-lower-cased and stopwords removed. Duplicates are kept.

    Args:
        s: Any text.

    Returns:
        The tokens in order of appearance.
    """
    if not s.isascii():
        return _tokenize_runes(s)
    out: list[str] = []
    for run in _ASCII_RUN.findall(s):
        for part in _ASCII_CAMEL.split(run):
            _finish(part, out)
    return out


# --------------------------------------------------------------------------- scores


def strength(q: bytes, d: bytes) -> float:
    """Grade query token bytes against document token bytes (see match_strength)."""
    if q == d:
        return 1.0
    lq, ld = len(q), len(d)
    n = min(lq, ld)
    lcp = 0
    while lcp < n and q[lcp] == d[lcp]:
        lcp += 1
    if lcp >= 3:
        ratio = lcp / max(lq, ld)
        if ratio >= 0.55:
            return 0.4 + 0.4 * ratio
    if lq >= 4:
        if q in d:
            return 0.4
        if ld >= 4 and _within_one_edit(q, d, lcp):
            return 0.5
    return 0.0


def _within_one_edit(a: bytes, b: bytes, lcp: int) -> bool:
    """Tell whether the byte edit distance is at most one, given the common prefix."""
    la, lb = len(a), len(b)
    if la == lb:
        return a[lcp + 1 :] == b[lcp + 1 :]
    if la + 1 == lb:
        return a[lcp:] == b[lcp + 1 :]
    if lb + 1 == la:
        return a[lcp + 1 :] == b[lcp:]
    return False


def match_strength(q: str, d: str) -> float:
    """Grade how well a query token matches a document token (spec 6.5).

    Lengths, prefixes and substrings are taken on the UTF-8 bytes. In order: equal
    gives 1.0; a common prefix of at least 3 bytes covering at least 55% of the
    longer token gives ``0.4 + 0.4 * ratio``; a query of at least 4 bytes contained
    in the document gives 0.4; two tokens of at least 4 bytes one byte edit apart give
    0.5; anything else gives 0.

    Args:
        q: The query token.
        d: The document token.

    Returns:
        A strength in ``[0, 1]``.
    """
    return strength(_utf8(q), _utf8(d))


def fields_score(
    q_toks: Sequence[str], fields: Sequence[tuple[float, Sequence[str]]]
) -> float:
    """Sum, over query tokens, the best ``strength * weight`` over all field tokens.

    Args:
        q_toks: The query tokens, duplicates included.
        fields: ``(weight, tokens)`` pairs.

    Returns:
        The unnormalised score (0 when nothing matches).
    """
    encoded = [(weight, [_utf8(t) for t in toks]) for weight, toks in fields]
    total = 0.0
    for q in q_toks:
        qb = _utf8(q)
        best = 0.0
        for weight, toks in encoded:
            for tb in toks:
                score = strength(qb, tb) * weight
                if score > best:
                    best = score
        total += best
    return total


def about_score(q_toks: Sequence[str], kind: str, name: str, props_blob: str) -> float:
    """Score an element against ``--about`` tokens (spec 6.4 step 5).

    Args:
        q_toks: The tokenized query.
        kind: The element kind (weight 2).
        name: The element name (weight 3).
        props_blob: The raw props blob, keys included (weight 1).

    Returns:
        ``fieldsScore / (3 * len(q_toks))``, or 0 when there are no query tokens.
    """
    if not q_toks:
        return 0.0
    fields = [(3.0, tokenize(name)), (2.0, tokenize(kind)), (1.0, tokenize(props_blob))]
    return fields_score(q_toks, fields) / (3 * len(q_toks))


def decision_about_score(
    q_toks: Sequence[str], title: str, rationale: str, summary: str
) -> float:
    """Score a decision against ``--about`` tokens for the boost (spec 6.4 step 4).

    Args:
        q_toks: The tokenized query.
        title: The decision title (weight 3).
        rationale: The decision rationale (weight 1, with the summary).
        summary: The decision summary (weight 1, with the rationale).

    Returns:
        ``fieldsScore / (3 * len(q_toks))``, or 0 when there are no query tokens.
    """
    if not q_toks:
        return 0.0
    fields = [(3.0, tokenize(title)), (1.0, tokenize(rationale + " " + summary))]
    return fields_score(q_toks, fields) / (3 * len(q_toks))


# --------------------------------------------------------------------------- globs


def trim_glob_suffix(p: str) -> str:
    """Remove one trailing ``/**``, then one ``/*``, then one ``/`` (each at most once).

    Args:
        p: A path or glob.

    Returns:
        The path with its glob suffix removed.
    """
    p = p.removesuffix("/**")
    p = p.removesuffix("/*")
    return p.removesuffix("/")


def glob_match(stored: str, query: str) -> bool:
    """Match a stored element path against a query path like ``globMatch`` (6.4.1).

    Both sides are trimmed; an empty side never matches. Otherwise either side may be
    the ``path.Match`` pattern, and failing that the sides match when one contains the
    other after :func:`trim_glob_suffix`. The upstream over-matching is kept: a stored
    ``/*`` trims to ``""``, which every query contains, and a stored ``src`` matches
    ``anything/src-old/x``.

    Args:
        stored: One path from an element's ``paths`` prop.
        query: One ``--paths`` value.

    Returns:
        Whether the two paths match.
    """
    stored = go_trim_space(stored)
    query = go_trim_space(query)
    if not stored or not query:
        return False
    if go_path_match(stored, query) or go_path_match(query, stored):
        return True
    a = trim_glob_suffix(stored)
    b = trim_glob_suffix(query)
    return a in b or b in a


def props_paths(props: str) -> list[str]:
    """The stored paths of an element: its props blob's ``paths`` value, split
    (:func:`split_paths`)."""
    return split_paths(parse_props(props).get("paths", ""))


def split_paths(prop_value: str) -> list[str]:
    """Split a ``paths`` prop value into stored paths (spec 6.4 step 5).

    Args:
        prop_value: The raw prop value, e.g. ``"src/a/*, src/b lib/c"``.

    Returns:
        The non-empty paths, split on commas and Go white space, in order.
    """
    return go_fields(prop_value.replace(",", " "))


# --------------------------------------------------------------------------- text


def one_line(s: str) -> str:
    """Flatten text to one line of at most 160 UTF-8 bytes like ``oneLine`` (6.4).

    Newlines and carriage returns become spaces and the result is trimmed. Text over
    160 bytes is cut to its first 157 bytes plus ``...``; a character split by the
    cut becomes one U+FFFD per stray byte, which is what Go's JSON encoder emits.

    Args:
        s: Any text, e.g. a decision rationale.

    Returns:
        The one-line form.
    """
    s = go_trim_space(s.replace("\n", " ").replace("\r", " "))
    raw = _utf8(s)
    if len(raw) <= _ONE_LINE_MAX:
        return s
    return raw[:_ONE_LINE_CUT].decode("utf-8", _BYTE_REPLACE) + "..."


# --------------------------------------------------------------------------- scan search


@dataclass(frozen=True, slots=True)
class ScanDoc:
    """One document of the reference scan scorer (spec 6.5, ``kg search``).

    Attributes:
        hit: The hit it produces: ``{kind, id, name, extra?, elements?}``.
        fields: ``(weight, tokens)`` pairs.
    """

    hit: dict[str, Any]
    fields: tuple[tuple[float, tuple[str, ...]], ...]


def scan_corpus(p: ProjectionView) -> list[ScanDoc]:
    """Build the reference search documents: every element, then every decision.

    Elements (stubs included) have name (weight 3), kind (2) and the raw props blob
    (1); decisions, including those that shape nothing, have the title (3), the names
    of the shaped elements (1.5) and ``rationale + " " + summary`` (1). The scan order
    the reference leaves to its database is fixed here as id order.

    Args:
        p: A replayed projection.

    Returns:
        The documents in scan order.
    """
    docs: list[ScanDoc] = []
    nodes = p.graph.nodes
    for eid in sorted(nodes):
        attrs = nodes[eid]
        hit: dict[str, Any] = {"kind": "element", "id": eid, "name": attrs["name"]}
        if attrs["kind"]:
            hit["extra"] = attrs["kind"]
        docs.append(
            ScanDoc(
                hit,
                (
                    (3.0, tuple(tokenize(attrs["name"]))),
                    (2.0, tuple(tokenize(attrs["kind"]))),
                    (1.0, tuple(tokenize(attrs["props"]))),
                ),
            )
        )
    for idx in sorted(range(len(p.dec_id)), key=p.dec_id.__getitem__):
        names = [nodes[e]["name"] for e in p.dec_shapes[idx] if nodes[e]["name"]]
        hit = {"kind": "decision", "id": p.dec_id[idx], "name": p.dec_title[idx]}
        extra = one_line(p.dec_rationale[idx])
        if extra:
            hit["extra"] = extra
        if names:
            hit["elements"] = names
        docs.append(
            ScanDoc(
                hit,
                (
                    (3.0, tuple(tokenize(p.dec_title[idx]))),
                    (1.5, tuple(tokenize(" ".join(names)))),
                    (
                        1.0,
                        tuple(
                            tokenize(p.dec_rationale[idx] + " " + p.dec_summary[idx])
                        ),
                    ),
                ),
            )
        )
    return docs


class ScanScorer:
    """The reference engine's search: score every document for every query (6.5).

    It is kept as the baseline the search index is measured against. Results equal
    the spec's scan: IDF from exact document frequencies over all documents, the
    best ``strength * weight`` per query token, the coordination factor, a stable
    sort and the limit. Strengths are memoised per distinct document token, which
    changes the speed but not the scores.
    """

    def __init__(self, docs: Sequence[ScanDoc]) -> None:
        """Tokenised documents, as :func:`scan_corpus` builds them."""
        self.docs = list(docs)
        self._df: dict[str, int] = {}
        for doc in self.docs:
            for tok in {t for _, toks in doc.fields for t in toks}:
                self._df[tok] = self._df.get(tok, 0) + 1

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]] | None:
        """Return kg's hits for a query, or ``None`` when it has no tokens.

        Args:
            query: The search text.
            limit: At most this many hits (``<= 0`` means 20).

        Returns:
            Hits ``{kind, id, name, extra?, elements?, score}``, best first.
        """
        q_toks = tokenize(query)
        if not q_toks:
            return None
        limit = 20 if limit <= 0 else limit
        n = len(self.docs)
        idf = [1 + math.log(n / (1 + self._df.get(q, 0))) for q in q_toks]
        q_bytes = [_utf8(q) for q in q_toks]
        memo: list[dict[str, float]] = [{} for _ in q_toks]
        scored: list[tuple[float, int]] = []
        for pos, doc in enumerate(self.docs):
            total = 0.0
            matched = 0
            for qi, qb in enumerate(q_bytes):
                cache = memo[qi]
                best = 0.0
                for weight, toks in doc.fields:
                    for tok in toks:
                        s = cache.get(tok)
                        if s is None:
                            s = cache[tok] = strength(qb, _utf8(tok))
                        if s * weight > best:
                            best = s * weight
                if best > 0:
                    matched += 1
                    total += best * idf[qi]
            if total > 0:
                scored.append((-(total * (1 + 0.3 * (matched - 1))), pos))
        scored.sort()
        return [{**self.docs[pos].hit, "score": -neg} for neg, pos in scored[:limit]]
