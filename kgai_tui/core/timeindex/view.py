"""The store as of one cut, read from a time index: :class:`AsOfView`.

An :class:`AsOfView` satisfies :class:`~kgai_tui.core.replay.projection_view.ProjectionView`.
Each member is built on first use and kept. Decisions are numbered in the index's
creation order restricted to those that exist at the cut (a fresh replay may number
them differently; no output depends on the numbering).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, TypeVar

import networkx as nx

from kgai_tui.core.heap import GcPaused as gc_paused
from kgai_tui.core.replay.acyclic_graph import AcyclicGraph
from kgai_tui.core.replay.projection_view import (
    Field,
    GraphReads,
    column_fields,
    element_of,
    newest_first,
)
from kgai_tui.core.timeindex.keys import Carry
from kgai_tui.core.timeindex.lazy import Column, LazySeq, NodeAttrs
from kgai_tui.core.timeindex.queries import (
    decision_at,
    edges_at,
    links_at,
    nodes_at,
    props_at,
    shapers_at,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from kgai_tui.core.reads.store import TimelineReads
    from kgai_tui.core.timeindex.columns import IndexColumns
    from kgai_tui.core.timeindex.counts import CutCounts
    from kgai_tui.core.timeindex.tables import IndexTables

T = TypeVar("T")

#: A decision field at the cut, from its fields then (``None``: a stub) and shapes.
_PICK: dict[str, Callable[[Carry | None, list[str]], Any]] = {
    "title": lambda f, _: "" if f is None else f[2],
    "rationale": lambda f, _: "" if f is None else f[3],
    "author": lambda f, _: "" if f is None else f[4],
    "lamport": lambda f, _: 0 if f is None else f[7],
    "time": lambda f, _: None if f is None else f[10],
    "shapes": lambda _, s: s,
}


class _Numbering:
    """View indices of the decisions that exist at a cut, and the reads by them.

    The view's lazy members hold this, never the view: a member pointing back at
    the view would make every view cyclic garbage, kept until a full collection
    (and for ever once a big process froze it), ~12 MB a slider step at 1M.
    """

    __slots__ = ("cut", "ix", "k", "size", "strays", "vmap")

    def __init__(self, ix: IndexTables, cut: int) -> None:
        exist = ix.d_exist
        n = len(exist)
        k = bisect_right(ix.prefmax, cut)
        strays: list[int] = []
        g, sufmin = k, ix.sufmin
        while g < n and sufmin[g] <= cut:
            if exist[g] <= cut:
                strays.append(g)
            g += 1
        self.ix, self.cut, self.k, self.strays = ix, cut, k, strays
        self.vmap = {g: k + i for i, g in enumerate(strays)}
        self.size = k + len(strays)

    def v_of(self, g: int) -> int:
        """The view index of a global decision index that exists at the cut."""
        return g if g < self.k else self.vmap[g]

    def g_of(self, v: int) -> int:
        """The global decision index of a view index."""
        return v if v < self.k else self.strays[v - self.k]

    def vs_of(self, gs: NDArray[np.int64]) -> NDArray[np.int64]:
        """:meth:`v_of` of many (the same array when no decision sorts late)."""
        if not self.strays:
            return gs
        import numpy as np  # a diff's: numpy is loaded already

        out = gs.copy()
        late = np.flatnonzero(gs >= self.k)
        out[late] = [self.vmap[g] for g in gs[late].tolist()]
        return out

    def gs_of(self, vs: Sequence[int]) -> list[int]:
        """:meth:`g_of` of many."""
        if not self.strays:
            return list(vs)
        g_of = self.g_of
        return [g_of(v) for v in vs]

    def index_of(self, dec_id: str) -> int | None:
        """The view index of a decision id, or ``None`` when it does not exist yet."""
        g = self.ix.d_index.get(dec_id)
        if g is None or g >= len(self.ix.d_exist) or self.ix.d_exist[g] > self.cut:
            return None
        return self.v_of(g)

    def shapers(self, eid: str) -> dict[int, bool]:
        """Decision index to authority on ``eid`` at the cut, in creation order."""
        found = shapers_at(self.ix, self.cut, eid)
        return {self.v_of(g): auth for _, g, auth in found}

    def supersedes(self, v: int) -> list[int]:
        """What decision ``v`` supersedes at the cut, in edge creation order."""
        first = self.ix.d_out[self.g_of(v)]
        return [self.v_of(g) for g in edges_at(self.ix, self.cut, first, True)]

    def superseded_by(self, v: int) -> list[int]:
        """What supersedes decision ``v`` at the cut, in edge creation order."""
        first = self.ix.d_in[self.g_of(v)]
        return [self.v_of(g) for g in edges_at(self.ix, self.cut, first, False)]


class _DecIndex(Mapping[str, int]):
    """Decision id to view index, for the decisions that exist at the cut."""

    def __init__(self, num: _Numbering, ids: Sequence[str]) -> None:
        self._num = num
        self._ids = ids

    def __getitem__(self, key: str) -> int:
        v = self._num.index_of(key)
        if v is None:
            raise KeyError(key)
        return v

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._num.index_of(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return self._num.size


class _ElShapes(Mapping[str, Mapping[int, bool]]):
    """Per element: decision index to authority at the cut, in creation order."""

    def __init__(self, num: _Numbering) -> None:
        self._num = num
        self._cache: dict[str, dict[int, bool]] = {}

    def __getitem__(self, eid: str) -> Mapping[int, bool]:
        got = self._cache.get(eid)
        if got is None:
            got = self._cache[eid] = self._num.shapers(eid)
        if not got:
            raise KeyError(eid)
        return got

    def __contains__(self, eid: object) -> bool:
        if not isinstance(eid, str):
            return False
        try:
            self[eid]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return (e for e in self._num.ix.pairs if e in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class AsOfView(GraphReads):
    """The graph and decision plane as a replay of the events up to ``cut`` gives."""

    def __init__(
        self,
        ix: IndexTables,
        cut: int,
        columns: Callable[[], IndexColumns],
        counts: Callable[[], CutCounts],
    ) -> None:
        """Locate the decisions that exist at ``cut`` (Unix seconds).

        ``columns`` returns the index's current columns (for :meth:`as_of_parts`),
        ``counts`` its header counts (:meth:`recorded_count`, :meth:`writer_count`).
        """
        self.ix = ix
        self.cut = cut
        self._columns = columns
        #: The index's header counts (built once per index version).
        self.counts = counts
        #: The view numbering of the decisions that exist at the cut.
        self.num = _Numbering(ix, cut)
        self.size = self.num.size
        exist, stable = ix.d_exist, ix.d_stable
        #: The decisions whose fields at the cut are not their final ones: index
        #: decision to (fields, ``None`` for a stub then; shapes).
        self.patched: dict[int, tuple[Carry | None, list[str]]] = {
            g: self._decision_at(g)
            for g in ix.exceptions
            if exist[g] <= cut < stable[g]
        }

    # ------------------------------------------------------------------ numbering

    def prefetch(self, indices: Iterable[int]) -> None:
        """Fetch these decisions' rows together when the index reads them from
        the read model (each would be a query of its own)."""
        shared = self.ix.shared
        if shared is not None:
            shared.prefetch(self.num.gs_of(list(indices)))

    def decision_fields(
        self, indices: Sequence[int], names: Sequence[Field]
    ) -> list[tuple[Any, ...]]:
        """The fields ``names`` of the decisions at ``indices``: from the read
        model's rows in a few queries when the index shares them, else from the
        columns; the fields a decision had at the cut win."""
        shared = self.ix.shared
        if shared is None:
            return column_fields(self, indices, names)
        gs = self.num.gs_of(indices)
        got = shared.decision_fields(gs, names)
        patched = self.patched
        if patched:
            for at, g in enumerate(gs):
                if g in patched:
                    fields, shapes = patched[g]
                    got[at] = tuple(
                        self.ix.d_id[g] if n == "id" else _PICK[n](fields, shapes)
                        for n in names
                    )
        return got

    def v_of(self, g: int) -> int:
        """The view index of a global decision index that exists at the cut."""
        return self.num.v_of(g)

    def g_of(self, v: int) -> int:
        """The global decision index of a view index."""
        return self.num.g_of(v)

    def vs_of(self, gs: NDArray[np.int64]) -> NDArray[np.int64]:
        """The view indices of many global decision indices that exist at the cut."""
        return self.num.vs_of(gs)

    def index_of(self, dec_id: str) -> int | None:
        """The view index of a decision id, or ``None`` when it does not exist yet."""
        return self.num.index_of(dec_id)

    # ------------------------------------------------------------------ decisions

    def _decision_at(self, g: int) -> tuple[Carry | None, list[str]]:
        """Fields (``None`` for a stub) and shapes of a decision at the cut."""
        return decision_at(self.ix, self.cut, g)

    def _column(
        self, base: Sequence[T], pick: Callable[[Carry | None, list[str]], T]
    ) -> Column[T]:
        num = self.num
        k = num.k
        extra = [base[g] for g in num.strays]
        patch: dict[int, T] = {}
        for g, (fields, shapes) in self.patched.items():
            value = pick(fields, shapes)
            if g < k:
                patch[g] = value
            else:
                extra[num.vmap[g] - k] = value
        return Column(base, k, extra, patch)

    @cached_property
    def dec_id(self) -> Column[str]:
        """Decision ids by view index."""
        return Column(
            self.ix.d_id, self.num.k, [self.ix.d_id[g] for g in self.num.strays], {}
        )

    @cached_property
    def dec_index(self) -> Mapping[str, int]:
        """Decision id to view index."""
        return _DecIndex(self.num, self.dec_id)

    @cached_property
    def dec_title(self) -> Column[str]:
        """Titles."""
        return self._column(self.ix.d_title, _PICK["title"])

    @cached_property
    def dec_rationale(self) -> Column[str]:
        """Rationales."""
        return self._column(self.ix.d_rationale, _PICK["rationale"])

    @cached_property
    def dec_author(self) -> Column[str]:
        """Authors."""
        return self._column(self.ix.d_author, _PICK["author"])

    @cached_property
    def dec_refs(self) -> Column[str]:
        """Refs."""
        return self._column(self.ix.d_refs, lambda f, _: "" if f is None else f[5])

    @cached_property
    def dec_summary(self) -> Column[str]:
        """Summaries."""
        return self._column(self.ix.d_summary, lambda f, _: "" if f is None else f[6])

    @cached_property
    def dec_lamport(self) -> Column[int]:
        """Lamport clocks."""
        return self._column(self.ix.d_lamport, _PICK["lamport"])

    @cached_property
    def dec_install(self) -> Column[str]:
        """Install ids."""
        return self._column(self.ix.d_install, lambda f, _: "" if f is None else f[8])

    @cached_property
    def dec_hash(self) -> Column[str]:
        """Event hashes."""
        return self._column(self.ix.d_hash, lambda f, _: "" if f is None else f[9])

    @cached_property
    def dec_time(self) -> Column[int | None]:
        """Recorded times."""
        return self._column(self.ix.d_time, _PICK["time"])

    @cached_property
    def dec_shapes(self) -> Column[Sequence[str]]:
        """Shaped element ids, in SHAPES creation order."""
        return self._column(self.ix.d_shapes, _PICK["shapes"])

    @cached_property
    def dec_supersedes(self) -> Sequence[list[int]]:
        """Decisions each decision supersedes, in edge creation order."""
        return LazySeq(self.size, self.num.supersedes)

    @cached_property
    def dec_superseded_by(self) -> Sequence[list[int]]:
        """Decisions superseding each decision, in edge creation order."""
        return LazySeq(self.size, self.num.superseded_by)

    @property
    def timeline_reads(self) -> TimelineReads | None:
        """The timeline at the cut from the model's, when this index shares the
        model's decision rows (:mod:`~kgai_tui.core.timeindex.moment_timeline`);
        ``None``: walked. A new reader each time (kept here it would point back
        at this view)."""
        shared = self.ix.shared
        present = None if shared is None else shared.timeline_reads
        if present is None:
            return None
        from kgai_tui.core.timeindex.moment_timeline import MomentTimeline

        return MomentTimeline(self, present)

    def recorded_count(self) -> int:
        """Decisions recorded by the cut (stubs, only referred to, do not count)."""
        patched = (fields for fields, _ in self.patched.values())
        return self.counts().recorded(self.cut, self.size, patched)

    def writer_count(self) -> int:
        """Writers (install ids) with a decision recorded by the cut."""
        patched = (fields for fields, _ in self.patched.values())
        return len(self.counts().writers(self.cut, patched) - {""})

    # ------------------------------------------------------------------ elements

    def shapers(self, eid: str) -> dict[int, bool]:
        """Decision index to authority on ``eid`` at the cut, in creation order."""
        return self.num.shapers(eid)

    @cached_property
    def el_shapes(self) -> Mapping[str, Mapping[int, bool]]:
        """Per element: decision index to authority, in SHAPES creation order."""
        return _ElShapes(self.num)

    @cached_property
    def heads(self) -> dict[str, set[int]]:
        """Per element with any: the decisions in force."""
        with gc_paused():
            return self._heads()

    def _heads(self) -> dict[str, set[int]]:
        cut, multi, v_of = self.cut, self.ix.vmulti, self.v_of
        out: dict[str, set[int]] = {}
        for eid, (times, vals) in self.ix.versions.items():
            i = bisect_right(times, cut) - 1
            if i < 0:
                continue
            val = vals[i]
            if val >= 0:
                out[eid] = {v_of(val)}
            elif val < -1:
                out[eid] = {v_of(g) for g in multi[-2 - val]}
        return out

    @cached_property
    def contested(self) -> set[str]:
        """Elements with two or more heads."""
        return {e for e, h in self.heads.items() if len(h) > 1}

    @cached_property
    def applied_count(self) -> int:
        """Number of distinct events recorded at or before the cut."""
        return self.ix.applied_at(self.cut)

    @cached_property
    def unknown_ops(self) -> list[tuple[str, str]]:
        """``(event hash, op)`` of included mutations with an unknown op."""
        return [(h, op) for t, h, op in self.ix.unknown if t <= self.cut]

    def _props(self, eid: str) -> str:
        return props_at(self.ix, self.cut, eid)

    @cached_property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The element graph at the cut."""
        with gc_paused():
            return self._graph()

    def _graph(self) -> nx.MultiDiGraph[str]:
        cut = self.cut
        nodes = nodes_at(self.ix, cut)
        graph: nx.MultiDiGraph[str] = AcyclicGraph()
        # Fill networkx's own dicts directly (what add_node/add_edge would store):
        # ten times faster than the public calls for thousands of nodes.
        inner = vars(graph)
        node_d, succ, pred = inner["_node"], inner["_succ"], inner["_pred"]
        # Bound to the index and the cut, not to this view: a node that pointed back
        # at the view would make every view's graph cyclic garbage (60k objects).
        props = partial(props_at, self.ix, cut)
        for _, eid, kind, name in nodes:
            node_d[eid] = NodeAttrs.with_props(
                partial(props, eid), kind=kind, name=name
            )
            succ[eid] = {}
            pred[eid] = {}
        edges = links_at(self.ix, cut)
        for _, f, t, kind, by in edges:
            keys = succ[f].get(t)
            if keys is None:
                keys = succ[f][t] = pred[t][f] = {}
            keys[kind] = {"created_by": by}
        return graph

    def element_props_with(self, key: str) -> Iterable[tuple[str, str]]:
        """``(id, props blob)`` of the elements a prop named like ``key`` was ever
        written to (the index's prop histories), not every element's props at the
        cut: those are computed per element, and a slider step asks for ``paths``."""
        graph = self.graph
        for eid, keys in self.ix.props.items():
            if eid in graph and any(key in k for k in keys):
                yield eid, graph.nodes[eid]["props"]

    # ------------------------------------------------------------------ queries

    def element(self, eid: str) -> tuple[str, str, str] | None:
        """Return ``(kind, name, props_blob)`` of an element, or ``None``."""
        return element_of(self.graph, eid)

    def head_order(self, indices: Iterable[int]) -> list[int]:
        """Order decision indices newest first: lamport descending, then id."""
        return newest_first(self.dec_lamport, self.dec_id, indices)

    def heads_of(self, eid: str) -> list[int]:
        """Return the heads of an element, newest first."""
        return self.head_order(self.heads.get(eid, ()))

    def as_of_parts(
        self,
    ) -> tuple[
        list[str], list[dict[str, str]], list[dict[str, Any]], list[dict[str, Any]]
    ]:
        """The as-of read's element names, links, heads and conflicts, from columns.

        Equal to what :func:`~kgai_tui.core.reads.as_of.as_of_obj` derives from
        :attr:`graph` and :attr:`heads` (a test holds them so), without building
        either: a graph of 10k elements costs more than all of this at 1M decisions.
        """
        cols = self._columns()
        entry = cols.elements_at(self.cut)
        names = cols.names_at(entry)
        links = cols.links_at(self.cut, entry)
        els, vals = cols.heads_at(self.cut)
        at = entry[els]
        if (at < 0).any():
            raise AssertionError("a head on an element not yet touched")
        eids: list[str] = cols.eids[els].tolist()
        kinds: list[str] = cols.t_kind[at].tolist()
        el_names: list[str] = cols.names[cols.t_rank[at]].tolist()
        if not (vals < 0).any():  # one head each: no ordering, no conflict
            gs: list[int] = vals.tolist()
            flat = gs if not gs or max(gs) < self.num.k else [self.v_of(g) for g in gs]
            heads = [
                {"element_id": e, "heads": [i], "kind": k, "name": n, "titles": [t]}
                for e, i, k, n, t in zip(
                    eids,
                    self.dec_id.take(flat),
                    kinds,
                    el_names,
                    self.dec_title.take(flat),
                    strict=True,
                )
            ]
            return names, links, heads, []
        return (names, links, *self._head_rows(eids, vals.tolist(), kinds, el_names))

    def _head_rows(
        self, eids: list[str], vals: list[int], kinds: list[str], names: list[str]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Heads and conflicts rows when some element has several heads."""
        v_of, multi = self.v_of, self.ix.vmulti
        orders = [
            [v_of(val)]
            if val >= 0
            else self.head_order([v_of(g) for g in multi[-2 - val]])
            for val in vals
        ]
        flat = [i for order in orders for i in order]
        ids, titles = self.dec_id.take(flat), self.dec_title.take(flat)
        heads: list[dict[str, Any]] = []
        conflicts: list[dict[str, Any]] = []
        at = 0
        for eid, order, kind, name in zip(eids, orders, kinds, names, strict=True):
            end = at + len(order)
            heads.append(
                {
                    "element_id": eid,
                    "heads": ids[at:end],
                    "kind": kind,
                    "name": name,
                    "titles": titles[at:end],
                }
            )
            if len(order) > 1:
                conflicts.append(
                    {
                        "element_id": eid,
                        "heads": [i for i in ids[at:end] if i],
                        "kind": kind,
                        "name": name,
                        "titles": [t for t in titles[at:end] if t],
                    }
                )
            at = end
        return heads, conflicts

    def max_authority_lamport(self, eid: str) -> int:
        """Return the largest lamport of a decision with authority on the element."""
        shapers = self.el_shapes.get(eid)
        if not shapers:
            return 0
        lam = self.dec_lamport
        return max((lam[i] for i, auth in shapers.items() if auth), default=0)
