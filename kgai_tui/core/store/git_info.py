"""Ask git who added a file and when (the fallback author and date of an ADR).

Every call is bounded and tolerant: without git, outside a work tree, or for a file
git does not track, the answer is ``None`` and the caller falls back.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kgai_tui.core.store.config_file import git_env


@dataclass(frozen=True, slots=True)
class Added:
    """Who first added a file, and when (ISO 8601 with offset)."""

    author: str
    date: str


def run_git(args: Sequence[str], cwd: Path) -> str | None:
    """Run git quietly with a bounded wait; its stdout, or ``None`` on any failure."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=30,
            check=False,
            env=git_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def work_tree_root(directory: Path) -> Path | None:
    """The top of the git work tree holding ``directory``, or ``None``."""
    out = run_git(["rev-parse", "--show-toplevel"], directory)
    if not out or not out.strip():
        return None
    return Path(out.strip())


def first_added(path: Path) -> Added | None:
    """The author and author date of the commit that first added ``path``."""
    out = run_git(
        ["log", "--diff-filter=A", "--format=%an%x1f%aI", "--", path.name],
        path.parent,
    )
    rows = [line for line in (out or "").splitlines() if "\x1f" in line]
    if not rows:
        return None
    author, date = rows[-1].split("\x1f", 1)  # git log is newest first
    return Added(author.strip(), date.strip())
