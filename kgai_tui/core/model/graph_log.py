"""The model's element graph: a stored state plus a log of what updates did to it.

The graph's state (``meta`` ``graph``: every node, successor and predecessor in
NetworkX's orders, :func:`~kgai_tui.core.model.build.graph_state`) is one value, 18 MB
at 10M decisions. An update that adds a link or an element used to read it whole,
replay on it and write it whole again: ~1.2 s of a 1,000-event append at 10M,
whatever the append touched. Now an update appends the operations its replay did
(added nodes and edges, removed edges, then the final attributes of every node whose
attributes changed) as one ``graph_op`` row, and a reader replays those rows on the
stored state. Orders depend only on the state and the sequence of operations, so
the graph a reader gets is the one the replay left (``tests/core/test_model.py``
compares every order with a whole replay after appends in any split).

When the log grows past :func:`log_is_long`, the graph is loaded whole and the
state written again with an empty log: a reader never replays more than an eighth
of the graph's size (and a floor) in operations. A command-line read leaves that
fold to a detached process once it has answered (:mod:`~kgai_tui.core.model.tidy`).
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Iterable
from typing import Any, Final

from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.replay.link_graph import LinkGraph, link_graph_from_state

__all__ = [
    "Op",
    "apply_ops",
    "clear_log",
    "log_is_long",
    "log_ops",
    "logged_count",
    "stored_graph",
]

#: ``("node", n, attrs)``, ``("edge", u, v, key, attrs)``, ``("remove", u, v, key)``
#: or ``("attrs", n, attrs)``: what the replay did, in the order it did it.
Op = tuple[Any, ...]

#: Operations a reader may have to replay, beyond an eighth of the elements: below
#: it the log costs a reader less than a tenth of loading the state.
_LOG_FLOOR: Final = 1024


def apply_ops(graph: LinkGraph, ops: Iterable[Op]) -> None:
    """Replay logged operations on ``graph`` (the stored state, or one already
    carrying earlier operations).

    Raises:
        ModelCorruptError: an operation that does not fit the graph (an edge to
            remove that is absent, attributes of a missing node, an unknown kind).
    """
    try:
        for op in ops:
            kind = op[0]
            if kind == "node":
                graph.add_node(op[1], **op[2])
            elif kind == "edge":
                graph.add_edge(op[1], op[2], op[3], **op[4])
            elif kind == "remove":
                graph.remove_edge(op[1], op[2], op[3])
            elif kind == "attrs":
                graph.nodes[op[1]].update(op[2])
            else:
                raise ModelCorruptError(f"unknown graph operation {kind!r}")
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ModelCorruptError("the graph's log does not fit its state") from exc


def stored_graph(db: sqlite3.Connection, state: Any) -> LinkGraph:
    """The element graph as the model holds it: ``state`` (``meta`` ``graph``),
    then the log replayed."""
    graph = link_graph_from_state(state)
    for (blob,) in db.execute("SELECT v FROM graph_op ORDER BY n"):
        try:
            ops = marshal.loads(blob)
        except (ValueError, EOFError, TypeError) as exc:
            raise ModelCorruptError("a graph log row does not decode") from exc
        apply_ops(graph, ops)
    return graph


def logged_count(db: sqlite3.Connection) -> int:
    """How many operations the log holds."""
    return int(db.execute("SELECT coalesce(sum(ops), 0) FROM graph_op").fetchone()[0])


def log_is_long(logged: int, elements: int) -> bool:
    """Whether a log of ``logged`` operations should be folded into the state."""
    return logged > elements // 8 + _LOG_FLOOR


def log_ops(db: sqlite3.Connection, ops: list[Op]) -> None:
    """Append one update's operations (inside the update's transaction)."""
    if ops:
        db.execute(
            "INSERT INTO graph_op (ops, v) VALUES (?, ?)",
            (len(ops), marshal.dumps(ops)),
        )


def clear_log(db: sqlite3.Connection) -> None:
    """Empty the log (the state was just written with every operation in it)."""
    db.execute("DELETE FROM graph_op")
