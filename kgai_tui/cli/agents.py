"""The commands for agents and teams: ``mcp`` (a stdio MCP server), ``sync`` (git or
S3) and ``remote`` (where sync goes).

Each imports its machinery inside the command, so the other commands do not pay
for the MCP SDK, git or boto3 at start-up.
"""

from __future__ import annotations

import gc

import click

from kgai_tui.cli.support import (
    KG_OUTPUT,
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
@KG_OUTPUT
@click.option(
    "--remote",
    default=None,
    metavar="URL",
    help="Remote for this sync: a git URL, or s3://bucket[/prefix] (remembered in "
    "kg.config.json). Default: the configured remote.",
)
@click.option(
    "--auto",
    is_flag=True,
    help="Background mode (agents' hooks): silent, and skipped when there is no "
    "store, no remote, a sync less than --cooldown ago or the store locked.",
)
@click.option(
    "--cooldown",
    default=60,
    show_default=True,
    type=int,
    metavar="S",
    help="With --auto: skip when a sync was attempted fewer than S seconds ago.",
)
@handles_errors
def sync_command(
    store: str | None,
    as_json: bool,
    remote: str | None,
    auto: bool,
    cooldown: int,
) -> None:
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

    if auto:
        if remote is not None:
            raise UsageError(
                "--auto syncs with the configured remote; leave out --remote"
            )
        from kgai_tui.sync.auto import auto_sync

        ran = auto_sync(store, cooldown)
        if ran is not None:  # JSON always: a hook's log, not a person, reads it
            obj = ran.to_obj()
            emit_json(
                {
                    "applied": obj["applied"],
                    "conflict_count": obj["conflict_count"],
                    "ok": True,
                    "sync": obj["sync"],
                }
            )
        return
    location = resolve_location(store)
    report = run_sync(location.root, remote, on_notice=_notice)
    if as_json:
        emit_json(report.to_obj())
    else:
        click.echo(render_sync(report))


@click.command("remote")
@STORE_OPTION
@KG_OUTPUT
@click.option(
    "--session", is_flag=True, help="This store's kg.config.json (the default)."
)
@click.option(
    "--project", is_flag=True, help="Refused: a repository never sets the remote."
)
@click.option(
    "--global", "global_", is_flag=True, help="This machine's $KGAI_HOME/config.json."
)
@click.option("--unset", is_flag=True, help="Remove the remote of that layer.")
@click.argument("url", required=False, default=None)
@handles_errors
def remote_command(
    store: str | None,
    as_json: bool,
    session: bool,
    project: bool,
    global_: bool,
    unset: bool,
    url: str | None,
) -> None:
    """Show or set the remote that kgai-tui sync uses.

    URL is a git URL, s3://bucket[/prefix][?profile=NAME&region=REGION], or
    `none` to disable syncing; {project} becomes the project directory's name.
    It is kept in the store's kg.config.json (--session, the default) or, with
    --global, in $KGAI_HOME/config.json, as kg keeps it; a repository's
    .kgairc never chooses where decisions are uploaded (--project is refused).
    Without URL, shows every layer and the one in effect. A bad URL is refused
    (exit 2); setting the session layer needs a store (exit 3 without one).

    Example: kgai-tui remote --global s3://team-decisions/{project}
    """
    from kgai_tui.cli.settings import one_layer
    from kgai_tui.sync.s3_remote import check_remote, remote_view, set_session_remote

    scope = one_layer(session, project, global_) or "session"
    location = resolve_location(store)
    if url is not None and unset:
        raise UsageError("--unset takes no URL argument")
    if (url is not None or unset) and scope != "session":
        from kgai_tui.core.write.config_set import config_set

        config_set(scope, "remote", "" if unset else check_remote(url or ""), store)
    elif url is not None or unset:
        if not location.exists:
            if unset:
                url = None  # nothing to clear: no store is created for it
            else:
                raise no_store(location)
        else:
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
