"""The export's rows read straight from the model's tables (no replay, no graph).

Three table scans: elements with the decisions shaping them, links, and the
decision columns the export prints. Rows come in storage order; the export sorts
them (:func:`kgai_tui.core.reads.export.parts_of`); the model layer does not
import the reads, so the rows travel as a plain tuple.
"""

from __future__ import annotations

import sqlite3

import orjson

from kgai_tui.core.model.rows import ModelCorruptError

__all__ = ["ModelExportRows", "model_rows"]

#: Elements (id, kind, name, props), links (from, kind, to), decisions (id, lamport,
#: title) and shapes (decision id, element id, authority): the fields of
#: :class:`kgai_tui.core.reads.export.ExportRows`, which the answer builds from them.
ModelExportRows = tuple[
    list[tuple[str, str, str, str]],
    list[tuple[str, str, str]],
    list[tuple[str, int, str]],
    list[tuple[str, str, bool]],
]


def model_rows(db: sqlite3.Connection, decisions: int) -> ModelExportRows:
    """The export rows of the model open on ``db`` (holding ``decisions`` rows).

    Raises:
        ModelCorruptError: decision rows are missing, or a shapes list is malformed.
    """
    decs: list[tuple[str, int, str]] = db.execute(
        "SELECT id, lamport, title FROM dec ORDER BY ix"
    ).fetchall()
    low, high = db.execute("SELECT min(ix), max(ix) FROM dec").fetchone()
    # Unique indices from 0 to n - 1, n of them: every row, and in index order.
    if len(decs) != decisions or (decs and (low, high) != (0, decisions - 1)):
        raise ModelCorruptError("decision rows are missing")
    ids = [row[0] for row in decs]
    elements: list[tuple[str, str, str, str]] = []
    shapes: list[tuple[str, str, bool]] = []
    # In id order (the table's key), so that the export's sort by element is a pass.
    for eid, kind, name, props, shaped in db.execute(
        "SELECT id, kind, name, props, shapes FROM el ORDER BY id"
    ):
        elements.append((eid, kind, name, props))
        if shaped is None:
            continue
        try:
            pairs = orjson.loads(shaped)
            got = [(ids[i], eid, bool(auth)) for i, auth in pairs if i >= 0]
        except (orjson.JSONDecodeError, IndexError, TypeError, ValueError) as exc:
            raise ModelCorruptError(f"the shapes of {eid!r} do not decode") from exc
        if type(pairs) is not list or len(got) != len(pairs):
            raise ModelCorruptError(f"the shapes of {eid!r} name no decision")
        shapes.extend(got)
    links = [(f, k, t) for f, t, k in db.execute("SELECT src, dst, key FROM link")]
    return elements, links, decs, shapes
