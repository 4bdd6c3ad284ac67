"""The read model on disk answers exactly what a fresh replay answers (issue 17).

Every property builds a real store and a real SQLite model in a temporary cache
directory, then compares the model with ``open_engine()`` of the same
files: every decision column, every element's shapes and heads in the replay's
own orders, the graph (nodes, edges and in-edges in NetworkX's orders), and the
JSON of the reads the model serves. Each also asserts how the model was opened, so
a model that is silently rebuilt every time (or trusted when it should not be)
fails.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
from builders import write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_replay_properties import Chooser, Generated, lines, stores

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.kg import export_answer
from kgai_tui.core.answers.people import people_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model import build, graph_log
from kgai_tui.core.model.disk import DiskProjection
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.model.people_rows import (
    people_delta,
    refresh_heads,
    write_heads,
    write_people,
)
from kgai_tui.core.model.schema import DDL, DEC_COLUMNS, model_path
from kgai_tui.core.reads.context import context_obj
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.reads.health import doctor_problems, status_obj
from kgai_tui.core.reads.kg import conflicts_obj, heads_obj, history_obj, resolve_obj
from kgai_tui.core.reads.people import people_obj
from kgai_tui.core.reads.timeline import Filters, timeline_columns, timeline_select
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.core.report.html import render_html
from kgai_tui.core.report.markdown import render_markdown
from kgai_tui.core.report.report import build_report
from kgai_tui.core.wire.codec import event_obj
from kgai_tui.demo import DEMO_STORE

SETTINGS = settings(max_examples=25, deadline=None)
# Topics and paths over the generator's vocabulary (titles, rationales, names, props),
# some matching nothing; one with a small limit, so ties at the cut are exercised.
RECALLS = [
    ([], "billing", 15),
    ([], "use x", 2),
    ([], "because split", 15),
    ([], "unicode title", 15),
    ([], "zzz nothing", 15),
    (["src/billing/x"], "", 15),
    (["src/billing/x"], "use", 1),
    (["src/**"], "same", 15),
]


def state(p: ProjectionView) -> dict[str, Any]:
    """Everything a projection holds, in the orders a reader can observe."""
    graph = p.graph
    return {
        "applied": p.applied_count,
        "dec": [
            list(col)
            for col in (
                p.dec_id,
                p.dec_title,
                p.dec_rationale,
                p.dec_author,
                p.dec_refs,
                p.dec_summary,
                p.dec_time,
                p.dec_lamport,
                p.dec_install,
                p.dec_hash,
            )
        ]
        # List fields as lists: the replay's edges are packed tuples, rows' JSON lists.
        + [
            [list(v) for v in col]
            for col in (p.dec_shapes, p.dec_supersedes, p.dec_superseded_by)
        ],
        "el_shapes": [(e, list(s.items())) for e, s in p.el_shapes.items()],
        "heads": [(e, sorted(h)) for e, h in p.heads.items()],
        "contested": sorted(p.contested),
        "unknown": [list(x) for x in p.unknown_ops],
        "nodes": list(graph.nodes(data=True)),
        "edges": list(graph.edges(keys=True, data=True)),
        "in_edges": [list(graph.in_edges(n, keys=True)) for n in graph.nodes],
        "max_auth": [(e, p.max_authority_lamport(e)) for e in graph.nodes],
        "elements": p.element_count(),
    }


def _header_counts(p: Any) -> list[int]:
    if isinstance(p, DiskProjection):
        return [p.recorded_count(), p.writer_count()]
    hashes = list(p.dec_hash)
    return [len(hashes) - hashes.count(""), len(set(p.dec_install) - {""})]


def _model_must_answer() -> Any:
    raise AssertionError("the model's tables did not give the export")


#: The report's ``--last`` values every comparison renders (markdown), and the HTML's.
REPORT_LASTS: Final = (0, 1, 3, 50)


def reads(
    engine: Any, reports: tuple[int, ...] = REPORT_LASTS, events_every: int = 1
) -> bytes:
    """The JSON of every read the model serves, for every element.

    ``reports``: the report's ``--last`` values to render (each costs ~0.2 s on a
    2,000-decision store; the kill rounds render one, the properties all).
    ``events_every``: read back every n-th decision's event and the last one (each
    costs ~0.4 ms from the model's lines; the kill rounds read one in ten)."""
    p = engine.projection
    recorded = [(h, i) for h, i in zip(p.dec_hash, p.dec_install, strict=True) if h]
    sampled = recorded[::events_every] + recorded[-1:]
    eids = sorted(p.graph.nodes)
    out = {
        "status": {k: v for k, v in status_obj(engine).items() if k != "root"},
        "heads": heads_obj(p),
        "conflicts": conflicts_obj(p),
        "history": [history_obj(p, e) for e in eids if p.el_shapes.get(e)],
        "heads_one": [heads_obj(p, e) for e in eids],
        "resolve": [resolve_obj(p, e) for e in eids if ":" in e],
        "digest": export_digest(export_parts(p)),
        # The report now (the model: a few queries over the decision rows).
        "report": [render_markdown(build_report(p, None, last)) for last in reports]
        + ([render_html(build_report(p, None, 2))] if reports == REPORT_LASTS else []),
        # What the explorer's header shows (the model: from the people tables).
        "header": _header_counts(p),
        # The model exports from its tables (ModelEngine.export_source), the replay
        # from its projection.
        "export": encode(
            export_answer(lambda: engine, canonical=True, whole=_model_must_answer)
        ).decode(),
        "recall": [
            context_obj(p, paths=paths, about=about, limit=limit)
            for paths, about, limit in RECALLS
        ],
        "problems": [x.describe() for x in engine.problems],
        # Broken chains from the model's shard states; each unknown op's place and
        # each decision's full event read back from its line (event_lines).
        "doctor": doctor_problems(engine),
        "events": [
            None if ev is None else event_obj(ev)
            for ev in (engine.event_for(h, i) for h, i in sampled)
        ],
        # The model answers from its per-author totals, the replay from every
        # decision (people_obj): the printed bytes must not differ.
        "people": encode(people_answer(lambda: engine)).decode(),
        # The explorer's timeline (the model: streamed queries, no row kept).
        "timeline": _timeline(p),
    }
    return orjson.dumps(out, option=orjson.OPT_SORT_KEYS)


def _timeline(p: ProjectionView) -> list[Any]:
    """The timeline's order and choices, and its rows and stamps under each writer,
    author, kind and status alone, a few combinations, and names held by nobody."""
    v = KgView(p)
    columns = timeline_columns(v)
    w, a, k = columns.writers, columns.authors, columns.kinds
    filters: list[Filters] = [
        (None, None, None, None),
        *((x, None, None, None) for x in w),
        *((None, x, None, None) for x in a),
        *((None, None, x, None) for x in k),
        *((None, None, None, x) for x in ("head", "superseded", "dead", "other")),
        (w[0] if w else None, None, k[0] if k else None, "superseded"),
        (None, a[-1] if a else None, k[-1] if k else None, "dead"),
        (w[-1] if w else None, a[0] if a else None, None, "head"),
        ("nobody", None, None, None),
        (None, "nobody", "nothing", None),
    ]
    selected = [timeline_select(v, columns, f) for f in filters]
    return [
        [list(columns.order), sorted(columns.heads), w, a, k],
        *([list(rows), list(stamps)] for rows, stamps in selected),
    ]


@contextmanager
def scratch() -> Iterator[tuple[Path, Path]]:
    """A store directory and a cache directory, removed afterwards."""
    top = Path(tempfile.mkdtemp(prefix="kgai-model-"))
    try:
        yield top / "store", top / "cache"
    finally:
        shutil.rmtree(top, ignore_errors=True)


PEOPLE_TABLES = ("person", "person_el", "person_writer", "head")


def people_tables(db: sqlite3.Connection) -> dict[str, list[Any]]:
    """The people tables' rows, sorted."""
    return {t: sorted(db.execute(f"SELECT * FROM {t}")) for t in PEOPLE_TABLES}


def built_people_tables(p: Projection) -> dict[str, list[Any]]:
    """The people tables a build writes for the replayed projection ``p``."""
    db = sqlite3.connect(":memory:")
    db.executescript(DDL)
    cols = (p.dec_hash, p.dec_author, p.dec_time, p.dec_install, p.dec_shapes)
    write_people(db, *cols, p.dec_superseded_by, p.el_shapes.items())
    write_heads(db, p.heads.items(), p.dec_hash, p.dec_author, p.dec_superseded_by)
    return people_tables(db)


def assert_same(
    model: ModelEngine,
    root: Path,
    reports: tuple[int, ...] = REPORT_LASTS,
    events_every: int = 1,
) -> None:
    """The model equals a fresh in-memory replay of the store, state and reads;
    its people tables, however updated, equal what a build writes."""
    replay = open_engine(root)
    try:
        assert isinstance(model.projection, DiskProjection)
        assert state(model.projection) == state(replay.projection)
        assert reads(model, reports, events_every) == reads(
            replay, reports, events_every
        )
        assert isinstance(replay.projection, Projection)
        assert people_tables(model.db) == built_people_tables(replay.projection)
    finally:
        model.close()


def append_files(root: Path, files: dict[str, bytes]) -> None:
    """Append bytes to shards (creating new ones)."""
    for name, data in files.items():
        with open(root / "log" / name, "ab") as fh:
            fh.write(data)


def split(
    gen: Generated, c: Chooser
) -> tuple[dict[str, bytes], list[dict[str, bytes]]]:
    """Each writer's shard cut into a prefix and up to three appended parts."""
    first: dict[str, bytes] = {}
    later: list[dict[str, bytes]] = [{}, {}, {}]
    for w in gen.writers:
        evs = gen.shards[w]
        cuts = sorted(c.integer(0, len(evs)) for _ in range(3))
        bounds = [0, *cuts, len(evs)]
        name = f"{w}.ndjson"
        if bounds[1] or c.chance(50):
            first[name] = lines(evs[: bounds[1]])
        for k in range(3):
            part = evs[bounds[k + 1] : bounds[k + 2]]
            if part:
                later[k][name] = lines(part)
    return first, later


@SETTINGS
@given(gen=stores())
def test_cold_build_equals_replay(gen: Generated) -> None:
    with scratch() as (root, cache), pytest.MonkeyPatch.context() as mp:
        mp.setattr(build, "_ROWS_BLOCK", 3)  # the rows written a few at a time
        write_store(root, gen.files())
        model = open_model(root, cache)
        assert model.how == "cold"
        assert_same(model, root)
        again = open_model(root, cache)
        assert again.how == "warm"
        assert_same(again, root)


@pytest.mark.parametrize("log_floor", [None, 0])
@SETTINGS
@given(gen=stores(), data=st.data())
def test_appends_in_any_split_equal_replay(
    gen: Generated, data: st.DataObject, log_floor: int | None
) -> None:
    """``log_floor`` 0: the graph's log folded into its state as soon as it
    passes an eighth of the elements (at these sizes it never does otherwise)."""
    c = Chooser(draw=data.draw)
    first, later = split(gen, c)
    with pytest.MonkeyPatch.context() as mp, scratch() as (root, cache):
        if log_floor is not None:
            mp.setattr(graph_log, "_LOG_FLOOR", log_floor)
        write_store(root, first)
        open_model(root, cache).close()
        for part in later:
            if not part:
                continue
            append_files(root, part)
            model = open_model(root, cache)
            # Extended in place when every new event sorts after the applied ones.
            assert model.how in ("append", "cold")
            assert_same(model, root)


def linked_store(tmp_path: Path, first: int = 2) -> tuple[Path, Path, Any]:
    """Six decisions, each setting a feature's props and linking it to a new
    service; the store holds the ``first`` of them (the writer holds all six)."""
    from builders import ShardWriter, decision, link, upsert

    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    for n in range(6):
        feature = ("feature", f"F{n % 3}")
        w.add(
            decision(
                f"d{n}",
                [
                    upsert(*feature, step=str(n)),
                    link("add_link", feature, ("service", f"S{n}"), "uses"),
                ],
            ),
            lamport=n + 1,
            recorded_at=f"2026-01-0{n + 1}T00:00:00Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events[:first])})
    return root, cache, w


def test_appends_after_the_last_event_extend_in_place(tmp_path: Path) -> None:
    root, cache, w = linked_store(tmp_path, first=3)
    assert open_model(root, cache).how == "cold"
    append_files(root, {"i-one.ndjson": lines(w.events[3:])})
    model = open_model(root, cache)
    assert model.how == "append"
    assert_same(model, root)


def test_a_log_mostly_new_is_built_again_not_extended(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Appends under a third of the log extend the model; a clone-sized pull (a
    third or more) rebuilds it, which costs less than extending row by row."""
    from builders import ShardWriter, decision, upsert

    from kgai_tui.core.model import update

    monkeypatch.setattr(update, "_REBUILD_MIN_BYTES", 0)
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    for n in range(20):
        w.add(
            decision(f"d{n}", [upsert("feature", f"F{n % 4}")]),
            lamport=n + 1,
            recorded_at=f"2026-01-{n + 1:02d}T00:00:00Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events[:10])})
    assert open_model(root, cache).how == "cold"
    append_files(root, {"i-one.ndjson": lines(w.events[10:12])})  # 2 of 12
    model = open_model(root, cache)
    assert model.how == "append"
    assert_same(model, root)
    append_files(root, {"i-one.ndjson": lines(w.events[12:])})  # 8 of 20
    assert open_model(root, cache).how == "cold"
    assert_same(open_model(root, cache), root)


def _damage(path: Path, how: str, rnd: random.Random) -> None:
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            fh.truncate(rnd.randrange(size))
    else:
        size = path.stat().st_size
        at = rnd.randrange(size)
        with open(path, "r+b") as fh:
            fh.seek(at)
            old = fh.read(1)
            fh.seek(at)
            fh.write(bytes([(old[0] + 1 + rnd.randrange(255)) % 256]))


@SETTINGS
@given(
    gen=stores(),
    how=st.sampled_from(["delete", "truncate", "byte", "seal", "seal-fifo", "wal"]),
    seed=st.integers(0, 2**32),
)
def test_damaged_model_is_rebuilt_not_believed(
    gen: Generated, how: str, seed: int
) -> None:
    rnd = random.Random(seed)
    with scratch() as (root, cache):
        write_store(root, gen.files())
        open_model(root, cache).close()
        path = model_path(root, cache)
        if how == "seal":
            path.with_name(path.name + ".seal").write_bytes(b"[1,2,3,4]")
        elif how == "seal-fifo":  # an open() of it would wait for a writer for ever
            seal = path.with_name(path.name + ".seal")
            seal.unlink()
            os.mkfifo(seal)
        elif how == "wal":
            # Bytes in the write-ahead log that no writer of ours put there.
            path.with_name(path.name + "-wal").write_bytes(os.urandom(600))
        else:
            _damage(path, how, rnd)
        model = open_model(root, cache)
        assert model.how == "cold"
        assert_same(model, root)


def test_model_lives_in_the_cache_and_reads_write_nothing_in_the_store(
    tmp_path: Path,
) -> None:
    from builders import ShardWriter, decision, upsert

    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    w.add(
        decision("d", [upsert("feature", "F")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    write_store(root, {"i-one.ndjson": lines(w.events)})
    before = sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*"))
    open_model(root, cache).close()
    assert model_path(root, cache).is_file()
    assert model_path(root, cache).is_relative_to(cache)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def test_rewritten_shard_rebuilds(tmp_path: Path) -> None:
    from builders import ShardWriter, decision, upsert

    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    for n in range(4):
        w.add(
            decision(f"d{n}", [upsert("feature", f"F{n}")]),
            lamport=n + 1,
            recorded_at="2026-01-01T00:00:00Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events)})
    open_model(root, cache).close()
    (root / "log" / "i-one.ndjson").write_bytes(lines(w.events[:2]))
    model = open_model(root, cache)
    assert model.how == "cold"
    assert_same(model, root)


def test_recall_segments_and_merges_stay_exact(monkeypatch: Any) -> None:
    """Small thresholds force segment files and merges on every few appends, and
    element deltas into the delta file, or the element file written again."""
    from test_element_delta import graph_elements, scored_elements
    from test_replay_properties import generate

    from kgai_tui.core.model import recall_delta, recall_store

    monkeypatch.setattr(recall_store, "SEGMENT_EVERY", 3)
    monkeypatch.setattr(recall_delta, "ELEMENT_DELTA_MAX", 2)
    monkeypatch.setattr(recall_store, "DELTA_FILE_SHARE", 1)
    from kgai_tui.core.model.disk import read_meta

    segmented = merged = extended = filed = 0
    for seed in range(12):
        c = Chooser(rnd=random.Random(seed))
        gen = generate(c, min_decisions=20, max_decisions=40)
        first, later = split(gen, c)
        with scratch() as (root, cache):
            write_store(root, first)
            built = open_model(root, cache)
            counts = [
                int(s["count"]) for s in read_meta(built.db, "recall")["segments"]
            ]
            built.close()
            for part in later:
                if not part:
                    continue
                append_files(root, part)
                model = open_model(root, cache)
                recall = read_meta(model.db, "recall")
                before, counts = counts, [int(s["count"]) for s in recall["segments"]]
                # Every segment outweighs the newer ones together (tiers.py).
                assert all(
                    counts[i] > sum(counts[i + 1 :]) for i in range(len(counts) - 1)
                )
                if sum(counts) > sum(before):  # a segment was written
                    if len(counts) > len(before):
                        segmented += 1
                    else:
                        merged += 1
                filed += "delta_file" in recall
                extended += model.how == "append"
                assert_same(model, root)
                assert scored_elements(root, cache) == graph_elements(root)
    # The thresholds were really crossed, and updates really happened in place.
    assert segmented >= 3, segmented
    assert merged >= 10, merged
    assert extended >= 5, extended
    assert filed >= 3, filed


def test_a_segment_merge_reads_its_stored_rows_a_block_per_query(
    monkeypatch: Any, tmp_path: Path
) -> None:
    """A merge indexes again the decisions of the segments it merges, most of them
    stored rows. Read one query each, a merge took 0.7 s of a 1,000-event append
    at 10M (py-spy): the update's projection took its ``prefetch`` for one over
    rows in memory, which has nothing to fetch. The build's segment, larger than
    the appended ones together, stays as it is."""
    from builders import ShardWriter, decision, upsert

    from kgai_tui.core.model import recall_store
    from kgai_tui.core.model.disk import read_meta
    from kgai_tui.core.model.rows import DecRows

    monkeypatch.setattr(recall_store, "SEGMENT_EVERY", 4)
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")

    def add(count: int) -> None:
        for _ in range(count):
            n = len(w.events)
            w.add(
                decision(f"Ledger rule {n}", [upsert("feature", f"F{n % 3}")]),
                lamport=n + 1,
                recorded_at=f"2026-01-01T00:00:{n:02d}Z",
            )

    add(20)
    write_store(root, {"i-one.ndjson": lines(w.events)})
    open_model(root, cache).close()
    add(5)  # a second segment
    write_store(root, {"i-one.ndjson": lines(w.events)})
    model = open_model(root, cache)
    assert len(read_meta(model.db, "recall")["segments"]) == 2
    model.close()

    alone: list[int] = []
    row = DecRows.row

    def counted(self: DecRows, i: int) -> list[Any]:
        if i not in self.rows and 0 <= i < self.base:
            alone.append(i)
        return row(self, i)

    monkeypatch.setattr(DecRows, "row", counted)
    add(5)  # as many as the second segment: the two merged, the first kept
    write_store(root, {"i-one.ndjson": lines(w.events)})
    model = open_model(root, cache)
    assert model.how == "append"
    segments = read_meta(model.db, "recall")["segments"]
    assert [int(s["count"]) for s in segments] == [20, 10]
    assert alone == []
    assert_same(model, root)
    model.close()


def test_an_update_reads_the_rows_it_touches_a_query_per_kind(
    monkeypatch: Any, tmp_path: Path
) -> None:
    """An appended batch asks whether its decision ids are stored, and for its
    elements, once per kind rather than once per id (1,000 events at 10M: ~0.15
    s of single lookups). An id SQLite's JSON could not carry whole (a NUL in an
    element id) is still looked up on its own, and the model equals the replay."""
    from builders import ShardWriter, decision, link, upsert

    from kgai_tui.core.model.rows import DecRows
    from kgai_tui.core.model.update import OverlayProjection
    from kgai_tui.core.wire.model import Mutation

    odd = "el_odd\x00tail"  # a hostile id; a prefix of it is stored too
    w = ShardWriter("i-one")

    def add(n: int, *muts: Mutation, supersedes: tuple[str, ...] = ()) -> str:
        d = decision(f"Rule {n}", list(muts), supersedes=supersedes)
        w.add(d, lamport=n + 1, recorded_at=f"2026-01-01T00:00:{n:02d}Z")
        return d.id

    def odd_upsert(**props: str) -> Mutation:
        return Mutation(
            op="upsert_element",
            element_id=odd,
            kind="service",
            name="Odd",
            props=tuple(sorted(props.items())),
        )

    ids = [add(n, upsert("feature", f"F{n}")) for n in range(6)]
    add(6, odd_upsert(tier="1"))
    add(7, Mutation(op="upsert_element", element_id="el_odd", kind="x", name="y"))
    root, cache = tmp_path / "store", tmp_path / "cache"
    write_store(root, {"i-one.ndjson": lines(w.events)})
    open_model(root, cache).close()

    for n in range(6):  # each touches a stored element and supersedes a decision
        add(
            8 + n,
            upsert("feature", f"F{n}", owner="ops"),
            link(
                "add_link", ("feature", f"F{n}"), ("feature", f"F{(n + 1) % 6}"), "USES"
            ),
            supersedes=(ids[n],),
        )
    add(14, odd_upsert(tier="2"))
    write_store(root, {"i-one.ndjson": lines(w.events)})
    alone: list[str] = []
    find, fetch_el = DecRows.find, OverlayProjection._stored_element

    def counted_find(self: DecRows, dec_id: str) -> int | None:
        alone.append(dec_id)
        return find(self, dec_id)

    def counted_el(self: OverlayProjection, eid: str) -> tuple[str, str, str] | None:
        alone.append(eid)
        return fetch_el(self, eid)

    monkeypatch.setattr(DecRows, "find", counted_find)
    monkeypatch.setattr(OverlayProjection, "_stored_element", counted_el)
    model = open_model(root, cache)
    assert model.how == "append"
    assert alone == [odd]  # the NUL id on its own; everything else batched
    assert_same(model, root)
    found = model.projection.element(odd)
    model.close()
    assert found == ("service", "Odd", "tier=2")


def test_a_read_that_extends_the_model_prints_the_shards_twice(
    monkeypatch: Any, tmp_path: Path
) -> None:
    """Once to see the log grew, once under the lock to extend the model; the
    read then opens the model holding the log that second print saw (a third
    print cost 0.03-0.05 s at 300 shards, all appended to)."""
    from builders import ShardWriter, decision, upsert

    from kgai_tui.core.model import open as model_open

    w = ShardWriter("i-one")
    w.add(
        decision("First", [upsert("feature", "A")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    root, cache = tmp_path / "store", tmp_path / "cache"
    write_store(root, {"i-one.ndjson": lines(w.events)})
    open_model(root, cache).close()
    w.add(
        decision("Second", [upsert("feature", "B")]),
        lamport=2,
        recorded_at="2026-01-01T00:00:00Z",
    )
    write_store(root, {"i-one.ndjson": lines(w.events)})
    printed = []
    prints = model_open.prints_from_disk

    def counted(*args: Any) -> Any:
        printed.append(args[1])
        return prints(*args)

    monkeypatch.setattr(model_open, "prints_from_disk", counted)
    model = open_model(root, cache)
    assert model.how == "append"
    assert len(printed) == 2
    assert_same(model, root)
    model.close()


def test_people_in_the_model_cover_what_people_counts() -> None:
    """Seeded stores, built then extended in parts: the model's ``people`` bytes equal
    the replay's on every step (:func:`assert_same`), and the stores really hold
    what the counts hinge on: placeholders, superseded decisions that are still a
    head elsewhere, dead ends, conflicts, authors writing from several installs."""
    from test_replay_properties import generate

    seen: dict[str, int] = dict.fromkeys(
        ("placeholder", "superseded_head", "dead_end", "conflict", "writers", "append"),
        0,
    )
    for seed in range(10):
        c = Chooser(rnd=random.Random(seed))
        gen = generate(c, min_decisions=25, max_decisions=50)
        first, later = split(gen, c)
        with scratch() as (root, cache):
            write_store(root, first)
            assert_same(open_model(root, cache), root)
            for part in later:
                if part:
                    append_files(root, part)
                    model = open_model(root, cache)
                    seen["append"] += model.how == "append"
                    assert_same(model, root)
            p = open_engine(root).projection
            rows = people_obj(p)["people"]
            seen["placeholder"] += "" in p.dec_hash
            seen["superseded_head"] += any(
                p.dec_superseded_by[i] for held in p.heads.values() for i in held
            )
            seen["dead_end"] += any(r["dead_ends"] for r in rows)
            seen["conflict"] += any(r["conflicts"] for r in rows)
            seen["writers"] += any(len(r["writers"]) > 1 for r in rows)
    assert min(seen.values()) >= 2, seen


@SETTINGS
@given(gen=stores(), data=st.data())
def test_people_totals_follow_any_change_of_decision_rows(
    gen: Generated, data: st.DataObject
) -> None:
    """The update's arithmetic on its own: decision rows rewritten in ways a replay
    never does (another author, time or install id, recorded or a placeholder,
    other shapes, superseded or not) and rows added; the totals and the heads
    table still equal what a build writes from the rows as they end up."""
    c = Chooser(draw=data.draw)
    with scratch() as (root, cache):
        write_store(root, gen.files())
        open_model(root, cache).close()
        db = sqlite3.connect(model_path(root, cache), isolation_level=None)
        try:
            rows = [
                list(r)
                for r in db.execute(f"SELECT ix, {', '.join(DEC_COLUMNS)} FROM dec")
            ]
            elements = [e for (e,) in db.execute("SELECT id FROM el")] + ["x:new"]
            changed = [r for r in rows if c.chance(30)]
            for n in range(c.integer(0, 3)):
                changed.append(
                    [
                        len(rows) + n,
                        f"new{n}",
                        "",
                        "",
                        "",
                        "",
                        "",
                        None,
                        0,
                        "",
                        "",
                        None,
                        None,
                        None,
                    ]
                )
            for r in changed:
                _rewrite(c, r, elements)
            db.execute("BEGIN IMMEDIATE")
            delta = people_delta(db, [tuple(r) for r in changed])
            db.executemany(
                f"INSERT OR REPLACE INTO dec (ix, {', '.join(DEC_COLUMNS)})"
                f" VALUES ({', '.join('?' * (len(DEC_COLUMNS) + 1))})",
                [tuple(r) for r in changed],
            )
            delta.write(db)
            refresh_heads(db, [tuple(r) for r in changed], [])
            db.execute("COMMIT")
            got = people_tables(db)
            expected = _tables_from_rows(db)
        finally:
            db.close()
    assert got == expected


def _rewrite(c: Chooser, r: list[Any], elements: list[str]) -> None:
    """Change some of a row's people fields (``ix`` + ``DEC_COLUMNS`` layout)."""
    if c.chance(40):
        r[4] = c.choice(["alice", "bob", "zoe", ""])  # author
    if c.chance(40):
        r[7] = c.choice([None, 0, 1_700_000_000, 1_800_000_000, 1_900_000_000])
    if c.chance(30):
        r[9] = c.choice(["i-one", "i-two", "i-three"])  # install
    if c.chance(20):
        r[10] = c.choice(["", "h"])  # hash: a placeholder or recorded
    if c.chance(40):
        shapes = c.subset(elements, 20)
        r[11] = orjson.dumps(shapes).decode() if shapes else None
    if c.chance(40):
        r[13] = c.choice([None, "[0]"])  # superseded_by


def _tables_from_rows(db: sqlite3.Connection) -> dict[str, list[Any]]:
    """The people tables a build writes from the decision and element rows of ``db``."""
    cols: list[list[Any]] = [[], [], [], [], [], []]
    for h, a, t, w, s, by in db.execute(
        "SELECT hash, author, time, install, shapes, superseded_by FROM dec ORDER BY ix"
    ):
        for col, value in zip(
            cols,
            (h, a, t, w, orjson.loads(s) if s else [], by is not None),
            strict=True,
        ):
            col.append(value)
    heads = [
        (e, orjson.loads(h))
        for e, h in db.execute("SELECT id, heads FROM el WHERE heads IS NOT NULL")
    ]
    by_element: dict[str, list[int]] = {}
    for i, shaped in enumerate(cols[4]):
        for e in shaped:
            by_element.setdefault(e, []).append(i)
    mem = sqlite3.connect(":memory:")
    mem.executescript(DDL)
    write_people(mem, *cols, by_element.items())
    write_heads(mem, heads, cols[0], cols[1], cols[5])
    return people_tables(mem)


@pytest.mark.parametrize(
    "shapes",
    ["[[99999, 1]]", "[[-1, 1]]", "[[0]]", "{}", "not json", "[[null, 1]]"],
)
def test_an_export_whose_shapes_do_not_decode_comes_from_the_whole_store(
    tmp_path: Path, shapes: str
) -> None:
    """Rows the seal vouches for are still checked as they are read: a shapes list
    naming no decision never reaches the printed export."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    shutil.copytree(DEMO_STORE, root)
    open_model(root, cache).close()
    path = model_path(root, cache)
    db = sqlite3.connect(path)
    eid = db.execute("SELECT id FROM el WHERE shapes IS NOT NULL LIMIT 1").fetchone()[0]
    with db:
        db.execute("UPDATE el SET shapes = ? WHERE id = ?", (shapes, eid))
    model = ModelEngine(root, db, "warm", [], path)
    assert model.export_source() is None
    whole = open_engine(root)
    got = encode(export_answer(lambda: model, canonical=True, whole=lambda: whole))
    assert got == encode(export_answer(lambda: whole, canonical=True))
    db.close()
