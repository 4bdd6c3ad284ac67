"""Onboarding commands: ``import adr``, ``diff`` and ``report``.

``import adr`` records a folder of architecture decision records through the write
path; ``diff`` says what changed between two moments and why; ``report`` writes the
store at a moment as one Markdown or HTML document. The core modules are imported
inside each command, so read commands do not pay for them at start-up.

Exit codes as everywhere (docs/cli.md): 0 done, 2 bad input (a bad timestamp, map
file or option), 3 no store, 4 the write failed. A record that cannot be parsed does
not fail ``import adr``: it is reported (file and line) on stderr and in the JSON
``skipped`` list, and the other records are imported.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    STORE_OPTION,
    emit_json,
    handles_errors,
    log_size,
    model_source,
    progress,
    resolve_location,
    show,
    show_model_waits,
)
from kgai_tui.core.errors import write_error
from kgai_tui.core.safe_text import visible

if TYPE_CHECKING:
    from kgai_tui.core.onboarding.adr_import import ImportResult


def _notice(message: str) -> None:
    click.echo(f"kgai-tui: note: {message}", err=True)


_MARKS = {
    "recorded": "✓ recorded",
    "already recorded": "○ already recorded",
    "would record": "○ would record",
}


def render_import(result: ImportResult) -> str:
    """The human rendering of an ADR import (file text and names made visible)."""
    lines: list[str] = []
    if result.dry_run:
        lines.append("dry run — nothing written")
    for adr in result.adrs:
        who = visible(adr.author) if adr.author else "the store actor"
        when = visible(adr.date[:10]) if adr.date else "undated"
        lines.append(
            f"{_MARKS[adr.outcome]} {visible(adr.label)} “{visible(adr.title)}” "
            f"({when}, {who})  {adr.decision_id[:10]}"
        )
        if adr.supersedes:
            lines.append(f"  supersedes {visible(', '.join(adr.supersedes))}")
        if adr.amends:
            lines.append(f"  amends {visible(', '.join(adr.amends))}")
    lines += [f"⚠ {visible(w)}" for w in result.warnings]
    lines += [f"✗ skipped {visible(p.describe())}" for p in result.skipped]
    verb = "would record" if result.dry_run else "recorded"
    count = result.count("would record" if result.dry_run else "recorded")
    lines.append(
        f"{count} {verb}, {result.count('already recorded')} already recorded, "
        f"{len(result.skipped)} skipped"
    )
    return "\n".join(lines)


@click.group("import")
def import_group() -> None:
    """Import decisions kept elsewhere, such as ADRs.

    Example: kgai-tui import adr docs/adr --dry-run
    """


@import_group.command("adr")
@STORE_OPTION
@JSON_OPTION
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--dry-run", is_flag=True, help="Show what would be recorded; write nothing."
)
@click.option(
    "--map",
    "map_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON or TOML: ADR number -> elements it decides, e.g. "
    '{"0007": ["service:Billing"]}.',
)
@handles_errors
def adr_command(
    store: str | None,
    as_json: bool,
    directory: Path,
    dry_run: bool,
    map_file: Path | None,
) -> None:
    """Record every ADR below DIRECTORY as a back-dated decision.

    Reads Nygard/adr-tools records ("# 7. Title", "Date:", "## Status") and
    MADR 2-4 records (front matter or "* Status:" bullets). Each ADR shapes the
    element adr:ADR-0007; "Supersedes" makes it replace the earlier ADR's
    decision, "Amends" links to it. Importing again writes nothing new; a file
    that cannot be parsed is reported with its line and skipped.

    Example: kgai-tui import adr docs/adr --map adr-map.toml
    """
    from kgai_tui.core.onboarding.adr_import import import_adrs
    from kgai_tui.core.onboarding.adr_map import load_adr_map

    mapping = load_adr_map(map_file) if map_file is not None else None
    show_model_waits()
    result = import_adrs(
        resolve_location(store).root,
        directory,
        dry_run=dry_run,
        mapping=mapping,
        on_notice=_notice,
    )
    if as_json:
        for problem in result.skipped:
            click.echo(f"kgai-tui: warning: skipped {problem.describe()}", err=True)
        emit_json(result.to_obj())
    else:
        click.echo(render_import(result))


@click.command("diff")
@STORE_OPTION
@JSON_OPTION
@click.argument("start", metavar="FROM")
@click.argument("end", metavar="TO")
@handles_errors
def diff_command(store: str | None, as_json: bool, start: str, end: str) -> None:
    """Show what changed between two moments, and why.

    Each change comes with the decision behind it.

    FROM and TO are RFC3339 or YYYY-MM-DD (the end of that day, UTC), as for
    as-of. Lists decisions recorded and superseded, elements added, props changed
    (old → new), links added and retired, conflicts opened and resolved.

    Example: kgai-tui diff 2026-01-31 2026-03-31 --json
    """
    from kgai_tui.core.answers.moments import diff_answer
    from kgai_tui.text.diff import diff_lines

    # The store opens lazily, inside the one line that covers the comparison: the
    # model and its time index (built from a replay of the log when none was
    # saved), or, with the model switched off, the whole store. The decision rows
    # are made as they are printed, JSON or text.
    with progress(lambda: _COMPARING.format(log_size(resolve_location(store).root))):
        answer = diff_answer(model_source(store), start, end)
    show(answer, as_json, diff_lines)


_COMPARING = "kgai-tui: reading the history of the log ({}) to compare two moments"


@click.command("report")
@STORE_OPTION
@click.option(
    "--as-of", "as_of", default=None, metavar="T", help="RFC3339 or YYYY-MM-DD."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "html"]),
    default="markdown",
    show_default=True,
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@click.option(
    "--last",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="How many recent decisions the story tells.",
)
@handles_errors
def report_command(
    store: str | None, as_of: str | None, fmt: str, output: Path | None, last: int
) -> None:
    """Write the store at a moment as one readable document.

    Elements by kind with the decisions in force and their rationale, the open
    conflicts, and the story of the last N decisions. The same store always gives
    the same bytes, so the file can be committed or attached to a pull request.

    Example: kgai-tui report --format html -o decisions.html
    """
    from kgai_tui.core.answers.report import report_at
    from kgai_tui.core.reads.kg import parse_as_of
    from kgai_tui.core.report.html import render_html
    from kgai_tui.core.report.markdown import render_markdown

    cut = parse_as_of(as_of) if as_of is not None else None
    # The read model: now, and at a moment from the latest recorded time on; an
    # earlier moment reads the model's time index (the model keeps its moments
    # for the next read at a moment).
    report = report_at(model_source(store), cut, last)
    text = render_html(report) if fmt == "html" else render_markdown(report)
    data = text.encode("utf-8")
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        output.write_bytes(data)
    except OSError as exc:
        raise write_error(exc, str(output)) from exc


__all__ = ["adr_command", "diff_command", "import_group", "report_command"]
