"""``kgai-tui search``: ranked hits from the BM25 index.

``search`` opens the cached index without reading the log when it is current (a stat
and a 64 KiB tail hash per shard), so a warm search does not replay the store; only a
changed log, ``--as-of`` or a missing index opens the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    STORE_OPTION,
    emit_json,
    handles_errors,
    open_engine,
    resolve_location,
)
from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.reads.kg import parse_as_of
from kgai_tui.core.safe_text import visible_tree
from kgai_tui.core.search.model import search_obj

if TYPE_CHECKING:
    from kgai_tui.core.search.index import SearchIndex

__all__ = ["render_search", "search_command"]


def render_search(obj: dict[str, Any]) -> str:
    """Render search hits for a person: ``●`` first hit, ``○`` the rest (spec 11.5).

    Args:
        obj: The ``{"hits", "ok"}`` object ``--json`` prints.

    Returns:
        Lines of text, every store string made visible.
    """
    hits = visible_tree(obj).get("hits")
    if hits is None:
        return "nothing to search for: the query has no searchable words"
    if not hits:
        return "no matches"
    lines = []
    for i, hit in enumerate(hits):
        mark = "●" if i == 0 else "○"
        if hit["kind"] == "element":
            lines.append(
                f"{mark} {hit['name'] or '(unnamed)'}  {hit.get('extra', '')} element"
            )
            continue
        lines.append(f"{mark} {hit['name'] or '(untitled)'}  decision {hit['id'][:10]}")
        if hit.get("extra"):
            lines.append(f"    {hit['extra']}")
        if hit.get("elements"):
            lines.append("    → " + ", ".join(hit["elements"]))
    return "\n".join(lines)


def open_search_index(store: str | None, *, need_engine: bool) -> SearchIndex:
    """Open the store's search index, building or updating it when needed.

    Args:
        store: The ``--store`` value (or ``None`` for discovery).
        need_engine: Open the engine even if the cache is current (as-of needs it).

    Raises:
        StoreNotFoundError: there is no store where discovery looked.
    """
    from kgai_tui.core.search.index import SearchIndex  # tantivy only for this command

    location = resolve_location(store)
    if not location.exists:
        raise StoreNotFoundError(
            f"no kgai store at {location.root} (found via {location.source}); "
            "pass --store PATH or set KGAI_STORE"
        )
    if not need_engine:
        cached = SearchIndex.open_cached(location.root)
        if cached is not None:
            return cached
    return SearchIndex.for_engine(open_engine(store))


@click.command("search")
@STORE_OPTION
@JSON_OPTION
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
    """Search elements and decisions (BM25; the same answer on every machine).

    Words may match anywhere (more matches rank higher); "a phrase" must match in
    order; invoi* is a prefix; kind:feature, author:alice and element:Invoice
    filter. With no exact match, a typo-tolerant search runs. By default only the
    decisions in force are searched; --all adds superseded ones.

    Example: kgai-tui search invoice rendering --json
    """
    cut = parse_as_of(as_of) if as_of else None
    index = open_search_index(store, need_engine=cut is not None)
    hits = index.search(
        " ".join(query), limit=limit, include_all=include_all, as_of=cut
    )
    obj = search_obj(hits)
    if as_json:
        emit_json(obj, floats=True)
    else:
        click.echo(render_search(obj))
