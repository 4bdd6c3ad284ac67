"""Open a store through its read model: trust it, extend it, or rebuild it, then read.

The pipeline::

    list_log + prints_from_disk                  the shards as they are now
    sealed(model) and header matches?            else rebuild (under the model lock)
      compare the model's fingerprint with now
        same   -> read                           (how = "warm")
        append -> extend_model, then read        (how = "append")
        else   -> open_cold, build_model, read   (how = "cold")

A read holds one SQLite read transaction from its first row to its answer; in
write-ahead-log mode a writer extending the model meanwhile neither waits for it nor
changes what it sees, so the answer is the replay of one prefix of the log.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.model.build_after import (
    DETACHED_PATIENCE,
    build_detached,
    build_now,
)
from kgai_tui.core.model.disk import DiskProjection, read_meta
from kgai_tui.core.model.recall_files import check_recall
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.model.schema import connect_model, header, model_path
from kgai_tui.core.model.seal import (
    fold_log,
    model_lock,
    remove_stale_temporaries,
    sealed,
    write_seal,
)
from kgai_tui.core.store.cache_file import remove_legacy
from kgai_tui.core.store.shard_print import ShardPrint, compare_prints, prints_from_disk
from kgai_tui.core.store.shards import LineProblem, LogListing, LogSummary, list_log

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.export import ModelExport
    from kgai_tui.core.model.moment_probe import MomentProbe
    from kgai_tui.core.model.people_at import PeopleParts
    from kgai_tui.core.model.people_steps import PersonSteps
    from kgai_tui.core.model.update import Staged
    from kgai_tui.core.timeindex.index import TimeIndex
    from kgai_tui.core.wire.model import Event

__all__ = [
    "ModelEngine",
    "ModelUnavailableError",
    "open_model",
    "open_model_if_current",
    "peek_model",
]

# Rounds of "the log grew again while we extended" before answering from the model
# as it is (a consistent prefix of the log).
_ROUNDS: Final = 4
#: Events :meth:`ModelEngine.event_for` keeps (oldest dropped first).
_EVENTS_KEPT: Final = 256
# What a damaged model raises; IndexError: a stored list shorter than its layout,
# EOFError: a marshal value cut short.
_DAMAGE: Final = (sqlite3.DatabaseError, ModelCorruptError, IndexError, EOFError)
_FAILURES: Final = (*_DAMAGE, ValueError, TypeError, KeyError)


class ModelEngine:
    """An opened store read through its model: what the kg reads ask of an engine."""

    def __init__(
        self,
        root: Path,
        db: sqlite3.Connection,
        how: str,
        refused: list[LineProblem],
        model: Path,
    ) -> None:
        """Wrap a connection holding an open read transaction on the checked model
        at ``model``."""
        self.root: Path = root
        self.db = db
        self.how = how
        self.refused = refused
        self.model_path = model
        self.projection = DiskProjection(db, model)
        self.shard_states: list[dict[str, Any]] = read_meta(db, "shards")
        self._people_steps: list[PersonSteps] | None = None
        self._events: dict[str, Event | None] = {}

    @property
    def log_dir(self) -> Path:
        """The store's ``log/`` directory."""
        return self.root / "log"

    @property
    def replayed(self) -> None:
        """Not the whole replay (see :class:`~kgai_tui.core.reads.store.Store`)."""
        return None

    @property
    def kept(self) -> ModelEngine:
        """This model's moments, export rows and people tables."""
        return self

    @property
    def problems(self) -> list[LineProblem]:
        """Every problem found while reading, in shard name then line order."""
        found = [
            LineProblem(s["print"][0], int(line), str(reason), str(h))
            for s in self.shard_states
            for line, reason, h in s["problems"]
        ]
        if not self.refused:
            return found
        return sorted(
            self.refused + found,
            key=lambda p: p.shard.encode("utf-8", "surrogateescape"),
        )

    def chain_break_lines(self) -> list[tuple[str, int, int]]:
        """``(shard, line, lamport)`` of each broken hash chain, as the whole
        store's :meth:`Engine.chain_break_lines` lists them."""
        return [
            (str(s["print"][0]), int(line), int(lamport))
            for s in self.shard_states
            for line, lamport in s["breaks"]
        ]

    def _shard_names(self) -> list[str]:
        return [str(s["print"][0]) for s in self.shard_states]

    def event_for(self, event_hash: str, install: str = "") -> Event | None:
        """The applied event with this hash, read from its line (a decision's full
        record); ``install``, its writer, names the shard to search first (see
        :mod:`kgai_tui.core.model.event_lines`)."""
        from kgai_tui.core.model.event_lines import find_event

        # An event's line never changes (a rewritten log gets a new engine), and
        # the explorer asks for the same few again at each slider step: a search
        # reads a shard, ~10 ms at 1M.
        if event_hash in self._events:
            return self._events[event_hash]
        found = find_event(self.log_dir, self._shard_names(), event_hash, install)
        if len(self._events) >= _EVENTS_KEPT:
            del self._events[next(iter(self._events))]
        self._events[event_hash] = found
        return found

    def where(self, event_hash: str) -> str:
        """``log/<shard>:<line>`` of the last parsed line with this hash, or ``?``."""
        from kgai_tui.core.model.event_lines import event_place

        return event_place(self.log_dir, self._shard_names(), event_hash)

    def summary(self) -> LogSummary:
        """Count shards, parsed events and skipped lines."""
        events = sum(int(s["events"]) for s in self.shard_states)
        return LogSummary(len(self.shard_states), events, len(self.problems))

    def as_of_obj(self, cut: int, at: str) -> dict[str, Any] | None:
        """The ``as-of`` object from the model's moments, or ``None`` when they do
        not cover ``cut`` (see :mod:`kgai_tui.core.model.moments`)."""
        from kgai_tui.core.model.moments import moments_obj

        try:
            return moments_obj(self.db, cut, at)
        except _FAILURES:
            return None  # the time index answers, and the moments are written anew

    def answers_now_at(self, cut: int) -> bool:
        """Whether the store as of ``cut`` is the store now, by the moments (the
        latest recorded time is at or before it and no event was left out)."""
        from kgai_tui.core.model.moments import cut_source

        try:
            return cut_source(self.db, cut) == "now"
        except _FAILURES:
            return False

    def people_at_parts(self, cut: int) -> PeopleParts | None:
        """``people`` as of ``cut`` from the model (totals and head counts), or
        ``None`` when it cannot answer that cut exactly (see
        :mod:`kgai_tui.core.model.people_at`)."""
        from kgai_tui.core.model.people_at import people_at_parts
        from kgai_tui.core.model.people_steps import save_people_steps

        def keep(steps: list[PersonSteps]) -> None:
            # Stored: this read sees them from then on (it read again under the
            # lock, the same log state); else it holds them for its later cuts.
            if not save_people_steps(
                self.model_path, self.shard_states, steps, self.db
            ):
                self._people_steps = steps  # this snapshot's rows: every settled cut

        try:
            return people_at_parts(
                self.db, cut, self.projection.people_parts, keep, self._people_steps
            )
        except _FAILURES:
            return None

    def export_source(self) -> ModelExport | None:
        """The export's parts from the model's tables, checked, or ``None`` when
        they do not decode (a replay of the log answers then)."""
        from kgai_tui.core.model.export import ModelExport

        try:
            return ModelExport.check(self.db, len(self.projection.dec_id))
        except _FAILURES:
            return None

    def moment_keys(self, cut: int) -> tuple[list[str], list[str]] | None:
        """The element ids and the ids of the decisions in force at ``cut`` from
        the moments, or ``None`` when they do not cover it (see
        :func:`kgai_tui.core.model.moments.moment_keys`)."""
        from kgai_tui.core.model.moments import moment_keys

        try:
            return moment_keys(self.db, cut)
        except _FAILURES:
            return None

    def moment_probe(self, cut: int) -> MomentProbe | None:
        """Point questions about ``cut`` (a decision in force, an element present),
        or ``None`` when the moments do not cover it (see
        :mod:`kgai_tui.core.model.moment_probe`)."""
        from kgai_tui.core.model.moment_probe import moment_probe

        try:
            return moment_probe(self.db, cut)
        except _FAILURES:
            return None

    def moments_whole(self) -> bool:
        """Whether the model's moments answer every cut, so a read at a moment has
        nothing to keep (a report at a past cut rewrote them all each time)."""
        from kgai_tui.core.model.moments import moments_meta

        try:
            meta = moments_meta(self.db)
        except _FAILURES:
            return False
        return meta is not None and not meta["gaps"]

    def keep_moments(self, index: TimeIndex, prints: list[Any]) -> bool:
        """Store the moments of ``index`` in the model, when the model holds the
        log it was made from (whose shards have ``prints``); never waits for the
        model's lock. Closes this handle first: its snapshot would hold the
        checkpoint back."""
        from kgai_tui.core.model.moments_write import moments_of, write_moments

        try:
            moments = moments_of(index)  # it may read this model's rows
        finally:
            self.close()
        try:
            return write_moments(self.model_path, moments, prints)
        except OSError:
            return False

    def time_index(self) -> TimeIndex:
        """The time index of the log this model holds, sharing this model's
        decision rows: as saved (extended with the lines appended since), else
        built from a replay of the log and saved for the next read (see
        :func:`~kgai_tui.core.model.history.time_index_beside`)."""
        from kgai_tui.core.model.history import time_index_beside

        shards: list[list[object]] = [
            [s["print"], s["events"]] for s in self.shard_states
        ]
        return time_index_beside(self.root, self.model_path, shards, self.projection)

    def close(self) -> None:
        """End the read transaction and close the model."""
        with contextlib.suppress(sqlite3.Error):
            self.db.close()


def _stored_prints(db: sqlite3.Connection, root: Path, path: Path) -> list[ShardPrint]:
    if read_meta(db, "header") != header(root):
        raise ModelCorruptError("built for another format, version or store")
    check_recall(path, read_meta(db, "recall"))
    return [ShardPrint.from_list(s["print"]) for s in read_meta(db, "shards")]


class ModelUnavailableError(OSError):
    """The model could not be built or extended here (a full disk, a file size
    limit, a read-only cache directory): the caller reads the log without it."""


def open_model(
    root: Path,
    cache_base: Path | None = None,
    *,
    background: bool = False,
    staged: Staged | None = None,
    then: Callable[[Engine], object] | None = None,
    any_thread: bool = False,
    replayed: Callable[[Engine], object] | None = None,
) -> ModelEngine:
    """Open the store at ``root`` through its read model (built or extended if needed).

    With ``background`` (a command-line read, no other thread running), a model that
    must be built from scratch is written by a detached child process while this
    one answers from the replay it just made: the first answer costs the replay,
    not the replay plus the model. The value returned is then that replayed
    :class:`~kgai_tui.core.engine.engine.Engine` (same read interface, ``how`` is
    "cold").

    ``staged``: a write session's overlay holding the lines it just appended (see
    :func:`~kgai_tui.core.model.update.extend_model`), written as the extension.

    ``then``: more work for that detached child, with the replay, once the model,
    its moments and the slider's history are written (the command line builds
    the search index there, which would otherwise replay the whole store again on
    the first search).

    ``replayed``: given the replay a build is made from, as soon as it is made and
    before the model is written here (the explorer shows it meanwhile and saves
    the slider's history from it after).

    ``any_thread``: the connection may be read from any thread (the explorer).

    Raises:
        StoreNotFoundError: ``root/log`` is not a directory.
        OSError: the model cannot be written (the caller reads without it).
    """
    try:
        return _open_model(
            root, cache_base, background, staged, then, any_thread, replayed
        )
    except (sqlite3.Error, UnicodeError, ModelCorruptError) as exc:
        raise ModelUnavailableError(f"the read model is unavailable: {exc}") from exc


def peek_model(root: Path, cache_base: Path | None = None) -> ModelEngine | None:
    """The model of the store at ``root`` when it holds the log exactly as it is now,
    else ``None``: never built, extended, locked or written here.

    The explorer paints its first view from this while the whole store loads; the
    connection may be read from any thread (the UI thread reads the rows of the
    element the user selects).
    """
    log_dir = root / "log"
    path = model_path(root, cache_base)
    if not log_dir.is_dir() or not sealed(path):
        return None
    try:
        listing = list_log(log_dir)
        now = prints_from_disk(log_dir, listing.names, cache_base)
        return _read(root, path, listing.refused, now, "warm", any_thread=True)
    except (OSError, UnicodeError):
        return None


def open_model_if_current(
    root: Path, cache_base: Path | None = None
) -> ModelEngine | None:
    """The model when it holds the log as it is, extended in place first when the
    shards only grew (a few lines another writer appended); ``None`` when only a
    rebuild would bring it up to date, or it cannot be read (a search then
    builds its index from a replay). The connection may be read from any thread
    (see :func:`peek_model`)."""
    found = peek_model(root, cache_base)
    if found is not None:
        return found
    path = model_path(root, cache_base)
    if not sealed(path):
        return None
    try:
        done = _bring_up_to_date(root, path, rebuild=False)
    except (OSError, UnicodeError, *_FAILURES):
        return None
    return peek_model(root, cache_base) if done in ("warm", "append") else None


def _read(
    root: Path,
    path: Path,
    refused: Sequence[LineProblem],
    now: list[ShardPrint],
    how: str,
    *,
    as_it_is: bool = False,
    any_thread: bool = False,
) -> ModelEngine | None:
    """A read of the sealed model when it holds the log as it is ``now`` (or, with
    ``as_it_is``, whatever prefix it holds), else ``None``.

    Raises:
        ModelCorruptError: with ``as_it_is``, saying why the model cannot be read.
    """
    if not sealed(path):
        if as_it_is:
            raise ModelCorruptError("its seal does not match the model file")
        return None
    db: sqlite3.Connection | None = None
    try:
        db = connect_model(path, write=False, any_thread=any_thread)
        db.execute("BEGIN")
        change = compare_prints(_stored_prints(db, root, path), now, root / "log")
        if change == "same" or as_it_is:
            return ModelEngine(root, db, how, list(refused), path)
    except _FAILURES as exc:
        if db is not None:
            db.close()
        if as_it_is:
            if isinstance(exc, ModelCorruptError):
                raise
            raise ModelCorruptError(f"{type(exc).__name__}: {exc}") from exc
        return None
    if db is not None:
        db.close()
    return None


def _open_model(
    root: Path,
    cache_base: Path | None,
    background: bool,
    staged: Staged | None,
    then: Callable[[Engine], object] | None = None,
    any_thread: bool = False,
    replayed: Callable[[Engine], object] | None = None,
) -> ModelEngine:
    log_dir = root / "log"
    if not log_dir.is_dir():
        raise StoreNotFoundError(f"no kgai store at {root} (no log/ directory)")
    path = model_path(root, cache_base)
    how = "warm"
    seen: _Seen = []
    for _ in range(_ROUNDS):
        if seen:  # the log as the update saw it, under the lock: no third print
            listing, now = seen.pop()
        else:
            listing = list_log(log_dir)
            now = prints_from_disk(log_dir, listing.names, cache_base)
        read = _read(root, path, listing.refused, now, how, any_thread=any_thread)
        if read is not None:
            return read
        done = _bring_up_to_date(
            root, path, background, staged, then, replayed=replayed, seen=seen
        )
        if not isinstance(done, str):
            return done  # type: ignore[return-value]  # the replay answers this once
        how = done
    # A writer kept appending faster than we caught up: answer the prefix the model
    # holds. Under the model lock, so no writer is between its rows and its seal
    # (read outside it, a seal being rewritten looks like no seal at all).
    listing = list_log(log_dir)
    now = prints_from_disk(log_dir, listing.names, cache_base)
    try:
        with model_lock(path):
            read = _read(
                root,
                path,
                listing.refused,
                now,
                how,
                as_it_is=True,
                any_thread=any_thread,
            )
    except ModelCorruptError as exc:
        raise ModelCorruptError(
            f"it could not be brought up to date: {exc.reason}"
        ) from exc
    assert read is not None  # as_it_is raises instead
    return read


#: The log an update left the model holding: its listing and prints.
_Seen = list[tuple[LogListing, list[ShardPrint]]]


def _bring_up_to_date(
    root: Path,
    path: Path,
    background: bool = False,
    staged: Staged | None = None,
    then: Callable[[Engine], object] | None = None,
    *,
    rebuild: bool = True,
    replayed: Callable[[Engine], object] | None = None,
    seen: _Seen | None = None,
) -> str | Engine:
    """Under the model lock: extend the model if it can be, else rebuild it (or
    return the replay and rebuild it in the background, see :func:`open_model`);
    without ``rebuild``, "stale" instead of a rebuild. ``seen`` gets the log the
    model then holds, for a read of it that need not print the shards again. A
    ``background`` update leaves its housekeeping until the lock is let go
    (:mod:`~kgai_tui.core.model.tidy`)."""
    from kgai_tui.core.engine.open import replay_log
    from kgai_tui.core.model.tidy import tidy_after, tidy_due
    from kgai_tui.core.model.update import extend_if_cheaper

    log_dir, seen = root / "log", [] if seen is None else seen
    # The lock is let go (exited first) before ``later`` runs.
    with contextlib.ExitStack() as later, model_lock(path):
        # The log as it is now: another process may have extended the model past
        # the listing taken before the lock (comparing with that one would look like
        # a log that shrank, and rebuild for nothing).
        listing = list_log(log_dir)
        # The model lives in <cache base>/<store key>/: its prints keep beside it.
        now = prints_from_disk(log_dir, listing.names, path.parent.parent)
        remove_stale_temporaries(path)
        if sealed(path):
            db = None
            try:
                db = connect_model(path, write=True)
                stored = _stored_prints(db, root, path)
                change = compare_prints(stored, now, log_dir)
                if change == "same":  # another process did it while we waited
                    seen.append((listing, now))
                    return "warm"
                if change == "append" and extend_if_cheaper(
                    db, path, log_dir, stored, now, staged, tidy_now=not background
                ):
                    # Fold the log into the file when no reader holds it back
                    # (never waiting for one); sealed below, as it is then.
                    fold_log(db)
                    seen.append((listing, now))
                    if background and tidy_due(db):
                        later.callback(tidy_after, path)
                    return "append"
            except _FAILURES:
                pass
            finally:
                if db is not None:
                    db.close()
                    # Sealed when we took the lock, so every byte since is ours: a
                    # connection that only read, closing last, folds and removes a
                    # write-ahead log a reader held back; the seal it broke sent
                    # the next read to rebuild (or, with a writer appending, fail).
                    with contextlib.suppress(OSError):
                        write_seal(path)
        if not rebuild:
            return "stale"
        remove_legacy(root, path.parent.parent)
        engine = replay_log(root)
        if replayed is not None:
            replayed(engine)
        after = partial(_after_build, path=path, then=then)
        if background and build_detached(engine, path, after):
            return engine
        build_now(engine, path)
        return "cold"


def _after_build(
    engine: Engine, *, path: Path, then: Callable[[Engine], object] | None
) -> None:
    """A detached build's work once the model and moments are stored: the caller's
    ``then`` (the command line builds the search index), then the per-author steps
    of ``people --as-of`` when the model holds the log as it is and has none (else
    the first such read builds them: 49 s at 10M decisions, 4.6 s at 1M)."""
    from kgai_tui.core.model import people_steps as ps

    if then is not None:
        then(engine)
    model = None if engine.root is None else peek_model(engine.root, path.parent.parent)
    if model is None:
        return
    try:
        if not ps.people_steps_stored(db := model.db):
            steps, shards = ps.people_steps_of(db), model.shard_states
            ps.save_people_steps(path, shards, steps, db, patience=DETACHED_PATIENCE)
    except _FAILURES:
        pass  # the first people --as-of builds them, as before
    finally:
        model.close()
