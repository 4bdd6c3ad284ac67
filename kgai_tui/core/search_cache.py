"""Where the search index lives, and how it decides it is still valid (no tantivy here).

The index is a disposable cache in the user cache directory
(``platformdirs.user_cache_dir("kgai-tui")/search/<key>``), keyed by a hash of the
resolved store path; nothing is ever written inside the store.

* A **fingerprint** of the log is, per shard file, its name, size and a SHA-256 of its
  last 64 KiB. Comparing the recorded fingerprint with the current one says whether the
  log is unchanged, only appended to (every old shard still ends with the same bytes at
  the old size, new shards may appear), or changed in any other way (rebuild).
* The **state file** records the fingerprint, the index directories with their file
  sizes and document counts, a version stamp and a SHA-256 over all of that. A state
  that is missing, unparsable, from another version or store, or whose digest or file
  manifest does not match, is not trusted: the index is rebuilt.
* One writer at a time: index updates happen under an exclusive ``flock`` on
  ``<key>/lock``. Readers take no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import orjson
import platformdirs

from kgai_tui.core.errors import WriteError
from kgai_tui.core.shards import shard_names

__all__ = [
    "TAIL_BYTES",
    "IndexState",
    "PartState",
    "ShardPrint",
    "cache_dir_for",
    "compare_prints",
    "dir_manifest",
    "load_state",
    "prints_from_disk",
    "save_state",
    "tail_digest",
    "write_lock",
]

#: How many bytes at the end of a shard the fingerprint hashes.
TAIL_BYTES: Final = 64 * 1024
_STATE_NAME: Final = "state.json"
_LOCK_NAME: Final = "lock"

Change = Literal["same", "append", "rebuild"]


def cache_dir_for(root: Path, base: Path | None = None) -> Path:
    """Return the cache directory of a store (not created).

    Args:
        root: The store directory.
        base: Override for the cache base (default: the user cache dir).

    Returns:
        ``<base>/search/<sha256(resolved store path)[:32]>``.
    """
    if base is None:
        base = Path(platformdirs.user_cache_dir("kgai-tui"))
    key = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:32]
    return base / "search" / key


@dataclass(frozen=True, slots=True)
class ShardPrint:
    """The fingerprint of one shard file.

    Attributes:
        name: The file name in ``log/``.
        size: Its size in bytes when indexed.
        tail: SHA-256 hex of its last (up to) 64 KiB at that size.
        lines: How many complete lines (newlines) it had then; ``-1`` if unknown.
    """

    name: str
    size: int
    tail: str
    lines: int = -1

    def same_bytes(self, other: ShardPrint) -> bool:
        """Whether two prints describe the same file content (lines ignored)."""
        return (self.name, self.size, self.tail) == (other.name, other.size, other.tail)


def tail_digest(path: Path, size: int) -> str:
    """Hash the last (up to) 64 KiB before ``size`` of a file.

    Args:
        path: The file.
        size: The size the file had (it may have grown since).

    Returns:
        SHA-256 hex, or ``""`` when the file is missing or shorter than ``size``.
    """
    start = max(0, size - TAIL_BYTES)
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(size - start)
    except OSError:
        return ""
    if len(data) != size - start:
        return ""
    return hashlib.sha256(data).hexdigest()


def prints_from_disk(root: Path) -> tuple[ShardPrint, ...]:
    """Fingerprint every shard as it is on disk now (line counts unknown)."""
    log = root / "log"
    out = []
    for name in shard_names(log):
        try:
            size = (log / name).stat().st_size
        except OSError:
            continue
        out.append(ShardPrint(name, size, tail_digest(log / name, size)))
    return tuple(out)


def compare_prints(
    old: Sequence[ShardPrint], new: Sequence[ShardPrint], log_dir: Path
) -> Change:
    """Classify how the log changed between two fingerprints.

    Args:
        old: The fingerprint the index was built from.
        new: The current fingerprint.
        log_dir: The store's ``log/`` directory, to re-hash grown shards at their
            old size.

    Returns:
        ``"same"`` when nothing changed; ``"append"`` when every old shard is still
        there, no shorter, and still ends with the same bytes at its old size (new
        shards may have appeared); ``"rebuild"`` otherwise.
    """
    if len(old) == len(new) and all(
        a.same_bytes(b) for a, b in zip(old, new, strict=True)
    ):
        return "same"
    current = {p.name: p for p in new}
    for prev in old:
        now = current.get(prev.name)
        if now is None or now.size < prev.size:
            return "rebuild"
        if now.size == prev.size:
            if now.tail != prev.tail:
                return "rebuild"
        elif tail_digest(log_dir / prev.name, prev.size) != prev.tail:
            return "rebuild"
    return "append"


def dir_manifest(path: Path) -> dict[str, int]:
    """List an index directory's files with their sizes (tantivy lock files skipped).

    Raises:
        OSError: the directory cannot be listed.
    """
    out = {}
    for entry in os.scandir(path):
        name = entry.name
        if name.startswith(".tantivy-") and name.endswith(".lock"):
            continue
        if entry.is_file(follow_symlinks=False):
            out[name] = entry.stat(follow_symlinks=False).st_size
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class PartState:
    """One index directory as recorded: name, document count, file sizes."""

    dir: str
    docs: int
    files: dict[str, int] = field(default_factory=dict)
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
            isinstance(k, str) and type(v) is int for k, v in files.items()
        ):
            raise TypeError("files")
        if not (isinstance(obj["dir"], str) and type(obj["docs"]) is int):
            raise TypeError("part")
        if not isinstance(obj["digest"], str):
            raise TypeError("digest")
        return cls(obj["dir"], obj["docs"], dict(files), obj["digest"])


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
            "shards": [[p.name, p.size, p.tail, p.lines] for p in self.shards],
            "history": self.history.to_obj(),
            "live": self.live.to_obj(),
        }


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
        obj = orjson.loads((cache_dir / _STATE_NAME).read_bytes())
        body = obj["body"]
        if obj["digest"] != _digest(body):
            return None
        if body["stamp"] != stamp or body["store"] != store:
            return None
        shards = tuple(
            ShardPrint(str(n), int(s), str(t), int(ln))
            for n, s, t, ln in body["shards"]
        )
        return IndexState(
            stamp,
            store,
            shards,
            PartState.from_obj(body["history"]),
            PartState.from_obj(body["live"]),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None


def save_state(cache_dir: Path, state: IndexState) -> None:
    """Write the state file atomically (temp file, fsync, rename).

    Raises:
        OSError: the cache directory is not writable.
    """
    body = state.body()
    data = orjson.dumps({"body": body, "digest": _digest(body)})
    tmp = cache_dir / f".{_STATE_NAME}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, cache_dir / _STATE_NAME)


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
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WriteError(
                        f"search index in {cache_dir} is locked by another process"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
