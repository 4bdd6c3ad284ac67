"""The answer of ``search`` (the MCP ``search`` tool): ranked hits from the BM25 index."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.reads.kg import parse_as_of

if TYPE_CHECKING:
    from kgai_tui.core.search.index import SearchIndex

__all__ = ["IndexSource", "search_answer"]

#: How the search gets its index; the argument says whether the index must have the
#: engine at hand (``as_of`` replays the store), or a current cached index will do.
IndexSource = Callable[[bool], "SearchIndex"]


def search_answer(
    index: IndexSource,
    query: str,
    limit: int = 20,
    *,
    include_all: bool = False,
    as_of: str | None = None,
) -> Answer:
    """``search [--all] [--as-of TS] --limit N QUERY``.

    Args:
        index: gives the store's search index (called once, after ``as_of`` was
            checked).
        query: the search text (the CLI joins its words with spaces).
        limit: at most this many hits (``<= 0`` means the default, 20).
        include_all: also search superseded decisions (``--all``).
        as_of: only what had been recorded by then (RFC3339 or ``YYYY-MM-DD``).

    Raises:
        UsageError: ``as_of`` is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.search.damage import searched_with_notes
    from kgai_tui.core.search.model import search_obj

    cut = parse_as_of(as_of) if as_of else None
    hits, notes = searched_with_notes(
        lambda: index(cut is not None),
        query,
        limit=limit,
        include_all=include_all,
        as_of=cut,
    )
    obj = search_obj(hits)
    # kg's keys, then (only when a search found little) what would find more.
    if notes.lines:
        obj["notes"] = list(notes.lines)
    if notes.did_you_mean is not None:
        obj["did_you_mean"] = notes.did_you_mean
    return Answer(obj, floats=True)
