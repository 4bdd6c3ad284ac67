"""The packed shapes and SUPERSEDES lists answer what a list of lists grown the
replay's way would: same entries, same order, each value once, every way a read
asks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.replay.short_lists import IndexLists, NameLists

# A program: new decisions (with initial indices) and adds to existing ones.
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("new"), st.lists(st.integers(0, 40), max_size=3)),
        st.tuples(st.just("add"), st.integers(0, 60), st.integers(0, 40)),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(_steps, st.booleans())
def test_equals_lists_of_lists(steps: list[tuple[object, ...]], names: bool) -> None:
    """Indices, or element ids (``e<n>``: the same program over strings)."""
    packed: IndexLists | NameLists = NameLists() if names else IndexLists()
    if names:
        steps = [
            ("new", [f"e{v}" for v in step[1]])  # type: ignore[attr-defined]
            if step[0] == "new"
            else ("add", step[1], f"e{step[2]}")
            for step in steps
        ]
    plain: list[list[object]] = []
    for step in steps:
        if step[0] == "new":
            values = list(step[1])  # type: ignore[call-overload]
            packed.append(values)  # type: ignore[arg-type]
            plain.append(list(dict.fromkeys(values)))
        elif plain:
            i = int(step[1]) % len(plain)  # type: ignore[call-overload]
            v = step[2]
            added = v not in plain[i]
            if added:
                plain[i].append(v)
            assert packed.add(i, v) is added  # type: ignore[arg-type]
    want = [tuple(x) for x in plain]
    assert len(packed) == len(want)
    assert list(packed) == want
    assert [packed[i] for i in range(len(want))] == want
    assert [packed[-i] for i in range(1, len(want) + 1)] == [
        want[-i] for i in range(1, len(want) + 1)
    ]
    assert packed[1:-1:2] == want[1:-1:2]
    assert packed[:] == want


def test_out_of_range_is_an_index_error() -> None:
    packed = IndexLists()
    packed.append([3, 4])
    assert packed[0] == (3, 4) and packed[-1] == (3, 4)
    with pytest.raises(IndexError):
        packed[1]
    with pytest.raises(IndexError):
        packed[-2]
    with pytest.raises(IndexError):
        packed.add(1, 0)


def test_zero_is_an_index_not_none() -> None:
    """Decision 0 is a real index: superseding it must not read as naming none."""
    packed = IndexLists()
    packed.append([])
    assert packed[0] == ()
    assert packed.add(0, 0)
    assert packed[0] == (0,)
    assert not packed.add(0, 0)
