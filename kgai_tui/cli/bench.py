"""``kgai-tui bench``: generate stores and benchmark them (hidden; needs the checkout).

The benchmark code lives in the source checkout's ``benchmarks/`` package, which the
wheel does not ship; each command imports it when it runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kgai_tui.cli.support import JSON_OPTION, emit_json, handles_errors
from kgai_tui.core.errors import UsageError

__all__ = ["bench_group", "need_benchmarks"]


def need_benchmarks() -> None:
    """Make the checkout's ``benchmarks`` package importable, or stop (exit 2).

    Raises:
        UsageError: kgai-tui runs from an install without its source checkout.
    """
    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / "benchmarks" / "__init__.py").is_file():
        raise UsageError(
            "bench needs kgai-tui's source checkout (benchmarks/ is not installed)"
        )
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))


@click.group("bench", hidden=True)
def bench_group() -> None:
    """Generate benchmark stores and measure them.

    Needs the source checkout: the benchmark code is not in the wheel.

    Example: kgai-tui bench generate /tmp/kg100k --decisions 100000
    """


@bench_group.command("generate")
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--decisions", type=int, default=100_000, show_default=True)
@click.option("--writers", type=int, default=30, show_default=True)
@click.option("--elements", type=int, default=10_000, show_default=True)
@click.option(
    "--segments",
    is_flag=True,
    help="Write the reference layout segments/<install>/000001-<n>.ndjson instead.",
)
@handles_errors
def generate_command(
    out: Path, decisions: int, writers: int, elements: int, segments: bool
) -> None:
    """Write a synthetic store, as the reference generator does.

    The store is the reference generator's (spec 9.1), byte for byte.

    OUT/log/<install>.ndjson gets one shard per writer (a store kgai-tui and kg
    open); with --segments, the reference tool's upload layout.

    Example: kgai-tui bench generate /tmp/kg1m --decisions 1000000 --writers 30
    """
    need_benchmarks()
    from benchmarks.genlog import GenParams, write_segments, write_store

    try:
        params = GenParams(decisions, writers, elements)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    (write_segments if segments else write_store)(out, params)
    click.echo(f"generated {decisions} decisions across {writers} installs into {out}")


@bench_group.command("search")
@click.argument("store", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--queries", type=int, default=200, show_default=True)
@click.option(
    "--scan-queries",
    type=int,
    default=None,
    help="Queries for the scan scorer (default: 50 up to 100k decisions, else 10).",
)
@click.option("--no-fts", is_flag=True, help="Skip the SQLite FTS5 comparison.")
@click.option("--no-scan", is_flag=True, help="Skip the scan-scorer comparison.")
@JSON_OPTION
@handles_errors
def bench_search_command(
    store: Path,
    queries: int,
    scan_queries: int | None,
    no_fts: bool,
    no_scan: bool,
    as_json: bool,
) -> None:
    """Benchmark search on a store.

    Compares the index with SQLite FTS5 and the scan scorer.

    Measures the index build (time, size), adding 1,000 events, query latency
    p50/p95 in process, and a whole warm `kgai-tui search` process. The store is
    copied first (the 1,000 events are appended to the copy).

    Example: kgai-tui bench search /tmp/kg100k --queries 200
    """
    need_benchmarks()
    from benchmarks.search_suite import BenchOptions, render_report, run_bench

    report = run_bench(
        store,
        BenchOptions(
            queries=queries,
            scan_queries=scan_queries,
            fts=not no_fts,
            scan=not no_scan,
            progress=lambda msg: click.echo(msg, err=True),
        ),
    )
    if as_json:
        emit_json(report, floats=True)
    else:
        click.echo(render_report(report))


@bench_group.command("run")
@click.argument("store", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--iterations",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Passes over each read's cases (best / median / p95 over all samples).",
)
@click.option(
    "--queries",
    type=click.IntRange(min=200),
    default=200,
    show_default=True,
    help="Search queries drawn from the store (at least 200).",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0),
    default=20.0,
    show_default=True,
    help="Seconds after which a row stops repeating (after one full pass).",
)
@JSON_OPTION
@handles_errors
def bench_run_command(
    store: Path, iterations: int, queries: int, budget: float, as_json: bool
) -> None:
    """Benchmark a store's opens, reads, as-of and search.

    Also its peak RSS, all in one table.

    Cold and warm opens are whole `python -m kgai_tui status` processes; the reads
    run in this process on the open engine. Beside each row: the issue's 1M target,
    the reference engine's published 1M figure and pass/MISS. The store is only
    read; the search index is built in a private temporary cache.

    Example: kgai-tui bench run /tmp/kg100k --iterations 5 --json
    """
    need_benchmarks()
    from benchmarks.bench_run import render_run_report
    from benchmarks.engine_bench import RunOptions, run_engine_bench

    report = run_engine_bench(
        store,
        RunOptions(
            iterations=iterations,
            queries=queries,
            budget_s=budget,
            progress=lambda msg: click.echo(msg, err=True),
        ),
    )
    if as_json:
        emit_json(report, floats=True)
    else:
        click.echo(render_run_report(report))


@bench_group.command("whole-process")
@click.argument("store", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--demo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="The store of the third column (default: the bundled demo store).",
)
@click.option("--runs", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--warmups", type=click.IntRange(min=0), default=1, show_default=True)
@click.option(
    "--only",
    default="",
    metavar="KEYS",
    help="Comma-separated rows to measure (default: all), e.g. status,record.",
)
@click.option(
    "--element", default=None, help="The store's KIND:NAME (default: picked)."
)
@click.option("--about", default=None, help="The store's context --about TEXT.")
@click.option("--at", default=None, help="The store's as-of moment.")
@click.option(
    "--columns",
    default="model,off,demo",
    show_default=True,
    help="Columns to measure; leave out off at 10M (each read replays the log).",
)
@click.option(
    "--model-cache",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="A cache directory already holding STORE's model (the model column's).",
)
@click.option(
    "--src",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Run kgai_tui from this source tree (the folder holding kgai_tui/).",
)
@JSON_OPTION
@handles_errors
def bench_whole_process_command(
    store: Path,
    demo: Path | None,
    runs: int,
    warmups: int,
    only: str,
    element: str | None,
    about: str | None,
    at: str | None,
    columns: str,
    model_cache: Path | None,
    src: Path | None,
    as_json: bool,
) -> None:
    """Time whole kgai-tui processes, model on and off.

    Each read is a fresh `python -m kgai_tui READ --json` child: median wall time
    and peak RSS, on STORE (model on, model off) and on the demo store, judged
    against issue 17's targets. `record` writes into a throwaway copy of each
    store; every column has a private cache directory.

    Example: kgai-tui bench whole-process /tmp/kg1m --runs 5
    """
    need_benchmarks()
    from benchmarks.whole_process import (
        ROWS,
        Subject,
        WholeOptions,
        render_whole_report,
        run_whole_process,
    )

    keys = tuple(k.strip() for k in only.split(",") if k.strip())
    unknown = [k for k in keys if k not in ROWS]
    if unknown:
        raise UsageError(
            f"unknown rows: {', '.join(unknown)} (known: {', '.join(ROWS)})"
        )
    picked = tuple(c.strip() for c in columns.split(",") if c.strip())
    if not set(picked) <= {"model", "off", "demo"}:
        raise UsageError("--columns takes model, off and demo")
    subject = None
    if element or about or at:
        if not (element and about and at):
            raise UsageError("--element, --about and --at go together")
        subject = Subject(element, about, at)
    if demo is None:
        demo = Path(__file__).resolve().parents[2] / "assets" / "demo-store"
    report = run_whole_process(
        store,
        WholeOptions(
            demo=demo,
            runs=runs,
            warmups=warmups,
            only=keys,
            subject=subject,
            src=src,
            columns=picked,
            model_cache=model_cache,
            progress=lambda msg: click.echo(msg, err=True),
        ),
    )
    if as_json:
        emit_json(report, floats=True)
    else:
        click.echo(render_whole_report(report))
