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

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import networkx as nx

from kgai_tui.core.gotext import recorded_epoch
from kgai_tui.core.props import set_prop

if TYPE_CHECKING:
    from kgai_tui.core.model import Decision, Event

_ZERO_TIME: Final = -62135596800  # Go's time.Time{} as a Unix timestamp


class Projection:
    """The live state after replaying a sequence of events in canonical order."""

    def __init__(self) -> None:
        """Start from an empty graph and an empty decision plane."""
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.applied: set[str] = set()
        self.applied_count = 0
        # Decision plane, one slot per decision index.
        self.dec_index: dict[str, int] = {}
        self.dec_id: list[str] = []
        self.dec_title: list[str] = []
        self.dec_rationale: list[str] = []
        self.dec_author: list[str] = []
        self.dec_refs: list[str] = []
        self.dec_summary: list[str] = []
        self.dec_time: list[int | None] = []
        self.dec_lamport: list[int] = []
        self.dec_install: list[str] = []
        self.dec_hash: list[str] = []
        self.dec_shapes: list[list[str]] = []
        self.dec_supersedes: list[list[int]] = []
        self.dec_superseded_by: list[list[int]] = []
        # Per element: decision index -> authority, in SHAPES creation order.
        self.el_shapes: dict[str, dict[int, bool]] = {}
        self.heads: dict[str, set[int]] = {}
        self.contested: set[str] = set()
        self.unknown_ops: list[tuple[str, str]] = []

    # ------------------------------------------------------------------ replay

    def apply_all(self, events: Iterable[Event]) -> None:
        """Apply events that are already gated and in canonical order."""
        for ev in events:
            self.apply(ev)

    def apply(self, ev: Event) -> None:
        """Apply one event that passed the gates; a repeated hash is a no-op."""
        if ev.hash in self.applied:
            return
        self.applied.add(ev.hash)
        self.applied_count += 1
        d = ev.decision
        if d is None:
            return
        idx = self.dec_index.get(d.id)
        if idx is None:
            idx = self._new_decision(d.id)
            self._fill_decision(idx, d, ev)
        self._apply_mutations(d, ev.hash)
        self._apply_shapes(idx, d)
        self._apply_supersedes(idx, d)

    def _new_decision(self, dec_id: str) -> int:
        idx = len(self.dec_id)
        self.dec_index[dec_id] = idx
        self.dec_id.append(dec_id)
        self.dec_title.append("")
        self.dec_rationale.append("")
        self.dec_author.append("")
        self.dec_refs.append("")
        self.dec_summary.append("")
        self.dec_time.append(None)
        self.dec_lamport.append(0)
        self.dec_install.append("")
        self.dec_hash.append("")
        self.dec_shapes.append([])
        self.dec_supersedes.append([])
        self.dec_superseded_by.append([])
        return idx

    def _fill_decision(self, idx: int, d: Decision, ev: Event) -> None:
        self.dec_title[idx] = d.title
        self.dec_rationale[idx] = d.rationale
        self.dec_author[idx] = d.author
        self.dec_refs[idx] = d.refs
        self.dec_summary[idx] = d.summary
        stamp = recorded_epoch(ev.recorded_at)
        self.dec_time[idx] = None if stamp == _ZERO_TIME else stamp
        self.dec_lamport[idx] = ev.lamport
        self.dec_install[idx] = ev.install_id
        self.dec_hash[idx] = ev.hash

    def _ensure_element(self, eid: str) -> None:
        if eid not in self.graph:
            self.graph.add_node(eid, kind="", name="", props="")

    def _apply_mutations(self, d: Decision, ev_hash: str) -> None:
        graph = self.graph
        for m in d.mutations or ():
            op = m.op
            if op == "upsert_element":
                if not m.element_id:
                    continue
                if m.element_id not in graph:
                    graph.add_node(m.element_id, kind=m.kind, name=m.name, props="")
                if m.props:
                    node = graph.nodes[m.element_id]
                    blob = node["props"]
                    for key, value in m.props:
                        blob = set_prop(blob, key, value)
                    node["props"] = blob
            elif op == "set_prop":
                if not m.element_id:
                    continue
                self._ensure_element(m.element_id)
                node = graph.nodes[m.element_id]
                node["props"] = set_prop(node["props"], m.key, m.value)
            elif op == "add_link":
                if not m.from_id or not m.to_id:
                    continue
                self._ensure_element(m.from_id)
                self._ensure_element(m.to_id)
                if not graph.has_edge(m.from_id, m.to_id, key=m.link_kind):
                    graph.add_edge(
                        m.from_id, m.to_id, key=m.link_kind, created_by=m.element_id
                    )
            elif op == "retire_link":
                if graph.has_edge(m.from_id, m.to_id, key=m.link_kind):
                    graph.remove_edge(m.from_id, m.to_id, key=m.link_kind)
            else:
                self.unknown_ops.append((ev_hash, op))

    def _apply_shapes(self, idx: int, d: Decision) -> None:
        targets = d.targets
        legacy = not targets and not d.provenance_only
        for eid in d.shapes:
            if not eid:
                continue
            self._ensure_element(eid)
            shapers = self.el_shapes.get(eid)
            if shapers is None:
                shapers = self.el_shapes[eid] = {}
            if idx in shapers:
                continue
            authority = legacy or eid in targets
            shapers[idx] = authority
            self.dec_shapes[idx].append(eid)
            if authority:
                self._seat(idx, eid, shapers)

    def _seat(self, idx: int, eid: str, shapers: dict[int, bool]) -> None:
        heads = self.heads.get(eid)
        if heads is None:
            heads = self.heads[eid] = set()
        if not any(shapers.get(s) for s in self.dec_superseded_by[idx]):
            heads.add(idx)
        for prev in self.dec_supersedes[idx]:
            heads.discard(prev)
        self._mark(eid, heads)

    def _mark(self, eid: str, heads: set[int]) -> None:
        if len(heads) > 1:
            self.contested.add(eid)
        else:
            self.contested.discard(eid)

    def _apply_supersedes(self, idx: int, d: Decision) -> None:
        for prev_id in d.supersedes:
            if not prev_id:
                continue
            prev = self.dec_index.get(prev_id)
            if prev is None:
                prev = self._new_decision(prev_id)
            if prev in self.dec_supersedes[idx]:
                continue
            self.dec_supersedes[idx].append(prev)
            self.dec_superseded_by[prev].append(idx)
            for eid in self.dec_shapes[idx]:
                if self.el_shapes[eid][idx]:
                    heads = self.heads.get(eid)
                    if heads is not None and prev in heads:
                        heads.discard(prev)
                        self._mark(eid, heads)

    # ------------------------------------------------------------------ queries

    def element(self, eid: str) -> tuple[str, str, str] | None:
        """Return ``(kind, name, props_blob)`` of an element, or ``None``."""
        if eid not in self.graph:
            return None
        node = self.graph.nodes[eid]
        return (node["kind"], node["name"], node["props"])

    def head_order(self, indices: Iterable[int]) -> list[int]:
        """Order decision indices newest first: lamport descending, then id."""
        lam, ids = self.dec_lamport, self.dec_id
        return sorted(indices, key=lambda i: (-lam[i], ids[i]))

    def heads_of(self, eid: str) -> list[int]:
        """Return the heads of an element, newest first."""
        return self.head_order(self.heads.get(eid, ()))

    def max_authority_lamport(self, eid: str) -> int:
        """Return the largest lamport of a decision with authority on the element."""
        shapers = self.el_shapes.get(eid)
        if not shapers:
            return 0
        lam = self.dec_lamport
        return max((lam[i] for i, auth in shapers.items() if auth), default=0)
