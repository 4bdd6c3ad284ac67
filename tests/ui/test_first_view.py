"""The explorer on the read model: the present of every view read through the
model, the same screens the whole store gives; a store without a current model
has it built on open, and the slider's history is read through it too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, upsert, write_store
from counting import counting_opens
from settle import settle
from textual.widgets import Static

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import ModelEngine, open_model, peek_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.wire.ids import element_id
from kgai_tui.ui.app import KgaiApp
from kgai_tui.ui.prepare import prepare
from kgai_tui.ui.theme import ANSI

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
    """Header counts and the element tree (whose first leaf is shown first),
    byte for byte."""
    open_model(store).close()
    model = peek_model(store)
    assert model is not None
    try:
        preview = prepare(model.projection, None, ANSI)
    finally:
        model.close()
    assert preview == prepare(open_engine(store).projection, None, ANSI)
    assert preview.decisions > 0 and preview.elements.filtered("")


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


def _screen(app: KgaiApp) -> str:
    """The text of every line each visible widget draws, in DOM order, but the
    slider's (the model's present reads the history on demand)."""
    from kgai_tui.ui.widgets.time_slider import TimeSlider

    out = []
    for w in app.screen.query("*"):
        if isinstance(w, TimeSlider) or not w.display or not w.size.area:
            continue
        out += [w.render_line(y).text for y in range(w.size.height)]
    assert app.screen.query(TimeSlider)
    return "\n".join(out)


def _views(root: Path) -> tuple[list[str], KgaiApp]:
    """Each view's screen (Elements, Graph, Timeline, Conflicts, People), and the
    app, still holding what it read (its engine, its slider)."""
    app = KgaiApp(root, live=False)

    async def main() -> list[str]:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            out = []
            for key in ("1", "2", "3", "4", "7", "1"):
                await pilot.press(key)
                await settle(pilot)
                out.append(_screen(app))
            return out

    return asyncio.run(main()), app


def counting_replays(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every replay of a log from now on, a build's or a read's (``open_cold``)."""
    from kgai_tui.core.engine import cold_open

    replays: list[Path] = []
    real = cold_open.open_cold

    def counted(root: Path, *args: Any, **kwargs: Any) -> Engine:
        replays.append(root)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(cold_open, "open_cold", counted)
    return replays


def test_the_explorer_reads_the_present_through_the_model(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a model, the explorer never reads the whole store for the present,
    and every view shows what the whole store shows, screen for screen."""
    open_model(store).close()
    opened = counting_opens(monkeypatch)
    on_model, app = _views(store)
    assert isinstance(app.engine, ModelEngine)
    assert opened == [], "the present came from the model alone"
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    whole, whole_app = _views(store)
    assert isinstance(whole_app.engine, Engine) and opened
    assert on_model == whole


def test_a_big_logs_history_is_read_through_the_model_once_the_slider_moves_back(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the eager size the present comes alone, and the slider says how to
    read the history; ``[`` reads it through the same model, without opening the
    store again (no whole store either), then steps back once: the slider holds
    every moment the whole store has and shows the one before now."""
    from kgai_tui.ui import loading
    from kgai_tui.ui.widgets.time_slider import TimeSlider

    monkeypatch.setattr(loading, "EAGER_HISTORY_BYTES", 0)
    monkeypatch.setattr(loading, "PRELOAD_HISTORY_BYTES", 0)  # a key asks
    open_model(demo_store).close()
    opened = counting_opens(monkeypatch)
    app = KgaiApp(demo_store, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            model = app.engine
            slider = app.query_one(TimeSlider)
            assert isinstance(model, ModelEngine)
            assert slider.on_demand and not slider.moments
            assert "read the history" in str(slider.render())
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert app.engine is model, "the store on screen, not opened again"
            whole = open_engine(demo_store)
            assert slider.moments == TimeCursor.of_store(whole).moments
            assert slider.position == len(slider.moments) - 1
            assert app.snapshot is not None
            assert app.snapshot.moment == slider.moments[-1]
            banner = str(app.query_one("#banner", Static).render())
            assert banner.startswith("as of "), banner

    asyncio.run(main())
    assert opened == [], "the history came through the model"


def test_a_small_logs_history_comes_with_the_first_view(demo_store: Path) -> None:
    """Below the eager size the slider holds its moments as soon as the present
    is on screen: no key has to ask for them."""
    from kgai_tui.ui.widgets.time_slider import TimeSlider

    app = KgaiApp(demo_store, live=False)

    async def main() -> tuple[list[Any], bool]:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            slider = app.query_one(TimeSlider)
            return list(slider.moments), slider.on_demand

    moments, on_demand = asyncio.run(main())
    whole = open_engine(demo_store)
    assert isinstance(app.engine, ModelEngine)
    assert moments == list(TimeCursor.of_store(whole).moments) and moments
    assert not on_demand


def test_a_model_behind_the_log_by_appends_is_extended_and_read(
    demo_store: Path,
) -> None:
    open_model(demo_store).close()
    w = ShardWriter("i-late", "late")
    w.add(
        decision("Written after the model", [upsert("feature", "Late")]),
        lamport=10_000,
        recorded_at="2027-01-01T00:00:00Z",
    )
    (demo_store / "log" / "i-late.ndjson").write_bytes(w.to_bytes())
    _, app = _views(demo_store)
    assert isinstance(app.engine, ModelEngine) and app.engine.how == "append"
    assert "Written after the model" in list(app.engine.projection.dec_title)


def test_without_a_current_model_the_explorer_builds_it_and_reads_through_it(
    store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No model yet, or one only a rebuild brings up to date (a shard rewritten):
    the explorer builds it from one replay of the log and reads through it, saves
    the slider's history from that same replay, and opens no whole store; its
    views are the whole store's, screen for screen."""
    from kgai_tui.core.store.cache_file import store_cache_dir

    opened = counting_opens(monkeypatch)
    replays = counting_replays(monkeypatch)
    built, app = _views(store)
    assert isinstance(app.engine, ModelEngine) and app.engine.how == "cold"
    assert len(replays) == 1, "the model and its history from one replay"
    cache = store_cache_dir(store)
    assert {"model.sqlite", "engine.time.bin"} <= {p.name for p in cache.iterdir()}
    assert not (cache / "engine.bin").exists(), "no second copy of the store"
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    whole, _ = _views(store)
    assert built == whole
    monkeypatch.delenv("KGAI_TUI_READ_MODEL")
    opened.clear()
    shard = sorted((store / "log").glob("*.ndjson"))[0]
    data = shard.read_bytes()
    shard.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # rewritten
    before = model_path(store).stat().st_mtime_ns
    rebuilt, app = _views(store)
    assert isinstance(app.engine, ModelEngine) and app.engine.how == "cold"
    assert model_path(store).stat().st_mtime_ns != before
    assert opened == []
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    whole, _ = _views(store)
    assert rebuilt == whole


def test_a_decisions_full_record_reads_its_event_from_the_shard(
    store: Path,
) -> None:
    """The record's mutations, on the model's present, are the whole store's."""
    open_model(store).close()
    _, app = _views(store)
    assert isinstance(app.engine, ModelEngine) and app.snapshot is not None
    whole = open_engine(store)
    snapshot, p = app.snapshot, whole.projection
    indices = [i for i, h in enumerate(p.dec_hash) if h]
    assert indices
    for idx in indices:
        want = whole.event_for(p.dec_hash[idx])
        assert want is not None and want.decision is not None
        assert snapshot.mutations_of(idx) == (want.decision.mutations or ())


def test_a_big_logs_first_open_shows_its_replay_then_reads_the_model(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the eager size a first open shows the present from the replay it
    builds the model from, as soon as it is made, then the same present read
    through the model; the slider's history is saved from that one replay, so
    ``[`` reads it through the model with no second replay."""
    from kgai_tui.core.store.cache_file import store_cache_dir
    from kgai_tui.ui import loading
    from kgai_tui.ui.widgets.time_slider import TimeSlider

    monkeypatch.setattr(loading, "EAGER_HISTORY_BYTES", 0)
    monkeypatch.setattr(loading, "PRELOAD_HISTORY_BYTES", 0)  # a key asks
    shown: list[str] = []
    real_loaded = KgaiApp._store_loaded

    def loaded(self: KgaiApp, opened: Any, *rest: Any) -> None:
        shown.append(type(opened).__name__)
        real_loaded(self, opened, *rest)

    monkeypatch.setattr(KgaiApp, "_store_loaded", loaded)
    replays = counting_replays(monkeypatch)
    app = KgaiApp(demo_store, live=False)

    async def main() -> tuple[list[Any], int]:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert shown == ["Engine", "ModelEngine"]
            assert isinstance(app.engine, ModelEngine) and not app._history_saving
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert isinstance(app.engine, ModelEngine)
            slider = app.query_one(TimeSlider)
            return list(slider.moments), slider.position

    moments, position = asyncio.run(main())
    assert replays == [demo_store], "one replay: the model and its history"
    whole = list(TimeCursor.of_store(open_engine(demo_store)).moments)
    assert moments == whole and position == len(whole) - 1
    assert (store_cache_dir(demo_store) / "engine.time.bin").is_file()
