"""``kgai-tui query "<cypher>"``: kg's read-only Cypher, on the graph now or at a
moment; always JSON, as kg's."""

from __future__ import annotations

import click

from kgai_tui.cli.support import (
    STORE_OPTION,
    emit,
    handles_errors,
    model_source,
    progress,
)
from kgai_tui.core.answers.query import query_answer

__all__ = ["query_command"]


@click.command("query")
@STORE_OPTION
@click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="TS",
    help="The graph as it stood then (RFC3339, or YYYY-MM-DD = end of day).",
)
@click.option(
    "--limit",
    type=int,
    default=None,
    help="At most this many rows; the answer says how many it dropped.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.001),
    default=30.0,
    show_default=True,
    help="Stop the query after this many seconds.",
)
@click.option(
    "--json/--text",
    "as_json",
    default=None,
    help="Accepted for symmetry; query prints JSON, as kg's.",
)
@click.argument("cypher", nargs=-1, required=True)
@handles_errors
def query_command(
    store: str | None,
    as_of: str | None,
    limit: int | None,
    timeout: float,
    as_json: bool | None,
    cypher: tuple[str, ...],
) -> None:
    """Ask the graph anything in read-only Cypher.

    kg's schema: Element(id, kind, name, props), Decision(id, title, rationale,
    author, refs, summary, recorded_at, lamport, install_id, event_hash);
    LINK(Element->Element, kind, created_by), SHAPES(Decision->Element,
    authority), SUPERSEDES(Decision->Decision). Rows are keyed by the RETURN
    columns; without ORDER BY they are sorted by their JSON. Writes and file
    clauses are refused.

    Example: kgai-tui query "MATCH (e:Element) RETURN e.kind, count(*) AS n"
    """
    message = ["kgai-tui: running the query"]

    def say(line: str) -> None:
        message[0] = f"kgai-tui: {line}"

    with progress(lambda: message[0]):
        answer = query_answer(
            model_source(store),
            " ".join(cypher),
            as_of=as_of,
            limit=limit,
            timeout=timeout,
            say=say,
        )
    emit(answer)
