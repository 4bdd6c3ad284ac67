"""Settled shard prints kept across processes, in the user cache directory.

:func:`~kgai_tui.core.store.shard_print.prints_from_disk` hashes a shard's edges
again unless it hashed them from a file whose change time was already settled
and whose stat is still the same. Within one process that saves every print but
the first; a CLI read is one process, so at 300 shards each read still hashed
600 edges (~40 ms of a 90 ms ``status`` at 10M). This file carries those settled
prints from one process to the next: per store, ``<store key>/prints.json``
holding ``[name, size, inode, mtime, ctime, head, tail]`` rows and a SHA-256 of
them. The same rule decides what is trusted: a row is used only while the file's
size, inode, modification and change times are what they were, and a row is only
ever written from a print taken once its change time had settled, so any write
since would have moved the change time. A file that does not decode, or whose
digest does not match, is ignored (and written anew); one that cannot be written
is skipped. It never holds anything a print would not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import orjson

from kgai_tui.core.store.cache_file import store_cache_dir
from kgai_tui.core.store.regular_file import open_regular, replace_cache_file

__all__ = ["Row", "load_settled", "save_settled", "settled_path"]

#: ``[name, size, inode, mtime_ns, ctime_ns, head, tail]``.
Row = tuple[str, int, int, int, int, str, str]
_VERSION: Final = 1
_MAX_BYTES: Final = 8 << 20


def settled_path(log_dir: Path, base: Path | None = None) -> Path:
    """Where the settled prints of the store holding ``log_dir`` are kept
    (``base``: the cache directory, ``None`` the user's)."""
    return store_cache_dir(log_dir.parent, base) / "prints.json"


def _digest(rows: Sequence[Row]) -> str:
    return hashlib.sha256(orjson.dumps(list(rows))).hexdigest()


def load_settled(log_dir: Path, base: Path | None = None) -> list[Row]:
    """The rows kept for this store (empty when none, or not trusted)."""
    try:
        with open_regular(settled_path(log_dir, base)) as f:
            if f.size > _MAX_BYTES:
                return []
            doc = orjson.loads(f.read(0, f.size))
    except (OSError, orjson.JSONDecodeError):
        return []
    try:
        if doc["v"] != _VERSION:
            return []
        rows = [_row(r) for r in doc["rows"]]
        if doc["digest"] != _digest(rows):
            return []
    except (KeyError, TypeError, ValueError):
        return []
    return rows


def _row(raw: object) -> Row:
    if not isinstance(raw, list) or len(raw) != 7:
        raise ValueError("a settled print has 7 fields")
    name, size, ino, mtime, ctime, head, tail = raw
    for text in (name, head, tail):
        if not isinstance(text, str):
            raise TypeError("settled print")
    for number in (size, ino, mtime, ctime):
        if isinstance(number, bool) or not isinstance(number, int):
            raise TypeError("settled print")
    return (name, size, ino, mtime, ctime, head, tail)


def save_settled(log_dir: Path, rows: Sequence[Row], base: Path | None = None) -> None:
    """Keep ``rows`` for this store (atomically; silently not when it cannot)."""
    path = settled_path(log_dir, base)
    try:
        doc = {"v": _VERSION, "digest": _digest(rows), "rows": list(rows)}
        data = orjson.dumps(doc)
    except orjson.JSONEncodeError:
        return  # a name that is not text (surrogates): nothing kept
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        replace_cache_file(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
