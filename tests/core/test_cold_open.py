"""The two-core cold open builds exactly the projection a sequential open builds.

The replay defers each decision's text fields and time to the verifiers' columns
(:mod:`decision_fields`), so the lines that stress those columns are here: strings
off the plain path (escapes, non-ASCII, a newline), refs and summary, times in every
shape the projection reads, decisions only known as superseded, events without a
decision, and one event present in two shards.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import ShardWriter, decision, set_prop, upsert, write_store

from benchmarks.genlog import GenParams
from benchmarks.genlog import write_store as write_generated
from kgai_tui.core.engine import cold_open, pool
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.engine.pool import received
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.replay.columns import TextColumn, TimeColumn
from kgai_tui.core.replay.ordered_keys import OrderedDecisionKeys
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.hash_column import HashColumn
from kgai_tui.core.store.logscan import scan_file
from kgai_tui.core.wire.codec import decision_id
from kgai_tui.core.wire.model import Decision


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Take the worker-process path even on a small store; record the verdict.
    The replay order is made a few lines at a time, so chunks end everywhere."""
    monkeypatch.setattr(cold_open, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(cold_open, "_ORDER_CHUNK", 7)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    seen: list[str] = []
    real_agrees = cold_open._agrees

    def agrees(*args: object) -> bool:
        out = real_agrees(*args)  # type: ignore[arg-type]
        seen.append("verified" if out else "rejected")
        return out

    monkeypatch.setattr(cold_open, "_agrees", agrees)
    return seen


def _with_refs(d: Decision, refs: str) -> Decision:
    """``d`` with ``refs`` (the builders set none), its id made again."""
    d = replace(d, refs=refs)
    return replace(d, id=decision_id(d))


def _unusual_shards() -> dict[str, bytes]:
    a, b = ShardWriter("iaaa"), ShardWriter("ibbb", actor="bob")
    first = decision(
        "Plain & <simple>",
        [upsert("feature", "Invoice", owner="ops", tier="1")],
        rationale="line one\nline two",
        author="  Alice   Smith ",
        summary="naïve café 日本",
    )
    first = _with_refs(first, "ADR-7\ttab")
    a.add(first, lamport=1, recorded_at="2026-03-01T10:00:00Z")
    a.add(None, lamport=2, recorded_at="2026-03-01T10:00:01Z")
    later = decision(
        "Replace it",
        [set_prop("feature", "Invoice", "tier", "2")],
        supersedes=[first.id, "d_000000000000000000000000"],  # one never seen
        author="Bob",
    )
    b.add(later, lamport=3, recorded_at="2026-03-01T12:00:00.250+02:00")
    b.add(decision("Dated only", author=""), lamport=4, recorded_at="2026-03-02")
    b.add(decision("No time", rationale="lone \udc80"), lamport=5, recorded_at="")
    b.add(decision("Zero time"), lamport=6, recorded_at="0001-01-01T00:00:00Z")
    shards = {"iaaa.ndjson": a.to_bytes(), "ibbb.ndjson": b.to_bytes()}
    # The same event in a third shard: replayed once.
    shards["iccc.ndjson"] = a.to_bytes().splitlines(keepends=True)[0]
    return shards


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    write_generated(root, GenParams(600, 3, 50))
    write_store(root, _unusual_shards())
    return root


_COLUMNS = (
    "dec_id",
    "dec_title",
    "dec_rationale",
    "dec_author",
    "dec_refs",
    "dec_summary",
    "dec_time",
    "dec_lamport",
    "dec_install",
    "dec_hash",
    "dec_shapes",
    "dec_supersedes",
    "dec_superseded_by",
)


def _state(p: Projection) -> dict[str, Any]:
    """Everything a projection holds, field for field, as plain values."""
    p.flush_props()
    return {
        "nodes": sorted((n, sorted(a.items())) for n, a in p.graph.nodes(data=True)),
        "edges": sorted(
            (f, t, k, a["created_by"])
            for f, t, k, a in p.graph.edges(keys=True, data=True)
        ),
        "applied": (p.applied_count, sorted(p.applied)),
        **{name: list(getattr(p, name)) for name in _COLUMNS},
        "el_shapes": sorted((e, list(s.items())) for e, s in p.el_shapes.items()),
        "heads": sorted((e, sorted(h)) for e, h in p.heads.items()),
        "contested": sorted(p.contested),
        "unknown_ops": list(p.unknown_ops),
    }


def _sequential(root: Path) -> Engine:
    names = sorted(p.name for p in (root / "log").iterdir())
    return Engine(root, [scan_file(root / "log" / n) for n in names])


def test_the_parallel_open_fills_every_column_as_a_sequential_replay_does(
    store: Path, parallel: list[str]
) -> None:
    engine = open_engine(store)
    assert parallel == ["verified"]
    reference = _sequential(store).projection
    got = engine.projection
    assert _state(got) == _state(reference)
    # The unusual values really went through the columns.
    i = got.dec_index[next(d for d in got.dec_id if got.dec_summary[got.dec_index[d]])]
    assert got.dec_rationale[i] == "line one\nline two"
    assert got.dec_summary[i] == "naïve café 日本"
    assert got.dec_refs[i] == "ADR-7\ttab"
    assert got.dec_author[i] == "  Alice   Smith "
    assert got.dec_title[got.dec_index["d_000000000000000000000000"]] == ""
    assert sorted(t is None for t in got.dec_time).count(True) >= 3


def _wide_shards() -> dict[str, bytes]:
    """A writer with few distinct titles (sent coded) and strings the plain path
    does not take, beside the generated shards' thousands (sent as joined bytes)."""
    a = ShardWriter("iaaa")
    first = decision(
        "naïve café 日本 \udc80",
        [upsert("feature", "Invoice", owner="ops")],
        rationale="Plain & <simple> \t tab",
    )
    first = _with_refs(first, "ADR-9")
    a.add(first, lamport=2, recorded_at="2026-03-01T10:00:00Z")
    a.add(None, lamport=3, recorded_at="2026-03-01T10:00:01Z")
    later = decision(
        "",
        [set_prop("feature", "Invoice", "tier", "2")],
        supersedes=[first.id, "d_000000000000000000000000"],
    )
    a.add(later, lamport=4, recorded_at="0001-01-01T00:00:00Z")
    return {"iaaa.ndjson": a.to_bytes()}


def test_titles_and_rationales_stay_in_the_bytes_they_came_in(
    tmp_path: Path, parallel: list[str]
) -> None:
    """Shards of more distinct titles than a code table holds send them as joined
    bytes, which the projection keeps and reads a value out of when asked (at 1M
    the first read's peak was 119 MB lower). Every value, iterated, sliced or
    indexed from either end, is the sequential replay's; a live append after the
    fill reads back too."""
    root = tmp_path / "store"
    write_generated(root, GenParams(2600, 2, 40))
    write_store(root, _wide_shards())
    engine = open_engine(root)
    assert parallel == ["verified"]
    got, reference = engine.projection, _sequential(root).projection
    assert isinstance(got.dec_title, TextColumn)  # the rationales are coded
    assert isinstance(got.dec_time, TimeColumn)
    assert _state(got) == _state(reference)
    n = len(reference.dec_id)
    for name in ("dec_title", "dec_rationale", "dec_time", "dec_lamport"):
        column, want = getattr(got, name), list(getattr(reference, name))
        assert len(column) == n
        assert [column[i] for i in range(-n, n)] == want + want
        assert list(column[5:40:3]) == want[5:40:3]
        with pytest.raises(IndexError):
            column[n]
    i = got.dec_index[next(d for d in got.dec_id if got.dec_refs[got.dec_index[d]])]
    assert got.dec_title[i] == "naïve café 日本 \ufffd"  # as Go writes a lone surrogate
    assert got.dec_rationale[i] == "Plain & <simple> \t tab"
    stub = got.dec_index["d_000000000000000000000000"]
    assert (got.dec_title[stub], got.dec_time[stub]) == ("", None)

    # A live reload's events after the fill (new decisions superseding old ones,
    # one with no time) leave what the sequential replay leaves.
    old = next(i for i, by in enumerate(reference.dec_superseded_by) if by)
    element = reference.dec_shapes[old][0]
    for n, (title, time) in enumerate(
        (("Appended after the fill", "2026-04-01T00:00:00Z"), ("And again", ""))
    ):
        event = {
            "hash": f"sha256:{n:064x}",
            "lamport": 99 + n,
            "install_id": "iaaa",
            "recorded_at": time,
            "decision": {
                "id": f"d_{'f' * 23}{n}",
                "title": title,
                "rationale": "why",
                "mutations": [],
                "shapes": [element],
                "targets": [element],
                "supersedes": [reference.dec_id[old], reference.dec_id[0]],
            },
        }
        for p in (got, reference):
            p.apply_new(event)
    assert _state(got) == _state(reference)
    j = got.dec_index["d_" + "f" * 23 + "0"]
    assert (got.dec_title[j], got.dec_time[j], got.dec_lamport[j]) == (
        "Appended after the fill",
        1775001600,
        99,
    )
    assert list(got.dec_superseded_by[old])[-2:] == [j, j + 1]
    assert {j, j + 1} <= set(got.heads_of(element))


def test_the_parallel_open_lets_go_of_the_log_s_pages_as_it_reads_them(
    store: Path, parallel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mapped shards' pages are released after their keys are read and as the
    replay goes (at 1M they were 0.8 GB of the first open's peak); what is read
    again after each release is the same projection."""
    released: list[int] = []
    real = cold_open.release_pages

    def counted(maps: Any) -> None:
        released.append(1)
        real(maps)

    monkeypatch.setattr(cold_open, "release_pages", counted)
    monkeypatch.setattr(cold_open, "RELEASE_EVERY", 1)  # after every line
    engine = open_engine(store)
    assert parallel == ["verified"]
    assert _state(engine.projection) == _state(_sequential(store).projection)
    assert len(released) >= len(engine.projection.dec_id)


def test_a_verifier_without_columns_falls_back_to_the_exact_replay(
    store: Path, parallel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_with_hashes = cold_open._with_hashes

    def with_hashes(*args: object) -> object:
        scan = real_with_hashes(*args)  # type: ignore[arg-type]
        scan.fields = None  # as if the shard were read again without them
        return scan

    monkeypatch.setattr(cold_open, "_with_hashes", with_hashes)
    engine = open_engine(store)
    assert parallel == ["verified"]  # every line passed, yet the columns are missing
    assert _state(engine.projection) == _state(_sequential(store).projection)


def _line(lamport: int, actor: str = "a") -> bytes:
    return (
        b'{"hash":"sha256:%s","op":"assert","actor":"%s","install_id":"i",'
        b'"lamport":%d,"recorded_at":"","parents":null,"decision":null}\n'
        % (b"0a" * 32, actor.encode(), lamport)
    )


@pytest.mark.parametrize(
    ("lines", "in_place"),
    [
        ([_line(n) for n in (1, 9, 10, 12345, 0, 999999999999999999)], True),
        ([_line(3), _line(4, actor="a much longer actor"), _line(5)], False),
        ([_line(3), _line(-4), _line(5)], False),  # a sign
        ([_line(3), _line(2**63 - 1)], False),  # 19 digits
        ([_line(7)], True),
    ],
)
def test_lamports_read_in_place_equal_a_search_of_every_line(
    lines: list[bytes], in_place: bool
) -> None:
    data = b"".join(lines)
    a = np.frombuffer(data, dtype=np.uint8)
    starts = np.array([0, *itertools.accumulate(len(x) for x in lines[:-1])])
    assert (cold_open._lamports_in_place(a, starts) is not None) is in_place
    keys = cold_open._read_keys(data)
    assert keys is not None
    found = [int(x) for x in cold_open._LAMPORT_RE.findall(data)]
    assert list(keys.lamports) == found


def test_without_a_scratch_directory_results_come_through_the_pipe(
    store: Path, parallel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kw: object) -> object:
        raise OSError("no space left on device")

    monkeypatch.setattr(pool, "make_scratch", refuse)
    engine = open_engine(store)
    assert parallel == ["verified"]
    assert _state(engine.projection) == _state(_sequential(store).projection)


def test_keys_read_by_a_worker_equal_the_keys_read_here(tmp_path: Path) -> None:
    """The worker that reads half the shards' keys sends what this process reads."""
    root = tmp_path / "gen"
    write_generated(root, GenParams(total=600, installs=4, elems=40))
    paths = sorted((root / "log").iterdir())
    for out in (None, str(tmp_path / "keys.pickle")):
        sent: list[Any] = received(cold_open._keys_into(paths, out))
        for path, theirs in zip(paths, sent, strict=True):
            mine = cold_open._read_keys(path.read_bytes())
            assert theirs is not None and mine is not None
            assert isinstance(theirs.hashes, HashColumn)  # raw bytes, not strings
            assert theirs.hashes == mine.hashes
            assert list(theirs.hashes) == [
                line[9:80].decode() for line in path.read_bytes().splitlines()
            ]
            assert theirs.offsets == mine.offsets
            assert theirs.lamports == mine.lamports
            for column in ("starts", "ends", "prefix"):
                assert np.array_equal(getattr(theirs, column), getattr(mine, column))


#: A child that opens a store on the parallel path the way the explorer does: another
#: thread running (so the pool spawns) and ``sys.stderr`` replaced by an object of no
#: descriptor, as Textual's capture is (its ``fileno()`` answers -1).
_UNDER_A_CAPTURED_STDERR = """
import io, sys, threading, time
from pathlib import Path
import kgai_tui.core.engine.cold_open as cold_open
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.replay.columns import TextColumn, TimeColumn
from kgai_tui.core.replay.projection import Projection


class Captured(io.TextIOBase):
    def fileno(self):
        return -1


cold_open.PARALLEL_MIN_BYTES = 0
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
real, sys.stderr = sys.stderr, Captured()
try:
    engine = open_engine(Path(sys.argv[1]))
    digest = export_digest(export_parts(engine.projection))
finally:
    sys.stderr = real
print(digest)
"""


def test_a_host_that_captured_stderr_still_opens_a_big_store(tmp_path: Path) -> None:
    """The explorer could not open a store over 8 MiB without its caches: the spawn
    pool's resource tracker was handed ``sys.stderr.fileno()``, -1 under Textual."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: the store opens on the serial path")
    root = write_store(tmp_path / "store", _unusual_shards())
    done = subprocess.run(
        [sys.executable, "-c", _UNDER_A_CAPTURED_STDERR, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    serial = open_engine(root)
    assert done.stdout.strip() == export_digest(export_parts(serial.projection))


def test_the_whole_replays_order_read_from_bytes_is_the_tuples_order(
    store: Path, parallel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time index is built in canonical order from the cold open's scans, whose
    hashes are bytes: that order equals the tuples' sort of the same events, across
    shards, duplicates and unusual lamports, at every chunk boundary."""
    from kgai_tui.core.replay import order as replay_order
    from kgai_tui.core.replay import ordered_keys

    monkeypatch.setattr(ordered_keys, "_CHUNK", 7)
    engine = open_engine(store)
    assert parallel == ["verified"]
    assert all(isinstance(s.hashes, HashColumn) for s in engine.scans if len(s))
    ordered = replay_order.canonical_order(engine.scans)
    assert isinstance(ordered, replay_order.OrderedKeys)
    as_lists = [dataclasses.replace(s, hashes=list(s.hashes)) for s in engine.scans]
    expected = replay_order.canonical_order(as_lists)
    assert isinstance(expected, list) and len(expected) > 600
    assert list(ordered) == expected
    assert [ordered[i] for i in range(len(expected))] == expected
    assert ordered[5:40:3] == expected[5:40:3]
    assert list(ordered[10:30]) == expected[10:30] and ordered[-1] == expected[-1]
    # The search index's order (shard names break ties): the same, with names and lines.
    by_name = replay_order.decision_keys(engine.scans)
    assert isinstance(by_name, OrderedDecisionKeys)
    want = replay_order.decision_keys(as_lists)
    assert isinstance(want, list)
    assert list(by_name) == want
    cut = len(want) // 3
    assert list(by_name[:cut]) == want[:cut] and list(by_name[cut:]) == want[cut:]
    assert list(by_name[cut:][2:9]) == want[cut + 2 : cut + 9]
