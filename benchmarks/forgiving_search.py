"""What forgiving search costs (issue 42): one table per store, old code beside new.

For element names drawn from the store (every 1/20th in id order, at most 20), it
times, in process on the open index (what the explorer and the MCP server pay):

* **as written**: the name;
* **lower case**: the name lower-cased (``postgresql``: split against the
  vocabulary);
* **one typo**: two neighbouring letters of the name swapped (the corrected tier);
* **unknown**: a word no store holds, with a known one (the typo tier finds
  nothing, the notes look for a nearest word);

each as ``search`` alone and as ``search`` + ``notes`` (the CLI's answer), p50 and
p95 over ``--runs`` rounds. Then whole processes: ``/usr/bin/time -v python -m
kgai_tui search --store S --json Q`` on a warm cache, median wall time and the
largest peak RSS over ``--process-runs``.

Run it with the checkout to measure first on ``PYTHONPATH`` (the old code has no
``notes``; that column is then empty)::

    KGAI_TUI_CACHE_DIR=/tmp/c python benchmarks/forgiving_search.py STORE [--json]
    PYTHONPATH=/tmp/before KGAI_TUI_CACHE_DIR=/tmp/c0 python \\
        benchmarks/forgiving_search.py STORE
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search.index import SearchIndex

_RSS = re.compile(rb"Maximum resident set size \(kbytes\): (\d+)")
_WALL = re.compile(
    rb"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)"
)


def _swap(word: str) -> str:
    if len(word) < 4:
        return word + "x"
    i = len(word) // 2
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]


def _classes(names: list[str]) -> dict[str, list[str]]:
    return {
        "as written": names,
        "lower case": [n.lower() for n in names],
        "one typo": [_swap(n) for n in names],
        "unknown": [f"{n} qqzxvj" for n in names],
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _process(store: Path, query: str, runs: int) -> tuple[float, int]:
    walls, rss = [], 0
    for _ in range(runs):
        cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "kgai_tui", "search"]
        done = subprocess.run(
            [*cmd, "--store", str(store), "--json", query],
            capture_output=True,
            check=True,
        )
        m = _WALL.search(done.stderr)
        r = _RSS.search(done.stderr)
        assert m is not None and r is not None
        walls.append(
            int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        )
        rss = max(rss, int(r.group(1)))
    return statistics.median(walls), rss


def measure(store: Path, runs: int, process_runs: int) -> dict[str, Any]:
    """Open the store's index (built on first use) and time every class."""
    engine = open_engine(store)
    index = SearchIndex.for_engine(engine)
    p = engine.projection
    named = sorted(
        (str(n), str(a["name"])) for n, a in p.graph.nodes(data=True) if a["name"]
    )
    step = max(1, len(named) // 20)
    names = [name for _, name in named[::step]][:20]
    has_notes = hasattr(index, "notes")
    out: dict[str, Any] = {"store": str(store), "names": len(names), "rows": {}}
    for label, queries in _classes(names).items():
        plain: list[float] = []
        noted: list[float] = []
        found = 0
        for _ in range(runs):
            for q in queries:
                t0 = time.perf_counter()
                hits = index.search(q)
                t1 = time.perf_counter()
                if has_notes:
                    index.notes(q, hits)
                t2 = time.perf_counter()
                plain.append((t1 - t0) * 1000)
                noted.append((t2 - t0) * 1000)
        found = sum(1 for q in queries if index.search(q))
        out["rows"][label] = {
            "found": f"{found}/{len(queries)}",
            "search p50": _pct(plain, 0.5),
            "search p95": _pct(plain, 0.95),
            "with notes p50": _pct(noted, 0.5) if has_notes else None,
            "with notes p95": _pct(noted, 0.95) if has_notes else None,
        }
    out["process"] = {}
    if process_runs:
        for label, queries in _classes(names[:1]).items():
            wall, rss = _process(store, queries[0], process_runs)
            out["process"][label] = {
                "query": queries[0],
                "wall s": wall,
                "rss MB": rss / 1024,
            }
    return out


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"store: {result['store']} ({result['names']} names)",
        "| class | found | search p50 | search p95 | + notes p50 | + notes p95 |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in result["rows"].items():

        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f} ms"

        lines.append(
            f"| {label} | {row['found']} | {ms(row['search p50'])} | "
            f"{ms(row['search p95'])} | {ms(row['with notes p50'])} | "
            f"{ms(row['with notes p95'])} |"
        )
    if result["process"]:
        lines += [
            "",
            "| whole process | query | wall (median) | peak RSS |",
            "|---|---|---|---|",
        ]
        for label, row in result["process"].items():
            lines.append(
                f"| {label} | `{row['query']}` | {row['wall s']:.3f} s | {row['rss MB']:.0f} MB |"
            )
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, measure, print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--process-runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    result = measure(args.store, args.runs, args.process_runs)
    print(f"load after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print(json.dumps(result, indent=1) if args.json else _table(result))


if __name__ == "__main__":
    main()
