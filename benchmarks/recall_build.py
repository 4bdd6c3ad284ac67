"""The recall index's first build, two source trees side by side, in process.

    python benchmarks/recall_build.py STORE --before SRC --after SRC [--runs 2]
        [--synthetic N]

Each run is a fresh interpreter with ``PYTHONPATH`` set to a source tree (a ``git
archive`` of a commit, compiled); the two trees alternate run by run. A run
replays STORE in process, then builds the model's recall files from that replay
(``build_recall``, what a model's first build and a first read's detached build
do), sampling its resident memory every 3 ms. A row gives, per tree, the build's
seconds, the resident memory before it and its peak, and whether both trees wrote
the same bytes (the file names are random: their kinds and contents are hashed).

The bench generator's texts are a few tokens each (a title of four words, a
rationale of three). ``--synthetic N`` also builds the recall postings
(``Fields``) of N decisions with realistic text: 8-word titles and 40-word
rationales drawn from 20,000 words (fixed seeds, made a run of 65,536 rows at a
time, as a segment makes them from the replay), in a row of its own, its bytes
those of the vocabulary and the postings. A tree with ``Fields.chunked`` takes
the runs as they come; an older one, whole columns.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_INNER = r"""
import gc, hashlib, json, random, sys, tempfile, threading, time, types
from pathlib import Path

def rss():
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) // 1024

peak, on = [0], [False]

def sample():
    while True:
        if on[0]:
            peak[0] = max(peak[0], rss())
        time.sleep(0.003)

threading.Thread(target=sample, daemon=True).start()

def measured(build):
    gc.collect()
    base = peak[0] = rss()
    start = time.perf_counter()
    on[0] = True
    out = build()
    on[0] = False
    return out, time.perf_counter() - start, base, peak[0]

mode, arg = sys.argv[1], sys.argv[2]
h = hashlib.sha256()
if mode == "store":
    import kgai_tui.core.engine.cold_open as co
    co.threading = types.SimpleNamespace(active_count=lambda: 1)  # the sampler
    from kgai_tui.core.engine.open import replay_log
    from kgai_tui.core.heap import GcPaused, trim_heap
    from kgai_tui.core.model.recall_store import build_recall
    engine = replay_log(Path(arg))
    trim_heap()
    model = Path(tempfile.mkdtemp()) / "model.sqlite"
    def build():
        with GcPaused():
            return build_recall(model, engine.projection)
    _, seconds, base, top = measured(build)
    for f in sorted(model.parent.rglob("*"), key=lambda f: f.name.split("-")[0]):
        if f.is_file():
            h.update(f.name.split("-")[0].encode())
            h.update(f.read_bytes())
else:
    import numpy as np
    from kgai_tui.core.recall.fields import Fields
    n, run = int(arg), 1 << 16
    pick = np.random.default_rng(7).integers(0, 10**9, 20000)
    words = np.array([f"w{x:x}" for x in pick], dtype=object)
    def texts(a, k, salt):  # rows a.. of a run, k words each, the same in every tree
        got = np.random.default_rng(a * 7 + salt).integers(0, 20000, (min(run, n - a), k))
        return [" ".join(words[row]) for row in got]
    def runs(k, salt):
        return (texts(a, k, salt) for a in range(0, n, run))
    def build():
        if hasattr(Fields, "chunked"):  # the texts of a run of rows at a time
            return Fields.chunked([(3.0, runs(8, 1)), (1.0, runs(40, 2))], n)
        whole = ((3.0, [s for r in runs(8, 1) for s in r]),
                 (1.0, [s for r in runs(40, 2) for s in r]))
        return Fields(iter(whole), n)
    fields, seconds, base, top = measured(build)
    for length in sorted(fields.vocab.buckets):
        h.update(fields.vocab.buckets[length].toks.tobytes())
    for weight, csr in fields.fields:
        h.update(repr(weight).encode())
        h.update(csr.ptr.astype("<i8").tobytes())
        h.update(csr.members.astype("<i4").tobytes())
print(json.dumps({"seconds": seconds, "base": base, "peak": top,
                  "digest": h.hexdigest()[:16]}))
"""


def _run(src: Path, mode: str, arg: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _INNER, mode, arg],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def main() -> None:
    """Alternate the two trees, print one row per run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--synthetic", type=int, default=0)
    args = parser.parse_args()
    cases = [("store", str(args.store))]
    if args.synthetic:
        cases.append(("synthetic", str(args.synthetic)))
    print(
        "| case | run | before: s, MB before, peak (+) | after: s, MB before, peak (+) | same |"
    )
    print("|---|---|---|---|---|")
    for mode, arg in cases:
        for n in range(args.runs):
            rows = [_run(src, mode, arg) for src in (args.before, args.after)]
            cells = [
                f"{r['seconds']:.2f} s, {r['base']}, {r['peak']} (+{r['peak'] - r['base']})"
                for r in rows
            ]
            same = "yes" if rows[0]["digest"] == rows[1]["digest"] else "NO"
            print(
                f"| {mode} | {n + 1} | {cells[0]} | {cells[1]} | {same} |", flush=True
            )


if __name__ == "__main__":
    main()
