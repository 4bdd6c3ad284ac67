"""The store as of one cut, read from a :class:`~kgai_tui.core.timeindex.index.TimeIndex`.

An :class:`AsOfView` satisfies :class:`~kgai_tui.core.replay.projection_view.ProjectionView`.
Nothing is computed up front: each member is built on first use and kept, so a reader
that needs only heads and names never pays for the rest. Decisions are numbered in the
index's creation order restricted to those that exist at the cut (a fresh replay may
number them differently; no output depends on the numbering).
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
from itertools import chain, islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

import networkx as nx

from kgai_tui.core.heap import GcPaused as gc_paused
from kgai_tui.core.replay.projection_view import element_of, newest_first
from kgai_tui.core.timeindex.keys import SEQ, Carry

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

    from kgai_tui.core.timeindex.index import TimeIndex

T = TypeVar("T")


class _Lazy(Sequence[T]):
    """A read-only sequence whose items are computed on access and kept."""

    def __init__(self, size: int, item: Callable[[int], T]) -> None:
        self._size = size
        self._item = item
        self._cache: dict[int, T] = {}

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(i)
        got = self._cache.get(i)
        if got is None:
            got = self._cache[i] = self._item(i)
        return got

    def __iter__(self) -> Iterator[T]:
        for i in range(self._size):
            yield self[i]


class _Column(Sequence[T]):
    """One decision field at the cut: a prefix of the index's list, no copy.

    Decisions ``0 .. k-1`` of the index all exist at the cut and read straight from
    its list (a copy of a million-item list costs more than a whole as-of read);
    decisions that exist but sort later (``extra``) and the few whose fields differ
    at the cut (``patch``) are kept aside. Iteration runs at C speed.
    """

    __slots__ = ("_base", "_extra", "_k", "_patch", "_size")

    def __init__(
        self, base: Sequence[T], k: int, extra: list[T], patch: dict[int, T]
    ) -> None:
        self._base = base
        self._k = k
        self._extra = extra
        self._patch = patch
        self._size = k + len(extra)

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if i < 0:
            i += self._size
        if 0 <= i < self._k:
            if self._patch and i in self._patch:
                return self._patch[i]
            return self._base[i]
        if self._k <= i < self._size:
            return self._extra[i - self._k]
        raise IndexError(i)

    def take(self, indices: list[int]) -> list[T]:
        """The values at many indices at once (C speed when they are all plain)."""
        if not indices:
            return []
        if not self._patch and max(indices) < self._k and min(indices) >= 0:
            if len(indices) == 1:
                return [self._base[indices[0]]]
            return list(itemgetter(*indices)(self._base))
        return [self[i] for i in indices]

    def __iter__(self) -> Iterator[T]:
        if self._patch:
            return (self[i] for i in range(self._size))
        return chain(islice(self._base, self._k), self._extra)


class _DecIndex(Mapping[str, int]):
    """Decision id to view index, for the decisions that exist at the cut."""

    def __init__(self, view: AsOfView) -> None:
        self._view = view

    def __getitem__(self, key: str) -> int:
        v = self._view.index_of(key)
        if v is None:
            raise KeyError(key)
        return v

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._view.index_of(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._view.dec_id)

    def __len__(self) -> int:
        return self._view.size


class _ElShapes(Mapping[str, Mapping[int, bool]]):
    """Per element: decision index to authority at the cut, in creation order."""

    def __init__(self, view: AsOfView) -> None:
        self._view = view
        self._cache: dict[str, dict[int, bool]] = {}

    def __getitem__(self, eid: str) -> Mapping[int, bool]:
        got = self._cache.get(eid)
        if got is None:
            got = self._cache[eid] = self._view.shapers(eid)
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
        return (e for e in self._view.ix.pairs if e in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _NodeAttrs(dict[str, Any]):
    """An element's attributes whose ``props`` blob is computed on first read.

    ``props`` costs most of building the graph and most readers (as-of, heads, the
    slider's delta) never look at it. Every way of reading the dict (subscript,
    ``get``, ``in``, iteration, ``items``, ``copy``, equality) sees it.
    """

    __slots__ = ("_fill",)
    _fill: Callable[[], str] | None  # set right after construction

    def _full(self) -> None:
        fill = self._fill
        if fill is not None:
            self._fill = None
            if not dict.__contains__(self, "props"):
                dict.__setitem__(self, "props", fill())

    def __missing__(self, key: str) -> Any:
        if key == "props" and self._fill is not None:
            self._full()
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None, /) -> Any:
        self._full()
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self._full()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self._full()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._full()
        return dict.__len__(self)

    def keys(self) -> dict_keys[str, Any]:
        self._full()
        return dict.keys(self)

    def values(self) -> dict_values[str, Any]:
        self._full()
        return dict.values(self)

    def items(self) -> dict_items[str, Any]:
        self._full()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._full()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._full()
        if isinstance(other, _NodeAttrs):
            other._full()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        self._full()
        return dict.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))


class AsOfView:
    """The graph and decision plane as a replay of the events up to ``cut`` gives."""

    def __init__(self, ix: TimeIndex, cut: int) -> None:
        """Locate the decisions that exist at ``cut`` (Unix seconds)."""
        self.ix = ix
        self.cut = cut
        exist = ix.d_exist
        n = len(exist)
        k = bisect_right(ix.prefmax, cut)
        strays: list[int] = []
        g, sufmin = k, ix.sufmin
        while g < n and sufmin[g] <= cut:
            if exist[g] <= cut:
                strays.append(g)
            g += 1
        self._k = k
        self._strays = strays
        self._vmap = {g: k + i for i, g in enumerate(strays)}
        self.size = k + len(strays)
        stable = ix.d_stable
        self._patch: dict[int, tuple[Carry | None, list[str]]] = {
            g: self._decision_at(g)
            for g in ix.exceptions
            if exist[g] <= cut < stable[g]
        }

    # ------------------------------------------------------------------ numbering

    def v_of(self, g: int) -> int:
        """The view index of a global decision index that exists at the cut."""
        return g if g < self._k else self._vmap[g]

    def g_of(self, v: int) -> int:
        """The global decision index of a view index."""
        return v if v < self._k else self._strays[v - self._k]

    def index_of(self, dec_id: str) -> int | None:
        """The view index of a decision id, or ``None`` when it does not exist yet."""
        g = self.ix.d_index.get(dec_id)
        if g is None or g >= len(self.ix.d_exist) or self.ix.d_exist[g] > self.cut:
            return None
        return self.v_of(g)

    # ------------------------------------------------------------------ decisions

    def _decision_at(self, g: int) -> tuple[Carry | None, list[str]]:
        """Fields (``None`` for a stub) and shapes of a decision at the cut."""
        ix, cut = self.ix, self.cut
        carries = ix.d_carry.get(g)
        if carries is None:
            carries = [ix.base_carry(g)] if ix.d_cpos[g] >= 0 else []
        included = [c for c in carries if c[1] <= cut]
        ref = -1
        e = ix.d_in[g]
        while e >= 0:
            more = ix.e_more.get(e) or [(ix.e_ord[e], ix.e_time[e])]
            for order, t in more:
                pos = order // SEQ
                if t <= cut and (ref < 0 or pos < ref):
                    ref = pos
            e = ix.e_nin[e]
        fields = None
        if included and (ref < 0 or included[0][0] <= ref):
            fields = included[0]
        shapes: list[str] = []
        for c in included:
            shapes.extend(eid for eid in c[11] if eid not in shapes)
        return fields, shapes

    def _column(
        self, base: Sequence[T], pick: Callable[[Carry | None, list[str]], T]
    ) -> _Column[T]:
        k = self._k
        extra = [base[g] for g in self._strays]
        patch: dict[int, T] = {}
        for g, (fields, shapes) in self._patch.items():
            value = pick(fields, shapes)
            if g < k:
                patch[g] = value
            else:
                extra[self._vmap[g] - k] = value
        return _Column(base, k, extra, patch)

    @cached_property
    def dec_id(self) -> _Column[str]:
        """Decision ids by view index."""
        return _Column(
            self.ix.d_id, self._k, [self.ix.d_id[g] for g in self._strays], {}
        )

    @cached_property
    def dec_index(self) -> Mapping[str, int]:
        """Decision id to view index."""
        return _DecIndex(self)

    @cached_property
    def dec_title(self) -> _Column[str]:
        """Titles."""
        return self._column(self.ix.d_title, lambda f, _: "" if f is None else f[2])

    @cached_property
    def dec_rationale(self) -> _Column[str]:
        """Rationales."""
        return self._column(self.ix.d_rationale, lambda f, _: "" if f is None else f[3])

    @cached_property
    def dec_author(self) -> _Column[str]:
        """Authors."""
        return self._column(self.ix.d_author, lambda f, _: "" if f is None else f[4])

    @cached_property
    def dec_refs(self) -> _Column[str]:
        """Refs."""
        return self._column(self.ix.d_refs, lambda f, _: "" if f is None else f[5])

    @cached_property
    def dec_summary(self) -> _Column[str]:
        """Summaries."""
        return self._column(self.ix.d_summary, lambda f, _: "" if f is None else f[6])

    @cached_property
    def dec_lamport(self) -> _Column[int]:
        """Lamport clocks."""
        return self._column(self.ix.d_lamport, lambda f, _: 0 if f is None else f[7])

    @cached_property
    def dec_install(self) -> _Column[str]:
        """Install ids."""
        return self._column(self.ix.d_install, lambda f, _: "" if f is None else f[8])

    @cached_property
    def dec_hash(self) -> _Column[str]:
        """Event hashes."""
        return self._column(self.ix.d_hash, lambda f, _: "" if f is None else f[9])

    @cached_property
    def dec_time(self) -> _Column[int | None]:
        """Recorded times."""
        return self._column(self.ix.d_time, lambda f, _: None if f is None else f[10])

    @cached_property
    def dec_shapes(self) -> _Column[list[str]]:
        """Shaped element ids, in SHAPES creation order."""
        return self._column(self.ix.d_shapes, lambda _, s: s)

    def _edges(self, first: int, dst: bool) -> list[int]:
        ix, cut = self.ix, self.cut
        found: list[tuple[int, int]] = []
        e = first
        while e >= 0:
            more = ix.e_more.get(e) or [(ix.e_ord[e], ix.e_time[e])]
            best = -1
            for order, t in more:
                if t <= cut and (best < 0 or order < best):
                    best = order
            if best >= 0:
                found.append((best, ix.e_dst[e] if dst else ix.e_src[e]))
            e = ix.e_nout[e] if dst else ix.e_nin[e]
        found.sort()
        return [self.v_of(g) for _, g in found]

    @cached_property
    def dec_supersedes(self) -> Sequence[list[int]]:
        """Decisions each decision supersedes, in edge creation order."""
        return _Lazy(
            self.size, lambda v: self._edges(self.ix.d_out[self.g_of(v)], dst=True)
        )

    @cached_property
    def dec_superseded_by(self) -> Sequence[list[int]]:
        """Decisions superseding each decision, in edge creation order."""
        return _Lazy(
            self.size, lambda v: self._edges(self.ix.d_in[self.g_of(v)], dst=False)
        )

    # ------------------------------------------------------------------ elements

    def shapers(self, eid: str) -> dict[int, bool]:
        """Decision index to authority on ``eid`` at the cut, in creation order."""
        ix, cut = self.ix, self.cut
        quads = ix.pairs.get(eid)
        if quads is None:
            return {}
        found: list[tuple[int, int, bool]] = []
        for i in range(0, len(quads), 4):
            g, pos, t, flag = quads[i], quads[i + 1], quads[i + 2], quads[i + 3]
            if flag & 2:
                for p, tt, a in ix.pair_more[(eid, g)]:
                    if tt <= cut:
                        found.append((p, g, bool(a)))
                        break
            elif t <= cut:
                found.append((pos, g, bool(flag & 1)))
        found.sort()
        return {self.v_of(g): auth for _, g, auth in found}

    @cached_property
    def el_shapes(self) -> Mapping[str, Mapping[int, bool]]:
        """Per element: decision index to authority, in SHAPES creation order."""
        return _ElShapes(self)

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
        return _props_at(self.ix, self.cut, eid)

    @cached_property
    def graph(self) -> nx.MultiDiGraph[str]:
        """The element graph at the cut."""
        with gc_paused():
            return self._graph()

    def _graph(self) -> nx.MultiDiGraph[str]:
        cut = self.cut
        nodes: list[tuple[int, str, str, str]] = []
        moved = False  # a first included touch that is not the first touch
        for eid, lows in self.ix.touch.items():
            if lows[-4] > cut:
                continue
            if lows[0] <= cut:
                nodes.append((lows[1], eid, lows[2], lows[3]))
                continue
            i = 4
            while lows[i] > cut:
                i += 4
            nodes.append((lows[i + 1], eid, lows[i + 2], lows[i + 3]))
            moved = True
        if moved:
            nodes.sort()
        graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        # Fill networkx's own dicts directly (what add_node/add_edge would store):
        # ten times faster than the public calls for thousands of nodes.
        inner = vars(graph)
        node_d, succ, pred = inner["_node"], inner["_succ"], inner["_pred"]
        # Bound to the index and the cut, not to this view: a node that pointed back
        # at the view would make every view's graph cyclic garbage (60k objects).
        props = partial(_props_at, self.ix, cut)
        for _, eid, kind, name in nodes:
            node = node_d[eid] = _NodeAttrs(kind=kind, name=name)
            node._fill = partial(props, eid)
            succ[eid] = {}
            pred[eid] = {}
        edges: list[tuple[int, str, str, str, str]] = []
        for (f, t, kind), ops in self.ix.links.items():
            alive, by, at = False, "", 0
            for i in range(2, len(ops), 4):
                if ops[i] > cut:
                    continue
                if ops[i + 2]:
                    if not alive:
                        alive, by, at = True, ops[i + 3], ops[i + 1]
                else:
                    alive = False
            if alive:
                edges.append((at, f, t, kind, by))
        edges.sort()
        for _, f, t, kind, by in edges:
            keys = succ[f].get(t)
            if keys is None:
                keys = succ[f][t] = pred[t][f] = {}
            keys[kind] = {"created_by": by}
        return graph

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
        cols = self.ix.columns()
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
            flat = gs if not gs or max(gs) < self._k else [self.v_of(g) for g in gs]
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


def _props_at(ix: TimeIndex, cut: int, eid: str) -> str:
    """An element's props blob at ``cut`` (a function, so nodes never hold a view)."""
    keys = ix.props.get(eid)
    if not keys:
        return ""
    parts: list[str] = []
    last = last_seq = -1
    for times, seqs, lines, sufmin in keys.values():  # kept sorted by key
        i = bisect_right(times if sufmin is None else sufmin, cut) - 1
        if i < 0:
            continue
        seq = seqs[i]
        if seq > last_seq:
            last, last_seq = len(parts), seq
        parts.append(lines[i])
    if not parts:
        return ""
    raw = ix.raw_lines.get(last_seq)
    if raw is not None:
        parts[last] = raw
    return parts[0] if len(parts) == 1 else "\n".join(parts)
