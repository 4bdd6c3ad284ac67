"""A write session's element graph, read from the model an element at a time.

An update of the read model (``record``, ``resolve-conflict``, ``import adr``, a
catch-up after a pull) replays a few events on the stored graph. Loading the whole
graph first costs what the graph weighs, not what the events touch: ~0.1 s at 1M
decisions (10k elements: one 1.8 MB value decoded, 30k dicts built) and ~1 s at
10M. Most decisions only shape elements that exist and add no link, and leave the
graph as it was.

:class:`LazyLinkGraph` answers the replay's questions (is this an element, which
links leave it, its attributes) from the element and link rows, one element at a
time, and keeps a log of what it adds and removes. The first question that needs
the whole graph (iteration, in-edges, the stored state to write back) loads it,
replays the log on it, and from then on the graph is a plain :class:`LinkGraph`,
in NetworkX's orders exactly as if it had been loaded whole at the start: the
orders only depend on the stored state and the sequence of additions and removals,
both of which it has. ``tests/core/test_lazy_graph.py`` checks that against
:class:`LinkGraph` operation by operation.

The log is kept for the whole session, loaded or not: the update stores it
(:mod:`kgai_tui.core.model.graph_log`) instead of the graph, with the links it added
and removed, net of each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kgai_tui.core.model.graph_log import Op, apply_ops
from kgai_tui.core.model.rows import ModelCorruptError, storable
from kgai_tui.core.replay.link_graph import Attrs, KeyDict, LinkGraph, NodeMap

__all__ = ["LazyLinkGraph"]

#: ``(kind, name, props)`` of a stored element, or ``None``.
NodeFetch = Callable[[str], tuple[str, str, str] | None]
#: ``(dst, key)`` of every stored link from an element.
LinkFetch = Callable[[str], list[tuple[str, str]]]
#: ``(from, to, kind)`` of a link.
Link = tuple[str, str, str]


class _Nodes(dict[str, Attrs]):
    """``_node``: the elements fetched or added so far; asks the rows for others."""

    __slots__ = ("_graph",)

    def __init__(self, graph: LazyLinkGraph) -> None:
        super().__init__()
        self._graph = graph

    def __contains__(self, n: object) -> bool:
        if dict.__contains__(self, n):
            return True
        graph = self._graph
        return not graph.complete and isinstance(n, str) and graph._fetch(n)

    def __missing__(self, n: str) -> Attrs:
        graph = self._graph
        if not graph.complete and graph._fetch(n):
            return dict.__getitem__(self, n)
        raise KeyError(n)


class _Succ(dict[str, dict[str, KeyDict]]):
    """``_succ``: each fetched element's stored links, for membership tests only
    (their order and attributes come from the stored state once it is loaded)."""

    __slots__ = ("_graph",)

    def __init__(self, graph: LazyLinkGraph) -> None:
        super().__init__()
        self._graph = graph

    def __contains__(self, n: object) -> bool:
        return dict.__contains__(self, n) or n in self._graph._node

    def __missing__(self, n: str) -> dict[str, KeyDict]:
        graph = self._graph
        if graph.complete or n not in graph._node:
            raise KeyError(n)
        out: dict[str, KeyDict] = {}
        for dst, key in graph._links(n):
            out.setdefault(dst, {})[key] = {}
        dict.__setitem__(self, n, out)
        return out


class _LazyNodeMap(NodeMap):
    """``graph.nodes``: a lookup fetches one element; iterating loads the graph."""

    __slots__ = ("_lazy",)

    def __init__(self, graph: LazyLinkGraph) -> None:
        super().__init__(graph._node)
        self._lazy = graph

    def __iter__(self) -> Iterator[str]:
        self._lazy.load()
        return super().__iter__()

    def __len__(self) -> int:
        return self._lazy.number_of_nodes()

    def __call__(self, data: bool = False) -> Any:
        self._lazy.load()
        return super().__call__(data)


class LazyLinkGraph(LinkGraph):
    """A :class:`LinkGraph` over the model's rows, loaded whole only when needed.

    ``stored(n)`` is an element's stored ``(kind, name, props)`` (what it was
    before this session), for the elements fetched so far (every element once
    loaded); ``complete`` turns true once the whole graph is loaded. ``ops`` is
    what the session did, ``added_links`` and ``removed_links`` the links it added
    and removed (a link added then removed again is in neither).
    """

    def __init__(
        self,
        count: int,
        node: NodeFetch,
        links: LinkFetch,
        state: Callable[[], LinkGraph],
    ) -> None:
        """``count`` stored elements; ``node`` and ``links`` read one element's row
        and links; ``state`` gives the stored graph whole."""
        super().__init__()
        self._node = _Nodes(self)
        self._succ = _Succ(self)
        self._adj = self._succ
        self.complete = False
        self._count = count
        self._added = 0
        self._node_row = node
        self._links = links
        self._state = state
        self.ops: list[Op] = []
        self._absent: set[str] = set()
        self.stored: dict[str, tuple[str, str, str]] = {}
        self.added_links: set[Link] = set()
        self.removed_links: set[Link] = set()

    def _fetch(self, n: str) -> bool:
        """Fetch element ``n`` into ``_node`` if it is stored; whether it is."""
        if n in self._absent or not storable(n):
            return False
        row = self._node_row(n)
        if row is None:
            self._absent.add(n)
            return False
        self._keep(n, row)
        return True

    def _keep(self, n: str, row: tuple[str, str, str]) -> None:
        kind, name, props = row
        self.stored[n] = row
        dict.__setitem__(self._node, n, {"kind": kind, "name": name, "props": props})

    def prefetch(self, rows: dict[str, tuple[str, str, str] | None]) -> None:
        """Take the stored rows of several elements at once (``None``: not
        stored), as :meth:`_fetch` would one by one; elements held already, or
        once the graph is loaded, are left as they are."""
        if self.complete:
            return
        for n, row in rows.items():
            if dict.__contains__(self._node, n) or n in self._absent:
                continue
            if row is None:
                self._absent.add(n)
            else:
                self._keep(n, row)

    def load(self) -> None:
        """Load the whole graph and replay this session's additions and removals
        on it; keep every attribute set since (the session's current values)."""
        if self.complete:
            return
        full = self._state()
        if full.number_of_nodes() != self._count:
            raise ModelCorruptError("the graph and the element count differ")
        self.stored = {
            n: (a.get("kind", ""), a.get("name", ""), a.get("props", ""))
            for n, a in full.nodes(data=True)
        }
        apply_ops(full, self.ops)
        try:
            for n, attrs in dict.items(self._node):
                full.nodes[n].update(attrs)
        except KeyError as exc:  # the rows hold an element the state lacks
            raise ModelCorruptError("the graph and its rows differ") from exc
        self.complete = True
        # The replay holds ``_node`` and ``_succ`` themselves: refill, keep them.
        dict.clear(self._node)
        dict.update(self._node, full._node)
        dict.clear(self._succ)
        dict.update(self._succ, full._succ)
        self._pred = full._pred

    # ------------------------------------------------------------------ nodes

    @property
    def nodes(self) -> NodeMap:
        """The nodes; a lookup fetches one element, iteration loads them all."""
        return NodeMap(self._node) if self.complete else _LazyNodeMap(self)

    def __iter__(self) -> Iterator[str]:
        """Nodes in NetworkX's order (loads the graph)."""
        self.load()
        return super().__iter__()

    def __len__(self) -> int:
        """How many nodes (no load: the stored count plus the ones added)."""
        return self.number_of_nodes()

    def number_of_nodes(self) -> int:
        """How many nodes (no load: the stored count plus the ones added)."""
        if self.complete:
            return len(self._node)
        return self._count + self._added

    def add_node(self, n: str, **attr: Any) -> None:
        """As :meth:`LinkGraph.add_node`; a new node is logged."""
        if n in self._node:
            self._node[n].update(attr)
            return
        if n is None:
            raise ValueError("None cannot be a node")
        self.ops.append(("node", n, dict(attr)))
        if self.complete:
            super().add_node(n, **attr)
            return
        dict.__setitem__(self._node, n, dict(attr))
        dict.__setitem__(self._succ, n, {})
        self._added += 1

    # ------------------------------------------------------------------ edges

    def add_edge(self, u: str, v: str, key: str, **attr: Any) -> str:
        """As :meth:`LinkGraph.add_edge`; logged, and counted when new."""
        new = not self.has_edge(u, v, key)
        if self.complete:
            self.ops.append(("edge", u, v, key, dict(attr)))
            super().add_edge(u, v, key, **attr)
        else:
            for n in (u, v):
                if n not in self._node:
                    self.add_node(n)
            self.ops.append(("edge", u, v, key, dict(attr)))
            keydict = self._succ[u].setdefault(v, {})
            keydict.setdefault(key, {}).update(attr)
        if new:
            link = (u, v, key)
            if link in self.removed_links:
                self.removed_links.discard(link)
            else:
                self.added_links.add(link)
        return key

    def has_edge(self, u: str, v: str, key: str) -> bool:
        """Whether the edge ``u -> v`` under ``key`` exists (one element's links)."""
        if self.complete:
            return super().has_edge(u, v, key)
        if u not in self._node:
            return False
        return key in self._succ[u].get(v, ())

    def remove_edge(self, u: str, v: str, key: str) -> None:
        """As :meth:`LinkGraph.remove_edge` (``KeyError`` when absent); logged."""
        if self.complete:
            super().remove_edge(u, v, key)
        else:
            out = self._succ[u]
            keydict = out[v]
            del keydict[key]
            if not keydict:
                del out[v]
        self.ops.append(("remove", u, v, key))
        link = (u, v, key)
        if link in self.added_links:
            self.added_links.discard(link)
        else:
            self.removed_links.add(link)

    def out_edges(self, n: str, keys: bool = False) -> list[tuple[str, ...]]:
        """As :meth:`LinkGraph.out_edges` (loads the graph: order matters)."""
        self.load()
        return super().out_edges(n, keys)

    def in_edges(self, n: str, keys: bool = False) -> list[tuple[str, ...]]:
        """As :meth:`LinkGraph.in_edges` (loads the graph)."""
        self.load()
        return super().in_edges(n, keys)

    def edges(self, keys: bool = False, data: bool = False) -> list[tuple[Any, ...]]:
        """As :meth:`LinkGraph.edges` (loads the graph)."""
        self.load()
        return super().edges(keys, data)
