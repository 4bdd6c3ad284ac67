"""Issue 15 point 7: an install id from ``kg.config.json`` can never name a path.

A hostile or broken config (``"install_id": "../../escaped"`` and friends, in
``install_id`` or in ``retired_installs``) makes every write refuse with one line
(exit 1) and write nothing anywhere, not in the store and not next to it, while
reads, which need no install id, still answer. An empty ``install_id`` is the
reference's "not minted yet": a write mints one inside the store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgai_tui.core.store.config_file import CONFIG_NAME
from kgai_tui.core.write.writes import init_store, record

CLI = [sys.executable, "-m", "kgai_tui"]
UPSERT = {"op": "upsert_element", "kind": "feature", "name": "X"}
DOC = json.dumps({"decision": {"title": "written under a hostile id"}})

BAD_IDS = [
    "../../escaped",
    "i/../x",
    "../i-ana",
    "I-UPPER",
    "i" + "a" * 199,
    "i\x1b]0;PWNED\x07",
    "i-ok\n",
    "i\u202eevil",
    ".",
    "i.ndjson",
]


def _kgai(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _tree(top: Path) -> dict[str, bytes]:
    """Every file under ``top`` (the store and everything around it), by path."""
    out: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(top):
        for name in names:
            path = Path(dirpath) / name
            out[str(path.relative_to(top))] = path.read_bytes()
    return out


@pytest.fixture
def nest(tmp_path: Path) -> tuple[Path, Path]:
    """A store two directories deep (so ``../../`` still lands inside tmp_path)."""
    top = tmp_path / "top"
    root = top / "a" / "store"
    init_store(root, actor="alice")
    record(root, json.dumps({"decision": {"title": "before", "mutations": [UPSERT]}}))
    return top, root


def _poison(root: Path, field: str, value: str) -> None:
    cfg = json.loads((root / CONFIG_NAME).read_text())
    if field == "retired_installs":
        cfg[field] = ["i0123456789abcdef", value]
    else:
        cfg[field] = value
    (root / CONFIG_NAME).write_text(json.dumps(cfg, indent=2) + "\n")


CASES = [
    *((field, bad) for field in ("install_id", "retired_installs") for bad in BAD_IDS),
    ("retired_installs", ""),  # an empty install_id means "mint one" (see below)
]


@pytest.mark.parametrize(
    ("field", "bad"), CASES, ids=lambda v: repr(v)[:24] if isinstance(v, str) else v
)
def test_a_bad_install_id_refuses_writes_and_writes_nothing(
    nest: tuple[Path, Path], field: str, bad: str
) -> None:
    """record (and dry run, resolve-conflict, init, sync): exit 1, one line, no file."""
    top, root = nest
    _poison(root, field, bad)
    before = _tree(top.parent)
    commands = [["record", "--store", str(root)]]
    if bad in ("../../escaped", ""):  # every write command, for two of the cases
        commands += [
            ["record", "--dry-run", "--store", str(root)],
            ["resolve-conflict", "feature:X", "--title", "t", "--store", str(root)],
            ["init", "--store", str(root)],
            ["sync", "--store", str(root), "--remote", str(top / "remote.git")],
        ]
    for args in commands:
        done = _kgai(*args, stdin=DOC)
        context = (args[0], field, bad, done.returncode, done.stderr)
        assert done.returncode == 1, context
        assert "Traceback" not in done.stderr, context
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("kgai-tui: "), context
        assert "install id" in lines[0] and CONFIG_NAME in lines[0], context
        assert "\x1b" not in lines[0] and "\u202e" not in lines[0], context
        assert _tree(top.parent) == before, context
    assert not list(top.parent.rglob("escaped*"))


@pytest.mark.parametrize("field", ["install_id", "retired_installs"])
def test_reads_still_answer_on_a_store_with_a_bad_install_id(
    nest: tuple[Path, Path], field: str
) -> None:
    """A read needs no install id: status, heads and history answer as before."""
    _, root = nest
    _poison(root, field, "../../escaped")
    for args in (["status"], ["heads"], ["history", "feature:X"], ["conflicts"]):
        done = _kgai(*args, "--store", str(root), "--json")
        assert done.returncode == 0, (args, done.stderr)
        assert json.loads(done.stdout)["ok"] is not False


def test_an_empty_install_id_is_minted_inside_the_store(
    nest: tuple[Path, Path],
) -> None:
    """``""`` is the reference's "no identity yet": a write mints one, in log/."""
    top, root = nest
    _poison(root, "install_id", "")
    done = _kgai("record", "--store", str(root), stdin=DOC)
    assert done.returncode == 0, done.stderr
    minted = json.loads((root / CONFIG_NAME).read_text())["install_id"]
    assert minted.startswith("i") and len(minted) == 17
    assert (root / "log" / f"{minted}.ndjson").is_file()
    assert sorted(p.name for p in top.rglob("*.ndjson")) == sorted(
        p.name for p in (root / "log").glob("*.ndjson")
    )


@pytest.mark.parametrize("field", ["install_id", "retired_installs"])
def test_doctor_reports_a_bad_install_id(nest: tuple[Path, Path], field: str) -> None:
    """Doctor names the refusal every write would meet (exit 1), escaped."""
    _, root = nest
    _poison(root, field, "../../escaped\x1b[2J")
    done = _kgai("doctor", "--store", str(root), "--json")
    assert done.returncode == 1, done.stderr
    problems = json.loads(done.stdout)["problems"]
    assert any(
        f"{field}: install id '../../escaped\\\\x1b[2J' is not valid" in p
        for p in problems
    ), problems
    _poison(root, field, "i-fine")
    assert _kgai("doctor", "--store", str(root)).returncode == 0
