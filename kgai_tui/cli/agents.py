"""The commands for agents and teams: ``mcp`` (a stdio MCP server), ``sync`` (git or
S3) and ``remote`` (where sync goes).

Each imports its machinery inside the command, so the other commands do not pay
for the MCP SDK, git or boto3 at start-up.
"""

from __future__ import annotations

import gc

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    STORE_OPTION,
    emit_json,
    handles_errors,
    resolve_location,
)
from kgai_tui.core.answers.answer import no_store
from kgai_tui.core.errors import UsageError
from kgai_tui.core.safe_text import visible
from kgai_tui.core.store.config_file import CONFIG_NAME

__all__ = ["mcp_command", "remote_command", "sync_command"]


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

    gc.enable()  # a session, not one answer (see cli.main.entry)
    serve(store, allow_write=allow_write)


@click.command("sync")
@STORE_OPTION
@JSON_OPTION
@click.option(
    "--remote",
    default=None,
    metavar="URL",
    help="Remote for this sync: a git URL, or s3://bucket[/prefix] (remembered in "
    "kg.config.json). Default: the configured remote.",
)
@handles_errors
def sync_command(store: str | None, as_json: bool, remote: str | None) -> None:
    """Share the store with teammates through git or an S3 bucket.

    Git: commits, fetches, takes teammates' new lines and pushes. A remote can
    only add verified lines to other installs' shards; everything else it holds
    is refused and listed. Refuses (exit 1) when the store's .gitignore or
    .gitattributes was not written by kgai, and (exit 2) ext:: and fd:: remotes;
    a remote with no repository is an error (exit 1). Never a rebase, never a
    force push.

    S3 (s3://bucket[/prefix][?profile=NAME&region=REGION], the kg engine's
    segment protocol; needs pip install 'kgai-tui[s3]'): pushes this install's
    new events as one write-once segment and pulls teammates' segments, each
    verified whole. A copied store is refused with the fork error (exit 1,
    nothing pushed); a missing bucket is an error (exit 1). --remote is
    remembered. Credentials and AWS_ENDPOINT_URL as for any AWS tool.

    Being offline is reported, not a failure. Afterwards new conflicts are
    listed. See docs/sync.md.

    Example: kgai-tui sync --remote s3://team-decisions/shop
    """
    from kgai_tui.sync.status import run_sync
    from kgai_tui.sync.sync import render_sync

    location = resolve_location(store)
    report = run_sync(location.root, remote, on_notice=_notice)
    if as_json:
        emit_json(report.to_obj())
    else:
        click.echo(render_sync(report))


@click.command("remote")
@STORE_OPTION
@JSON_OPTION
@click.option("--unset", is_flag=True, help="Remove the store's own remote.")
@click.argument("url", required=False, default=None)
@handles_errors
def remote_command(
    store: str | None, as_json: bool, unset: bool, url: str | None
) -> None:
    """Show or set the remote that kgai-tui sync uses.

    URL is a git URL, s3://bucket[/prefix][?profile=NAME&region=REGION], or
    `none` to disable syncing; it is kept in the store's kg.config.json as the
    kg engine keeps it. Without URL, shows the store's remote, the global one
    ($KGAI_HOME/config.json) and which is in effect. A bad URL is refused
    (exit 2); setting needs a store (exit 3 without one).

    Example: kgai-tui remote s3://team-decisions/{project}
    """
    from kgai_tui.sync.s3_remote import remote_view, set_session_remote

    location = resolve_location(store)
    if url is not None and unset:
        raise UsageError("give a URL or --unset, not both")
    if url is not None or unset:
        if not location.exists:
            raise no_store(location)
        notice = set_session_remote(location.root, url)
        if notice:
            _notice(notice)
    view = remote_view(location.root if location.exists else None)
    if as_json:
        emit_json(view.to_obj())
        return
    obj = view.to_obj()
    where = f" (from the {obj['source']} layer)" if obj["source"] else ""
    shown = obj["effective"] or (
        "none (disabled)" if obj["source"] == "disabled" else "none"
    )
    click.echo(visible(f"remote: {shown}{where}"))
    click.echo(visible(f"  store ({CONFIG_NAME}): {obj['session'] or '-'}"))
    click.echo(visible(f"  global: {obj['global'] or '-'}"))
