"""The decision events appended since the search index was written, read from the
shards' new bytes only.

The index records each shard's fingerprint and line count. After appends, the
events to add are the hash-verified decision events on the lines after those, in
the order a bulk reader consumes the log: (lamport, hash, shard, line). They are
read from the bytes between the recorded size and the size the reader holds (the
read model's or a whole store's), so extending the index needs neither a replay
nor any line it holds already.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgai_tui.core.replay.order import decision_keys, decision_objs_of
from kgai_tui.core.store.logscan import (
    ShardScan,
    scan_appended,
)
from kgai_tui.core.store.shard_print import ShardPrint

__all__ = ["appended_decisions"]


def appended_decisions(
    log_dir: Path, indexed: Sequence[ShardPrint], now: Sequence[ShardPrint]
) -> list[tuple[dict[str, Any], bool]] | None:
    """Each hash-verified decision event appended after ``indexed`` up to ``now``
    (both with line counts), as a canonical dict with its decision-id gate, in
    (lamport, hash, shard, line) order; ``None`` when a shard cannot be read as an
    append (replaced, or its indexed part ended inside a line)."""
    old = {p.name: p for p in indexed}
    scans: list[ShardScan] = []
    shifts: list[int] = []
    for p in now:
        before = old.get(p.name)
        offset, seen = (0, 0) if before is None else (before.size, before.lines)
        if offset == p.size:
            continue
        scan = scan_appended(log_dir, p, offset) if seen >= 0 else None
        if scan is None:
            return None
        scans.append(scan)
        shifts.append(seen)
    return list(decision_objs_of(log_dir, scans, decision_keys(scans, shifts)))
