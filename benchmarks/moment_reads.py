"""What the explorer reads at a slider moment, in process: the model's way or the
whole store's, side by side.

    python benchmarks/moment_reads.py STORE [--whole] [--cuts N]

Opens STORE through its read model (or, with ``--whole``, the whole replay),
loads the slider's history (the time index; through the model only when the
whole store saved one for the log the model holds), then at N moments spread over
the range times the header's counts, the timeline's order and filter choices, and
one filtered timeline (the first writer's superseded decisions), and prints the
process's resident and peak memory after each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _memory() -> str:
    fields = dict(
        line.split(":", 1)
        for line in Path("/proc/self/status").read_text().splitlines()
    )
    rss = int(fields["VmRSS"].split()[0]) // 1024
    peak = int(fields["VmHWM"].split()[0]) // 1024
    return f"{rss} MB resident, {peak} MB peak"


def main() -> None:
    """Open, load the history, and time the reads at each moment."""
    from kgai_tui.core.engine.open import open_engine
    from kgai_tui.core.model.open import open_model_if_current
    from kgai_tui.core.reads.moments import TimeCursor
    from kgai_tui.core.reads.store import Store
    from kgai_tui.core.reads.timeline import timeline_columns, timeline_select
    from kgai_tui.core.reads.view import KgView

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--whole", action="store_true", help="the whole replay")
    parser.add_argument("--cuts", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    store: Store | None = (
        open_engine(args.store) if args.whole else open_model_if_current(args.store)
    )
    if store is None:
        sys.exit("no current read model: open the store once first")
    cursor = TimeCursor.of_store(store)
    if cursor is None:
        sys.exit("no time index of this log: move the explorer's slider once first")
    print(f"open and history: {time.perf_counter() - start:.2f} s; {_memory()}")
    moments = cursor.moments
    for n in range(args.cuts):
        at = moments[(len(moments) - 1) * (args.cuts - n) // args.cuts]
        view = cursor.at(at)
        t0 = time.perf_counter()
        counts = (view.recorded_count(), view.writer_count())
        t1 = time.perf_counter()
        v = KgView(view)
        columns = timeline_columns(v)
        t2 = time.perf_counter()
        writer = columns.writers[0] if columns.writers else None
        rows, _ = timeline_select(v, columns, (writer, None, None, "superseded"))
        t3 = time.perf_counter()
        print(
            f"{at:%Y-%m-%d %H:%M:%S}: counts {t1 - t0:.3f} s {counts}; "
            f"timeline {t2 - t1:.3f} s ({len(columns.order)}); "
            f"filtered {t3 - t2:.3f} s ({len(rows)}); {_memory()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
