"""kg 1.5's configuration commands: ``config``, ``prompt``, ``trust``, ``rotate``,
``rebuild``.

Each answers with kg's JSON (``config`` and ``trust`` print it on a terminal too, as
kg does); ``--raw`` prints a value alone. The layers, their rules and the approval
of a committed ``.kgairc`` are described in docs/config.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kgai_tui.cli.support import (
    KG_OUTPUT,
    STORE_OPTION,
    emit_json,
    handles_errors,
    no_store_here,
    resolve_location,
)
from kgai_tui.core.errors import UsageError
from kgai_tui.core.safe_text import visible

_SUBCOMMANDS = ("show", "list", "get", "set", "unset")


def one_layer(session: bool, project: bool, global_: bool) -> str | None:
    """The one layer named, or ``None``; two or three is a usage error."""
    named = [
        n
        for n, on in (("session", session), ("project", project), ("global", global_))
        if on
    ]
    if len(named) > 1:
        raise UsageError(
            "--session, --project and --global are mutually exclusive — a value is "
            "written to exactly one layer"
        )
    return named[0] if named else None


def _scope_options(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        (
            click.option(
                "--session",
                is_flag=True,
                help="This store's kg.config.json (the default for set).",
            ),
            click.option(
                "--project", is_flag=True, help="The repository's committed .kgairc."
            ),
            click.option(
                "--global",
                "global_",
                is_flag=True,
                help="This machine's $KGAI_HOME/config.json.",
            ),
        )
    ):
        func = option(func)
    return func


@click.command("config")
@STORE_OPTION
@_scope_options
@click.option(
    "--raw", is_flag=True, help="get: print the value alone (nothing when unset)."
)
@click.option(
    "--from-file",
    "from_file",
    default=None,
    metavar="F",
    help="set: read the value from a file (trailing newlines dropped).",
)
@click.option(
    "--json/--text", "as_json", default=True, hidden=True, help="Always JSON (as kg)."
)
@click.argument("words", nargs=-1)
@handles_errors
def config_command(
    store: str | None,
    session: bool,
    project: bool,
    global_: bool,
    raw: bool,
    from_file: str | None,
    as_json: bool,
    words: tuple[str, ...],
) -> None:
    """Show or change kg's layered settings.

    config [show] lists every layer, the effective values and where each comes
    from; config get KEY; config set [--project|--global] KEY VALUE (or - for
    stdin, or --from-file F); config unset KEY. Keys: remote, prompt,
    cloud_url, store, each allowed only in kg's layers. A repository's .kgairc
    decides nothing until approved (kgai-tui trust).

    Example: kgai-tui config set --project store '${HOME}/kgai'
    """
    from kgai_tui.core.answers.config import config_get_obj, config_show_obj

    scope = one_layer(session, project, global_)
    sub, rest = (words[0], words[1:]) if words else ("show", ())
    if sub not in _SUBCOMMANDS:
        raise UsageError(
            f"unknown config subcommand {sub!r} — use show, get, set or unset"
        )
    keys = "remote, prompt, cloud_url, store"
    if sub in ("show", "list"):
        emit_json(config_show_obj(store))
        return
    if not rest:
        raise UsageError(f"{sub} needs a key — one of: {keys}")
    key = rest[0]
    if sub == "get":
        obj = config_get_obj(key, scope, store)
        if raw:
            if obj["value"]:
                click.echo(visible(obj["value"], keep_newlines=True))
            return
        emit_json(obj)
        return
    from kgai_tui.core.write.config_set import config_set

    value = ""
    if sub == "set":
        value = _value(key, rest[1] if len(rest) > 1 else None, from_file)
    emit_json(config_set(scope or "session", key, value, store))


def _value(key: str, given: str | None, from_file: str | None) -> str:
    """``set``'s value: a file, stdin (``-``), or the argument; never empty."""
    if from_file is not None:
        try:
            text = Path(from_file).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {from_file}: {exc}") from None
        value = text.rstrip("\n")
    elif given == "-":
        value = sys.stdin.read().rstrip("\n")
    else:
        value = given or ""
    if not value:
        raise UsageError(
            f"set needs a value: `kgai-tui config set {key} <value>`, `--from-file F`, "
            f"or `-` to read stdin (use `kgai-tui config unset {key}` to clear it)"
        )
    return value


@click.command("prompt")
@STORE_OPTION
@_scope_options
@click.option("--raw", is_flag=True, help="Print the rules alone (nothing when unset).")
@click.option(
    "--json/--text", "as_json", default=True, hidden=True, help="Always JSON (as kg)."
)
@handles_errors
def prompt_command(
    store: str | None,
    session: bool,
    project: bool,
    global_: bool,
    raw: bool,
    as_json: bool,
) -> None:
    """Show the team's capture rules (config get prompt).

    Example: kgai-tui prompt --raw
    """
    from kgai_tui.core.answers.config import config_get_obj

    obj = config_get_obj("prompt", one_layer(session, project, global_), store)
    if raw:
        if obj["value"]:
            click.echo(visible(obj["value"], keep_newlines=True))
        return
    emit_json(obj)


@click.command("trust")
@click.option(
    "--show", is_flag=True, help="Print what the .kgairc asks for; approve nothing."
)
@click.option("--revoke", is_flag=True, help="Withdraw the approval (or dismissal).")
@click.option(
    "--list", "list_", is_flag=True, help="Every configuration decided on this machine."
)
@click.option(
    "--ack", is_flag=True, help="Record that this repo uses an approval made elsewhere."
)
@click.option("--dismiss", is_flag=True, help="Stop asking without approving.")
@click.option(
    "--json/--text", "as_json", default=True, hidden=True, help="Always JSON (as kg)."
)
@handles_errors
def trust_command(
    show: bool, revoke: bool, list_: bool, ack: bool, dismiss: bool, as_json: bool
) -> None:
    """Approve this repository's committed .kgairc.

    It arrives with a clone, from whoever wrote the repository: its store
    setting chooses where decisions are written and its prompt is given to
    agents, so read it first (--show). Approval is per configuration and shared
    with kg (~/.kgai/trusted.json); a later change to the file asks again.

    Example: kgai-tui trust --show
    """
    from kgai_tui.core.answers.config import trust_obj

    action = next(
        (
            name
            for name, on in (
                ("list", list_),
                ("ack", ack),
                ("revoke", revoke),
                ("dismiss", dismiss),
                ("show", show),
            )
            if on
        ),
        "approve",
    )
    emit_json(trust_obj(action))


@click.command("rotate")
@STORE_OPTION
@KG_OUTPUT
@handles_errors
def rotate_command(store: str | None, as_json: bool) -> None:
    """Give this store a fresh install identity.

    The old id goes to retired_installs and its shard stays as read-only
    history; the next sync reconciles it and records again, under the new id,
    any decision the remote never received.

    Example: kgai-tui rotate
    """
    from kgai_tui.core.write.rotate import rotate_install

    location = resolve_location(store)
    if not location.exists:
        raise no_store_here(location)
    old, new = rotate_install(location.root)
    obj = {
        "install": new,
        "note": "run `kgai-tui sync` — local-only decisions from the old identity are "
        "re-recorded automatically",
        "ok": True,
        "old_install": old,
        "rotated": True,
    }
    if as_json:
        emit_json(obj)
        return
    click.echo(f"✓ rotated {old} → {new}\n{obj['note']}")


@click.command("rebuild")
@STORE_OPTION
@KG_OUTPUT
@handles_errors
def rebuild_command(store: str | None, as_json: bool) -> None:
    """Rebuild this store's derived caches from the log.

    The log, the config and the git data are untouched; kg's own graph.kuzu is
    left to kg (kg rebuild rebuilds it).

    Example: kgai-tui rebuild
    """
    from kgai_tui.core.write.rebuild import rebuild_caches

    location = resolve_location(store)
    if not location.exists:
        raise no_store_here(location)
    applied = rebuild_caches(location.root)
    if as_json:
        emit_json({"applied": applied, "ok": True})
        return
    click.echo(f"✓ rebuilt the read model and caches: {applied} event(s) applied")
