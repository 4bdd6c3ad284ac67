"""Store discovery precedence, through the console script run from real directories.

--store beats KGAI_STORE beats KGAI_PROJECT/.kgai/store beats the main git worktree's
.kgai/store (also from a linked worktree) beats ./.kgai/store outside git (spec 1.1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def make_store(root: Path, label: str) -> Path:
    """A one-decision store whose element name is ``label``."""
    writer = ShardWriter("i-" + label)
    writer.add(
        decision(f"{label} decided", [upsert("concept", label)]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    return write_store(root, {f"i-{label}.ndjson": writer.to_bytes()})


def git(*args: str, cwd: Path) -> None:
    """Run git quietly with a fixed identity."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@dataclass
class Layout:
    """A main worktree, a linked worktree beside it and one nested in it."""

    main: Path
    linked: Path
    nested: Path
    plain: Path
    project: Path
    env_store: Path
    flag_store: Path


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """Real git repositories and a store at every level discovery looks at."""
    base = tmp_path_factory.mktemp("discovery").resolve()
    main = base / "main"
    main.mkdir()
    git("init", "-q", "-b", "trunk", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=main)
    git("worktree", "add", "-q", str(base / "linked"), cwd=main)
    git("worktree", "add", "-q", "nested", cwd=main)
    lay = Layout(
        main=main,
        linked=base / "linked",
        nested=main / "nested",
        plain=base / "plain",
        project=base / "project",
        env_store=base / "env-store",
        flag_store=base / "flag-store",
    )
    make_store(main / ".kgai" / "store", "main")
    make_store(main / "sub" / ".kgai" / "store", "main-sub")
    make_store(lay.linked / ".kgai" / "store", "linked")
    make_store(lay.linked / "sub" / ".kgai" / "store", "linked-sub")
    make_store(lay.nested / ".kgai" / "store", "nested")
    make_store(lay.plain / ".kgai" / "store", "plain")
    make_store(lay.project / ".kgai" / "store", "project")
    make_store(lay.env_store, "env")
    make_store(lay.flag_store, "flag")
    return lay


def found(cwd: Path, *args: str, **env: str) -> Path:
    """The store root that `status --json` run in ``cwd`` chose."""
    proc = subprocess.run(
        [KGAI_TUI, "status", "--json", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["decisions"] == 1
    return Path(report["root"]).resolve()


def test_store_flag_beats_everything(layout: Layout) -> None:
    """--store wins over KGAI_STORE, KGAI_PROJECT and the git worktree."""
    got = found(
        layout.linked,
        "--store",
        str(layout.flag_store),
        KGAI_STORE=str(layout.env_store),
        KGAI_PROJECT=str(layout.project),
    )
    assert got == layout.flag_store


def test_kgai_store_beats_project_and_git(layout: Layout) -> None:
    """KGAI_STORE wins over KGAI_PROJECT and the git worktree."""
    got = found(
        layout.linked,
        KGAI_STORE=str(layout.env_store),
        KGAI_PROJECT=str(layout.project),
    )
    assert got == layout.env_store


def test_empty_kgai_store_is_ignored(layout: Layout) -> None:
    """An empty KGAI_STORE counts as unset, so KGAI_PROJECT decides."""
    got = found(layout.main, KGAI_STORE="", KGAI_PROJECT=str(layout.project))
    assert got == layout.project / ".kgai" / "store"


def test_kgai_project_beats_git(layout: Layout) -> None:
    """KGAI_PROJECT/.kgai/store wins over the main worktree's store."""
    got = found(layout.linked / "sub", KGAI_PROJECT=str(layout.project))
    assert got == layout.project / ".kgai" / "store"


@pytest.mark.parametrize("where", ["linked", "linked/sub", "main/nested", "main/sub"])
def test_git_main_worktree_beats_cwd(layout: Layout, where: str) -> None:
    """Inside any worktree (or a sub-directory) the MAIN worktree's store is found."""
    cwd = layout.main.parent / where
    assert (cwd / ".kgai" / "store" / "log").is_dir()  # a decoy right here
    assert found(cwd) == layout.main / ".kgai" / "store"


def test_cwd_store_outside_git(layout: Layout) -> None:
    """Outside git, ./.kgai/store is the store."""
    assert found(layout.plain) == layout.plain / ".kgai" / "store"


def test_linked_worktree_without_main_store_finds_nothing(tmp_path: Path) -> None:
    """With no store in the main worktree, a linked worktree's own store is not used."""
    main, linked = tmp_path / "m", tmp_path / "w"
    main.mkdir()
    git("init", "-q", "-b", "trunk", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=main)
    git("worktree", "add", "-q", str(linked), cwd=main)
    make_store(linked / ".kgai" / "store", "decoy")
    proc = subprocess.run(
        [KGAI_TUI, "status", "--text"], cwd=linked, capture_output=True, check=False
    )
    assert proc.returncode == 3, proc.stdout
    assert str(main / ".kgai" / "store") in proc.stderr.decode()
    piped = subprocess.run(
        [KGAI_TUI, "status", "--json"], cwd=linked, capture_output=True, check=False
    )
    assert (
        piped.returncode == 0 and str(main / ".kgai" / "store") in piped.stdout.decode()
    )
    assert not (main / ".kgai").exists()


def test_separate_git_dir_keeps_its_own_top_level(tmp_path: Path) -> None:
    """A --separate-git-dir checkout is its own project root (not the git dir's parent)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "gd").mkdir()
    git(
        "init",
        "-q",
        "-b",
        "trunk",
        f"--separate-git-dir={tmp_path / 'gd' / '.git'}",
        cwd=repo,
    )
    make_store(repo / ".kgai" / "store", "sep")
    (repo / "deep").mkdir()
    assert found(repo / "deep") == repo / ".kgai" / "store"
