"""Run one read-only Cypher query: the graph it runs on, the rows, their order.

**Where the graph lives.** Beside the read model, in the user cache
(``<model>.graph``, stamped with what the model was built from and the file's
identity as the model's seal records it, ``<model>.graph.stamp``): built on the
first query, rebuilt when the log has grown since or the file was written by
anyone after the build (the stamp no longer matches: a truncated graph was opened
before, and the query failed inside the database), then opened read-only by every
query. Rebuilt,
not extended: an extended graph numbers its nodes (go-kuzu's ``ID``, which a query
returning a node prints) otherwise than a build in replay order, and the answer
must depend on the store alone. The
build writes a temporary file in the same directory and renames it into place, so
a reader never sees half a graph and two builders never collide. A store read
without its model (the whole store, a moment of ``--as-of``) gets a graph in
memory, built for the one query.

**Rows.** Keyed by the RETURN columns as written (alias or expression text), values
as kg prints them (:mod:`.values`). A query without ORDER BY gets a total order all
the same: its rows sorted by their JSON bytes (Go's encoding), so the answer is the
same on every machine, whatever order the database scanned in. ``limit`` keeps the
first rows of that order and counts the rest.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.gosem.gojson import marshal, with_go_floats
from kgai_tui.core.query.guard import has_order_by, refusal
from kgai_tui.core.query.values import row_value
from kgai_tui.core.store.regular_file import (
    identity,
    read_regular,
    replace_cache_file,
)

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import KeptReads, Store
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "GRAPH_FORMAT",
    "QueryError",
    "QueryRows",
    "graph_path",
    "memory_graph",
    "run_query",
]

#: Bumped when what the graph file holds changes.
GRAPH_FORMAT: Final = 2  # 2: built on one thread (ids in replay order)
#: Memory a reading database may use for its pages.
READ_POOL: Final = 256 * 1024 * 1024
#: The most rows a query may bring into Python (each a dict: ~1 KB); a query
#: returning more is refused before they are read (its ORDER BY and a LIMIT, or
#: ``limit`` with an ORDER BY, keep it under).
MAX_ROWS: Final = 1_000_000
#: The default time limit of one query, in seconds.
DEFAULT_TIMEOUT: Final = 30.0


class QueryError(KgaiError):
    """A query that did not run: refused, malformed, or stopped (exit 1, as kg)."""


@dataclass(frozen=True, slots=True)
class QueryRows:
    """A query's rows in their final order, and what else the answer says."""

    rows: list[dict[str, Any]]
    dropped: int
    ordered_by_query: bool
    graph: str  # "stored", "built", "memory" or "given"
    columns: list[str]  # as RETURN lists them (the rows' keys are sorted, as Go's)


def graph_path(model: Path) -> Path:
    """Where the queryable graph of the model at ``model`` lives."""
    return model.with_name(model.name + ".graph")


def _stamp_of(shard_states: Any) -> str:
    import ladybug

    raw = orjson.dumps(
        [GRAPH_FORMAT, getattr(ladybug, "__version__", ""), shard_states],
        option=orjson.OPT_SORT_KEYS,
    )
    return sha256(raw).hexdigest()


def _stored_graph(engine: KeptReads, say: Callable[[str], None]) -> tuple[Any, str]:
    """The model's graph opened read-only, built first when missing, stale or
    not the file its stamp describes (or, whatever the stamp says, when the
    database cannot open it)."""
    import ladybug

    target = graph_path(engine.model_path)
    stamp_file = target.with_name(target.name + ".stamp")
    stamp = _stamp_of(engine.shard_states)
    if _sealed(stamp_file, stamp, target):
        try:
            db = ladybug.Database(
                str(target), read_only=True, buffer_pool_size=READ_POOL
            )
            return db, "stored"
        except RuntimeError:
            pass  # damaged behind its stamp: built again below
    from kgai_tui.core.query.build import build_graph

    n = len(engine.projection.dec_id)
    say(f"building the query graph of {n:,} decisions (once per change of the log)")
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    _remove(tmp)
    try:
        build_graph(engine.projection, tmp).close()
        replace_cache_file(tmp, target)
        _remove(Path(str(tmp) + ".wal"))
        _write_stamp(stamp_file, _stamp_line(stamp, target))
    finally:
        _remove(tmp)
    db = ladybug.Database(str(target), read_only=True, buffer_pool_size=READ_POOL)
    return db, "built"


def _stamp_line(stamp: str, target: Path) -> str:
    """The stamp file's line: the log's stamp, then the graph file's identity."""
    ident = identity(os.stat(target, follow_symlinks=False))
    return " ".join([stamp, *map(str, ident)]) + "\n"


def _sealed(stamp_file: Path, stamp: str, target: Path) -> bool:
    """Whether the graph at ``target`` is the file built for ``stamp``, untouched.

    An earlier release's stamp (the log's alone) is trusted as that release
    trusted it, once, and written again with the file's identity: else the first
    query after an upgrade built the graph again (about a minute at 1M)."""
    try:
        recorded = read_regular(stamp_file, 4096).decode("ascii")
        line = _stamp_line(stamp, target)
        if recorded == stamp + "\n" and stat.S_ISREG(os.lstat(target).st_mode):
            with contextlib.suppress(OSError):  # a read-only cache: as it was
                _write_stamp(stamp_file, line)
            return True
        return recorded == line
    except (OSError, ValueError):
        return False  # no stamp or no graph (or not regular files): build it


def _write_stamp(stamp_file: Path, line: str) -> None:
    side = stamp_file.with_name(f"{stamp_file.name}.tmp-{os.getpid()}")
    side.write_text(line, "ascii")
    replace_cache_file(side, stamp_file)


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _graph(
    engine: Store, view: ProjectionView | None, say: Callable[[str], None]
) -> tuple[Any, str]:
    kept = engine.kept
    if view is None and kept is not None:
        return _stored_graph(kept, say)
    from kgai_tui.core.query.build import build_graph

    p = view if view is not None else engine.projection
    say(f"building the query graph of {len(p.dec_id):,} decisions in memory")
    return build_graph(p, None), "memory"


def memory_graph(p: Any) -> Any:
    """A graph of the projection ``p`` in memory, for :func:`run_query`'s
    ``database`` (the caller closes it)."""
    from kgai_tui.core.query.build import build_graph

    return build_graph(p, None)


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run_query(
    engine: Store,
    cypher: str,
    *,
    view: ProjectionView | None = None,
    database: Any = None,
    limit: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    say: Callable[[str], None] = lambda _line: None,
) -> QueryRows:
    """Run ``cypher`` on the graph of ``engine`` (or of ``view``, a projection at a
    moment; or on ``database``, a graph the caller built and keeps open, e.g. with
    :func:`memory_graph`, for several queries at one moment).

    Raises:
        QueryError: refused (kg's file words, a write), malformed (the position in
            the message), or stopped at ``timeout`` seconds.
    """
    reason = refusal(cypher)
    if reason is not None:
        raise QueryError(reason)
    import ladybug

    if database is not None:
        db, how = database, "given"
    else:
        db, how = _graph(engine, view, say)
    conn = ladybug.Connection(db)
    try:
        conn.set_query_timeout(max(1, int(timeout * 1000)))
        try:
            result = conn.execute(cypher)
        except RuntimeError as exc:
            raise QueryError(_message(exc, timeout)) from exc
        if isinstance(result, list):  # several statements: kg reads the first
            result = result[0]
        columns: list[str] = result.get_column_names()
        total = int(result.get_num_tuples())
        ordered = has_order_by(cypher)
        # Rows past --limit are only counted when the query orders them itself;
        # without ORDER BY every row is needed for the total order.
        wanted = total if limit is None or not ordered else min(total, limit)
        if wanted > MAX_ROWS:
            raise QueryError(
                f"query returns {total:,} rows, more than {MAX_ROWS:,}: add LIMIT "
                "(with ORDER BY), or narrow it"
            )
        streamed = _rows(result, columns, wanted)
        try:
            if not ordered and limit is not None and limit < total:
                # The first rows of the total order, holding no more than them
                # (a million rows of two columns took 4.4 GB to sort whole).
                rows = heapq.nsmallest(limit, streamed, key=_bytes)
            else:
                rows = list(streamed)
        except RuntimeError as exc:
            raise QueryError(_message(exc, timeout)) from exc
    finally:
        conn.close()
        if database is None:
            db.close()
    if not ordered:
        rows.sort(key=_bytes)
    dropped = total - min(total, limit if limit is not None else total)
    rows = rows[: total - dropped]
    return QueryRows(rows, dropped, ordered, how, list(columns))


def _rows(result: Any, columns: list[str], wanted: int) -> Iterator[dict[str, Any]]:
    """The first ``wanted`` rows of a result, as kg prints them, one at a time."""
    made = 0
    while made < wanted and result.has_next():
        values = result.get_next()
        pairs = sorted(zip(columns, values, strict=True), key=_first)
        made += 1
        yield {c: row_value(v) for c, v in pairs}


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def _bytes(row: dict[str, Any]) -> bytes:
    """A row as Go prints it (map keys sorted, floats in Go's format)."""
    return marshal(with_go_floats(row))


def _message(exc: Exception, timeout: float) -> str:
    line = _one_line(exc)
    low = line.lower()
    if "interrupt" in low or "timeout" in low:
        return f"query stopped after {timeout:g} s, its time limit (--timeout)"
    if "read-only" in low or "read only" in low:
        return "query is read-only: the graph may not be changed"
    return line
