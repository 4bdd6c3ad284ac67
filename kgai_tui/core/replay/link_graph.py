"""The element graph of a write session, laid out as NetworkX lays it, without NetworkX.

A write session (``record``, ``resolve-conflict``, ``import adr``) and an update of
the read model replay a few events on top of the model's graph, then store the
graph again in NetworkX's own node, successor and predecessor orders
(:func:`kgai_tui.core.model.build.graph_state`). Importing NetworkX costs such a
process 0.15-0.2 s (its package imports every algorithm), more than the rest of a
``record`` at a million decisions, and none of it is needed: the replay only adds
nodes and keyed edges, tests and removes edges, and reads nodes.

:class:`LinkGraph` keeps the very dictionaries a ``networkx.MultiDiGraph`` keeps
(``_node``, ``_succ``, ``_pred``, ``_adj``), filled by the same rules in the same
order, so that every order read from it (node order, successor order, predecessor
order, key order) is the one NetworkX would give. ``tests/core/test_link_graph.py``
checks that against NetworkX itself, operation by operation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["LinkGraph", "NodeMap", "link_graph_from_state"]

Attrs = dict[str, Any]
KeyDict = dict[str, Attrs]


class NodeMap(Mapping[str, Attrs]):
    """``graph.nodes``: a read-only mapping of node to attributes, callable like
    NetworkX's node view (``nodes(data=True)`` gives ``(node, attrs)`` pairs)."""

    __slots__ = ("_node",)

    def __init__(self, node: dict[str, Attrs]) -> None:
        """View ``node`` (the graph's own dict, not a copy)."""
        self._node = node

    def __getitem__(self, n: str) -> Attrs:
        """A node's attributes (``KeyError`` for a missing node)."""
        return self._node[n]

    def __iter__(self) -> Iterator[str]:
        """Nodes in insertion order."""
        return iter(self._node)

    def __len__(self) -> int:
        """How many nodes."""
        return len(self._node)

    def __contains__(self, n: object) -> bool:
        """Whether ``n`` is a node."""
        return n in self._node

    def __call__(self, data: bool = False) -> Iterable[Any]:
        """The nodes, or with ``data`` their ``(node, attrs)`` pairs."""
        return self._node.items() if data else iter(self._node)


class LinkGraph:
    """The subset of ``networkx.MultiDiGraph`` the replay and the write checks use."""

    def __init__(self) -> None:
        """An empty graph."""
        self._node: dict[str, Attrs] = {}
        self._succ: dict[str, dict[str, KeyDict]] = {}
        self._pred: dict[str, dict[str, KeyDict]] = {}
        self._adj = self._succ  # NetworkX's name for the successors, too

    # ------------------------------------------------------------------ nodes

    @property
    def nodes(self) -> NodeMap:
        """The nodes and their attributes."""
        return NodeMap(self._node)

    def __contains__(self, n: object) -> bool:
        """Whether ``n`` is a node."""
        return n in self._node

    def __iter__(self) -> Iterator[str]:
        """Nodes in insertion order."""
        return iter(self._node)

    def __len__(self) -> int:
        """How many nodes."""
        return len(self._node)

    def number_of_nodes(self) -> int:
        """How many nodes."""
        return len(self._node)

    def add_node(self, n: str, **attr: Any) -> None:
        """Add a node, or update an existing node's attributes (NetworkX's rule)."""
        if n not in self._node:
            if n is None:
                raise ValueError("None cannot be a node")
            self._succ[n] = {}
            self._pred[n] = {}
            self._node[n] = dict(attr)
        else:
            self._node[n].update(attr)

    # ------------------------------------------------------------------ edges

    def add_edge(self, u: str, v: str, key: str, **attr: Any) -> str:
        """Add the edge ``u -> v`` under ``key``, or update its attributes.

        A missing end becomes a node with no attributes, as in NetworkX; one
        ``{key: attrs}`` dict is shared by ``_succ[u][v]`` and ``_pred[v][u]``.
        """
        for n in (u, v):
            if n not in self._succ:
                if n is None:
                    raise ValueError("None cannot be a node")
                self._succ[n] = {}
                self._pred[n] = {}
                self._node[n] = {}
        out = self._succ[u]
        if v in out:
            keydict = out[v]
            data = keydict.get(key)
            if data is None:
                data = {}
            data.update(attr)
            keydict[key] = data
        else:
            keydict = {key: dict(attr)}
            out[v] = keydict
            self._pred[v][u] = keydict
        return key

    def has_edge(self, u: str, v: str, key: str) -> bool:
        """Whether the edge ``u -> v`` under ``key`` exists."""
        try:
            return key in self._succ[u][v]
        except KeyError:
            return False

    def remove_edge(self, u: str, v: str, key: str) -> None:
        """Remove the edge ``u -> v`` under ``key`` (``KeyError`` when absent)."""
        keydict = self._succ[u][v]
        del keydict[key]
        if not keydict:
            del self._succ[u][v]
            del self._pred[v][u]

    def out_edges(self, n: str, keys: bool = False) -> list[tuple[str, ...]]:
        """``(n, to, key)`` (or ``(n, to)``) of every edge from ``n``, in order."""
        return [
            (n, v, k) if keys else (n, v)
            for v, keydict in self._succ[n].items()
            for k in keydict
        ]

    def in_edges(self, n: str, keys: bool = False) -> list[tuple[str, ...]]:
        """``(from, n, key)`` (or ``(from, n)``) of every edge into ``n``, in order."""
        return [
            (u, n, k) if keys else (u, n)
            for u, keydict in self._pred[n].items()
            for k in keydict
        ]

    def edges(self, keys: bool = False, data: bool = False) -> list[tuple[Any, ...]]:
        """Every edge in NetworkX's order: by source node, then target, then key."""
        out: list[tuple[Any, ...]] = []
        for u, targets in self._succ.items():
            for v, keydict in targets.items():
                for k, attrs in keydict.items():
                    row: tuple[Any, ...] = (u, v)
                    if keys:
                        row += (k,)
                    if data:
                        row += (attrs,)
                    out.append(row)
        return out


def link_graph_from_state(state: Any) -> LinkGraph:
    """A :class:`LinkGraph` from :func:`~kgai_tui.core.model.build.graph_state`'s
    value, every order as stored (what ``disk.graph_from_state`` builds in NetworkX).

    Node attribute dicts are fresh per node; each edge's key dict is shared by its
    successor and predecessor entries, as in NetworkX.
    """
    nodes, succ, pred = state
    graph = LinkGraph()
    node, succ_map, pred_map = graph._node, graph._succ, graph._pred
    for n, k, nm, p in nodes:
        if n in node:
            node[n].update(kind=k, name=nm, props=p)
            continue
        node[n] = {"kind": k, "name": nm, "props": p}
        succ_map[n] = {}
        pred_map[n] = {}
    for src, targets in succ:
        out = succ_map[src]
        for dst, keys in targets:
            out[dst] = {key: {"created_by": by} for key, by in keys}
    for dst, sources in pred:
        into = pred_map[dst]
        for src in sources:
            into[src] = succ_map[src][dst]
    return graph
