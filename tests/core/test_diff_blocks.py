"""Decision fields read a block at a time, and long arrays encoded a block at a time.

A wide ``diff`` reads its rows with ``decision_fields`` (a few queries, nothing
kept) and writes them as :class:`Blocks`. Both must give exactly what reading the
columns one value at a time gives, and what encoding the whole list gives: on the
replay, on the model on disk, at a cut (where some decisions had other fields),
and with rows a write session holds in memory.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from builders import write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_model import scratch
from test_replay_properties import Chooser, generate

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import (
    Blocks,
    marshal_indent,
    marshal_indent_chunks,
    plain,
)
from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.rows import DecRows
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.replay.projection_view import Field, ProjectionView

NAMES: tuple[Field, ...] = (
    "id",
    "title",
    "rationale",
    "author",
    "time",
    "lamport",
    "shapes",
)


def _one_by_one(
    p: ProjectionView, indices: list[int], names: tuple[Field, ...]
) -> list[Any]:
    """The oracle: each field read from its column, one value at a time."""
    columns = {
        "id": p.dec_id,
        "title": p.dec_title,
        "rationale": p.dec_rationale,
        "author": p.dec_author,
        "time": p.dec_time,
        "lamport": p.dec_lamport,
        "shapes": p.dec_shapes,
    }
    return [
        tuple(list(columns[n][i]) if n == "shapes" else columns[n][i] for n in names)
        for i in indices
    ]


def _asks(
    rnd: random.Random, size: int
) -> Iterator[tuple[list[int], tuple[Field, ...]]]:
    """Index lists in any order, with repeats, and field subsets in any order."""
    for _ in range(6):
        indices = [rnd.randrange(size) for _ in range(rnd.randint(0, 2 * size))]
        names = tuple(rnd.sample(NAMES, rnd.randint(1, len(NAMES))))
        yield indices, names


def _fields(
    p: ProjectionView, indices: list[int], names: tuple[Field, ...]
) -> list[Any]:
    return [
        tuple(list(v) if n == "shapes" else v for n, v in zip(names, row, strict=True))
        for row in p.decision_fields(indices, names)
    ]


def test_fields_equal_the_columns_now_and_at_every_cut() -> None:
    """On seeded stores: the replay's, the model's, and both time indices' views at
    each moment give the columns' values, and the model's view at a cut the same
    as the whole store's view (some of those decisions had other fields then)."""
    patched = shared = 0
    # Seeds 7, 15, 26, 28, 29 and 37 give an index that shares the model's rows.
    for seed in (0, 1, 2, 7, 15, 26, 28, 29, 37):
        rnd = random.Random(seed)
        gen = generate(Chooser(rnd=rnd), min_decisions=20, max_decisions=40)
        with scratch() as (root, cache):
            write_store(root, gen.files())
            engine = open_engine(root)
            index = engine.time_index  # saved: the model reads it next
            model = open_model(root, cache)
            whole, disk = engine.projection, model.projection
            assert len(whole.dec_id) == len(disk.dec_id)
            for indices, names in _asks(rnd, len(whole.dec_id)):
                want = _one_by_one(whole, indices, names)
                assert _fields(whole, indices, names) == want
                assert _fields(disk, indices, names) == want
            through = model.kept.time_index() if model.kept else None
            assert through is not None
            # An index whose decisions are the projection's reads them from the
            # model's rows (the other path: its own lists, as the replay's does).
            assert (through.shared is disk) is (index.shared is not None)
            shared += through.shared is disk
            for cut in TimeCursor(index).moments[::3]:
                a, b = index.at(cut), through.at(cut)
                patched += len(b.patched) if through.shared is disk else 0
                for indices, names in _asks(rnd, a.size) if a.size else ():
                    want = _one_by_one(a, indices, names)
                    assert _fields(a, indices, names) == want
                    assert _fields(b, indices, names) == want
            model.close()
    assert shared >= 4, shared
    assert patched, "no decision had other fields at a cut: the patch went untested"


def test_a_row_held_in_memory_wins_and_an_index_past_the_rows_is_refused() -> None:
    gen = generate(Chooser(rnd=random.Random(3)), min_decisions=10, max_decisions=12)
    with scratch() as (root, cache):
        write_store(root, gen.files())
        model = open_model(root, cache)
        rows = DecRows(model.db, len(model.projection.dec_id))
        titles = rows.column("title")
        before = titles[1]
        titles[2] = "held <here>"
        got = rows.fields([2, 1, 2], ("title", "id"))
        assert [t for t, _ in got] == ["held <here>", before, "held <here>"]
        with pytest.raises(IndexError):
            rows.fields([rows.base], ("id",))
        model.close()


_TEXT = st.text(alphabet=st.sampled_from('ab<>&\u2028\u2029\x07é"\\ \n'), max_size=6)
_ROW = st.fixed_dictionaries(
    {
        "id": _TEXT,
        "n": st.integers(-5, 5),
        "by": st.lists(st.dictionaries(_TEXT, _TEXT, max_size=2), max_size=2),
    }
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_ROW, max_size=12), st.lists(st.integers(0, 4), max_size=8), st.booleans()
)
def test_blocks_encode_as_the_list_they_stand_for(
    rows: list[dict[str, Any]], sizes: list[int], last: bool
) -> None:
    """Any split into blocks, empty ones included, gives the bytes of the list."""

    def make() -> Iterator[list[Any]]:
        at = 0
        for size in sizes:
            yield rows[at : at + size]
            at += size
        yield rows[at:]

    value = {"ok": True, "rows": Blocks(len(rows), make)}
    if not last:
        value["after"] = [1, "<"]
    assert b"".join(marshal_indent_chunks(value)) == marshal_indent(plain(value))
    assert plain(value)["rows"] == rows


def test_blocks_that_make_another_count_fail_loudly() -> None:
    short = Blocks(3, lambda: iter([[1], [2]]))
    with pytest.raises(ValueError, match="made 2 items of 3"):
        b"".join(marshal_indent_chunks({"rows": short}))


def test_format_epoch_is_rfc3339_utc_for_every_year() -> None:
    rnd = random.Random(11)
    low = int(datetime(1, 1, 1, tzinfo=UTC).timestamp())
    high = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp())
    for stamp in [low, high, 0, -1, *(rnd.randint(low, high) for _ in range(5000))]:
        when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=stamp)
        assert format_epoch(stamp) == when.strftime("%Y-%m-%dT%H:%M:%SZ").rjust(20, "0")


def _by_key(p: ProjectionView, indices: list[int]) -> list[int]:
    """The oracle: history order by its definition, one key tuple per decision."""

    def key(i: int) -> tuple[bool, int, int, str]:
        stamp = p.dec_time[i]
        return (stamp is None, stamp or 0, p.dec_lamport[i], p.dec_id[i])

    return sorted(indices, key=key)


def test_ranked_history_order_is_the_key_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many decisions are ranked by numpy (times and lamports, ids only where both
    tie): the order is the definition's, on the replay, the model and views at a
    cut, with ties on time and lamport and decisions with no time among them."""
    from kgai_tui.core.reads import kg

    monkeypatch.setattr(kg, "_RANKED", 2)
    ties = 0
    for seed in (0, 1, 2, 7, 15, 26):
        rnd = random.Random(seed)
        gen = generate(Chooser(rnd=rnd), min_decisions=20, max_decisions=40)
        with scratch() as (root, cache):
            write_store(root, gen.files())
            engine = open_engine(root)
            index = engine.time_index
            model = open_model(root, cache)
            views: list[ProjectionView] = [engine.projection, model.projection]
            views += [index.at(cut) for cut in TimeCursor(index).moments[::4]]
            for p in views:
                size = len(p.dec_id)
                for _ in range(4):
                    chosen = rnd.sample(range(size), rnd.randint(0, size))
                    want = _by_key(p, chosen)
                    assert kg.history_order(p, chosen) == want
                    keys = [(p.dec_time[i], p.dec_lamport[i]) for i in chosen]
                    ties += len(keys) - len(set(keys))
            model.close()
    assert ties, "no two decisions tied on time and lamport: the id order went untested"
