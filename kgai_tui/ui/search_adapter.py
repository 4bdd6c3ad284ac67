"""Bridge from the Search view to the core BM25 index, one index per opened engine."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from kgai_tui.core.reads.store import Store, whole_of
from kgai_tui.core.search.damage import searched_with_notes
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import SearchHit
from kgai_tui.ui.snapshot import Snapshot

_INDEXES: WeakKeyDictionary[Store, SearchIndex] = WeakKeyDictionary()
_LOCK = threading.Lock()
LIMIT = 50


@dataclass(frozen=True, slots=True)
class UiHit:
    """What the Search view shows for one hit."""

    kind: str
    id: str
    name: str
    extra: str
    elements: tuple[str, ...]
    snippet: str
    spans: tuple[tuple[int, int], ...]


def _shows_more(hit: SearchHit) -> bool:
    """A snippet of the title or name repeats the first line; show other text."""
    return hit.snippet is not None and hit.snippet.field not in ("title", "name")


def _snippet_text(hit: SearchHit) -> str:
    if _shows_more(hit) and hit.snippet is not None:
        return hit.snippet.text
    return hit.extra if hit.kind == "decision" else ""


def _snippet_spans(hit: SearchHit) -> tuple[tuple[int, int], ...]:
    if _shows_more(hit) and hit.snippet is not None:
        return hit.snippet.spans
    return ()


def index_for(engine: Store) -> SearchIndex:
    """The engine's search index, opened (and built or updated) once per engine."""
    with _LOCK:
        index = _INDEXES.get(engine)
        if index is None or index.forgotten:  # dropped by a search it failed
            index = _opened(engine)
            _INDEXES[engine] = index
        return index


def _opened(engine: Store) -> SearchIndex:
    """A store read through its model opens the cached index as it is, or extends
    it with the lines appended since (:mod:`~kgai_tui.core.search.through_model`);
    only when there is none for that log is the whole store read to build it."""
    kept = engine.kept
    if kept is not None and engine.root is not None:
        from kgai_tui.core.search.through_model import index_of_model

        cached = SearchIndex.open_cached(engine.root) or index_of_model(
            kept, engine.root
        )
        if cached is not None:
            return cached
    return SearchIndex.for_engine(whole_of(engine))


def run_search(
    snapshot: Snapshot, query: str, *, include_all: bool
) -> tuple[list[UiHit], str, tuple[str, ...]]:
    """Run a query as of the snapshot's moment; returns hits, a caption note, and
    what the index says about a query that found little (the CLI's ``notes``)."""
    if not query.strip():
        return [], "", ()
    hits, said = searched_with_notes(
        lambda: index_for(snapshot.engine),
        query,
        limit=LIMIT,
        include_all=include_all,
        as_of=snapshot.moment,
        projection_at=snapshot.projection if snapshot.moment is not None else None,
    )
    out = [
        UiHit(
            kind=hit.kind,
            id=hit.id,
            name=hit.name,
            extra=hit.extra,
            elements=hit.elements,
            snippet=_snippet_text(hit),
            spans=_snippet_spans(hit),
        )
        for hit in hits or ()
    ]
    note = " · including superseded" if include_all else " · decisions in force"
    if snapshot.moment is not None:
        note += f" · as of {snapshot.moment.strftime('%Y-%m-%d')}"
    lines = tuple(line.replace("(--all)", "(^t)") for line in said.lines)
    return out, note, lines
