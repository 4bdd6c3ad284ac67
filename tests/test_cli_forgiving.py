"""The CLI forgives the mistakes people make (issue 18, points 2, 3, 4 and 8).

Every test runs the installed console script as a real process and checks the exact
exit code and the key words of its message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import as_person

from kgai_tui import __version__
from kgai_tui.demo import DEMO_STORE

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")

DECISION = {
    "decision": {
        "title": "Invoices are PDFs",
        "rationale": "Customers asked.",
        "author": "alice",
        "mutations": [{"op": "upsert_element", "kind": "feature", "name": "Invoice"}],
    }
}


def run(
    *args: str, cwd: Path | None = None, stdin: bytes | None = b"", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``kgai-tui ARGS`` with stdin given (never a terminal), output captured."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        input=None if stdin is None else stdin.decode(),
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=os.environ.copy(),
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the bundled demo store."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target


# Point 2: a word that is neither a command nor a directory is a typo.


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["stauts"], "status"),
        (["histroy", "feature:Invoice"], "history"),
        (["serach", "invoice"], "search"),
    ],
)
def test_a_typo_is_no_such_command_with_a_suggestion(
    tmp_path: Path, args: list[str], suggestion: str
) -> None:
    out = run(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"No such command '{args[0]}'" in out.stderr
    assert f"Did you mean '{suggestion}'?" in out.stderr
    assert "no kgai store" not in out.stderr
    assert out.stdout == ""


def test_help_as_a_word_is_no_such_command(tmp_path: Path) -> None:
    out = run("help", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "No such command 'help'" in out.stderr
    assert "kgai-tui --help" in out.stderr


def test_a_missing_path_is_no_such_command(tmp_path: Path) -> None:
    out = run(str(tmp_path / "nowhere"), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "No such command" in out.stderr and "no such directory" in out.stderr


def test_an_existing_directory_still_opens(demo: Path) -> None:
    """A directory falls through to ``open`` (which, without a terminal, refuses)."""
    out = run(str(demo), stdin=None, timeout=20)
    assert out.returncode == 2, out.stderr
    assert "needs a terminal" in out.stderr
    assert "No such command" not in out.stderr


# Point 3: without a terminal the explorer refuses at once.


@pytest.mark.parametrize("how", ["store", "bare", "demo"])
def test_the_explorer_without_a_terminal_exits_at_once(
    demo: Path, tmp_path: Path, how: str
) -> None:
    args = {"store": ["--store", str(demo)], "bare": [], "demo": ["--demo"]}[how]
    proc = subprocess.run(
        [KGAI_TUI, *as_person(args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=tmp_path,
        timeout=20,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert "\x1b" not in err
    assert err.count("\n") == 1
    assert "needs a terminal" in err
    for command in ("status", "heads", "history", "search", "context", "--json"):
        assert command in err


# Point 4: usage errors with --json print the failure JSON too.


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["history", "--json"], "Missing argument"),
        (["status", "--bogus", "--json"], "--bogus"),
        (["stauts", "--json"], "No such command"),
        (["context", "--max", "many", "--json"], "--max"),
        (["import", "adr", "--json"], "Missing argument"),
    ],
)
def test_json_usage_errors_print_the_failure_json(
    demo: Path, args: list[str], key: str
) -> None:
    out = run(*args, cwd=demo.parent)
    assert out.returncode == 2, out.stderr
    obj = json.loads(out.stdout)
    assert obj["ok"] is False and key in obj["error"]
    assert (
        out.stdout
        == json.dumps(
            {"error": obj["error"], "ok": False}, indent=2, ensure_ascii=False
        )
        + "\n"
    )
    assert out.stderr.startswith("kgai-tui: ") and key in out.stderr
    assert out.stderr.count("\n") == 1
    # Without --json, click's usage message as before, and nothing on stdout.
    plain = run(*[a for a in args if a != "--json"], cwd=demo.parent)
    assert plain.returncode == 2 and plain.stdout == ""
    assert "Usage:" in plain.stderr and key in plain.stderr


# Point 8: kg's names and record --file.


def test_record_takes_file_like_kg_ingest(tmp_path: Path) -> None:
    store = tmp_path / "s"
    assert run("init", "--store", str(store)).returncode == 0
    doc = tmp_path / "d.json"
    doc.write_text(json.dumps(DECISION))
    out = run("record", "--store", str(store), "--file", str(doc), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["decisions"][0]["title"] == "Invoices are PDFs"
    again = run("ingest", "--store", str(store), "--file", str(doc), "--dry-run")
    assert again.returncode == 0, again.stderr
    assert "already recorded" in again.stdout or "would record" in again.stdout


def test_record_refuses_file_twice(tmp_path: Path) -> None:
    doc = tmp_path / "d.json"
    doc.write_text(json.dumps(DECISION))
    out = run("record", str(doc), "--file", str(doc), "--store", str(tmp_path / "s"))
    assert out.returncode == 2, out.stderr
    assert "not both" in out.stderr and "--file" in out.stderr


def test_ingest_is_record(tmp_path: Path) -> None:
    store = tmp_path / "s"
    assert run("init", "--store", str(store)).returncode == 0
    out = run("ingest", "--store", str(store), stdin=json.dumps(DECISION).encode())
    assert out.returncode == 0, out.stderr
    assert "recorded “Invoices are PDFs”" in out.stdout


def test_info_is_status(demo: Path) -> None:
    info = run("info", "--store", str(demo), "--json")
    status = run("status", "--store", str(demo), "--json")
    assert info.returncode == 0 == status.returncode, info.stderr
    assert info.stdout == status.stdout and '"ok": true' in info.stdout


def test_version_is_dash_dash_version(tmp_path: Path) -> None:
    word, flag = run("version", cwd=tmp_path), run("--version", cwd=tmp_path)
    assert word.returncode == 0 == flag.returncode, word.stderr
    assert word.stdout == flag.stdout and __version__ in word.stdout


def test_aliases_are_hidden_from_the_command_list(tmp_path: Path) -> None:
    out = run("--help", cwd=tmp_path)
    assert out.returncode == 0
    listed = {
        line.split()[0]
        for line in out.stdout.split("Commands:", 1)[1].splitlines()
        if line.startswith("  ") and line.split()
    }
    assert {"record", "status"} <= listed
    assert not {"ingest", "info", "version"} & listed
    assert "ingest" in out.stdout and "info" in out.stdout  # named as aliases
