"""A search as of a moment asks the read model about each candidate (issue 17).

The probed moment (:mod:`kgai_tui.core.search.moment`) must allow exactly the keys
the listed one allows, the one made from a replay of the events recorded by the
cut: every decision key and element key a store can produce, at every cut, before
and after appends, for element ids the keys spell and for ids they only hash; and
it must fall back to the listing past its budget or when a model row is damaged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_model_moments import _at, _keep, _stamps, appended_in_any_split
from test_replay_properties import Generated, lines, stores

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.reads.as_of import project_as_of
from kgai_tui.core.search import moment as moment_module
from kgai_tui.core.search.docs import decision_key, live_key
from kgai_tui.core.search.moment import Moment, listed_keys, probed_moment
from kgai_tui.core.wire.model import Mutation

START = 1_767_225_600  # 2026-01-01T00:00:00Z


def _candidates(root: Path) -> tuple[set[int], set[int]]:
    """Every decision key and element key the store's events name, and near misses
    (the same prefix one off, the other low bit of an element prefix)."""
    engine = open_engine(root)
    decisions: set[int] = set()
    elements: set[int] = set()
    for shard in engine.shards:
        for item in shard.events:
            d = item.decoded.event.decision
            if d is None:
                continue
            for did in (d.id, *d.supersedes):
                k = decision_key(did)
                decisions.update((k, k ^ 1, (k + 1) % (1 << 64)))
            for m in d.mutations or ():
                for eid in (m.element_id, m.from_id, m.to_id):
                    if eid:
                        k = live_key("element", eid)
                        elements.update((k, k ^ 1))
            for eid in d.shapes:
                elements.add(live_key("element", eid))
    elements.add(decision_key("d_" + "0" * 24) >> 1)  # a decision's live key
    return decisions, elements


def _listed(root: Path, stamp: int) -> tuple[frozenset[int], frozenset[int]]:
    then = project_as_of(open_engine(root).shards, _at(stamp))
    heads = {then.dec_id[i] for hs in then.heads.values() for i in hs}
    return listed_keys(heads, then.graph.nodes)


def _probed(model: ModelEngine, stamp: int, listing: object = None) -> Moment | None:
    probe = model.moment_probe(stamp)
    if probe is None:
        return None

    def never() -> tuple[frozenset[int], frozenset[int]]:
        raise AssertionError("listed although within budget")

    return probed_moment(probe, listing or never, lambda: None)  # type: ignore[arg-type]


def _same_everywhere(root: Path, cache: Path) -> int:
    """Each cut's probed moment allows exactly the listed keys; how many cuts the
    model answered."""
    decisions, elements = _candidates(root)
    model = open_model(root, cache)
    answered = 0
    try:
        for stamp in _stamps(root):
            probed = _probed(model, stamp)
            if probed is None:
                continue
            answered += 1
            heads, present = _listed(root, stamp)
            for k in sorted(decisions):
                assert (k in probed.head_keys) == (k in heads), (stamp, k)
            for k in sorted(elements):
                assert (k in probed.element_keys) == (k in present), (stamp, k)
    finally:
        model.close()
    return answered


@settings(max_examples=20, deadline=None)
@given(gen=stores(), data=st.data())
def test_probed_keys_are_the_listed_keys_at_every_cut(
    gen: Generated, data: st.DataObject
) -> None:
    for root, cache, _last in appended_in_any_split(gen, data):
        _same_everywhere(root, cache)


@contextmanager
def _odd_store(tmp_path: Path) -> Iterator[Path]:
    """Elements whose ids the keys do not spell: not ``el_`` and 16 hex digits."""
    w = ShardWriter("i-odd", actor="ann")
    odd = [
        Mutation(op="upsert_element", element_id=eid, kind="k", name=eid)
        for eid in ("zz-odd", "el_ABCDEF0123456789", "el_12")
    ]
    for k, m in enumerate(odd):
        at = format_epoch(START + k * 86_400)
        w.add(decision(f"odd {k}", [m]), lamport=k + 1, recorded_at=at)
    w.add(
        decision("plain", [upsert("svc", "Billing")]),
        lamport=9,
        recorded_at=format_epoch(START + 9 * 86_400),
    )
    root = tmp_path / "store"
    write_store(root, {"i-odd.ndjson": lines(w.events)})
    yield root


def test_element_ids_the_keys_only_hash(tmp_path: Path) -> None:
    with _odd_store(tmp_path) as root:
        cache = tmp_path / "cache"
        assert _keep(root, cache)
        assert _same_everywhere(root, cache) == len(_stamps(root))


def test_past_the_budget_it_lists_the_cut_once(tmp_path: Path) -> None:
    with _odd_store(tmp_path) as root:
        cache = tmp_path / "cache"
        assert _keep(root, cache)
        stamp = START + 2 * 86_400
        heads, present = _listed(root, stamp)
        listings: list[int] = []

        def listing() -> tuple[frozenset[int], frozenset[int]]:
            listings.append(1)
            return heads, present

        saved = moment_module.PROBE_BUDGET
        moment_module.PROBE_BUDGET = 2  # type: ignore[misc]
        model = open_model(root, cache)
        try:
            probed = _probed(model, stamp, listing)
            assert probed is not None
            keys = [*sorted(present), 7, 9, 11]
            assert [k in probed.element_keys for k in keys] == [
                k in present for k in keys
            ]
            assert listings == [1]  # once, past the second key
        finally:
            moment_module.PROBE_BUDGET = saved  # type: ignore[misc]
            model.close()


def test_a_damaged_row_lists_the_cut_instead(tmp_path: Path) -> None:
    """A touch that does not decode behind an intact seal: the probe fails, the
    moment lists the cut (here from the replay), the answer stays right."""
    with _odd_store(tmp_path) as root:
        cache = tmp_path / "cache"
        assert _keep(root, cache)
        stamp = START + 3 * 86_400
        heads, present = _listed(root, stamp)
        model = open_model(root, cache)
        path = model.model_path
        model.close()
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN")
        db.execute("UPDATE at_el SET touch = x'00'")
        damaged = ModelEngine(root, db, "warm", [], path)
        probed = _probed(damaged, stamp, lambda: (heads, present))
        assert probed is not None
        for k in [*sorted(present), 5]:
            assert (k in probed.element_keys) == (k in present)
        db.execute("ROLLBACK")
        damaged.close()


def test_the_cli_search_as_of_closes_its_model_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probed moment holds a model read while the search runs; after the
    search nothing holds it, so a writer can fold the model's log."""
    from kgai_tui.core.search.index import SearchIndex

    with _odd_store(tmp_path) as root:
        cache = tmp_path / "cache"
        monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
        assert _keep(root, cache)
        engine = open_engine(root)
        SearchIndex.for_engine(engine, cache_base=cache)
        index = SearchIndex.open_cached(root, cache_base=cache)
        assert index is not None
        closed: list[int] = []
        real = index._at._probed

        def spy(cut: datetime) -> Moment | None:
            got = real(cut)
            assert got is not None, "the model answers this cut"
            inner = got._close
            got._close = lambda: (closed.append(1), inner())  # type: ignore[assignment]
            return got

        index._at._probed = spy  # type: ignore[method-assign]
        hits = index.search("Billing", as_of=_at(START + 9 * 86_400))
        assert hits is not None and [h.name for h in hits][:1] == ["Billing"]
        assert closed == [1]


def test_demo_store_every_cut(tmp_path: Path) -> None:
    """The demo store holds contested elements (several heads in force at once)."""
    from kgai_tui.demo import DEMO_STORE

    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    assert _same_everywhere(DEMO_STORE, cache) == len(_stamps(DEMO_STORE))
