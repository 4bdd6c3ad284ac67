"""A NetworkX multigraph that never points back at itself.

NetworkX keeps the views it hands out (``graph.nodes``, ``graph.edges``,
``graph.in_edges``, the degree views, ``succ``, ``pred``...) in the graph's own
``__dict__``, and each view holds the graph: the first ``graph.edges`` makes the
graph a reference cycle, freed only by a full collection. An as-of view's graph
is built once per slider step in a process that freezes its heap
(:mod:`kgai_tui.core.heap`), where a cycle is never collected at all; this graph
makes a fresh view on each access instead (one small object) and stays acyclic.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import networkx as nx

__all__ = ["AcyclicGraph"]

if TYPE_CHECKING:
    _Graph = nx.MultiDiGraph[str]
else:  # NetworkX's classes take no type arguments at run time
    _Graph = nx.MultiDiGraph


class AcyclicGraph(_Graph):
    """A :class:`networkx.MultiDiGraph` whose views are made on each access."""


# Base classes first, so the nearest class's view wins (as attribute lookup would).
for _klass in reversed(nx.MultiDiGraph.__mro__):
    for _name, _found in vars(_klass).items():
        if isinstance(_found, cached_property):
            _make: Any = _found.func
            setattr(AcyclicGraph, _name, property(_make, doc=_found.__doc__))
