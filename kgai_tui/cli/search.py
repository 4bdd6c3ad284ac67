"""``kgai-tui search``: ranked hits from the BM25 index.

``search`` opens the cached index without reading the log when it is current (a stat
and a 64 KiB tail hash per shard), so a warm search does not replay the store; only a
changed log, ``--as-of`` or a missing index opens the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kgai_tui.cli.support import (
    KG_OUTPUT,
    STORE_OPTION,
    handles_errors,
    no_store_here,
    open_engine,
    progress,
    resolve_location,
    show,
)
from kgai_tui.core.answers.search import search_answer
from kgai_tui.text.render import render_search

if TYPE_CHECKING:
    from kgai_tui.core.search.index import SearchIndex

__all__ = ["open_search_index", "search_command"]


def open_search_index(store: str | None) -> SearchIndex:
    """Open the store's search index, building or updating it when needed.

    A search ``--as-of`` asks the read model's moments which decisions were in
    force then, and reads the model's time index when they cannot say.

    Args:
        store: The ``--store`` value (or ``None`` for discovery).

    Raises:
        StoreNotFoundError: there is no store where discovery looked.
    """
    from kgai_tui.core.search.index import SearchIndex  # tantivy only for this command

    location = resolve_location(store)
    if not location.exists:
        raise no_store_here(location)
    cached = SearchIndex.open_cached(location.root)
    if cached is not None:
        return cached
    with progress(lambda: _WAITING):
        cached = SearchIndex.once_built(location.root)
    if cached is not None:
        return cached
    from kgai_tui.core.search.through_model import index_through_model

    with progress(lambda: _EXTENDING):
        cached = index_through_model(location.root)
    if cached is not None:
        return cached
    # No index for this log: a replay of every line builds it (the replay is a
    # builder here: nothing of it is kept in the cache).
    engine = open_engine(store)
    with progress(lambda: _BUILDING):
        return SearchIndex.for_engine(engine)


_BUILDING = "kgai-tui: building the search index; later searches use it"
_EXTENDING = "kgai-tui: adding the new lines of the log to the search index"
_WAITING = "kgai-tui: waiting for the search index another kgai-tui process is building"


@click.command("search")
@STORE_OPTION
@KG_OUTPUT
@click.option(
    "--all",
    "include_all",
    is_flag=True,
    help="Also search superseded decisions and dead ends.",
)
@click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="TS",
    help="Only what had been recorded by then (RFC3339, or YYYY-MM-DD = end of day).",
)
@click.option(
    "--limit", type=int, default=20, show_default=True, help="At most this many hits."
)
@click.argument("query", nargs=-1)
@handles_errors
def search_command(
    store: str | None,
    as_json: bool,
    include_all: bool,
    as_of: str | None,
    limit: int,
    query: tuple[str, ...],
) -> None:
    """Search elements and decisions (BM25).

    The same store and query give the same answer on every machine.

    Words may match anywhere (more matches rank higher); "a phrase" must match in
    order; invoi* is a prefix; kind:feature, author:alice and element:Invoice
    filter. With no exact match, a typo-tolerant search runs. By default only the
    decisions in force are searched; --all adds superseded ones.

    Example: kgai-tui search invoice rendering --json
    """
    answer = search_answer(
        lambda _as_of: open_search_index(store),
        " ".join(query),
        limit,
        include_all=include_all,
        as_of=as_of,
    )
    show(answer, as_json, render_search)
