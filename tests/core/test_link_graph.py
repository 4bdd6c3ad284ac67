"""A write session's graph lays itself out exactly as NetworkX would (issue 17).

``record`` replays onto :class:`LinkGraph` instead of ``networkx.MultiDiGraph`` so
that it never imports NetworkX. The model stores the graph in NetworkX's node,
successor and predecessor orders, and every read that lists nodes, links or
in-links reads those orders back; a graph that differed in any order would change
answers. These properties run the same random operations on both graphs and
compare every order and every answer after each step, with NetworkX as the oracle.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.model.build import graph_state, link_rows
from kgai_tui.core.model.disk import as_networkx
from kgai_tui.core.replay.link_graph import LinkGraph, link_graph_from_state

NODES = ["a", "b", "c", "d", "e"]
KINDS = ["uses", "owns", "part_of"]

node_st = st.sampled_from(NODES)
kind_st = st.sampled_from(KINDS)
attr_st = st.sampled_from(["", "x", "y"])

op_st = st.one_of(
    st.tuples(st.just("node"), node_st, attr_st, attr_st),
    st.tuples(st.just("edge"), node_st, node_st, kind_st, attr_st),
    st.tuples(st.just("remove"), node_st, node_st, kind_st),
    # A random (u, v, key) rarely names an edge that exists: remove one that does.
    st.tuples(st.just("remove_nth"), st.integers(0, 1000)),
)


def resolve(op: tuple[Any, ...], oracle: Any) -> tuple[Any, ...]:
    """``op`` with ``remove_nth`` turned into the removal of an existing edge of
    ``oracle`` (the graph every other is compared with), if it has any."""
    if op[0] != "remove_nth":
        return op
    edges = list(oracle.edges(keys=True))
    if not edges:
        return ("remove", "a", "b", "uses")
    u, v, k = edges[op[1] % len(edges)]
    return ("remove", u, v, k)


def _apply(graph: Any, op: tuple[Any, ...]) -> Any:
    """One operation as the replay makes it, and its answer."""
    if op[0] == "node":
        _, n, kind, name = op
        graph.add_node(n, kind=kind, name=name, props="")
        return None
    if op[0] == "edge":
        _, u, v, k, by = op
        # The replay makes both ends nodes with full attributes before linking.
        for n in (u, v):
            if n not in graph:
                graph.add_node(n, kind="", name="", props="")
        return graph.add_edge(u, v, key=k, created_by=by)
    _, u, v, k = op
    if graph.has_edge(u, v, key=k):
        graph.remove_edge(u, v, key=k)
        return True
    try:
        graph.remove_edge(u, v, key=k)
    except Exception:
        return "refused"  # the replay tests first; both must refuse, not pass
    return False


def _views(graph: Any) -> tuple[Any, ...]:
    """Every order and read the replay, the model and the answers take of a graph."""
    nodes = list(graph.nodes(data=True))
    outs = {n: list(graph.out_edges(n, keys=True)) for n in graph}
    ins = {n: list(graph.in_edges(n, keys=True)) for n in graph}
    has = {
        (u, v, k): graph.has_edge(u, v, key=k)
        for u in NODES
        for v in NODES
        for k in KINDS
    }
    return (
        nodes,
        list(graph.nodes),
        len(graph),
        graph.number_of_nodes(),
        [n in graph for n in NODES],
        list(graph.edges(keys=True, data=True)),
        list(graph.edges()),
        outs,
        ins,
        has,
        graph_state(graph),
        link_rows(graph),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(op_st, max_size=40))
def test_every_order_matches_networkx(ops: list[tuple[Any, ...]]) -> None:
    """After every operation, both graphs answer and order everything alike."""
    ours, theirs = LinkGraph(), nx.MultiDiGraph()
    for op in ops:
        op = resolve(op, theirs)
        assert _apply(ours, op) == _apply(theirs, op)
        assert _views(ours) == _views(theirs)


@settings(max_examples=200, deadline=None)
@given(st.lists(op_st, max_size=40), st.lists(op_st, max_size=15))
def test_loaded_from_state_matches_networkx(
    before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]
) -> None:
    """A graph stored and loaded back (an update's start) goes on exactly like
    NetworkX's graph loaded from the same state (a read's start)."""
    seed = nx.MultiDiGraph()
    for op in before:
        _apply(seed, resolve(op, seed))
    state = graph_state(seed)
    ours = link_graph_from_state(state)
    theirs = as_networkx(link_graph_from_state(state))
    assert _views(ours) == _views(theirs) == _views(seed)
    for op in after:
        op = resolve(op, theirs)
        assert _apply(ours, op) == _apply(theirs, op)
    assert _views(ours) == _views(theirs)
