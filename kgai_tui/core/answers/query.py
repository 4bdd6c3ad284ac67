"""The answer of ``query``: kg's ``{"ok": true, "rows": [...]}`` for one Cypher
query, on the graph now or at a moment (``--as-of``).

kg's output, byte for byte, when kg would give it: ``rows`` is ``null`` when the
query returns none (a Go nil slice). Beyond kg, and only when they say something:
``dropped`` (rows past ``--limit``) and ``as_of`` (the moment asked for).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.store import Store, StoreSource

__all__ = ["query_answer"]


def _check(cypher: str, limit: int | None) -> None:
    if not cypher.strip():
        raise UsageError('usage: kgai-tui query "<cypher>"')
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")


def query_answer(
    engine: StoreSource,
    cypher: str,
    *,
    as_of: str | None = None,
    limit: int | None = None,
    timeout: float | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> Answer:
    """``query "<cypher>" [--as-of T] [--limit N]``: kg's rows, in a total order.

    ``engine`` opens the store (its read model, whose graph is stored beside it);
    a moment is read from the store's time index. The arguments, the moment and
    the query's text are checked before anything is opened.

    Raises:
        UsageError: an empty query, ``limit`` below 1, a bad timestamp.
        QueryError: the query was refused, malformed or stopped.
    """
    from kgai_tui.core.query.guard import refusal
    from kgai_tui.core.query.run import DEFAULT_TIMEOUT, QueryError, run_query

    _check(cypher, limit)
    reason = refusal(cypher)
    if reason is not None:
        raise QueryError(reason)
    obj: dict[str, Any] = {"ok": True}
    view = None
    opened: Store = engine()
    if as_of is not None:
        from kgai_tui.core.gosem.gotext import format_rfc3339
        from kgai_tui.core.reads.kg import parse_as_of
        from kgai_tui.core.reads.store import time_index_of

        cut = parse_as_of(as_of)
        # The graph at a moment is not stored: the store's time index gives the
        # view (through the model, built from a replay when none was saved).
        index = time_index_of(opened)
        say("building the graph as it stood then (a moment is not stored)")
        view = index.at(cut)
    got = run_query(
        opened,
        cypher,
        view=view,
        limit=limit,
        timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
        say=say,
    )
    obj["rows"] = got.rows or None
    if got.dropped:
        obj["dropped"] = got.dropped
    if as_of is not None:
        obj["as_of"] = format_rfc3339(cut)
    return Answer(obj, floats=True)
