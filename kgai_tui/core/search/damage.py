"""A search that fails inside the index's own files: the index is built again.

The state file records each index file's identity, so a file written after the
index was saved is never opened (:mod:`.cache`). Damage an identity cannot see (a
disk that returns other bytes, a state file written again to match) surfaces as
an error from tantivy in the middle of a search: an I/O or decompression error, or
stored fields that no longer decode. Then the index is dropped from the cache and
the search runs once more on an index opened anew, which the log builds again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.search.cache import drop_state

if TYPE_CHECKING:
    from datetime import datetime

    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.search.index import SearchIndex
    from kgai_tui.core.search.model import SearchHit
    from kgai_tui.core.search.vocab import SearchNotes

__all__ = ["SearchIndexDamagedError", "searched", "searched_with_notes"]

T = TypeVar("T")


class SearchIndexDamagedError(KgaiError):
    """The index failed a search, and again once it was opened anew."""

    advice = "run `kgai-tui rebuild` (it builds the search index again from the log)"


def _inside_index(exc: Exception) -> bool:
    """Whether a search failed reading the index: tantivy reports what it cannot
    read as ``ValueError`` (a Rust panic as ``pyo3_runtime``'s exception), and a
    stored document that no longer decodes is one too. Ours are ``KgaiError``s."""
    if isinstance(exc, KgaiError):
        return False
    return isinstance(exc, ValueError) or type(exc).__module__ == "pyo3_runtime"


def searched(index: Callable[[], SearchIndex], run: Callable[[SearchIndex], T]) -> T:
    """``run(index())``; when it fails inside the index, the index is dropped
    (marked :attr:`~SearchIndex.forgotten`, its state file removed) and ``run``
    is tried once more on a new ``index()``.

    Raises:
        SearchIndexDamagedError: it failed inside the index again (a cache that
            could not be written keeps the damaged index).
    """
    for last in (False, True):
        opened = index()
        try:
            return run(opened)
        except Exception as exc:  # told apart just below
            if not _inside_index(exc):
                raise
            if last:
                line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise SearchIndexDamagedError(
                    f"the search index could not be read: {line}"
                ) from exc
            opened.forgotten = True
            if opened.info.path is not None:
                drop_state(opened.info.path)
    raise AssertionError("unreachable: the second try returns or raises")


def searched_with_notes(
    index: Callable[[], SearchIndex],
    query: str,
    *,
    limit: int,
    include_all: bool,
    as_of: datetime | None,
    projection_at: ProjectionView | None = None,
) -> tuple[list[SearchHit] | None, SearchNotes]:
    """A search's hits and what the index says of a query that found little, as
    every face asks them (:func:`searched`, so a failure inside the index is
    retried on one built again)."""

    def run(opened: SearchIndex) -> tuple[list[SearchHit] | None, SearchNotes]:
        hits = opened.search(
            query,
            limit=limit,
            include_all=include_all,
            as_of=as_of,
            projection_at=projection_at,
        )
        notes = opened.notes(query, hits, include_all=include_all, as_of=as_of)
        return hits, notes

    return searched(index, run)
