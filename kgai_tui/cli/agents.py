"""The commands for agents and teams: ``mcp`` (a stdio MCP server) and ``sync`` (git).

Both import their machinery inside the command, so the other commands do not pay
for the MCP SDK or git at start-up.
"""

from __future__ import annotations

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    STORE_OPTION,
    emit_json,
    handles_errors,
    resolve_location,
)

__all__ = ["mcp_command", "sync_command"]


def _notice(message: str) -> None:
    click.echo(f"kgai-tui: note: {message}", err=True)


@click.command("mcp")
@STORE_OPTION
@click.option(
    "--allow-write",
    is_flag=True,
    help="Also offer the record and resolve_conflict tools.",
)
def mcp_command(store: str | None, allow_write: bool) -> None:
    """Serve the store to AI agents over MCP (stdio).

    Tools: recall, search, history, conflicts, as_of, status; with
    --allow-write also record and resolve_conflict. Each answers with the exact
    bytes of the matching `kgai-tui ... --json` command. The store is read again
    whenever its log changes. See docs/agents.md for agent configuration.

    Example: kgai-tui mcp --store .kgai/store
    """
    from kgai_tui.mcp.server import serve

    serve(store, allow_write=allow_write)


@click.command("sync")
@STORE_OPTION
@JSON_OPTION
@click.option(
    "--remote",
    default=None,
    metavar="URL",
    help="Git remote for this sync (default: kg.config.json `remote`).",
)
@handles_errors
def sync_command(store: str | None, as_json: bool, remote: str | None) -> None:
    """Share the store with teammates through git.

    Commits, fetches, takes teammates' new lines and pushes.

    A remote can only add verified lines to other installs' shards; everything
    else it holds is refused and listed. Refuses (exit 1) when the store's
    .gitignore or .gitattributes was not written by kgai, and (exit 2) ext:: and
    fd:: remotes. Being offline is reported, not a failure; a remote with no
    repository is (exit 1). Afterwards new conflicts are listed. Never a rebase,
    never a force push.

    Example: kgai-tui sync --remote git@example.com:team/decisions.git
    """
    from kgai_tui.sync.sync import render_sync, sync_store

    report = sync_store(resolve_location(store).root, remote, on_notice=_notice)
    if as_json:
        emit_json(report.to_obj())
    else:
        click.echo(render_sync(report))
