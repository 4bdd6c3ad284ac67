"""The first read of a big store leaves the search index too (issue 17).

A first read on an empty cache answers from its replay and leaves the read model,
its moments and now the search index to a detached build holding that replay; the
first ``search`` then opens the index instead of replaying the whole store again.
A search that comes while an index is being built waits for it rather than build a
second one beside it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from test_model_moments import _cli

from benchmarks.genlog import GenParams, write_store
from kgai_tui.cli.support import SEARCH_IN_BACKGROUND_MIN
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search.backend import STAMP
from kgai_tui.core.search.cache import cache_dir_for, load_state, write_lock
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.writer import build_persisted, engine_prints


def _big_store(root: Path) -> Path:
    """A generated store just past the size from which the index is built then."""
    write_store(root, GenParams(total=12_000, installs=4, elems=300))
    size = sum(p.stat().st_size for p in (root / "log").iterdir())
    assert size >= SEARCH_IN_BACKGROUND_MIN
    return root


def _index_state(root: Path, cache: Path, timeout_s: float = 240.0) -> bool:
    deadline = time.monotonic() + timeout_s
    where = cache_dir_for(root.resolve(), cache)
    while time.monotonic() < deadline:
        if load_state(where, STAMP, str(root.resolve())) is not None:
            return True
        time.sleep(0.2)
    return False


def test_the_first_read_leaves_the_search_index(tmp_path: Path) -> None:
    root = _big_store(tmp_path / "store")
    cache = tmp_path / "cache"
    first = _cli(["status", "--store", str(root), "--json"], cache)
    assert first.returncode == 0, first.stderr
    assert _index_state(root, cache), "the detached build left no search index"
    # The first search opens that index: the engine cache was never written (the
    # read model serves the reads), so a search that had to build would replay.
    query = ["search", "reshape E000017", "--store", str(root), "--json"]
    got = _cli(query, cache)
    assert got.returncode == 0, got.stderr
    assert not any(cache.glob("*/engine.bin"))
    want = _cli(query, tmp_path / "fresh", KGAI_TUI_READ_MODEL="off")
    assert got.stdout == want.stdout


def test_a_search_waits_for_an_index_being_built(tmp_path: Path) -> None:
    root = _big_store(tmp_path / "store")
    cache = tmp_path / "cache"
    where = cache_dir_for(root.resolve(), cache)
    # Nothing being built: the wait returns at once, with nothing.
    assert SearchIndex.once_built(root, cache_base=cache) is None
    engine = open_engine(root)
    taken = threading.Event()
    done = threading.Event()

    def builder() -> None:
        with write_lock(where):
            taken.set()
            time.sleep(1.0)  # the lock held a while before the index exists
            build_persisted(where, str(root.resolve()), engine_prints(engine), engine)
        done.set()

    thread = threading.Thread(target=builder)
    thread.start()
    assert taken.wait(30)
    start = time.monotonic()
    index = SearchIndex.once_built(root, cache_base=cache)
    assert done.is_set() and time.monotonic() - start >= 0.9
    thread.join()
    assert index is not None
    hits = index.search("reshape E000017", limit=3)
    assert hits is not None and hits
