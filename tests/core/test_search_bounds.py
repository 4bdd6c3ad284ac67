"""The fast build path and the bounded ranking give exactly what the plain ones give."""

from __future__ import annotations

import copy
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from search_stores import mixed_store

from benchmarks.search_suite import make_queries
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search import analysis, writer
from kgai_tui.core.search import backend as search_backend
from kgai_tui.core.search import index as search
from kgai_tui.core.search import plan as search_plan
from kgai_tui.core.search.docs import (
    history_fields,
    history_record,
    history_record_obj,
    index_fields,
)
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.tail import appended_decisions
from kgai_tui.core.wire.codec import event_from_obj, event_obj


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("mixed") / "store"
    mixed_store(root)
    # Module-scoped: not yet under the per-test home, so a cache dir of its own.
    return open_engine(root)


def _variants(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Edge cases of one decision event's dict (as Go would omit or write them)."""
    out = []
    d = obj["decision"]
    shapes = list(d.get("shapes", []))
    for change in (
        {"shapes": shapes + shapes[:1] + [""]},  # duplicates and an empty id
        {"shapes": []},
        {"mutations": None},
        {"title": "", "rationale": "", "summary": "InvoiceRendering usesPDFs"},
        {"author": "", "title": "camelCaseTitle and ÉlanVital"},
    ):
        v = copy.deepcopy(obj)
        v["decision"].update(change)
        for key in ("shapes", "rationale", "summary", "author"):
            if v["decision"].get(key) in ("", []):
                del v["decision"][key]
        out.append(v)
    renamed = copy.deepcopy(obj)
    for m in renamed["decision"]["mutations"] or ():
        if m["op"] == "upsert_element":
            m.pop("name", None)  # an element upserted without a name
            m["kind"] = "Feature"
    out.append(renamed)
    return out


def test_history_fields_equal_the_record_path(mixed: Engine) -> None:
    checked = 0
    for obj, id_ok in writer.decision_objs(mixed):
        for item in [obj, *(_variants(obj) if checked < 50 else [])]:
            for ok in (id_ok, not id_ok):
                direct = history_fields(item, ok)
                via_record = history_record_obj(item, ok)
                assert via_record is not None
                assert direct == index_fields(via_record, typed=False)
                event = history_record(event_from_obj(item), ok)
                assert via_record == event
        checked += 1
    assert checked == len(list(mixed.decision_events()))
    assert history_fields({**obj, "decision": None}, True) is None


def test_full_build_documents_equal_the_plain_path(mixed: Engine) -> None:
    fast = [doc.to_dict() for doc in writer.all_history_docs(mixed)]
    plain = writer.history_docs(writer.decision_objs(mixed))
    assert fast and fast == [doc.to_dict() for doc in plain]
    assert all("doctype" not in doc and "key" in doc for doc in fast)


def _expected_order(
    engine: Engine, after: dict[str, int] | None = None
) -> list[tuple[dict[str, Any], bool]]:
    """Hash-verified decision events by (lamport, hash, shard, line), read plainly."""
    from kgai_tui.core.store.logscan import DECISION_ID_OK, HASH_OK

    assert engine.log_dir is not None
    rows = []
    for scan in engine.scans:
        data = (engine.log_dir / scan.name).read_bytes()
        for i, h in enumerate(scan.hashes):
            line = scan.lines[i]
            if scan.flags[i] & HASH_OK and line > (after or {}).get(scan.name, 0):
                at, size = scan.offsets[i], scan.lengths[i]
                obj = scan.slow.get(i) or orjson.loads(data[at : at + size])
                ok = bool(scan.flags[i] & DECISION_ID_OK)
                rows.append(((scan.lamports[i], h, scan.name, line), obj, ok))
    rows.sort(key=lambda r: r[0])
    return [(obj, ok) for _, obj, ok in rows if obj["decision"] is not None]


def test_decision_objs_follow_the_canonical_order(mixed: Engine) -> None:
    assert list(writer.decision_objs(mixed)) == _expected_order(mixed)
    events = [(event_obj(ev), ok) for ev, ok in mixed.decision_events()]
    assert events == _expected_order(mixed)


def test_the_lines_appended_after_an_index_follow_the_canonical_order(
    mixed: Engine,
) -> None:
    """What an index extension adds, read from the bytes after each shard's first
    half: the lines after it, in canonical order (and every line from nothing)."""
    assert mixed.log_dir is not None
    now = writer.engine_prints(mixed)
    assert appended_decisions(mixed.log_dir, (), now) == _expected_order(mixed)
    after = {s.name: s.newline_count // 2 for s in mixed.scans}
    halves = []
    for p in now:
        data = (mixed.log_dir / p.name).read_bytes()
        size = sum(len(x) for x in data.splitlines(keepends=True)[: after[p.name]])
        halves.append(replace(p, size=size, lines=after[p.name]))
    tail = _expected_order(mixed, after)
    assert tail and appended_decisions(mixed.log_dir, halves, now) == tail


def test_bounded_ranking_gives_the_same_answers(
    mixed: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounding on (every index, whatever its size) versus off: identical hits."""
    index = SearchIndex.for_engine(mixed, cache_base=tmp_path)
    queries = [
        *make_queries(mixed.projection, 240),
        "decision",
        "decision reshape E000007",
        "invoice decision",
        '"reshape E000007" decision',
        "author:carol decision",
        "element:E000007 decision",
        "bench*",
    ]
    settled = []
    real = search.bounded_top

    def counted(*args: Any) -> Any:
        got = real(*args)
        settled.append(got is not None)
        return got

    def run() -> list[Any]:
        return [index.search(q, include_all=a) for q in queries for a in (False, True)]

    monkeypatch.setattr(search, "BOUND_MIN_DOCS", 1 << 62)
    plain = run()
    monkeypatch.setattr(search, "BOUND_MIN_DOCS", 0)
    monkeypatch.setattr(search, "bounded_top", counted)
    assert run() == plain
    assert any(settled)  # the bound did settle some queries


def test_key_ranges_are_exact_whether_narrow_or_wide(
    mixed: Engine, tmp_path: Path
) -> None:
    """``restrict`` (the key walk) adds the ``kbin`` terms only for narrow ranges;
    either way it matches exactly the keys in the range."""
    index = SearchIndex.for_engine(mixed, cache_base=tmp_path)
    everything = search_backend.Q.all_query()
    rng = random.Random(7)
    for part in (index._history, index._live):
        backend = search_backend.Backend(part.searcher(), (0, 1 << 64))
        keys = sorted(backend.keys([a for _, a in backend.top(everything, 100_000)]))
        assert len(keys) > 20
        ranges = [(0, (1 << 64) - 1), (keys[0], keys[0])]
        for _ in range(30):
            a, b = sorted(rng.sample(keys, 2))
            ranges += [(a, b), (a, a), (a + 1, b), (a >> 44 << 44, a | (1 << 44) - 1)]
        for low, high in ranges:
            hits = backend.top(backend.restrict(everything, low, high), 100_000)
            got = sorted(backend.keys([addr for _, addr in hits]))
            assert got == [k for k in keys if low <= k <= high], (low, high)


def test_a_plan_limited_to_a_subset_scores_as_the_whole_plan(
    mixed: Engine, tmp_path: Path
) -> None:
    """The bounded ranking re-runs a plan on a few documents with each scoring leaf
    limited to them (fast on a big index); every hit and score must be the same as
    the whole plan's, on the rare subset and on the key walk's bins alike."""
    from kgai_tui.core.search.query import parse_query

    index = SearchIndex.for_engine(mixed, cache_base=tmp_path)
    rng = random.Random(7)
    queries = [*make_queries(mixed.projection, 60), '"reshape E000007" decision']
    checked = 0
    for text in queries:
        pq = parse_query(text)
        a = analysis.analyse(pq)
        filters = index._filter_clauses(pq)
        if filters is None:
            continue
        for src in index._sources(pq, True, None, None, filters.clauses):
            searcher = src.index.searcher()
            plan = search_plan.plan_query(
                a, searcher, src.doctypes, src.clauses, False, src.typed, filters.subset
            )
            if plan is None or plan.restricted is None:
                continue
            backend = search_backend.Backend(searcher, src.keys)
            whole = search_backend.Restrictable(plan.query, plan.restricted)
            low, high = src.keys
            for _ in range(3):
                lo = rng.randrange(low, max(low + 1, high))
                hi = min(high, lo + (high - lo) // rng.choice([2, 64, 4096]))
                plain = backend.top(backend.restrict(plan.query, lo, hi), 1000)
                limited = backend.top(backend.restrict(whole, lo, hi), 1000)
                assert sorted(map(_hit_key, limited)) == sorted(map(_hit_key, plain))
            pairs = [p for clause in plan.clauses or () for p in clause][:3]
            if pairs:
                subset = search_backend.Q.boolean_query(
                    [
                        (search_backend.SHOULD, search_backend.term_query(f, t))
                        for f, t, _ in pairs
                    ]
                )
                plain = backend.top(
                    search_backend.Q.boolean_query(
                        [
                            (search_backend.MUST, plan.query),
                            search_backend.filter_clause(subset),
                        ]
                    ),
                    1000,
                )
                limited = backend.top(
                    search_backend.Q.boolean_query(
                        [
                            (search_backend.MUST, plan.restricted(subset)),
                            search_backend.filter_clause(subset),
                        ]
                    ),
                    1000,
                )
                assert sorted(map(_hit_key, limited)) == sorted(map(_hit_key, plain))
            checked += 1
    assert checked > 20


def _hit_key(hit: tuple[float, Any]) -> tuple[float, int, int]:
    score, addr = hit
    return score, addr.segment_ord, addr.doc
