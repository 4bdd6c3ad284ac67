"""The write commands: ``init``, ``record`` and ``resolve-conflict``.

Each command calls one function of :mod:`kgai_tui.core.write.writes` and prints its result
as text, or with ``--json`` as the reference engine's shape. Notices (a repaired torn
line, a rotated identity, a stale ``kg`` cache) go to stderr.

Exit codes: 0 written (or nothing to write), 1 refused (a ``.gitignore`` kgai did not
write, no conflict to resolve, no such element, a bad install id in the config), 2 bad
input, 3 no store (``record`` and ``resolve-conflict`` never create one), 4 the write
failed (read-only store, full disk, lock held too long) and nothing was written,
128 + n stopped by signal n (130 SIGINT, 129 SIGHUP, 143 SIGTERM) with the batch
whole or absent, as the one line on stderr says.

The core write path is imported inside each command, so that read commands, which
import this module to register the commands, do not pay for it at start-up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, BinaryIO, ParamSpec, TypeVar

import click

from kgai_tui.cli.support import (
    JSON_OPTION,
    KG_OUTPUT,
    STORE_OPTION,
    emit_json,
    fail,
    handles_errors,
    resolve_location,
    show_model_waits,
)
from kgai_tui.core.errors import RefusedError, UsageError
from kgai_tui.core.safe_text import visible_tree

P = ParamSpec("P")
R = TypeVar("R")


def stops_cleanly(func: Callable[P, R]) -> Callable[P, R]:
    """Make SIGINT, SIGTERM and SIGHUP stop a write command the same way.

    Without this only Ctrl-C unwound (SIGTERM ended the process between two lines
    of a batch). Now each raises :class:`~kgai_tui.core.interrupts.Interrupted`;
    the batch being appended, if any, is rolled back (or, if it was already whole,
    kept), the lock is released, and the command exits ``128 + n`` with one line
    saying which. A signal ignored when the command starts (``nohup``) stays so.
    """

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from kgai_tui.core.interrupts import Interrupted, raising

        show_model_waits()  # a write may wait for another process's model update
        stopped: Interrupted | None = None
        with raising():
            try:
                return func(*args, **kwargs)
            except Interrupted as exc:
                stopped = exc
        assert stopped is not None
        # The handlers are back to their defaults here: a second signal ends the
        # process at once, which is what a second Ctrl-C asks for.
        as_json = bool(kwargs.get("as_json", False))
        fail(stopped.describe(), 128 + stopped.signum, as_json=as_json)

    return wrapper


def _notice(message: str) -> None:
    click.echo(f"kgai-tui: note: {message}", err=True)


def _read_capped(stream: BinaryIO, name: str) -> bytes:
    """Read at most the input cap plus one byte, so oversize input is refused early."""
    from kgai_tui.core.write.writes import MAX_INPUT_BYTES

    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise UsageError(f"{name} is larger than {MAX_INPUT_BYTES >> 20} MiB; refusing")
    return data


def _read_input(source: str) -> bytes:
    if source == "-":
        if sys.stdin.isatty():
            click.echo(
                "kgai-tui: reading decision JSON from stdin (Ctrl-D ends)", err=True
            )
        return _read_capped(sys.stdin.buffer, "standard input")
    try:
        with open(source, "rb") as fh:
            return _read_capped(fh, source)
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from exc


def _short(dec_id: str) -> str:
    return dec_id[:10]


def render_ingest(obj: dict[str, Any]) -> str:
    """The human rendering of an ingest result (spec 11.5)."""
    obj = visible_tree(obj)
    lines: list[str] = []
    if obj["dry_run"]:
        lines.append("dry run — nothing written")
    for entry in obj["decisions"]:
        title = f"“{entry['title']}”"
        if obj["dry_run"]:
            lines.append(f"○ would record {title}  {_short(entry['id'])}")
        elif "event_hash" in entry:
            lines.append(f"✓ recorded {title}  {_short(entry['id'])}")
        else:
            lines.append(f"○ already recorded {title}  {_short(entry['id'])}")
            continue  # its supersedes list names itself (it is a head): not news
        if entry.get("supersedes"):
            ids = " ".join(_short(s) for s in entry["supersedes"])
            lines.append(f"  supersedes {ids} — kept in history")
    if obj["elements"]:
        lines.append("elements: " + ", ".join(obj["elements"]))
    lines.extend(f"⚠ {w}" for w in obj.get("warnings") or ())
    return "\n".join(lines)


@click.command("init")
@STORE_OPTION
@KG_OUTPUT
@click.option("--actor", default=None, metavar="NAME", help="Name stamped on events.")
@click.option(
    "--remote",
    default=None,
    metavar="URL",
    help="The store's sync remote (git URL or s3://bucket[/prefix]), as kg init.",
)
@handles_errors
@stops_cleanly
def init_command(
    store: str | None, as_json: bool, actor: str | None, remote: str | None
) -> None:
    """Create a store, or bring one up to date.

    It holds log/, the config, ignore rules and a git repository. Where the
    store goes follows kg: --store, KGAI_STORE, an approved .kgairc's store, the
    global store, else <project>/.kgai/store. Under a .kgairc that waits for
    approval, no local store is created (approve it, or dismiss it, first).

    Running it again changes nothing unless --actor or --remote differ. A
    .gitignore or .gitattributes that kgai did not write is never overwritten
    (exit 1).

    Example: kgai-tui init --store .kgai/store --actor alice
    """
    from kgai_tui.core.store.discovery import project_root
    from kgai_tui.core.store.layers import project_layer
    from kgai_tui.core.write.writes import init_store

    location = resolve_location(store)
    asking = project_layer(project_root())
    if asking.pending and asking.on_file.store and location.source == "default":
        raise RefusedError(
            f"{asking.path} asks for a store and waits for your approval on this "
            "machine, so no local store is created here: `kgai-tui trust --show` "
            "shows what it asks for, `kgai-tui trust` approves it, `kgai-tui trust "
            "--dismiss` keeps the local store"
        )
    if remote:
        from kgai_tui.sync.s3_remote import check_remote

        remote = check_remote(remote)
    result = init_store(location.root, actor, remote=remote or "")
    for notice in result.notices:
        _notice(notice)
    if as_json:
        emit_json(result.to_obj())
        return
    verb = "created" if result.created else "ready"
    click.echo(
        f"✓ store {verb} at {result.root} (install {result.install_id}, "
        f"actor {result.actor})"
    )


@click.command("record")
@STORE_OPTION
@KG_OUTPUT
@click.argument("file", required=False, default=None, metavar="[FILE|-]")
@click.option(
    "--file",
    "file_option",
    default=None,
    metavar="FILE",
    help="The document to record (as kg ingest --file; same as FILE).",
)
@click.option(
    "--dry-run", is_flag=True, help="Show what would be recorded; write nothing."
)
@handles_errors
@stops_cleanly
def record_command(
    store: str | None,
    as_json: bool,
    file: str | None,
    file_option: str | None,
    dry_run: bool,
) -> None:
    """Record decisions from a kg ingest JSON document.

    The document (FILE, or stdin) is {"decision": {...}} or {"decisions": [...]},
    each with title, rationale, author, date, refs, supersedes_on and mutations. Every decision is
    checked before anything is written; a decision already recorded is skipped
    with a warning. --file FILE is the same as FILE (kg's ingest --file);
    `kgai-tui ingest` is this command under kg's name.

    \b
    Example:
      echo '{"decision": {"title": "Invoices are PDFs", "mutations":
        [{"op": "upsert_element", "kind": "feature", "name": "Invoice"}]}}' \\
        | kgai-tui record
    """
    if file is not None and file_option is not None:
        raise UsageError("give the document as FILE or as --file, not both")
    from kgai_tui.core.write.writes import record

    given = file_option if file_option is not None else file
    payload = _read_input("-" if given is None else given)
    obj = record(
        resolve_location(store).root, payload, dry_run=dry_run, on_notice=_notice
    )
    if as_json:
        emit_json(obj)
    else:
        click.echo(render_ingest(obj))


@click.command("resolve-conflict")
@STORE_OPTION
@JSON_OPTION
@click.argument("element", nargs=-1, required=True)
@click.option("--keep", default=None, metavar="DECISION_ID", help="The side that wins.")
@click.option("--title", default=None, help="Title of a new deciding decision.")
@click.option("--rationale", default="", help="Why (with --title).")
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="With --title: set a prop of the element (repeatable), e.g. the contested one.",
)
@handles_errors
@stops_cleanly
def resolve_conflict_command(
    store: str | None,
    as_json: bool,
    element: tuple[str, ...],
    keep: str | None,
    title: str | None,
    rationale: str,
    settings: tuple[str, ...],
) -> None:
    """End a conflict with one decision superseding every side.

    --keep restates the kept decision (a unique id prefix is enough); --title
    records a new decision instead, and --set KEY=VALUE makes it set the
    element's props (the contested ones, so the element agrees with it). Both
    sides stay in history. Exit 1 when ELEMENT has no conflict.

    Example: kgai-tui resolve-conflict feature:Refunds --title "30 days from
    delivery" --rationale "…" --set "window=30 days, from delivery"
    """
    if rationale and title is None:
        raise UsageError("--rationale goes with --title (--keep restates the kept one)")
    props: dict[str, str] = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set takes KEY=VALUE, not {setting!r}")
        props[key.strip()] = value
    from kgai_tui.core.write.resolve import resolve_conflict

    label = " ".join(element)
    obj = resolve_conflict(
        resolve_location(store).root,
        label,
        keep=keep,
        title=title,
        rationale=rationale,
        props=props,
        on_notice=_notice,
    )
    if as_json:
        emit_json(obj)
    else:
        click.echo(f"✓ resolved the conflict on {label}\n{render_ingest(obj)}")
