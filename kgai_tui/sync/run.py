"""Running git for ``kgai-tui sync``: a clean environment, no prompt, bounded time.

Every git command of the sync goes through :func:`git`: the environment cannot
redirect it to another repository (``GIT_DIR`` and friends are dropped), it never
waits for a password or reads our standard input, pathspecs are literal (a tracked
name such as ``*`` or ``:(glob)x`` from an old merge means only itself), and
replace refs are ignored. Output is kept as bytes; :attr:`GitRun.text` decodes it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.reads.health import redact
from kgai_tui.core.store.config_file import git_env

__all__ = ["LOCAL_TIMEOUT", "NETWORK_TIMEOUT", "GitRun", "SyncError", "git", "must"]

LOCAL_TIMEOUT: Final = 60.0
NETWORK_TIMEOUT: Final = 120.0


class SyncError(KgaiError):
    """The sync could not be done safely (no git, no repository, a failed commit)."""


@dataclass(frozen=True, slots=True)
class GitRun:
    """One finished git command: success, its stdout bytes and its stderr text."""

    ok: bool
    out: bytes
    err: str

    @property
    def text(self) -> str:
        """stdout as text (git's own messages are ASCII under ``LC_ALL=C``)."""
        return self.out.decode("utf-8", "replace")

    def why(self, url: str = "") -> str:
        """The first non-empty line git printed, with credentials hidden."""
        for line in (self.err + "\n" + self.text).splitlines():
            if line.strip():
                text = line.strip()
                return text.replace(url, redact(url)) if url else text
        return "git failed"


def _env() -> dict[str, str]:
    env = git_env()
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody will type
    env["GIT_LITERAL_PATHSPECS"] = "1"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["LC_ALL"] = "C"
    env.pop("GIT_EDITOR", None)
    return env


def git(
    root: Path, *args: str, stdin: bytes | None = None, timeout: float = LOCAL_TIMEOUT
) -> GitRun:
    """Run ``git args`` in ``root``; a timeout is a failed run, not an exception.

    Raises:
        SyncError: git is not installed or cannot be started.
    """
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=_env(),
        )
    except FileNotFoundError as exc:
        raise SyncError("git is not installed; kgai-tui sync drives git") from exc
    except subprocess.TimeoutExpired:
        return GitRun(False, b"", f"git {args[0]} timed out after {timeout:g} s")
    except OSError as exc:
        raise SyncError(f"cannot run git: {exc.strerror or exc}") from exc
    err = done.stderr.decode("utf-8", "replace")
    return GitRun(done.returncode == 0, done.stdout, err)


def must(root: Path, *args: str, stdin: bytes | None = None) -> GitRun:
    """Run git and require success.

    Raises:
        SyncError: the command failed (its first line of output is the reason).
    """
    run = git(root, *args, stdin=stdin)
    if not run.ok:
        raise SyncError(f"git {args[0]} failed in {root}: {run.why()}")
    return run
