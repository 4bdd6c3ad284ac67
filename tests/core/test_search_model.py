"""The search index brought up to date through the read model: after appends, the
next search extends the cached index from the shards' new bytes and the model's
rows, opening no whole store, and answers what a fresh build of the whole log
answers, byte for byte.

The stores are cut by lamport (every shard keeps its prefix, the rest is appended
later, as writers do): random hostile stores, and a generated store with prose
and a late writer that renames a stub. A log rewritten in place is no append: the
model path declines it and the whole store rebuilds the index.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from search_stores import mixed_store
from test_time_index_tail import _append, _cut_store, cut_by_lamport

from kgai_tui.core.engine import open as engine_open
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import open_model
from kgai_tui.core.search import writer
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import search_obj
from kgai_tui.core.search.through_model import index_through_model

QUERIES = [
    ("t1", False),
    ("t2 why", True),
    ("why", False),
    ("svc e1", True),
    ("invoice rendering", False),
    ("ghost queue", True),
    ("café", False),
    ("reshape e000007", True),
]


def _answers(index: SearchIndex) -> bytes:
    return orjson.dumps(
        [
            search_obj(index.search(text, limit=15, include_all=every))
            for text, every in QUERIES
        ]
    )


def _fresh(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """What an index built from nothing, from the whole log, answers."""
    copy = tmp_path / "fresh-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    with monkeypatch.context() as m:
        m.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "fresh-cache"))
        built = SearchIndex.for_engine(open_engine(copy))
        assert built.info.how == "built"
        return _answers(built)


def _through_model(root: Path, monkeypatch: pytest.MonkeyPatch) -> SearchIndex:
    def no_replay(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole store was opened")

    with monkeypatch.context() as m:
        m.setattr(engine_open, "open_engine", no_replay)
        index = index_through_model(root)
    assert index is not None, "the model did not extend the index"
    return index


def _indexed_then_appended(
    root: Path,
    rest: dict[str, list[bytes]],
    monkeypatch: pytest.MonkeyPatch,
    new_process: bool = False,
) -> SearchIndex:
    SearchIndex.for_engine(open_engine(root))  # the index of the prefix
    open_model(root).close()
    _append(root, rest)
    if new_process:  # no live documents kept from the build: all computed again
        writer._LIVE_MEMO.clear()
    index = _through_model(root, monkeypatch)
    assert index.info.how == "appended"
    return index


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_an_index_extended_through_the_model_answers_as_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, hostile: bool
) -> None:
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    root, rest = _cut_store(tmp_path, seed, hostile)
    index = _indexed_then_appended(root, rest, monkeypatch, new_process=seed == 1)
    got = _answers(index)
    assert got == _fresh(root, tmp_path, monkeypatch)
    assert sum(bool(a["hits"]) for a in orjson.loads(got)) >= 2
    again = _through_model(root, monkeypatch)  # nothing appended: reused
    assert again.info.how == "cached" and _answers(again) == _answers(index)


def test_prose_and_a_late_writer_extended_through_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "mixed"
    mixed_store(root)
    rest = cut_by_lamport(root)
    assert any(rest.values()) and any(not r for r in rest.values())
    index = _indexed_then_appended(root, rest, monkeypatch, new_process=True)
    got = _answers(index)
    assert got == _fresh(root, tmp_path, monkeypatch)
    found = [len(a["hits"] or ()) for a in orjson.loads(got)]
    assert sum(n > 0 for n in found) >= 4, found


def test_a_rewritten_log_is_left_to_the_whole_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    root, _ = _cut_store(tmp_path, 1, False)
    SearchIndex.for_engine(open_engine(root))
    shard = sorted((root / "log").iterdir())[0]
    lines = shard.read_bytes().splitlines(keepends=True)
    shard.write_bytes(b"".join(lines[:-1]))  # shrank: no append
    open_model(root).close()
    assert index_through_model(root) is None
    rebuilt = SearchIndex.for_engine(open_engine(root))
    assert rebuilt.info.how == "built"
