"""Opening a store whole: the two-core cold open equals the sequential replay,
byte for byte, whatever the log holds; its time index answers as-of as the
replay at each cut does; nothing is written, into the store or the cache.

The whole store keeps no cache, of its projection or of its time index (issue
40: the read model is the one derived store; the replay builds it, and answers
with the model switched off).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from benchmarks.genlog import GenParams, append_store, write_store
from kgai_tui.core.engine import cold_open
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import epoch_to_datetime
from kgai_tui.core.reads.as_of import as_of_obj, project_as_of
from kgai_tui.core.reads.context import context_obj
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.reads.health import status_obj
from kgai_tui.core.reads.kg import conflicts_obj, heads_obj, history_obj

PARAMS = GenParams(3000, 5, 200)


def answers(engine: Engine) -> bytes:
    """Everything a user can read, as one byte string."""
    p = engine.projection
    eids = sorted(p.graph.nodes)[:: max(1, len(p.graph) // 12)]
    out = {
        "digest": export_digest(export_parts(p)),
        "conflicts": conflicts_obj(p),
        "heads": heads_obj(p),
        "history": [history_obj(p, e) for e in eids if p.el_shapes.get(e)],
        "recall": context_obj(p, paths=[], about="decision reshape E000007"),
        "status": {k: v for k, v in status_obj(engine).items() if k != "root"},
        "problems": [x.describe() for x in engine.problems],
        "events": [
            (ev.hash, ev.lamport)
            for ev in (engine.event_for(h) for h in p.dec_hash[:50])
            if ev
        ],
    }
    return orjson.dumps(out, option=orjson.OPT_SORT_KEYS)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    write_store(root, PARAMS)
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def cold(root: Path) -> bytes:
    return answers(open_engine(root))


def test_the_whole_replay_writes_nothing_into_the_store_or_the_cache(
    store: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    before = sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in store.rglob("*")
    )
    for _ in range(2):
        engine = open_engine(store)
        assert engine.time_index.events  # built, in memory
    after = sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in store.rglob("*")
    )
    assert after == before
    assert not cache.exists()


# ------------------------------------------------------------- the two-core cold open


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Take the worker-process path even on a small store; record what it decided."""
    monkeypatch.setattr(cold_open, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    seen: list[str] = []
    real_optimistic, real_agrees = cold_open._optimistic, cold_open._agrees

    def optimistic(*args: object) -> object:
        out = real_optimistic(*args)
        seen.append("replayed" if out is not None else "gave up")
        return out

    def agrees(*args: object) -> bool:
        out = real_agrees(*args)
        seen.append("verified" if out else "rejected")
        return out

    monkeypatch.setattr(cold_open, "_optimistic", optimistic)
    monkeypatch.setattr(cold_open, "_agrees", agrees)
    return seen


def sequential(root: Path) -> bytes:
    names = sorted(p.name for p in (root / "log").iterdir())
    scans = [cold_open.scan_file(root / "log" / n) for n in names]
    return answers(Engine(root, scans))


def scan_columns(root: Path, engine: Engine | None = None) -> list[tuple[object, ...]]:
    """Every shard's verified columns, from ``engine`` or a sequential scan."""
    if engine is None:
        names = sorted(p.name for p in (root / "log").iterdir())
        scans = [cold_open.scan_file(root / "log" / n) for n in names]
    else:
        scans = list(engine.scans)
    return [
        (s.name, s.offsets, s.lengths, s.lines, s.lamports, s.hashes, s.flags)
        for s in scans
    ]


def test_the_parallel_open_equals_the_sequential_one(
    store: Path, parallel: list[str]
) -> None:
    engine = open_engine(store)
    assert answers(engine) == sequential(store)
    assert scan_columns(store, engine) == scan_columns(store)
    assert parallel == ["replayed", "verified"]


def test_a_bad_line_makes_the_parallel_open_replay_exactly(
    store: Path, parallel: list[str]
) -> None:
    shard = sorted((store / "log").iterdir())[2]
    lines = shard.read_bytes().split(b"\n")
    lines[5] = lines[5].replace(
        b'"title":"decision', b'"title":"Decision', 1
    )  # bad hash
    lines[7] = lines[7].replace(b'{"hash":', b'{ "hash":', 1)  # not canonical
    shard.write_bytes(b"\n".join(lines))
    engine = open_engine(store)
    assert len(engine.problems) >= 1
    assert parallel in (["gave up"], ["replayed", "rejected"])
    assert answers(engine) == sequential(store)
    # The clean shards' hashes came back as digests and were read back here.
    assert scan_columns(store, engine) == scan_columns(store)


def test_a_bad_hash_alone_is_caught_after_the_optimistic_replay(
    store: Path, parallel: list[str]
) -> None:
    shard = sorted((store / "log").iterdir())[3]
    data = shard.read_bytes()
    cut = data.index(b'"title":"decision') + len(b'"title":"')
    shard.write_bytes(data[:cut] + b"D" + data[cut + 1 :])  # the bytes still look fine
    engine = open_engine(store)
    assert parallel == ["replayed", "rejected"]
    assert [p.reason.split(":")[0] for p in engine.problems] == ["bad content hash"]
    assert answers(engine) == sequential(store)


# ------------------------------------------------------------- the time index


def as_of_answers(engine: Engine) -> bytes:
    """as-of at a few moments through the engine's time index."""
    times = sorted(t for t in engine.projection.dec_time if t is not None)
    cuts = [epoch_to_datetime(times[k * (len(times) - 1) // 4]) for k in range(5)]
    return orjson.dumps([as_of_obj(engine.time_index.at(c), c) for c in cuts])


def replayed_as_of(root: Path) -> bytes:
    engine = open_engine(root)
    times = sorted(t for t in engine.projection.dec_time if t is not None)
    cuts = [epoch_to_datetime(times[k * (len(times) - 1) // 4]) for k in range(5)]
    return orjson.dumps([as_of_obj(project_as_of(engine.shards, c), c) for c in cuts])


def test_the_replays_time_index_answers_as_of_as_the_replay_at_each_cut(
    store: Path,
) -> None:
    assert as_of_answers(open_engine(store)) == replayed_as_of(store)
    append_store(store, PARAMS, 1200)
    assert as_of_answers(open_engine(store)) == replayed_as_of(store)


def test_reading_the_log_back_survives_dropping_its_pages(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk readers release mapped pages as they go; what they read is the same."""
    import kgai_tui.core.replay.order as engine_module

    engine = open_engine(store)
    kept = [(obj, ok) for obj, ok in engine.decision_objs()]
    monkeypatch.setattr(engine_module, "RELEASE_EVERY", 1)  # release after each line
    drops: list[int] = []
    real_drop = engine_module.LineSource._drop_pages

    def counted(self: engine_module.LineSource) -> None:
        drops.append(1)
        real_drop(self)

    monkeypatch.setattr(engine_module.LineSource, "_drop_pages", counted)
    dropped = [(obj, ok) for obj, ok in engine.decision_objs()]
    assert dropped == kept and len(kept) > 100
    assert len(drops) >= len(kept)


def _shard_bytes(keys: list[tuple[int, str]]) -> bytes:
    """Lines that look canonical to the key reader: the hash, op, lamport and a tail."""
    return b"".join(
        b'{"hash":"%s","op":"assert","actor":"a","install_id":"i","lamport":%d,'
        b'"recorded_at":"","parents":null,"decision":null}\n' % (h.encode(), lam)
        for lam, h in keys
    )


def test_the_numpy_replay_order_is_the_lamport_then_hash_order() -> None:
    """Colliding lamports, hashes alike in their first 32 digits, a duplicate."""
    near = "sha256:" + "ab" * 16
    shards = [
        [(5, near + "f" * 32), (5, "sha256:" + "2" * 64), (7, "sha256:" + "1" * 64)],
        [(5, near + "0" * 32), (-2, "sha256:" + "9" * 64), (7, "sha256:" + "1" * 64)],
        [],
    ]
    keys = [cold_open._read_keys(_shard_bytes(s)) for s in shards]
    assert all(k is not None for k in keys)
    order = cold_open._replay_order([k for k in keys if k is not None])
    # Hashes alike in their first 32 digits are told apart whole: no guess.
    assert order is None
    shards[0][0] = (6, near + "f" * 32)
    keys = [cold_open._read_keys(_shard_bytes(s)) for s in shards]
    order = cold_open._replay_order([k for k in keys if k is not None])
    assert order is not None
    expected = sorted((lam, h, si) for si, s in enumerate(shards) for lam, h in s)
    assert [(h, si) for si, _, _, h, _ in order] == [(h, si) for _, h, si in expected]


def test_the_parallel_open_works_when_threads_run(
    store: Path, parallel: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With other threads alive (the app, the MCP server) workers are spawned, not
    forked: they start from a fresh interpreter and must find everything by import."""
    import threading

    methods: list[str] = []
    real_context = cold_open.get_context

    def context(method: str) -> object:
        methods.append(method)
        return real_context(method)

    monkeypatch.setattr(cold_open, "get_context", context)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert threading.active_count() > 1
        engine = open_engine(store)
    finally:
        stop.set()
        other.join()
    assert methods == ["spawn"] and parallel == ["replayed", "verified"]
    assert answers(engine) == sequential(store)
    assert scan_columns(store, engine) == scan_columns(store)
