"""A reader that read a line half written, then the rest: extended, not rebuilt.

``record`` writes each line with one ``write()``, but a concurrent ``read()`` can see
a write that spans a page half done (seen here: 17 torn reads in 2,624 while a
process appended ~1 KB lines). The reader then holds a torn last line, which it
counts as a skipped line, as kg does. Once the writer finishes that line, every
cache that read the torn bytes used to take the changed shard for something it
cannot extend: the model was built again (13 s and 1.1 GB at 1M decisions), and
the time index and the search index were rebuilt from a replay. The appended-tail
reader now reads a torn line again from its start; a last line that was read as an
event without its newline, since extended, still sends the caches to a rebuild.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store
from search_stores import relevance_store
from test_model import assert_same
from test_replay_properties import lines

import kgai_tui.core.engine.open as engine_open
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import open_model
from kgai_tui.core.reads.health import status_obj
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import search_obj
from kgai_tui.core.store.logscan import scan_appended, scan_file
from kgai_tui.core.store.shard_print import ShardPrint, prints_from_disk

SHARD = "i-one.ndjson"


def five_lines(tmp_path: Path) -> tuple[Path, Path, list[bytes]]:
    """A store whose shard will hold five decisions; it holds the first two."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    for n in range(5):
        w.add(
            decision(f"d{n}", [upsert("feature", f"F{n % 3}", step=str(n))]),
            lamport=n + 1,
            recorded_at=f"2026-01-0{n + 1}T00:00:00Z",
        )
    rows = lines(w.events).splitlines(keepends=True)
    write_store(root, {SHARD: b"".join(rows[:2])})
    return root, cache, rows


def shard_print(root: Path) -> ShardPrint:
    return prints_from_disk(root / "log", [SHARD], base=root.parent / "prints")[0]


def grow(root: Path, data: bytes) -> None:
    with open(root / "log" / SHARD, "ab") as fh:
        fh.write(data)


#: Where the third line is cut, and whether that read sees it as an event.
CUTS = {
    "torn in its middle": (lambda line: len(line) // 2, False),
    "one byte": (lambda line: 1, False),
    "all but its last brace": (lambda line: len(line) - 2, False),
    "whole but its newline": (lambda line: len(line) - 1, True),
}


@pytest.mark.parametrize("cut", CUTS)
def test_the_tail_reader_reads_a_torn_line_again_from_its_start(
    tmp_path: Path, cut: str
) -> None:
    root, _, rows = five_lines(tmp_path)
    at, event = CUTS[cut]
    line = rows[2]
    grow(root, line[: at(line)])
    held = shard_print(root)
    grow(root, line[at(line) :] + rows[3])
    now = shard_print(root)
    scan = scan_appended(root / "log", now, held.size)
    if event:  # read as an event then: reading it again would count it twice
        assert scan is None
        return
    assert scan is not None
    assert scan.start == len(rows[0]) + len(rows[1]) < held.size
    whole = scan_file(root / "log" / SHARD)
    assert scan.hashes == whole.hashes[2:]
    assert list(scan.offsets) == list(whole.offsets[2:])
    assert list(scan.lines) == [1, 2] and scan.problems == []


@pytest.mark.parametrize("cut", CUTS)
def test_a_model_that_read_a_torn_line_is_extended_when_it_is_finished(
    tmp_path: Path, cut: str
) -> None:
    root, cache, rows = five_lines(tmp_path)
    assert open_model(root, cache).how == "cold"
    at, event = CUTS[cut]
    line = rows[2]
    grow(root, line[: at(line)])
    model = open_model(root, cache)
    assert model.how == "append"
    status = status_obj(model)
    assert (status["events"], status["skipped_lines"]) == ((3, 1) if event else (2, 1))
    assert_same(model, root)
    grow(root, line[at(line) :] + rows[3])
    model = open_model(root, cache)
    # Extended; an event read without its newline cannot be: it would count twice.
    assert model.how == ("cold" if event else "append")
    status = status_obj(model)
    assert (status["events"], status["skipped_lines"]) == (4, 0)
    assert_same(model, root)
    grow(root, rows[4])
    model = open_model(root, cache)
    assert model.how == "append"
    assert_same(model, root)


def test_a_torn_line_finished_with_a_bad_line_keeps_only_the_new_problem(
    tmp_path: Path,
) -> None:
    root, cache, rows = five_lines(tmp_path)
    open_model(root, cache).close()
    grow(root, rows[2][:40])
    open_model(root, cache).close()
    grow(root, b'", "garbage": 1}\n' + rows[3])
    model = open_model(root, cache)
    assert model.how == "append"
    problems = [(p.shard, p.line) for p in model.problems]
    assert problems == [(SHARD, 3)], "the torn read's problem is not kept beside it"
    assert_same(model, root)


def test_the_time_index_is_extended_across_a_finished_torn_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache, rows = five_lines(tmp_path)
    grow(root, rows[2][:50])
    model = open_model(root, cache)
    cursor = TimeCursor.of_store(model)  # built from a replay and saved
    assert cursor is not None
    model.close()
    replays: list[object] = []
    real = engine_open.replay_log

    def counted(*args: object, **kwargs: object) -> object:
        replays.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_open, "replay_log", counted)
    grow(root, rows[2][50:] + rows[3])
    model = open_model(root, cache)
    try:
        assert model.how == "append"
        cursor = TimeCursor.of_store(model)
        assert cursor is not None
        assert replays == [], "the saved index was not extended"
        whole = TimeCursor.of_store(open_engine(root))
        assert whole is not None
        assert list(cursor.moments) == list(whole.moments)
    finally:
        model.close()


def test_the_search_index_is_extended_across_a_finished_torn_line(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    relevance_store(root)
    shard = root / "log" / "ibob0000000000bb.ndjson"
    data = shard.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1  # where its last line starts
    shard.write_bytes(data[: last + 30])
    cache, fresh = tmp_path / "cache", tmp_path / "fresh"
    assert SearchIndex.for_engine(open_engine(root), cache_base=cache).info.how == (
        "built"
    )
    shard.write_bytes(data)
    grown = SearchIndex.for_engine(open_engine(root), cache_base=cache)
    assert grown.info.how == "appended" and grown.info.added == 1
    built = SearchIndex.for_engine(open_engine(root), cache_base=fresh)
    assert built.info.how == "built"
    for query in ("invoice", "redis", "checkout stripe", "kind:feature"):
        got = search_obj(grown.search(query, include_all=True))
        assert got and got == search_obj(built.search(query, include_all=True)), query
