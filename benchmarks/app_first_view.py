"""Time from launch to the explorer's first usable view, in a real terminal (tmux).

Usable means: the header shows the counts (elements · decisions), the element tree
has a kind branch with leaves, and the details pane shows the selected element. The
screen is captured every 100 ms; the script prints each run and the median.

    python benchmarks/app_first_view.py STORE [--runs N] [--cache-dir DIR] [--src DIR]
        [--env NAME=VALUE ...]

Run it with warm caches (open the store once before) to measure the promise "the
first view is usable within 3 seconds with warm caches".
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _screen(session: str) -> str:
    out = subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
    )
    return out.stdout


def _usable(screen: str) -> bool:
    lines = screen.splitlines()
    if not lines or " elements · " not in lines[0]:
        return False
    has_branch = any("▼" in ln and "(" in ln and ")" in ln for ln in lines)
    has_details = any(
        ln.rstrip().endswith("│ In force") or "│ History (" in ln for ln in lines[2:]
    )
    return has_branch and has_details


def _run_once(command: str, timeout_s: float) -> float:
    session = f"kgai-first-view-{os.getpid()}"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    start = time.monotonic()
    subprocess.run(
        ["tmux", "new", "-d", "-s", session, "-x", "120", "-y", "40", command],
        check=True,
    )
    try:
        while time.monotonic() - start < timeout_s:
            if _usable(_screen(session)):
                return time.monotonic() - start
            time.sleep(0.1)
        return float("nan")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> None:
    """Launch ``kgai-tui open`` on a store several times and report the times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache-dir", help="KGAI_TUI_CACHE_DIR for the app")
    parser.add_argument(
        "--src",
        type=Path,
        help="run kgai_tui from this source tree (e.g. a git archive of a commit)",
    )
    parser.add_argument(
        "--env", action="append", default=[], help="NAME=VALUE for the app (repeat)"
    )
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("kgai-tui")
    command = f"{shlex.quote(str(exe))} open --store {shlex.quote(str(args.store))}"
    env = list(args.env)
    if args.cache_dir:
        env.append(f"KGAI_TUI_CACHE_DIR={args.cache_dir}")
    if args.src:
        env.append(f"PYTHONPATH={args.src.resolve()}")
    if env:
        command = f"env {' '.join(shlex.quote(e) for e in env)} {command}"
    times = []
    for n in range(args.runs):
        seconds = _run_once(command, timeout_s=60)
        load = os.getloadavg()[0]
        print(f"run {n}: {seconds:.2f} s (load {load:.1f})", flush=True)
        times.append(seconds)
        time.sleep(1.0)
    print(f"median {statistics.median(times):.2f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
