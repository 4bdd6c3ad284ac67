"""Where the search index lives, and how it decides it is still valid (no tantivy here).

The index is a disposable cache in the store's one directory of the user cache
(``<cache>/<key>/search``, the key a hash of the resolved store path); nothing is
ever written inside the store.

* A **fingerprint** of the log is, per shard file, the one :mod:`shard_print` defines
  (name, size, inode, change and modification times, SHA-256 of the first and last
  64 KiB). Comparing the recorded fingerprint with the current one says whether the
  log is unchanged, only appended to (every old shard still holds the same first and
  last bytes at its old size, new shards may appear), or changed in any other way
  (rebuild).
* The **state file** records the fingerprint, the index directories with each
  file's identity (inode, size, modification and change times, as the model's seal
  records its file) and document counts, a version stamp and a SHA-256 over all of
  that. A state that is missing, unparsable, from another version or store, or whose
  digest or file manifest does not match, is not trusted: the index is rebuilt. So
  is a state file that is not a regular file or is larger than 64 MiB (never
  followed, never read). A file written after the state was saved, even in place
  at its own size, no longer matches: before, a byte changed in a segment file was
  believed, and a search answered other scores or failed inside tantivy.
* One writer at a time: index updates happen under an exclusive ``flock`` on
  ``search/lock``. Readers take no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from kgai_tui.core.errors import WriteError
from kgai_tui.core.store.cache_file import store_cache_dir
from kgai_tui.core.store.flock import flock_within
from kgai_tui.core.store.regular_file import identity, read_regular, replace_cache_file
from kgai_tui.core.store.shard_print import ShardPrint
from kgai_tui.core.store.shard_print import prints_from_disk as _prints_in
from kgai_tui.core.store.shards import shard_names

__all__ = [
    "IndexState",
    "PartState",
    "cache_dir_for",
    "dir_manifest",
    "drop_state",
    "load_state",
    "prints_from_disk",
    "save_state",
    "wait_for_writer",
    "write_lock",
]

_STATE_NAME: Final = "state.json"
_STATE_MAX: Final = 64 * 1024 * 1024
_LOCK_NAME: Final = "lock"


def cache_dir_for(root: Path, base: Path | None = None) -> Path:
    """Return the cache directory of a store (not created).

    Args:
        root: The store directory.
        base: Override for the cache base (default: ``KGAI_TUI_CACHE_DIR``, as
            for the engine cache, else the user cache dir).

    Returns:
        ``search/`` in the store's one cache directory
        (:func:`~kgai_tui.core.store.cache_file.store_cache_dir`).
    """
    return store_cache_dir(root, base) / "search"


def prints_from_disk(root: Path, base: Path | None = None) -> tuple[ShardPrint, ...]:
    """Fingerprint every shard as it is on disk now (line counts unknown); ``base``
    is the cache directory (its settled prints are kept there)."""
    log = root / "log"
    return tuple(_prints_in(log, shard_names(log), base))


def dir_manifest(path: Path) -> dict[str, list[int]]:
    """List an index directory's files with their identities (tantivy lock files
    skipped): what :func:`~kgai_tui.core.store.regular_file.identity` records.

    Raises:
        OSError: the directory cannot be listed.
    """
    out = {}
    for entry in os.scandir(path):
        name = entry.name
        if name.startswith(".tantivy-") and name.endswith(".lock"):
            continue
        if entry.is_file(follow_symlinks=False):
            out[name] = identity(entry.stat(follow_symlinks=False))
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class PartState:
    """One index directory as recorded: name, document count, file identities."""

    dir: str
    docs: int
    files: dict[str, list[int]] = field(default_factory=dict)
    digest: str = ""

    def to_obj(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "dir": self.dir,
            "docs": self.docs,
            "files": self.files,
            "digest": self.digest,
        }

    @classmethod
    def from_obj(cls, obj: Any) -> PartState:
        """Parse, raising ``TypeError``/``KeyError`` on anything unexpected."""
        files = obj["files"]
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and _is_identity(v) for k, v in files.items()
        ):
            raise TypeError("files")
        if not (isinstance(obj["dir"], str) and type(obj["docs"]) is int):
            raise TypeError("part")
        if not isinstance(obj["digest"], str):
            raise TypeError("digest")
        return cls(obj["dir"], obj["docs"], dict(files), obj["digest"])


def _is_identity(value: object) -> bool:
    """Whether a recorded file identity has its shape: four integers."""
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(type(x) is int for x in value)
    )


@dataclass(frozen=True, slots=True)
class IndexState:
    """What the cache holds, as recorded after the last successful write.

    Attributes:
        stamp: The format/version stamp the index was written with.
        store: The resolved store path it belongs to.
        shards: The fingerprint of the log it reflects.
        history: The append-only index of every decision event.
        live: The index of the current elements and decisions in force.
    """

    stamp: str
    store: str
    shards: tuple[ShardPrint, ...]
    history: PartState
    live: PartState

    def body(self) -> dict[str, Any]:
        """The recorded content, without the digest."""
        return {
            "stamp": self.stamp,
            "store": self.store,
            "shards": [_print_out(p) for p in self.shards],
            "history": self.history.to_obj(),
            "live": self.live.to_obj(),
        }


def _print_out(p: ShardPrint) -> list[Any]:
    """A shard print as JSON: a file name that is not UTF-8 (its bytes kept as
    lone surrogates) is written as ``{"hex": <its bytes>}``."""
    row: list[Any] = p.to_list()
    try:
        row[0].encode("utf-8")
    except UnicodeEncodeError:
        row[0] = {"hex": row[0].encode("utf-8", "surrogateescape").hex()}
    return row


def _print_in(row: list[Any]) -> ShardPrint:
    """Read :func:`_print_out`; ``ValueError``/``TypeError`` on anything else."""
    name = row[0] if row else None
    if isinstance(name, dict):
        raw = bytes.fromhex(str(name["hex"]))
        row = [raw.decode("utf-8", "surrogateescape"), *row[1:]]
    return ShardPrint.from_list(row)


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def load_state(cache_dir: Path, stamp: str, store: str) -> IndexState | None:
    """Read and check the state file; ``None`` when it cannot be trusted.

    Args:
        cache_dir: The store's cache directory.
        stamp: The version stamp the caller writes (a different one is foreign).
        store: The resolved store path (a different one is foreign).

    Returns:
        The state, or ``None`` if missing, corrupt, foreign or tampered with.
    """
    try:
        raw = read_regular(cache_dir / _STATE_NAME, _STATE_MAX)
        obj = orjson.loads(raw)
        body = obj["body"]
        if obj["digest"] != _digest(body):
            return None
        if body["stamp"] != stamp or body["store"] != store:
            return None
        shards = tuple(_print_in(row) for row in body["shards"])
        parts = [body["history"], body["live"]]
        sized = [_sizes_only(part) for part in parts]
        if any(sized):
            parts = [
                _identified(cache_dir, part) if s else part
                for part, s in zip(parts, sized, strict=True)
            ]
        state = IndexState(stamp, store, shards, *map(PartState.from_obj, parts))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if any(sized):
        _save_upgraded(cache_dir, raw, state)
    return state


def _sizes_only(part: Any) -> bool:
    """Whether a part was recorded by an earlier release: each file's size only."""
    files = part["files"]
    return (
        isinstance(files, dict)
        and bool(files)
        and all(type(v) is int for v in files.values())
    )


def _identified(cache_dir: Path, part: dict[str, Any]) -> dict[str, Any]:
    """An earlier release's part with its files' identities as they are now, when
    their sizes are the ones it recorded (the trust that release gave them, once);
    else ``TypeError``: not trusted. Without it, the first search after an upgrade
    built the index again from a replay of the whole store (1M decisions: ~28 s)."""
    found = dir_manifest(cache_dir / str(part["dir"]))
    if {name: ident[1] for name, ident in found.items()} != part["files"]:
        raise TypeError("files")
    return {**part, "files": found}


def _save_upgraded(cache_dir: Path, raw: bytes, state: IndexState) -> None:
    """Record an earlier release's state with identities, when no writer changed
    it since it was read (best effort: a busy or read-only cache keeps it)."""
    with contextlib.suppress(OSError, WriteError), write_lock(cache_dir, timeout=0.5):
        if read_regular(cache_dir / _STATE_NAME, _STATE_MAX) == raw:
            save_state(cache_dir, state)


def drop_state(cache_dir: Path) -> bool:
    """Remove the state file under the write lock, so that the next open builds
    the index again; whether it is gone (a busy or read-only cache keeps it)."""
    try:
        with write_lock(cache_dir, timeout=5.0):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(cache_dir / _STATE_NAME)
            return True
    except (OSError, WriteError):
        return False


def save_state(cache_dir: Path, state: IndexState) -> None:
    """Write the state file atomically (temp file, fsync, rename).

    Raises:
        OSError: the cache directory is not writable.
    """
    body = state.body()
    data = orjson.dumps({"body": body, "digest": _digest(body)})
    tmp = cache_dir / f".{_STATE_NAME}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # whatever was planted there: a FIFO would block the open
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    replace_cache_file(tmp, cache_dir / _STATE_NAME)


def wait_for_writer(cache_dir: Path, timeout: float) -> bool:
    """Wait until no process holds the write lock (at most ``timeout`` seconds);
    whether one held it when called. Takes nothing: a reader that finds an index
    being built waits for it instead of building a second one beside it."""
    try:
        fd = os.open(cache_dir / _LOCK_NAME, os.O_RDWR)
    except OSError:
        return False  # no lock file: no writer ever
    try:
        if flock_within(fd, fcntl.LOCK_SH, 0.0, 0.0):
            return False
        flock_within(fd, fcntl.LOCK_SH, timeout, 0.2)
        return True
    finally:
        os.close(fd)  # a shared lock taken goes with the descriptor


@contextlib.contextmanager
def write_lock(cache_dir: Path, timeout: float = 600.0) -> Iterator[None]:
    """Hold the cache directory's exclusive write lock (one index writer at a time).

    Args:
        cache_dir: The store's cache directory (created if needed).
        timeout: Seconds to wait for another process's update to finish.

    Raises:
        WriteError: the lock was not released within ``timeout``.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(cache_dir / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not flock_within(fd, fcntl.LOCK_EX, timeout, 0.05):
            raise WriteError(
                f"search index in {cache_dir} is locked by another process"
            )
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
