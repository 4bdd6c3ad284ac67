"""The write path as a library: ``init_store``, ``record`` and ``resolve_conflict``.

Each write takes the store lock, re-reads ``kg.config.json`` (applying the machine
binding), repairs a torn tail of this install's shard, replays the log, and then
validates and stamps every event of the request before appending any of them: bad
input writes nothing (a deliberate fix of spec 13 item 10). Events get
``lamport = 1 + max(tail lamport of every shard)`` and chain to this shard's tail.

The terminal app, the CLI and the MCP server all call these functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core import clock
from kgai_tui.core.errors import (
    RefusedError,
    StoreNotFoundError,
    UsageError,
    write_error,
)
from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.interrupts import Interrupted
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.config_file import (
    StoreConfig,
    bind_machine,
    ensure_identity,
    load_config,
    save_config,
)
from kgai_tui.core.store.install_ids import check_install_id
from kgai_tui.core.store.scaffold import (
    check_scaffold_ownership,
    ensure_git,
    ensure_project_gitignore,
    ensure_scaffold,
)
from kgai_tui.core.wire.codec import compute_hash, marshal_event
from kgai_tui.core.wire.limits import MAX_LINE_BYTES
from kgai_tui.core.wire.model import Decision, Event
from kgai_tui.core.write.appender import append_lines, repair_torn_tail
from kgai_tui.core.write.ingest import (
    BuiltDecision,
    build_decision,
    parse_decision_date,
    short_title,
)
from kgai_tui.core.write.ingest_input import parse_ingest
from kgai_tui.core.write.lock import store_lock
from kgai_tui.core.write.session_engine import (
    refresh_model,
    release_engine,
    session_engine,
)

if TYPE_CHECKING:
    from kgai_tui.core.write.session_engine import SessionEngine

Notice = Callable[[str], None]

#: Larger input is refused before it is parsed (a shard line holds at most 16 MiB).
MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
#: Entries a directory may already hold for ``init`` to make it a store (spec 1.2).
_STORE_ENTRIES: Final = (
    "log",
    ".kg.lock",
    "kg.config.json",
    ".kg.config.json.tmp",
    ".gitignore",
    ".gitattributes",
    ".git",
    ".autosync-stamp",
    "last-autosync.json",
)


def ignore_notice(_: str) -> None:
    return None


def own_shard(root: Path, install_id: str) -> Path:
    """The shard this install appends to: ``<root>/log/<install_id>.ndjson``.

    The id is checked again here, where it becomes a path, whatever checked it
    before: no id can name a file outside ``log/``.

    Raises:
        ConfigError: ``install_id`` is not of the install-id shape.
    """
    check_install_id(install_id, f"{root / 'kg.config.json'}: install_id")
    return root / "log" / f"{install_id}.ndjson"


# ---------------------------------------------------------------------- session


class WriteSession:
    """The state of one locked write: config, replayed store, next lamport, tail.

    ``stage`` stamps an event and applies it to the projection at once, so later
    decisions of the same request see earlier ones; ``commit`` appends everything
    staged in one all-or-nothing batch.
    """

    def __init__(self, root: Path, config: StoreConfig, engine: SessionEngine) -> None:
        """Derive the lamport clock and the parent from the log as read."""
        self.root = root
        self.config = config
        self.engine = engine
        self.shard = own_shard(root, config.install_id)
        self.shard_name = self.shard.name
        self.staged: list[tuple[Event, bytes]] = []
        #: Set once the staged events are durable (what an interruption reports).
        self.committed = False
        # Go's NextLamport reads the last line of each shard; a torn or malformed
        # last line is skipped here instead of blocking every write (spec 13.9).
        self.next_lamport = 1 + engine.max_tail_lamport()
        own = engine.tail_of(self.shard_name)
        self.tail_hash = None if own is None else own[1]

    @property
    def projection(self) -> Projection:
        """The projection, with every staged event applied."""
        return self.engine.projection

    def stage(self, decision: Decision, recorded_at: datetime) -> Event:
        """Stamp a decision into the next event of this shard and project it.

        Raises:
            UsageError: the event line would exceed the 16 MiB every reader accepts.
        """
        event = Event(
            hash="",
            op="assert",
            actor=self.config.actor,
            install_id=self.config.install_id,
            lamport=self.next_lamport,
            recorded_at=format_rfc3339(recorded_at),
            parents=None if self.tail_hash is None else (self.tail_hash,),
            decision=decision,
        )
        event = replace(event, hash=compute_hash(event))
        line = marshal_event(event)
        if len(line) + 1 > MAX_LINE_BYTES:
            raise UsageError(
                f"decision {short_title(decision.title)} would be a {len(line)}-byte "
                "line; shard lines must stay under 16 MiB (no engine reads longer ones)"
            )
        self.staged.append((event, line))
        self.next_lamport += 1
        self.tail_hash = event.hash
        self.engine.projection.apply(event)
        return event

    def commit(self) -> None:
        """Append every staged event durably (all or nothing).

        Raises:
            WriteError: the shard could not be written; it is as it was.
            Interrupted: a signal arrived first; the shard is as it was.
        """
        append_lines(self.shard, [line for _, line in self.staged])
        self.committed = True


def _require_store(root: Path) -> None:
    if not (root / "log").is_dir():
        raise StoreNotFoundError(
            f"no kgai store at {root}; run `kgai-tui init --store {root}` first "
            "(writes never create a store)"
        )


def _locked_config(root: Path, on_notice: Notice) -> StoreConfig:
    """Re-read the config under the lock, complete it and apply the machine binding."""
    loaded = load_config(root)
    cfg = (
        loaded if loaded is not None and loaded.install_id else ensure_identity(loaded)
    )
    cfg, notice = bind_machine(cfg)
    if notice:
        on_notice(notice)
    if cfg != loaded:
        save_config(root, cfg)
    return cfg


@contextmanager
def write_session(
    root: Path,
    *,
    dry_run: bool = False,
    lock_timeout: float | None = None,
    on_notice: Notice = ignore_notice,
) -> Iterator[WriteSession]:
    """Open a store for writing: lock, config, torn-tail repair, replay.

    With ``dry_run`` nothing is locked, repaired or saved; the session can stage
    events (to report what would happen) but must not commit.

    Raises:
        StoreNotFoundError: ``root`` holds no store (nothing is created).
        ConfigError: ``kg.config.json`` is unreadable or holds a bad install id.
        LockTimeoutError: another writer held the lock for the whole wait.
        WriteError: the store cannot be written.
    """
    _require_store(root)
    if dry_run:
        cfg = ensure_identity(load_config(root))
        session = WriteSession(root, cfg, session_engine(root))
        try:
            yield session
        finally:
            release_engine(session.engine)
        return
    with store_lock(root, lock_timeout):
        cfg = _locked_config(root, on_notice)
        repaired = repair_torn_tail(own_shard(root, cfg.install_id))
        if repaired:
            on_notice(repaired)
        session = WriteSession(root, cfg, session_engine(root))
        try:
            yield session
            if session.committed:  # while the session's model rows are still open
                refresh_model(root, session.engine)
        finally:
            release_engine(session.engine)


def stale_cache_notice(root: Path, on_notice: Notice) -> None:
    # The Go engine trusts its graph.kuzu cache and never re-reads the log (spec 12).
    if (root / "graph.kuzu").exists():
        on_notice("the kg engine's cache does not see these events until `kg rebuild`")


# ---------------------------------------------------------------------- init


@dataclass(frozen=True, slots=True)
class InitResult:
    """What ``init_store`` did."""

    root: Path
    install_id: str
    actor: str
    remote: str
    created: bool
    written: tuple[str, ...]
    notices: tuple[str, ...]

    def to_obj(self) -> dict[str, Any]:
        """The ``kg init`` JSON shape (a Go map: sorted keys)."""
        return {
            "actor": self.actor,
            "install_id": self.install_id,
            "ok": True,
            "remote": self.remote,
            "root": str(self.root),
        }


def _check_init_target(root: Path) -> None:
    """Refuse to turn a directory of unrelated files into a store (spec 1.8)."""
    if root.resolve() == Path.home().resolve():
        raise RefusedError(f"refusing to make the home directory {root} a store")
    if not root.is_dir() or (root / "kg.config.json").exists():
        return
    foreign = sorted(
        name
        for name in os.listdir(root)
        if name not in _STORE_ENTRIES
        and not name.startswith("graph.kuzu")
        and not name.endswith(".so")
    )
    if foreign:
        raise RefusedError(
            f"refusing to make {root} a store: it already holds other files "
            f"({', '.join(foreign[:3])}{'…' if len(foreign) > 3 else ''}); "
            "choose an empty directory or an existing store"
        )


def init_store(
    root: Path,
    actor: str | None = None,
    *,
    remote: str = "",
    lock_timeout: float | None = None,
) -> InitResult:
    """Create the store at ``root``, or bring an existing one up to date (spec 1.2-1.4).

    Idempotent: a second run changes nothing unless ``actor`` or ``remote`` differ.
    ``remote`` is written into the session layer as ``kg init --remote`` writes it.
    Scaffold files kgai did not write are never overwritten.

    Raises:
        RefusedError: ``.gitignore``/``.gitattributes`` exist without kgai's marker,
            or ``root`` holds unrelated files.
        WriteError: the store cannot be written.
        LockTimeoutError: another writer held the lock for the whole wait.
    """
    _check_init_target(root)
    check_scaffold_ownership(root)  # before anything is created
    created = not (root / "log").is_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / "log").mkdir(mode=0o755, exist_ok=True)
    except OSError as exc:
        raise write_error(exc, f"the store at {root}") from exc
    notices: list[str] = []
    with store_lock(root, lock_timeout):
        loaded = load_config(root)
        cfg = ensure_identity(loaded, actor)
        if remote:
            cfg = replace(cfg, remote=remote)
        cfg, notice = bind_machine(cfg)
        if notice:
            notices.append(notice)
        if cfg != loaded:
            save_config(root, cfg)
        written = ensure_scaffold(root)
        if ensure_git(root):
            written.append(".git")
        if ensure_project_gitignore(root):
            written.append("project .gitignore")
    if created:
        # kg reads its graph.kuzu only; with none, its first read creates an EMPTY
        # one (engine.openRead) and never replays the log (docs/config.md).
        notices.append(
            "for kg (the Go engine) on this store: run `kg rebuild` once before its "
            "first read, or it starts from an empty graph.kuzu"
        )
    return InitResult(
        root=root.absolute(),
        install_id=cfg.install_id,
        actor=cfg.actor,
        remote=cfg.remote,
        created=created,
        written=tuple(written),
        notices=tuple(notices),
    )


# ---------------------------------------------------------------------- record


def decision_entry(
    built: BuiltDecision, event: Event | None, *, dry_run: bool
) -> dict[str, Any]:
    """One ``decisions[]`` entry of the ingest result, in struct order."""
    d = built.decision
    out: dict[str, Any] = {"id": d.id, "title": d.title}
    if event is not None and not dry_run:
        out["event_hash"] = event.hash
        out["lamport"] = event.lamport
    out["shapes"] = list(d.shapes)
    if d.supersedes:
        out["supersedes"] = list(d.supersedes)
    return out


def ingest_result(
    entries: list[dict[str, Any]],
    elements: dict[str, str],
    warnings: list[str],
    *,
    dry_run: bool,
) -> dict[str, Any]:
    """The ``IngestResult`` shape of spec 5.5 (struct order; elements sorted)."""
    out: dict[str, Any] = {
        "ok": True,
        "dry_run": dry_run,
        "decisions": entries,
        "elements": dict(sorted(elements.items())),
    }
    if warnings:
        out["warnings"] = warnings
    return out


def record(
    root: Path,
    payload: bytes | str,
    *,
    dry_run: bool = False,
    lock_timeout: float | None = None,
    on_notice: Notice = ignore_notice,
) -> dict[str, Any]:
    """Record the decisions of a ``kg ingest`` document; return the 5.5 result.

    Every decision is built, dated and checked before the first byte is written,
    so bad input leaves the log byte-identical. A decision whose id is already in
    the store is reported with a warning and not written again. A dry run reports
    exactly what a real run would write (decisions later in the batch see earlier
    ones), without locking or writing.

    Raises:
        UsageError: malformed input, a bad decision or date, input over 64 MiB.
        StoreNotFoundError: no store at ``root`` (none is created).
        ConfigError: ``kg.config.json`` is unreadable or holds a bad install id
            (exit 1); nothing is written.
        LockTimeoutError: another writer held the lock for the whole wait.
        WriteError: the shard cannot be written; nothing was written.
        Interrupted: SIGINT, SIGTERM or SIGHUP stopped it (under
            :func:`kgai_tui.core.interrupts.raising`, or between lines of the
            batch); its ``written`` says whether the batch is whole or absent.
    """
    sessions: list[WriteSession] = []
    try:
        return _record(root, payload, dry_run, lock_timeout, on_notice, sessions)
    except Interrupted as exc:
        raise exc.settled(any(s.committed for s in sessions)) from None


def _record(
    root: Path,
    payload: bytes | str,
    dry_run: bool,
    lock_timeout: float | None,
    on_notice: Notice,
    sessions: list[WriteSession],
) -> dict[str, Any]:
    """The body of :func:`record`; ``sessions`` gets the session once it is open."""
    if len(payload) > MAX_INPUT_BYTES:
        raise UsageError(f"input is larger than {MAX_INPUT_BYTES >> 20} MiB; refusing")
    _require_store(root)
    inputs = parse_ingest(payload)
    entries: list[dict[str, Any]] = []
    elements: dict[str, str] = {}
    warnings: list[str] = []
    with write_session(
        root, dry_run=dry_run, lock_timeout=lock_timeout, on_notice=on_notice
    ) as session:
        sessions.append(session)
        for inp in inputs:
            built = build_decision(inp, session.projection, session.config.actor)
            elements.update(built.elements)
            warnings.extend(built.warnings)
            if built.decision.id in session.projection.dec_index:
                warnings.append(f"decision already recorded (no-op): {inp.title}")
                entries.append(decision_entry(built, None, dry_run=dry_run))
                continue
            moment = parse_decision_date(inp.title, inp.date) or clock.now()
            event = session.stage(built.decision, moment)
            entries.append(decision_entry(built, event, dry_run=dry_run))
        if not dry_run:
            session.commit()
    if not dry_run and session.staged:
        stale_cache_notice(root, on_notice)
    return ingest_result(entries, elements, warnings, dry_run=dry_run)
