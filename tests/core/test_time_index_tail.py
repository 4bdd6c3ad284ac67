"""A saved time index follows the log through the model: lines appended since it
was saved are folded in (the index still reading its decision columns from the
model's rows), and the result is the index a fresh build of the whole log makes.

The store is cut by lamport, so the prefix of every shard is what the index and the
model were made from, and the rest is appended afterwards, as writers do. When the
appended events cannot be folded (one sorts before an indexed event, one repeats a
decision the index held), the model reads no index, and the whole store's answers
are the same as ever.
"""

from __future__ import annotations

import itertools
from array import array
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store
from test_moment_timeline import _timeline
from test_time_index import _random_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import plain
from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.model.open import ModelEngine, open_model, peek_model
from kgai_tui.core.reads.as_of import as_of_obj
from kgai_tui.core.reads.diff import diff_obj
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.store.cache_file import read_cache_file, time_index_in
from kgai_tui.core.timeindex.index import TimeIndex, build_time_index
from kgai_tui.core.wire.ids import element_id

BASE = 1_767_225_600  # 2026-01-01T00:00:00Z


def _lines(root: Path) -> dict[str, list[bytes]]:
    return {
        p.name: p.read_bytes().splitlines(keepends=True)
        for p in sorted((root / "log").iterdir())
    }


def _lamport(line: bytes) -> int:
    return int(orjson.loads(line)["lamport"])


def _cut_store(
    tmp_path: Path, seed: int, hostile: bool
) -> tuple[Path, dict[str, list[bytes]]]:
    """The random store with every line after the median lamport taken out;
    returns the lines taken out, per shard, to append later."""
    _random_store(tmp_path, seed, 90, hostile=hostile)
    root = tmp_path / f"r{seed}"
    return root, cut_by_lamport(root)


def cut_by_lamport(root: Path) -> dict[str, list[bytes]]:
    """Keep every line up to the median lamport in each shard of ``root``; return
    the lines taken out, per shard, to append later."""
    lines = _lines(root)
    lamports = sorted(_lamport(x) for shard in lines.values() for x in shard)
    cut = lamports[len(lamports) // 2]
    rest: dict[str, list[bytes]] = {}
    for name, shard in lines.items():
        keep = [x for x in shard if _lamport(x) <= cut]
        rest[name] = shard[len(keep) :]
        assert keep + rest[name] == shard, "a shard's lamports never go down"
        (root / "log" / name).write_bytes(b"".join(keep))
    return rest


def _append(root: Path, rest: dict[str, list[bytes]]) -> None:
    for name, shard in rest.items():
        with open(root / "log" / name, "ab") as f:
            f.write(b"".join(shard))


def _saved_and_modelled(root: Path) -> None:
    """The model is built (or extended) and saves its time index."""
    model = _model(root)
    try:
        model.time_index()
    finally:
        model.close()


def _model(root: Path) -> ModelEngine:
    open_model(root).close()  # extends the model with what was appended
    model = peek_model(root)
    assert model is not None
    return model


def _fresh(root: Path) -> TimeIndex:
    """The index a build of the whole log makes, from nothing cached."""
    engine = open_engine(root)
    return build_time_index(engine.shards, engine.projection)


def _same_history(index: TimeIndex, fresh: TimeIndex) -> None:
    ours, theirs = TimeCursor(index), TimeCursor(fresh)
    assert list(ours.moments) == list(theirs.moments)
    cuts = [ours.moments[0] - timedelta(seconds=1), *ours.moments]
    # The header's writers (saved with an index, computed for a folded one).
    assert index.cut_counts().writers_from == fresh.cut_counts().writers_from
    for cut in cuts:
        a, b = ours.at(cut), theirs.at(cut)
        assert orjson.dumps(as_of_obj(a, cut)) == orjson.dumps(as_of_obj(b, cut)), cut
        assert _timeline(a) == _timeline(b), cut
        assert (a.recorded_count(), a.writer_count()) == (
            b.recorded_count(),
            b.writer_count(),
        ), cut
    picks: list[datetime | None] = [None, *cuts[:: max(1, len(cuts) // 4)]]
    for start, end in itertools.combinations(picks, 2):
        if start is not None and end is not None and start > end:
            start, end = end, start
        got = orjson.dumps(plain(diff_obj(index, start, end)))
        assert got == orjson.dumps(plain(diff_obj(fresh, start, end))), (start, end)


def _ids(lines: dict[str, list[bytes]]) -> set[str]:
    return {
        d["id"]
        for shard in lines.values()
        for x in shard
        if (d := orjson.loads(x).get("decision")) is not None
    }


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_appended_lines_are_folded_into_the_saved_index_through_the_model(
    tmp_path: Path, seed: int, hostile: bool
) -> None:
    root, rest = _cut_store(tmp_path, seed, hostile)
    assert _ids(_lines(root)) & _ids(rest), "the tail repeats decisions held before"
    _saved_and_modelled(root)
    _append(root, rest)
    model = _model(root)
    try:
        index = model.time_index()
        assert index is not None
        # A hostile log keeps the index from sharing the model's rows at all: its
        # own columns take the tail as a build does.
        assert (index.shared is model.projection) == (not hostile)
        shards = [[s["print"], s["events"]] for s in model.shard_states]
        saved = read_cache_file(root, time_index_in(model.model_path.parent))
        assert saved is not None and saved[0]["shards"] == shards, "saved again"
        _same_history(index, _fresh(root))
        again = model.time_index()
        assert again is not None
        # Read as saved: the writers' first starts come with it, not from a
        # pass over every decision's install.
        assert again.saved_writers is not None
        assert again.saved_writers[0] == again.version
        _same_history(again, _fresh(root))
        # The fold worked on copies of the arrays; the index saved with nothing
        # to fold in is read in place, and a store into it is refused (never a
        # silent write into the cache file).
        assert isinstance(index.times, array)
        assert isinstance(again.times, memoryview) and again.times.readonly
        with pytest.raises(TypeError):
            again.times[0] = 0
    finally:
        model.close()


def test_a_tail_that_sorts_before_the_index_is_not_folded(tmp_path: Path) -> None:
    """The first event of one shard copied to the end of another (as a sync may
    leave it): the same event again, sorting before the last one indexed."""
    root, _ = _cut_store(tmp_path, 3, False)
    _saved_and_modelled(root)
    lines = _lines(root)
    first, second = sorted(lines)[:2]
    _append(root, {second: [lines[first][0]]})
    _built_again(root)


def _built_again(root: Path) -> None:
    """The saved index cannot take the tail: the model's read builds the index
    again from a replay of the log, saves it for the log the model holds, and
    reads that one through the model next time; the history is the fresh one."""
    model = _model(root)
    try:
        index = model.time_index()
        assert index is not None, "built again from a replay"
        _same_history(index, _fresh(root))
        shards = [[s["print"], s["events"]] for s in model.shard_states]
        saved = read_cache_file(root, time_index_in(model.model_path.parent))
        assert saved is not None and saved[0]["shards"] == shards, "saved again"
    finally:
        model.close()
    model = _model(root)
    try:
        index = model.time_index()
        assert index is not None, "read through the model again"
        _same_history(index, _fresh(root))
    finally:
        model.close()


def test_a_tail_the_model_reads_otherwise_is_not_folded(tmp_path: Path) -> None:
    """An appended event with a time that is not RFC3339 (never in as-of): an
    index that shares the model's rows cannot fold it, so it is built again."""
    root, _ = _cut_store(tmp_path, 2, False)
    _saved_and_modelled(root)
    late = ShardWriter("izz", actor="late")
    late.add(
        decision("late", [upsert("svc", "e1", p="9")]),
        lamport=10**6,
        recorded_at="2026-01-01",
    )
    (root / "log" / "izz.ndjson").write_bytes(late.to_bytes())
    _built_again(root)


def _at(minute: int) -> str:
    return format_epoch(BASE + minute * 60)


def test_a_tail_that_grows_decisions_held_before_is_folded(tmp_path: Path) -> None:
    """Decisions held before the tail and recorded again in it with more shapes,
    and written in skewed order: a plain one, one held twice already, and a stub
    the prefix only referenced. Every moment equals a fresh build's."""
    ids = [element_id("svc", f"e{i}") for i in range(5)]
    plain = decision("plain", [upsert("svc", "e0", p="1")])
    twice = decision("twice", [upsert("svc", "e1")])
    stubbed = decision("stubbed", [upsert("svc", "e3")])
    refers = decision("refers", [upsert("svc", "e4")], supersedes=[stubbed.id])
    a, b = ShardWriter("ia", actor="a"), ShardWriter("ib", actor="b")
    a.add(plain, lamport=1, recorded_at=_at(10))
    a.add(twice, lamport=2, recorded_at=_at(11))
    b.add(replace(twice, shapes=(ids[1], ids[0])), lamport=3, recorded_at=_at(5))
    b.add(refers, lamport=4, recorded_at=_at(12))
    prefix = {w: w.to_bytes() for w in (a, b)}
    # The tail: each again with more shapes, one back-dated before them all.
    a.add(
        replace(plain, shapes=(ids[0], ids[2], ids[4])), lamport=5, recorded_at=_at(3)
    )
    b.add(replace(twice, shapes=(ids[3], ids[1])), lamport=6, recorded_at=_at(20))
    a.add(replace(stubbed, shapes=(ids[3], ids[2])), lamport=7, recorded_at=_at(8))
    b.add(replace(plain, shapes=(ids[1],)), lamport=8, recorded_at=_at(30))
    # A writer new in the tail, its one decision back-dated before the prefix's.
    c = ShardWriter("ic", actor="c")
    c.add(decision("third", [upsert("svc", "e2")]), lamport=9, recorded_at=_at(1))
    root = tmp_path / "grown"
    write_store(root, {f"{w.install_id}.ndjson": data for w, data in prefix.items()})
    _saved_and_modelled(root)
    for w in (a, b, c):
        (root / "log" / f"{w.install_id}.ndjson").write_bytes(w.to_bytes())
    model = _model(root)
    try:
        index = model.time_index()
        assert index is not None and index.shared is model.projection
        _same_history(index, _fresh(root))
    finally:
        model.close()
