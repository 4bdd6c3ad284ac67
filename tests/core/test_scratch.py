"""Scratch directories a killed process left are removed by the next one.

A cold open's worker results and the search helper's documents go to tmpfs; a
process killed with SIGKILL (or by the OOM killer) cleans nothing, and tmpfs
holds that memory until the machine restarts. Every directory is named for its
owner, and making one removes the dead owners' of the same kind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgai_tui.core.scratch import SHM, make_scratch, sweep_scratch


def _dead_pid() -> int:
    """The pid of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_dead_owners_directory_goes_and_the_others_stay(tmp_path: Path) -> None:
    where = tmp_path / "shm"
    where.mkdir()
    ns = str(os.stat("/proc/self/ns/pid").st_ino)
    dead = where / f"kgai-open-{ns}-{_dead_pid()}-abc"
    alive = where / f"kgai-open-{ns}-{os.getppid()}-def"
    other_ns = where / f"kgai-open-{int(ns) + 1}-{_dead_pid()}-jkl"
    other_kind = where / f"kgai-index-{ns}-{_dead_pid()}-ghi"
    old_unowned = where / "kgai-open-jb71sirt"
    new_unowned = where / "kgai-open-xy12ab34"
    stranger = where / "someone-elses"
    for d in (dead, alive, other_ns, other_kind, old_unowned, new_unowned, stranger):
        d.mkdir()
        (d / "result").write_bytes(b"x" * 1000)
    day_ago = time.time() - 25 * 3600
    os.utime(old_unowned, (day_ago, day_ago))
    made = Path(make_scratch("open", str(where)))
    assert made.name.startswith(f"kgai-open-{ns}-{os.getpid()}-") and made.is_dir()
    left = {p.name for p in where.iterdir()}
    assert left == {
        made.name,
        alive.name,
        other_ns.name,  # another pid namespace's: its owner cannot be asked
        other_kind.name,
        new_unowned.name,
        stranger.name,
    }
    sweep_scratch("index", str(where))
    assert not other_kind.exists() and made.exists()


def test_what_a_killed_process_left_is_removed_by_the_next(tmp_path: Path) -> None:
    """A real process makes its scratch, writes into it and is killed (SIGKILL:
    no cleanup); the next scratch of that kind removes it."""
    tmp_path = tmp_path / "shm"
    tmp_path.mkdir()
    child = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from kgai_tui.core.scratch import make_scratch\n"
        "d = Path(make_scratch('open', sys.argv[1]))\n"
        "(d / 'worker-0').write_bytes(b'r' * 100_000)\n"
        "print(d, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    assert left.is_dir()
    make_scratch("open", str(tmp_path))
    assert left.is_dir(), "its owner is alive"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert left.is_dir(), "SIGKILL runs no cleanup"
    mine = Path(make_scratch("open", str(tmp_path)))
    assert not left.exists() and mine.is_dir()


def test_scratch_goes_to_memory_when_it_can() -> None:
    made = Path(make_scratch("open"))
    try:
        if os.access(SHM, os.W_OK):
            assert made.parent == Path(SHM)
    finally:
        made.rmdir()


def test_full_memory_falls_back_to_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tmpfs refuses (full; here a file where it should be): the temp dir."""
    import tempfile

    from kgai_tui.core import scratch

    refusing = tmp_path / "not-a-dir"
    refusing.write_bytes(b"")
    monkeypatch.setattr(scratch, "SHM", str(refusing))
    made = Path(make_scratch("open"))
    try:
        assert made.parent == Path(tempfile.gettempdir())
    finally:
        made.rmdir()
