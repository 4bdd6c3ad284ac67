"""The slider's and ``diff``'s history (the time index) is part of the model's
store: a first read's detached build saves it from the replay it already holds,
and a model without one builds it from a replay of the log, never from a whole
store opened (issue 40: the replay is the builder, not a second read path).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_model_moments import _cli

from kgai_tui.core.engine import cold_open
from kgai_tui.core.engine import open as engine_open
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import peek_model
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.store.cache_file import store_cache_dir
from kgai_tui.demo import DEMO_STORE


def _settled(root: Path, cache: Path, timeout_s: float = 60.0) -> Path:
    """The store's cache directory once the detached build left the model, its
    history and the per-author steps (the last thing it does)."""
    where = store_cache_dir(root, cache)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        names = {p.name for p in where.iterdir()} if where.is_dir() else set()
        if {"model.sqlite.seal", "engine.time.bin"} <= names:
            model = peek_model(root, cache)
            if model is not None:
                model.close()
                time.sleep(0.5)  # the build's last writes after the file
                return where
        time.sleep(0.1)
    raise AssertionError(f"no model and history in {where}")


def test_the_first_reads_build_leaves_a_history_read_without_a_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a first ``status``, the model reads the saved index as it is: no log
    replayed, no whole store opened, no engine cache; its moments and the views
    at them are the whole store's."""
    import shutil

    root = shutil.copytree(DEMO_STORE, tmp_path / "store")
    cache = tmp_path / "cache"
    done = _cli(["status", "--store", str(root), "--json"], cache)
    assert done.returncode == 0, done.stderr
    where = _settled(root, cache)
    assert not (where / "engine.bin").exists()
    replays: list[Any] = []
    model = peek_model(root, cache)
    assert model is not None
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cold_open, "open_cold", lambda *a, **_: replays.append(a))
            patch.setattr(engine_open, "open_engine", lambda *a, **_: replays.append(a))
            patch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
            cursor = TimeCursor.of_store(model)
        assert cursor is not None and replays == []
        whole = TimeCursor.of_store(open_engine(root))
        assert list(cursor.moments) == list(whole.moments)
        for cut in (whole.moments[0], whole.moments[len(whole.moments) // 2]):
            at, want = cursor.at(cut), whole.at(cut)
            assert sorted(at.graph.nodes) == sorted(want.graph.nodes)
            assert {
                e: sorted(at.dec_id[i] for i in hs) for e, hs in at.heads.items()
            } == {e: sorted(want.dec_id[i] for i in hs) for e, hs in want.heads.items()}
    finally:
        model.close()
