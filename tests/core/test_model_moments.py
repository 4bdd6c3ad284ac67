"""``as-of`` from the read model's moments equals a fresh replay up to the cut (issue 17).

The reference is :func:`project_as_of` over the shards as they are (select by recorded
time, sort canonically, replay). The model answers from its moments (written from
the whole store's time index by the first ``as-of`` that opened it) or from its
current tables; when neither covers a cut it says so, and :func:`as_of_answer`
answers from the whole store and stores the moments anew. Every property checks the
bytes, and that the model really answered (not always the fallback).
"""

from __future__ import annotations

import marshal
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from builders import ShardWriter, decision, link, meta_written, upsert, write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_model import append_files, scratch, split
from test_replay_properties import Chooser, Generated, lines, stores

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.moments import as_of_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import (
    epoch_to_datetime,
    format_epoch,
    format_rfc3339,
    rfc3339_epoch,
)
from kgai_tui.core.model.moments import MOMENTS_KEY
from kgai_tui.core.model.moments_write import engine_prints
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.model.seal import let_go_held_locks, model_lock, sealed
from kgai_tui.core.reads.as_of import as_of_obj, project_as_of
from kgai_tui.core.wire.ids import element_id
from kgai_tui.demo import DEMO_STORE

SETTINGS = settings(max_examples=20, deadline=None)


def _at(stamp: int) -> datetime:
    moment = epoch_to_datetime(stamp)
    assert moment is not None
    return moment


def _epoch(text: str) -> int:
    stamp = rfc3339_epoch(text)
    assert stamp is not None
    return stamp


def _reference(root: Path, stamp: int) -> bytes:
    """as-of at ``stamp`` and what a search as of then keeps (element ids, the ids
    of the decisions in force), from a replay."""
    cut = _at(stamp)
    then = project_as_of(open_engine(root).shards, cut)
    heads = {then.dec_id[i] for hs in then.heads.values() for i in hs}
    keys = [sorted(then.graph.nodes), sorted(heads)]
    return orjson.dumps([as_of_obj(then, cut), keys])


def _from_model(model: ModelEngine, stamp: int) -> bytes | None:
    got = model.as_of_obj(stamp, format_rfc3339(_at(stamp)))
    keys = model.moment_keys(stamp)
    assert (got is None) == (keys is None), "as-of and search cover the same cuts"
    return None if got is None else orjson.dumps([got, keys])


def _stamps(root: Path) -> list[int]:
    """Every recorded time in the log, a second either side, and far off."""
    engine = open_engine(root)
    times = {
        t
        for shard in engine.shards
        for item in shard.events
        if (t := rfc3339_epoch(item.decoded.event.recorded_at)) is not None
    }
    near = {t + d for t in times for d in (-1, 0, 1)}
    return sorted(near | {0, 4_102_444_800})


def _keep(root: Path, cache: Path) -> bool:
    """What the first as-of through the whole store does: store the moments."""
    model = open_model(root, cache)
    whole = open_engine(root)
    return model.keep_moments(whole.time_index, engine_prints(whole))


def _answer(root: Path, cache: Path, stamp: int) -> bytes:
    """``as_of_answer`` as the CLI runs it: the model first, the whole store if not."""
    text = format_rfc3339(_at(stamp))
    got = as_of_answer(
        lambda: open_model(root, cache),  # type: ignore[arg-type, return-value]
        text,
    )
    return orjson.dumps(got.obj)


def _as_of_only(reference: bytes) -> bytes:
    return orjson.dumps(orjson.loads(reference)[0])


@SETTINGS
@given(gen=stores())
def test_moments_answer_every_cut_as_a_replay(gen: Generated) -> None:
    with scratch() as (root, cache):
        write_store(root, gen.files())
        saved = _keep(root, cache)
        answered = compare_every_cut(root, cache, _from_model, _reference)
        if saved:
            # Stored moments cover the whole log as it was written: every cut.
            assert answered == len(_stamps(root))


@SETTINGS
@given(gen=stores(), data=st.data())
def test_moments_stay_exact_across_appends_in_any_split(
    gen: Generated, data: st.DataObject
) -> None:
    for root, cache, last in appended_in_any_split(gen, data):
        compare_every_cut(root, cache, _from_model, _reference)
        if last:
            for stamp in _stamps(root)[:: max(1, len(_stamps(root)) // 6)]:
                want = _as_of_only(_reference(root, stamp))
                assert _answer(root, cache, stamp) == want


def appended_in_any_split(
    gen: Generated, data: st.DataObject
) -> Iterator[tuple[Path, Path, bool]]:
    """The store written in a prefix of each shard with its moments kept, then after
    each non-empty appended part (``(root, cache, whether it was the last)``); the
    moments are kept again after each, as a whole-store fallback does."""
    first, later = split(gen, Chooser(draw=data.draw))
    parts = [part for part in later if part]
    with scratch() as (root, cache):
        write_store(root, first)
        _keep(root, cache)
        if not parts:
            yield root, cache, True  # nothing appended: the store as written
        for n, part in enumerate(parts):
            append_files(root, part)
            yield root, cache, n == len(parts) - 1
            _keep(root, cache)


def compare_every_cut(
    root: Path,
    cache: Path,
    from_model: Callable[[ModelEngine, int], bytes | None],
    reference: Callable[[Path, int], bytes],
) -> int:
    """Every answer the model gives at any cut equals the replay's; how many it gave."""
    model = open_model(root, cache)
    answered = 0
    try:
        for stamp in _stamps(root):
            got = from_model(model, stamp)
            if got is not None:
                answered += 1
                assert got == reference(root, stamp), stamp
    finally:
        model.close()
    return answered


def _moving_store(seed: int, n: int) -> list[tuple[str, Any]]:
    """Events recorded in time order (ties too), as a team records them day by day:
    links added and retired, supersessions (contested heads too), placeholders
    filled in later, a decision asserted twice."""
    rng = random.Random(seed)
    writers = [ShardWriter(f"i-{w}", actor=f"w{w}") for w in range(3)]
    els = [("svc", f"e{i}") for i in range(5)]
    made: list[Any] = []
    out: list[tuple[str, Any]] = []
    stamp = 1_767_225_600
    for k in range(n):
        stamp += rng.choice((0, 0, 60, 3600))
        w = rng.randrange(len(writers))
        muts = []
        for _ in range(rng.randint(0, 2)):
            a, b = rng.sample(els, 2)
            op = rng.choice(("upsert", "add_link", "add_link", "retire_link"))
            if op == "upsert":
                muts.append(upsert(*a))
            else:
                muts.append(link(op, a, b, rng.choice(("USES", "OWNS"))))
        shapes = [element_id(*e) for e in rng.sample(els, rng.randint(0, 2))]
        sup = rng.sample([d.id for d in made], min(len(made), rng.randint(0, 2)))
        if rng.random() < 0.15:
            sup.append(decision(f"later {k}", [upsert(*els[0])]).id)
        if made and rng.random() < 0.1:
            d = rng.choice(made)
        else:
            d = decision(f"t{k}", muts, supersedes=sup, shapes=shapes)
            made.append(d)
        if rng.random() < 0.1:  # fill in a placeholder some decision superseded
            d = decision(f"later {rng.randrange(k + 1)}", [upsert(*els[0])])
        ev = writers[w].add(d, lamport=k + 1, recorded_at=format_epoch(stamp))
        out.append((f"{writers[w].install_id}.ndjson", ev))
    return out


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 40),
    parts=st.lists(st.integers(1, 6), min_size=1, max_size=6),
)
def test_appends_recorded_in_time_order_are_answered_by_the_moments(
    seed: int, n: int, parts: list[int]
) -> None:
    """Appends at or after the latest time: every cut outside the gaps between each
    append's first and last time answers from the model, equal to a replay."""
    events = _moving_store(seed, n)
    first = max(1, n - sum(parts))
    with scratch() as (root, cache):
        write_store(root, _files(events[:first]))
        assert _keep(root, cache)
        at = first
        gaps: list[tuple[int, int]] = []
        for size in parts:
            chunk = events[at : at + size]
            if not chunk:
                break
            at += size
            append_files(root, _files(chunk))
            times = [rfc3339_epoch(ev.recorded_at) for _, ev in chunk]
            gaps.append((min(times), max(times)))  # type: ignore[type-var]
            model = open_model(root, cache)
            assert model.how == "append"
            for stamp in _stamps(root):
                got = _from_model(model, stamp)
                if got is None:
                    # Only between an append's first and last time.
                    assert any(lo <= stamp < hi for lo, hi in gaps), stamp
                    continue
                assert got == _reference(root, stamp), stamp
            model.close()


def _files(events: list[tuple[str, Any]]) -> dict[str, bytes]:
    by: dict[str, list[Any]] = {}
    for name, ev in events:
        by.setdefault(name, []).append(ev)
    return {name: lines(evs) for name, evs in by.items()}


def _writer_store(root: Path) -> ShardWriter:
    w = ShardWriter("i-one")
    for n in range(8):
        w.add(
            decision(
                f"d{n}",
                [
                    upsert("feature", f"F{n % 3}"),
                    link(
                        "add_link", ("feature", f"F{n % 3}"), ("service", "S"), "uses"
                    ),
                ],
            ),
            lamport=n + 1,
            recorded_at=f"2026-01-0{n + 1}T00:00:00Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events[:6])})
    return w


def test_an_append_keeps_the_past_and_now_and_drops_what_it_changed(
    tmp_path: Path,
) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = _writer_store(root)
    assert _keep(root, cache)
    day = [_epoch(f"2026-01-0{n}T00:00:00Z") for n in range(1, 10)]
    append_files(root, {"i-one.ndjson": lines(w.events[6:])})  # days 7 and 8
    model = open_model(root, cache)
    assert model.how == "append"
    for stamp in (day[0] - 1, day[2], day[5], day[6] - 1):
        assert _from_model(model, stamp) == _reference(root, stamp)  # the past
    assert _from_model(model, day[8]) == _reference(root, day[8])  # now
    assert _from_model(model, day[6]) is None  # between: not covered
    model.close()
    assert _answer(root, cache, day[6]) == _as_of_only(_reference(root, day[6]))
    # That answer opened the whole store and stored the moments anew.
    model = open_model(root, cache)
    assert _from_model(model, day[6]) == _reference(root, day[6])
    model.close()


def test_appends_one_moment_at_a_time_leave_no_gap(tmp_path: Path) -> None:
    """A record now adds one step: every cut, before it and after, still answers."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = _writer_store(root)
    assert _keep(root, cache)
    for ev in w.events[6:]:
        append_files(root, {"i-one.ndjson": lines([ev])})
        model = open_model(root, cache)
        assert model.how == "append"
        for stamp in _stamps(root):
            assert _from_model(model, stamp) == _reference(root, stamp), stamp
        model.close()


def test_a_back_dated_append_narrows_what_the_moments_cover(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = _writer_store(root)
    assert _keep(root, cache)
    other = ShardWriter("i-two")
    other.add(
        decision("late news", [upsert("feature", "F0")]),
        lamport=50,
        recorded_at="2026-01-02T12:00:00Z",  # recorded before the last six
    )
    append_files(root, {"i-two.ndjson": lines(other.events)})
    model = open_model(root, cache)
    early = rfc3339_epoch("2026-01-02T00:00:00Z")
    late = rfc3339_epoch("2026-01-05T00:00:00Z")
    assert early is not None and late is not None
    assert _from_model(model, early) == _reference(root, early)
    assert _from_model(model, late) is None
    model.close()
    assert _answer(root, cache, late) == _as_of_only(_reference(root, late))
    del w


def test_demo_store_every_moment_from_the_model(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    model = open_model(DEMO_STORE, cache)
    db = sqlite3.connect(model_path(DEMO_STORE, cache))
    # The demo holds a decision whose fields change with time and contested heads.
    assert db.execute("SELECT count(*) FROM at_dec").fetchone()[0] >= 1
    assert db.execute("SELECT count(*) FROM at_multi").fetchone()[0] >= 1
    db.close()
    for stamp in _stamps(DEMO_STORE):
        assert _from_model(model, stamp) == _reference(DEMO_STORE, stamp), stamp
    model.close()


def test_damaged_moments_fall_back_to_the_whole_store(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    path = model_path(DEMO_STORE, cache)
    stamp = rfc3339_epoch("2026-03-01T00:00:00Z")
    assert stamp is not None
    want = _reference(DEMO_STORE, stamp)
    for sql, args in (
        ("UPDATE at_block SET t = ?", (b"\x01\x02\x03",)),
        ("UPDATE at_el SET touch = ? WHERE n = 2", (b"not marshal",)),
        ("UPDATE meta SET v = ? WHERE k = ?", (marshal.dumps([1]), MOMENTS_KEY)),
        ("DELETE FROM dec WHERE ix = 0", ()),
    ):
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(sql, args)
        db.close()
        # The seal catches any change of the file: the model is rebuilt, and the
        # answer comes from the whole store, which stores the moments again.
        assert _answer(DEMO_STORE, cache, stamp) == _as_of_only(want)
        model = open_model(DEMO_STORE, cache)
        assert _from_model(model, stamp) == want
        model.close()


def test_corrupt_rows_behind_an_intact_seal_are_never_believed(tmp_path: Path) -> None:
    """Even past the seal, moments that do not decode give no answer (not a wrong one)."""
    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    path = model_path(DEMO_STORE, cache)
    stamp = rfc3339_epoch("2026-03-01T00:00:00Z")
    assert stamp is not None
    for sql in (
        "UPDATE at_block SET t = x'010203'",
        "UPDATE at_state SET state = x'0102'",
        "DELETE FROM at_state",
        "UPDATE at_block SET e = v",
        "UPDATE at_block SET first = -first",
        "UPDATE at_el SET touch = x'00'",
        "UPDATE at_multi SET gs = x'ff'",
    ):
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN")
        db.execute(sql)
        engine = ModelEngine(DEMO_STORE, db, "warm", [], path)
        assert engine.as_of_obj(stamp, "x") is None, sql
        db.execute("ROLLBACK")
        engine.close()


def _cli(
    args: list[str], cache: Path, **env: str
) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache), **env}
    return subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args],
        capture_output=True,
        env=full,
        check=False,
        timeout=120,
    )


def test_cli_as_of_answers_from_the_model_after_the_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for when in ("2026-02-01", "2026-04-29T13:00:00Z", "2031-01-01"):
        args = ["as-of", when, "--store", str(DEMO_STORE), "--json"]
        off = _cli(args, tmp_path / "off", KGAI_TUI_READ_MODEL="off")
        assert off.returncode == 0, off.stderr
        for _ in range(2):
            on = _cli(args, cache)
            assert on.returncode == 0, on.stderr
            assert on.stdout == off.stdout
    db = sqlite3.connect(model_path(DEMO_STORE, cache))
    meta: Any = marshal.loads(
        db.execute("SELECT v FROM meta WHERE k = ?", (MOMENTS_KEY,)).fetchone()[0]
    )
    db.close()
    assert meta["gaps"] == [] and meta["clean"]
    # And the answer object the CLI printed is the one the model gives.
    model = open_model(DEMO_STORE, cache)
    stamp = rfc3339_epoch("2026-04-29T13:00:00Z")
    assert stamp is not None
    got = encode(as_of_answer(lambda: model, "2026-04-29T13:00:00Z"))  # type: ignore[arg-type, return-value]
    assert orjson.loads(got) == orjson.loads(_as_of_only(_reference(DEMO_STORE, stamp)))


def test_moments_of_an_earlier_layout_are_written_again(tmp_path: Path) -> None:
    """A state without the keys this version reads is no state: the whole store
    answers, and stores the moments in today's layout."""
    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    path = model_path(DEMO_STORE, cache)
    earlier = {"decisions": 65, "top": 0, "clean": True, "below": None, "fields": True}
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(
        "UPDATE meta SET v = ? WHERE k = ?", (marshal.dumps(earlier), MOMENTS_KEY)
    )
    db.close()
    engine = ModelEngine(DEMO_STORE, sqlite3.connect(path), "warm", [], path)
    stamp = _epoch("2026-03-01T00:00:00Z")
    assert engine.as_of_obj(stamp, "x") is None
    engine.close()
    assert _answer(DEMO_STORE, cache, stamp) == _as_of_only(
        _reference(DEMO_STORE, stamp)
    )
    model = open_model(DEMO_STORE, cache)
    assert _from_model(model, stamp) == _reference(DEMO_STORE, stamp)
    model.close()


def _moments_written(
    path: Path, timeout_s: float = 60.0, key: str = MOMENTS_KEY
) -> dict[str, Any] | None:
    """The moments' state (or another ``meta`` value, by ``key``) once the detached
    build has written it (:func:`builders.meta_written`)."""
    return meta_written(path, key, timeout_s)


def test_the_first_read_leaves_moments_so_the_first_as_of_reads_the_model(
    tmp_path: Path,
) -> None:
    """The detached build that follows a first read (empty cache) writes the moments
    too, from the replay it already holds: the first ``as-of`` after it answers from
    the model instead of opening the whole store again."""
    cache = tmp_path / "cache"
    first = _cli(["status", "--store", str(DEMO_STORE), "--json"], cache)
    assert first.returncode == 0, first.stderr
    path = model_path(DEMO_STORE, cache)
    state = _moments_written(path)
    assert state is not None, "the detached build wrote no moments"
    assert state["gaps"] == [] and state["clean"]
    model = open_model(DEMO_STORE, cache)
    try:
        assert model.how == "warm"
        for stamp in _stamps(DEMO_STORE)[::5]:
            assert _from_model(model, stamp) == _reference(DEMO_STORE, stamp), stamp
    finally:
        model.close()
    off = _cli(
        ["as-of", "2026-02-01", "--store", str(DEMO_STORE), "--json"],
        tmp_path / "off",
        KGAI_TUI_READ_MODEL="off",
    )
    on = _cli(["as-of", "2026-02-01", "--store", str(DEMO_STORE), "--json"], cache)
    assert on.returncode == 0 and on.stdout == off.stdout


_READ_RIGHT_AFTER = """
import sys, time
from pathlib import Path
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.model.seal import model_lock
root, cache = Path(sys.argv[1]), Path(sys.argv[2])
first = open_model(root, cache, background=True)  # forks the detached build
assert first.how == "cold", first.how
with model_lock(model_path(root, cache)):  # as a second read checks the model
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


def test_a_read_holding_the_lock_as_the_build_ends_costs_it_nothing(
    tmp_path: Path,
) -> None:
    """A read that takes the model's lock the moment the detached build lets it go
    (the second read of a first-time user, checking the model) made the build give
    up its moments and per-author steps: the first ``as-of`` then replayed the
    whole store again (34 s at 1M). The build waits for such a holder instead."""
    from kgai_tui.core.model.people_steps import PEOPLE_STEPS_KEY

    cache = tmp_path / "cache"
    path = model_path(DEMO_STORE, cache)
    run = [sys.executable, "-c", _READ_RIGHT_AFTER, str(DEMO_STORE), str(cache), "2"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "held\n", done.stderr
    moments = _moments_written(path)
    assert moments is not None, "the detached build gave up its moments"
    assert moments["gaps"] == [] and moments["clean"]
    assert _moments_written(path, key=PEOPLE_STEPS_KEY) is not None
    with model_lock(path):  # the build seals the model before it lets the lock go
        assert sealed(path)


def test_a_lock_let_go_is_free_for_another_process(tmp_path: Path) -> None:
    """After :func:`let_go_held_locks` (a detached build, its model sealed) another
    process takes the model's lock without waiting."""
    path = tmp_path / "m.sqlite"
    probe = (
        "import sys; from pathlib import Path\n"
        "from kgai_tui.core.model.seal import model_lock\n"
        "try:\n"
        "    with model_lock(Path(sys.argv[1]), wait=False): print('took')\n"
        "except BlockingIOError: print('held')\n"
    )

    def other() -> str:
        run = [sys.executable, "-c", probe, str(path)]
        return subprocess.run(run, capture_output=True, text=True, check=True).stdout

    with model_lock(path):
        assert other().strip() == "held"
        let_go_held_locks()
        assert other().strip() == "took"


def _extended_past_a_held_read(root: Path, cache: Path) -> Path:
    """The model extended by an appended decision while a read held its snapshot:
    sealed, its write-ahead log left unfolded, and no connection open."""
    path = model_path(root, cache)
    held = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    held.execute("BEGIN")
    held.execute("SELECT count(*) FROM meta").fetchone()
    mate = ShardWriter("i-late-mate", actor="bo")
    mate.add(
        decision("late", [upsert("feature", "Late")]),
        lamport=10_000,
        recorded_at="2030-01-01T00:00:00Z",
    )
    append_files(root, {"i-late-mate.ndjson": mate.to_bytes()})
    appended = open_model(root, cache)
    assert appended.how == "append"
    appended.close()  # the next connection closes last
    held.close()
    wal = path.with_name(path.name + "-wal")
    assert wal.stat().st_size > 0, "the held read kept the log from being folded"
    assert sealed(path)
    return path


def test_moments_that_come_too_late_leave_the_model_sealed() -> None:
    """An as-of that read the whole store before a writer extended the model finds
    its moments too late, and stores nothing: and leaves the model as trusted as
    it found it. (It once closed its connection last, which folded the write-ahead
    log a reader had held back: the seal broke, and every process after rebuilt the
    model from the log; a reader racing a writer then failed outright.)"""
    with scratch() as (root, cache):
        shutil.copytree(DEMO_STORE, root)
        open_model(root, cache).close()
        stale = open_engine(root)
        path = _extended_past_a_held_read(root, cache)
        assert not open_model(root, cache).keep_moments(
            stale.time_index, engine_prints(stale)
        )
        assert sealed(path)
        assert open_model(root, cache).how == "warm"


def test_a_model_found_current_under_the_lock_stays_sealed() -> None:
    """A process that waited for the model's lock and finds it already extended
    (by the writer it waited for) leaves it sealed. Its connection, closing last,
    folded the write-ahead log a reader had held back; the broken seal sent the
    next read to rebuild the whole model, and a reader racing a writer to fail
    ("its seal does not match the model file")."""
    from kgai_tui.core.model.open import _bring_up_to_date

    with scratch() as (root, cache):
        shutil.copytree(DEMO_STORE, root)
        open_model(root, cache).close()
        path = _extended_past_a_held_read(root, cache)
        done = _bring_up_to_date(root, path, rebuild=False)
        assert done == "warm"
        assert sealed(path)
        assert open_model(root, cache).how == "warm"
