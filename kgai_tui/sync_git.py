"""The git transport of ``kg sync`` (spec 7.1), step for step, driving the git binary.

1. ``git add -A``; untrack every scaffold ignore pattern (``git rm --cached``), so a
   file committed by mistake earlier (``kg.config.json`` holds the cloud token) stops
   travelling; commit as the actor with ``kgai@local`` when anything changed.
2. No remote: stop, committed locally only.
3. Point ``origin`` at the remote; ``git fetch``. A failure is a detail (offline).
4. Merge ``origin/main`` with ``--allow-unrelated-histories`` (shards are separate
   files; ``*.ndjson merge=union`` is the safety net). A failing merge is aborted and
   is an error.
5. ``git branch -M main``; ``git push -u origin main``. A failure is a detail.

Never a rebase, never a force push. The caller holds the store lock.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kgai_tui.core.config_file import git_env
from kgai_tui.core.errors import KgaiError
from kgai_tui.core.health import redact
from kgai_tui.core.scaffold import GITIGNORE, MERGE_DRIVER

__all__ = ["IGNORED_PATTERNS", "GitOutcome", "SyncError", "git_sync"]

#: Everything the scaffold ignores; untracked again on every sync (spec 10).
IGNORED_PATTERNS: Final = tuple(line for line in GITIGNORE.splitlines() if line)
COMMIT_EMAIL: Final = "kgai@local"
LOCAL_TIMEOUT: Final = 60.0
NETWORK_TIMEOUT: Final = 120.0
NO_REMOTE: Final = "no remote configured; committed locally only"


class SyncError(KgaiError):
    """The sync could not be done safely (no git, a failed commit, a merge conflict)."""


@dataclass(frozen=True, slots=True)
class GitOutcome:
    """What the transport did: ``pulled`` (HEAD moved), ``pushed``, ``committed``.

    ``detail`` explains a soft failure (no remote, offline, push refused); the sync
    is still ``ok`` then.
    """

    pulled: bool = False
    pushed: bool = False
    committed: bool = False
    detail: str = ""


@dataclass(frozen=True, slots=True)
class _Run:
    ok: bool
    out: str
    err: str

    def why(self, url: str = "") -> str:
        """The first non-empty line git printed, with credentials hidden."""
        for line in (self.err + "\n" + self.out).splitlines():
            if line.strip():
                text = line.strip()
                return text.replace(url, redact(url)) if url else text
        return "git failed"


def _env() -> dict[str, str]:
    env = git_env()
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody will type
    env["LC_ALL"] = "C"
    env.pop("GIT_EDITOR", None)
    return env


def _git(root: Path, *args: str, timeout: float = LOCAL_TIMEOUT) -> _Run:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            env=_env(),
        )
    except FileNotFoundError as exc:
        raise SyncError("git is not installed; kgai-tui sync drives git") from exc
    except subprocess.TimeoutExpired:
        return _Run(False, "", f"git {args[0]} timed out after {timeout:g} s")
    except OSError as exc:
        raise SyncError(f"cannot run git: {exc.strerror or exc}") from exc
    return _Run(done.returncode == 0, done.stdout, done.stderr)


def _must(root: Path, *args: str) -> _Run:
    run = _git(root, *args)
    if not run.ok:
        raise SyncError(f"git {args[0]} failed in {root}: {run.why()}")
    return run


def _prepare(root: Path, actor: str) -> None:
    """Check the store's own repository; set the identity and the union driver."""
    if not (root / ".git").exists():
        # Without its own .git, git would walk up into the project's repository.
        raise SyncError(
            f"{root} has no git repository of its own; run `kgai-tui init --store "
            f"{root}` (it needs git installed)"
        )
    _must(root, "config", "user.name", actor or "kgai")
    _must(root, "config", "user.email", COMMIT_EMAIL)
    if not _git(root, "config", "--get", "merge.union.driver").ok:
        _must(root, "config", "merge.union.driver", MERGE_DRIVER)


def _commit(root: Path) -> bool:
    """Stage everything, untrack the ignored files, commit if anything changed."""
    _must(root, "add", "-A")
    _must(root, "rm", "--cached", "-q", "--ignore-unmatch", "--", *IGNORED_PATTERNS)
    if not _must(root, "status", "--porcelain").out.strip():
        return False
    _must(root, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "kg sync")
    return True


def _head(root: Path) -> str:
    run = _git(root, "rev-parse", "-q", "--verify", "HEAD")
    return run.out.strip() if run.ok else ""


def _point_origin(root: Path, url: str) -> None:
    current = _git(root, "remote", "get-url", "origin")
    if not current.ok:
        _must(root, "remote", "add", "origin", url)
    elif current.out.strip() != url:
        _must(root, "remote", "set-url", "origin", url)


def _merge(root: Path, url: str) -> bool:
    """Merge ``origin/main`` when it exists; return whether HEAD moved."""
    if not _git(root, "rev-parse", "-q", "--verify", "refs/remotes/origin/main").ok:
        return False
    before = _head(root)
    run = _git(
        root,
        "-c",
        "commit.gpgsign=false",
        "merge",
        "--no-edit",
        "--allow-unrelated-histories",
        "-m",
        "kg sync merge",
        "origin/main",
    )
    if not run.ok:
        _git(root, "merge", "--abort")
        raise SyncError(
            f"merge conflict (unexpected for per-install shards): {run.why(url)}; "
            "the merge was aborted and nothing was pushed"
        )
    return _head(root) != before


def git_sync(root: Path, url: str, *, actor: str) -> GitOutcome:
    """Commit, fetch, merge and push the store's repository (spec 7.1).

    Args:
        root: the store directory (its own git repository).
        url: the remote; ``""`` commits locally only.
        actor: the committer name (``kgai`` when empty).

    Raises:
        SyncError: no git, no repository, a failed commit or a merge conflict.
    """
    _prepare(root, actor)
    committed = _commit(root)
    if not url:
        return GitOutcome(committed=committed, detail=NO_REMOTE)
    _point_origin(root, url)
    fetched = _git(root, "fetch", "-q", "origin", timeout=NETWORK_TIMEOUT)
    if not fetched.ok:
        return GitOutcome(
            committed=committed,
            detail=f"fetch failed (offline?): {fetched.why(url)}",
        )
    pulled = _merge(root, url)
    _git(root, "branch", "-M", "main")
    pushed = _git(root, "push", "-q", "-u", "origin", "main", timeout=NETWORK_TIMEOUT)
    if not pushed.ok:
        return GitOutcome(
            pulled=pulled, committed=committed, detail=f"push failed: {pushed.why(url)}"
        )
    return GitOutcome(pulled=pulled, pushed=True, committed=committed)
