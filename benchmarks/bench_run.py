"""``kgai-tui bench run STORE``: one table of opens, reads, search and memory (issue 6).

The measurements live in :mod:`benchmarks.engine_bench`; this module holds the click
command and the Markdown rendering, so the table can be pasted into
``docs/performance.md`` as printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kgai_tui.cli.support import JSON_OPTION, emit_json, handles_errors

__all__ = ["bench_run_command", "format_value", "render_run_report"]


def format_value(value: float | None, unit: str) -> str:
    """Format a measurement for the table: ms or s for times, MB for memory.

    Args:
        value: The number in ``unit`` (``None`` prints ``-``).
        unit: ``"ms"`` or ``"MB"``.

    Returns:
        A short human string such as ``0.012 ms``, ``35.4 ms``, ``812 ms``,
        ``12.3 s`` or ``2107 MB``.
    """
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value:.0f} MB"
    if value < 1:
        return f"{value:.3f} ms"
    if value < 100:
        return f"{value:.1f} ms"
    if value < 10_000:
        return f"{value:.0f} ms"
    return f"{value / 1000:.1f} s"


def render_run_report(report: dict[str, Any]) -> str:
    """Render a ``bench run`` report as a heading, a Markdown table and notes.

    Args:
        report: What :func:`benchmarks.engine_bench.run_engine_bench` returned.

    Returns:
        Text ready to paste into Markdown.
    """
    info = report["store_info"]
    machine = report["machine"]
    opts = report["options"]
    lines = [
        f"store: {report['store']} — {info['decisions']} decisions, "
        f"{info['elements']} elements, {info['links']} links, {info['events']} "
        f"events, {info['writers']} writers, {info['log_bytes'] / 1e6:.1f} MB of log",
        f"date: {report['date']}; {machine['cpus']} CPUs, Python {machine['python']}; "
        f"load average {_load(machine['load_before'])} before, "
        f"{_load(machine['load_after'])} after",
        f"iterations: {opts['iterations']} (budget {opts['budget_s']} s per row), "
        f"{opts['queries']} search queries",
        *_probe_line(machine),
        "",
        "| operation | n | best | median | p95 | target (1M) | kg, published (1M) "
        "| verdict | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        unit = row["unit"]
        lines.append(
            f"| {row['label']} | {row['n']} | {format_value(row['best'], unit)} "
            f"| {format_value(row['median'], unit)} | {format_value(row['p95'], unit)} "
            f"| {row['target']} | {row['reference']} | {row['verdict']} "
            f"| {row['note'].replace('|', '/')} |"
        )
    misses = sum(1 for row in report["rows"] if row["verdict"] == "MISS")
    judged = sum(1 for row in report["rows"] if row["verdict"] != "-")
    lines += ["", f"{judged - misses} of {judged} targets met."]
    lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines)


def _probe_line(machine: dict[str, Any]) -> list[str]:
    """The host-speed probe, when the report has one (older reports do not)."""
    before = machine.get("cpu_probe_before_s")
    if before is None:
        return []
    after = machine.get("cpu_probe_after_s", "-")
    return [
        f"host speed: a fixed 10M-step Python loop took {before} s before and "
        f"{after} s after (lower is faster)"
    ]


def _load(values: list[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


@click.command("run")
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
    """Benchmark a store: opens, reads, as-of, search and peak RSS in one table.

    Cold and warm opens are whole `python -m kgai_tui status` processes; the reads
    run in this process on the open engine. Beside each row: the issue's 1M target,
    the reference engine's published 1M figure and pass/MISS. The store is only
    read; the search index is built in a private temporary cache.

    Example: kgai-tui bench run /tmp/kg100k --iterations 5 --json
    """
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
