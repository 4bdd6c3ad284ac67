"""Sync from the explorer: the palette's "Sync with the remote", the header's remote.

A mixin of :class:`~kgai_tui.ui.app.KgaiApp`: it runs ``kgai-tui sync``'s sync in
a worker, shows it in the header while it runs, says how it went in one
notification, and has the app read the store again.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App

from kgai_tui.ui.safe_text import one_line, visible
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.widgets.header import StoreHeader

if TYPE_CHECKING:
    from kgai_tui.sync.status import SyncStatus
    from kgai_tui.sync.sync import SyncReport

NO_REMOTE_HELP = (
    "No remote configured, so there is nothing to sync with. Set one with "
    "`kgai-tui remote URL` (a git URL or s3://bucket/prefix), then sync again."
)


class SyncActions(App[None]):
    """The app's sync: the action, its worker, and the header's remote line."""

    root: Path
    sync_status: SyncStatus | None
    #: The last sync made by this explorer: (the remote, redacted; when).
    synced_at: tuple[str, datetime] | None
    _syncing: bool

    def _load(self, keep_moment: bool) -> None:
        """Read the store again (the app's)."""
        raise NotImplementedError

    def action_sync(self) -> None:
        """Sync with the store's remote (git or S3, as ``kgai-tui sync``), in a worker."""
        if self._syncing:
            self.notify("A sync is already running.", severity="warning", markup=False)
            return
        self._syncing = True
        self._sync()

    @thread_worker("sync", exclusive=False)
    def _sync(self) -> None:
        from kgai_tui.core.reads.health import redact
        from kgai_tui.sync.status import effective_url, run_sync

        try:
            url = effective_url(self.root)
            if not url:
                self.call_from_thread(self._sync_ended, None, NO_REMOTE_HELP)
                return
            self.call_from_thread(self._sync_started, redact(url))
            report = run_sync(self.root, on_notice=self._sync_notice)
        except Exception as exc:  # every failure is one line, never a traceback
            message = str(exc).strip() or type(exc).__name__
            self.call_from_thread(self._sync_ended, None, message)
            return
        self.call_from_thread(self._sync_ended, report, "")

    def _sync_notice(self, message: str) -> None:
        """A notice of the sync (a repaired tail, a rotated identity), from its thread."""
        self.call_from_thread(
            self.notify, one_line(message), title="Sync", markup=False
        )

    def _sync_started(self, remote: str) -> None:
        self.query_one(StoreHeader).start_syncing(remote)

    def _sync_ended(self, report: SyncReport | None, error: str) -> None:
        """Show the outcome (or the one-line error) and re-read the store."""
        from kgai_tui.core.clock import now
        from kgai_tui.core.reads.health import redact
        from kgai_tui.sync.sync import render_sync

        self._syncing = False
        self.query_one(StoreHeader).sync_ended()
        if report is None:
            self.notify(
                one_line(error),
                title="Sync",
                severity="warning" if error == NO_REMOTE_HELP else "error",
                markup=False,
                timeout=10,
            )
            self._show_remote()
            return
        if not report.outcome.detail:
            self.synced_at = (redact(report.remote), now())
        self.notify(
            visible(render_sync(report), keep_newlines=True),
            title="Sync",
            severity="warning" if report.outcome.detail else "information",
            markup=False,
            timeout=10,
        )
        self._show_remote()
        self._load(keep_moment=True)

    def _show_remote(self) -> None:
        from kgai_tui.core.clock import now

        status = self.sync_status
        if status is None:
            return
        ours = self.synced_at
        synced = ours[1] if ours and ours[0] == status.remote else status.last_synced
        self.query_one(StoreHeader).show_remote(status.remote, synced, now())


def read_sync_status(root: Path) -> SyncStatus | None:
    """The store's remote and last sync (``None`` when they cannot be read)."""
    from kgai_tui.sync.status import sync_status

    try:
        return sync_status(root)
    except Exception:  # the header is a nicety: the store opens regardless
        return None
