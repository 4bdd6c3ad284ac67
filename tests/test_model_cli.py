"""The CLI reads through the read model, and answers the same without it (issue 17).

Real processes of the installed ``kgai-tui``, a real store written by ``record``, a
real cache directory. Compared byte for byte with ``KGAI_TUI_READ_MODEL=off``
(the whole store loaded, as before the model).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

KGAI_TUI = str(Path(sys.executable).with_name("kgai-tui"))
READS = [
    ["status"],
    ["heads"],
    ["heads", "feature:Invoice"],
    ["history", "feature:Invoice"],
    ["history", "service:Billing"],
    ["resolve", "feature:Invoice"],
    ["conflicts"],
    ["people"],  # the model's per-author totals, the replay's pass over decisions
    ["context", "--about", "invoice pdf"],
    ["context", "--paths", "src/billing/x.py"],
    ["context", "--about", "nothing matches this"],
    ["export", "--canonical"],  # the model's tables, the replay's projection
]


def run(args: list[str], env: dict[str, str], stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        [KGAI_TUI, *args], env=env, input=stdin, capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in proc.stderr
    return proc.stdout


def record(
    store: Path, env: dict[str, str], title: str, element: str, **extra: object
) -> None:
    kind, name = element.split(":")
    doc = {
        "decision": {
            "title": title,
            "rationale": f"because {title.lower()}",
            "mutations": [
                {
                    "op": "upsert_element",
                    "kind": kind,
                    "name": name,
                    "props": {"paths": "src/billing/**"},
                },
                {
                    "op": "add_link",
                    "from": element,
                    "to": "service:Billing",
                    "link": "uses",
                },
            ],
            **extra,
        }
    }
    run(["record", "--store", str(store), "--json"], env, json.dumps(doc).encode())


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = dict(os.environ, KGAI_TUI_CACHE_DIR=str(tmp_path / "cache"))
    root = tmp_path / "store"
    run(["init", "--store", str(root)], env)
    record(root, env, "Invoices are PDFs", "feature:Invoice")
    record(root, env, "Invoices are HTML", "feature:Invoice")  # a conflict
    record(root, env, "Billing owns invoices", "service:Billing")
    return root, env


def answers(root: Path, env: dict[str, str]) -> list[bytes]:
    return [run([*args, "--store", str(root), "--json"], env) for args in READS]


def off(env: dict[str, str], tmp: Path) -> dict[str, str]:
    return dict(env, KGAI_TUI_READ_MODEL="off", KGAI_TUI_CACHE_DIR=str(tmp / "off"))


def model_file(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["KGAI_TUI_CACHE_DIR"]).glob("*/model.sqlite"))


def test_reads_equal_the_whole_store_after_every_write(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = store
    assert answers(root, env) == answers(root, off(env, tmp_path))
    assert model_file(env), "the reads went through a model"
    record(
        root,
        env,
        "Invoices are PDF/A",
        "feature:Invoice",
        supersedes_on=["feature:Invoice"],
    )
    record(root, env, "Search uses Postgres", "feature:Search")
    assert answers(root, env) == answers(root, off(env, tmp_path))
    conflicts = json.loads(run(["conflicts", "--json", "--store", str(root)], env))
    assert conflicts["count"] == 0  # the superseding decision resolved it


def test_the_store_is_untouched_by_reads(store: tuple[Path, dict[str, str]]) -> None:
    root, env = store
    before = sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    )
    answers(root, env)
    after = sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    )
    assert after == before


def test_an_unwritable_cache_still_answers(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = store
    if os.geteuid() == 0:
        # root writes anywhere: a file where the cache directory should be stops it.
        blocked = tmp_path / "blocked"
        blocked.write_text("not a directory")
        env = dict(env, KGAI_TUI_CACHE_DIR=str(blocked))
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        env = dict(env, KGAI_TUI_CACHE_DIR=str(ro))
    assert answers(root, env) == answers(root, off(store[1], tmp_path))


def test_a_first_read_answers_then_the_model_appears(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = store
    env = dict(env, KGAI_TUI_CACHE_DIR=str(tmp_path / "fresh"))
    first = run(["history", "feature:Invoice", "--store", str(root), "--json"], env)
    deadline = time.monotonic() + 60
    while not list(Path(env["KGAI_TUI_CACHE_DIR"]).glob("*/model.sqlite.seal")):
        assert time.monotonic() < deadline, "the model was never written"
        time.sleep(0.1)
    assert (
        run(["history", "feature:Invoice", "--store", str(root), "--json"], env)
        == first
    )


@pytest.mark.parametrize("query", [["billing", "search"], ["--all", "invoices"]])
def test_search_as_of_reads_the_moments_and_answers_as_the_whole_store(
    store: tuple[Path, dict[str, str]], tmp_path: Path, query: list[str]
) -> None:
    """After the first as-of stored the moments, a search as of any cut filters by
    them; the hits are the same bytes as with the model switched off."""
    root, env = store
    run(["as-of", "2020-01-01", "--store", str(root), "--json"], env)
    record(root, env, "Search uses Postgres", "feature:Search")  # a step
    days = ["2020-01-01", "2026-01-01", "2030-01-01", _now_stamp(root)]
    for day in days:
        args = ["search", "--as-of", day, *query, "--json"]
        got = run([*args, "--store", str(root)], env)
        assert got == run([*args, "--store", str(root)], off(env, tmp_path)), day


def _now_stamp(root: Path) -> str:
    """The recorded time of the log's last line (a cut right on a step)."""
    last = max(
        json.loads(line)["recorded_at"]
        for shard in (root / "log").glob("*.ndjson")
        for line in shard.read_bytes().splitlines()
    )
    return str(last)


def test_a_model_damaged_behind_its_seal_is_one_line_and_rebuild_mends_it(
    store: tuple[Path, dict[str, str]],
) -> None:
    """Rows another program removed behind an intact seal are found when a read
    fetches them: the read fails with one line and exit 1 (the JSON failure on
    stdout), never a traceback, and ``rebuild`` makes the model again."""
    import sqlite3

    from kgai_tui.core.model.seal import model_lock, write_seal

    root, env = store
    want = run(["history", "feature:Invoice", "--store", str(root), "--json"], env)
    (path,) = model_file(env)
    with model_lock(path):
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("DELETE FROM dec WHERE ix = 0")
        db.close()
        write_seal(path)
    args = [KGAI_TUI, "history", "feature:Invoice", "--store", str(root), "--json"]
    proc = subprocess.run(args, env=env, capture_output=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "read model kept for this store is damaged" in lines[0]
    assert "kgai-tui rebuild" in lines[0]
    assert json.loads(proc.stdout)["ok"] is False
    run(["rebuild", "--store", str(root)], env)
    assert (
        run(["history", "feature:Invoice", "--store", str(root), "--json"], env) == want
    )
