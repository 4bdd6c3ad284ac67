"""The search query language, parsed without ever failing (no tantivy here).

User text is split by a small scanner, never by tantivy's query parser (which raises on
``AND``, ``(``, ``:``, an odd quote or an apostrophe). What it understands:

* plain words: ``invoice rendering`` (any of them may match; more matches rank higher);
* ``"a phrase"``: the words in this order (required); an unclosed quote runs to the end;
* a prefix: ``invoi*`` (the last word part before the star is a prefix);
* filters, all required: ``kind:feature`` (element kind; ``kind:decision`` or
  ``kind:element`` pick the hit kind), ``author:alice`` (decision author or writer
  install id), ``element:Invoice`` (an element, by name, ``kind:name`` or id, and the
  decisions that shaped it). A filter value may be quoted: ``element:"Invoice Rendering"``.

Every other character is just text: ``AND``/``OR``/``NOT``, parentheses, ``-``, ``+``,
``^``, ``~``, a colon after an unknown word, a lone ``*``. Nothing here raises.

:func:`split_camel` is the text preparation shared by indexing, querying and snippets:
it inserts a space at every camelCase boundary (a lower-case letter followed by an
upper-case one), so the word tokenizer downstream sees ``Invoice Rendering``.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "FILTER_NAMES",
    "HIT_KINDS",
    "ParsedQuery",
    "camel_offsets",
    "camel_positions",
    "compounds",
    "parse_query",
    "query_problems",
    "split_camel",
    "to_original",
]

#: The filter prefixes the scanner recognises (case-insensitive).
FILTER_NAMES: Final = ("kind", "author", "element")
#: ``kind:`` values that select the hit kind rather than an element kind.
HIT_KINDS: Final = {
    "decision": "decision",
    "decisions": "decision",
    "element": "element",
    "elements": "element",
}

_ASCII_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")
#: A plain scan for a boundary is several times cheaper than a look-around ``sub``
#: that finds nothing (the common case, paid per field of a million documents).
_ASCII_PAIR: Final = re.compile(r"[a-z][A-Z]")
_FILTER: Final = re.compile(r"(?i)(kind|author|element):")
_SPACE: Final = re.compile(r"\s+")
#: Upper bounds that keep hostile input cheap (a query is a few words).
MAX_QUERY_CHARS: Final = 2000
MAX_PARTS: Final = 64


def camel_positions(text: str) -> list[int]:
    """Return the indices where a camelCase boundary starts a new word."""
    if text.isascii():
        return [m.start() for m in _ASCII_CAMEL.finditer(text)]
    out = []
    prev_lower = False
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        if prev_lower and cat == "Lu":
            out.append(i)
        prev_lower = cat == "Ll"
    return out


def split_camel(text: str) -> str:
    """Insert a space at each camelCase boundary (``Ll`` followed by ``Lu``).

    A run of capitals is not split, as in the reference tokenizer: ``HTMLParser``
    stays one word, ``InvoiceRendering`` becomes ``Invoice Rendering``.

    Args:
        text: Any text.

    Returns:
        The text with spaces inserted; every other character is unchanged.
    """
    if text.islower() or text.isupper():  # no lower-case letter before a capital
        return text
    if text.isascii():
        return _ASCII_CAMEL.sub(" ", text) if _ASCII_PAIR.search(text) else text
    positions = camel_positions(text)
    if not positions:
        return text
    parts = []
    last = 0
    for pos in positions:
        parts.append(text[last:pos])
        last = pos
    parts.append(text[last:])
    return " ".join(parts)


_RUN: Final = re.compile(r"[^\W_]+")


def compounds(text: str) -> str:
    """The camelCase words of ``text`` as written, space-separated (``""``: none).

    The index splits ``PostgreSQL`` into ``postgre`` + ``sql``; the ``exact`` field
    also holds the word whole, so the vocabulary a query is met with knows it
    (``sendgird`` is one edit from ``sendgrid``). Unscored: no BM25 score moves.
    """
    if text.isascii() and not _ASCII_PAIR.search(text):
        return ""
    return " ".join(run for run in _RUN.findall(text) if camel_positions(run))


def camel_offsets(text: str) -> tuple[str, list[int]]:
    """Split camelCase and return the inserted positions (in the split text).

    Args:
        text: Any text.

    Returns:
        ``(split_text, inserted)`` where ``inserted`` lists, ascending, the index in
        ``split_text`` of every inserted space; use :func:`to_original` to map an
        offset back.
    """
    positions = camel_positions(text)
    return split_camel(text), [pos + i for i, pos in enumerate(positions)]


def to_original(offset: int, inserted: list[int]) -> int:
    """Map an offset in camel-split text back to the original text."""
    return offset - bisect_right(inserted, offset - 1)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query split into its parts; analysis into terms happens in the index.

    Attributes:
        words: Plain text chunks, in order (each may hold several words).
        phrases: Quoted chunks, in order.
        prefixes: Words that ended with ``*`` (without the star), in order.
        kinds: Element kinds from ``kind:`` filters (as typed).
        hit_kinds: ``"decision"`` and/or ``"element"`` from ``kind:`` filters.
        authors: Values of ``author:`` filters (as typed).
        elements: Values of ``element:`` filters (as typed).
    """

    words: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    hit_kinds: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    elements: tuple[str, ...] = ()
    unclosed: str | None = None
    """The text after a quote that was never closed (it ran to the end)."""

    @property
    def has_filters(self) -> bool:
        """Whether any ``kind:``, ``author:`` or ``element:`` filter is present."""
        return bool(self.kinds or self.hit_kinds or self.authors or self.elements)


class _Scanner:
    """A cursor over the query text that splits it into parts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.words: list[str] = []
        self.phrases: list[str] = []
        self.prefixes: list[str] = []
        self.filters: list[tuple[str, str]] = []
        self.unclosed: str | None = None

    def quoted(self) -> str:
        """Read from an opening quote to the closing one (or the end)."""
        end = self.text.find('"', self.pos + 1)
        if end < 0:
            end = len(self.text)
            self.unclosed = self.text[self.pos + 1 :]
        value = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return value

    def bare(self) -> str:
        """Read up to the next white space."""
        m = _SPACE.search(self.text, self.pos)
        end = m.start() if m else len(self.text)
        value = self.text[self.pos : end]
        self.pos = end
        return value

    def run(self) -> None:
        """Split the whole text."""
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch.isspace():
                self.pos += 1
            elif ch == '"':
                self.phrases.append(self.quoted())
            else:
                m = _FILTER.match(text, self.pos)
                if m is not None:
                    self.pos = m.end()
                    at_quote = self.pos < len(text) and text[self.pos] == '"'
                    value = self.quoted() if at_quote else self.bare()
                    self.filters.append((m.group(1).lower(), value))
                else:
                    self.word(self.bare())

    def word(self, chunk: str) -> None:
        """Classify a bare chunk: a prefix when it ends with ``*`` after text."""
        stripped = chunk.rstrip("*")
        if stripped != chunk and stripped and (stripped[-1].isalnum()):
            self.prefixes.append(stripped)
        else:
            self.words.append(chunk)


def parse_query(text: str) -> ParsedQuery:
    """Split user text into words, phrases, prefixes and filters; never raises.

    Args:
        text: Anything the user typed (over-long input is cut at 2000 characters).

    Returns:
        The parsed query. Empty filter values are dropped; an unknown ``field:`` is
        kept as plain text.
    """
    scanner = _Scanner(text[:MAX_QUERY_CHARS])
    scanner.run()
    kinds: list[str] = []
    hit_kinds: list[str] = []
    authors: list[str] = []
    elements: list[str] = []
    for name, value in scanner.filters:
        value = value.strip()
        if not value:
            continue
        if name == "kind":
            hit = HIT_KINDS.get(value.lower())
            (hit_kinds if hit else kinds).append(hit or value)
        elif name == "author":
            authors.append(value)
        else:
            elements.append(value)
    return ParsedQuery(
        words=tuple(scanner.words[:MAX_PARTS]),
        phrases=tuple(p for p in scanner.phrases[:MAX_PARTS] if p.strip()),
        prefixes=tuple(scanner.prefixes[:MAX_PARTS]),
        kinds=tuple(kinds[:MAX_PARTS]),
        hit_kinds=tuple(dict.fromkeys(hit_kinds)),
        authors=tuple(authors[:MAX_PARTS]),
        elements=tuple(elements[:MAX_PARTS]),
        unclosed=scanner.unclosed,
    )


def query_problems(
    parsed: ParsedQuery,
    *,
    kinds: Iterable[str] = (),
    has_element: Callable[[str], bool] | None = None,
) -> list[str]:
    """What in a query cannot match as typed, one line each (empty: nothing).

    The scanner never fails, so a slip (an unclosed quote, a filter naming a kind
    or an element the store lacks) would otherwise read as "0 hits" and nothing
    more. ``kinds`` are the store's element kinds; ``has_element`` tells whether
    an ``element:`` value names one (unchecked when ``None``).
    """
    out: list[str] = []
    if parsed.unclosed is not None:
        shown = parsed.unclosed.strip()[:40] or "…"
        out.append(
            f'unclosed quote: the phrase "{shown}" runs to the end of the query '
            '(close it with ")'
        )
    known = {k.lower(): k for k in kinds}
    for kind in parsed.kinds:
        if kind.lower() not in known:
            listed = ", ".join(sorted(known.values())[:8]) or "none yet"
            out.append(
                f"no element kind {kind!r} in this store: kind: takes {listed}, "
                "decision or element"
            )
    if has_element is not None:
        for name in parsed.elements:
            if not has_element(name):
                out.append(
                    f"no element {name!r}: element: takes a name, kind:name or id"
                )
    return out
