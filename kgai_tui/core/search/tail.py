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

from kgai_tui.core.replay.order import LineSource
from kgai_tui.core.store.logscan import DECISION_ID_OK, HASH_OK, ShardScan, scan_bytes
from kgai_tui.core.store.shard_print import ShardPrint, appended_bytes

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
    keys: list[tuple[int, str, str, int, int, int]] = []
    for p in now:
        before = old.get(p.name)
        offset, seen = (0, 0) if before is None else (before.size, before.lines)
        if offset == p.size:
            continue
        start = max(offset - 1, 0)  # the indexed part must end with its newline
        data = appended_bytes(log_dir, p, start)
        if data is None or seen < 0 or (offset and data[:1] != b"\n"):
            return None
        scan = scan_bytes(p.name, data[offset - start :], start=offset)
        si = len(scans)
        scans.append(scan)
        keys.extend(
            (scan.lamports[i], scan.hashes[i], p.name, seen + scan.lines[i], si, i)
            for i in range(len(scan))
            if scan.flags[i] & HASH_OK
        )
    keys.sort()
    source = LineSource(log_dir, scans)
    out: list[tuple[dict[str, Any], bool]] = []
    try:
        for _, _, _, _, si, i in keys:
            obj = source.load(si, i)
            if obj["decision"] is not None:
                out.append((obj, bool(scans[si].flags[i] & DECISION_ID_OK)))
    finally:
        source.release()
    return out
