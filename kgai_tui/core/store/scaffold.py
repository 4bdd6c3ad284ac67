"""The files ``init`` lays out around a store: ignore and merge rules, git (spec 1.3).

``.gitignore`` and ``.gitattributes`` have canonical bytes that every writer puts back.
A file that lacks kgai's ownership marker is someone else's and is never overwritten;
one that has it is merged, keeping the user's extra lines unless they would break the
scaffold (un-ignoring the cache or the config, or ignoring a shard).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import RefusedError, write_error
from kgai_tui.core.gosem.gopath import go_path_match
from kgai_tui.core.gosem.gotext import go_trim_space
from kgai_tui.core.store.config_file import fsync_dir, write_all
from kgai_tui.core.store.discovery import project_root
from kgai_tui.core.store.git_info import run_git
from kgai_tui.core.store.shards import shard_names

GITIGNORE: Final = (
    "graph.kuzu*\n*.so\n.kg.lock\nkg.config.json\n.autosync-stamp\nlast-autosync.json\n"
)
GITATTRIBUTES: Final = "*.ndjson merge=union\n"
GITIGNORE_MARKER: Final = "graph.kuzu"
GITATTRIBUTES_MARKER: Final = "*.ndjson merge=union"
MERGE_DRIVER: Final = "git merge-file --union %A %O %B"
PROJECT_IGNORE_BLOCK: Final = (
    "# kgai per-project knowledge graph store (own git/sync cycle)\n.kgai/\n"
)

#: Paths each canonical ignore rule must keep covering; a ``!X`` that re-includes
#: one of them is dropped.
COVERED: Final = (
    "graph.kuzu",
    "graph.kuzu.wal",
    "graph.kuzu.shadow",
    "libkuzu.so",
    ".kg.lock",
    "kg.config.json",
    ".autosync-stamp",
    "last-autosync.json",
)
#: A shard path that must never be ignored, even in a store that has no shard yet.
SAMPLE_SHARD: Final = "log/i0123456789abcdef.ndjson"


def _candidates(path: str) -> list[str]:
    """The path itself, its base name, and each parent directory (path and name)."""
    parts = path.split("/")
    out = [path, parts[-1]]
    for end in range(len(parts) - 1, 0, -1):
        out.append("/".join(parts[:end]))
        out.append(parts[end - 1])
    return out


def glob_match(pattern: str, path: str) -> bool:
    """The scaffold guard's deliberately generous matcher (spec 1.3)."""
    pat = pattern.strip()
    pat = pat.removeprefix("/").removesuffix("/")
    if pat in ("*", "**"):
        return True
    for cand in _candidates(path):
        if cand == pat or go_path_match(pat, cand):
            return True
    if "*" in pat and "/" in pat:
        prefix = pat.removesuffix("**") if pat.endswith("**") else pat.removesuffix("*")
        if path.startswith(prefix):
            return True
    return False


def _breaks_gitignore(line: str, shared: Sequence[str]) -> bool:
    if line.startswith("!"):
        target = line[1:]
        return any(glob_match(target, rep) for rep in COVERED)
    return any(glob_match(line, path) for path in shared)


def _is_conflict_marker(line: str) -> bool:
    return line.startswith(("<<<<<<<", ">>>>>>>")) or line == "======="


def merge_own_file(
    existing: str | None,
    canonical: str,
    marker: str,
    shared: Sequence[str] | None = None,
) -> str | None:
    """Return the new content of a scaffold file, or ``None`` when it is not ours.

    Args:
        existing: the current text, or ``None`` when the file does not exist.
        canonical: the canonical content.
        marker: the substring that proves kgai wrote the file.
        shared: for ``.gitignore``, the paths no kept line may ignore.
    """
    if existing is None:
        return canonical
    if marker not in existing:
        return None
    out = canonical.rstrip("\n") + "\n"
    seen = {go_trim_space(line) for line in canonical.split("\n")}
    for line in existing.split("\n"):
        trimmed = go_trim_space(line)
        if not trimmed or trimmed in seen or _is_conflict_marker(trimmed):
            continue
        if shared is not None and _breaks_gitignore(trimmed, shared):
            continue
        seen.add(trimmed)
        out += line + "\n"
    return out


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def write_file_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` through a temporary file and a rename.

    Raises:
        WriteError: the file could not be written.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        try:
            write_all(fd, text.encode("utf-8", "surrogateescape"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(exc, str(path)) from exc


def shared_paths(root: Path) -> list[str]:
    """Paths a ``.gitignore`` line must never match: the shards (spec 1.3)."""
    return [SAMPLE_SHARD, *(f"log/{name}" for name in shard_names(root / "log"))]


def check_scaffold_ownership(root: Path) -> None:
    """Refuse early, before anything is created, when a scaffold file is not ours.

    Raises:
        RefusedError: ``.gitignore`` or ``.gitattributes`` exists without the marker.
    """
    for name, marker in (
        (".gitignore", GITIGNORE_MARKER),
        (".gitattributes", GITATTRIBUTES_MARKER),
    ):
        text = _read_text(root / name)
        if text is not None and marker not in text:
            raise RefusedError(
                f"refusing to overwrite {root / name}: not written by kgai "
                f"(it lacks {marker!r}); move it away or add the kgai rules by hand"
            )


def ensure_scaffold(root: Path) -> list[str]:
    """Write ``.gitignore`` and ``.gitattributes`` when they differ from the merge.

    Returns:
        The names of the files that were written.

    Raises:
        RefusedError: a file exists that kgai did not write.
        WriteError: a file could not be written.
    """
    check_scaffold_ownership(root)
    written: list[str] = []
    plan: Iterable[tuple[str, str, str, Sequence[str] | None]] = (
        (".gitignore", GITIGNORE, GITIGNORE_MARKER, shared_paths(root)),
        (".gitattributes", GITATTRIBUTES, GITATTRIBUTES_MARKER, None),
    )
    for name, canonical, marker, shared in plan:
        path = root / name
        existing = _read_text(path)
        merged = merge_own_file(existing, canonical, marker, shared)
        if merged is None:  # pragma: no cover - check_scaffold_ownership ran first
            raise RefusedError(f"refusing to overwrite {path}: not written by kgai")
        if merged != existing:
            write_file_atomically(path, merged)
            written.append(name)
    return written


def _git(args: Sequence[str], cwd: Path) -> bool:
    return run_git(args, cwd) is not None


def ensure_git(root: Path) -> bool:
    """``git init -q`` the store and set the union merge driver, once.

    A missing git binary is tolerated, as in the reference engine.

    Returns:
        True when a repository was created now.
    """
    if (root / ".git").exists():
        return False
    if not _git(["init", "-q"], root):
        return False
    _git(["config", "merge.union.driver", MERGE_DRIVER], root)
    return True


def ensure_project_gitignore(root: Path) -> bool:
    """Ignore ``.kgai/`` in the project when the store is the project's default one.

    Returns:
        True when the project's ``.gitignore`` was changed.
    """
    project = project_root()
    try:
        if root.resolve() != (project / ".kgai" / "store").resolve():
            return False
    except OSError:
        return False
    if not (project / ".git").exists():
        return False
    path = project / ".gitignore"
    text = _read_text(path) or ""
    if any(go_trim_space(line) == ".kgai/" for line in text.split("\n")):
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    write_file_atomically(path, text + PROJECT_IGNORE_BLOCK)
    return True
