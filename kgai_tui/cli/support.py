"""Shared plumbing for CLI commands: output, exit codes and store opening.

Exit codes (documented in docs/cli.md):

* 0: success.
* 1: the command ran and its answer is a failure (doctor found problems, no such
  element, nothing to resolve).
* 2: bad usage or bad input (arguments, timestamps, ingest JSON).
* 3: no store where discovery looked (nothing is created).
* 4: a write could not be completed (read-only store, full disk, lock held too long);
  nothing was half-written.
"""

from __future__ import annotations

import _thread
import io
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, ParamSpec, TypeVar

import click

from kgai_tui.core.answers.answer import (
    Answer,
    chunks_of,
    failure,
    failure_message,
    first_line,
    no_store,
    with_pending,
)
from kgai_tui.core.errors import (
    KgaiError,
    NotFoundError,
    StoreNotFoundError,
    UsageError,
    WriteError,
)
from kgai_tui.core.reads.store import Store, StoreSource, WholeSource
from kgai_tui.core.safe_text import visible
from kgai_tui.core.store.discovery import StoreLocation, locate_store

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

# The last engines a command opened (see _hold), and the last answer printed:
# freeing a million-row answer object by object costs over a second.
_HELD: list[object] = []
_PRINTED: list[Answer] = []

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_NO_STORE: Final = 3
EXIT_WRITE: Final = 4

P = ParamSpec("P")
R = TypeVar("R")


def exit_code_for(exc: KgaiError) -> int:
    """Map a core error to its documented exit code."""
    if isinstance(exc, StoreNotFoundError):
        return EXIT_NO_STORE
    if isinstance(exc, UsageError):
        return EXIT_USAGE
    if isinstance(exc, WriteError):
        return EXIT_WRITE
    if isinstance(exc, NotFoundError):
        return EXIT_FAILED
    return EXIT_FAILED


def fail(message: str, code: int, *, as_json: bool, advice: str = "") -> NoReturn:
    """Report a failure as one line (and as ``{"error","ok":false}`` with --json).

    ``advice`` (:attr:`KgaiError.advice`) ends the line on stderr, never the JSON.
    """
    if as_json:
        emit(failure(message))
    line = first_line(message) + (f"; {advice}" if advice else "")
    # Messages quote arguments, paths and store text: shown, never obeyed.
    click.echo(f"kgai-tui: {visible(line)}", err=True)
    sys.exit(code)


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn core errors into a one-line message and the documented exit code.

    A command with kg's output convention (:data:`KG_OUTPUT`: ``as_json`` is
    ``None`` unless ``--json`` or ``--text`` was given) prints JSON when stdout is
    not a terminal, as kg does. In JSON, a read that finds no store answers kg's
    empty result with a note (exit 0; ``answers.no_store``).
    """

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if "as_json" in kwargs and kwargs["as_json"] is None:
            kwargs["as_json"] = not _stdout_is_terminal()
        as_json = bool(kwargs.get("as_json", False))
        try:
            return func(*args, **kwargs)
        except StoreNotFoundError as exc:
            if as_json and _empty_answer(exc):
                sys.exit(EXIT_OK)
            fail(str(exc), exit_code_for(exc), as_json=as_json, advice=exc.advice)
        except KgaiError as exc:
            fail(str(exc), exit_code_for(exc), as_json=as_json, advice=exc.advice)
        except BrokenPipeError:
            sys.exit(EXIT_OK)
        except OSError as exc:
            # Writes turn their OSErrors into WriteError (exit 4) themselves; an
            # OSError reaching here is a failed read.
            fail(failure_message(exc), EXIT_FAILED, as_json=as_json)

    return wrapper


def _stdout_is_terminal() -> bool:
    try:
        return os.isatty(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False


#: kg's command names for ours and their aliases (the empty answers are kg's).
_KG_NAMES: Final = {"recall": "context", "info": "status", "as_of": "as-of"}


def _empty_answer(exc: StoreNotFoundError) -> bool:
    """Print the running read's empty answer for a missing store, if it has one."""
    from kgai_tui.core.answers.no_store import no_store_answer
    from kgai_tui.core.store.discovery import StoreLocation

    location = exc.location
    ctx = click.get_current_context(silent=True)
    if not isinstance(location, StoreLocation) or ctx is None:
        return False
    name = _KG_NAMES.get(ctx.info_name or "", ctx.info_name or "")
    answer = no_store_answer(name, location)
    if answer is None:
        return False
    emit(answer)
    return True


def emit(answer: Answer) -> None:
    """Print an answer's bytes (:func:`~kgai_tui.core.answers.answer.encode`, which
    the MCP tools and the agent view return too), with ``pending_approval`` when
    the project's ``.kgairc`` waits for approval."""
    from kgai_tui.core.answers.config import pending_path

    answer = with_pending(answer, pending_path())
    for chunk in chunks_of(answer):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    _PRINTED[:] = [answer]


def emit_json(obj: Any, *, floats: bool = False) -> None:
    """Print a command's result object (a write's, sync's, bench's) as an answer."""
    emit(Answer(obj, floats=floats))


def show(
    answer: Answer,
    as_json: bool,
    render: Callable[[dict[str, Any]], str | Iterator[str]],
) -> None:
    """Print a read's answer: its JSON bytes, or ``render`` of the same object
    (with ``pending_approval`` when the project's ``.kgairc`` waits, as in JSON):
    its text, or its lines as they are made (a wide ``diff`` is never held)."""
    if as_json:
        emit(answer)
        return
    from kgai_tui.core.answers.config import pending_path

    text = render(with_pending(answer, pending_path()).obj)
    if isinstance(text, str):
        click.echo(text)
        return
    lines = list(islice(text, _ECHO_LINES))
    while lines:
        click.echo("\n".join(lines))
        lines = list(islice(text, _ECHO_LINES))


#: Lines a streamed text answer prints at a time.
_ECHO_LINES = 4096


class _GuardedText(io.TextIOWrapper):
    """A text stream that marks anything that would act on a terminal."""

    def write(self, s: str) -> int:
        """Write ``s`` with controls made visible; LF and TAB pass."""
        super().write(visible(s, keep_newlines=True))
        return len(s)


def guard_terminal_streams() -> None:
    """Route every text write to stdout and stderr through :func:`visible`.

    Defence in depth at the one point all human output passes: each renderer
    already marks the store text it prints, and the CLI writes no styling of its
    own, so this changes nothing unless some message forgot to (a notice quoting a
    file name, say). Bytes written to ``.buffer`` (``--json``, reports) pass
    untouched; they are escaped where they are made. The explorer draws through
    ``sys.__stderr__``, which is left alone.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if type(stream) is not io.TextIOWrapper:
            continue  # replaced already (a test runner, an embedding program)
        stream.flush()
        setattr(
            sys,
            name,
            _GuardedText(
                stream.buffer,
                encoding=stream.encoding,
                errors=stream.errors,
                line_buffering=stream.line_buffering,
                write_through=stream.write_through,
            ),
        )


def resolve_location(store: str | None) -> StoreLocation:
    """Find the store for a command (never creates it)."""
    return locate_store(store)


def no_store_here(location: StoreLocation) -> StoreNotFoundError:
    """The "no store" error, advising the command that creates one right there.

    The message is :func:`~kgai_tui.core.answers.answer.no_store`'s (the MCP
    tools answer the same); the advice, ``kgai-tui init --store PATH`` with the
    path quoted for the shell, is added to the line on stderr.
    """
    error = no_store(location)
    where = shlex.quote(str(location.root))
    error.advice = f"create one there with `kgai-tui init --store {where}`"
    if location.source == "default":
        from kgai_tui.core.errors import KgaiError
        from kgai_tui.core.store.discovery import project_root
        from kgai_tui.core.store.layers import project_layer

        try:
            asking = project_layer(project_root())
        except KgaiError:
            return error
        if asking.pending and asking.on_file.store:
            # The team's store is elsewhere: advising a local one would fork it.
            error.advice = (
                f"{asking.path} names the team's store and waits for your approval: "
                "`kgai-tui trust --show` shows it, `kgai-tui trust` approves it"
            )
    return error


# A display that would only flash by is not shown: most opens take milliseconds.
PROGRESS_DELAY: Final = 0.5


def progress_delay() -> float:
    """How long work runs before its line is drawn: ``KGAI_TUI_PROGRESS_DELAY``
    seconds (0 to 60; to see it on every open, or never on a slow disk), else
    :data:`PROGRESS_DELAY`."""
    raw = os.environ.get("KGAI_TUI_PROGRESS_DELAY", "")
    try:
        chosen = float(raw)
    except ValueError:
        return PROGRESS_DELAY
    return chosen if 0.0 <= chosen <= 60.0 else PROGRESS_DELAY


_FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def progress_wanted() -> bool:
    """Whether a progress display may be drawn: stderr (fd 2) is a terminal that
    understands the line-erasing escape. Never when it is a file or a pipe, nor
    with ``KGAI_TUI_PROGRESS=off``."""
    if os.environ.get("TERM", "") == "dumb":
        return False
    if os.environ.get("KGAI_TUI_PROGRESS", "").lower() in ("off", "0", "no"):
        return False
    try:
        return sys.stderr.fileno() == 2 and os.isatty(2)
    except (AttributeError, ValueError, OSError):  # a replaced or closed stream
        return False


class _Spinner:
    """A one-line spinner on fd 2, drawn from the moment the work has taken
    :func:`progress_delay` seconds, and erased when it ends.

    It runs on a bare ``_thread`` thread that holds no lock while the work runs
    (it waits on its own lock and writes bytes with ``os.write``), so forking
    stays safe; a ``threading`` thread would also make the store's open give up
    forking (it counts ``threading.active_count()``): slower cold opens, and
    caches saved before the answer instead of after it.
    """

    def __init__(self, message: Callable[[], str]) -> None:
        """Prepare to show ``message()`` (called once, only if it is shown)."""
        self._message = message
        self._stop = _thread.allocate_lock()
        self._stop.acquire()
        self._ended = _thread.allocate_lock()
        self._ended.acquire()
        self._started = time.monotonic()
        self._delay = progress_delay()

    def start(self) -> None:
        """Start the timer."""
        _thread.start_new_thread(self._run, ())

    def stop(self) -> None:
        """Stop, and wait (briefly) for the line to be erased."""
        self._stop.release()
        self._ended.acquire(timeout=1.0)

    def _run(self) -> None:
        try:
            if self._stop.acquire(timeout=self._delay):
                return
            text = self._message()
            frame = 0
            try:
                while True:
                    os.write(2, self._line(text, frame).encode("utf-8"))
                    frame += 1
                    if self._stop.acquire(timeout=0.1):
                        break
            finally:
                os.write(2, b"\r\x1b[2K")
        except (OSError, ValueError):
            pass  # the terminal went away: nothing to show or erase
        finally:
            self._ended.release()

    def _line(self, text: str, frame: int) -> str:
        seconds = int(time.monotonic() - self._started)
        line = f"{_FRAMES[frame % len(_FRAMES)]} {text}  {seconds}s"
        try:
            width = os.get_terminal_size(2).columns
        except OSError:
            width = 80
        # One row: a wrapped line could not be erased by returning to its start.
        if len(line) >= width:
            line = line[: max(width - 2, 0)] + "…"
        return "\r\x1b[2K" + line


@contextmanager
def progress(message: Callable[[], str]) -> Iterator[None]:
    """Show ``message()`` with a spinner on stderr while the block runs, once it
    has run for :func:`progress_delay` seconds, and only when stderr is a terminal
    (:func:`progress_wanted`). stdout is never touched, so ``--json`` output and
    pipes are unchanged. Inside another progress block it shows nothing: the outer
    line already covers the work, and two spinners would fight over one line."""
    if _SHOWING or not progress_wanted():
        yield
        return
    sys.stderr.flush()
    spinner = _Spinner(message)
    _SHOWING.append(spinner)
    spinner.start()
    try:
        yield
    finally:
        spinner.stop()
        _SHOWING.clear()


# The progress line being shown, if any (see progress).
_SHOWING: list[_Spinner] = []


WAITING_FOR_MODEL: Final = (
    "kgai-tui: waiting for another kgai-tui process to finish writing the read model"
)


def show_model_waits() -> None:
    """Show a progress line (on a terminal) while a write waits for the model lock.

    After the first read of a big store a detached process writes its read model
    for as long as the replay took; a write started meanwhile waits for it, and
    without this it would wait in silence.
    """
    from kgai_tui.core.model.seal import show_lock_waits

    show_lock_waits(lambda: progress(lambda: WAITING_FOR_MODEL))


def log_size(root: Path) -> str:
    """``"30 shards, 1.2 GB"``: what the store's ``log/`` holds, for a progress line."""
    from kgai_tui.core.store.shards import log_extent

    count, size = log_extent(root / "log")
    shards = "1 shard" if count == 1 else f"{count:,} shards"
    if size < 1000:
        return f"{shards}, {size} bytes"
    amount, units = float(size) / 1000, ["KB", "MB", "GB"]
    while amount >= 1000 and len(units) > 1:
        amount /= 1000
        units.pop(0)
    digits = 0 if amount >= 10 else 1
    amount_text = f"{amount:,.{digits}f} {units[0]}"
    return f"{shards}, {amount_text}"


def open_engine(store: str | None, *, warn: bool = True) -> Engine:
    """Open the discovered store whole, every line of its log read and verified,
    warning on stderr about skipped lines (the model switched off, doctor when
    the model does not hold what it verified, a replay that builds an index).

    ``warn=False``: the command already warned (it opened the read model first).

    Raises:
        StoreNotFoundError: nothing is at the discovered location.
    """
    # The engine (NetworkX, NumPy) loads only when a command opens a store, so
    # ``--version``, ``--help`` and commands that fail before opening stay light.
    from kgai_tui.core.engine.open import open_engine as open_store

    location = resolve_location(store)
    if not location.exists:
        raise no_store_here(location)
    root = location.root
    what = "kgai-tui: reading every line of the log ({})"
    with progress(lambda: what.format(log_size(root))):
        engine = open_store(root)
    # Held until the process ends (cli.entry leaves without teardown): a command
    # passes the engine as a temporary, and freeing its millions of objects the
    # moment the answer is computed delays printing it (1.9 s at 1M decisions).
    _hold(engine)
    if warn:
        _warn_skipped(len(engine.problems), location.root)
    return engine


def replay_every_line(root: Path) -> Engine:
    """The store at ``root`` replayed from every byte of its log (doctor, when the
    model does not hold exactly what it verified)."""
    from kgai_tui.core.engine.open import open_engine as open_store

    engine = open_store(root)
    _hold(engine)
    return engine


def _hold(engine: object) -> None:
    """Keep ``engine`` (and the one opened before it: an as-of opens the model,
    then the whole store) until the process ends; one in-process invocation after
    another (tests) frees the older ones."""
    _HELD[:] = [*_HELD[-1:], engine]


def _warn_skipped(skipped: int, root: Path | str) -> None:
    if skipped:
        click.echo(
            f"kgai-tui: warning: {skipped} problem line(s) in "
            f"{visible(str(Path(root) / 'log'))} "
            "(run `kgai-tui doctor` for details)",
            err=True,
        )


def open_model_engine(store: str | None) -> Store:
    """Open the discovered store as every read does
    (:func:`~kgai_tui.core.model.read.read_store`): through its read model on
    disk, so the kg reads (status, heads, history, resolve, conflicts) touch only
    the rows they need; as a whole when the model is switched off or cannot be
    written (a read-only cache directory).
    """
    from kgai_tui.core.model.read import read_store
    from kgai_tui.core.model.schema import model_enabled

    location = resolve_location(store)
    if not location.exists:
        raise no_store_here(location)
    root = location.root
    what = (
        "kgai-tui: reading the log ({}) into the read model; later reads are quick"
        if model_enabled()
        else "kgai-tui: reading every line of the log ({})"
    )
    # A first read answers from its replay while a detached process writes the
    # model (see open_model): it costs the replay, not the replay and the model.
    with progress(lambda: what.format(log_size(root))):
        engine = read_store(root, background=True, then=_index_for_search)
    # A first read answers from the whole replay: held like open_engine's (2.1 s
    # of a 1M first answer went to freeing it before the answer was printed).
    _hold(engine)
    _warn_skipped(len(engine.problems), location.root)
    return engine


#: Log bytes from which a first read's detached build also builds the search
#: index (below, the first search builds it in well under a second).
SEARCH_IN_BACKGROUND_MIN: Final = 8 << 20


def _index_for_search(engine: Engine) -> None:
    """In a first read's detached build, after the read model and its moments:
    the search index, from the replay that build holds. Without it the first
    ``search`` replays the whole store again to build it (1M decisions: 28 s and
    1.8 GB; 10M: 11 minutes and 17 GB); a search that comes while this runs waits
    for it (:meth:`~kgai_tui.core.search.index.SearchIndex.once_built`)."""
    if sum(scan.size for scan in engine.scans) < SEARCH_IN_BACKGROUND_MIN:
        return
    from kgai_tui.core.search.index import SearchIndex

    SearchIndex.for_engine(engine)


def model_source(store: str | None) -> StoreSource:
    """The store through its read model, opened once an answer's arguments are checked."""
    return lambda: open_model_engine(store)


def engine_source(store: str | None, *, warn: bool = True) -> WholeSource:
    """The whole replay an answer opens, once its arguments are checked, for what
    its read model could not answer (:func:`open_engine`, every line read: the
    replay builds that answer, and nothing of it is kept in the cache)."""
    return lambda: open_engine(store, warn=warn)


STORE_OPTION = click.option(
    "--store",
    "store",
    metavar="PATH",
    default=None,
    help=(
        "Store directory, or a project directory holding .kgai/store "
        "(default: $KGAI_STORE, else <project>/.kgai/store)."
    ),
)
JSON_OPTION = click.option(
    "--json/--text",
    "as_json",
    default=False,
    help="Print JSON (the kg shape) instead of text (the default here).",
)
KG_OUTPUT = click.option(
    "--json/--text",
    "as_json",
    default=None,
    help="JSON (the kg shape) or text; default: text on a terminal, JSON when "
    "piped, as kg does.",
)
"""The output choice of the commands kg has: JSON unless stdout is a terminal."""
