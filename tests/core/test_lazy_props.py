"""An element's attributes at a slider moment compute its props blob only when the
props are read: every step of the slider lists the kind and name of every element
(10k at 1M decisions), and a blob per element cost most of the step."""

from __future__ import annotations

from kgai_tui.core.timeindex.lazy import NodeAttrs


def _node(calls: list[int]) -> NodeAttrs:
    def fill() -> str:
        calls.append(1)
        return "owner=ana"

    return NodeAttrs.with_props(fill, kind="svc", name="billing")


def test_kind_and_name_never_compute_the_props() -> None:
    calls: list[int] = []
    node = _node(calls)
    assert node.get("kind") == "svc" and node["name"] == "billing"
    assert "kind" in node and node.get("missing", "-") == "-"
    assert calls == []


def test_every_way_of_reading_the_props_sees_them_once() -> None:
    for read in (
        lambda n: n.get("props"),
        lambda n: n["props"],
        lambda n: "owner=ana" if "props" in n else None,
        lambda n: dict(n.items())["props"],
        lambda n: n.copy()["props"],
    ):
        calls: list[int] = []
        node = _node(calls)
        assert read(node) == "owner=ana"
        assert node.get("props") == "owner=ana" and calls == [1]
        assert node == {"kind": "svc", "name": "billing", "props": "owner=ana"}
