"""Cache files in the user cache directory: where they live, header, checked read, atomic write.

A cache file is a magic line, a JSON header (format, Python and kgai-tui versions,
the store path, the payload's size and SHA-256) and the payload.

A large one (the time index: 230 MB at 1M decisions, 2.16 GB at 10M) is sealed as
the read model is: its writer records the file's identity (inode, size,
modification and change times) in ``<file>.seal`` after renaming it into place (as
does a reader that hashed a file with no seal, an earlier release's, and found it
whole), and a reader that finds the file it opened still so skips hashing the
payload (hashing read every page of it: 0.16-0.28 s at 1M, and at 10M the whole
file off the disk, where a read needs a few of its pages). Any other file, or one
the seal does not describe, is hashed as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from kgai_tui import __version__
from kgai_tui.core.store.regular_file import (
    RELEASE_STEP,
    identity,
    open_regular,
    release_view,
    replace_cache_file,
)

if TYPE_CHECKING:
    from array import array
    from collections.abc import Sequence

# 2: el_shapes packed as arrays; 3: the whole shard fingerprint; 4: recorded times
# read with ASCII digits only (Go's time.Parse)
FORMAT: Final = 4
_MAGIC: Final = b"kgai-tui engine cache\n"
# The header line's bound: past it, the file is not a cache (a miss).
_HEADER_MAX: Final = 16 * 1024 * 1024


def cache_base(base: Path | None = None) -> Path:
    """The user cache directory of kgai-tui (``KGAI_TUI_CACHE_DIR`` overrides it)."""
    if base is not None:
        return base
    env = os.environ.get("KGAI_TUI_CACHE_DIR")
    if env:
        return Path(env)
    return Path(_xdg_cache_dir() or _platform_cache_dir())


def _xdg_cache_dir() -> str | None:
    """``platformdirs.user_cache_dir("kgai-tui")`` on Linux, where it is plain XDG.

    Importing platformdirs costs every process ~14 ms (it loads tempfile, shutil and
    random). Only the cases every platformdirs release we allow answers alike are
    handled here: an absolute ``XDG_CACHE_HOME``, or none and an absolute ``HOME``.
    Anything else (another system, a relative or blank variable) is platformdirs'
    to answer; ``tests/core/test_store_files.py`` holds both to the same paths.
    """
    if not sys.platform.startswith("linux"):
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg:
        return os.path.join(xdg, "kgai-tui") if xdg.startswith("/") else None
    home = os.environ.get("HOME", "")
    if not home.startswith("/"):
        return None
    return os.path.join(home.rstrip("/") or "/", ".cache", "kgai-tui")


def _platform_cache_dir() -> str:
    """The user cache directory as platformdirs says, wherever it is."""
    import platformdirs

    return platformdirs.user_cache_dir("kgai-tui")


def store_key(root: Path) -> str:
    """The name a store's cache files share: a hash of its resolved path."""
    return hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:32]


def store_cache_dir(root: Path, base: Path | None = None) -> Path:
    """The one directory of the user cache derived from the store at ``root``:
    ``<cache>/<store key>/``, holding everything kept for it (the model and its
    files, the time index, the search index, the settled prints, sync's counts,
    shards kept by a reconcile). Deleting it loses nothing the log does not hold
    but those kept shards. ``KGAI_TUI_CACHE_DIR`` overrides the base."""
    return cache_base(base) / store_key(root)


#: Where earlier releases kept a store's derived files, by directory: ``<cache>/<dir>/
#: <key><suffix>`` (deleted by ``rebuild`` and when the model is first built).
LEGACY_DIRS: Final = ("engine", "model", "prints", "search", "sync")


def legacy_paths(root: Path, base: Path | None = None) -> list[Path]:
    """The derived files and directories earlier releases kept for the store at
    ``root`` (never the shards a reconcile kept: see :func:`remove_legacy`)."""
    top, key = cache_base(base), store_key(root)
    found: list[Path] = []
    for name in LEGACY_DIRS:
        folder = top / name
        if folder.is_dir() and not folder.is_symlink():
            found.extend(sorted(folder.glob(key + "*")))
    # The whole projection, which the store's directory held until the read model
    # became the one store derived from the log.
    engine = store_cache_dir(root, base) / "engine.bin"
    if engine.is_file() or engine.is_symlink():
        found.append(engine)
    return found


def remove_legacy(root: Path, base: Path | None = None) -> None:
    """Delete the derived files earlier releases kept for the store at ``root``
    elsewhere in the cache (:func:`legacy_paths`), and move the shards a reconcile
    kept (``<cache>/retired/<key>/``) into the store's directory: they are the only
    copy of lines a remote replaced. Best effort: what cannot be moved or removed
    stays where it was."""
    import shutil

    for old in legacy_paths(root, base):
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                old.unlink()
    kept = cache_base(base) / "retired" / store_key(root)
    if not kept.is_dir() or kept.is_symlink():
        return
    target = store_cache_dir(root, base) / "retired"
    with contextlib.suppress(OSError):
        target.mkdir(parents=True, exist_ok=True)
        for shard in sorted(kept.iterdir()):
            if shard.is_file() and not shard.is_symlink():
                dest = target / shard.name
                if not dest.exists():
                    shard.replace(dest)
        kept.rmdir()


def cache_header(root: Path) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "python": sys.version,
        "kgai_tui": __version__,
        "root": os.fsdecode(root.resolve()),
    }


def time_index_path(root: Path, base: Path | None = None) -> Path:
    """Where the time index of the store at ``root`` is kept, beside its model."""
    return time_index_in(store_cache_dir(root, base))


def time_index_in(store_dir: Path) -> Path:
    """The time index file in a store's cache directory (``store_cache_dir``)."""
    return store_dir / "engine.time.bin"


def write_cache_file(
    path: Path,
    header: dict[str, Any],
    payload: bytes | Sequence[bytes | array[int]],
    *,
    seal: bool = False,
) -> None:
    """Write header and payload to a temporary file, then rename it into place
    (and, with ``seal``, record its identity: see the module).

    The payload may come in pieces, written one after another (a large one is
    never joined in memory). The header gets its size and SHA-256. A failure (a
    full disk, a read-only cache directory) only costs the next open its time.
    """
    import tempfile  # a write only: reads do not pay its imports (shutil, random)

    pieces = [payload] if isinstance(payload, bytes) else payload
    digest = hashlib.sha256()
    size = 0
    for piece in pieces:
        digest.update(piece)
        size += memoryview(piece).nbytes
    header["digest"] = digest.hexdigest()
    header["size"] = size
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + orjson.dumps(header) + b"\n")
                for piece in pieces:
                    fh.write(piece)
            replace_cache_file(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        if seal:
            _write_seal(path, os.stat(path, follow_symlinks=False))
    except OSError:
        return


def seal_path(path: Path) -> Path:
    """Where the identity of the cache file at ``path`` is recorded."""
    return path.with_name(path.name + ".seal")


def _write_seal(path: Path, st: os.stat_result) -> None:
    """Record ``st`` as the identity of the cache file at ``path``: that of a whole
    file (whichever writer's: only whole files are renamed there), or of one read
    and hashed. Written to a temporary file, renamed in place.

    Raises:
        OSError: it could not be written (the next read hashes the file again).
    """
    import tempfile  # a write only: reads do not pay its imports (shutil, random)

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps(identity(st)))
        replace_cache_file(tmp, seal_path(path))
    except BaseException:
        os.unlink(tmp)
        raise


def _sealed(path: Path, st: os.stat_result) -> bool:
    """Whether the seal beside ``path`` describes the file opened with ``st``."""
    try:
        with open_regular(seal_path(path)) as f:
            return bool(orjson.loads(f.read(0, 4096)) == identity(st))
    except (OSError, ValueError, orjson.JSONDecodeError):
        return False


def read_cache_file(
    root: Path, path: Path, *, sealed: bool = False
) -> tuple[dict[str, Any], bytes | memoryview] | None:
    """The header and payload of a cache file that passes every check, else ``None``.

    Checked: the magic line, the format, Python and kgai-tui versions and store path
    in the header, and the payload's size and SHA-256 (with ``sealed``, not its
    SHA-256 when its seal describes the file read: see the module).
    """
    read = read_cache(path)
    if read is None:
        return None
    header, payload, st = read
    expected = cache_header(root)
    if not isinstance(header, dict) or any(
        header.get(k) != v for k, v in expected.items()
    ):
        return None
    if header.get("size") != len(payload):
        return None
    if sealed and _sealed(path, st):
        return header, payload
    digest = hashlib.sha256()
    for at in range(0, len(payload), RELEASE_STEP):
        digest.update(payload[at : at + RELEASE_STEP])
        release_view(payload)
    if header.get("digest") != digest.hexdigest():
        return None
    if sealed:  # the file read is the one written: the next read need not hash it
        with contextlib.suppress(OSError):
            _write_seal(path, st)
    return header, payload


def read_cache(
    path: Path,
) -> tuple[Any, bytes | memoryview, os.stat_result] | None:
    """The header, the payload (mapped, not copied) and the identity of a cache
    file, as opened.

    ``None`` for anything but a regular file, and for a header line that does not
    end within :data:`_HEADER_MAX` bytes; nothing is read past the size at open.
    """
    try:
        with open_regular(path) as f:
            head = f.read(0, 64 * 1024)
            if not head.startswith(_MAGIC):
                return None
            end = head.find(b"\n", len(_MAGIC))
            if end < 0 and len(head) < f.size:
                head = f.read(0, _HEADER_MAX)
                end = head.find(b"\n", len(_MAGIC))
            if end < 0:
                return None
            header = orjson.loads(head[len(_MAGIC) : end])
            start = end + 1
            if f.size == start:
                return header, b"", f.stat
            mapped = f.map(populate=False)  # its pages are let go as they are read
            st = f.stat
    except (OSError, ValueError, orjson.JSONDecodeError):
        return None
    return header, memoryview(mapped)[start:], st
