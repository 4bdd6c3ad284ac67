"""The reads right after a first read on an empty cache, two source trees side by side.

    python benchmarks/after_first_read.py STORE --before SRC --after SRC \
        [--read "diff 2026-01-01 2026-01-02 --json" ...]

For each tree (a ``git archive`` of a commit, compiled), in turn: a new empty
``KGAI_TUI_CACHE_DIR``; ``status --json`` (the first read: it answers from a replay
and leaves the read model to a detached build); then, once every process of that
cache has ended (the detached build included: their environments are read from
``/proc``), each read of :data:`READS` as a whole process, ``PYTHONPATH`` set to
the tree. Each row gives wall time and peak RSS (``ru_maxrss`` of the child, from
``os.wait4``) per tree and whether both printed the same bytes; the last lines
list what each tree left in its cache directory.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

READS: Final = (
    ("diff", "2026-01-01", "2026-01-02", "--json"),
    ("as-of", "2026-01-03", "--json"),
    ("people", "--as-of", "2026-01-03", "--json"),
    ("search", "--as-of", "2026-01-03", "decision", "--json"),
)


def _run(
    store: Path, src: Path, cache: Path, args: tuple[str, ...]
) -> tuple[float, int, str]:
    """One read: seconds, peak RSS in MB, output SHA-256."""
    env = {**os.environ, "PYTHONPATH": str(src), "KGAI_TUI_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "kgai_tui", *args, "--store", str(store)]
    digest = hashlib.sha256()
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdout is not None
    for piece in iter(lambda: child.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        digest.update(piece)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(args)} exited {code} ({src})")
    return seconds, usage.ru_maxrss // 1024, digest.hexdigest()


def _builders(cache: Path) -> list[Path]:
    """The ``/proc`` entries of the processes started with this cache directory."""
    mark = f"KGAI_TUI_CACHE_DIR={cache}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark in (entry / "environ").read_bytes():
                found.append(entry)
        except OSError:
            continue
    return found


def _peak_kb(entry: Path) -> int:
    """A process's peak resident memory so far (``VmHWM``), 0 once it is gone."""
    try:
        for line in (entry / "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _side(
    store: Path, src: Path, reads: list[tuple[str, ...]]
) -> tuple[list[tuple[float, int, str]], list[str]]:
    """The first read, the wait for its build, then each read; and the cache's files."""
    cache = Path(tempfile.mkdtemp(prefix="kgai-after-first-"))
    try:
        rows = [_run(store, src, cache, ("status", "--json"))]
        start = time.perf_counter()
        peak = 0  # the detached build's: no one waits for it, so it is read meanwhile
        while busy := _builders(cache):
            peak = max(peak, *map(_peak_kb, busy))
            time.sleep(0.2)
        rows.append((time.perf_counter() - start, peak // 1024, ""))
        rows += [_run(store, src, cache, read) for read in reads]
        files = sorted(p.name for d in cache.iterdir() for p in d.iterdir())
    finally:
        # 0.8 GB at 1M each side: left behind, a few runs filled the disk (and a
        # build that cannot write its files measures nothing).
        for entry in _builders(cache):  # a run stopped early: its build goes too
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)
        shutil.rmtree(cache, ignore_errors=True)
    return rows, files


def main() -> None:
    """Run both trees in turn and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--read", action="append", metavar="'READ ARGS'")
    args = parser.parse_args()
    reads = [tuple(shlex.split(r)) for r in args.read] if args.read else list(READS)
    before, kept_before = _side(args.store, args.before, reads)
    after, kept_after = _side(args.store, args.after, reads)
    names = [
        "status --json (first read)",
        "its detached build, to the end",
        *map(" ".join, reads),
    ]
    print("| read | before | after | same bytes |")
    print("|---|---|---|---|")
    for name, b, a in zip(names, before, after, strict=True):
        if not b[2]:
            print(f"| {name} | {b[0]:.2f} s, {b[1]} MB | {a[0]:.2f} s, {a[1]} MB | - |")
            continue
        same = "yes" if b[2] == a[2] else "NO"
        print(
            f"| {name} | {b[0]:.2f} s, {b[1]} MB | {a[0]:.2f} s, {a[1]} MB | {same} |"
        )
    print(f"before's cache: {' '.join(kept_before)}")
    print(f"after's cache: {' '.join(kept_after)}")


if __name__ == "__main__":
    main()
