"""Start-up: a command imports only what it needs (issue 17, point 5).

Each command runs as its own process under ``python -X importtime -m kgai_tui``
and the modules it loaded are read from the import log. This checks which modules
load, never how long anything takes: ``--version`` and ``--help`` load none of the
heavy libraries, a read on the store loads no search index, terminal UI or MCP.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kgai_tui.cli.lazy import LAZY_COMMANDS
from kgai_tui.cli.main import all_commands
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
    # The log is there and names the launcher: an empty set would pass every test.
    assert "kgai_tui.cli.launch" in names, out.stderr[-2000:]
    return names


LAZY_MODULES = {lazy.module for lazy in LAZY_COMMANDS.values()}


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


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["version"]])
def test_version_is_answered_before_click(args: list[str]) -> None:
    """The version needs no command line parser: neither click nor the CLI loads."""
    names = loaded(*args)
    assert sorted(names & {"click", "kgai_tui.cli.main", "kgai_tui.core"}) == []


def test_version_prints_what_click_would() -> None:
    """The early answer is byte for byte click's ``version_option`` line."""
    from click.testing import CliRunner

    from kgai_tui.cli.main import main

    early = subprocess.run(
        [sys.executable, "-m", "kgai_tui", "--version"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    # "--version --help" is not the early path: click answers (the version wins).
    late = CliRunner().invoke(main, ["--version", "--help"])
    assert late.exit_code == 0
    assert early.stdout == late.stdout_bytes == b"kgai-tui, version 0.1.0\n"
    assert early.stderr == b""


def test_help_imports_no_other_cli_module() -> None:
    """``--help`` lists the lazy commands from their table, importing none of them."""
    names = loaded("--help")
    assert sorted(names & LAZY_MODULES) == []


def test_the_lazy_table_says_what_the_commands_say() -> None:
    """Each lazy command's listed help and hidden flag are the command's own."""
    commands = all_commands()
    for name, lazy in LAZY_COMMANDS.items():
        command = commands[name]
        assert command.name == name
        assert lazy.short_help == command.get_short_help_str(limit=sys.maxsize), name
        assert lazy.hidden == command.hidden, name


def test_help_lists_the_same_commands_after_they_load() -> None:
    """The command list reads the same whether the lazy commands loaded or not."""

    def help_text(first: str) -> str:
        code = (
            "from kgai_tui.cli.main import all_commands, main\n"
            f"{first}\n"
            "main(['--help'], prog_name='kgai-tui')"
        )
        return subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout

    cold = help_text("pass")
    assert cold == help_text("all_commands()")
    listed = cold.split("Commands:\n", 1)[1].splitlines()
    names = {
        line.split()[0] for line in listed if line.startswith("  ") and line[2] != " "
    }
    assert {"resolve-conflict", "people", "sync", "history"} <= names
    assert not names & {"bench", "ingest", "info", "version"}  # hidden


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
    """``history`` neither: it answers from the projection alone, and imports none
    of the other CLI modules (writes, sync, MCP, search, reports)."""
    names = loaded("history", "feature:Invoice", "--json", "--store", str(demo))
    assert sorted(names & {"tantivy", "textual", "mcp"}) == []
    assert sorted(names & LAZY_MODULES) == []


def test_search_loads_no_ui_or_mcp(demo: Path) -> None:
    """``search`` loads its index (tantivy) and nothing of the UI or MCP."""
    names = loaded("search", "invoice", "--json", "--store", str(demo))
    assert "tantivy" in names
    assert sorted(names & {"textual", "mcp"}) == []


def test_the_mcp_server_starts_without_the_whole_store_libraries() -> None:
    """An agent's server answers its reads from the read model: NumPy, NetworkX,
    tantivy and Textual load only when a tool needs the whole store or search."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import kgai_tui.mcp.server"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in out.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "mcp" in names, out.stderr[-2000:]
    assert sorted(names & {"numpy", "networkx", "tantivy", "textual"}) == []


def test_record_on_a_built_model_loads_no_networkx(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``record`` replays its decision onto the model's stored graph without
    NetworkX (its import is most of a write's start-up), and what it wrote reads
    back the same from the extended model as from a replay with the model off."""
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    kg = [sys.executable, "-m", "kgai_tui"]
    subprocess.run([*kg, "init", "--store", str(demo)], check=True, timeout=60)
    # A read builds the model, so that record extends it in place.
    subprocess.run(
        [*kg, "status", "--json", "--store", str(demo)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    doc = tmp_path / "d.json"
    doc.write_text(
        '{"decision": {"title": "Invoices carry a QR code", "rationale": "Banks",'
        ' "author": "alice", "mutations": [{"op": "add_link", "from": "feature:Invoice",'
        ' "to": "service:Billing", "link": "uses"}]}}'
    )
    names = loaded("record", "--store", str(demo), "--file", str(doc), "--json")
    assert sorted(names & {"networkx", "numpy", "tantivy", "textual", "mcp"}) == []

    def history(model: str) -> str:
        env = {**os.environ, "KGAI_TUI_READ_MODEL": model}
        return subprocess.run(
            [*kg, "history", "feature:Invoice", "--json", "--store", str(demo)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
            env=env,
        ).stdout

    answer = history("on")
    assert "Invoices carry a QR code" in answer
    assert answer == history("off")
