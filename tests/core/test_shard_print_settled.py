"""A process hashes a settled shard's edges once, and never misses a change.

``prints_from_disk`` reuses the edge hashes it took from a file whose change time
was at least ``SETTLE_NS`` old, while the file's size, inode and times are still the
same. These tests hold it to :func:`print_of` of the file as it is, on every kind of
change a shard can see (an append, a same-size edit in place, a rename over it, a
``touch``), and show that the settled edges really are not read again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgai_tui.core.store import shard_print
from kgai_tui.core.store.regular_file import open_regular
from kgai_tui.core.store.shard_print import SETTLE_NS, print_of, prints_from_disk

LINE = b'{"hash":"sha256:00","op":"assert"}\n'


def fresh(log: Path, name: str) -> shard_print.ShardPrint:
    """The print of the file as it is, hashed now."""
    with open_regular(log / name) as f:
        return print_of(name, f)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A log directory with two shards of 3,000 lines (edges well apart)."""
    log = tmp_path / "log"
    log.mkdir()
    for name in ("a.ndjson", "b.ndjson"):
        (log / name).write_bytes(LINE * 3000)
    return log


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock the prints read runs SETTLE_NS ahead: every file looks settled."""
    clock = SimpleNamespace(time_ns=lambda: time.time_ns() + SETTLE_NS)
    monkeypatch.setattr(shard_print, "time", clock)
    monkeypatch.setattr(shard_print, "_SETTLED", {})


def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names ``print_of`` is called for from now on (the edges read)."""
    calls: list[str] = []
    real = shard_print.print_of

    def counting(name: str, f: object) -> shard_print.ShardPrint:
        calls.append(name)
        return real(name, f)  # type: ignore[arg-type]

    monkeypatch.setattr(shard_print, "print_of", counting)
    return calls


def test_settled_edges_are_hashed_once(
    log: Path, later: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["a.ndjson", "b.ndjson"]
    first = prints_from_disk(log, names)
    calls = hashed(monkeypatch)
    again = prints_from_disk(log, names)
    assert calls == []
    assert again == first == [fresh(log, n) for n in names]


@pytest.mark.parametrize("change", ["append", "edit", "rename", "touch"])
def test_every_change_is_hashed_again(
    log: Path, later: None, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Whatever the change, the print is the file's as it is now."""
    names = ["a.ndjson", "b.ndjson"]
    before = prints_from_disk(log, names)
    target = log / "a.ndjson"
    if change == "append":
        with target.open("ab") as fh:
            fh.write(LINE)
    elif change == "edit":  # same size, first byte changed, times put back
        st = target.stat()
        with target.open("r+b") as fh:
            fh.write(b"[")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif change == "rename":
        (log / "new").write_bytes(target.read_bytes())
        os.replace(log / "new", target)
    else:
        os.utime(target)
    calls = hashed(monkeypatch)
    now = prints_from_disk(log, names)
    assert calls == ["a.ndjson"]  # the other shard's edges are settled
    assert now == [fresh(log, n) for n in names]
    assert now[0] != before[0] and now[1] == before[1]
    if change == "edit":  # the bytes moved, not only the times
        assert now[0].head != before[0].head


def test_a_file_changed_just_now_is_always_hashed(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the real clock, a file written a moment ago is not settled: a second
    change within its change time's step could not be told apart by the stat."""
    monkeypatch.setattr(shard_print, "_SETTLED", {})
    names = ["a.ndjson"]
    prints_from_disk(log, names)
    calls = hashed(monkeypatch)
    assert prints_from_disk(log, names) == [fresh(log, "a.ndjson")]
    assert calls == ["a.ndjson"]
