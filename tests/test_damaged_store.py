"""Any file of the one derived store damaged: every read still answers as the log does.

A store's cache directory holds all that is derived from its log (the read model,
its write-ahead log and seal, the recall files, the time index, the query graph,
the search index). A file there may be cut short, get a byte changed in place, or
go: a full disk, a killed process, another program. Whatever happened, every read
answers exactly what the whole replay of the log answers (``KGAI_TUI_READ_MODEL=
off``, the oracle), with no error: a damaged part is built again, never believed
(issue 40's acceptance).

Before this test, two parts were believed: a search index file changed in place
at its own size (other scores, or a failure inside tantivy), and a query graph cut
short behind its stamp (the query failed inside the database).

The reads run in this process, through the command line's own entry point, each
one as a fresh invocation, so that a case costs about a second. Two things keep
that faithful to separate processes: a thread stays alive while they run, so a
first read builds in this process rather than in a detached child (a child would
write the cache while the next case damages it), and no engine of an earlier read
is still held when a file is damaged (a process that maps a file another one cuts
short is killed by SIGBUS; a reader that is another process is not affected).
"""

from __future__ import annotations

import gc
import os
import random
import re
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kgai_tui.cli.support as cli_support
from kgai_tui.cli.main import main
from kgai_tui.core.store import shard_print
from kgai_tui.core.store.shard_print import SETTLE_NS
from kgai_tui.demo import DEMO_STORE

PAYMENTS = "el_7afad531e3f0096a1da2"  # contested in the demo store
CUT = "2026-03-01"
#: Damage to a file: cut short, a byte changed in place, deleted, or replaced by
#: what another program could leave there (a FIFO a read would block on, a
#: directory a rename cannot replace, a link to ``/dev/zero`` or to another file).
HOW = ("truncate", "byte", "delete", "fifo", "directory", "zero", "link")
#: Seconds a read may take before the test calls it hung (a demo store read
#: takes well under one).
HUNG = 60


def _reads(store: Path) -> list[list[str]]:
    """Every read a face offers, the time-based ones at a cut: each part of the
    derived store is read by at least one."""
    at = ["--store", str(store)]
    names = "MATCH (e:Element) RETURN e.name AS n, e.kind AS k ORDER BY n, k"
    return [
        ["status", *at, "--json"],
        ["heads", *at, "--json"],
        ["history", PAYMENTS, *at, "--json"],
        ["conflicts", *at, "--json"],
        ["context", "--about", "payments", *at, "--json"],
        ["as-of", CUT, *at, "--json"],
        ["as-of", "2026-02-10T12:00:00Z", *at, "--json"],
        ["search", "payments", *at, "--json"],
        ["search", "--as-of", CUT, "payments", *at, "--json"],
        ["people", *at, "--json"],
        ["people", "--as-of", CUT, *at, "--json"],
        ["stale", *at, "--json"],
        ["export", "--canonical", *at],
        ["diff", "2026-01-01", "2026-04-01", *at, "--json"],
        ["query", names, *at, "--json"],
        ["query", names, "--as-of", CUT, *at, "--json"],
        ["report", *at],
    ]


def _run(args: list[str], cache: Path, *, model: bool = True) -> tuple[int, str]:
    env = {"KGAI_TUI_CACHE_DIR": str(cache), "KGAI_TUI_NOW": "2026-06-15T00:00:00Z"}
    if not model:
        env["KGAI_TUI_READ_MODEL"] = "off"
    result = CliRunner().invoke(main, args, env=env, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args[0]} raised {result.exception!r}")
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The demo store, and a scratch directory; no fork while the module runs."""
    base = tmp_path_factory.mktemp("damaged")
    store = base / "store"
    shutil.copytree(DEMO_STORE, store)
    # Shards settled (their change time 3 s old): reads then keep their prints in
    # the cache too (prints.json), and the property damages that file as well.
    time.sleep(SETTLE_NS / 1e9 + 0.2)
    stop = threading.Event()
    keeper = threading.Thread(target=stop.wait, daemon=True)
    keeper.start()
    try:
        yield store, base
    finally:
        stop.set()
        keeper.join()


@pytest.fixture(scope="module")
def oracle(world: tuple[Path, Path]) -> list[tuple[int, str]]:
    store, base = world
    answers = [_run(args, base / "oracle", model=False) for args in _reads(store)]
    assert all(code == 0 for code, _ in answers)
    return answers


def _new_process() -> None:
    """Forget what this process keeps between reads as a new process would: the
    settled shard prints (a process that knows them never writes prints.json)."""
    shard_print._SETTLED.clear()
    shard_print._SEEDED.clear()


def _fresh(store: Path, cache: Path) -> list[Path]:
    """A cache with every part built (every read run once), none of it held open
    here; its files, lock files left out (their bytes mean nothing)."""
    shutil.rmtree(cache, ignore_errors=True)
    _new_process()
    for args in _reads(store):
        assert _run(args, cache)[0] == 0
    cli_support._HELD.clear()
    gc.collect()
    return sorted(
        p
        for p in cache.rglob("*")
        if p.is_file() and not p.name.endswith(".lock") and p.name != "lock"
    )


def _damage(path: Path, how: str, rnd: random.Random, other: Path) -> None:
    size = path.stat().st_size
    if how in ("delete", "fifo", "directory", "zero", "link"):
        path.unlink()
        if how == "fifo":
            os.mkfifo(path)
        elif how == "directory":
            path.mkdir()
        elif how == "zero":
            path.symlink_to("/dev/zero")
        elif how == "link":
            path.symlink_to(other)
    elif how == "truncate":
        with open(path, "r+b") as fh:
            fh.truncate(rnd.randrange(size) if size else 0)
    elif size:  # one byte changed in place: the file keeps its size
        at = rnd.randrange(size)
        with open(path, "r+b") as fh:
            fh.seek(at)
            old = fh.read(1)[0]
            fh.seek(at)
            fh.write(bytes([(old + 1 + rnd.randrange(255)) % 256]))


def _role(path: Path, cache: Path) -> str:
    """The file's part of the store, without the names a build makes up."""
    return re.sub(r"[0-9a-f]{12,}", "*", str(path.relative_to(cache)))


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_every_read_answers_as_the_log_does_whatever_file_was_damaged(
    world: tuple[Path, Path], oracle: list[tuple[int, str]], data: st.DataObject
) -> None:
    store, base = world
    cache = base / "cache"
    files = _fresh(store, cache)
    # A number, not the path: a build names its search segments anew each time.
    k = data.draw(st.integers(0, 2**16), label="file")
    victim, other = files[k % len(files)], files[(k + 1) % len(files)]
    how = data.draw(st.sampled_from(HOW), label="how")
    rnd = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
    reads = _reads(store)
    order = data.draw(st.permutations(range(len(reads))), label="order")
    role = _role(victim, cache)
    _damage(victim, how, rnd, other)
    for i in order:
        signal.alarm(HUNG)  # a read that hangs fails the test instead
        try:
            got = _run(reads[i], cache)
        finally:
            signal.alarm(0)
        assert got == oracle[i], f"{role} ({how}): {reads[i][0]} answered otherwise"


def test_the_cases_reach_every_part_of_the_store(world: tuple[Path, Path]) -> None:
    """What the property draws from: every kind of file a store's cache holds
    (a new part must be listed here, and so be damaged by the property too)."""
    store, base = world
    cache = base / "parts"
    roles = {_role(p, cache) for p in _fresh(store, cache)}
    key = "*/"
    expected = {
        "engine.time.bin",
        "engine.time.bin.seal",
        "model.sqlite",
        "model.sqlite-shm",
        "model.sqlite-wal",
        "model.sqlite.graph",
        "model.sqlite.graph.stamp",
        "model.sqlite.recall/el-*.bin",
        "model.sqlite.recall/seg-*.bin",
        "model.sqlite.seal",
        "prints.json",
        "search/state.json",
        *(
            f"search/{part}-*/{name}"
            for part in ("history", "live")
            for name in (".managed.json", "meta.json")
        ),
        *(
            f"search/{part}-*/*.{ext}"
            for part in ("history", "live")
            for ext in ("fast", "fieldnorm", "idx", "pos", "store", "term")
        ),
    }
    assert {r.removeprefix(key) for r in roles} == expected


@pytest.mark.parametrize(
    "name",
    [
        "model.sqlite",
        "model.sqlite.seal",
        "engine.time.bin",
        "model.sqlite.graph",
        "search/state.json",
        "prints.json",
    ],
)
def test_a_directory_planted_at_a_file_of_the_store_is_replaced(
    world: tuple[Path, Path], oracle: list[tuple[int, str]], name: str
) -> None:
    """Not only answered around: the part is written again, so a read after the
    next costs what it did (a directory at the model's path left every read to
    replay the whole store, for good)."""
    store, base = world
    cache = base / "planted"
    _fresh(store, cache)
    (path,) = cache.glob(f"*/{name}")
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.mkdir()
    (path / "inside").write_bytes(b"planted")
    _new_process()
    reads = _reads(store)
    for args, expected in zip(reads, oracle, strict=True):
        assert _run(args, cache) == expected, args[0]
    assert path.is_file() and not path.is_symlink(), f"{name} was not written again"
