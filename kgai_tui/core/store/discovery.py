"""Find the store a command should use (spec 1.1, without the ``.kgairc`` trust layer).

Order: an explicit path, ``KGAI_STORE``, ``KGAI_PROJECT``/.kgai/store, then the main
git worktree's ``.kgai/store``, then ``./.kgai/store``. An explicit path may also name
the project directory: without a ``log/`` of its own but with ``.kgai/store/log``, its
``.kgai/store`` is the store. Discovery only looks; it never creates a directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the store is and why it was chosen there."""

    root: Path
    source: str

    @property
    def exists(self) -> bool:
        """Whether the directory holds a store (a ``log/`` directory)."""
        return (self.root / "log").is_dir()


def project_root(cwd: Path | None = None) -> Path:
    """Return the project root: ``KGAI_PROJECT``, the main git worktree, or the cwd."""
    env = os.environ.get("KGAI_PROJECT", "")
    if env:
        return Path(env)
    here = cwd or Path.cwd()
    import subprocess  # only when discovery asks git: not for --version or --help

    try:
        out = subprocess.run(
            [
                "git",
                "rev-parse",
                "--show-toplevel",
                "--absolute-git-dir",
                "--git-common-dir",
            ],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return here
    parts = out.stdout.splitlines()
    if out.returncode != 0 or len(parts) < 3:
        return here
    top, git_dir, common = parts[0], Path(parts[1]), Path(parts[2])
    if not common.is_absolute():
        common = (here / common).resolve()
    if git_dir.resolve() != common.resolve() and common.name == ".git":
        return common.parent
    return Path(top)


def store_in(path: Path) -> Path:
    """The store ``--store path`` means: ``path`` itself, or the project's store.

    ``path`` is taken as a project directory when it has no ``log/`` but its
    ``.kgai/store`` has one (``--store proj`` for ``proj/.kgai/store``); otherwise
    it is the store directory, whether or not a store is there yet.
    """
    inner = path / ".kgai" / "store"
    if not (path / "log").is_dir() and (inner / "log").is_dir():
        return inner
    return path


def locate_store(explicit: str | None = None, cwd: Path | None = None) -> StoreLocation:
    """Resolve the store root by the documented precedence."""
    if explicit:
        return StoreLocation(store_in(Path(explicit).expanduser()), "--store")
    env = os.environ.get("KGAI_STORE", "")
    if env:
        return StoreLocation(Path(env).expanduser(), "KGAI_STORE")
    source = "KGAI_PROJECT" if os.environ.get("KGAI_PROJECT") else "default"
    return StoreLocation(project_root(cwd) / ".kgai" / "store", source)
