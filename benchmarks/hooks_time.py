"""What each agent hook costs, whole process (issue 44): one table.

Runs ``/usr/bin/time -v python -m kgai_tui hook NAME`` with the fixtures' hook JSON
(tests/fixtures/hooks) against a copy of the demo store in a git repository, warm
(one run first), ``--runs`` times each; prints the median wall time and the largest
peak RSS. The target is under one second.

Usage::

    python benchmarks/hooks_time.py [--runs 7] [--store STORE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "hooks"
_RSS = re.compile(rb"Maximum resident set size \(kbytes\): (\d+)")
_WALL = re.compile(rb"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\d+):([\d.]+)")
CASES = [
    ("session-start", "session-start.json", "edit-no-record.jsonl"),
    ("stop (asks)", "stop.json", "edit-no-record.jsonl"),
    ("stop (recorded: silent)", "stop.json", "edit-recorded-mcp.jsonl"),
    ("pre-edit", "pre-edit.json", "edit-no-record.jsonl"),
]


def main() -> None:
    """Measure every case; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--store", type=Path, default=HERE.parent / "assets" / "demo-store")
    args = ap.parse_args()
    top = Path(tempfile.mkdtemp(prefix="kgai-hooks-"))
    repo = top / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    shutil.copytree(args.store, repo / ".kgai" / "store")
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(top / "cache")}
    print(f"load: {os.getloadavg()[0]:.2f}")
    print("| hook | wall (median) | peak RSS |\n|---|---|---|")
    try:
        for label, event, transcript in CASES:
            stdin = (FIXTURES / event).read_text("utf-8")
            stdin = stdin.replace("TRANSCRIPT", str(FIXTURES / transcript))
            stdin = stdin.replace("CWD", str(repo))
            hook = label.split(" ")[0]
            walls, rss = [], 0
            for n in range(args.runs + 1):
                done = subprocess.run(
                    [
                        "/usr/bin/time",
                        "-v",
                        sys.executable,
                        "-m",
                        "kgai_tui",
                        "hook",
                        hook,
                    ],
                    input=stdin.encode(),
                    capture_output=True,
                    env=env,
                    cwd=top,
                    check=True,
                )
                m, r = _WALL.search(done.stderr), _RSS.search(done.stderr)
                assert m is not None and r is not None
                if n:  # the first run warms the read model
                    walls.append(int(m.group(1)) * 60 + float(m.group(2)))
                    rss = max(rss, int(r.group(1)))
            print(
                f"| {label} | {statistics.median(walls):.2f} s | {rss / 1024:.0f} MB |"
            )
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
