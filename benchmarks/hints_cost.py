"""What vocabulary hints cost a recall on a big store (issue 20): one table.

A thin recall (a topic, fewer than 3 elements passing) carries ``hints``
(:mod:`kgai_tui.core.recall.hints`); the issue asks that a recall with hints stay
within the recall target (< 50 ms in process at 1M decisions). This measures, for
the fixed queries of :data:`QUERIES`, the recall the CLI makes (``context --about Q
--json``: :func:`~kgai_tui.core.answers.recall.recall_answer` over the read model,
:func:`~kgai_tui.cli.support.model_source`, then the JSON bytes) with and without
hints. "Without" is the same call with ``context.is_thin`` answering False: the
answer as it was before hints, everything else equal.

Columns (milliseconds, medians of ``--runs`` after one warm-up, with and without
alternating):

* **held**: one model engine held for every run: decision rows and the lamport
  column it already read stay read (a reader that keeps its snapshot); also as
  CPU time, which a loaded host inflates less than wall time;
* **fresh**: a new model engine per run (opening it is not timed), so each run
  pays what one ``kgai-tui context`` process, and each MCP ``recall`` call (the
  server opens the model per call), pays after opening the store: the element
  lamports and any decision rows are read from SQLite again;
* **process**: ``/usr/bin/time -v kgai-tui context --store S --about Q --json``,
  wall time and peak RSS (``--process-runs``); "without" runs the same CLI through
  ``python -m benchmarks.hints_cost --cli-without-hints ...`` (same entry point,
  ``is_thin`` patched).

The machine load (``os.getloadavg``) is printed before and after each row: other
people's test suites share this host, and a load above ~1.5 slows every column.

Usage::

    KGAI_TUI_CACHE_DIR=/tmp/me/cache .venv/bin/python -m benchmarks.hints_cost \\
        /tmp/kgeng/kg1m [--runs 7] [--process-runs 5] [--no-process] [--case worst]
        [--without hints|bridge]

``--without bridge`` makes "without" the hints as they were before the bridge
(issue 42): WordNet's alternatives off, everything else equal.

The store must already have its read model in ``KGAI_TUI_CACHE_DIR`` (run any read
on it once); the store itself is only read.
"""

from __future__ import annotations

import functools
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["QUERIES", "Query", "main"]


@dataclass(frozen=True, slots=True)
class Query:
    """One measured topic and why it is in the set."""

    case: str
    about: str
    why: str


#: The fixed set, on the generated 1M store (``kgai-tui bench generate``: elements
#: ``feature`` ``E000000``-``E009999`` with a ``batch`` prop; decisions titled
#: "decision N: reshape E..." with rationale "bench decision by igen...").
QUERIES: Final[list[Query]] = [
    Query("miss", "message queue", "newcomer words (paraphrase set): nothing near"),
    Query("miss", "shopping basket", "newcomer words: nothing near"),
    Query("miss", "content delivery network", "newcomer words, 3-token initials"),
    Query("miss", "avoiding double charges", "newcomer words: nothing near"),
    Query("empty", "zzzqqq", "no store word near: no item, no candidate"),
    Query("thin", "E0123 rollout", "2 items, no near miss"),
    Query(
        "thin",
        "E000123 rollout plan mobile web checkout page later today",
        "1 item; ~1,900 near misses, 11 distinct scores",
    ),
    Query(
        "worst",
        "bench zzzz",
        "all 10,000 tied via decision rationale; ~100 tied decisions each",
    ),
    Query("worst", "batch zzzz qqqq", "all 10,000 tied via the props key"),
    Query("worst", "feature zzzz qqqq wwww rrrr", "all 10,000 tied via the kind"),
    Query(
        "worst",
        "igen000000000007 rollout plan now",
        "all 10,000 near misses in 2 ties (one writer exact, 29 one edit)",
    ),
    Query(
        "bridged",
        "picture compression",
        "19 WordNet alternatives, none reaching an element",
    ),
    Query(
        "bridged",
        "lot of choices",
        "19 alternatives; 'batch' (a props key) reaches all 10,000 elements, "
        "'decision making' every decision's title",
    ),
    Query(
        "bridged",
        "judgment on the workbench",
        "16 alternatives; 'judicial decision' and 'bench' each score all 1M decisions",
    ),
]


#: What "without" takes away: ``hints`` (``is_thin`` answers False: recall as
#: before hints) or ``bridge`` (the hints without WordNet's alternatives: as
#: before the bridge). Set from ``--without``.
WITHOUT: list[str] = ["hints"]


def _patch_without() -> tuple[object, str, object]:
    """Patch what ``WITHOUT`` names away; return what to put back."""
    if WITHOUT[0] == "bridge":
        from kgai_tui.core.recall import bridge

        saved = getattr(bridge, "wordnet")  # noqa: B009 (patched)
        setattr(bridge, "wordnet", _no_wordnet)  # noqa: B010
        return bridge, "wordnet", saved
    from kgai_tui.core.reads import context

    saved = getattr(context, "is_thin")  # noqa: B009 (not exported; patched)
    setattr(context, "is_thin", _never)  # noqa: B010
    return context, "is_thin", saved


@contextmanager
def _without_hints() -> Iterator[None]:
    """Recall without what ``WITHOUT`` names, nothing else changed."""
    module, name, saved = _patch_without()
    try:
        yield
    finally:
        setattr(module, name, saved)


def _no_wordnet() -> None:
    return None


def _never(total: int, q_toks: object) -> bool:
    return False


def _close(engine: object) -> None:
    """Close a model engine (its SQLite connection); an in-memory one has nothing."""
    close = getattr(engine, "close", None)
    if close is not None:
        close()


def _answer_bytes(engine: Any, about: str) -> bytes:
    """What ``kgai-tui context --about ABOUT --json`` computes after opening."""
    from kgai_tui.core.answers.answer import encode
    from kgai_tui.core.answers.recall import recall_answer

    return encode(recall_answer(lambda: engine, (), about))


def _timed(call: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call (CPU time moves less with the load)."""
    start, cpu = time.perf_counter(), time.process_time()
    call()
    return (time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3


def _in_process(store: Path, about: str, runs: int) -> dict[str, float]:
    """Median ms: held engine and fresh engine, with and without hints."""
    from kgai_tui.cli.support import model_source

    source = model_source(str(store))
    held = source()
    samples: dict[str, list[float]] = {
        k: [] for k in ("held", "held0", "fresh", "fresh0", "cpu", "cpu0")
    }
    for warm in (True, *([False] * runs)):
        for without in (False, True):
            suffix = "0" if without else ""
            with _without_hints() if without else _nothing():
                got = _timed(lambda: _answer_bytes(held, about))
                engine = source()
                try:
                    once = _timed(functools.partial(_answer_bytes, engine, about))
                finally:
                    _close(engine)
            if not warm:
                samples["held" + suffix].append(got[0])
                samples["cpu" + suffix].append(got[1])
                samples["fresh" + suffix].append(once[0])
    _close(held)
    return {k: statistics.median(v) for k, v in samples.items()}


@contextmanager
def _nothing() -> Iterator[None]:
    yield


_ELAPSED: Final = re.compile(
    r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)"
)
_RSS: Final = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def _process(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and median peak RSS (MB) of ``/usr/bin/time -v argv``."""
    walls: list[float] = []
    rss: list[float] = []
    for k in range(runs + 1):
        done = subprocess.run(
            ["/usr/bin/time", "-v", *argv],
            capture_output=True,
            text=True,
            check=True,
        )
        m = _ELAPSED.search(done.stderr)
        r = _RSS.search(done.stderr)
        if m is None or r is None:
            raise RuntimeError(f"no /usr/bin/time output: {done.stderr[-400:]}")
        hours, minutes, seconds = m.groups()
        wall = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
        if k:  # the first run warms the page cache
            walls.append(wall)
            rss.append(int(r.group(1)) / 1024)
    return statistics.median(walls), statistics.median(rss)


def _shape(store: Path, about: str) -> tuple[int, int, int]:
    """Items passing, near misses (hint candidates) and hints of the answer."""
    import numpy as np

    from kgai_tui.cli.support import model_source
    from kgai_tui.core.reads.context import context_obj, recall_index_for
    from kgai_tui.core.recall.scoring import tokenize

    engine = model_source(str(store))()
    try:
        p = engine.projection
        index = recall_index_for(p)
        assert index is not None
        _, rel = index.relevance_array([], tokenize(about))
        near = int(np.count_nonzero((rel > 0) & (rel < 1)))
        out = context_obj(p, paths=[], about=about)
        return int(out["total"]), near, len(out.get("hints", ()))
    finally:
        _close(engine)


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str]) -> int:
    """Print the table for the store in ``argv[0]`` (see the module doc)."""
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    store = Path(argv[0])
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 7
    prun = (
        int(argv[argv.index("--process-runs") + 1]) if "--process-runs" in argv else 5
    )
    process = "--no-process" not in argv
    case = argv[argv.index("--case") + 1] if "--case" in argv else ""
    if "--without" in argv:
        WITHOUT[0] = argv[argv.index("--without") + 1]
    exe = Path(sys.executable).parent
    print(
        f"store {store}, {runs} runs in process, {prun} whole processes; "
        f"load before: {_load()}"
    )
    print()
    print(
        "| case | --about | items | near misses | hints | held: with / without "
        "(ms) | held, CPU: with / without (ms) | fresh: with / without (ms) "
        "| process: with / without (s, MB) | load (1/5/15 min) before → after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for q in QUERIES:
        if case and q.case != case:
            continue
        before = _load()
        total, near, n_hints = _shape(store, q.about)
        ms = _in_process(store, q.about, runs)
        whole = "-"
        if process:
            args = ["context", "--store", str(store), "--about", q.about, "--json"]
            w, w_rss = _process([str(exe / "kgai-tui"), *args], prun)
            o, o_rss = _process(
                [
                    str(exe / "python"),
                    "-m",
                    "benchmarks.hints_cost",
                    "--cli-without-hints",
                    WITHOUT[0],
                    *args,
                ],
                prun,
            )
            whole = f"{w:.2f} / {o:.2f} s, {w_rss:.0f} / {o_rss:.0f} MB"
        print(
            f"| {q.case} | `{q.about}` | {total} | {near:,} | {n_hints} "
            f"| {ms['held']:.1f} / {ms['held0']:.1f} "
            f"| {ms['cpu']:.1f} / {ms['cpu0']:.1f} "
            f"| {ms['fresh']:.1f} / {ms['fresh0']:.1f} | {whole} "
            f"| {before} → {_load()} |",
            flush=True,
        )
    print()
    print("queries:")
    for q in QUERIES:
        print(f"- {q.case}: `{q.about}`: {q.why}")
    return 0


def _cli_without_hints(argv: list[str]) -> int:
    """Run the kgai-tui CLI on ``argv[1:]`` without ``argv[0]`` (``hints`` or
    ``bridge``): the whole-process baseline."""
    from kgai_tui.cli.launch import entry

    WITHOUT[0] = argv[0]
    _patch_without()
    sys.argv = ["kgai-tui", *argv[1:]]
    entry()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cli-without-hints"]:
        raise SystemExit(_cli_without_hints(sys.argv[2:]))
    raise SystemExit(main(sys.argv[1:]))
