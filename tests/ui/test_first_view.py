"""The explorer's first view from the read model: the same view the whole store
gives, painted before the whole store has loaded, and never from a stale model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, upsert, write_store
from textual.pilot import Pilot
from textual.widgets import Static, Tree

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import open_model, peek_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.wire.ids import element_id
from kgai_tui.ui import app as app_module
from kgai_tui.ui.app import KgaiApp
from kgai_tui.ui.prepare import prepare, prepare_preview
from kgai_tui.ui.theme import ANSI
from kgai_tui.ui.widgets.header import StoreHeader

SIZE = (120, 40)


def _contested_store(tmp_path: Path) -> Path:
    """Two writers deciding the same element (a conflict), links, a stub element
    (shaped, never created) and a placeholder decision (superseded, never seen)."""
    a, b = ShardWriter("i1", "ana"), ShardWriter("i2", "bo")
    inv, bil = ("feature", "Invoice"), ("service", "Billing")
    a.add(
        decision(
            "Invoices are PDFs",
            [upsert(*inv), link("add_link", inv, bil, "uses")],
            author="ana",
        ),
        lamport=1,
        recorded_at="2026-01-01T10:00:00Z",
    )
    b.add(
        decision("Invoices are HTML", [upsert(*inv), upsert(*bil)], author="bo"),
        lamport=2,
        recorded_at="2026-01-02T10:00:00Z",
    )
    a.add(
        decision(
            "Billing is one service",
            [upsert(*bil)],
            author="ana",
            shapes=[element_id(*bil), "el_" + "0" * 20],
            supersedes=["d_" + "0" * 24],
        ),
        lamport=3,
        recorded_at="2026-01-03T10:00:00Z",
    )
    files = {"i1.ndjson": a.to_bytes(), "i2.ndjson": b.to_bytes()}
    return write_store(tmp_path / "s", files)


@pytest.fixture(params=["demo", "contested"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "demo":
        return Path(request.getfixturevalue("demo_store"))
    return _contested_store(tmp_path)


def test_the_first_view_from_the_model_equals_the_whole_stores(store: Path) -> None:
    """Header counts, the element tree and the element shown first, byte for byte."""
    open_model(store).close()
    model = peek_model(store)
    assert model is not None
    try:
        preview = prepare_preview(model.projection, ANSI)
    finally:
        model.close()
    assert preview == prepare(open_engine(store, cache=False).projection, None, ANSI)
    assert preview.decisions > 0 and preview.elements.first is not None


def _files(cache: Path) -> dict[str, tuple[int, int]]:
    """Every cache file's size and time, but SQLite's shared-memory index (every
    reader of a write-ahead-log database maps and touches it)."""
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(cache.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def test_a_model_behind_the_log_is_not_peeked_at_nor_touched(
    demo_store: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    assert peek_model(demo_store, cache) is None
    assert not cache.exists(), "peeking built nothing"
    open_model(demo_store, cache).close()
    model = peek_model(demo_store, cache)
    assert model is not None and model.how == "warm"
    model.close()
    shard = sorted((demo_store / "log").glob("*.ndjson"))[0]
    line = shard.read_bytes().splitlines(keepends=True)[-1]
    with open(shard, "ab") as fh:  # the same event again: the log grew
        fh.write(line)
    before = _files(cache)
    assert peek_model(demo_store, cache) is None
    assert _files(cache) == before
    assert model_path(demo_store, cache).is_file()


class _Watching(KgaiApp):
    """The explorer, noting what the screen showed when the whole store arrived."""

    CSS_PATH = str(Path(app_module.__file__).parent / KgaiApp.CSS_PATH)

    def __init__(self, root: Path) -> None:
        super().__init__(root, live=False)
        self.at_load: list[dict[str, Any]] = []

    def _loaded(self, engine: Any, *args: Any, **kwargs: Any) -> None:
        if not self.at_load:
            tree = self.query_one("#element-tree", Tree)
            self.at_load.append(
                {
                    "header": str(self.query_one(StoreHeader).render()),
                    "leaves": sum(len(b.children) for b in tree.root.children),
                    "details": str(self.query_one("#element-details", Static).render()),
                    "preview": self._preview is not None,
                }
            )
        super()._loaded(engine, *args, **kwargs)


def _run(app: _Watching) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with app.run_test(size=SIZE) as pilot:
            await _settle(pilot)
            tree = app.query_one("#element-tree", Tree)
            return {
                "header": str(app.query_one(StoreHeader).render()),
                "leaves": sum(len(b.children) for b in tree.root.children),
                "details": str(app.query_one("#element-details", Static).render()),
                "preview": app._preview is not None,
            }

    return asyncio.run(main())


async def _settle(pilot: Pilot[None]) -> None:
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_the_explorer_paints_from_the_model_before_the_store_loads(
    store: Path,
) -> None:
    open_model(store).close()
    app = _Watching(store)
    loaded = _run(app)
    (first,) = app.at_load
    assert first["preview"], "the first view came from the model"
    # What the user saw before the whole store loaded is what it then showed.
    assert first["header"] == loaded["header"]
    assert first["leaves"] == loaded["leaves"] > 0
    assert first["details"] == loaded["details"]
    assert not loaded["preview"], "the model is let go once the store is loaded"


def test_without_a_current_model_the_explorer_opens_as_before(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No model yet, or the model switched off: the whole store's view only."""
    app = _Watching(store)
    loaded = _run(app)
    assert not app.at_load[0]["preview"]
    assert app.at_load[0]["leaves"] == 0
    assert loaded["leaves"] > 0
    open_model(store).close()
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    off = _Watching(store)
    assert _run(off) == loaded
    assert not off.at_load[0]["preview"]
