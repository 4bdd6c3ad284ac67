"""The first read after appending events, two source trees side by side.

    python benchmarks/append_then_read.py STORE --events N [--writers 300] \
        [--elements 100000] [--append 1000] [--rounds 5] \
        --before SRC CACHE --after SRC CACHE

STORE is a store written by ``kgai-tui bench generate`` with ``--writers`` and
``--elements``, holding exactly its first N generated events (the count ``status``
prints). Each round appends the next ``--append`` events
(:func:`benchmarks.genlog.append_store`: byte for byte what a generation of that
many more would have written, spread over the writers), then runs the first
``status --json`` of each tree: a whole process with ``PYTHONPATH`` set to the tree
(a ``git archive`` of a commit, compiled) and ``KGAI_TUI_CACHE_DIR`` to the tree's
own cache, whose model the read extends by those events. The trees alternate which
goes first. Each row gives wall time and peak RSS (``ru_maxrss`` of the child).
Before the first round each tree reads the store once (its cache brought up to
date) and both must count N. The store grows by ``--append`` per round: pass the
new count next time.

With ``--taking-turns``, both trees read one cache (the ``--before`` one; their
model format must be the same): each round appends, then one tree reads, the
trees alternating. At 10M two caches do not both stay in the page cache, and
every read would pay for disk; on one cache each read extends the model its
turn-mate left, with the same pages at hand.

``--pause S`` waits S seconds after each read, as a user does between commands:
a command-line read leaves its housekeeping to a detached process
(:mod:`kgai_tui.core.model.tidy`), and a read that comes before it has finished
waits for the model's lock. The last lines give each tree's median, slowest
round and how many rounds took over a second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.genlog import GenParams, append_store


def first_status(store: Path, src: Path, cache: Path) -> tuple[float, int, int]:
    """One first read: seconds, peak RSS in MB, events the answer counts."""
    env = {**os.environ, "PYTHONPATH": str(src), "KGAI_TUI_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "kgai_tui", "status", "--json", "--store", str(store)]
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=src, env=env, stdout=subprocess.PIPE)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"status failed in {src}: exit {child.returncode}")
    return seconds, usage.ru_maxrss // 1024, int(json.loads(out)["events"])


def main() -> None:
    """Append, read with each tree, print one row per tree and round."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--events", type=int, required=True)
    ap.add_argument("--writers", type=int, default=300)
    ap.add_argument("--elements", type=int, default=100_000)
    ap.add_argument("--append", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--before", nargs=2, metavar=("SRC", "CACHE"), required=True)
    ap.add_argument("--after", nargs=2, metavar=("SRC", "CACHE"), required=True)
    ap.add_argument("--taking-turns", action="store_true")
    ap.add_argument("--pause", type=float, default=0.0)
    args = ap.parse_args()
    trees = [("before", *map(Path, args.before)), ("after", *map(Path, args.after))]
    if args.taking_turns:  # one cache: the --before one
        trees = [(name, src, trees[0][2]) for name, src, _ in trees]
    total = args.events
    # Both caches brought up to the store as it is, and the count checked before
    # anything is appended: appending from a wrong count writes events the
    # generator would not have (wrong parents and clocks).
    for name, src, cache in trees:
        if first_status(args.store, src, cache)[2] != total:
            raise SystemExit(f"{name}: the store does not hold {total} events")
    times: dict[str, list[float]] = {}
    for r in range(args.rounds):
        append_store(
            args.store, GenParams(total, args.writers, args.elements), args.append
        )
        total += args.append
        order = trees if r % 2 == 0 else trees[::-1]
        if args.taking_turns:
            order = [trees[r % 2]]
        for name, src, cache in order:
            seconds, peak, events = first_status(args.store, src, cache)
            if events != total:
                raise SystemExit(f"{name} read {events} events, not {total}")
            print(
                f"round {r + 1} ({total} events) {name}: {seconds:.2f} s, {peak} MB",
                flush=True,
            )
            times.setdefault(name, []).append(seconds)
            time.sleep(args.pause)
    for name, got in times.items():
        over = sum(t > 1.0 for t in got)
        print(
            f"{name}: median {statistics.median(got):.2f} s, max {max(got):.2f} s,"
            f" {over} of {len(got)} over 1 s"
        )
    print(f"the store now holds {total} events")


if __name__ == "__main__":
    main()
