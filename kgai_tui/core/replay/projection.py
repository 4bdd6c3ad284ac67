"""Replay events into the element graph and the decision plane (spec 3-4, 14).

The element graph is a ``networkx.MultiDiGraph`` (a few thousand nodes at most). The
decision plane can hold a million decisions, so it lives beside the graph in parallel
lists indexed by a small integer per decision, not in networkx (measured: 1.1 GB and
10 s for a million decision nodes in networkx versus about half that in plain lists).

Heads are maintained incrementally: SHAPES and SUPERSEDES edges are only ever added,
so each new edge can only seat a head (authority SHAPES) or unseat one (SUPERSEDES from
a decision with authority on the same element), and a full scan is never needed.
"""

from __future__ import annotations

from array import array
from collections.abc import (
    Callable,
    Iterable,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.gosem.gotext import recorded_epoch
from kgai_tui.core.replay.columns import TextColumn, TimeColumn
from kgai_tui.core.replay.projection_view import (
    GraphReads,
    column_fields,
    element_of,
    newest_first,
)
from kgai_tui.core.replay.short_lists import IndexLists, NameLists, ShortLists
from kgai_tui.core.store.hash_column import HashColumn
from kgai_tui.core.wire.codec import event_obj
from kgai_tui.core.wire.props import CLEAN_KEYS, ElementProps, clean_key

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np
    import numpy.typing as npt

    from kgai_tui.core.replay.projection_view import Field
    from kgai_tui.core.store.decision_fields import Joined
    from kgai_tui.core.wire.model import Event

_ZERO_TIME: Final = -62135596800  # Go's time.Time{} as a Unix timestamp
# A new decision's shapes and edges, before any (the columns copy nothing of it).
_NONE: Final[tuple[()]] = ()
_NO_EDGES: Final[dict[str, Any]] = {}


class Projection(GraphReads):
    """The live state after replaying a sequence of events in canonical order."""

    def __init__(self, graph: nx.MultiDiGraph[str] | None = None) -> None:
        """Start from ``graph`` (an empty NetworkX graph by default) and an empty
        decision plane.

        NetworkX is imported here, not with the module: a write session replays onto
        a :class:`~kgai_tui.core.replay.link_graph.LinkGraph` and never needs it.
        """
        if graph is None:
            import networkx as nx

            graph = nx.MultiDiGraph()
        self.graph: nx.MultiDiGraph[str] = graph
        # networkx's own node and successor dicts: the replay tests membership a
        # few million times, and the graph's methods cost a Python call each.
        self._nodes: dict[str, dict[str, Any]] = vars(self.graph)["_node"]
        self._succ: dict[str, dict[str, dict[str, Any]]] = vars(self.graph)["_succ"]
        self._applied: set[str] | None = set()
        self._applied_from: Callable[[], set[str]] | None = None
        self.applied_count = 0
        # Decision plane, one slot per decision index.
        self._dec_index: dict[str, int] | None = {}
        self.dec_id: list[str] = []
        # A cold open's text, times and lamports are compact (see fill_deferred).
        self.dec_title: list[str] | TextColumn = []
        self.dec_rationale: list[str] | TextColumn = []
        self.dec_author: list[str] = []
        self.dec_refs: list[str] | TextColumn = []
        self.dec_summary: list[str] | TextColumn = []
        self.dec_time: list[int | None] | TimeColumn = []
        self.dec_lamport: list[int] | array[int] = []
        self.dec_install: list[str] = []
        self.dec_hash: list[str] | HashColumn = []
        # SHAPES and SUPERSEDES (each way), packed: grown by ``append`` and ``add``.
        self.dec_shapes = NameLists()
        self.dec_supersedes = IndexLists()
        self.dec_superseded_by = IndexLists()
        # Per element: decision index -> authority, in SHAPES creation order.
        self._el_shapes: MutableMapping[str, dict[int, bool]] = {}
        self.heads: dict[str, set[int]] = {}
        self.contested: set[str] = set()
        self.unknown_ops: list[tuple[str, str]] = []
        # Props of elements touched while replaying, as lines; blobs on flush.
        self._props: dict[str, ElementProps] = {}
        # Writes not applied yet: (element, clean key) -> value, in first-write
        # order, and per element the key written last (see flush_props).
        self._prop_writes: dict[tuple[str, str], str] = {}
        self._last_write: dict[str, str] = {}
        # One str object per distinct author, install and element id.
        self._intern: dict[str, str] = {}
        self._max_auth: dict[str, int] | None = None
        # While deferred: per decision index, the line whose fields fill it (-1: none).
        self._fill_at: array[int] | None = None

    # ------------------------------------------------------------------ lazy parts

    # A replay whose applied hashes come from its scans builds that set only when
    # something reads it: a ``status`` never needs the million-entry set.

    @property
    def applied(self) -> set[str]:
        """The hashes of every applied event (duplicates by hash apply once)."""
        if self._applied is None:
            assert self._applied_from is not None
            self._applied = self._applied_from()
            self._applied_from = None
        return self._applied

    @applied.setter
    def applied(self, value: set[str]) -> None:
        self._applied = value

    def applied_later(self, compute: Callable[[], set[str]]) -> None:
        """Build the applied set with ``compute`` on first read, not now."""
        self._applied = None
        self._applied_from = compute

    @property
    def dec_index(self) -> dict[str, int]:
        """Decision id to decision index."""
        if self._dec_index is None:
            self._dec_index = dict(
                zip(self.dec_id, range(len(self.dec_id)), strict=True)
            )
        return self._dec_index

    @dec_index.setter
    def dec_index(self, value: dict[str, int]) -> None:
        self._dec_index = value

    @property
    def el_shapes(self) -> MutableMapping[str, dict[int, bool]]:
        """Per element: decision index to authority, in SHAPES creation order."""
        return self._el_shapes

    @el_shapes.setter
    def el_shapes(self, value: MutableMapping[str, dict[int, bool]]) -> None:
        self._el_shapes = value

    # ------------------------------------------------------------------ replay

    def apply_all(self, events: Iterable[Event]) -> None:
        """Apply events that are already gated and in canonical order."""
        for ev in events:
            self.apply(ev)

    def apply(self, ev: Event) -> None:
        """Apply one event that passed the gates; a repeated hash is a no-op."""
        self.apply_obj(event_obj(ev))
        self.flush_props()

    def apply_obj(self, ev: dict[str, Any]) -> None:
        """Apply one event given as its canonical JSON dict (the open path's input).

        Props are kept per element as parsed lines while replaying; call
        :meth:`flush_props` after a batch so the graph's blobs are current.
        """
        ev_hash = ev["hash"]
        if ev_hash in self.applied:
            return
        self.applied.add(ev_hash)
        self.apply_new(ev)

    def defer_fields(self) -> None:
        """Leave the decisions' text fields and times empty until :meth:`fill_deferred`.

        The cold open's verifiers read those fields anyway; the replay then only
        notes, per new decision, the line (``at``) that carries them.
        """
        self._fill_at = array("q")

    def fill_deferred(
        self,
        text: Sequence[Joined],
        times: npt.NDArray[np.int64],
        lamports: npt.NDArray[np.int64],
        hashes: HashColumn,
    ) -> None:
        """Fill the deferred columns from per-line columns (:mod:`decision_fields`).

        ``text`` holds the title, rationale, author, refs, summary and install id
        columns, ``times`` the recorded times (Go's zero time for none),
        ``lamports`` and ``hashes`` each line's keys; all are indexed by the ``at``
        given to :meth:`apply_many`. A decision only known as superseded (``at``
        -1) reads the empty value appended to each column.
        """
        # NumPy loads with the cold open that calls this, not with every importer
        # of the projection (a write session's model overlay: ~0.2 s per record).
        import numpy as np

        from kgai_tui.core.store.decision_fields import ZERO_TIME, Coded, Lines

        fill = self._fill_at
        assert fill is not None, "fill_deferred without defer_fields"
        self._fill_at = None
        at = np.frombuffer(fill, dtype=np.int64)
        intern = self._intern.setdefault

        def gather(values: Coded | Sequence[str] | None) -> list[str]:
            """Each decision's value, by the line its fields are at (-1: empty)."""
            if values is None:
                return [""] * len(at)
            if isinstance(values, Coded):
                table = np.array([*values.table, ""], dtype=object)
                coded: list[str] = table[
                    np.append(values.codes, len(table) - 1)[at]
                ].tolist()
                return coded
            column = np.empty(len(values) + 1, dtype=object)
            column[:-1] = values
            column[-1] = ""
            picked: list[str] = column[at].tolist()
            return picked

        def pick(values: Joined) -> list[str] | TextColumn:
            if isinstance(values, Lines):  # many distinct values: kept as bytes
                return TextColumn(values.blob, values.starts, fill)
            return gather(values)

        def shared(values: Joined) -> list[str]:
            """:func:`gather` with one str object per distinct value (authors,
            installs)."""
            if isinstance(values, Lines):
                values = values.values()
            if isinstance(values, Coded):
                return gather(Coded([intern(v, v) for v in values.table], values.codes))
            return [intern(v, v) for v in gather(values)]

        titles, rationales, authors, refs, summaries, installs = text
        self.dec_title = pick(titles)
        self.dec_rationale = pick(rationales)
        self.dec_author = shared(authors)
        self.dec_refs = pick(refs)
        self.dec_summary = pick(summaries)
        self.dec_install = shared(installs)
        self.dec_hash = hashes.take(at)
        self.dec_lamport = array("q")
        self.dec_lamport.frombytes(np.append(lamports, 0)[at].view(np.uint8).data)
        stamps = array("q")
        stamps.frombytes(np.append(times, ZERO_TIME)[at].view(np.uint8).data)
        self.dec_time = TimeColumn(stamps, ZERO_TIME)

    def apply_new(self, ev: dict[str, Any], at: int = -1) -> None:
        """:meth:`apply_obj` for an event known not to be applied yet.

        With deferred fields, ``at`` is the event's line in the columns
        :meth:`fill_deferred` will get.
        """
        self.apply_many(((ev, at),))

    def apply_many(self, events: Iterable[tuple[dict[str, Any], int]]) -> None:
        """Apply ``(event, at)`` pairs not applied yet, in canonical order.

        The cold open replays a sorted, de-duplicated log, so it skips the applied
        set (a million-entry set costs time and memory) and hands the projection a
        way to compute it instead (:meth:`applied_later`). With deferred fields
        (:meth:`defer_fields`), ``at`` is each event's line in the columns;
        otherwise it is ignored.

        This is the replay's hot loop: what it touches is bound to locals once and
        the common mutations are written out inline, since at a million events
        every call saved per event is a second of the open.
        """
        deferred = self._fill_at
        nodes, succ, graph = self._nodes, self._succ, self.graph
        add_node, add_edge = graph.add_node, graph.add_edge
        dec_index = self._dec_index
        if dec_index is None:
            dec_index = self.dec_index
        ids, shaped = self.dec_id, self.dec_shapes
        sup_col, by_col = self.dec_supersedes, self.dec_superseded_by
        # Packed columns (a write session's are its rows): their first slots are
        # read and filled here without a call (9M calls were 1.7 s of 12 at 1M).
        packed = isinstance(shaped, ShortLists)
        shape_first: MutableSequence[str | None] = shaped.slots if packed else []
        sup_first: MutableSequence[int] = sup_col.slots if packed else []
        by_first: MutableSequence[int] = by_col.slots if packed else []
        new_shape, new_sup, new_by = (
            shape_first.append,
            sup_first.append,
            by_first.append,
        )
        el_shapes, heads_map = self._el_shapes, self.heads
        contested_add, contested_discard = self.contested.add, self.contested.discard
        max_auth = self._max_auth
        intern = self._intern.setdefault
        # Prop writes: the last value per (element, key) and each element's last
        # key, applied by flush_props (what the sequence of sets would leave).
        writes, last_write = self._prop_writes, self._last_write
        clean_of = CLEAN_KEYS.get
        count = 0
        try:
            for ev, at in events:
                count += 1
                d = ev["decision"]
                if d is None:
                    continue
                did = d["id"]
                idx = dec_index.get(did)
                if idx is None:
                    idx = len(ids)
                    dec_index[did] = idx
                    ids.append(did)
                    if packed:
                        new_shape(None)
                        new_sup(-1)
                        new_by(-1)
                    else:
                        shaped.append(_NONE)
                        sup_col.append(_NONE)
                        by_col.append(_NONE)
                    if deferred is None:
                        self._append_fields(d, ev)
                    else:
                        deferred.append(at)
                muts = d["mutations"]
                if muts:
                    for m in muts:
                        op = m["op"]
                        if op == "upsert_element":
                            eid = m.get("element_id")
                            if not eid:
                                continue
                            if eid not in nodes:
                                add_node(
                                    eid,
                                    kind=m.get("kind", ""),
                                    name=m.get("name", ""),
                                    props="",
                                )
                            props = m.get("props")
                            if props:
                                for key in sorted(props) if len(props) > 1 else props:
                                    clean = clean_of(key)
                                    if clean is None:
                                        clean = clean_key(key)
                                    writes[eid, clean] = props[key]
                                    last_write[eid] = clean
                        elif op == "set_prop":
                            eid = m.get("element_id")
                            if not eid:
                                continue
                            if eid not in nodes:
                                add_node(eid, kind="", name="", props="")
                            key = m.get("key", "")
                            clean = clean_of(key)
                            if clean is None:
                                clean = clean_key(key)
                            writes[eid, clean] = m.get("value", "")
                            last_write[eid] = clean
                        elif op == "add_link":
                            src = m.get("from_id")
                            dst = m.get("to_id")
                            if not src or not dst:
                                continue
                            if src not in nodes:
                                add_node(src, kind="", name="", props="")
                            if dst not in nodes:
                                add_node(dst, kind="", name="", props="")
                            kind = m.get("link_kind", "")
                            if kind not in succ[src].get(dst, _NO_EDGES):
                                add_edge(
                                    src,
                                    dst,
                                    key=kind,
                                    created_by=m.get("element_id", ""),
                                )
                        elif op == "retire_link":
                            self._retire_link(m)
                        else:
                            self.unknown_ops.append((ev["hash"], op))
                shapes = d.get("shapes")
                if shapes:
                    # SHAPES edges: each can only seat a head (with authority).
                    targets = d.get("targets", ())
                    legacy = not targets and not d.get("provenance_only", False)
                    for eid in shapes:
                        if not eid:
                            continue
                        if eid not in nodes:
                            add_node(eid, kind="", name="", props="")
                        shapers = el_shapes.get(eid)
                        if shapers is None:
                            shapers = el_shapes[eid] = {}
                        if idx in shapers:
                            continue
                        authority = legacy or eid in targets
                        shapers[idx] = authority
                        if packed and shape_first[idx] is None:
                            shape_first[idx] = intern(eid, eid)
                        else:
                            shaped.add(idx, intern(eid, eid))
                        if authority:
                            heads = heads_map.get(eid)
                            if heads is None:
                                heads = heads_map[eid] = set()
                            if packed and by_first[idx] == -1:
                                heads.add(idx)  # superseded by none
                            else:
                                by = by_col[idx]
                                if not by or not any(shapers.get(s) for s in by):
                                    heads.add(idx)
                            if not packed or sup_first[idx] != -1:
                                for prev in sup_col[idx]:
                                    heads.discard(prev)
                            if len(heads) > 1:
                                contested_add(eid)
                            else:
                                contested_discard(eid)
                            if max_auth is not None:
                                lamport = self.dec_lamport[idx]
                                if lamport > max_auth.get(eid, 0):
                                    max_auth[eid] = lamport
                supersedes = d.get("supersedes")
                if supersedes:
                    # SUPERSEDES edges: each can only unseat a head.
                    for prev_id in supersedes:
                        if not prev_id:
                            continue
                        old = dec_index.get(prev_id)
                        if old is None:
                            old = self._new_decision(prev_id)
                        if packed and sup_first[idx] == -1:
                            sup_first[idx] = old
                        elif not sup_col.add(idx, old):
                            continue
                        if packed and by_first[old] == -1:
                            by_first[old] = idx
                        else:
                            by_col.add(old, idx)
                        for eid in shaped[idx]:
                            if el_shapes[eid][idx]:
                                heads = heads_map.get(eid)
                                if heads is not None and old in heads:
                                    heads.discard(old)
                                    if len(heads) > 1:
                                        contested_add(eid)
                                    else:
                                        contested_discard(eid)
        finally:
            self.applied_count += count

    def _append_fields(self, d: dict[str, Any], ev: dict[str, Any]) -> None:
        """A new decision's fields from its event (when they are not deferred)."""
        self.dec_lamport.append(ev["lamport"])
        install = ev["install_id"]
        self.dec_install.append(self._intern.setdefault(install, install))
        self.dec_hash.append(ev["hash"])
        get = d.get
        self.dec_title.append(d["title"])
        self.dec_rationale.append(get("rationale", ""))
        author = get("author", "")
        self.dec_author.append(self._intern.setdefault(author, author))
        self.dec_refs.append(get("refs", ""))
        self.dec_summary.append(get("summary", ""))
        stamp = recorded_epoch(ev["recorded_at"])
        self.dec_time.append(None if stamp == _ZERO_TIME else stamp)

    def _retire_link(self, m: dict[str, Any]) -> None:
        src = m.get("from_id", "")
        dst = m.get("to_id", "")
        kind = m.get("link_kind", "")
        if self.graph.has_edge(src, dst, key=kind):
            self.graph.remove_edge(src, dst, key=kind)

    def _new_decision(self, dec_id: str) -> int:
        idx = len(self.dec_id)
        self.dec_index[dec_id] = idx
        self.dec_id.append(dec_id)
        if self._fill_at is not None:
            self._fill_at.append(-1)
            self.dec_shapes.append(_NONE)
            self.dec_supersedes.append(_NONE)
            self.dec_superseded_by.append(_NONE)
            return idx
        self.dec_title.append("")
        self.dec_rationale.append("")
        self.dec_author.append("")
        self.dec_refs.append("")
        self.dec_summary.append("")
        self.dec_time.append(None)
        self.dec_lamport.append(0)
        self.dec_install.append("")
        self.dec_hash.append("")
        self.dec_shapes.append(_NONE)
        self.dec_supersedes.append(_NONE)
        self.dec_superseded_by.append(_NONE)
        return idx

    def flush_props(self) -> None:
        """Apply the prop writes since the last flush and rewrite their blobs.

        The replay keeps only each (element, key)'s last value and each element's
        last key. Applying those, the last key last, leaves exactly what applying
        every write in order leaves: an overwritten value is gone either way, and
        a line is trimmed whenever any later write to its element follows, so only
        the element's very last write can stay untrimmed (``ElementProps.set``).
        """
        writes, last_write = self._prop_writes, self._last_write
        if not writes:
            return
        by_element: dict[str, list[tuple[str, str]]] = {}
        for (eid, key), value in writes.items():
            pending = by_element.get(eid)
            if pending is None:
                pending = by_element[eid] = []
            pending.append((key, value))
        nodes = self._nodes
        for eid, pending in by_element.items():
            el_props = self._props.get(eid)
            if el_props is None:
                el_props = self._props[eid] = ElementProps.from_blob(
                    nodes[eid]["props"]
                )
            last = last_write[eid]
            for key, value in pending:
                if key != last:
                    el_props.set(key, value)
            el_props.set(last, writes[eid, last])
            nodes[eid]["props"] = el_props.blob()
        writes.clear()
        last_write.clear()

    # ------------------------------------------------------------------ queries

    def element(self, eid: str) -> tuple[str, str, str] | None:
        """Return ``(kind, name, props_blob)`` of an element, or ``None``."""
        return element_of(self.graph, eid)

    def decision_fields(
        self, indices: Sequence[int], names: Sequence[Field]
    ) -> list[tuple[Any, ...]]:
        """The fields ``names`` of the decisions at ``indices``, from the lists."""
        return column_fields(self, indices, names)

    def head_order(self, indices: Iterable[int]) -> list[int]:
        """Order decision indices newest first: lamport descending, then id."""
        return newest_first(self.dec_lamport, self.dec_id, indices)

    def heads_of(self, eid: str) -> list[int]:
        """Return the heads of an element, newest first."""
        return self.head_order(self.heads.get(eid, ()))

    def max_authority_lamport(self, eid: str) -> int:
        """Return the largest lamport of a decision with authority on the element.

        Recall orders every element it keeps by this, so all of them are computed
        once (one pass over the shapes) and kept current by the replay.
        """
        if self._max_auth is None:
            lam = self.dec_lamport
            self._max_auth = {
                e: max((lam[i] for i, auth in shapers.items() if auth), default=0)
                for e, shapers in self.el_shapes.items()
            }
        return self._max_auth.get(eid, 0)
