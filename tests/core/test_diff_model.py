"""``diff`` through the read model: the same bytes as the whole store's, and no whole
store opened once the model holds the time index of its log.

The whole store's diff is checked against two replays of decoded events in
``test_diff_replay``; here the model's answer (the index whose decision columns
are the model's rows, or its own when the log keeps it from sharing them) must be
that answer, byte for byte, for every pair of cuts.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store
from counting import counting_opens
from test_diff_replay import _reference
from test_time_index import _random_store

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.moments import diff_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import plain
from kgai_tui.core.gosem.gotext import epoch_to_datetime, format_epoch, format_rfc3339
from kgai_tui.core.model.open import open_model, peek_model
from kgai_tui.core.reads.diff import SECTIONS, diff_obj
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.demo import DEMO_STORE


def _cuts(root: Path) -> list[datetime | None]:
    moments = TimeCursor.of_store(open_engine(root)).moments
    picks = list(moments[:: max(1, len(moments) // 6)])
    return [None, moments[0] - timedelta(seconds=1), *picks, moments[-1]]


def _pairs(
    cuts: list[datetime | None],
) -> list[tuple[datetime | None, datetime | None]]:
    far = datetime.max.replace(tzinfo=UTC)
    return [
        (a, b)
        for a in cuts
        for b in cuts
        if (a or far) <= (b or far) and not (a is None and b is not None and b < far)
    ]


def _compare(root: Path) -> int:
    """Every pair of cuts: the model's diff equals the whole store's (bytes)."""
    cuts = _cuts(root)  # the whole store saves its time index here
    open_model(root).close()
    model = peek_model(root)
    assert model is not None
    compared = 0
    try:
        index = model.time_index()
        assert index is not None, "the model reads the saved index"
        whole = open_engine(root).time_index
        for start, end in _pairs(cuts):
            got = orjson.dumps(plain(diff_obj(index, start, end)))
            assert got == orjson.dumps(plain(diff_obj(whole, start, end))), (start, end)
            compared += 1
    finally:
        model.close()
    return compared


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_diff_through_the_model_equals_the_whole_store_s(
    tmp_path: Path, seed: int, hostile: bool
) -> None:
    _random_store(tmp_path, seed, 90, hostile=hostile)
    assert _compare(tmp_path / f"r{seed}") > 20


def test_the_demo_diff_through_the_model_equals_the_whole_store_s(
    tmp_path: Path,
) -> None:
    demo = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    assert _compare(demo) > 20


def test_diff_reads_no_whole_store_once_the_model_holds_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first diff of a store without a saved index builds it from a replay of
    the log and saves it (no whole store opened, no engine cache written); the
    next one loads it through the model; both answer the same bytes."""
    demo = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    open_model(demo).close()
    opened = counting_opens(monkeypatch)

    def ask() -> bytes:
        return encode(diff_answer(lambda: open_model(demo), "2026-02-28", "2026-03-31"))

    from kgai_tui.core.store.cache_file import store_cache_dir

    first = ask()
    assert opened == [], "no saved index yet: a replay built it"
    inside = {p.name for p in store_cache_dir(demo).iterdir()}
    assert "engine.time.bin" in inside and "engine.bin" not in inside
    again = ask()
    assert opened == [], "the second diff came through the model alone"
    assert again == first
    assert b'"EventBus"' in first  # the conflict resolved in March is named


def test_a_diff_names_each_change_by_its_decision_recorded_in_the_window(
    tmp_path: Path,
) -> None:
    """The cause of each change is a decision recorded in (FROM, TO], read through
    the model: ids and times from the model's rows, the events' own fields."""
    demo = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    start, end = datetime(2026, 2, 28, 23, 59, 59, tzinfo=UTC), None
    open_engine(demo).time_index  # noqa: B018 - saves the index
    open_model(demo).close()
    model = peek_model(demo)
    assert model is not None
    try:
        index = model.time_index()
        assert index is not None
        obj = plain(diff_obj(index, start, end))
    finally:
        model.close()
    caused = [
        row["by"]
        for key in ("elements_added", "props_changed", "links_added", "links_retired")
        for row in obj[key]
    ]
    assert caused, "the demo store changes after February"
    for by in caused:
        assert by is not None
        assert by["when"] > format_rfc3339(start), by
        assert set(by) == {"id", "title", "author", "when", "rationale"}


def test_an_edge_listed_again_earlier_counts_from_its_earliest_time(
    tmp_path: Path,
) -> None:
    """A decision asserted again with a back-dated clock lists its supersedes edge
    earlier than its first event did: the edge counts from the earlier time, so a
    diff from between the two does not list it as new. Equal to the replays."""
    base = 1_767_225_600  # 2026-01-01T00:00:00Z
    x = decision("x", [upsert("svc", "a")])
    d = decision("d", [upsert("svc", "b")], supersedes=[x.id])
    w, v = ShardWriter("iw", actor="w"), ShardWriter("iv", actor="v")
    w.add(x, lamport=1, recorded_at=format_epoch(base + 10))
    w.add(d, lamport=2, recorded_at=format_epoch(base + 100))
    v.add(d, lamport=3, recorded_at=format_epoch(base + 50))
    root = write_store(
        tmp_path / "again", {f"{s.install_id}.ndjson": s.to_bytes() for s in (w, v)}
    )
    engine = open_engine(root)
    cuts: list[datetime | None] = [
        None,
        *(epoch_to_datetime(base + t) for t in (5, 40, 60, 90, 120)),
    ]
    seen = 0
    for start, end in _pairs([*cuts, None]):
        got = plain(diff_obj(engine.time_index, start, end))
        want = _reference(engine.shards, start, end)
        assert orjson.dumps({k: got[k] for k in SECTIONS}) == orjson.dumps(want)
        seen += len(got["decisions_superseded"])
    assert seen, "some window lists the edge"
