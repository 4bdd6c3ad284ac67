"""The per-author steps behind ``people --as-of`` (issue 17): stored, reused, kept
exact across appends, dropped when they no longer hold, never believed corrupt.

Each test compares the model's answer with a fresh replay up to the cut
(:func:`people_obj` over :func:`project_as_of`) byte for byte.
"""

from __future__ import annotations

import marshal
import sqlite3
from pathlib import Path

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store
from test_model import append_files
from test_model_moments import (
    _cli,
    _keep,
    _moments_written,
    _stamps,
    compare_every_cut,
)
from test_model_people_at import _from_model, _reference
from test_replay_properties import lines

from kgai_tui.core.answers.people import people_answer
from kgai_tui.core.gosem.gotext import format_epoch, rfc3339_epoch
from kgai_tui.core.model import people_at
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.people_steps import PEOPLE_STEPS_KEY
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.model.seal import write_seal
from kgai_tui.core.wire.ids import element_id

DAY = 86_400
START = 1_767_225_600  # 2026-01-01T00:00:00Z


def _team(root: Path, days: int) -> list[ShardWriter]:
    """Three writers, two authors, a decision a day, each superseding the one before
    on its element two days later."""
    writers = [
        ShardWriter("i-a", actor="ann"),
        ShardWriter("i-b", actor="bob"),
        ShardWriter("i-c", actor="ann"),
    ]
    made: list[str] = []
    for k in range(days):
        sup = [made[k - 2]] if k >= 2 else []
        who = writers[k % 3].actor
        d = decision(f"d{k}", [upsert("svc", f"e{k % 3}")], supersedes=sup, author=who)
        made.append(d.id)
        writers[k % 3].add(d, lamport=k + 1, recorded_at=format_epoch(START + k * DAY))
    write_store(root, {f"{w.install_id}.ndjson": lines(w.events) for w in writers})
    return writers


def _read(root: Path, cache: Path) -> sqlite3.Connection:
    """Read-only, as readers do: a writable connection closing last would
    checkpoint the log away and break the seal."""
    return sqlite3.connect(f"file:{model_path(root, cache)}?mode=ro", uri=True)


def _bound(root: Path, cache: Path) -> int | None:
    db = _read(root, cache)
    try:
        row = db.execute(
            "SELECT v FROM meta WHERE k = ?", (PEOPLE_STEPS_KEY,)
        ).fetchone()
        return None if row is None else int(marshal.loads(row[0])["below"])
    finally:
        db.close()


def _authors(root: Path, cache: Path) -> list[str]:
    db = _read(root, cache)
    try:
        return [a for (a,) in db.execute("SELECT author FROM at_person ORDER BY 1")]
    finally:
        db.close()


def _every_cut(root: Path, cache: Path) -> int:
    return compare_every_cut(root, cache, _from_model, _reference)


def _no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_db: object) -> object:
        raise AssertionError("the steps were built again, not read")

    monkeypatch.setattr(people_at, "people_steps_of", refuse)


def test_the_first_read_stores_the_steps_and_the_next_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 9)
    assert _keep(root, cache)
    assert _bound(root, cache) is None
    assert _every_cut(root, cache) == len(_stamps(root))
    assert _authors(root, cache) == ["ann", "bob"]
    assert _bound(root, cache) == 2**63 - 1
    _no_build(monkeypatch)
    assert _every_cut(root, cache) == len(_stamps(root))


def test_an_append_recorded_later_lowers_their_bound_and_keeps_them_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    writers = _team(root, 9)
    assert _keep(root, cache)
    _every_cut(root, cache)
    w = writers[1]
    later = START + 20 * DAY
    w.add(
        decision("late", [upsert("svc", "e9")]),
        lamport=50,
        recorded_at=format_epoch(later),
    )
    append_files(root, {"i-b.ndjson": lines(w.events[-1:])})
    model = open_model(root, cache)
    assert model.how == "append"
    model.close()
    assert _bound(root, cache) == later
    # Below the appended time the stored steps answer, unchanged; at and after it
    # the store as it is now does.
    with monkeypatch.context() as m:
        _no_build(m)
        assert _every_cut(root, cache) == len(_stamps(root))


def test_an_append_that_rewrites_a_decision_drops_them(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    writers = _team(root, 6)
    assert _keep(root, cache)
    _every_cut(root, cache)
    assert _bound(root, cache) is not None
    first = decision("d1", [upsert("svc", "e1")], author="bob")
    again = decision(
        "d1",
        [upsert("svc", "e1")],
        shapes=[element_id("svc", "e1"), element_id("svc", "e2")],  # one more
        author="bob",
    )
    assert again.id == first.id
    w = writers[1]
    w.add(again, lamport=60, recorded_at=format_epoch(START + 30 * DAY))
    append_files(root, {"i-b.ndjson": lines(w.events[-1:])})
    model = open_model(root, cache)
    assert model.how == "append"
    model.close()
    assert _bound(root, cache) is None
    assert _authors(root, cache) == []
    assert _every_cut(root, cache) > 0  # built again from the rows as they are


def test_the_moments_written_anew_drop_them(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 5)
    assert _keep(root, cache)
    _every_cut(root, cache)
    assert _authors(root, cache)
    assert _keep(root, cache)
    assert _bound(root, cache) is None
    assert _authors(root, cache) == []


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE at_person SET times = x'0102'",
        "UPDATE at_person SET writers = x'ff'",
        "UPDATE at_person SET superseded = x'01'",
        "UPDATE at_person SET elements = substr(elements, 1, length(elements) - 8)",
        "UPDATE meta SET v = x'00' WHERE k = 'people_at'",
    ],
)
def test_corrupt_steps_behind_an_intact_seal_are_never_believed(
    tmp_path: Path, sql: str
) -> None:
    """Steps that do not decode are built again from the rows (and stored anew),
    never read."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 6)
    assert _keep(root, cache)
    _every_cut(root, cache)
    path = model_path(root, cache)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(sql)
    db.close()
    write_seal(path)  # as if the bytes had gone bad where no seal sees it
    stamp = START + 3 * DAY
    built: list[object] = []
    real = people_at.people_steps_of

    def counting(db: sqlite3.Connection) -> object:
        built.append(db)
        return real(db)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(people_at, "people_steps_of", counting)
        model = open_model(root, cache)
        assert _from_model(model, stamp) == _reference(root, stamp)
        model.close()
    assert len(built) == 1
    assert _authors(root, cache) == ["ann", "bob"]  # stored anew
    answer = people_answer(
        lambda: open_model(root, cache),  # type: ignore[arg-type, return-value]
        format_epoch(stamp),
    )
    assert orjson.dumps(answer.obj) == _reference(root, stamp)


def test_a_read_that_finds_the_model_locked_answers_without_storing(
    tmp_path: Path,
) -> None:
    from kgai_tui.core.model.seal import model_lock

    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 6)
    assert _keep(root, cache)
    stamp = rfc3339_epoch("2026-01-03T12:00:00Z")
    assert stamp is not None
    with model_lock(model_path(root, cache)):
        model = open_model(root, cache)
        assert _from_model(model, stamp) == _reference(root, stamp)
        model.close()
    assert _bound(root, cache) is None
    model = open_model(root, cache)  # the lock free again: this one stores them
    assert _from_model(model, stamp) == _reference(root, stamp)
    model.close()
    assert _bound(root, cache) == 2**63 - 1


def test_one_read_answers_every_later_cut_from_the_steps_it_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived read (the MCP server) builds the steps once, stores them, and
    answers every later cut from them."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 9)
    assert _keep(root, cache)
    model = open_model(root, cache)
    stamps = _stamps(root)
    assert _from_model(model, stamps[len(stamps) // 2]) is not None
    assert _bound(root, cache) == 2**63 - 1
    _no_build(monkeypatch)
    for stamp in stamps:
        assert _from_model(model, stamp) == _reference(root, stamp), stamp
    model.close()


def test_the_writes_a_read_makes_leave_no_log_behind(tmp_path: Path) -> None:
    """The moments and the steps a read stores are folded into the model file: a
    log left as long as the write made it is looked through by every later read
    (readers never checkpoint)."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    _team(root, 40)
    wal = model_path(root, cache).with_name(model_path(root, cache).name + "-wal")

    def log_bytes() -> int:
        return wal.stat().st_size if wal.exists() else 0

    assert _keep(root, cache)
    assert log_bytes() == 0
    model = open_model(root, cache)
    assert _from_model(model, START + 5 * DAY) is not None  # stores the steps
    assert _bound(root, cache) == 2**63 - 1
    assert log_bytes() == 0
    model.close()


def test_the_first_read_leaves_the_people_steps(tmp_path: Path) -> None:
    """The detached build that follows a first read (empty cache) stores the
    per-author steps after the moments, so the first ``people --as-of`` bisects
    them instead of building them (49 s at 10M decisions)."""
    root = tmp_path / "store"
    _team(root, 9)
    cache = tmp_path / "cache"
    first = _cli(["status", "--store", str(root), "--json"], cache)
    assert first.returncode == 0, first.stderr
    stored = _moments_written(model_path(root, cache), key=PEOPLE_STEPS_KEY)
    assert stored is not None, "the detached build stored no people steps"
    model = open_model(root, cache)
    try:
        assert model.db.execute("SELECT count(*) FROM at_person").fetchone()[0] == 2
    finally:
        model.close()
    reads = ["people", "--as-of", format_epoch(START + 4 * DAY), "--store", str(root)]
    on = _cli([*reads, "--json"], cache)
    off = _cli([*reads, "--json"], tmp_path / "off", KGAI_TUI_READ_MODEL="off")
    assert on.returncode == 0 and on.stdout == off.stdout
