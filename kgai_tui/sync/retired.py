"""Reconciling a retired shard after ``rotate``, as kg's sync does (spec 7.2).

A store copied on one machine shares its install id with the original; both write
under it, and the first sync of the copy refuses with the fork error. ``rotate``
gives the copy a new id and retires the old one, which the original still writes
under. The remote is then the canon for the retired id: on the next sync, the lines
the copy wrote under it that the remote never received (the orphans past the
longest common prefix) are recorded again under the copy's new id, with fresh
lamports and their original decision and time, and the copy's file for the retired
id is replaced by the remote's verified version, so the original's later decisions
can be pulled again (kg's ``reconcileRetired``, ``RewriteShard`` and ``ReEmit``).

What this adds to kg's: the orphans are recorded again *before* the file is
replaced, the remote's version must verify whole (every line's hash, decision id,
install and chain) and start with our common prefix, and the replaced file is kept,
byte for byte, in the store's directory of the user cache (``<key>/retired/``), so no line this
store held is lost. Only a retired id the store's own config lists is ever
replaced: a remote cannot reach any other shard this way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kgai_tui.core.store.cache_file import store_cache_dir
from kgai_tui.core.store.config_file import fsync_dir
from kgai_tui.core.wire.codec import DecodedLine
from kgai_tui.core.wire.model import Event
from kgai_tui.sync.shard import PulledLine

__all__ = ["Reconciled", "chain_ok", "reconcile_retired"]

#: Records the orphans' decisions again under this install (the caller's write
#: session): returns how many lines it appended.
Reemit = Callable[[Sequence[Event]], int]


@dataclass(frozen=True, slots=True)
class Reconciled:
    """What reconciling one retired shard did."""

    install_id: str
    reemitted: int
    kept_at: Path | None  # where the replaced file was kept (None: not replaced)


def _common_prefix(local: Sequence[DecodedLine], remote: Sequence[PulledLine]) -> int:
    k = 0
    while k < len(local) and k < len(remote) and local[k].event_hash == remote[k].hash:
        k += 1
    return k


def chain_ok(remote: Sequence[PulledLine], install: str) -> bool:
    """Every line of the remote's version names the install, verifies its decision
    id and extends the one before it."""
    parent = ""
    for line in remote:
        if line.install_id != install or not line.decision_id_ok:
            return False
        if line.parent != parent:
            return False
        parent = line.hash
    return True


def reconcile_retired(
    root: Path,
    install: str,
    local: Sequence[DecodedLine],
    remote: Sequence[PulledLine],
    reemit: Reemit,
    base: Path | None = None,
) -> Reconciled | str:
    """Align our copy of retired shard ``install`` with the remote's version.

    ``local`` are our copy's events in file order, ``remote`` the remote's
    verified lines in order. When ours is a prefix of the remote's, nothing is
    done here (the pull appends the rest). Otherwise the orphans are recorded
    again through ``reemit``, our file is kept in the cache and replaced by the
    remote's lines.

    Returns:
        What was done, or why nothing was (a refusal: the remote's version does
        not verify as a chain of this install).

    Raises:
        WriteError, OSError: the orphans could not be recorded (nothing replaced),
            or the file could not be replaced (the orphans are recorded).
    """
    k = _common_prefix(local, remote)
    orphans = list(local[k:])
    if not orphans:
        return Reconciled(install, 0, None)
    if not chain_ok(remote, install):
        return (
            f"install {install} (retired): the remote's version is not a whole chain "
            "of that install; our copy was kept"
        )
    events = [d.event for d in orphans if d.event.decision is not None]
    reemitted = reemit(events) if events else 0
    shard = root / "log" / f"{install}.ndjson"
    kept_dir = store_cache_dir(root, base) / "retired"
    kept_dir.mkdir(parents=True, exist_ok=True)
    kept = (
        kept_dir / f"{install}.{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.ndjson"
    )
    kept.write_bytes(shard.read_bytes())
    tmp = shard.with_name(f".{install}.ndjson.reconcile")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, b"".join(line.raw + b"\n" for line in remote))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, shard)
    fsync_dir(shard.parent)
    return Reconciled(install, reemitted, kept)
