"""Time from launch to the explorer's first usable view, in a real terminal (tmux).

Usable means: the header shows the counts (elements · decisions), the element tree
has a kind branch with leaves, and the details pane shows the selected element. The
screen is captured every 100 ms; the script prints each run and the median.

    python benchmarks/app_first_view.py STORE [--runs N] [--cache-dir DIR] [--src DIR]
        [--env NAME=VALUE ...] [--resident-after SECONDS] [--moves N]

With ``--resident-after``, each run then waits that long (the timeline and the
other views compute in the background), prints the app process's resident and
peak memory (``VmRSS``, ``VmHWM``), presses ``[`` (the slider's first step back)
and prints how long until the banner says "as of". With ``--moves N`` it then
moves the slider N times across the whole range (:data:`MOVES`: first and last
moment, a step, a month, now), timing each until the banner changes, and prints
the memory after them.

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
from typing import Final


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


def _memory_mb(session: str) -> tuple[float, float, float]:
    """``(VmRSS, VmHWM, RssFile)`` in MB of the app: the pane's process (``env``
    execs it). RssFile is the part of VmRSS that is pages of mapped files (the
    time index is read in place): clean, shared with the page cache, reclaimable."""
    pid = subprocess.run(
        ["tmux", "display-message", "-p", "-t", session, "#{pane_pid}"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return (
        int(fields["VmRSS"].split()[0]) / 1024,
        int(fields["VmHWM"].split()[0]) / 1024,
        int(fields["RssFile"].split()[0]) / 1024,
    )


def _history(session: str, timeout_s: float) -> float:
    """Seconds from ``[`` until the banner shows a past moment."""
    start = time.monotonic()
    subprocess.run(["tmux", "send-keys", "-t", session, "["], check=True)
    while time.monotonic() - start < timeout_s:
        lines = _screen(session).splitlines()
        if len(lines) > 1 and lines[1].lstrip().startswith("as of "):
            return time.monotonic() - start
        time.sleep(0.1)
    return float("nan")


#: Slider moves that each change the moment (from the last one): the first
#: moment, two steps on, now, the last moment, a month back, a step, a month on,
#: two steps back.
MOVES = ("<", "]", "]", ">", "[", "{", "]", "}", "[", "[")


def _banner(session: str) -> str:
    """The header and the banner: the decision count and the moment (a step of
    one second changes the count; the banner shows minutes)."""
    return "\n".join(_screen(session).splitlines()[:2])


#: How long the user is still after the moves before the memory is read again (the
#: explorer collects its garbage once idle, :mod:`kgai_tui.ui.idle_gc`).
STILL_SECONDS: Final = 3.0


def _memory(session: str) -> str:
    """The app's memory now, as the rows print it."""
    rss, peak, mapped = _memory_mb(session)
    return (
        f"{rss:.0f} MB resident ({mapped:.0f} MB of it mapped files),"
        f" {peak:.0f} MB peak"
    )


def _moves(session: str, count: int, timeout_s: float) -> list[float]:
    """Seconds from each key of :data:`MOVES` (cycled) until the header or the
    banner changes."""
    out = []
    for n in range(count):
        before = _banner(session)
        start = time.monotonic()
        subprocess.run(["tmux", "send-keys", "-t", session, MOVES[n % len(MOVES)]])
        took = float("nan")
        while time.monotonic() - start < timeout_s:
            if _banner(session) != before:
                took = time.monotonic() - start
                break
            time.sleep(0.01)
        out.append(took)
        time.sleep(0.2)  # the rest of the screen settles
    return out


def _run_once(
    command: str, timeout_s: float, resident_after: float | None, moves: int = 0
) -> float:
    session = f"kgai-first-view-{os.getpid()}"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    start = time.monotonic()
    subprocess.run(
        ["tmux", "new", "-d", "-s", session, "-x", "120", "-y", "40", command],
        check=True,
    )
    try:
        seconds = float("nan")
        while time.monotonic() - start < timeout_s:
            if _usable(_screen(session)):
                seconds = time.monotonic() - start
                break
            time.sleep(0.1)
        if resident_after is not None and seconds == seconds:
            time.sleep(resident_after)
            print(f"  after {resident_after:.0f} s: {_memory(session)}", flush=True)
            back = _history(session, timeout_s)
            print(f"  [ -> as of: {back:.2f} s; then {_memory(session)}", flush=True)
            if moves:
                took = _moves(session, moves, timeout_s)
                print(
                    f"  {moves} moves: {' '.join(f'{t:.2f}' for t in took)} s;"
                    f" median {statistics.median(took):.2f} s, max {max(took):.2f} s;"
                    f" then {_memory(session)}",
                    flush=True,
                )
                time.sleep(STILL_SECONDS)
                print(
                    f"  still for {STILL_SECONDS:.0f} s: {_memory(session)}", flush=True
                )
        return seconds
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
    parser.add_argument(
        "--resident-after",
        type=float,
        help="then wait this many seconds, print the memory, press [ and time it",
    )
    parser.add_argument(
        "--moves",
        type=int,
        default=0,
        help="after [, move the slider this many times and time each (MOVES)",
    )
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("kgai-tui")
    command = f"{shlex.quote(str(exe))} open --store {shlex.quote(str(args.store))}"
    env = list(args.env)
    if args.cache_dir:
        env.append(f"KGAI_TUI_CACHE_DIR={args.cache_dir}")
    if args.src:
        env.append(f"PYTHONPATH={args.src.resolve()}")
    prefix = f"env {' '.join(shlex.quote(e) for e in env)} " if env else ""
    command = f"exec {prefix}{command}"  # exec'd: the pane's process is the app
    times = []
    for n in range(args.runs):
        seconds = _run_once(command, 60, args.resident_after, args.moves)
        load = os.getloadavg()[0]
        print(f"run {n}: {seconds:.2f} s (load {load:.1f})", flush=True)
        times.append(seconds)
        time.sleep(1.0)
    print(f"median {statistics.median(times):.2f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
