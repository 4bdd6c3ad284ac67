"""The timeline at a cut through the model (its present cut down by the time index)
equals the walk over the whole store's view at the same cut, at every moment, for
every filter: order, heads, filter choices, kept rows and their times."""

from __future__ import annotations

import itertools
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from test_time_index import _random_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import ModelEngine, open_model, peek_model
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.reads.timeline import timeline_columns, timeline_select
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.demo import DEMO_STORE


def _named(p: ProjectionView, rows: Any) -> list[str]:
    return [p.dec_id[i] for i in rows]


def _timeline(p: ProjectionView) -> dict[str, Any]:
    """Every answer of the timeline at one view, decisions named by id."""
    v = KgView(p)
    columns = timeline_columns(v)
    out: dict[str, Any] = {
        "order": _named(p, columns.order),
        "heads": sorted(_named(p, columns.heads)),
        "choices": (columns.writers, columns.authors, columns.kinds),
    }
    statuses = (None, "head", "superseded", "dead", "nonsense")
    writers = (None, *columns.writers[:2], "nobody")
    authors = (None, *columns.authors[:2])
    kinds = (None, *columns.kinds[:2])
    for filters in itertools.product(writers, authors, kinds, statuses):
        rows, stamps = timeline_select(v, columns, filters)
        out[repr(filters)] = (_named(p, rows), list(stamps))
    return out


def _opened(root: Path) -> tuple[TimeCursor, ModelEngine]:
    """The whole store's cursor and the model, its time index saved."""
    _save_index(root)
    whole = TimeCursor.of_store(open_engine(root))
    model = peek_model(root)
    assert model is not None
    return whole, model


def _save_index(root: Path) -> None:
    """Build the model of the log at ``root`` and save its time index."""
    open_model(root).close()
    model = peek_model(root)
    assert model is not None
    try:
        model.time_index()
    finally:
        model.close()


@pytest.mark.parametrize("seed", range(10))
def test_the_timeline_at_every_moment_equals_the_walk(
    tmp_path: Path, seed: int
) -> None:
    _random_store(tmp_path, seed, 70, hostile=False)
    whole, model = _opened(tmp_path / f"r{seed}")
    try:
        index = model.time_index()
        assert index is not None and index.shared is model.projection
        cursor = TimeCursor(index)
        assert cursor.moments == whole.moments
        cuts = [whole.moments[0] - timedelta(seconds=1), *whole.moments]
        for cut in cuts:
            at_model, at_whole = cursor.at(cut), whole.at(cut)
            assert at_model.timeline_reads is not None, "read from the model"
            assert at_whole.timeline_reads is None, "walked"
            assert _timeline(at_model) == _timeline(at_whole), cut
    finally:
        model.close()


def test_the_demo_timeline_at_every_moment_equals_the_walk(tmp_path: Path) -> None:
    demo = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    whole, model = _opened(demo)
    try:
        index = model.time_index()
        assert index is not None
        cursor = TimeCursor(index)
        for cut in whole.moments:
            assert _timeline(cursor.at(cut)) == _timeline(whole.at(cut)), cut
    finally:
        model.close()


@pytest.mark.parametrize("damage", ["truncate", "flip", "other-log", "missing"])
def test_a_damaged_or_foreign_time_index_is_built_again_from_a_replay(
    tmp_path: Path, damage: str
) -> None:
    """Only an intact index of exactly the model's log is shared with the model:
    anything else is built again from a replay of the log (never the engine
    cache: nothing but the index file changes in the cache) and saved, and the
    model reads the saved one: the whole store's moments and views."""
    from kgai_tui.core.engine import open as engine_open
    from kgai_tui.core.store.cache_file import seal_path, time_index_path

    _random_store(tmp_path, 3, 40, hostile=False)
    root = tmp_path / "r3"
    _opened(root)[1].close()
    path = time_index_path(root)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        at = len(data) - 100
        path.write_bytes(data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :])
    elif damage == "missing":
        path.unlink()
    else:  # a valid index, saved for the log with one line more than it holds
        shard = sorted((root / "log").glob("*.ndjson"))[0]
        lines = shard.read_bytes().splitlines(keepends=True)
        with open(shard, "ab") as f:
            f.write(sorted((root / "log").glob("*.ndjson"))[1].read_bytes())
        _save_index(root)
        shard.write_bytes(b"".join(lines))
        model = peek_model(root)
        assert model is None  # the model is of the longer log: bring it down
        open_model(root).close()
    (path.parent / "engine.bin").unlink(missing_ok=True)
    damaged = path.read_bytes() if path.exists() else b""
    cache = sorted(p for p in path.parent.rglob("*") if not p.name.endswith("-shm"))
    index = (path, seal_path(path))  # the index and its seal: written together
    before = {p: p.stat().st_mtime_ns for p in cache if p.is_file() and p not in index}
    opened: list[Any] = []
    model = peek_model(root)
    assert model is not None
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(engine_open, "open_engine", lambda *a, **_: opened.append(a))
            cursor = TimeCursor.of_store(model)
        assert cursor is not None and opened == [], "a replay built it, no open"
        whole = TimeCursor.of_store(open_engine(root))
        assert list(cursor.moments) == list(whole.moments)
        cut = cursor.moments[len(cursor.moments) // 2]
        assert _timeline(cursor.at(cut)) == _timeline(whole.at(cut))
    finally:
        model.close()
    assert path.read_bytes() != damaged
    again = peek_model(root)
    assert again is not None
    try:  # the saved index is read as saved, through the model
        from kgai_tui.core.timeindex.cache import saved_time_index

        shards = [[s["print"], s["events"]] for s in again.shard_states]
        assert (
            saved_time_index(root, path, shards, again.projection, root / "log")
            is not None
        )
    finally:
        again.close()
    after = {p: p.stat().st_mtime_ns for p in path.parent.rglob("*") if p.is_file()}
    assert not (path.parent / "engine.bin").exists()
    assert {p: t for p, t in after.items() if p in before} == before


@pytest.mark.parametrize("seed", range(4))
def test_a_hostile_log_is_read_through_the_model_with_the_index_s_own_columns(
    tmp_path: Path, seed: int
) -> None:
    """Times that are not RFC3339 and ids the gate refuses keep the index from
    sharing the projection's columns; through the model it keeps its own, and
    every moment still reads as the whole store's (walked, both)."""
    from kgai_tui.core.reads.as_of import as_of_obj

    _random_store(tmp_path, seed, 70, hostile=True)
    whole, model = _opened(tmp_path / f"r{seed}")
    try:
        index = model.time_index()
        assert index is not None
        cursor = TimeCursor(index)
        assert cursor.moments == whole.moments
        for cut in whole.moments:
            at_model, at_whole = cursor.at(cut), whole.at(cut)
            if index.shared is None:
                assert at_model.timeline_reads is None, "its own columns: walked"
            assert as_of_obj(at_model, cut) == as_of_obj(at_whole, cut)
            assert _timeline(at_model) == _timeline(at_whole), cut
    finally:
        model.close()


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_slider_shows_the_present_exactly_where_it_is_the_store_as_of_then(
    tmp_path: Path, seed: int, hostile: bool
) -> None:
    """From the latest recorded moment on, when no event was left out, the
    slider's cursor shows the store now instead of building a view (its first
    step back from now costs nothing); it reads there as the whole store's view
    at the same cut, and anywhere else it builds the view."""
    from kgai_tui.core.model.moments_write import engine_prints
    from kgai_tui.core.reads.as_of import as_of_obj

    _random_store(tmp_path, seed, 70, hostile=hostile)
    root = tmp_path / f"r{seed}"
    whole, model = _opened(root)
    if not model.moments_whole():  # as the detached build leaves them
        replay = open_engine(root)
        model.keep_moments(replay.time_index, engine_prints(replay))  # closes it
    else:
        model.close()
    model = peek_model(root)
    assert model is not None
    try:
        cursor = TimeCursor.of_store(model)
        last = whole.moments[-1]
        cuts = [whole.moments[0] - timedelta(seconds=1), *whole.moments]
        shown_now = []
        for cut in [*cuts, last + timedelta(days=1)]:
            at_model = cursor.at(cut)
            if at_model is model.projection:
                shown_now.append(cut)
            assert as_of_obj(at_model, cut) == as_of_obj(whole.at(cut), cut), cut
            assert _timeline(at_model) == _timeline(whole.at(cut)), cut
        if hostile and not model.answers_now_at(int(last.timestamp())):
            assert shown_now == []  # an event left out: the present is not then
        else:
            assert shown_now == [last, last + timedelta(days=1)]
    finally:
        model.close()
