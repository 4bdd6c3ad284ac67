"""The lazily unpacked per-element shapes index reads as the dict it replaces."""

from __future__ import annotations

import itertools
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.replay.element_shapes import Packed, ShapesByElement

SHAPES = st.dictionaries(
    st.sampled_from([f"el_{i}" for i in range(12)]),
    st.dictionaries(st.integers(0, 50), st.booleans(), max_size=6),
    max_size=8,
)


def pack(shapes: dict[str, dict[int, bool]]) -> Packed:
    """The cache's columns, as Projection.to_state writes them."""
    counts = array("q", (len(s) for s in shapes.values()))
    decs = array("q", itertools.chain.from_iterable(shapes.values()))
    auth = bytes(itertools.chain.from_iterable(s.values() for s in shapes.values()))
    return list(shapes), counts.tobytes(), decs.tobytes(), auth


@settings(max_examples=200, deadline=None)
@given(SHAPES)
def test_it_reads_as_the_dict_it_was_packed_from(
    shapes: dict[str, dict[int, bool]],
) -> None:
    lazy = ShapesByElement(pack(shapes))
    assert len(lazy) == len(shapes) and list(lazy) == list(shapes)
    assert lazy.packed() == pack(shapes)  # untouched: still its columns
    for eid in reversed(list(shapes)):  # any order of first reads
        assert eid in lazy
        assert lazy[eid] == shapes[eid]
        assert list(lazy[eid]) == list(shapes[eid])  # creation order kept
    assert "el_missing" not in lazy and lazy.get("el_missing") is None
    assert dict(lazy.items()) == shapes


@settings(max_examples=100, deadline=None)
@given(SHAPES, st.integers(0, 60), st.booleans())
def test_writes_behave_as_on_a_dict(
    shapes: dict[str, dict[int, bool]], idx: int, authority: bool
) -> None:
    lazy = ShapesByElement(pack(shapes))
    plain = {e: dict(s) for e, s in shapes.items()}
    for target in (lazy, plain):
        target.setdefault("el_new", {})[idx] = authority
        if "el_0" in target:
            target["el_0"][idx] = authority
    assert list(lazy) == list(plain) and dict(lazy.items()) == plain
    assert lazy.packed() is None  # read or written: no longer its columns


@pytest.mark.parametrize(
    "packed",
    [
        (["el_a"], b"", b"", b""),  # a count missing
        (["el_a"], array("q", [2]).tobytes(), array("q", [1]).tobytes(), b"\x01"),
        (("el_a",), array("q", [0]).tobytes(), b"", b""),  # not a list
        (["el_a", "el_a"], array("q", [0, 0]).tobytes(), b"", b""),
    ],
)
def test_columns_that_do_not_match_are_refused(packed: Packed) -> None:
    with pytest.raises(ValueError):
        ShapesByElement(packed)
