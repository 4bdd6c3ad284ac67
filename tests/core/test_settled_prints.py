"""Settled shard prints carried from one process to the next (issue 17: a CLI read
at 300 shards hashed 600 file edges on every call).

A kept print is used only while the shard's stat is what it was when a settled
print was taken; anything else is hashed again, and a kept file that does not
check out is ignored. Each test compares with a print taken from scratch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from kgai_tui.core.store import shard_print
from kgai_tui.core.store.settled_prints import load_settled, settled_path
from kgai_tui.core.store.shard_print import ShardPrint, prints_from_disk

NAMES = ["a.ndjson", "b.ndjson", "c.ndjson"]


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "store" / "log"
    log.mkdir(parents=True)
    for n, name in enumerate(NAMES):
        (log / name).write_bytes(b'{"line": %d}\n' % n * (2000 + 5000 * n))
    return log


def _new_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Forget what this process printed, as a new process would; count hashing."""
    monkeypatch.setattr(shard_print, "_SETTLED", {})
    monkeypatch.setattr(shard_print, "_SEEDED", set())
    hashed: list[str] = []
    real = shard_print.print_of

    def counting(name: str, f: object) -> ShardPrint:
        hashed.append(name)
        return real(name, f)  # type: ignore[arg-type]

    monkeypatch.setattr(shard_print, "print_of", counting)
    return hashed


def _from_scratch(log: Path, monkeypatch: pytest.MonkeyPatch) -> list[ShardPrint]:
    with monkeypatch.context() as m:
        m.setattr(shard_print, "_SETTLED", {})
        m.setattr(shard_print, "_SEEDED", {os.fsdecode(log)})  # reads nothing kept
        m.setattr(shard_print, "_keep", lambda *_: None)
        return prints_from_disk(log, NAMES)


def test_the_next_process_takes_settled_prints_without_hashing(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shard_print, "SETTLE_NS", 0)  # every print counts as settled
    hashed = _new_process(monkeypatch)
    first = prints_from_disk(log_dir, NAMES)
    assert hashed == NAMES
    assert [r[0] for r in load_settled(log_dir)] == NAMES
    hashed = _new_process(monkeypatch)
    assert prints_from_disk(log_dir, NAMES) == first
    assert hashed == []


def test_a_shard_changed_after_the_kept_print_is_hashed_again(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shard_print, "SETTLE_NS", 0)
    _new_process(monkeypatch)
    old = prints_from_disk(log_dir, NAMES)
    with open(log_dir / "b.ndjson", "ab") as fh:
        fh.write(b'{"appended": 1}\n')
    # Rewritten in place: the same size, the modification time put back.
    c = log_dir / "c.ndjson"
    st = c.stat()
    data = bytearray(c.read_bytes())
    data[3] = ord("X")
    c.write_bytes(bytes(data))
    os.utime(c, ns=(st.st_atime_ns, st.st_mtime_ns))
    hashed = _new_process(monkeypatch)
    now = prints_from_disk(log_dir, NAMES)
    assert sorted(hashed) == ["b.ndjson", "c.ndjson"]
    assert now == _from_scratch(log_dir, monkeypatch)  # (hashes the three)
    assert now[0] == old[0] and now[1] != old[1] and now[2].head != old[2].head


@pytest.mark.parametrize(
    "kept",
    [
        b"not json",
        b'{"v": 1, "digest": "0", "rows": []}',
        b'{"v": 1, "rows": [["a.ndjson", 1, 2, 3, 4, "h", "t"]], "digest": "x"}',
        b'{"v": 2, "rows": [], "digest": ""}',
        b'{"v": 1, "rows": [["../x", 1, 2, 3, 4, "h", "t", 5]], "digest": ""}',
    ],
)
def test_a_kept_file_that_does_not_check_out_is_ignored(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch, kept: bytes
) -> None:
    path = settled_path(log_dir)
    path.parent.mkdir(parents=True)
    path.write_bytes(kept)
    assert load_settled(log_dir) == []
    hashed = _new_process(monkeypatch)
    now = prints_from_disk(log_dir, NAMES)
    assert hashed == NAMES
    assert now == _from_scratch(log_dir, monkeypatch)


def test_a_lying_row_with_a_good_digest_is_used_only_for_its_exact_stat(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row is trusted for the stat it names, never for the file as it is."""
    from kgai_tui.core.store.settled_prints import save_settled

    st = (log_dir / "a.ndjson").stat()
    wrong = ("a.ndjson", st.st_size + 1, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    save_settled(log_dir, [(*wrong, "0" * 64, "0" * 64)])
    hashed = _new_process(monkeypatch)
    now = prints_from_disk(log_dir, NAMES)
    assert hashed == NAMES
    assert now == _from_scratch(log_dir, monkeypatch)


def test_a_print_taken_before_the_change_time_settled_is_never_kept(
    log_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _new_process(monkeypatch)
    prints_from_disk(log_dir, NAMES)  # just written: not settled
    assert not settled_path(log_dir).exists()


_CHILD = """
import sys, orjson
from pathlib import Path
from kgai_tui.core.store import shard_print
if sys.argv[2] == "refuse":
    def refuse(*_):
        raise AssertionError("hashed")
    shard_print.print_of = refuse
log = Path(sys.argv[1])
names = sorted(p.name for p in log.iterdir())
prints = shard_print.prints_from_disk(log, names)
sys.stdout.write(orjson.dumps([p.to_list() for p in prints]).decode())
"""


def test_two_real_processes(log_dir: Path, tmp_path: Path) -> None:
    """A read in a fresh interpreter after another: the same prints, no hashing."""
    time.sleep(shard_print.SETTLE_NS / 1e9 + 0.2)  # let the change times settle
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}

    def child(mode: str) -> list[object]:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(log_dir), mode],
            capture_output=True,
            env=env,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr.decode()
        return list(orjson.loads(done.stdout))

    first = child("hash")
    assert settled_path(log_dir).is_file()
    assert child("refuse") == first


def test_a_caller_with_its_own_cache_directory_keeps_them_there(
    log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Benchmarks and tests open stores with private caches: nothing of theirs may
    land in the user's cache directory."""
    monkeypatch.setattr(shard_print, "SETTLE_NS", 0)
    _new_process(monkeypatch)
    private = tmp_path / "private"
    prints_from_disk(log_dir, NAMES, private)
    assert settled_path(log_dir, private).is_file()
    assert not settled_path(log_dir).exists()
    hashed = _new_process(monkeypatch)
    prints_from_disk(log_dir, NAMES, private)
    assert hashed == []
