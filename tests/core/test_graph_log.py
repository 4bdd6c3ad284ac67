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
