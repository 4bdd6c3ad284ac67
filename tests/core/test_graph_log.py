"""The model's graph after updates: its stored state plus the log of what each
update did, folded into the state once the log is long.

``test_model.test_appends_in_any_split_equal_replay`` compares every graph order
with a whole replay, with the floor as shipped (at its store sizes the log is never
long enough to fold) and at zero (updates fold as soon as their log passes an
eighth of the elements). Here the tests check that each path ran: a reader that
ignored the log, or an update that dropped it, fails them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_model import append_files, assert_same, linked_store
from test_replay_properties import lines

from kgai_tui.core.model import graph_log
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.schema import model_path


def _log_rows(root: Path, cache: Path) -> int:
    db = sqlite3.connect(f"file:{model_path(root, cache)}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM graph_op").fetchone()[0])
    finally:
        db.close()


def test_an_update_logs_the_graph_and_a_reader_replays_it(tmp_path: Path) -> None:
    """Each append that adds elements and links leaves one more log row, and the
    model read after each equals a whole replay in every order."""
    root, cache, w = linked_store(tmp_path)
    assert open_model(root, cache).how == "cold"
    assert _log_rows(root, cache) == 0
    for n in range(2, 6):
        append_files(root, {"i-one.ndjson": lines(w.events[n : n + 1])})
        model = open_model(root, cache)
        assert model.how == "append"
        assert _log_rows(root, cache) == n - 1
        assert_same(model, root)


def test_a_long_log_is_folded_into_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the log passes an eighth of the elements (no floor here), the update
    writes the state again and empties the log, the earlier rows included; reads
    stay those of a whole replay."""
    root, cache, w = linked_store(tmp_path)
    open_model(root, cache).close()
    append_files(root, {"i-one.ndjson": lines(w.events[2:3])})
    open_model(root, cache).close()
    assert _log_rows(root, cache) == 1
    monkeypatch.setattr(graph_log, "_LOG_FLOOR", 0)
    append_files(root, {"i-one.ndjson": lines(w.events[3:])})
    model = open_model(root, cache)
    assert model.how == "append"
    assert _log_rows(root, cache) == 0
    assert_same(model, root)


def _wide_store(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A store of one decision, and the line of a second one that upserts 1,300
    new elements: its update logs 1,300 node operations, past
    ``elements // 8 + _LOG_FLOOR`` (1,186), so the log is long after it."""
    from builders import ShardWriter, decision, upsert, write_store

    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    w.add(
        decision("first", [upsert("feature", "F")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    wide = [upsert("service", f"S{n:04d}", tier=str(n % 7)) for n in range(1300)]
    w.add(decision("wide", wide), lamport=2, recorded_at="2026-01-02T00:00:00Z")
    write_store(root, {"i-one.ndjson": lines(w.events[:1])})
    return root, cache, lines(w.events[1:])


def test_a_command_line_read_leaves_the_fold_until_it_has_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``background`` update (a command-line read) that makes the log long
    writes its rows and log, not the state: the fold is handed to a detached
    process once the lock is let go. The model answers as a whole replay does
    before the fold and after it, and stays sealed (the next read is warm)."""
    from kgai_tui.core.model import seal, tidy

    root, cache, w = linked_store(tmp_path)
    open_model(root, cache).close()
    # Long (past an eighth of the elements plus 4), not four times as long.
    monkeypatch.setattr(graph_log, "_LOG_FLOOR", 4)
    append_files(root, {"i-one.ndjson": lines(w.events[2:])})
    handed: list[object] = []

    def spied(work: object) -> bool:
        assert not seal._HELD, "the fold is handed over with the lock still held"
        handed.append(work)
        return True

    monkeypatch.setattr(tidy, "run_detached", spied)
    model = open_model(root, cache, background=True)
    assert model.how == "append"
    assert len(handed) == 1
    assert _log_rows(root, cache) == 1  # logged, not folded in line
    assert_same(model, root)
    model.close()
    path = model_path(root, cache)
    assert tidy.tidy(path)
    assert _log_rows(root, cache) == 0
    assert not tidy.tidy(path)  # folded already: nothing to do
    model = open_model(root, cache)
    assert model.how == "warm"
    assert_same(model, root)
    model.close()


def test_a_fold_gives_way_to_a_holder_of_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fold waits for the model's lock no longer than its patience, and
    then writes nothing; with the lock free it folds."""
    from kgai_tui.core.model import tidy
    from kgai_tui.core.model.seal import model_lock

    root, cache, w = linked_store(tmp_path)
    open_model(root, cache).close()
    # Long (past an eighth of the elements plus 4), not four times as long.
    monkeypatch.setattr(graph_log, "_LOG_FLOOR", 4)
    append_files(root, {"i-one.ndjson": lines(w.events[2:])})
    monkeypatch.setattr(tidy, "run_detached", lambda work: True)
    open_model(root, cache, background=True).close()
    path = model_path(root, cache)
    assert _log_rows(root, cache) == 1
    with model_lock(path):
        assert not tidy.tidy(path, patience=0.2)
    assert _log_rows(root, cache) == 1
    assert tidy.tidy(path, patience=0.2)
    assert _log_rows(root, cache) == 0


def test_the_detached_fold_of_a_real_read_leaves_the_model_sealed(
    tmp_path: Path,
) -> None:
    """A real ``status`` after the wide append answers; a detached process then
    folds the log (within seconds), and the model it leaves is sealed: the next
    read trusts it (warm) and equals a whole replay."""
    import os
    import subprocess
    import sys
    import time

    root, cache, wide = _wide_store(tmp_path)
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "kgai_tui", "status", "--json", "--store", str(root)]
    first = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    append_files(root, {"i-one.ndjson": wide})
    second = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert b'"elements": 1301' in second.stdout
    deadline = time.monotonic() + 30
    while _log_rows(root, cache) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _log_rows(root, cache) == 0
    time.sleep(0.2)  # the seal is written as the fold's connection closes
    model = open_model(root, cache)
    assert model.how == "warm"
    model.close()
    off = {**env, "KGAI_TUI_READ_MODEL": "off"}
    for args in (["status"], ["export", "--canonical"], ["heads"]):
        argv = [sys.executable, "-m", "kgai_tui", *args, "--json", "--store", str(root)]
        on = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        whole = subprocess.run(argv, env=off, capture_output=True, timeout=120)
        assert on.returncode == whole.returncode == 0, on.stderr
        assert on.stdout == whole.stdout, args


def test_a_log_left_to_tidies_that_never_come_is_folded_at_four_times_the_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Background updates whose tidies never run leave the log long, until it is
    LATER_SLACK times what calls for a fold: then the update folds it itself."""
    from kgai_tui.core.model import tidy
    from kgai_tui.core.model.recall_store import LATER_SLACK

    root, cache, w = linked_store(tmp_path)
    open_model(root, cache).close()
    monkeypatch.setattr(graph_log, "_LOG_FLOOR", 2)
    monkeypatch.setattr(tidy, "run_detached", lambda work: True)
    rows = []
    for n in range(2, 6):
        append_files(root, {"i-one.ndjson": lines(w.events[n : n + 1])})
        model = open_model(root, cache, background=True)
        rows.append(_log_rows(root, cache))
        assert_same(model, root)
        model.close()
    # Long from the first (5 operations > 2), left to a tidy; folded in line at
    # 17 operations (17 // LATER_SLACK > 2).
    assert rows == [1, 2, 3, 0]
    assert LATER_SLACK == 4
