"""Where a store syncs and when it last did: the explorer's view of ``kgai-tui sync``.

:func:`run_sync` picks git or S3 for the effective remote exactly as the CLI's
``sync`` command does (``kgai:// `` refused, ``s3://`` to the segment protocol,
anything else to git). :func:`sync_status` only reads: the effective remote
(redacted) and, for a git remote, when the store's repository last exchanged
commits with it (the reflog of ``refs/remotes/origin/main``, which a fetch that
brought something and every push update). S3 leaves no local trace of a sync.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.health import redact
from kgai_tui.core.store.config_file import load_config
from kgai_tui.core.write.writes import Notice
from kgai_tui.sync.s3_remote import is_s3, resolve_remote
from kgai_tui.sync.sync import SyncReport

__all__ = ["SyncStatus", "effective_url", "run_sync", "sync_status"]

_ORIGIN_LOG = Path(".git") / "logs" / "refs" / "remotes" / "origin" / "main"


def effective_url(root: Path, remote: str | None = None) -> str:
    """The remote a sync of ``root`` would use (``""``: none), as ``sync`` picks it.

    Raises:
        UsageError: a ``kgai://`` remote (kgai cloud needs the kg engine).
    """
    cfg = load_config(root) if root.is_dir() else None
    url, _ = resolve_remote(remote, cfg.remote if cfg is not None else "")
    if url.startswith("kgai://"):
        raise UsageError(
            "kgai-tui syncs through git or S3; a kgai:// remote (kgai cloud) needs "
            "the kg engine (`kg sync`)"
        )
    return url


def run_sync(
    root: Path,
    remote: str | None = None,
    *,
    on_notice: Notice | None = None,
    lock_timeout: float | None = None,
) -> SyncReport:
    """Sync ``root`` through S3 or git, whichever its effective remote selects.

    Raises:
        UsageError, SyncError, RefusedError, ...: as ``sync_store`` and
            ``s3_sync_store`` raise them; LockTimeoutError past ``lock_timeout``.
    """
    if is_s3(effective_url(root, remote)):
        from kgai_tui.sync.s3_sync import s3_sync_store

        return s3_sync_store(
            root, remote, on_notice=on_notice, lock_timeout=lock_timeout
        )
    from kgai_tui.sync.sync import sync_store

    return sync_store(root, remote, on_notice=on_notice, lock_timeout=lock_timeout)


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """The effective remote (credentials hidden) and the store's last sync, if known."""

    remote: str
    last_synced: datetime | None = None


def sync_status(root: Path) -> SyncStatus:
    """Read (never write) the store's remote and when it last synced through git.

    A ``kgai://`` remote is shown as configured; nothing here raises for it.
    """
    try:
        url = effective_url(root)
    except UsageError:
        cfg = load_config(root) if root.is_dir() else None
        url, _ = resolve_remote(None, cfg.remote if cfg is not None else "")
    if not url or is_s3(url) or url.startswith("kgai://"):
        return SyncStatus(redact(url))
    return SyncStatus(redact(url), _git_last_exchange(root, url))


def _git_last_exchange(root: Path, url: str) -> datetime | None:
    """When ``origin/main`` last moved, if ``origin`` is ``url`` (else ``None``)."""
    from kgai_tui.sync.run import SyncError, git

    if not (root / _ORIGIN_LOG).is_file():
        return None
    try:
        origin = git(root, "config", "--get", "remote.origin.url")
    except SyncError:
        return None
    if not origin.ok or origin.text.strip() != url:
        return None
    try:
        lines = (root / _ORIGIN_LOG).read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    for line in reversed(lines.splitlines()):
        head = line.split("\t", 1)[0].split()
        if len(head) >= 2 and head[-2].isdigit():
            return datetime.fromtimestamp(int(head[-2]), UTC)
    return None
