"""Teammates' shard line counts, remembered between S3 syncs by fingerprint.

A sync plans its pull from the line count of every teammate's shard (the
reference's ``ShardCounts``), and counting reads the whole shard: at a million
decisions 790 MB on every sync, most of a sync that has nothing to do. So each
count is kept with the shard's fingerprint (:class:`ShardPrint`: size, inode,
times and the first and last 64 KiB, what the engine cache trusts to skip a
re-read) in the user cache directory, never in the store, and used only while the
shard still matches it. A missing, stale or damaged file only costs a count.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson

from kgai_tui.core.store.cache_file import (
    cache_header,
    read_cache_file,
    store_cache_dir,
    write_cache_file,
)
from kgai_tui.core.store.shard_print import ShardPrint
from kgai_tui.sync.shard import HeldShard, shard_print

__all__ = ["load_counts", "save_counts"]


def _path(root: Path) -> Path:
    return store_cache_dir(root) / "sync.counts"


def load_counts(root: Path) -> dict[str, ShardPrint]:
    """The remembered fingerprints, with line counts, by shard file name."""
    read = read_cache_file(root, _path(root))
    if read is None:
        return {}
    try:
        prints = [ShardPrint.from_list(row) for row in orjson.loads(read[1])]
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return {}
    return {p.name: p for p in prints if p.lines >= 0}


def save_counts(root: Path, held: Iterable[HeldShard]) -> None:
    """Remember each held shard's count with its fingerprint as it is now.

    Called under the store lock, after the pull: nothing appends meanwhile. A
    failure (a read-only cache directory) is ignored.
    """
    prints = []
    for shard in held:
        if not shard.regular:
            continue
        try:
            now = shard_print(shard.path, shard.lines)
        except OSError:
            continue
        if now is not None:
            prints.append(now.to_list())
    write_cache_file(_path(root), cache_header(root), orjson.dumps(prints))
