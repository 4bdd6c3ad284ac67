"""``sync --auto``: a background sync that never blocks, never creates, never nags.

What an agent's hook runs at the start or end of a session (kg 1.5's ``kg sync
--auto``, spec 7.7): it does nothing, silently, when there is no store, no
effective remote, a sync attempted less than ``cooldown`` seconds ago
(``.autosync-stamp``'s mtime) or the store's lock held by someone else.
Otherwise it stamps the attempt, syncs, and writes what happened to
``last-autosync.json`` (one compact line, kg's keys), which the next
session-start hook reads to report a failing sync.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import KgaiError, LockTimeoutError
from kgai_tui.core.store.discovery import locate_store
from kgai_tui.core.write.lock import LOCK_NAME
from kgai_tui.core.write.writes import Notice
from kgai_tui.sync.status import effective_url, run_sync
from kgai_tui.sync.sync import SyncReport

__all__ = ["LAST_NAME", "STAMP_NAME", "auto_sync", "last_auto_sync"]

STAMP_NAME: Final = ".autosync-stamp"
LAST_NAME: Final = "last-autosync.json"


def _lock_is_free(root: Path) -> bool:
    """Whether nobody holds the store's lock right now (probed, not kept)."""
    try:
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _write_last(root: Path, obj: dict[str, Any]) -> None:
    from kgai_tui.core.gosem.gojson import marshal

    try:
        tmp = root / (LAST_NAME + ".tmp")
        tmp.write_bytes(marshal({k: obj[k] for k in sorted(obj)}) + b"\n")
        os.replace(tmp, root / LAST_NAME)
    except OSError:
        pass  # the result file is a courtesy: the sync itself already happened


def auto_sync(
    store: str | None, cooldown: int, on_notice: Notice | None = None
) -> SyncReport | None:
    """Sync when there is something to sync with and nobody else is at it.

    Returns ``None`` when it skipped (silently), else the sync's report.

    Raises:
        KgaiError: the sync ran and failed (its result file says so too).
    """
    from kgai_tui.core.clock import now
    from kgai_tui.core.gosem.gotext import format_rfc3339

    try:
        location = locate_store(store)
        if not location.exists:
            return None
        root = location.root
        url = effective_url(root, None)
    except (KgaiError, OSError):
        return None
    if not url:
        return None
    stamp = root / STAMP_NAME
    try:
        if cooldown > 0 and time.time() - stamp.stat().st_mtime < cooldown:
            return None
    except OSError:
        pass  # no stamp yet
    if not _lock_is_free(root):
        return None
    try:
        stamp.write_bytes(b"")
    except OSError:
        return None
    when = format_rfc3339(now())
    try:
        report = run_sync(root, None, on_notice=on_notice, lock_timeout=0.0)
    except LockTimeoutError:
        return None  # someone took the lock between the probe and the sync
    except KgaiError as exc:
        from kgai_tui.core.reads.health import redact

        _write_last(
            root,
            {
                "applied": 0,
                "conflict_count": 0,
                "error": str(exc).splitlines()[0],
                "ok": False,
                "pulled": False,
                "pushed": False,
                "remote": redact(url),
                "when": when,
            },
        )
        raise
    obj = report.to_obj()
    last: dict[str, Any] = {
        "applied": obj["applied"],
        "conflict_count": obj["conflict_count"],
        "ok": True,
        "pulled": obj["sync"]["pulled"],
        "pushed": obj["sync"]["pushed"],
        "remote": obj["sync"].get("remote", ""),
        "when": when,
    }
    if obj["sync"].get("detail"):
        last["detail"] = obj["sync"]["detail"]
    _write_last(root, last)
    return report


def last_auto_sync(root: Path) -> dict[str, Any] | None:
    """The last background sync's result, ``None`` when there is none (or it
    cannot be read)."""
    import json

    from kgai_tui.core.store.regular_file import read_regular

    try:  # a regular file only, and small: the session-start hook reads it
        obj = json.loads(read_regular(root / LAST_NAME, 64 << 10))
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None
