"""The time index answers as-of exactly as a fresh replay of the events up to the cut.

Every comparison is between :func:`project_as_of` (the reference: select, sort, replay)
and :meth:`TimeIndex.at`, through the JSON reads and through a full normalised dump of
the state (decisions by id, element attributes, links with ``created_by``, shapers in
creation order, heads, conflicts, counts), so numbering differences cannot hide a bug.
"""

from __future__ import annotations

import json
import marshal
import mmap
import random
import struct
from bisect import bisect_right
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, set_prop, upsert, write_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.genlog import GenParams
from benchmarks.genlog import write_store as gen_store
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import epoch_to_datetime, format_epoch, rfc3339_epoch
from kgai_tui.core.reads import kg as reads
from kgai_tui.core.reads.as_of import _graph_obj, as_of_obj, project_as_of
from kgai_tui.core.reads.context import context_obj
from kgai_tui.core.reads.moments import TimeCursor, graph_delta, moments
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.core.store.shards import ShardRead
from kgai_tui.core.timeindex.index import (
    TimeIndex,
    TimeIndexBuilder,
    build_time_index,
)
from kgai_tui.core.timeindex.tables import FIELD_COLUMNS, PackedRecs
from kgai_tui.core.wire.codec import event_obj
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.model import Decision, Event, Mutation
from kgai_tui.core.wire.props import parse_props
from kgai_tui.demo import DEMO_STORE as DEMO

BASE = 1_767_225_600  # 2026-01-01T00:00:00Z


# ---------------------------------------------------------------------------- helpers


def _at(stamp: int) -> datetime:
    moment = epoch_to_datetime(stamp)
    assert moment is not None
    return moment


def _objs(shards: list[ShardRead]) -> list[tuple[dict[str, Any], int | None, bool]]:
    """What the engine feeds the builder: verified, canonical, deduplicated."""
    items = [i.decoded for s in shards for i in s.events if i.decoded.hash_ok]
    items.sort(key=lambda d: (d.event.lamport, d.event.hash))
    out, seen = [], set()
    for d in items:
        if d.event.hash not in seen:
            seen.add(d.event.hash)
            out.append(
                (
                    event_obj(d.event),
                    rfc3339_epoch(d.event.recorded_at),
                    d.decision_id_ok,
                )
            )
    return out


def _build(objs: list[tuple[dict[str, Any], int | None, bool]]) -> TimeIndex:
    builder = TimeIndexBuilder()
    for obj, epoch, gated in objs:
        builder.add(obj, epoch, gated)
    return builder.finish(None)


def state(p: ProjectionView) -> dict[str, Any]:
    """Everything a reader can see, keyed by ids instead of decision indices."""
    ids = p.dec_id
    graph = p.graph
    decisions = {
        ids[i]: (
            p.dec_title[i],
            p.dec_rationale[i],
            p.dec_author[i],
            p.dec_refs[i],
            p.dec_summary[i],
            p.dec_time[i],
            p.dec_lamport[i],
            p.dec_install[i],
            p.dec_hash[i],
            list(p.dec_shapes[i]),
            [ids[j] for j in p.dec_supersedes[i]],
            [ids[j] for j in p.dec_superseded_by[i]],
        )
        for i in range(len(ids))
    }
    assert len(decisions) == len(ids) == len(p.dec_index)
    assert all(ids[p.dec_index[d]] == d for d in decisions)
    return {
        "decisions": decisions,
        "nodes": [
            (n, a["kind"], a["name"], a["props"]) for n, a in graph.nodes(data=True)
        ],
        "edges": sorted(
            (f, t, k, a["created_by"])
            for f, t, k, a in graph.edges(keys=True, data=True)
        ),
        "el_shapes": {
            e: [(ids[i], auth) for i, auth in s.items()] for e, s in p.el_shapes.items()
        },
        "heads": {e: sorted(ids[i] for i in h) for e, h in p.heads.items() if h},
        "heads_of": {e: [ids[i] for i in p.heads_of(e)] for e in p.graph.nodes},
        "max_lamport": {e: p.max_authority_lamport(e) for e in p.graph.nodes},
        "contested": sorted(p.contested),
        "applied": p.applied_count,
        "unknown": list(p.unknown_ops),
    }


def _set_by(p: ProjectionView, key: str) -> dict[str, str]:
    """Per element, the value its props set for ``key`` (those that set it)."""
    found = {eid: parse_props(blob).get(key) for eid, blob in p.element_props_with(key)}
    return {eid: value for eid, value in found.items() if value is not None}


def check(
    shards: list[ShardRead], index: TimeIndex, stamp: int, deep: bool = True
) -> None:
    """The index at ``stamp`` equals a fresh replay, through every read."""
    cut = _at(stamp)
    ref = project_as_of(shards, cut)
    view = index.at(cut)
    assert json.dumps(as_of_obj(view, cut)) == json.dumps(as_of_obj(ref, cut)), stamp
    assert reads.conflicts_obj(view) == reads.conflicts_obj(ref)
    assert reads.heads_obj(view) == reads.heads_obj(ref)
    # The header's counts (bisected in the index's CutCounts, walked in the replay).
    counts = (view.recorded_count(), view.writer_count())
    assert counts == (ref.recorded_count(), ref.writer_count()), stamp
    # The props a key may set (the Elements tree asks for "paths"): only the
    # elements whose props history names it are read at the cut.
    for key in ("p", "q", "r", "paths"):
        assert _set_by(view, key) == _set_by(ref, key), (stamp, key)
    for eid in list(ref.el_shapes)[:40]:
        assert reads.history_obj(view, eid) == reads.history_obj(ref, eid)
    for eid in list(ref.graph.nodes)[:40]:
        kind, name, _ = ref.element(eid) or ("", "", "")
        token = f"{kind}:{name}"
        assert reads.resolve_obj(view, token) == reads.resolve_obj(ref, token)
    if deep:
        assert state(view) == state(ref), stamp
        for about in ("", "api e1 t3"):
            got = context_obj(view, paths=[], about=about)
            assert got == context_obj(ref, paths=[], about=about)


def _cuts(index: TimeIndex, rng: random.Random, n: int) -> list[int]:
    lo, hi = index.times[0], index.times[-1]
    return [rng.randint(lo - 2, hi + 2) for _ in range(n)]


# ---------------------------------------------------------------------------- stores


def _store(
    tmp_path: Path, writers: list[ShardWriter], name: str = "s"
) -> list[ShardRead]:
    root = write_store(
        tmp_path / name, {f"{w.install_id}.ndjson": w.to_bytes() for w in writers}
    )
    return open_engine(root).shards


def _random_store(
    tmp_path: Path, seed: int, n: int = 120, *, hostile: bool = True
) -> list[ShardRead]:
    """Writers with skewed clocks, and every rule replay has: dup ids, stubs, gates…
    (``hostile``: also times that are not RFC3339 and ids the gate refuses, which
    keep an index from sharing the projection's lists)."""
    rng = random.Random(seed)
    writers = [ShardWriter(f"i{w:02d}", actor=f"w{w}") for w in range(3)]
    skew = [rng.choice((-3000, 0, 0, 2500)) for _ in writers]
    els = [("svc", f"e{i}") for i in range(6)]
    ids = [element_id(*e) for e in els]
    made: list[Decision] = []
    lamport = 0
    for k in range(n):
        w = rng.randrange(len(writers))
        lamport += rng.choice((0, 1, 1, 2))  # equal lamports too: order by hash
        stamp = BASE + k * 60 + skew[w] + rng.randint(-400, 400)
        when = format_epoch(stamp)
        if rng.random() < 0.04 and hostile:
            when = "2026-01-01"  # not RFC3339: never in as-of
        if made and rng.random() < 0.1:  # the same decision again (same id)
            writers[w].add(rng.choice(made), lamport=lamport, recorded_at=when)
            continue
        if rng.random() < 0.05:
            writers[w].add(None, lamport=lamport, recorded_at=when)
            continue
        muts: list[Mutation] = []
        for _ in range(rng.randint(0, 3)):
            a, b = rng.sample(els, 2)
            r = rng.random()
            if r < 0.3:
                muts.append(
                    upsert(*a, **{rng.choice("pq"): rng.choice(("1", "2 ", " x", ""))})
                )
            elif r < 0.5:
                muts.append(
                    set_prop(
                        *a,
                        rng.choice(("p", "q", " r ")),
                        rng.choice(("v", "w  ", "a\nb")),
                    )
                )
            elif r < 0.7:
                muts.append(link("add_link", a, b, rng.choice(("USES", "OWNS"))))
            elif r < 0.9:
                muts.append(link("retire_link", a, b, rng.choice(("USES", "OWNS"))))
            else:
                muts.append(Mutation(op="rename_element", element_id=element_id(*a)))
        shapes = rng.sample(ids, rng.randint(0, 3))
        sup = rng.sample([d.id for d in made], min(len(made), rng.randint(0, 2)))
        if rng.random() < 0.1:
            sup.append(f"d_unknown{rng.randrange(4)}")
        targets = rng.choice((None, [], shapes[:1]))
        d = decision(
            f"t{k}",
            muts,
            rationale=rng.choice(("", "why")),
            supersedes=sup,
            shapes=shapes,
            targets=targets,
            provenance_only=rng.choice((None, True, False)),
            **({} if hostile else {"author": rng.choice(("ana", "bo", ""))}),
        )
        if rng.random() < 0.08 and hostile:
            d = replace(d, id=rng.choice(["d_bogus", *(x.id for x in made[-3:])]))
        made.append(d)
        ev = writers[w].add(d, lamport=lamport, recorded_at=when)
        if rng.random() < 0.05:  # the same event in another shard
            other = writers[(w + 1) % len(writers)]
            other.events.append(ev)
    return _store(tmp_path, writers, f"r{seed}")


# ---------------------------------------------------------------------------- tests


def test_generated_store_equals_replay_at_50_instants(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    gen_store(root, GenParams(2000, 7, 150))
    engine = open_engine(root)
    index = build_time_index(engine.shards, engine.projection)
    assert index.shared is not None  # every event gated: the lists are shared
    rng = random.Random(5)
    for i, stamp in enumerate(_cuts(index, rng, 50)):
        check(engine.shards, index, stamp, deep=i % 10 == 0)


@pytest.mark.parametrize("seed", range(12))
def test_skewed_multi_writer_store_equals_replay(tmp_path: Path, seed: int) -> None:
    shards = _random_store(tmp_path, seed)
    index = _build(_objs(shards))
    stamps = sorted({e for _, e, _ in _objs(shards) if e is not None})
    rng = random.Random(seed)
    picks = [*rng.sample(stamps, min(25, len(stamps))), stamps[0] - 1, stamps[-1] + 1]
    for stamp in picks:
        check(shards, index, stamp)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60))
def test_random_stores_at_every_moment(tmp_path: Path, seed: int, n: int) -> None:
    shards = _random_store(tmp_path / str(seed) / str(n), seed, n)
    index = _build(_objs(shards))
    for stamp in sorted({e for _, e, _ in _objs(shards) if e is not None}):
        check(shards, index, stamp)


def _ev(writer: ShardWriter, d: Decision | None, lamport: int, stamp: int) -> Event:
    return writer.add(d, lamport=lamport, recorded_at=format_epoch(BASE + stamp))


def test_stub_then_its_own_event_and_props_trailing_space(tmp_path: Path) -> None:
    a, b = ShardWriter("ia"), ShardWriter("ib")
    first = decision("first", [upsert("svc", "api", p="1 ")])
    # b supersedes `first` before a's event is recorded (b's clock runs behind).
    second = decision(
        "second",
        [
            set_prop("svc", "api", "q", "x  "),
            link("add_link", ("svc", "api"), ("svc", "db"), "USES"),
        ],
        supersedes=[first.id, "d_ghost"],
        shapes=[element_id("svc", "api")],
    )
    third = decision(
        "third",
        [
            link("retire_link", ("svc", "api"), ("svc", "db"), "USES"),
            set_prop("svc", "api", "p", "2"),
        ],
        shapes=[element_id("svc", "api")],
        targets=[],
        provenance_only=True,
    )
    fourth = decision(
        "fourth",
        [link("add_link", ("svc", "db"), ("svc", "api"), "USES"), upsert("svc", "db")],
    )
    fifth = decision("fifth", [link("add_link", ("svc", "api"), ("svc", "db"), "USES")])
    _ev(a, first, 1, 500)
    _ev(b, second, 2, 100)
    _ev(b, third, 3, 200)
    _ev(a, fourth, 4, 50)
    _ev(b, fifth, 5, 300)
    _ev(a, first, 6, 20)  # the same decision again, recorded earliest
    shards = _store(tmp_path, [a, b])
    index = _build(_objs(shards))
    for stamp in range(0, 600, 10):
        check(shards, index, BASE + stamp)


def test_decision_id_gate_failures_are_in_as_of(tmp_path: Path) -> None:
    a = ShardWriter("ia")
    good = decision("good", [upsert("svc", "api")])
    bad = replace(decision("bad", [upsert("svc", "db")]), id="d_not_its_hash")
    _ev(a, good, 1, 10)
    _ev(a, bad, 2, 20)
    shards = _store(tmp_path, [a])
    engine = open_engine(tmp_path / "s")
    assert "d_not_its_hash" not in engine.projection.dec_index
    index = build_time_index(shards, engine.projection)
    assert index.shared is None  # the projection lacks the ungated decision
    view = index.at(_at(BASE + 30))
    assert "d_not_its_hash" in view.dec_index
    for stamp in (5, 10, 15, 20, 25):
        check(shards, index, BASE + stamp)


def test_demo_store_at_every_moment() -> None:
    engine = open_engine(DEMO)
    index = build_time_index(engine.shards, engine.projection)
    cursor = TimeCursor(index)
    listed = moments(engine.shards)
    assert cursor.moments == listed
    # The slider reads them as a list: ends, slices, membership, index, bisection.
    made = cursor.moments
    assert (made[0], made[-1], made[2:5]) == (listed[0], listed[-1], listed[2:5])
    for i, moment in enumerate(listed):
        assert moment in made and made.index(moment) == i
        between = moment + timedelta(seconds=1)
        assert (between in made) == (between in listed)
        assert bisect_right(made, between) == bisect_right(listed, between)
    assert "2026-01-01" not in made and listed[0].replace(tzinfo=None) not in made
    previous: ProjectionView | None = None
    prev_moment = cursor.moments[0]
    for moment in cursor.moments:
        check(engine.shards, index, int(moment.timestamp()))
        now = cursor.at(moment)
        if previous is not None:
            ref = graph_delta(
                project_as_of(engine.shards, prev_moment),
                project_as_of(engine.shards, moment),
            )
            assert graph_delta(previous, now) == ref
        previous, prev_moment = now, moment


def test_dumps_loads_and_live_appends(tmp_path: Path) -> None:
    shards = _random_store(tmp_path, 99, 150)
    objs = _objs(shards)
    full = _build(objs)
    again = TimeIndex.loads(full.dumps())
    rng = random.Random(3)
    cuts = _cuts(full, rng, 15)
    for stamp in cuts:
        assert state(again.at(_at(stamp))) == state(full.at(_at(stamp)))
    # Build a prefix, store it, load it, then keep adding: equal to the full build.
    for split in (0, 1, len(objs) // 3, len(objs) - 1):
        part = _build(objs[:split])
        live = TimeIndex.loads(part.dumps())
        for k, (obj, epoch, gated) in enumerate(objs[split:], start=split + 1):
            live.add(obj, epoch, gated)
            if k % 40 == 0:
                fresh = _build(objs[:k])
                for stamp in rng.sample(cuts, 3):
                    assert state(live.at(_at(stamp))) == state(fresh.at(_at(stamp)))
        for stamp in cuts:
            assert state(live.at(_at(stamp))) == state(full.at(_at(stamp)))
            check(shards, live, stamp, deep=False)


def test_shared_index_round_trip_and_unshare(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    gen_store(root, GenParams(300, 5, 40))
    engine = open_engine(root)
    objs = _objs(engine.shards)
    index = build_time_index(engine.shards, engine.projection)
    assert index.shared is engine.projection
    data = index.dumps()
    with pytest.raises(ValueError):
        TimeIndex.loads(data)
    loaded = TimeIndex.loads(data, engine.projection)
    rng = random.Random(1)
    cuts = _cuts(index, rng, 10)
    for stamp in cuts:
        assert state(loaded.at(_at(stamp))) == state(index.at(_at(stamp)))
    # Appending after a shared finish takes private copies first.
    events = sorted(
        {
            i.decoded.event.hash: i.decoded.event
            for s in engine.shards
            for i in s.events
        }.values(),
        key=lambda ev: (ev.lamport, ev.hash),
    )
    prefix = Projection()
    shared = TimeIndexBuilder()
    for (obj, epoch, gated), ev in zip(objs[:100], events[:100], strict=True):
        shared.add(obj, epoch, gated)
        prefix.apply(ev)
    half = shared.finish(prefix)
    assert half.shared is prefix
    for obj, epoch, gated in objs[100:]:
        half.add(obj, epoch, gated)
    assert half.shared is None
    full = _build(objs)
    for stamp in cuts:
        assert state(half.at(_at(stamp))) == state(full.at(_at(stamp)))


def test_observer_cursor_and_lazy_props(tmp_path: Path) -> None:
    a = ShardWriter("ia")
    _ev(a, decision("one", [upsert("svc", "api", p="1 ")]), 1, 10)
    _ev(a, decision("two", [set_prop("svc", "api", "q", "2")]), 2, 20)
    shards = _store(tmp_path, [a])
    objs = _objs(shards)
    builder = TimeIndexBuilder()
    builder.observe(*objs[0][::2])
    index = builder.finish()
    cursor = TimeCursor(index)
    assert len(cursor.moments) == 1
    view = cursor.at(_at(BASE + 30))
    node = view.graph.nodes[element_id("svc", "api")]
    assert json.dumps(node) == '{"kind": "svc", "name": "api", "props": "p=1 "}'
    assert dict(node) == node.copy() == {"kind": "svc", "name": "api", "props": "p=1 "}
    index.add(*objs[1])  # a live append: the cursor drops its cached views
    assert len(cursor.moments) == 1
    again = cursor.at(_at(BASE + 30))
    assert again is not view
    assert len(cursor.moments) == 2
    assert again.graph.nodes[element_id("svc", "api")].get("props") == "p=1\nq=2"
    check(shards, index, BASE + 30)
    index.add(*objs[1])  # the same event again: ignored
    assert index.events == 2
    with pytest.raises(ValueError, match="rebuild"):
        index.add(*objs[0])


def test_an_as_of_view_leaves_no_cyclic_garbage(tmp_path: Path) -> None:
    """The slider drops a view a step: one in a reference cycle waits for a full
    collection, and for ever once a big process froze its heap."""
    import gc

    root = tmp_path / "store"
    gen_store(root, GenParams(1500, 4, 120))
    engine = open_engine(root)
    index = engine.time_index
    times = sorted(t for t in engine.projection.dec_time if t is not None)
    cut = epoch_to_datetime(times[len(times) // 2])
    gc.collect()
    view = index.at(cut)
    as_of_obj(view, cut)
    view.graph.nodes[next(iter(view.graph))]["props"]
    history = [view.heads_of(e) for e in list(view.heads)[:20]]
    # What the explorer's slider reads of a view (its header, tree and details).
    KgView(view).prepare()
    assert view.recorded_count() > 0 and view.writer_count() > 0
    some = view.dec_id[0]
    assert view.dec_index[some] == 0 and some in view.dec_index
    edges = [view.dec_supersedes[v] + view.dec_superseded_by[v] for v in range(50)]
    shaped = [dict(view.el_shapes.get(e, {})) for e in list(view.heads)[:20]]
    # What the slider's delta and the details pane read of its graph.
    delta = graph_delta(view, index.at(epoch_to_datetime(times[-1])))
    linked = [view.in_links(e) + view.out_links(e) for e in list(view.graph)[:20]]
    degrees = [view.graph.degree(e) for e in list(view.graph.nodes)[:20]]
    del view, history, edges, shaped, delta, linked, degrees
    assert gc.collect() == 0


# ------------------------------------------------------------------ columns


@pytest.mark.parametrize("seed", range(4))
def test_column_read_equals_graph_read_at_every_moment(
    tmp_path: Path, seed: int
) -> None:
    """as_of_obj on a view reads the index's columns; the graph read agrees bytewise."""
    shards = _random_store(tmp_path, seed, 150)
    index = _build(_objs(shards))
    stamps = sorted({e for _, e, _ in _objs(shards) if e is not None})
    conflicted = retired = 0
    for stamp in [stamps[0] - 1, *stamps, stamps[-1] + 1]:
        cut = _at(stamp)
        got = as_of_obj(index.at(cut), cut)
        assert json.dumps(got) == json.dumps(_graph_obj(index.at(cut), cut)), stamp
        conflicted += got["conflicts"] is not None
        retired += len(got["links"] or ()) < len(index.links)
    assert conflicted and retired  # the store exercises both


def test_column_read_follows_live_appends(tmp_path: Path) -> None:
    """Adding events drops the columns built before: the next read sees the events."""
    shards = _random_store(tmp_path, 7, 90)
    objs = _objs(shards)
    live = _build(objs[:10])
    cuts = _cuts(_build(objs), random.Random(2), 6)
    for k, (obj, epoch, gated) in enumerate(objs[10:], start=11):
        live.columns()  # built, then stale after the add
        live.add(obj, epoch, gated)
        if k % 10 == 0 or k == len(objs):
            fresh = _build(objs[:k])
            for stamp in cuts:
                cut = _at(stamp)
                got = json.dumps(as_of_obj(live.at(cut), cut))
                assert got == json.dumps(_graph_obj(fresh.at(cut), cut)), (k, stamp)


# ------------------------------------------------------------------ memory


_FIELD_LISTS = ("d_id", *FIELD_COLUMNS, "d_shapes")


def _mirrored(
    objs: list[tuple[dict[str, Any], int | None, bool]], mirror: Projection
) -> tuple[TimeIndexBuilder, TimeIndex]:
    """A build given ``mirror``, finished unshared (every field is unpacked)."""
    builder = TimeIndexBuilder(mirror)
    for obj, epoch, gated in objs:
        builder.add(obj, epoch, gated)
    return builder, builder.finish(None)


def test_mirror_keeps_nothing_twice_and_builds_the_same(tmp_path: Path) -> None:
    """Given the store's projection, the build keeps no field record of its own."""
    root = tmp_path / "gen"
    gen_store(root, GenParams(300, 5, 40))
    engine = open_engine(root)
    objs = _objs(engine.shards)
    builder = TimeIndexBuilder(engine.projection)
    for obj, epoch, gated in objs:
        builder.add(obj, epoch, gated)
    recs = builder._index._recs
    assert recs is not None and len(recs) == 300 and not recs.data
    index = builder.finish(None)
    plain = _build(objs)
    for name in _FIELD_LISTS:
        assert getattr(index, name) == getattr(plain, name), name
    # The mirror grows its shapes lists in place: the index holds its own copies.
    mine, theirs = index.d_shapes, engine.projection.dec_shapes
    assert not any(a is b for a, b in zip(mine, theirs, strict=True))
    for stamp in _cuts(index, random.Random(4), 8):
        check(engine.shards, index, stamp, deep=False)


@pytest.mark.parametrize("seed", range(6))
def test_mirror_that_differs_changes_nothing(tmp_path: Path, seed: int) -> None:
    """Stubs, gate failures, skipped times, another store: the mirror only saves."""
    shards = _random_store(tmp_path, seed)
    objs = _objs(shards)
    plain = _build(objs)
    _random_store(tmp_path, seed + 100)
    for mirror in (
        open_engine(tmp_path / f"r{seed}").projection,  # the same log, replayed
        open_engine(tmp_path / f"r{seed + 100}").projection,  # another log
    ):
        _, index = _mirrored(objs, mirror)
        for name in _FIELD_LISTS:
            assert getattr(index, name) == getattr(plain, name), name
        stamps = sorted({e for _, e, _ in objs if e is not None})
        for stamp in random.Random(seed).sample(stamps, min(12, len(stamps))):
            check(shards, index, stamp, deep=False)
            assert state(index.at(_at(stamp))) == state(plain.at(_at(stamp)))


def test_packed_records_round_trip() -> None:
    """Records keep every value a field can hold, and the empty record is the mirror's."""
    recs = PackedRecs()
    odd = ("t\ud800é", "", "a", "r\n", " s ", None, 2**70, "i", "h")
    plain = ("t", "why", "a", "", "", 1_767_225_600, -3, "i", "sha256:0")
    recs.append(odd)
    recs.append(plain)
    assert (len(recs), recs[0], recs[1]) == (2, odd, plain)


def _parts(dumped: bytes) -> tuple[Any, bytes]:
    """A dump's containers (marshal's bytes vary with reference counts) and arrays."""
    (head,) = struct.unpack("<Q", dumped[:8])
    return marshal.loads(dumped[8 : 8 + head]), dumped[8 + head :]


def test_a_dump_loads_from_a_mapped_file_and_a_damaged_one_is_refused(
    tmp_path: Path,
) -> None:
    """The arrays after the containers load straight from the mapped file, to the
    same index; an array placed past the end, a cut payload and the previous
    format are refused with ``ValueError`` (the caller rebuilds)."""
    shards = _random_store(tmp_path, 5, 100)
    index = _build(_objs(shards))
    dumped = index.dumps()
    path = tmp_path / "index.bin"
    path.write_bytes(dumped)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ) as m:
        loaded = TimeIndex.loads(memoryview(m))
        assert _parts(loaded.dumps()) == _parts(dumped)
        for stamp in _cuts(index, random.Random(6), 10):
            assert state(loaded.at(_at(stamp))) == state(index.at(_at(stamp)))
        del loaded
    # Only read (the slider's index): the prop lines stay where they lie, each
    # read when asked for; the answers and a dump of it are the same.
    read = TimeIndex.loads(memoryview(dumped), mapped=True)
    held = [h[2] for keys in read.props.values() for h in keys.values()]
    built = [h[2] for keys in index.props.values() for h in keys.values()]
    assert held and not any(isinstance(lines, list) for lines in held)
    assert [list(x) for x in held] == built
    assert [x[-1] for x in held] == [x[-1] for x in built]
    assert _parts(read.dumps()) == _parts(dumped)
    for stamp in _cuts(index, random.Random(7), 10):
        assert state(read.at(_at(stamp))) == state(index.at(_at(stamp)))
    containers, arrays = _parts(dumped)
    containers = list(containers)
    containers[4] = [(len(arrays) - 8, 16), *containers[4][1:]]
    moved = marshal.dumps(tuple(containers))
    # A history whose lines run past the text's end.
    props = {e: dict(keys) for e, keys in containers[10].items()}
    keys = next(iter(props.values()))
    key, hist = next(iter(keys.items()))
    keys[key] = [hist[0], hist[1], (hist[2][0], 10**6), hist[3]]
    past = marshal.dumps(tuple([*containers[:10], props, *containers[11:]]))
    bad = [
        struct.pack("<Q", len(moved)) + moved + arrays,
        struct.pack("<Q", len(past)) + past + arrays,
        dumped[: len(dumped) - 8],
        dumped[:5],
        marshal.dumps((5, *containers[1:])),
    ]
    for data in bad:
        with pytest.raises(ValueError):
            TimeIndex.loads(data)


def test_prop_lines_of_any_text_read_back_in_place(tmp_path: Path) -> None:
    """Prop values in several scripts, with separators other than a newline (NEL,
    U+2028) and a value that was a newline: each line read in place is the line."""
    from kgai_tui.core.store.shards import read_log

    w = ShardWriter("i01", actor="ann")
    values = ["é", "日本語", "", "a\u0085b", "x\u2028y", "🚀", "two\nlines", "  pad  "]
    for n, value in enumerate(values):
        w.add(
            decision(f"d{n}", [upsert("svc", "api", note=value, step=str(n))]),
            lamport=n + 1,
            recorded_at=f"2026-01-01T00:00:{n:02d}Z",
        )
    write_store(tmp_path, {"i01.ndjson": w.to_bytes()})
    index = _build(_objs(read_log(tmp_path / "log")))
    read = TimeIndex.loads(memoryview(index.dumps()), mapped=True)
    keys = read.props[element_id("svc", "api")]
    assert [list(h[2]) for h in keys.values()] == [
        list(h[2]) for h in index.props[element_id("svc", "api")].values()
    ]
    notes = list(keys["note"][2])
    assert len(notes) == len(values) and notes[1] == "note=日本語"
    for n in range(len(values)):
        cut = _at(BASE + n)
        assert state(read.at(cut)) == state(index.at(cut))
