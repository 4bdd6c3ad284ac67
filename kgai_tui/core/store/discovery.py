"""Find the store a command should use, in kg 1.5's order (spec 1.1).

Order: an explicit path (``--store``), ``KGAI_STORE``, the ``store`` of an approved
``<project>/.kgairc``, the ``store`` of ``$KGAI_HOME/config.json``, then
``<project>/.kgai/store`` (the project: ``KGAI_PROJECT``, else the main git
worktree, else the working directory). A corrupt layer or a refused ``store`` value
is an error, never a silent fallback to the default. An explicit path may also name
the project directory: without a ``log/`` of its own but with ``.kgai/store/log``,
its ``.kgai/store`` is the store. Discovery only looks; it never creates anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the store is and why it was chosen there.

    ``source`` is ``--store``, ``KGAI_STORE``, ``project`` (an approved
    ``.kgairc``), ``global`` (``$KGAI_HOME/config.json``) or ``default``.
    """

    root: Path
    source: str

    @property
    def exists(self) -> bool:
        """Whether the directory holds a store (a ``log/`` directory)."""
        return (self.root / "log").is_dir()


def project_root(cwd: Path | None = None) -> Path:
    """Return the project root: ``KGAI_PROJECT``, the main git worktree, or the cwd
    (asked of git once per directory and process)."""
    env = os.environ.get("KGAI_PROJECT", "")
    if env:
        return Path(env)
    return _git_project(cwd or Path.cwd())


@lru_cache(maxsize=8)
def _git_project(here: Path) -> Path:
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
    """Resolve the store root by kg's precedence (see the module docstring).

    Raises:
        ConfigError: a corrupt ``.kgairc``, ``config.json`` or approvals file, or a
            configured ``store`` that cannot be honoured.
    """
    if explicit:
        return StoreLocation(store_in(Path(explicit).expanduser()), "--store")
    env = os.environ.get("KGAI_STORE", "")
    if env:
        return StoreLocation(Path(env).expanduser(), "KGAI_STORE")
    from kgai_tui.core.store.layers import store_from_layers

    project = project_root(cwd)
    configured, layer = store_from_layers(project)
    if configured is not None:
        return StoreLocation(configured, layer)
    return StoreLocation(project / ".kgai" / "store", "default")
