"""Conventions a newcomer meets first: shell completion, a tidy ``--help``, and
package metadata with ranges (pins only where the snapshots need them).

The commands run the real installed console script in a subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script with ``env`` added to the environment."""
    return subprocess.run(
        [KGAI_TUI, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


def complete(words: str) -> list[str]:
    """What bash completion offers after ``words`` (click's bash_complete protocol:
    ``COMP_WORDS`` is the line, ``COMP_CWORD`` the index of the word completed; each
    answer line is ``type,value``)."""
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    done = run(
        _KGAI_TUI_COMPLETE="bash_complete", COMP_WORDS=words, COMP_CWORD=str(cword)
    )
    assert done.returncode == 0, done.stderr
    return [line.split(",", 1)[1] for line in done.stdout.splitlines()]


def test_bash_completion_offers_command_names() -> None:
    """``kgai-tui his<TAB>`` offers ``history``; hidden commands are not offered."""
    assert complete("kgai-tui his") == ["history"]
    offered = complete("kgai-tui ")
    assert {"history", "status", "search", "mcp", "open"} <= set(offered)
    assert not {"bench", "ingest", "info", "version"} & set(offered)
    assert "--json" in complete("kgai-tui history --")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_printed(shell: str) -> None:
    """The documented ``_KGAI_TUI_COMPLETE={shell}_source`` prints a script."""
    done = run(_KGAI_TUI_COMPLETE=f"{shell}_source")
    assert done.returncode == 0 and "_KGAI_TUI_COMPLETE" in done.stdout


def command_rows(help_text: str) -> dict[str, str]:
    """The Commands section of a help page: name -> its one-liner (wraps joined)."""
    section = help_text.split("\nCommands:\n", 1)[1]
    rows: dict[str, str] = {}
    name = ""
    for line in section.splitlines():
        match = re.match(r"  (\S+)\s+(.*)$", line)
        if match:
            name, text = match.groups()
            rows[name] = text
        elif line.strip():
            rows[name] += " " + line.strip()
    return rows


@pytest.mark.parametrize("columns", ["80", "50"])
def test_help_one_liners_are_whole_sentences(columns: str) -> None:
    """No one-liner is cut with "..." or carries RST markup, at any width."""
    done = run("--help", COLUMNS=columns)
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("\nCommands:\n", 1)[1]
    for line in section.splitlines():  # (the usage line's "[ARGS]..." is click's)
        assert not line.rstrip().endswith("..."), line
    assert "``" not in done.stdout
    rows = command_rows(done.stdout)
    assert "bench" not in rows
    for name, text in rows.items():
        assert text.endswith("."), (name, text)
        assert len(text) <= 60, (name, text)  # short: one line at 80 columns


@pytest.mark.parametrize("group", ["import", "bench"])
def test_group_one_liners_are_whole_sentences(group: str) -> None:
    """The sub-command lists of ``import`` and ``bench`` follow the same rule."""
    done = run(group, "--help", COLUMNS="80")
    assert done.returncode == 0, done.stderr
    assert "``" not in done.stdout
    for name, text in command_rows(done.stdout).items():
        assert text.endswith(".") and not text.endswith("..."), (name, text)


def test_bench_is_hidden_but_still_runs() -> None:
    """``bench`` is left out of ``--help`` and works when named."""
    assert "bench" not in command_rows(run("--help").stdout)
    done = run("bench", "--help")
    assert done.returncode == 0 and "Usage: kgai-tui bench" in done.stdout


def test_pyproject_declares_ranges_urls_classifiers_and_a_license() -> None:
    """Runtime dependencies are ranges; the snapshot pins live in the test extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    for requirement in project["dependencies"]:
        assert "==" not in requirement, requirement
        assert "<" in requirement, f"{requirement} has no upper bound"
    test_extra = project["optional-dependencies"]["test"]
    pinned = {r.split("==")[0].strip() for r in test_extra if "==" in r}
    assert {"textual", "rich"} <= pinned  # the snapshot SVGs depend on them
    assert project["license"] == "MIT"  # an SPDX expression (PEP 639)
    assert {"Homepage", "Documentation", "Issues", "Source"} <= set(project["urls"])
    assert all(url.startswith("https://") for url in project["urls"].values())
    assert "Typing :: Typed" in project["classifiers"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])
    assert project["keywords"]
