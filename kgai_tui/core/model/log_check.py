"""``doctor``'s check of the model: every byte of the log verified, shard by shard,
and compared with what the model says it was built from.

The model trusts a shard it holds by its fingerprint; ``doctor`` never trusts a
cache. It scans every shard again (hashes, decision ids, canonical form, parent
chains), one shard at a time in worker processes, keeping only each shard's state
(:func:`~kgai_tui.core.model.build.shard_state`: fingerprint, counts, problems,
broken chains and the digest of its lines). When that is exactly the state the
model holds, the model's counts are the counts of these bytes; otherwise doctor
replays the log it read. Memory: one shard's scan per worker, never the whole
projection (a replay of 1M decisions held 1.7 GB).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from kgai_tui.core.engine.cold_open import PARALLEL_MIN_BYTES
from kgai_tui.core.engine.pool import die_with_parent, start_resource_tracker
from kgai_tui.core.model.build import shard_state
from kgai_tui.core.store.logscan import scan_file
from kgai_tui.core.store.shards import LineProblem, list_log

__all__ = ["LogCheck", "check_log", "holds_log"]


class LogCheck:
    """What a verifying read of ``log/`` found: the refused entries and each shard's
    state, in name order."""

    __slots__ = ("refused", "states")

    def __init__(self, refused: list[LineProblem], states: list[dict[str, Any]]):
        """Keep what :func:`check_log` read."""
        self.refused = refused
        self.states = states


def _state_of(path: Path) -> dict[str, Any]:
    return shard_state(scan_file(path))


def check_log(log_dir: Path) -> LogCheck:
    """Verify every shard of ``log_dir`` (in worker processes when the log is big
    and there are cores to spare) and keep only each shard's state."""
    listing = list_log(log_dir)
    paths = [log_dir / n for n in listing.names]
    size = 0
    for p in paths:
        with contextlib.suppress(OSError):  # its scan reports it
            size += os.stat(p, follow_symlinks=False).st_size
    cores = len(os.sched_getaffinity(0))
    if cores < 2 or len(paths) < 2 or size < PARALLEL_MIN_BYTES:
        return LogCheck(listing.refused, [_state_of(p) for p in paths])
    # fork is cheap but unsafe once other threads run (the MCP server).
    method = "fork" if threading.active_count() == 1 else "spawn"
    if method == "spawn":
        start_resource_tracker()
    try:
        with ProcessPoolExecutor(
            min(cores, len(paths)),
            mp_context=get_context(method),
            initializer=die_with_parent,
        ) as pool:
            states = list(pool.map(_state_of, paths))
    except (BrokenProcessPool, OSError):  # no worker could run: this process reads
        states = [_state_of(p) for p in paths]
    return LogCheck(listing.refused, states)


def holds_log(
    states: Sequence[dict[str, Any]], refused: Sequence[LineProblem], check: LogCheck
) -> bool:
    """Whether a model whose shard ``states`` (and refused entries) these are was
    built from exactly the lines ``check`` read: same shards, fingerprints, counts,
    problems, chains and line digests."""
    return list(refused) == check.refused and list(states) == check.states
