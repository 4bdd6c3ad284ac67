"""The projection read from the model's rows: a :class:`ProjectionView` without the log.

Everything a read asks for is fetched when asked: an element's row, the rows of the
decisions shaping it, the heads. The NetworkX graph, which only the explorer,
the report and recall walk whole, is built from the model on first use.
"""

from __future__ import annotations

import marshal
import sqlite3
from array import array
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kgai_tui.core.model.graph_log import stored_graph
from kgai_tui.core.model.rows import (
    DecColumn,
    DecRows,
    ElementField,
    ElRows,
    ModelCorruptError,
    field,
    storable,
)
from kgai_tui.core.replay.link_graph import LinkGraph

if TYPE_CHECKING:
    import networkx as nx

    from kgai_tui.core.model.people_rows import HeadCounts, PersonTotals
    from kgai_tui.core.model.timeline_rows import Columns
    from kgai_tui.core.recall.index import RecallIndex
    from kgai_tui.core.replay.projection_view import Field

__all__ = ["DiskProjection", "as_networkx", "read_meta"]


def read_meta(db: sqlite3.Connection, key: str) -> Any:
    """One value of the ``meta`` table, decoded."""
    hit = db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
    if hit is None or not isinstance(hit[0], bytes):
        raise ModelCorruptError(f"meta {key} is missing")
    try:
        return marshal.loads(hit[0])
    except (ValueError, EOFError, TypeError) as exc:
        raise ModelCorruptError(f"meta {key} does not decode") from exc


def as_networkx(links: LinkGraph) -> nx.MultiDiGraph[str]:
    """``links`` as a NetworkX graph, every order kept (node, successor and
    predecessor orders: what iteration over nodes, edges and in-edges gives).

    :class:`~kgai_tui.core.replay.link_graph.LinkGraph` keeps NetworkX's own
    dictionaries; they are handed to a NetworkX graph through the attributes
    NetworkX lets one set.
    """
    import networkx as nx

    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    # setattr: through NetworkX's descriptors (``_succ`` sets ``_adj`` too).
    setattr(graph, "_node", links._node)  # noqa: B010 - not in the type stubs
    setattr(graph, "_succ", links._succ)  # noqa: B010
    setattr(graph, "_pred", links._pred)  # noqa: B010
    return graph


class DiskProjection:
    """A read-only projection over an open model connection (one read's snapshot)."""

    def __init__(self, db: sqlite3.Connection, model: Path) -> None:
        """Read the small parts now (counts, conflicts); rows later, when asked.

        ``model`` is the model file (its recall files are beside it).
        """
        self.db = db
        self._model = model
        counts = read_meta(db, "counts")
        self.applied_count: int = counts["applied"]
        self._elements: int = counts["elements"]
        self._decs = DecRows(db, counts["decisions"])
        self._els = ElRows(db)
        self.el_shapes = ElementField(self._els, 5, counts["shapes_seq"])
        self.heads = ElementField(self._els, 7, counts["heads_seq"])
        self.contested: AbstractSet[str] = frozenset(read_meta(db, "contested"))
        self._graph: nx.MultiDiGraph[str] | None = None
        self._names: list[tuple[str, str, str]] | None = None
        self._props_with: dict[str, list[tuple[str, str]]] = {}
        self._unknown: list[tuple[str, str]] | None = None
        self._index: dict[str, int] = {}
        self._max_auth: dict[str, int] | None = None
        self._times: array[int] | None = None
        self._timeline: Columns | None = None
        col = self._decs.column
        self.dec_id: DecColumn = col("id")
        self.dec_title = col("title")
        self.dec_rationale = col("rationale")
        self.dec_author = col("author")
        self.dec_refs = col("refs")
        self.dec_summary = col("summary")
        self.dec_time = col("time")
        self.dec_lamport = col("lamport")
        self.dec_install = col("install")
        self.dec_hash = col("hash")
        self.dec_shapes = col("shapes")
        self.dec_supersedes = col("supersedes")
        self.dec_superseded_by = col("superseded_by")

    # ------------------------------------------------------------------ the graph

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The element graph (NetworkX), built from the model on first use."""
        if self._graph is None:
            stored = stored_graph(self.db, read_meta(self.db, "graph"))
            self._graph = as_networkx(stored)
            if self._graph.number_of_nodes() != self._elements:
                raise ModelCorruptError("the graph and the element count differ")
        return self._graph

    def element(self, eid: str) -> tuple[str, str, str] | None:
        """Return ``(kind, name, props_blob)`` of an element, or ``None``."""
        row = self._els.get(eid)
        return None if row is None else (row[1], row[2], row[3])

    def has_element(self, eid: str) -> bool:
        """Whether ``eid`` is an element (one row, no graph)."""
        return self._els.get(eid) is not None

    def element_count(self) -> int:
        """How many elements there are."""
        return self._elements

    # ------------------------------------------------------------------ decisions

    @property
    def dec_index(self) -> Mapping[str, int]:
        """Decision id to index, one lookup per id asked."""
        return _DecIndex(self)

    def lookup(self, dec_id: str) -> int | None:
        """The index of a decision id, or ``None``."""
        if dec_id in self._index:
            return self._index[dec_id]
        found = self._decs.find(dec_id)
        if found is not None:
            self._index[dec_id] = found
        return found

    def prefetch(self, indices: Iterable[int]) -> None:
        """Fetch many decision rows in a few queries (before reading them one by one)."""
        self._decs.prefetch(indices)

    def decision_fields(
        self, indices: Sequence[int], names: Sequence[Field]
    ) -> list[tuple[Any, ...]]:
        """The fields ``names`` of the decisions at ``indices``, a block of rows
        per query, none kept (see :meth:`DecRows.fields`)."""
        return self._decs.fields(indices, names)

    @property
    def unknown_ops(self) -> Sequence[tuple[str, str]]:
        """``(event hash, op)`` of every mutation with an unknown op."""
        if self._unknown is None:
            self._unknown = [
                (str(h), str(op)) for h, op in read_meta(self.db, "unknown_ops")
            ]
        return self._unknown

    def head_order(self, indices: Iterable[int]) -> list[int]:
        """Order decision indices newest first: lamport descending, then id."""
        chosen = list(indices)
        self._decs.prefetch(chosen)
        lam, ids = self.dec_lamport, self.dec_id
        return sorted(chosen, key=lambda i: (-lam[i], ids[i]))

    def heads_of(self, eid: str) -> list[int]:
        """Return the heads of an element, newest first."""
        row = self._els.get(eid)
        if row is None or row[7] is None:
            return []
        return self.head_order(field(row, 7))

    def max_authority_lamport(self, eid: str) -> int:
        """Return the largest lamport of a decision with authority on the element.

        Recall asks for every element it keeps: the column is read once, whole
        (one query over the element rows, not one per element).
        """
        if self._max_auth is None:
            self._max_auth = dict(self.db.execute("SELECT id, max_auth FROM el"))
        return int(self._max_auth.get(eid, 0))

    # ------------------------------------------------------------------ recall

    def recall_index(self) -> RecallIndex:
        """The recall index of this snapshot, from the model's array files."""
        from kgai_tui.core.model.recall_delta import stored_delta
        from kgai_tui.core.model.recall_store import load_recall

        return load_recall(
            self._model,
            self,
            read_meta(self.db, "recall"),
            stored_delta(self.db),
        )

    def element_names(self) -> list[tuple[str, str, str]]:
        """``(id, kind, name)`` of every element: one query, no graph. Kept: the
        snapshot never changes, and the explorer asks again each time the slider
        comes back to now (10k rows, ~10 ms at 1M)."""
        if self._names is None:
            rows = self.db.execute("SELECT id, kind, name FROM el")
            self._names = [(str(e), str(k), str(n)) for e, k, n in rows]
        return self._names

    def element_props_with(self, key: str) -> list[tuple[str, str]]:
        """``(id, props blob)`` of the elements whose props may set ``key``: one
        query (``instr`` on the blob), no graph; kept as :meth:`element_names`."""
        found = self._props_with.get(key)
        if found is None:
            rows = self.db.execute(
                "SELECT id, props FROM el WHERE instr(props, ?) > 0", (key + "=",)
            )
            found = self._props_with[key] = [(str(e), str(b)) for e, b in rows]
        return found

    def out_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, to)`` of every link from ``eid`` (any order)."""
        if not storable(eid):
            return []
        rows = self.db.execute("SELECT key, dst FROM link WHERE src = ?", (eid,))
        return [(str(k), str(t)) for k, t in rows]

    def in_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, from)`` of every link to ``eid`` (any order)."""
        if not storable(eid):
            return []
        rows = self.db.execute("SELECT key, src FROM link WHERE dst = ?", (eid,))
        return [(str(k), str(f)) for k, f in rows]

    def people_parts(self) -> tuple[list[PersonTotals], list[HeadCounts]]:
        """Per-author totals and head counts: what ``people`` (now) needs, in a few
        queries instead of a pass over every decision
        (:mod:`kgai_tui.core.model.people_rows`)."""
        from kgai_tui.core.model.people_rows import people_parts

        return people_parts(self.db, self.contested)

    def recorded_count(self) -> int:
        """How many decisions were recorded (not only referred to): the people
        totals add up to it, so no decision row is read."""
        hit = self.db.execute("SELECT total(decisions) FROM person").fetchone()
        return int(hit[0])

    def writer_count(self) -> int:
        """How many writers (install ids) recorded a decision, from the people
        tables (a stub has no install id and is in none)."""
        hit = self.db.execute(
            "SELECT count(DISTINCT install) FROM person_writer"
            " WHERE install != '' AND n > 0"
        ).fetchone()
        return int(hit[0])

    def author_days(self) -> list[tuple[str, int, int]]:
        """``(author, UTC day, decisions)`` of the recorded decisions with a time,
        in one grouped query (floor division, also before 1970): a walk over a
        million decision rows took the People view 3 s."""
        return [
            (str(author), int(day), int(n))
            for author, day, n in self.db.execute(
                "SELECT author, time / 86400 - (time % 86400 < 0), count(*)"
                " FROM dec WHERE hash != '' AND time IS NOT NULL GROUP BY 1, 2"
            )
        ]

    def shaped_by(self, author: str) -> list[str]:
        """The ids of the elements ``author``'s recorded decisions shape, from the
        per-author counts (one indexed range, not a pass over every decision)."""
        return [
            str(eid)
            for (eid,) in self.db.execute(
                "SELECT eid FROM person_el WHERE author = ? AND n > 0", (author,)
            )
        ]

    def superseders(self) -> list[tuple[str, str, int]]:
        """``(author, superseding author, decisions)``: of each author's recorded
        decisions in force nowhere (no ``head`` row) and replaced, how many each
        other author's decisions replaced; one grouped query (a walk over a
        million decision rows took the People view 32 s)."""
        return [
            (str(a), str(b), int(n))
            for a, b, n in self.db.execute(
                "SELECT d.author, s.author, count(DISTINCT d.ix)"
                " FROM dec d, json_each(d.superseded_by) j JOIN dec s ON s.ix = j.value"
                " WHERE d.hash != '' AND d.ix NOT IN (SELECT ix FROM head)"
                " GROUP BY 1, 2"
            )
        ]

    def report_timeline(
        self, last: int
    ) -> tuple[int, list[int], int | None, dict[int, int]]:
        """What the report reads of every decision, in a few queries: how many were
        recorded (not placeholders), the last ``last`` in history order (time, none
        last, then lamport, then id), the newest with a time, and how many were
        recorded per UTC day (floor division, also before 1970).

        See :class:`kgai_tui.core.report.report.Timeline`.
        """
        # Two passes over the decision rows: one groups them by day (the untimed
        # in a group of their own), one keeps the newest ``last`` (and, after the
        # untimed ones, which sort last, the newest with a time).
        db, recorded = self.db, "FROM dec WHERE hash != ''"
        days: dict[int, int] = {}
        untimed = 0
        for day, n in db.execute(
            f"SELECT time / 86400 - (time % 86400 < 0), count(*) {recorded} GROUP BY 1"
        ):
            if day is None:
                untimed = int(n)
            else:
                days[int(day)] = int(n)
        count = untimed + sum(days.values())
        newest = [
            (int(ix), time)
            for ix, time in db.execute(
                f"SELECT ix, time {recorded} ORDER BY (time IS NULL) DESC,"
                " coalesce(time, 0) DESC, lamport DESC, id DESC LIMIT ?",
                (max(last, untimed + 1),),
            )
        ]
        story = [ix for ix, _ in newest[: max(last, 0)]][::-1]
        latest = next((ix for ix, time in newest if time is not None), None)
        return count, story, latest, days

    def timeline_columns(
        self,
    ) -> tuple[array[int], frozenset[int], list[str], list[str], list[str]]:
        """The explorer timeline's order, heads and filter choices, streamed from
        SQLite with no decision row kept (:mod:`kgai_tui.core.model.timeline_rows`);
        the times stay here for :meth:`timeline_stamps`."""
        from kgai_tui.core.model.timeline_rows import timeline_columns

        if self._timeline is None:  # kept: the slider's every moment cuts it down
            self._timeline = timeline_columns(self.db, self._decs.base)
        order, self._times, heads, writers, authors, kinds = self._timeline
        return order, heads, writers, authors, kinds

    def timeline_keep(
        self,
        order: Sequence[int],
        heads: frozenset[int],
        filters: tuple[str | None, str | None, str | None, str | None],
    ) -> array[int]:
        """The decisions of ``order`` by writer, author, element kind and status."""
        from kgai_tui.core.model.timeline_rows import timeline_keep

        return timeline_keep(self.db, self._decs.base, order, heads, filters)

    def timeline_stamps(self, rows: Iterable[int]) -> array[int]:
        """The recorded times of ``rows`` (after :meth:`timeline_columns`), skipping
        those with none: ascending, as rows in timeline order are."""
        from kgai_tui.core.model.timeline_rows import stamps_of

        if self._times is None:
            self.timeline_columns()
        assert self._times is not None
        return stamps_of(self._times, rows)

    @property
    def stored(self) -> DiskProjection:
        """Its own tables answer the whole-store passes
        (:class:`~kgai_tui.core.reads.store.StoredReads`)."""
        return self

    @property
    def timeline_reads(self) -> DiskProjection:
        """Its own tables answer the timeline
        (:class:`~kgai_tui.core.reads.store.TimelineReads`)."""
        return self

    def all_heads(self) -> list[tuple[str, set[int]]]:
        """Every element's heads (``heads.items()``), their rows fetched in batches."""
        items = cast("list[tuple[str, set[int]]]", self.heads.items())
        self._decs.prefetch(i for _, h in items for i in h)
        return items


class _DecIndex(Mapping[str, int]):
    """``dec_index`` of a :class:`DiskProjection`: lookups only, by SQL."""

    def __init__(self, p: DiskProjection) -> None:
        self._p = p

    def __getitem__(self, dec_id: str) -> int:
        found = self._p.lookup(dec_id)
        if found is None:
            raise KeyError(dec_id)
        return found

    def __contains__(self, dec_id: object) -> bool:
        return isinstance(dec_id, str) and self._p.lookup(dec_id) is not None

    def __iter__(self) -> Any:
        return iter(self._p.dec_id)

    def __len__(self) -> int:
        return len(self._p.dec_id)
