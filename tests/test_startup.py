"""Start-up: a command imports only what it needs (issue 17, point 5).

Each command runs as its own process under ``python -X importtime -m kgai_tui``
and the modules it loaded are read from the import log. This checks which modules
load, never how long anything takes: ``--version`` and ``--help`` load none of the
heavy libraries, a read on the store loads no search index, terminal UI or MCP.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kgai_tui.demo import DEMO_STORE

HEAVY = ("numpy", "networkx", "tantivy", "textual", "mcp")


def loaded(*args: str) -> set[str]:
    """Run ``kgai-tui ARGS`` in a fresh interpreter; the top-level modules it imported."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kgai_tui", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    names = set()
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name)
            names.add(name.split(".")[0])
    # The log is there and names the CLI: an empty set would pass every test below.
    assert "kgai_tui.cli.main" in names, out.stderr[-2000:]
    return names


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the bundled demo store (reads may write caches; never beside it)."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_heavy_library(flag: str) -> None:
    """``--version`` and ``--help`` import neither the engine's libraries nor the
    search index, the terminal UI or the MCP server."""
    assert sorted(loaded(flag) & set(HEAVY)) == []


def test_version_and_help_do_not_open_the_engine() -> None:
    """The engine and the projection load only when a command opens a store."""
    names = loaded("--help")
    assert "kgai_tui.core.engine.engine" not in names
    assert "kgai_tui.core.replay.projection" not in names


def test_status_json_loads_no_search_ui_or_mcp(demo: Path) -> None:
    """A read on the store loads no search index, terminal UI or MCP server."""
    names = loaded("status", "--json", "--store", str(demo))
    assert sorted(names & {"tantivy", "textual", "mcp"}) == []


def test_history_json_loads_no_search_ui_or_mcp(demo: Path) -> None:
    """``history`` neither: it answers from the projection alone."""
    names = loaded("history", "feature:Invoice", "--json", "--store", str(demo))
    assert sorted(names & {"tantivy", "textual", "mcp"}) == []


def test_search_loads_no_ui_or_mcp(demo: Path) -> None:
    """``search`` loads its index (tantivy) and nothing of the UI or MCP."""
    names = loaded("search", "invoice", "--json", "--store", str(demo))
    assert "tantivy" in names
    assert sorted(names & {"textual", "mcp"}) == []
