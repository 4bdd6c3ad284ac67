"""The team reads: ``people`` and ``stale`` (docs/cli.md)."""

from __future__ import annotations

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    STORE_OPTION,
    handles_errors,
    model_source,
    show,
)
from kgai_tui.core.answers.people import people_answer, stale_answer
from kgai_tui.text.team import render_people, render_stale

__all__ = ["people_command", "stale_command"]


@click.command("people")
@STORE_OPTION
@JSON_OPTION
@click.option(
    "--as-of",
    "as_of",
    default="",
    help="Count as of this moment (RFC3339 or YYYY-MM-DD).",
)
@handles_errors
def people_command(store: str | None, as_json: bool, as_of: str) -> None:
    """Show who decided what, and how much of it still stands.

    One row per author, most decisions first: decisions, in force, superseded,
    dead ends, elements shaped, open conflicts, first and last, writers.

    Example: kgai-tui people --as-of 2026-03-31 --json
    """
    # The read model; a past moment its moments cannot settle reads its time
    # index (the model's open already warned about problem lines).
    answer = people_answer(model_source(store), as_of)
    show(answer, as_json, render_people)


@click.command("stale")
@STORE_OPTION
@JSON_OPTION
@click.option(
    "--older-than",
    "older_than",
    default="180d",
    show_default=True,
    help="Age of the newest decision in force: a number and d, w or h.",
)
@handles_errors
def stale_command(store: str | None, as_json: bool, older_than: str) -> None:
    """List elements nobody has decided on for a long time.

    Elements whose newest decision in force is older than --older-than, oldest
    first, with that decision and its author.

    Example: kgai-tui stale --older-than 90d
    """
    show(stale_answer(model_source(store), older_than), as_json, render_stale)
