"""The queryable graph: kg's schema in an embedded ladybug database (the maintained
fork of Kuzu, which the reference runs), built from a projection.

kg builds its graph statement by statement as it replays; the rows are the same
as the projection's, so this copies them in bulk (CSV files, ``COPY``), in the
order kg creates them: elements and decisions in replay creation order (the
projection's graph order and decision indices), so go-kuzu's internal ids
(``Offset``) come out as kg's; the tables in kg's DDL order (``TableID``). The
``_Applied`` table is created, empty: kg keeps its event hashes there, which no
read of ours needs.

A decision stub (a superseded id created before its own event, which kg then
leaves as it is) is what kg's bulk loader writes, the path every store of 1,000
events or more takes and the one the projection and ``export`` follow (spec 3.5):
``''`` text, lamport 0, a NULL ``recorded_at``. An element stub has ``''`` kind,
name and props.
``recorded_at`` is whole seconds (the projection keeps Unix seconds; kg keeps the
fraction, which its RFC3339 output drops); an unparsable time is Go's zero time.
"""

from __future__ import annotations

import csv
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.gosem.gotext import format_epoch

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["DDL", "build_graph"]

DDL: Final = (
    "CREATE NODE TABLE Element(id STRING, kind STRING, name STRING, props STRING, "
    "PRIMARY KEY(id))",
    "CREATE NODE TABLE Decision(id STRING, title STRING, rationale STRING, "
    "author STRING, refs STRING, summary STRING, recorded_at TIMESTAMP, "
    "lamport INT64, install_id STRING, event_hash STRING, PRIMARY KEY(id))",
    "CREATE NODE TABLE _Applied(hash STRING, PRIMARY KEY(hash))",
    "CREATE REL TABLE LINK(FROM Element TO Element, kind STRING, created_by STRING)",
    "CREATE REL TABLE SHAPES(FROM Decision TO Element, authority BOOLEAN)",
    "CREATE REL TABLE SUPERSEDES(FROM Decision TO Decision)",
)

_ZERO: Final = "0001-01-01 00:00:00"
#: Unix seconds of 0001-01-01T00:00:00Z.
_YEAR_ONE: Final = -62_135_596_800
#: Memory the builder's database may use for its pages (ladybug's default is most
#: of the machine's memory).
BUFFER_POOL: Final = 512 * 1024 * 1024


class _Rows:
    """CSV rows as ladybug reads them (``ESCAPE='"'``): text quoted (a quoted
    empty cell is ``''``), numbers and booleans bare, a bare empty cell NULL."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("w", encoding="utf-8", errors="replace", newline="")
        self.row = csv.writer(
            self._file, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n"
        ).writerow

    def line(self, text: str) -> None:
        """Write one row already in CSV form."""
        self._file.write(text + "\n")

    def close(self) -> None:
        self._file.close()


def _clean(text: str) -> str:
    """Text ladybug stores: a lone surrogate (from a JSON escape) becomes U+FFFD,
    as a Go string holds it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def _when(stamp: int | None) -> str:
    """A recorded time as ladybug reads it. Go accepts year 0; ladybug stores it
    as 1 BC, and its Python binding crashes the process reading it back
    (measured): a time before year 1 is stored as Go's zero time."""
    if stamp is None or stamp < _YEAR_ONE:
        return _ZERO
    return format_epoch(stamp)[:-1].replace("T", " ")


def _decisions(p: ProjectionView) -> Iterator[tuple[Any, ...]]:
    """Decision rows in index order: ``zip`` over the columns streams a model's
    rows (one cursor per column) instead of holding them."""
    from kgai_tui.core.model.build import plain_columns

    return zip(*plain_columns(p), strict=True)


def write_rows(p: ProjectionView, into: Path) -> dict[str, int]:
    """Write the five tables' CSV files into ``into``; return their row counts."""
    counts = dict.fromkeys(("Element", "Decision", "LINK", "SHAPES", "SUPERSEDES"), 0)
    out = _Rows(into / "Element.csv")
    for eid in p.graph.nodes:
        kind, name, props = p.element(eid) or ("", "", "")
        out.row((_clean(eid), _clean(kind), _clean(name), _clean(props)))
        counts["Element"] += 1
    out.close()
    out = _Rows(into / "Decision.csv")
    ids: list[str] = []
    for did, title, rat, author, refs, summary, stamp, lam, inst, ehash in _decisions(
        p
    ):
        ids.append(_clean(did))
        if not ehash:  # a stub, as kg's bulk loader writes it
            quoted = '"' + ids[-1].replace('"', '""') + '"'
            out.line(quoted + ',"","","","","",,0,"",""')
        else:
            out.row(
                (
                    ids[-1], _clean(title), _clean(rat), _clean(author),
                    _clean(refs), _clean(summary), _when(stamp), lam,
                    _clean(inst), ehash,
                )
            )  # fmt: skip
        counts["Decision"] += 1
    out.close()
    out = _Rows(into / "LINK.csv")
    for src, dst, kind, data in p.graph.edges(keys=True, data=True):
        out.row(
            (_clean(src), _clean(dst), _clean(kind), _clean(data.get("created_by", "")))
        )
        counts["LINK"] += 1
    out.close()
    out = _Rows(into / "SHAPES.csv")
    for eid, shaped in p.el_shapes.items():
        for i, authority in shaped.items():
            out.row((ids[i], _clean(eid), bool(authority)))
            counts["SHAPES"] += 1
    out.close()
    out = _Rows(into / "SUPERSEDES.csv")
    for i, older in enumerate(p.dec_supersedes):
        for j in older:
            out.row((ids[i], ids[j]))
            counts["SUPERSEDES"] += 1
    out.close()
    return counts


def build_graph(p: ProjectionView, target: Path | None) -> Any:
    """A ladybug database holding ``p`` as kg's graph, at ``target`` (a new file)
    or in memory (None); returns it open for writing (close it to checkpoint).

    The CSV files go to a temporary directory beside ``target`` (the system's for
    a database in memory) and are removed.
    """
    import ladybug

    scratch = Path(
        tempfile.mkdtemp(
            prefix="kgai-graph-", dir=None if target is None else target.parent
        )
    )
    try:
        counts = write_rows(p, scratch)
        # One thread: with more, COPY numbers the rows (go-kuzu's ID.Offset, which
        # a query returning a node prints) in the order its threads finish, which
        # differs from machine to machine and from run to run; with one, in the
        # order of the files: replay order.
        db = ladybug.Database(
            None if target is None else str(target),
            buffer_pool_size=BUFFER_POOL,
            max_num_threads=1,
        )
        conn = ladybug.Connection(db)
        for ddl in DDL:
            conn.execute(ddl)
        for table in ("Element", "Decision", "LINK", "SHAPES", "SUPERSEDES"):
            if counts[table]:
                path = str(scratch / f"{table}.csv").replace("'", "''")
                conn.execute(
                    f"COPY {table} FROM '{path}' "
                    "(HEADER=false, PARALLEL=false, ESCAPE='\"')"
                )
        conn.close()
        return db
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
