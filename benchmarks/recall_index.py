"""Recall scoring, brute force versus :class:`RecallIndex`, on one store.

Usage: ``python benchmarks/recall_index.py STORE [--no-brute]``. Prints the index
build time and size, then per query the index latency (best of 5), the scan time
(once) and whether both agree exactly.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.context import decision_boost, relevance
from kgai_tui.core.recall.index import RecallIndex
from kgai_tui.core.recall.scoring import tokenize

QUERIES = [
    "E000123",
    "decision bench reshape",
    "bench decision reshape",
    "reshape",
    "decison",
    "igen",
    "zzzqqq",
    "x",
]


def main(argv: list[str]) -> int:
    """Run the table for the store in ``argv[0]``."""
    root = Path(argv[0])
    brute = "--no-brute" not in argv
    t = time.perf_counter()
    p = open_engine(root).projection
    print(f"open {time.perf_counter() - t:.1f}s, {len(p.dec_id)} decisions")
    t = time.perf_counter()
    ix = RecallIndex.from_projection(p)
    build = time.perf_counter() - t
    print(f"build {build:.2f}s, index ~{ix.nbytes() / 1e6:.0f} MB")
    print(f"{'query':26} {'index ms':>9} {'scan s':>8}  exact")
    for about in QUERIES:
        q = tokenize(about)
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            got = ix.relevances([], q)
            best = min(best, time.perf_counter() - t)
        scan, exact = "-", "-"
        if brute:
            t = time.perf_counter()
            boost = decision_boost(p, q)
            want = {e: relevance(p, e, [], q, boost) for e in p.graph.nodes}
            scan = f"{time.perf_counter() - t:.2f}"
            exact = str(want == got and ix.boost(q) == boost)
        print(f"{about!r:26} {best * 1e3:9.1f} {scan:>8}  {exact}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
