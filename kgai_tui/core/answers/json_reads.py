"""The exact bytes each read command prints with ``--json``, as plain functions.

The MCP server answers every tool call with these bytes, so an agent receives what a
person gets from ``kgai-tui <command> --json``: the same core call, the same Go-style
``MarshalIndent`` (plus the CLI's trailing newline). ``tests/test_mcp.py`` runs the
real console script next to the server to prove that the two agree byte for byte.

The CLI's ``--json`` prints through :func:`json_bytes` and :func:`error_json` too, so
there is one copy of the read-to-bytes step.

Every function takes an already opened :class:`Engine`, so a caller can cache one
per store state; none of them prints, exits or imports click.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.gosem.gojson import marshal_indent, with_go_floats
from kgai_tui.core.reads.as_of import as_of_obj, as_of_view
from kgai_tui.core.reads.context import DEFAULT_MAX, context_obj
from kgai_tui.core.reads.health import status_obj
from kgai_tui.core.reads.kg import conflicts_obj, history_obj, parse_as_of
from kgai_tui.core.safe_text import escape_json_controls

if TYPE_CHECKING:
    from kgai_tui.core.search.index import SearchIndex

__all__ = [
    "as_of_json",
    "conflicts_json",
    "error_json",
    "history_json",
    "json_bytes",
    "recall_json",
    "search_json",
    "split_paths",
    "status_json",
]


def json_bytes(obj: Any, *, floats: bool = False) -> bytes:
    """Return what ``emit_json`` writes for ``obj`` (``MarshalIndent`` plus ``\\n``).

    DEL, C1, bidi, zero-width and other format characters are written as
    ``\\uXXXX`` escapes (Go's encoder writes them raw): the value is the same, and
    the bytes cannot act on a terminal they are printed to.

    Args:
        obj: the JSON-like value, with keys already in output order.
        floats: print floats as Go does (``15``, not ``15.0``); only outputs that
            hold floats need the extra walk.
    """
    return escape_json_controls(marshal_indent(with_go_floats(obj) if floats else obj))


def error_json(message: str) -> bytes:
    """Return the CLI's failure bytes: ``{"error": <first line>, "ok": false}``."""
    stripped = message.strip()
    first_line = stripped.splitlines()[0] if stripped else "failed"
    return json_bytes({"error": first_line, "ok": False})


def split_paths(values: str | Sequence[str]) -> list[str]:
    """Split path arguments the way ``--paths a,b`` is split: commas, trimmed.

    Args:
        values: one comma-separated string, or several strings (each may itself
            hold commas); empty parts are dropped.
    """
    items = [values] if isinstance(values, str) else list(values)
    return [part.strip() for item in items for part in item.split(",") if part.strip()]


def conflicts_json(engine: Engine, about: str = "") -> bytes:
    """Bytes of ``kgai-tui conflicts [--about X] --json``."""
    return json_bytes(conflicts_obj(engine.projection, about))


def recall_json(
    engine: Engine,
    paths: str | Sequence[str] = (),
    about: str = "",
    limit: int = DEFAULT_MAX,
) -> bytes:
    """Bytes of ``kgai-tui context --paths P --about A --max N --json``.

    Args:
        engine: the opened store.
        paths: file paths or globs, as one comma-separated string or a list.
        about: a topic in words.
        limit: at most this many elements (``<= 0`` means the default, 15).
    """
    obj = context_obj(
        engine.projection, paths=split_paths(paths), about=about, limit=limit
    )
    return json_bytes(obj, floats=True)


def history_json(engine: Engine, element: str) -> bytes:
    """Bytes of ``kgai-tui history ELEMENT --json``.

    Raises:
        NotFoundError: no decision touches the element.
    """
    return json_bytes(history_obj(engine.projection, element))


def as_of_json(engine: Engine, timestamp: str) -> bytes:
    """Bytes of ``kgai-tui as-of TIMESTAMP --json``.

    Raises:
        UsageError: the timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    cut = parse_as_of(timestamp)
    return json_bytes(as_of_obj(as_of_view(engine, cut), cut))


def status_json(engine: Engine) -> bytes:
    """Bytes of ``kgai-tui status --json``."""
    return json_bytes(status_obj(engine))


def search_json(
    index: SearchIndex,
    query: str,
    limit: int = 20,
    *,
    include_all: bool = False,
    as_of: str | None = None,
) -> bytes:
    """Bytes of ``kgai-tui search [--all] [--as-of TS] --limit N QUERY --json``.

    Args:
        index: the store's search index (``SearchIndex.for_engine``).
        query: the search text (the CLI joins its words with spaces).
        limit: at most this many hits (``<= 0`` means the default, 20).
        include_all: also search superseded decisions (``--all``).
        as_of: only what had been recorded by then (RFC3339 or ``YYYY-MM-DD``).

    Raises:
        UsageError: ``as_of`` is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.search.model import search_obj

    cut = parse_as_of(as_of) if as_of else None
    hits = index.search(query, limit=limit, include_all=include_all, as_of=cut)
    return json_bytes(search_obj(hits), floats=True)
