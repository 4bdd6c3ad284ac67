"""An update's graph read an element at a time ends exactly as one loaded whole.

:class:`LazyLinkGraph` answers from the stored rows until something needs the whole
graph, then loads it and replays what the session did. The graph the model writes
back (``graph_state``: every NetworkX order) and every answer on the way must be
those of a :class:`LinkGraph` loaded whole at the start, whenever the load comes:
never, in the middle, or at the first operation.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_link_graph import NODES, _apply, op_st, resolve

from kgai_tui.core.model.build import graph_state, link_rows
from kgai_tui.core.model.graph_log import apply_ops
from kgai_tui.core.model.lazy_graph import LazyLinkGraph
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.replay.link_graph import link_graph_from_state

PROBES = [*NODES, "zz"]


def _stored(ops: list[tuple[Any, ...]]) -> Any:
    """A stored graph state made by NetworkX from ``ops``."""
    seed = nx.MultiDiGraph()
    for op in ops:
        _apply(seed, resolve(op, seed))
    return graph_state(seed)


def _lazy(state: Any, fetched: list[str]) -> LazyLinkGraph:
    """A lazy graph over ``state``'s rows, recording which elements it fetched."""
    nodes = {n: (k, nm, p) for n, k, nm, p in state[0]}
    links: dict[str, list[tuple[str, str]]] = {}
    for src, targets in state[1]:
        links[src] = [(dst, key) for dst, keys in targets for key, _ in keys]

    def node(n: str) -> tuple[str, str, str] | None:
        fetched.append(n)
        return nodes.get(n)

    return LazyLinkGraph(
        len(nodes),
        node,
        lambda n: links.get(n, []),
        lambda: link_graph_from_state(state),
    )


def _logged(lazy: LazyLinkGraph, state: Any) -> Any:
    """The stored state with the session's log replayed, and the final attributes
    of the elements whose attributes changed (what the model's reader rebuilds)."""
    graph = link_graph_from_state(state)
    attrs = [
        ("attrs", n, dict(a))
        for n, a in dict.items(lazy._node)
        if lazy.stored.get(n) != (a.get("kind"), a.get("name"), a.get("props"))
    ]
    apply_ops(graph, [*lazy.ops, *attrs])
    return graph


def _answers(graph: Any) -> tuple[Any, ...]:
    """What the replay and the write checks ask without needing the whole graph."""
    return (
        [n in graph for n in PROBES],
        [n in graph.nodes for n in PROBES],
        [dict(graph.nodes[n]) if n in graph else None for n in PROBES],
        graph.number_of_nodes(),
        len(graph),
        [graph.has_edge(u, v, key="uses") for u in PROBES for v in PROBES],
    )


step_st = st.tuples(op_st, st.booleans())


@settings(max_examples=300, deadline=None)
@given(st.lists(op_st, max_size=30), st.lists(step_st, max_size=20), st.integers(0, 21))
def test_lazy_ends_as_loaded_whole(
    before: list[tuple[Any, ...]], steps: list[tuple[Any, bool]], load_at: int
) -> None:
    """Same answers at every step, same stored state at the end, whenever it loads
    (``load_at``: before that step; past the end: only to write back)."""
    state = _stored(before)
    fetched: list[str] = []
    lazy, whole = _lazy(state, fetched), link_graph_from_state(state)
    for i, (op, set_props) in enumerate(steps):
        if i == load_at:
            lazy.load()
        op = resolve(op, whole)
        assert _apply(lazy, op) == _apply(whole, op)
        if set_props and op[1] in whole:
            # flush_props writes an element's props straight into its attributes.
            lazy._node[op[1]]["props"] = whole._node[op[1]]["props"] = f"p{i}"
        assert _answers(lazy) == _answers(whole)
    # The log the update stores rebuilds the same graph, every order, whether
    # the session loaded the graph or not; the links it counts are the net change.
    logged = _logged(lazy, state)
    assert graph_state(logged) == graph_state(whole)
    assert [logged.in_edges(n, keys=True) for n in whole] == [
        whole.in_edges(n, keys=True) for n in whole
    ]
    start = set(link_rows(link_graph_from_state(state)))
    assert lazy.added_links == set(link_rows(whole)) - start
    assert lazy.removed_links == start - set(link_rows(whole))
    lazy.load()
    assert lazy.complete
    assert graph_state(lazy) == graph_state(whole)
    assert link_rows(lazy) == link_rows(whole)
    assert list(lazy.nodes(data=True)) == list(whole.nodes(data=True))
    assert [lazy.in_edges(n, keys=True) for n in whole] == [
        whole.in_edges(n, keys=True) for n in whole
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(op_st, max_size=30), st.lists(op_st, max_size=10))
def test_iteration_loads_the_graph(
    before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]
) -> None:
    """Anything that walks the graph sees all of it, in NetworkX's orders."""
    state = _stored(before)
    lazy, whole = _lazy(state, []), link_graph_from_state(state)
    for op in after:
        op = resolve(op, whole)
        _apply(lazy, op)
        _apply(whole, op)
    assert list(lazy) == list(whole)
    lazy2, whole2 = _lazy(state, []), link_graph_from_state(state)
    for op in after:
        op = resolve(op, whole2)
        _apply(lazy2, op)
        _apply(whole2, op)
    assert lazy2.edges(keys=True, data=True) == whole2.edges(keys=True, data=True)


def test_a_decision_on_stored_elements_reads_only_them() -> None:
    """The point of it: shaping two stored elements fetches those two, loads
    nothing, and leaves the graph unchanged (so the model keeps its stored value)."""
    ops = [("node", n, "feature", n.upper()) for n in NODES]
    ops.append(("edge", "a", "b", "uses", "h1"))
    state = _stored(ops)
    fetched: list[str] = []
    loads: list[int] = []
    lazy = _lazy(state, fetched)
    real_state = lazy._state
    lazy._state = lambda: loads.append(1) or real_state()
    for n in ("b", "c"):
        if n not in lazy:
            lazy.add_node(n, kind="", name="", props="")
    assert lazy.has_edge("a", "b", key="uses")
    assert not lazy.has_edge("b", "a", key="uses")
    assert sorted(set(fetched)) == ["a", "b", "c"]
    assert loads == [] and not lazy.complete
    assert not lazy.added_links and not lazy.removed_links
    assert lazy.number_of_nodes() == len(NODES)
    assert lazy.stored == {n: ("feature", n.upper(), "") for n in ("a", "b", "c")}


def test_rows_the_state_lacks_are_corruption() -> None:
    """An element row with no node in the stored state stops the load: the model
    is then rebuilt, never believed."""
    state = _stored([("node", "a", "feature", "A")])
    lazy = LazyLinkGraph(
        1,
        lambda n: ("feature", n.upper(), "") if n in ("a", "b") else None,
        lambda n: [],
        lambda: link_graph_from_state(state),
    )
    assert "b" in lazy
    with pytest.raises(ModelCorruptError):
        lazy.load()
    wrong_count = LazyLinkGraph(
        2, lambda n: None, lambda n: [], lambda: link_graph_from_state(state)
    )
    with pytest.raises(ModelCorruptError):
        wrong_count.load()


@pytest.mark.parametrize("load_first", [False, True])
def test_links_counted_net_of_each_other(load_first: bool) -> None:
    """A stored link removed then added again, or a new one added then removed,
    is no change: the update must neither delete nor insert its row."""
    state = _stored(
        [("node", n, "feature", n.upper()) for n in NODES]
        + [("edge", "a", "b", "uses", "h1")]
    )
    lazy = _lazy(state, [])
    if load_first:
        lazy.load()
    lazy.remove_edge("a", "b", key="uses")
    lazy.add_edge("a", "b", key="uses", created_by="h2")
    lazy.add_edge("c", "d", key="owns", created_by="h3")
    lazy.remove_edge("c", "d", key="owns")
    lazy.add_edge("d", "e", key="uses", created_by="h4")
    assert lazy.added_links == {("d", "e", "uses")}
    assert lazy.removed_links == set()
    lazy.remove_edge("a", "b", key="uses")
    assert lazy.removed_links == {("a", "b", "uses")}
