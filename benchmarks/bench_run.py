"""The table of ``kgai-tui bench run``: opens, reads, search and memory (issue 6).

The measurements live in :mod:`benchmarks.engine_bench`; this module renders them as
Markdown, so the table can be pasted into ``docs/performance.md`` as printed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_value", "render_run_report"]


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
