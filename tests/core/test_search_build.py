"""A full index build made on two cores holds exactly what one process makes.

The helper process (a real interpreter, ``python -m kgai_tui.core.search.build``)
makes the documents of the last part of the decision order as JSON; these tests
compare the indexes term by term (every term of every field with its document
frequency, every stored record and fast field value) and by search results.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from search_stores import mixed_store
from test_hostile_store import build_hostile

from benchmarks.search_suite import make_queries
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search import backend, writer
from kgai_tui.core.search import build as search_build
from kgai_tui.core.search.index import SearchIndex

TEXT_FIELDS = sorted(
    {f for fields in backend.FIELDS.values() for f, _ in fields}
    | set(backend.FILTER_FIELDS)
    | {"flags", backend.EXACT_FIELD}
)


def contents(index: SearchIndex) -> tuple[Any, ...]:
    """Everything the history index holds, independent of document order."""
    history = index._history
    searcher = history.searcher()
    terms = {
        (field, term): count
        for field in TEXT_FIELDS
        for term, count in searcher.terms_with_prefix(field, "", None, None)
    }
    hits = searcher.search(backend.Q.all_query(), max(1, searcher.num_docs)).hits
    addrs = [addr for _, addr in hits]
    keys = searcher.fast_field_values("key", addrs)
    times = searcher.fast_field_values("time", addrs)
    stored = sorted(
        zip(
            keys,
            times,
            (backend.stored_fields(searcher, a) for a in addrs),
            strict=True,
        ),
        key=repr,
    )
    return searcher.num_docs, terms, stored


def build(engine: Engine, cache: Path) -> SearchIndex:
    index = SearchIndex.for_engine(engine, cache_base=cache)
    assert index.info.how == "built"
    return index


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("mixed") / "store"
    mixed_store(root)
    # Module-scoped: the per-test home isolation is not in place yet, so the
    # engine cache goes to a directory of its own, not the user's cache.
    return open_engine(root)


@pytest.fixture
def helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the helper take part at any size."""
    monkeypatch.setattr(search_build, "HELPER_MIN", 0)


@pytest.mark.usefixtures("helper")
def test_two_core_build_equals_the_one_process_build(
    mixed: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = list(search_build.history_items(mixed, writer.all_history_docs))
    made_there = sum(isinstance(item, str) for item in items)
    assert len(items) == len(list(mixed.decision_events()))
    assert len(items) // 2 <= made_there < len(items)  # the helper made its share
    both = build(mixed, tmp_path / "both")
    with monkeypatch.context() as m:
        m.setattr(search_build, "HELPER_MIN", 10**9)
        alone = build(mixed, tmp_path / "alone")
    got, want = contents(both), contents(alone)
    assert got[0] == want[0] == len(list(mixed.decision_events()))
    assert got[1] == want[1] and got[1]
    assert got[2] == want[2]
    queries = [
        *make_queries(mixed.projection, 80),
        '"tax rounding"',
        "Café €",
        "Ghost*",
    ]
    for text in queries:
        for include_all in (False, True):
            assert both.search(text, include_all=include_all) == alone.search(
                text, include_all=include_all
            ), text


@pytest.mark.usefixtures("helper")
def test_a_failed_helper_leaves_its_part_to_this_process(
    mixed: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper that exits non-zero (here: an interpreter that cannot run it)."""
    want = contents(build(mixed, tmp_path / "good"))
    monkeypatch.setattr(sys, "executable", "/bin/false")
    items = search_build.history_items(mixed, writer.all_history_docs)
    assert not any(isinstance(item, str) for item in items)
    assert contents(build(mixed, tmp_path / "failed")) == want


@pytest.mark.usefixtures("helper")
def test_lines_off_the_plain_path_stay_with_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Non-canonical lines are read by the exact path, never by the helper."""
    hostile = build_hostile(tmp_path / "h")
    engine = open_engine(hostile.root)
    assert any(scan.slow for scan in engine.scans)
    both = contents(build(engine, tmp_path / "both"))
    monkeypatch.setattr(search_build, "HELPER_MIN", 10**9)
    assert contents(build(engine, tmp_path / "alone")) == both


def test_a_helper_whose_builder_is_gone_removes_its_output(
    mixed: Engine, tmp_path: Path
) -> None:
    """The helper writes into memory (tmpfs): with nobody left to read it (its
    parent is not the process that started the build), it cleans up and stops."""
    out = tmp_path / "scratch"
    out.mkdir()
    keys = mixed.decision_order()
    search_build._write_spec(mixed, keys, str(out / "work.npz"))
    assert mixed.log_dir is not None
    paths = [str(mixed.log_dir / scan.name) for scan in mixed.scans]
    not_parent = str(os.getpid() + 1_000_000)
    spec = str(out / "work.npz")
    argv = [sys.executable, "-m", search_build.__name__, spec, str(out), not_parent]
    done = subprocess.run([*argv, *paths], check=False)
    assert done.returncode == 1
    assert not out.exists()
    # With its real parent, it writes every chunk, and stays until they are taken.
    out.mkdir()
    search_build._write_spec(mixed, keys, str(out / "work.npz"))
    spec, parent = str(out / "work.npz"), os.getppid()
    codes: list[int] = []
    run = threading.Thread(
        target=lambda: codes.append(search_build._helper(spec, str(out), parent, paths))
    )
    run.start()
    chunk = out / "000000.ndjson"
    deadline = time.monotonic() + 30
    while not chunk.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert run.is_alive() and not codes, "it left before its chunk was taken"
    lines = chunk.read_bytes().splitlines()
    chunk.unlink()
    run.join(30)
    assert codes == [0]
    assert len(lines) == len(keys)


def test_a_helper_done_whose_builder_dies_removes_its_output(
    mixed: Engine, tmp_path: Path
) -> None:
    """Every chunk written, none taken, and the building process is killed: the
    helper removes its output (it would otherwise stay in memory, in tmpfs)."""
    out = tmp_path / "scratch"
    out.mkdir()
    search_build._write_spec(mixed, mixed.decision_order(), str(out / "work.npz"))
    assert mixed.log_dir is not None
    paths = [str(mixed.log_dir / scan.name) for scan in mixed.scans]
    builder = (
        "import os, subprocess, sys, time\n"
        "spec, out, *paths = sys.argv[1:]\n"
        "subprocess.Popen([sys.executable, '-m', 'kgai_tui.core.search.build',"
        " spec, out, str(os.getpid()), *paths])\n"
        "time.sleep(120)\n"
    )
    spec = str(out / "work.npz")
    proc = subprocess.Popen([sys.executable, "-c", builder, spec, str(out), *paths])
    try:
        chunk = out / "000000.ndjson"
        deadline = time.monotonic() + 60
        while not chunk.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert chunk.exists(), "the helper wrote nothing"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not out.exists(), "the helper left its output behind"
