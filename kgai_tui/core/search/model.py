"""Search results as values: hits, snippets and kg's JSON shape (no tantivy here).

A hit keeps the reference engine's keys (``kind``, ``id``, ``name``, ``extra``,
``elements``, ``score``) and adds ``snippet``: the text of the best matching field with
the matched words as plain ``[start, end)`` spans (code point offsets), so a terminal
app can highlight without parsing markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "SCORE_DIGITS",
    "SearchHit",
    "Snippet",
    "hit_order",
    "round_score",
    "search_obj",
]

#: Scores are rounded to this many decimals before ordering and printing.
SCORE_DIGITS: Final = 4

HitKind = Literal["element", "decision"]


def round_score(score: float) -> float:
    """Round a raw score to the fixed precision used for ordering and output."""
    return round(float(score), SCORE_DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True, slots=True)
class Snippet:
    """The best matching field of a hit, with match spans.

    Attributes:
        field: Which text it is: ``title``, ``rationale``, ``summary``, ``elements``
            for decisions; ``name``, ``props``, ``kind`` for elements.
        text: The text, on one line, cut to a window around the first match.
        spans: ``(start, end)`` code point offsets into ``text`` of matched words.
    """

    field: str
    text: str
    spans: tuple[tuple[int, int], ...] = ()

    def to_obj(self) -> dict[str, Any]:
        """Return ``{field, spans, text}`` (sorted keys, like kg's map outputs)."""
        return {
            "field": self.field,
            "spans": [list(span) for span in self.spans],
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result.

    Attributes:
        kind: ``"element"`` or ``"decision"``.
        id: The element id or decision id.
        name: The element name or the decision title.
        extra: The element kind, or the decision rationale on one line.
        elements: For decisions, the names of the shaped elements (sorted).
        score: The relevance, rounded to :data:`SCORE_DIGITS` decimals.
        snippet: The best matching text with match spans, if any text matched.
        lamport: For decisions, the lamport clock of the recording event.
        recorded_at: For decisions, the RFC3339 time it was recorded (or ``""``).
    """

    kind: HitKind
    id: str
    name: str
    extra: str = ""
    elements: tuple[str, ...] = ()
    score: float = 0.0
    snippet: Snippet | None = None
    lamport: int = 0
    recorded_at: str = ""

    def to_obj(self) -> dict[str, Any]:
        """Return the hit in kg's key order (empty optional keys omitted)."""
        out: dict[str, Any] = {"kind": self.kind, "id": self.id, "name": self.name}
        if self.extra:
            out["extra"] = self.extra
        if self.elements:
            out["elements"] = list(self.elements)
        if self.score:
            out["score"] = self.score
        if self.snippet is not None:
            out["snippet"] = self.snippet.to_obj()
        return out


def hit_order(score: float, hit_id: str, kind: str) -> tuple[float, str, str]:
    """The total order of hits: rounded score descending, then id, then kind."""
    return (-score, hit_id, kind)


def search_obj(hits: Sequence[SearchHit] | None) -> dict[str, Any]:
    """Return kg's search output ``{"hits": [...], "ok": true}``.

    Args:
        hits: The hits, or ``None`` when the query had no searchable words (kg prints
            ``"hits": null`` then, and ``[]`` when nothing matched).

    Returns:
        The JSON-ready object; print it with Go float formatting.
    """
    return {
        "hits": None if hits is None else [hit.to_obj() for hit in hits],
        "ok": True,
    }
