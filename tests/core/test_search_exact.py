"""Exact (unstemmed) matches rank before stem-only ones (issue 20, point 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import marshal_indent, with_go_floats
from kgai_tui.core.search.analysis import analyse
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import SearchHit, search_obj
from kgai_tui.core.search.query import parse_query

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def _shards(late: bool) -> dict[str, bytes]:
    """Decisions on caching: one says "caching", the rest only "cache"/"cached".

    The stem-only decisions are short and repeat the word, so by BM25 alone they
    outscore the exact one (the test checks that too). ``late`` adds a shard
    appended after the first index was built.
    """
    a = ShardWriter("ialice00000000aa", actor="alice")
    b = ShardWriter("ibob0000000000bb", actor="bob")
    a.add(
        decision(
            "Caching for the slow invoice renderer of the billing team",
            [upsert("module", "InvoiceRenderer")],
            rationale="The renderer is slow for large customers with many lines.",
        ),
        lamport=1,
        recorded_at="2026-01-05T10:00:00Z",
    )
    b.add(
        decision(
            "Cache cached totals",
            [upsert("component", "TotalsCache")],
            rationale="Cache them; cached totals are cheap.",
            author="bob",
        ),
        lamport=2,
        recorded_at="2026-01-06T09:00:00Z",
    )
    b.add(
        decision(
            "Cached sessions",
            [upsert("component", "SessionStore")],
            rationale="The cache is cached per node.",
            author="bob",
        ),
        lamport=3,
        recorded_at="2026-01-07T09:00:00Z",
    )
    shards = {
        "ialice00000000aa.ndjson": a.to_bytes(),
        "ibob0000000000bb.ndjson": b.to_bytes(),
    }
    if late:
        c = ShardWriter("icarol000000000c", actor="carol")
        c.add(
            decision(
                "Caches everywhere",
                [upsert("component", "EdgeCache")],
                rationale="Cached pages at the edge; cache headers set.",
                author="carol",
            ),
            lamport=4,
            recorded_at="2026-01-08T09:00:00Z",
        )
        shards["icarol000000000c.ndjson"] = c.to_bytes()
    return shards


def _store(root: Path, *, late: bool = True) -> Path:
    write_store(root, _shards(late))
    return root


def _decisions(hits: list[SearchHit] | None) -> list[SearchHit]:
    assert hits is not None
    return [h for h in hits if h.kind == "decision"]


def test_query_exact_forms_are_unstemmed() -> None:
    a = analyse(parse_query('caching "Cached totals" InvoiceRend* the'))
    assert a.words == ("cach", "invoic")
    assert a.exact == ("caching", "invoice", "cached", "totals")


def test_the_exact_word_ranks_first_although_stems_score_higher(tmp_path: Path) -> None:
    index = SearchIndex.for_engine(open_engine(_store(tmp_path / "s")))
    for include_all in (False, True):
        hits = _decisions(index.search("caching", include_all=include_all))
        assert len(hits) == 4
        assert hits[0].name.startswith("Caching for the slow")
        # BM25 alone would put the stem-only decisions first ...
        assert all(h.score > hits[0].score for h in hits[1:])
        # ... which keep their usual order (score descending, then id) after it.
        rest = [(-h.score, h.id) for h in hits[1:]]
        assert rest == sorted(rest)
    # The exact form of another query word makes another decision exact.
    hits = _decisions(index.search("cached"))
    exact = {"Cache cached totals", "Cached sessions", "Caches everywhere"}
    assert {h.name for h in hits[:3]} == exact
    assert hits[3].name.startswith("Caching for the slow")


def test_a_limit_cuts_the_exact_tier_first(tmp_path: Path) -> None:
    index = SearchIndex.for_engine(open_engine(_store(tmp_path / "s")))
    full = index.search("caching invoice", limit=50)
    assert full is not None
    for limit in range(1, len(full) + 1):
        cut = index.search("caching invoice", limit=limit)
        assert cut == full[:limit]


def _cli(root: Path, cache: Path, seed: str, *args: str) -> bytes:
    done = subprocess.run(
        [KGAI_TUI, "search", "--json", "--store", str(root), *args],
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": seed, "KGAI_TUI_CACHE_DIR": str(cache)},
        timeout=120,
        check=True,
    )
    return done.stdout


def test_same_bytes_across_seeds_and_a_rebuilt_or_extended_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = _store(tmp_path / "fresh")
    grown = _store(tmp_path / "grown", late=False)
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "c3"))
    early = SearchIndex.for_engine(open_engine(grown))
    assert early.info.how == "built"
    late = "icarol000000000c.ndjson"
    write_store(grown, {late: _shards(late=True)[late]})
    extended = SearchIndex.for_engine(open_engine(grown))
    assert extended.info.how == "appended"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "c0"))
    rebuilt = SearchIndex.for_engine(open_engine(fresh))
    assert rebuilt.info.how == "built"
    queries = [("caching",), ("--all", "cached caching"), ("--limit", "2", "cache")]
    for args in queries:
        *opts, text = args
        include_all = "--all" in opts
        limit = int(opts[-1]) if "--limit" in opts else 20
        answers = {
            marshal_indent(
                with_go_floats(
                    search_obj(index.search(text, limit=limit, include_all=include_all))
                )
            )
            for index in (rebuilt, extended)
        }
        for seed, cache in (("0", "c1"), ("1", "c1"), ("4242", "c2")):
            answers.add(_cli(fresh, tmp_path / cache, seed, *args))
        answers.add(_cli(grown, tmp_path / "c3", "random", *args))  # the extended
        assert len(answers) == 1, args
        assert orjson.loads(answers.pop())["hits"], args
