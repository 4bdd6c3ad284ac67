"""``kgai-tui sync``: share a store's shards through git, as ``kg sync`` does (spec 7, 7.1).

Under the store lock: re-write the scaffold (refusing when ``.gitignore`` or
``.gitattributes`` is not kgai's, because this transport commits the store
directory), then commit, fetch, take the new lines of foreign shards from the
remote's tree (never a checkout or a merge of its files), record the merge and push.
Never a rebase, never a force push. A remote can only ever add verified lines to
other installs' shards; every other path it holds is refused and reported
(``sync.refused`` and ``sync.detail``). Being offline (fetch or push failing) is
reported as a ``detail`` with ``ok: true``. Afterwards the log is replayed, an
existing search index catches up, and the conflicts after the sync are reported.

The git steps themselves are in :mod:`kgai_tui.sync.git`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kgai_tui.core import clock
from kgai_tui.core.errors import KgaiError, RefusedError, UsageError
from kgai_tui.core.gosem.gotext import parse_rfc3339
from kgai_tui.core.model.read import read_store
from kgai_tui.core.reads.health import redact
from kgai_tui.core.reads.kg import conflict_groups
from kgai_tui.core.reads.store import Store
from kgai_tui.core.safe_text import one_line
from kgai_tui.core.store.discovery import project_root
from kgai_tui.core.store.scaffold import (
    GITATTRIBUTES_MARKER,
    GITIGNORE_MARKER,
    ensure_git,
    ensure_scaffold,
)
from kgai_tui.core.store.settings import global_remote
from kgai_tui.core.wire.model import Event
from kgai_tui.core.write.session_engine import release_engine
from kgai_tui.core.write.writes import Notice, WriteSession, write_session
from kgai_tui.sync.git import GitOutcome, git_sync
from kgai_tui.sync.refusal import refusal_summary
from kgai_tui.sync.retired import Reemit

__all__ = ["SyncReport", "effective_remote", "render_sync", "sync_store"]


#: git remote helpers that run a command or use an inherited descriptor (an
#: ``fd::`` fetch waits for its whole timeout); refused before git starts.
_COMMAND_HELPERS: Final = frozenset(("ext", "fd"))


def effective_remote(explicit: str | None, session: str) -> str:
    """Pick the remote URL (spec 7.6): ``--remote``, then session, then global.

    ``none`` means disabled (``""``); ``{project}`` becomes the project's directory
    name. ``.kgairc`` is never consulted: a repository must not choose where its
    decisions are uploaded (spec 10).

    Raises:
        UsageError: the URL starts with ``-`` (git would read it as an option) or
            uses git's ``ext::`` or ``fd::`` transport.
    """
    value = explicit if explicit is not None else (session or global_remote())
    value = value.strip()
    if value == "none":
        return ""
    if "{project}" in value:
        value = value.replace("{project}", project_root().name)
    if value.startswith("-"):
        raise UsageError(f"refusing remote {value!r}: it starts with '-'")
    helper = value.split("::", 1)[0].lower() if "::" in value else ""
    if helper in _COMMAND_HELPERS:
        raise UsageError(
            f"refusing remote {redact(value)!r}: git's {helper}:: transport runs a "
            "command or talks over a file descriptor, never a sync target"
        )
    if value.startswith(("s3://", "kgai://")):
        raise UsageError(
            f"kgai-tui syncs through git only; {redact(value)} needs the kg engine "
            "(`kg sync`)"
        )
    return value


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did, and the conflicts afterwards."""

    applied: int
    conflicts: list[dict[str, Any]]
    new_conflicts: list[dict[str, Any]]
    outcome: GitOutcome
    remote: str
    notices: list[str] = field(default_factory=list)

    def to_obj(self) -> dict[str, Any]:
        """The ``kg sync`` JSON shape: a Go map (sorted keys) around the sync struct."""
        sync: dict[str, Any] = {
            "pulled": self.outcome.pulled,
            "pushed": self.outcome.pushed,
        }
        if self.remote:
            sync["remote"] = redact(self.remote)
        detail = "; ".join(
            part
            for part in (
                self.outcome.detail,
                refusal_summary(self.outcome.refused, self.outcome.refused_total),
            )
            if part
        )
        if detail:
            sync["detail"] = detail
        if self.outcome.refused:
            sync["refused"] = [r.to_obj() for r in self.outcome.refused]
        return {
            "applied": self.applied,
            "conflict_count": len(self.conflicts),
            "conflicts": self.conflicts or None,
            "ok": True,
            "sync": sync,
        }


_WHY = (
    "this transport commits the store directory, and ignore rules kgai did not "
    "write could publish kg.config.json; nothing was committed or pushed"
)


def _check_ownership(root: Path) -> None:
    """Refuse, before any git command, when a scaffold file is someone else's."""
    for name, marker in (
        (".gitignore", GITIGNORE_MARKER),
        (".gitattributes", GITATTRIBUTES_MARKER),
    ):
        try:
            text = (root / name).read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise RefusedError(
                f"refusing to sync: cannot read {root / name} "
                f"({exc.strerror or exc}) — {_WHY}"
            ) from exc
        if marker not in text:
            raise RefusedError(
                f"refusing to sync: {root / name} was not written by kgai (it lacks "
                f"{marker!r}) — {_WHY}; move it away or add kgai's rules, then sync "
                "again"
            )


def _ensure_scaffold(root: Path) -> None:
    _check_ownership(root)
    try:
        ensure_scaffold(root)
    except KgaiError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "failed"
        raise RefusedError(f"refusing to sync: {first} — {_WHY}") from exc


def session_reemit(session: WriteSession) -> Reemit:
    """Record orphaned events again under the session's install (kg's ``ReEmit``):
    same decision and time, this install's next lamports and hash chain."""

    def reemit(events: Sequence[Event]) -> int:
        for event in events:
            assert event.decision is not None
            session.stage(
                event.decision, parse_rfc3339(event.recorded_at) or clock.now()
            )
        session.commit()
        return len(events)

    return reemit


def sync_store(
    root: Path,
    remote: str | None = None,
    *,
    lock_timeout: float | None = None,
    on_notice: Notice | None = None,
) -> SyncReport:
    """Sync the store at ``root`` through git with its effective remote.

    Args:
        root: the store directory (it must exist; sync never creates one).
        remote: ``--remote``; ``None`` uses ``kg.config.json``, then the global config.
        lock_timeout: bound on the wait for the store lock (default 10 s).
        on_notice: receives notices (a repaired torn tail, a rotated identity).

    Raises:
        StoreNotFoundError: no store at ``root``.
        RefusedError: the scaffold is not kgai's (nothing committed or pushed).
        UsageError: an unusable remote URL.
        SyncError: git is missing or a git step failed.
        LockTimeoutError, WriteError: the store could not be locked or written.
    """
    notices: list[str] = []

    def note(message: str) -> None:
        notices.append(message)
        if on_notice is not None:
            on_notice(message)

    with write_session(root, lock_timeout=lock_timeout, on_notice=note) as session:
        before = session.engine
        # Counts, not sets: the session's engine may be the read model, which keeps
        # no set of applied hashes; a sync only appends, so the difference is what
        # it added.
        applied_before = before.projection.applied_count
        old = set(before.projection.contested)
        url = effective_remote(remote, session.config.remote)
        _ensure_scaffold(root)
        ensure_git(root)
        cfg = session.config
        outcome = git_sync(
            root,
            url,
            actor=cfg.actor,
            ours=frozenset((cfg.install_id,)),
            retired=frozenset(cfg.retired_installs),
            reemit=session_reemit(session),
            on_notice=note,
        )
        # Let go of the model before extending it (a read connection closed after
        # the extension would change the files it sealed).
        release_engine(before)
        after = read_store(root)  # the model extended with what was pulled
    try:
        applied = after.projection.applied_count - applied_before
        if applied:
            _catch_up_search(after)
        groups = conflict_groups(after.projection)
    finally:
        release_engine(after)
    fresh = [g for g in groups if g["element_id"] not in old]
    return SyncReport(applied, groups, fresh, outcome, url, notices)


def _catch_up_search(opened: Store) -> None:
    """Bring an existing search index up to date with what was pulled (best effort):
    through the read model when the store was opened through it.

    A store nobody has searched yet gets its index on the first search instead;
    a failure here only means the next search does the work.
    """
    from kgai_tui.core.search.cache import cache_dir_for
    from kgai_tui.core.search.index import SearchIndex
    from kgai_tui.core.search.through_model import index_of_model

    root, kept, whole = opened.root, opened.kept, opened.replayed
    if root is None or not cache_dir_for(root).exists():
        return
    with contextlib.suppress(KgaiError, OSError, ValueError):
        if kept is not None:
            index_of_model(kept, root)
        elif whole is not None:
            SearchIndex.for_engine(whole)


_SHOWN_REFUSALS: Final = 10


def render_sync(report: SyncReport) -> str:
    """The human rendering of a sync (spec 11.5): outcome, arrows, conflicts.

    Teammates' titles and names, and git's messages (a server can send text), pass
    through :func:`one_line`, so nothing from outside can drive the terminal.
    """
    out = report.outcome
    where = one_line(redact(report.remote)) if report.remote else "no remote"
    if out.detail:
        lines = [f"○ {one_line(out.detail)}"]
    elif out.pulled or out.committed:
        lines = [f"✓ synced with {where}"]
    else:
        lines = [f"✓ up to date with {where}"]
    if report.applied:
        lines.append(f"  ↓ {report.applied} new event(s) from teammates")
    if out.committed:
        lines.append("  ↑ committed this install's new events")
    if out.pushed:
        lines.append(f"  ↑ pushed to {where}")
    for refusal in out.refused[:_SHOWN_REFUSALS]:
        lines.append(f"⚠ refused from the remote: {refusal.path}: {refusal.reason}")
    more = out.refused_total - min(len(out.refused), _SHOWN_REFUSALS)
    if more > 0:
        lines.append(f"⚠ … and {more} more refused path(s) (kgai-tui sync --json)")
    for group in report.new_conflicts:
        titles = " / ".join(f"“{one_line(t)}”" for t in group["titles"])
        label = one_line(f"{group['kind']}:{group['name']}")
        lines.append(
            f"⚠ new conflict on {label}: {titles} "
            f"(kgai-tui resolve-conflict {one_line(group['element_id'])} --keep <id>)"
        )
    count = len(report.conflicts)
    if count:
        lines.append(f"⚠ {count} element(s) decided two ways (kgai-tui conflicts)")
    else:
        lines.append("✓ no conflicts")
    return "\n".join(lines)
