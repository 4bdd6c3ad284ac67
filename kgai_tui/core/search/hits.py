"""A search hit from an indexed document's stored fields: the kg shape plus the
best snippet (what :class:`~kgai_tui.core.search.index.SearchIndex` returns)."""

from __future__ import annotations

from typing import Any

from kgai_tui.core.recall.scoring import one_line
from kgai_tui.core.search.analysis import tokenize
from kgai_tui.core.search.model import SearchHit
from kgai_tui.core.search.snippet import Matcher, best_snippet

__all__ = ["hit_of"]


def hit_of(
    score: float,
    disp: dict[str, Any],
    matcher: Matcher,
    names: dict[str, str],
) -> SearchHit:
    """The hit of a document's stored fields (see
    :func:`~kgai_tui.core.search.backend.stored_fields`); ``names`` holds the
    current name of each element a decision shaped."""
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
            snippet=best_snippet(fields, tokenize, matcher),
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
        snippet=best_snippet(fields, tokenize, matcher),
        lamport=disp["lamport"],
        recorded_at=disp["at"],
    )
