"""The ``kgai-tui`` command line: every read with ``--json`` (kg's shapes) or text.

Each read parses its arguments, calls its answer function
(:mod:`kgai_tui.core.answers`, the same the MCP tools call) and prints the answer's
bytes or its text rendering (:mod:`kgai_tui.text.render`). The terminal app is
imported only when it is opened, so scripted reads never pay for Textual.
"""

from __future__ import annotations

import copy
import gc
import os
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any, Final

import click

from kgai_tui import __version__
from kgai_tui.cli.lazy import LAZY_COMMANDS
from kgai_tui.cli.support import (
    EXIT_USAGE,
    JSON_OPTION,
    KG_OUTPUT,
    STORE_OPTION,
    emit,
    emit_json,
    engine_source,
    fail,
    guard_terminal_streams,
    handles_errors,
    log_size,
    model_source,
    no_store_here,
    open_model_engine,
    progress,
    replay_every_line,
    resolve_location,
    show,
)
from kgai_tui.core.answers.kg import (
    conflicts_answer,
    doctor_answer,
    export_answer,
    heads_answer,
    history_answer,
    resolve_answer,
    status_answer,
)
from kgai_tui.text.render import (
    render_as_of,
    render_conflicts,
    render_context,
    render_doctor,
    render_heads,
    render_history,
    render_resolve,
    render_status,
)


class _DefaultToOpen(click.Group):
    """A group whose first word, when it is an existing directory, is the store to open.

    Any other word that is not a command is a typo: click's "No such command",
    with the closest command names. A usage error of a command given ``--json``
    also prints the failure answer on stdout (docs/cli.md, "Exit codes").
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Route ``kgai-tui``, ``kgai-tui DIR`` and ``kgai-tui --demo`` (any first
        option other than the group's own ``--help`` or ``--version``) to the
        ``open`` command."""
        ctx.meta[_ARGV] = list(args)
        # Shell completion parses resiliently with no words yet: it lists the
        # commands instead of completing ``open``'s options.
        bare = not args and not ctx.resilient_parsing
        if bare or (args and _opens(args[0], self.command_names())):
            args = ["open", *args]
        with _json_usage_errors(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a usage error under ``--json`` also prints JSON."""
        with _json_usage_errors(ctx):
            return super().invoke(ctx)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Find the command named by the first word, or say which names are close."""
        name = args[0] if args else ""
        if (
            name in self.command_names()
            or name.startswith("-")
            or ctx.resilient_parsing
        ):
            return super().resolve_command(ctx, args)
        raise click.UsageError(_no_such_command(name, self.list_commands(ctx)), ctx)

    def command_names(self) -> set[str]:
        """Every command name, loaded or not (hidden ones included)."""
        return set(self.commands) | set(LAZY_COMMANDS)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted, without importing the lazy ones."""
        return sorted(self.command_names())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module the first time it is asked for."""
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in LAZY_COMMANDS:
            command = load_lazy(cmd_name)
            self.add_command(command, cmd_name)
        return command

    def format_commands(
        self, ctx: click.Context, formatter: click.HelpFormatter
    ) -> None:
        """List the commands with their whole first sentence, wrapped if need be.

        click cuts a one-liner that does not fit the terminal with "...".
        """
        rows = []
        for name in self.list_commands(ctx):
            lazy = LAZY_COMMANDS.get(name)
            if lazy is not None and name not in self.commands:
                if not lazy.hidden:  # listed from the table: no import for --help
                    rows.append((name, lazy.short_help))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=sys.maxsize)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


_GROUP_FLAGS: Final = frozenset(("--help", "-h", "--version", "-V"))
_ARGV: Final = "kgai_tui.argv"


def load_lazy(name: str) -> click.Command:
    """Import the command registered as ``name`` in :data:`LAZY_COMMANDS`."""
    from importlib import import_module

    lazy = LAZY_COMMANDS[name]
    command: click.Command = getattr(import_module(lazy.module), lazy.attribute)
    return _alias(command, name) if lazy.alias else command


def all_commands() -> dict[str, click.Command]:
    """Every command by name, each lazy one imported (for tests and docs tools)."""
    ctx = click.Context(main)
    found = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def _opens(word: str, commands: Collection[str]) -> bool:
    """Whether the first word means ``open``: an option other than the group's
    own, or a directory that is not also a command name."""
    if word in commands or word in _GROUP_FLAGS:
        return False
    return word.startswith("-") or os.path.isdir(word)


def _no_such_command(word: str, names: list[str]) -> str:
    """One line: the unknown word, and the command names it is closest to."""
    from difflib import get_close_matches

    message = f"No such command {word!r}."
    close = get_close_matches(word, names)
    if close:
        message += " Did you mean " + " or ".join(repr(n) for n in close) + "?"
    elif word.lower() == "help":
        message += " Try 'kgai-tui --help'."
    if os.sep in word or word.startswith((".", "~")):
        message += " There is no such directory to open either."
    return message


@contextmanager
def _json_usage_errors(ctx: click.Context) -> Iterator[None]:
    """With ``--json`` among the arguments, a usage error is answered like every
    other failure: ``{"error", "ok": false}`` on stdout, one line on stderr, exit 2."""
    try:
        yield
    except click.UsageError as exc:
        if "--json" not in ctx.find_root().meta.get(_ARGV, ()):
            raise
        fail(exc.format_message(), EXIT_USAGE, as_json=True)


@click.group(
    cls=_DefaultToOpen,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "--version", "-V", prog_name="kgai-tui")
def main() -> None:
    """Read and steer a team's kgai decision memory.

    With no command, opens the explorer (on the bundled demo store when no store
    is found). Every read takes --json and prints the reference engine's JSON
    shape. Exit codes: 0 ok, 1 failed answer, 2 bad input, 3 no store, 4 write
    failed, 128+n stopped by signal n (a batch is whole or absent).

    kg's names work too: ingest (record), info (status), version (--version).
    """


@main.command("open")
@click.argument("store_path", metavar="[STORE]", required=False, default=None)
@click.option("--store", "store", metavar="PATH", default=None, help="Store directory.")
@click.option("--demo", is_flag=True, help="Open a fresh copy of the demo store.")
@handles_errors
def open_command(store_path: str | None, store: str | None, demo: bool) -> None:
    """Open the terminal explorer (the default command).

    Without a store found (--store, KGAI_STORE, the project's .kgai/store), it
    opens a temporary copy of the bundled demo store; nothing in the install
    changes.

    Example: kgai-tui ~/work/shop/.kgai/store
    """
    if not _has_terminal():
        fail(NO_TERMINAL, EXIT_USAGE, as_json=False)
    from pathlib import Path

    explicit = store_path or store
    location = resolve_location(explicit)
    if demo or (not explicit and not location.exists):
        from kgai_tui.demo import open_copy

        root, label = open_copy(), "demo store (a temporary copy)"
    elif not location.exists:
        raise no_store_here(location)
    else:
        root, label = Path(location.root), str(location.root)
    from kgai_tui.ui.app import make_app

    gc.enable()  # a session, not one answer (see entry)
    make_app(root, label=label).run()


NO_TERMINAL: Final = (
    "the explorer needs a terminal; for scripts use the CLI: status, heads, "
    "history, search, context ... --json (kgai-tui --help lists them all)"
)


def _has_terminal() -> bool:
    """Whether the explorer can run: it reads keys from stdin and draws on a
    terminal, so stdin, stdout and stderr (where Textual writes) must all be one.

    Without this, ``kgai-tui </dev/null >out`` (a script, an agent) started the
    full-screen app, which waited for keys that never came.
    """
    streams = (sys.stdin, sys.stdout, sys.stderr)
    try:
        return all(s is not None and s.isatty() for s in streams)
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


@main.command()
@STORE_OPTION
@KG_OUTPUT
@click.option("--about", default="", help="Only elements whose name contains this.")
@handles_errors
def conflicts(store: str | None, as_json: bool, about: str) -> None:
    """List elements with two or more decisions in force.

    Example: kgai-tui conflicts --about invoice --json
    """
    answer = conflicts_answer(model_source(store), about)
    show(answer, as_json, lambda obj: render_conflicts(obj, about))


@main.command()
@STORE_OPTION
@JSON_OPTION
@click.argument("element", required=False, default=None)
@handles_errors
def heads(store: str | None, as_json: bool, element: str | None) -> None:
    """Show the decisions in force, for one element or for all.

    Example: kgai-tui heads feature:Invoice
    """
    show(heads_answer(model_source(store), element), as_json, render_heads)


@main.command()
@STORE_OPTION
@KG_OUTPUT
@click.argument("element", nargs=-1, required=True)
@handles_errors
def history(store: str | None, as_json: bool, element: tuple[str, ...]) -> None:
    """List every decision that shaped ELEMENT, oldest first.

    ELEMENT is kind:name or an element id.

    Example: kgai-tui history feature:Invoice
    """
    answer = history_answer(model_source(store), " ".join(element))
    show(answer, as_json, lambda obj: render_history(obj, answer.extra["statuses"]))


@main.command()
@STORE_OPTION
@KG_OUTPUT
@click.argument("ref", nargs=-1, required=True)
@handles_errors
def resolve(store: str | None, as_json: bool, ref: tuple[str, ...]) -> None:
    """Resolve KIND:NAME to its id, existence and heads.

    Example: kgai-tui resolve service:Billing
    """
    show(resolve_answer(model_source(store), " ".join(ref)), as_json, render_resolve)


def _context(
    store: str | None, as_json: bool, paths: str, about: str, max_: int
) -> None:
    # Recall's answer (hints, the recall index) loads only for this command.
    from kgai_tui.core.answers.recall import recall_answer

    answer = recall_answer(model_source(store), paths, about, max_)
    show(answer, as_json, render_context)


_CONTEXT_OPTIONS = [
    click.option("--paths", default="", help="Comma-separated file paths or globs."),
    click.option("--about", default="", help="A topic in words."),
    click.option(
        "--max", "max_", type=int, default=15, help="At most this many elements."
    ),
]


def _with_context_options(func: Any) -> Any:
    for option in reversed(_CONTEXT_OPTIONS):
        func = option(func)
    return func


@main.command()
@STORE_OPTION
@KG_OUTPUT
@_with_context_options
@handles_errors
def context(
    store: str | None, as_json: bool, paths: str, about: str, max_: int
) -> None:
    """Recall the decisions in force for the elements in play.

    Example: kgai-tui context --paths src/billing/pdf.go --about invoices --json
    """
    _context(store, as_json, paths, about, max_)


@main.command()
@STORE_OPTION
@KG_OUTPUT
@_with_context_options
@handles_errors
def recall(store: str | None, as_json: bool, paths: str, about: str, max_: int) -> None:
    """Recall the decisions in force (the same as context).

    Example: kgai-tui recall --about "invoice rendering"
    """
    _context(store, as_json, paths, about, max_)


@main.command("as-of")
@STORE_OPTION
@KG_OUTPUT
@click.argument("timestamp")
@handles_errors
def as_of(store: str | None, as_json: bool, timestamp: str) -> None:
    """Show the graph, heads and conflicts at a past moment.

    TIMESTAMP is RFC3339 with seconds and a zone (2026-03-31T12:00:00Z,
    2026-03-31T14:00:00+02:00), or YYYY-MM-DD meaning the end of that day (UTC).

    Example: kgai-tui as-of 2026-03-31
    """
    from kgai_tui.core.answers.moments import as_of_answer

    show(
        as_of_answer(model_source(store), timestamp),
        as_json,
        render_as_of,
    )


@main.command()
@STORE_OPTION
@click.option("--canonical", is_flag=True, help="Add the replay digest.")
@click.option(
    "--json/--text",
    "as_json",
    default=None,
    help="Accepted for symmetry; export is JSON (with no store: kg's note).",
)
@handles_errors
def export(store: str | None, canonical: bool, as_json: bool | None) -> None:
    """Print the whole projection as JSON.

    With --canonical, also its replay digest.

    Example: kgai-tui export --canonical
    """
    emit(
        export_answer(
            model_source(store),
            canonical=canonical,
            whole=engine_source(store, warn=False),
        )
    )


@main.command()
@STORE_OPTION
@KG_OUTPUT
@handles_errors
def status(store: str | None, as_json: bool) -> None:
    """Summarise the store: events, elements, conflicts.

    Also its writers, this install and actor, and the decision count.

    Example: kgai-tui status --json
    """
    show(status_answer(model_source(store)), as_json, render_status)


@main.command()
@STORE_OPTION
@KG_OUTPUT
@handles_errors
def doctor(store: str | None, as_json: bool) -> None:
    """Check every shard; exit 1 when anything is wrong.

    Reports bad hashes, decision ids that do not match, broken parent chains,
    malformed, over-long and torn lines, each with its shard and line.

    Example: kgai-tui doctor
    """
    opened = open_model_engine(store)
    root = opened.root
    assert root is not None  # a discovered store
    what = "kgai-tui: checking every line of the log ({})"
    with progress(lambda: what.format(log_size(root))):
        answer = doctor_answer(lambda: opened, lambda: replay_every_line(root))
    show(answer, as_json, render_doctor)
    if not answer.ok:
        sys.exit(1)


def _alias(command: click.Command, name: str) -> click.Command:
    """``command`` under another name, left out of the command list."""
    alias = copy.copy(command)
    alias.name = name
    alias.hidden = True
    return alias


# kg's name for status (docs/cli.md, "Aliases"); ``ingest`` is in LAZY_COMMANDS.
main.add_command(_alias(status, "info"))


@main.command("version", hidden=True)
@KG_OUTPUT
@handles_errors
def version_command(as_json: bool) -> None:
    """Print the version: kg's JSON when piped or with --json.

    Example: kgai-tui version --json
    """
    from kgai_tui.core.store.config_file import SCHEMA_VERSION

    if as_json:
        emit_json(
            {
                "name": "kgai-tui",
                "ok": True,
                "schema_version": SCHEMA_VERSION,
                "version": __version__,
            }
        )
        return
    click.echo(f"kgai-tui, version {__version__}")


def entry() -> None:
    """The ``kgai-tui`` command: run, flush, and leave without tearing down.

    A store of a million decisions is millions of objects; letting the interpreter
    free them one by one at exit costs over a second after the answer is printed.
    Nothing is left to clean up by then (files are closed, temporary directories
    removed by their context managers), so the process ends directly. Text output
    is guarded first (:func:`~kgai_tui.cli.support.guard_terminal_streams`).

    The cyclic collector is off for the same reason: a command answers once and
    ends, and what it builds (an answer's 100k rows at 10M decisions) is acyclic,
    so the young collections it would trigger only walk it again (a third of an
    ``as-of`` at 10M). The explorer and the MCP server run for a session and turn
    it back on.
    """
    code: int = 0
    gc.disable()
    guard_terminal_streams()
    try:
        main()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
            code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or 1
    os._exit(code)
