"""``diff --json`` over windows of growing width, two source trees side by side.

    python benchmarks/diff_windows.py STORE --before SRC CACHE --after SRC CACHE \
        [--runs 2] [--window FROM TO ...]

Each run is a whole process, ``python -m kgai_tui diff FROM TO --store STORE
--json`` with ``PYTHONPATH`` set to a source tree (a ``git archive`` of a commit,
compiled) and ``KGAI_TUI_CACHE_DIR`` to that tree's own cache (two formats of a
saved file must not overwrite each other). The two trees alternate run by run, so
both see the same machine; each row gives wall time, peak RSS (``ru_maxrss`` of
the child, from ``os.wait4``), the output's size, and whether both printed the
same bytes. The default windows are the 1M bench store's: an hour, two days, a
week and every event.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

WINDOWS: Final = (
    ("2026-01-05T00:00:00Z", "2026-01-05T01:00:00Z"),
    ("2026-01-03", "2026-01-05"),
    ("2026-01-05", "2026-01-12"),
    ("2025-12-31", "2026-01-12"),
)


def _run(
    store: Path, src: Path, cache: Path, window: tuple[str, str]
) -> tuple[float, int, int, str]:
    """One diff: seconds, peak RSS in MB, output bytes, output SHA-256."""
    env = {**os.environ, "PYTHONPATH": str(src), "KGAI_TUI_CACHE_DIR": str(cache)}
    argv = [
        sys.executable,
        "-m",
        "kgai_tui",
        "diff",
        *window,
        "--store",
        str(store),
        "--json",
    ]
    digest, size = hashlib.sha256(), 0
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=src, env=env, stdout=subprocess.PIPE)
    assert child.stdout is not None
    for piece in iter(lambda: child.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        digest.update(piece)
        size += len(piece)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"diff {' '.join(window)} exited {child.returncode} ({src})")
    return seconds, usage.ru_maxrss // 1024, size, digest.hexdigest()


def main() -> None:
    """Run every window ``--runs`` times on both trees, interleaved, and print rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--before", nargs=2, metavar=("SRC", "CACHE"), required=True)
    parser.add_argument("--after", nargs=2, metavar=("SRC", "CACHE"), required=True)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--window", nargs=2, action="append", metavar=("FROM", "TO"))
    args = parser.parse_args()
    sides = {"before": args.before, "after": args.after}
    print("| window | run | before | after | out | same bytes |")
    print("|---|---|---|---|---|---|")
    for window in [tuple(w) for w in args.window] if args.window else WINDOWS:
        for run in range(1, args.runs + 1):
            got = {
                side: _run(args.store, Path(src), Path(cache), window)
                for side, (src, cache) in sides.items()
            }
            (bs, bm, size, bd), (as_, am, _, ad) = got["before"], got["after"]
            print(
                f"| {window[0]}..{window[1]} | {run} | {bs:.2f} s, {bm} MB "
                f"| {as_:.2f} s, {am} MB | {size / 1e6:.1f} MB | {'yes' if bd == ad else 'NO'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
