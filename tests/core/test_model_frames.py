"""Heads and links at a cut from checkpointed change logs (issue 17).

:mod:`kgai_tui.core.model.frames` stores many step functions as one log of changes
cut in blocks with a state each; a cut must give, for every entity, exactly what a
bisection of that entity's own steps gives (the last step at or before the cut, a
later step winning at an equal time), after a build with blocks of any size and
after appends that fill a block and start new ones. The moments' own tests
(``test_model_moments.py``) then hold whole ``as-of`` answers to a replay, here
also with blocks of two changes, so that every cut crosses a block boundary.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_model_moments import (
    _from_model,
    _reference,
    appended_in_any_split,
    compare_every_cut,
)
from test_replay_properties import Generated, stores

from kgai_tui.core.model import frames
from kgai_tui.core.model.frames import (
    HEADS,
    LINKS,
    UNSET,
    append_changes,
    build_frames,
    values_at,
    write_frames,
)
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.model.schema import DDL

# Per entity: its steps, (time, value), times not decreasing.
Steps = list[list[tuple[int, int]]]


@contextmanager
def small_blocks(build: int, append: int) -> Iterator[None]:
    """Blocks of ``build`` changes from a build and ``append`` from appends."""
    saved = frames.block_size, frames.APPEND_BLOCK
    frames.block_size = lambda _entities: build  # type: ignore[assignment]
    frames.APPEND_BLOCK = append  # type: ignore[misc]
    try:
        yield
    finally:
        frames.block_size, frames.APPEND_BLOCK = saved  # type: ignore[misc]


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.executescript(DDL)
    return db


def _expected(steps: Steps, cut: int) -> list[int]:
    """Each entity's value by bisecting its own steps."""
    out = []
    for s in steps:
        i = bisect_right([t for t, _ in s], cut) - 1
        out.append(UNSET if i < 0 else s[i][1])
    return out


def _got(db: sqlite3.Connection, channel: int, cut: int, n: int) -> list[int]:
    values = list(values_at(db, channel, cut))
    assert len(values) <= n or all(v == UNSET for v in values[n:])
    return (values + [UNSET] * n)[:n]


def _build(db: sqlite3.Connection, channel: int, steps: Steps) -> None:
    owners = [i for i, s in enumerate(steps) for _ in s]
    times = [t for s in steps for t, _ in s]
    values = [v for s in steps for _, v in s]
    if times:
        write_frames(
            db,
            build_frames(
                channel,
                len(steps),
                np.array(times, dtype=np.int64),
                np.array(owners, dtype=np.int64),
                np.array(values, dtype=np.int64),
            ),
        )


@st.composite
def histories(draw: Any) -> tuple[Steps, list[list[tuple[int, int, int]]]]:
    """Steps per entity (times may repeat: the later step wins), then appends: each
    a batch of changes at one time at or after every earlier one."""
    n = draw(st.integers(1, 8))
    steps: Steps = []
    for _ in range(n):
        times = sorted(draw(st.lists(st.integers(-5, 40), max_size=6)))
        steps.append([(t, draw(st.integers(-3, 9))) for t in times])
    top = max((t for s in steps for t, _ in s), default=-5)
    batches = []
    for _ in range(draw(st.integers(0, 6))):
        top += draw(st.integers(0, 3))
        entities = draw(st.lists(st.integers(0, n + 2), min_size=1, max_size=4))
        batches.append([(top, e, draw(st.integers(-3, 9))) for e in entities])
    return steps, batches


@settings(max_examples=150, deadline=None)
@given(
    history=histories(),
    build=st.integers(1, 5),
    append=st.integers(1, 5),
)
def test_every_cut_is_each_entitys_own_bisection(
    history: tuple[Steps, list[list[tuple[int, int, int]]]], build: int, append: int
) -> None:
    steps, batches = history
    others = [list(s) for s in steps[::-1]]
    with small_blocks(build, append):
        db = _db()
        _build(db, HEADS, steps)
        _build(db, LINKS, others)  # another channel beside it never mixes in
        cuts = range(-7, 60)
        for cut in cuts:
            assert _got(db, HEADS, cut, len(steps)) == _expected(steps, cut), cut
        for batch in batches:
            append_changes(db, HEADS, batch)
            for t, e, v in batch:
                while e >= len(steps):
                    steps.append([])
                steps[e].append((t, v))
            for cut in cuts:
                assert _got(db, HEADS, cut, len(steps)) == _expected(steps, cut), cut
        for cut in cuts:
            assert _got(db, LINKS, cut, len(others)) == _expected(others, cut)


def test_an_append_before_the_last_stored_change_is_refused() -> None:
    db = _db()
    _build(db, HEADS, [[(5, 1), (9, 2)]])
    with pytest.raises(ModelCorruptError):
        append_changes(db, HEADS, [(8, 0, 3)])
    with pytest.raises(ModelCorruptError):
        append_changes(db, HEADS, [(12, 0, 3), (11, 0, 4)])
    append_changes(db, HEADS, [(9, 0, 7)])  # an equal time is after: it wins
    assert list(values_at(db, HEADS, 9)) == [7]


def test_a_read_touches_one_state_and_one_block() -> None:
    """Whatever the history's length, a cut reads one block of changes."""
    db = _db()
    steps: Steps = [[(t, t) for t in range(e, 3000, 7)] for e in range(7)]
    with small_blocks(100, 100):
        _build(db, HEADS, steps)
    blocks = db.execute("SELECT count(*) FROM at_block").fetchone()[0]
    assert blocks == 30
    read: list[str] = []
    db.set_trace_callback(read.append)
    assert _got(db, HEADS, 1234, 7) == _expected(steps, 1234)
    assert sum("FROM at_block WHERE id = " in q for q in read) == 1
    assert sum("FROM at_state WHERE id = " in q for q in read) == 1


@settings(max_examples=15, deadline=None)
@given(gen=stores(), data=st.data())
def test_as_of_with_blocks_of_two_changes_is_still_the_replay(
    gen: Generated, data: st.DataObject
) -> None:
    """The moments' whole answers, with every block two changes long (a build's and
    an append's), so that cuts fall inside, between and across blocks."""
    with small_blocks(2, 2):
        for root, cache, _last in appended_in_any_split(gen, data):
            compare_every_cut(root, cache, _from_model, _reference)


def test_demo_store_blocks_of_one_change(tmp_path: Path) -> None:
    from test_model_moments import _keep, _stamps

    from kgai_tui.core.model.open import open_model
    from kgai_tui.demo import DEMO_STORE

    with small_blocks(1, 1):
        cache = tmp_path / "cache"
        assert _keep(DEMO_STORE, cache)
        model = open_model(DEMO_STORE, cache)
        try:
            count = model.db.execute("SELECT count(*) FROM at_block").fetchone()[0]
            assert count > 20
            for stamp in _stamps(DEMO_STORE):
                assert _from_model(model, stamp) == _reference(DEMO_STORE, stamp)
        finally:
            model.close()
