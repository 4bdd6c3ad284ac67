"""``kgai-tui query`` (issue 43): kg's Cypher on the real ladybug database.

Every expected answer here is computed from the projection (the replay) or from
another read of ours, never from the database: kg's documented examples against
``export``, ``history`` and ``conflicts``, thirty queries of our own against the
projection's own fields, and ``--as-of`` against the ``as-of`` read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from builders import meta_written
from counting import counting_opens

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.query import query_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.model.moments import MOMENTS_KEY
from kgai_tui.core.query.guard import refusal
from kgai_tui.core.query.run import QueryError, graph_path, run_query
from kgai_tui.core.reads.as_of import as_of_obj, as_of_view
from kgai_tui.core.reads.kg import conflicts_obj, history_obj, parse_as_of
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.demo import DEMO_STORE

Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def demo() -> Any:
    return open_engine(DEMO_STORE)


def ask(engine: Any, cypher: str, **kw: Any) -> Rows:
    """The rows of a query on the graph of ``engine`` (in memory)."""
    return run_query(engine, cypher, **kw).rows


def by_json(rows: Rows) -> Rows:
    """Rows in the order the answer gives a query without ORDER BY."""
    return sorted(rows, key=marshal)


def _name(p: ProjectionView, eid: str) -> str:
    return (p.element(eid) or ("", "", ""))[1]


def _when(stamp: int | None) -> str:
    if stamp is None:
        return "0001-01-01T00:00:00Z"
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _real(p: ProjectionView) -> list[int]:
    """The decisions that are not stubs."""
    return [i for i, h in enumerate(p.dec_hash) if h]


# --------------------------------------------------------------------------- kg's examples


def test_kg_links_example_is_the_export_s_links(demo: Any) -> None:
    p = demo.projection
    got = ask(
        demo, "MATCH (a:Element)-[r:LINK]->(b:Element) RETURN a.name, r.kind, b.name"
    )
    want = [
        {"a.name": _name(p, s), "b.name": _name(p, t), "r.kind": k}
        for s, t, k in p.graph.edges(keys=True)
    ]
    assert got == by_json(want) and len(got) == p.graph.number_of_edges() > 0


def test_kg_invoice_example_is_its_history(demo: Any) -> None:
    p = demo.projection
    got = ask(
        demo,
        "MATCH (d:Decision)-[:SHAPES]->(e:Element {name:'Invoice'}) "
        "RETURN d.title, d.rationale ORDER BY d.recorded_at",
    )
    hist = history_obj(p, "feature:Invoice")["decisions"]
    assert [(r["d.title"], r["d.rationale"]) for r in got] == [
        (d["title"], d["rationale"]) for d in hist
    ]


def test_kg_undecided_elements_example(demo: Any) -> None:
    p = demo.projection
    got = ask(
        demo,
        "MATCH (e:Element) WHERE NOT EXISTS { MATCH (:Decision)-[:SHAPES]->(e) } "
        "RETURN e.name",
    )
    want = [{"e.name": _name(p, e)} for e in p.graph.nodes if not p.el_shapes.get(e)]
    assert got == by_json(want)


HEADS_QUERY = """MATCH (d:Decision)-[s:SHAPES]->(e:Element)
    WHERE s.authority = true
      AND NOT EXISTS { MATCH (d2:Decision)-[:SUPERSEDES]->(d), (d2)-[s2:SHAPES]->(e)
                       WHERE s2.authority = true }
    WITH e, d ORDER BY d.lamport DESC, d.id SKIP 0
    WITH e, collect(d.id) AS heads, collect(d.title) AS titles
    WHERE size(heads) > 1
    RETURN e.id AS eid, e.name AS name, e.kind AS kind, heads, titles ORDER BY e.id"""


def test_kg_heads_query_is_the_conflicts_read(demo: Any) -> None:
    p = demo.projection
    got = ask(demo, HEADS_QUERY)
    want = conflicts_obj(p)["conflicts"]
    assert len(got) == len(want) > 0
    for row, group in zip(got, want, strict=True):
        assert row["eid"] == group["element_id"]
        assert row["heads"] == group["heads"] and row["titles"] == group["titles"]


def test_every_head_is_the_projection_s(demo: Any) -> None:
    p = demo.projection
    got = ask(
        demo,
        "MATCH (d:Decision)-[s:SHAPES]->(e:Element) WHERE s.authority AND NOT EXISTS "
        "{ MATCH (d2:Decision)-[:SUPERSEDES]->(d), (d2)-[s2:SHAPES]->(e) "
        "WHERE s2.authority } RETURN e.id AS e, d.id AS d",
    )
    want = [{"d": p.dec_id[i], "e": e} for e, hs in p.heads.items() for i in hs]
    assert got == by_json(want)


# --------------------------------------------------------------------------- thirty queries


def _counts(values: list[Any], key: str) -> Rows:
    return [{key: v, "n": n} for v, n in Counter(values).items()]


def _depends_on(p: ProjectionView, target: str, hops: int) -> Rows:
    found: set[str] = set()
    frontier = {e for e in p.graph.nodes if _name(p, e) == target}
    for _ in range(hops):
        frontier = {s for t in frontier for s, _t in p.graph.in_edges(t)}
        found |= frontier
    return [{"a.name": n} for n in {_name(p, e) for e in found}]


def _latest(p: ProjectionView) -> Rows:
    i = min(_real(p), key=lambda i: (-p.dec_lamport[i], p.dec_id[i]))
    return [{"d.id": p.dec_id[i]}]


def _first_author(p: ProjectionView) -> str:
    return sorted({p.dec_author[i] for i in _real(p)})[0]


TABLE: list[tuple[str, Callable[[ProjectionView], Rows]]] = [
    (
        "MATCH (e:Element) RETURN count(e) AS n",
        lambda p: [{"n": p.element_count()}],
    ),
    (
        "MATCH (d:Decision) RETURN count(d) AS n",
        lambda p: [{"n": len(p.dec_id)}],
    ),
    (
        "MATCH (e:Element) RETURN e.kind AS kind, count(*) AS n",
        lambda p: _counts([(p.element(e) or ("",))[0] for e in p.graph.nodes], "kind"),
    ),
    (
        "MATCH (d:Decision) WHERE d.author IS NOT NULL RETURN d.author AS author, "
        "count(*) AS n",
        lambda p: _counts([p.dec_author[i] for i in _real(p)], "author"),
    ),
    (
        "MATCH (:Decision)-[:SUPERSEDES]->(:Decision) RETURN count(*) AS n",
        lambda p: [{"n": sum(len(s) for s in p.dec_supersedes)}],
    ),
    (
        "MATCH (:Decision)-[s:SHAPES]->(:Element) RETURN s.authority AS a, count(*) AS n",
        lambda p: _counts([a for m in p.el_shapes.values() for a in m.values()], "a"),
    ),
    (
        "MATCH (d:Decision)-[:SHAPES]->(e:Element) WITH d, count(e) AS n "
        "WHERE n = 1 RETURN d.id",
        lambda p: [
            {"d.id": p.dec_id[i]} for i in _real(p) if len(p.dec_shapes[i]) == 1
        ],
    ),
    (
        "MATCH (e:Element {name:'Invoice'}) RETURN e.props",
        lambda p: [
            {"e.props": (p.element(e) or ("", "", ""))[2]}
            for e in p.graph.nodes
            if _name(p, e) == "Invoice"
        ],
    ),
    (
        "MATCH (a:Element)-[:LINK*1..3]->(b:Element {name:'Payments'}) "
        "RETURN DISTINCT a.name",
        lambda p: _depends_on(p, "Payments", 3),
    ),
    (
        "MATCH (a:Element)-[:LINK]->(b:Element {name:'Postgres'}) RETURN DISTINCT a.name",
        lambda p: _depends_on(p, "Postgres", 1),
    ),
    (
        "MATCH (d:Decision) WHERE d.lamport IS NOT NULL "
        "RETURN d.id ORDER BY d.lamport DESC, d.id LIMIT 1",
        _latest,
    ),
    (
        "MATCH (d:Decision) WHERE d.recorded_at >= timestamp('2026-02-01') "
        "RETURN count(*) AS n",
        lambda p: [
            {
                "n": sum(
                    1
                    for i in _real(p)
                    if (p.dec_time[i] or 0)
                    >= datetime(2026, 2, 1, tzinfo=UTC).timestamp()
                )
            }
        ],
    ),
    (
        "MATCH (e:Element) WHERE e.kind = 'service' RETURN e.name ORDER BY e.name",
        lambda p: [
            {"e.name": n}
            for n in sorted(
                _name(p, e)
                for e in p.graph.nodes
                if (p.element(e) or ("",))[0] == "service"
            )
        ],
    ),
    (
        "MATCH (d:Decision) WHERE lower(d.title) CONTAINS 'invoice' RETURN count(*) AS n",
        lambda p: [{"n": sum("invoice" in p.dec_title[i].lower() for i in _real(p))}],
    ),
    (
        "MATCH (d:Decision) WHERE d.title CONTAINS 'Invoice' RETURN count(*) AS n",
        lambda p: [{"n": sum("Invoice" in p.dec_title[i] for i in _real(p))}],
    ),
    (
        "MATCH (e:Element)<-[:SHAPES]-(d:Decision) RETURN e.name, count(d) AS n",
        lambda p: [
            {"e.name": _name(p, e), "n": len(m)} for e, m in p.el_shapes.items() if m
        ],
    ),
    (
        "MATCH (d:Decision) WHERE d.install_id IS NOT NULL RETURN DISTINCT d.install_id",
        lambda p: [{"d.install_id": i} for i in {p.dec_install[i] for i in _real(p)}],
    ),
    (
        "MATCH (d:Decision) WHERE d.recorded_at IS NOT NULL "
        "RETURN d.recorded_at ORDER BY d.recorded_at LIMIT 1",
        lambda p: [{"d.recorded_at": _when(min(p.dec_time[i] or 0 for i in _real(p)))}],
    ),
    (
        "MATCH (d:Decision) WHERE d.refs <> '' RETURN d.id, d.refs",
        lambda p: [
            {"d.id": p.dec_id[i], "d.refs": p.dec_refs[i]}
            for i in _real(p)
            if p.dec_refs[i]
        ],
    ),
    (
        "MATCH (d:Decision) WHERE d.event_hash IS NOT NULL AND NOT EXISTS "
        "{ MATCH (:Decision)-[:SUPERSEDES]->(d) } RETURN count(d) AS n",
        lambda p: [{"n": sum(1 for i in _real(p) if not p.dec_superseded_by[i])}],
    ),
    (
        "MATCH ()-[r:LINK]->() RETURN r.kind AS kind, count(*) AS n",
        lambda p: _counts([k for _s, _t, k in p.graph.edges(keys=True)], "kind"),
    ),
    (
        "MATCH (n:Decision)-[:SUPERSEDES]->(d:Decision) WHERE d.author = 'dee' "
        "RETURN DISTINCT d.title",
        lambda p: [
            {"d.title": t}
            for t in {
                p.dec_title[j]
                for s in p.dec_supersedes
                for j in s
                if p.dec_hash[j] and p.dec_author[j] == "dee"
            }
        ],
    ),
    (
        "MATCH (a:Element {name:'Invoice'})-[r:LINK]-(b:Element) RETURN b.name, r.kind",
        lambda p: [
            {"b.name": _name(p, t if _name(p, s) == "Invoice" else s), "r.kind": k}
            for s, t, k in p.graph.edges(keys=True)
            if "Invoice" in (_name(p, s), _name(p, t))
        ],
    ),
    (
        "MATCH (d:Decision) WHERE d.summary <> '' RETURN count(*) AS n",
        lambda p: [{"n": sum(1 for i in _real(p) if p.dec_summary[i])}],
    ),
    (
        "MATCH (d:Decision) RETURN max(d.lamport) AS top",
        lambda p: [{"top": max(p.dec_lamport[i] for i in _real(p))}],
    ),
    (
        "MATCH (e:Element) WHERE e.props CONTAINS 'paths=' RETURN e.name",
        lambda p: [
            {"e.name": _name(p, e)}
            for e in p.graph.nodes
            if "paths=" in (p.element(e) or ("", "", ""))[2]
        ],
    ),
    (
        "MATCH (a:Decision)-[:SUPERSEDES]->(b:Decision) WHERE a.author <> b.author "
        "RETURN count(*) AS n",
        lambda p: [
            {
                "n": sum(
                    1
                    for i, s in enumerate(p.dec_supersedes)
                    for j in s
                    if p.dec_hash[j] and p.dec_author[i] != p.dec_author[j]
                )
            }
        ],
    ),
    (
        "MATCH (e:Element) RETURN e.name ORDER BY e.name DESC LIMIT 3",
        lambda p: [
            {"e.name": n}
            for n in sorted((_name(p, e) for e in p.graph.nodes), reverse=True)[:3]
        ],
    ),
    (
        "MATCH (e:Element) WITH e.kind AS k, collect(e.name) AS names "
        "RETURN k, size(names) AS n",
        lambda p: [
            {"k": k, "n": n}
            for k, n in Counter(
                (p.element(e) or ("",))[0] for e in p.graph.nodes
            ).items()
        ],
    ),
    (
        "UNWIND [3, 1, 2] AS x RETURN x * 1.5 AS y",
        lambda p: [{"y": 1.5}, {"y": 3.0}, {"y": 4.5}],
    ),
]


@pytest.mark.parametrize(("cypher", "expect"), TABLE, ids=[q for q, _ in TABLE])
def test_thirty_queries_answer_what_the_projection_holds(
    demo: Any, cypher: str, expect: Callable[[ProjectionView], Rows]
) -> None:
    got = ask(demo, cypher)
    want = expect(demo.projection)
    if "ORDER BY" not in cypher:
        want = by_json(want)
    assert got == want
    assert got, "every query of the table has rows on the demo store"


@pytest.mark.parametrize("at", ["2026-01-15", "2026-02-01T12:00:00Z", "2026-03-31"])
def test_as_of_answers_over_the_graph_as_it_stood(demo: Any, at: str) -> None:
    cut = parse_as_of(at)
    view = as_of_view(demo, cut)
    then = as_of_obj(view, cut)
    names = ask(demo, "MATCH (e:Element) WHERE e.name <> '' RETURN e.name", view=view)
    assert names == [{"e.name": n} for n in sorted(then["elements"])]
    links = ask(
        demo,
        "MATCH (a:Element)-[r:LINK]->(b:Element) RETURN a.name AS from, r.kind AS kind, "
        "b.name AS to",
        view=view,
    )
    assert links == by_json(then["links"] or [])
    heads = ask(demo, HEADS_QUERY.replace("WHERE size(heads) > 1", ""), view=view)
    assert [(r["eid"], r["heads"]) for r in heads] == [
        (h["element_id"], h["heads"]) for h in then["heads"]
    ]
    now = ask(demo, "MATCH (d:Decision) RETURN count(d) AS n")[0]["n"]
    before = ask(demo, "MATCH (d:Decision) RETURN count(d) AS n", view=view)[0]["n"]
    assert before < now


# --------------------------------------------------------------------------- refusals


FILE_WORDS = ["COPY", "load", "Export", "IMPORT", "attach", "DETACH", "install"]
WRITES = [
    "MATCH (e:Element) CREATE (x:Element {id: 'x'})",
    "MERGE (x:Element {id: 'x'})",
    "MATCH (e:Element) SET e.name = 'x'",
    "MATCH (e:Element) DELETE e",
    "match (e:Element) remove e.props",
    "DROP TABLE Element",
    "ALTER TABLE Element ADD x STRING",
    "BEGIN TRANSACTION",
    "Create (x:Element {id: 'y'})",
    "MATCH (e:Element) /* read */ SeT e.kind = 'x' // and write",
]


@pytest.mark.parametrize("word", FILE_WORDS)
def test_kg_s_file_words_are_refused_with_kg_s_message(word: str) -> None:
    for text in (
        f"{word} FROM 'x.csv'",
        f"MATCH (e:Element) RETURN e // {word}",
        f"MATCH (e:Element) /* x */ {word.lower()} e",
        f"RETURN 'a' + \"b\"; {word} x",
    ):
        assert refusal(text) == (
            f"kg query is read-only: {word.upper()} statements are not allowed "
            "(file/database I/O)"
        ), text


def test_words_inside_strings_and_names_pass() -> None:
    for text in (
        "MATCH (d:Decision) WHERE d.title CONTAINS 'export' RETURN d.id",
        'MATCH (d:Decision) WHERE d.title = "copy load install" RETURN d.id',
        "MATCH (e:Element) RETURN e.name AS created, e.kind AS settings",
        "MATCH (e:Element) RETURN e.name AS `set` // the set of names",
        "MATCH (d:Decision) WHERE d.title CONTAINS 'DELETE me' RETURN d.id",
    ):
        assert refusal(text) is None, text


@pytest.mark.parametrize(
    "cypher",
    [
        *WRITES,
        *(f"// load it\n{w} Element FROM '/tmp/x.csv' /* 'q' */" for w in FILE_WORDS),
    ],
)
def test_writes_are_refused_and_nothing_changes(
    tmp_path: Path, cypher: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    import kgai_tui.core.detached as detached
    from kgai_tui.cli.support import model_source

    forked: list[bool] = []
    fork = detached.run_detached

    def spied(work: Callable[[], object]) -> bool:
        forked.append(fork(work))
        return forked[-1]

    # A thread an earlier test left in this worker (an MCP call's) means no fork:
    # the model is then built here, and no detached build writes moments.
    monkeypatch.setattr(detached, "run_detached", spied)
    for _ in range(2):  # the first read after an empty cache answers from its replay
        query_answer(model_source(str(store)), "MATCH (e:Element) RETURN count(e) AS n")
    model = next(cache.glob("*/model.sqlite"))
    assert graph_path(model).is_file()
    if any(forked):
        # The first read's detached build goes on writing the model after it (the
        # moments, then what follows them): what it writes is not this read's doing.
        # It runs beside this test, on a loaded machine for seconds: wait for it.
        deadline = time.monotonic() + 120
        while meta_written(model, MOMENTS_KEY) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert meta_written(model, MOMENTS_KEY) is not None
    before = _snapshot(store) | _snapshot(cache)
    for _ in range(120):  # until nothing changes for half a second
        time.sleep(0.5)
        now = _snapshot(store) | _snapshot(cache)
        if now == before:
            break
        before = now
    with pytest.raises(QueryError, match=r"read-only"):
        query_answer(model_source(str(store)), cypher)
    with pytest.raises(QueryError, match=r"read-only"):  # at a moment, in memory
        query_answer(model_source(str(store)), cypher, as_of="2026-03-01")
    assert _snapshot(store) | _snapshot(cache) == before


def test_the_database_refuses_what_the_guard_does_not_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the text check switched off, the stored graph (opened read-only)
    still refuses a write, and its file is unchanged."""
    from kgai_tui.cli.support import model_source
    from kgai_tui.core.query import run

    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # the first read after an empty cache answers from its replay
        query_answer(model_source(str(store)), "RETURN 1 AS one")
    graph = graph_path(next((tmp_path / "cache").glob("*/model.sqlite")))
    before = graph.read_bytes()
    monkeypatch.setattr(run, "refusal", lambda _cypher: None)
    with pytest.raises(QueryError, match=r"read-only"):
        query_answer(model_source(str(store)), "CREATE (:Element {id: 'sneaky'})")
    assert graph.read_bytes() == before
    rows = query_answer(
        model_source(str(store)), "MATCH (e:Element {id: 'sneaky'}) RETURN e.id"
    ).obj["rows"]
    assert rows is None


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith((".lock", "-shm"))
    }


# --------------------------------------------------------------------------- errors


def test_a_syntax_error_names_its_position(demo: Any) -> None:
    with pytest.raises(QueryError) as err:
        ask(demo, "MATCH (e:Element RETURN e")
    assert "(line: 1, offset: 17)" in str(err.value)
    assert "\n" not in str(err.value)


def test_limit_says_how_many_rows_it_dropped(demo: Any) -> None:
    got = run_query(demo, "MATCH (e:Element) RETURN e.name", limit=5)
    total = demo.projection.element_count()
    assert len(got.rows) == 5 and got.dropped == total - 5
    everything = run_query(demo, "MATCH (e:Element) RETURN e.name")
    assert got.rows == everything.rows[:5]
    # Kept without sorting every row (a heap of the first ``limit``): the same
    # rows at every limit, repeated rows (one kind, many elements) included.
    for cypher in (
        "MATCH (e:Element) RETURN e.kind",
        "MATCH (d:Decision) RETURN d.author, d.id",
    ):
        whole = run_query(demo, cypher).rows
        for limit in (0, 1, 2, 7, len(whole) - 1, len(whole), len(whole) + 3):
            part = run_query(demo, cypher, limit=limit)
            assert part.rows == whole[:limit], (cypher, limit)
            assert part.dropped == max(len(whole) - limit, 0)


def test_a_query_past_its_time_limit_is_stopped(demo: Any) -> None:
    with pytest.raises(QueryError, match=r"stopped after 0.05 s"):
        ask(
            demo,
            "MATCH (a:Decision), (b:Decision), (c:Decision), (d:Decision), "
            "(f:Decision) WHERE a.title + b.title + c.title < d.title + f.title "
            "RETURN count(*)",
            timeout=0.05,
        )


# --------------------------------------------------------------------------- the CLI


def kgai(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_the_cli_prints_kg_s_shape_and_null_rows(tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}
    out = kgai(
        "query",
        "--store",
        str(store),
        "MATCH (e:Element) RETURN count(e) AS n",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    count = open_engine(DEMO_STORE).projection.element_count()
    assert json.loads(out.stdout) == {"ok": True, "rows": [{"n": count}]}
    none = kgai(
        "query",
        "--store",
        str(store),
        "MATCH (e:Element {name:'nope'}) RETURN e",
        env=env,
    )
    assert none.stdout == b'{\n  "ok": true,\n  "rows": null\n}\n'
    bad = kgai("query", "--store", str(store), "MATCH (e:Element CREATE", env=env)
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["ok"] is False
    assert bad.stderr.count(b"\n") == 1 and b"Traceback" not in bad.stderr
    graph = graph_path(next((tmp_path / "cache").glob("*/model.sqlite")))
    assert graph.is_file()


def test_same_bytes_across_shard_order_seeds_and_caches(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(DEMO_STORE, one)
    (two / "log").mkdir(parents=True)
    for k, shard in enumerate(sorted((DEMO_STORE / "log").iterdir(), reverse=True)):
        (two / "log" / f"z{k}-{shard.name}").write_bytes(shard.read_bytes())
    cypher = (
        "MATCH (d:Decision)-[s:SHAPES]->(e:Element) RETURN e.name, d.title, s.authority"
    )
    outs = set()
    for store, seed, cache in [
        (one, "0", "c1"),
        (one, "7", "c1"),  # warm
        (two, "123", "c2"),
        (two, "9", "c3"),
    ]:
        env = {"PYTHONHASHSEED": seed, "KGAI_TUI_CACHE_DIR": str(tmp_path / cache)}
        out = kgai("query", "--store", str(store), cypher, env=env)
        assert out.returncode == 0, out.stderr
        outs.add(out.stdout)
    assert len(outs) == 1
    assert len(json.loads(outs.pop())["rows"]) > 50


def test_the_stored_graph_is_rebuilt_when_the_log_grows(tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache"), "KGAI_ACTOR": "tester"}
    count = "MATCH (d:Decision) RETURN count(d) AS n"
    first = json.loads(kgai("query", "--store", str(store), count, env=env).stdout)
    doc = {
        "decisions": [
            {
                "title": "Queries see new decisions",
                "mutations": [
                    {"op": "upsert_element", "kind": "feature", "name": "Cypher"}
                ],
            }
        ]
    }
    rec = subprocess.run(
        [sys.executable, "-m", "kgai_tui", "record", "--store", str(store), "-"],
        input=json.dumps(doc).encode(),
        capture_output=True,
        env={**os.environ, **env},
        check=False,
    )
    assert rec.returncode == 0, rec.stderr
    second = json.loads(kgai("query", "--store", str(store), count, env=env).stdout)
    assert second["rows"][0]["n"] == first["rows"][0]["n"] + 1
    named = kgai(
        "query",
        "--store",
        str(store),
        "MATCH (e:Element {name:'Cypher'}) RETURN e.kind",
        env=env,
    )
    assert json.loads(named.stdout)["rows"] == [{"e.kind": "feature"}]


def _stored_graph_queried(
    store: Path, cypher: str, env: dict[str, str], cache: Path
) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    """The query's answer once the stored graph exists, and its file: the first
    read answers from its replay while a detached child writes the model, and
    the query after that builds the stored graph."""
    deadline = time.monotonic() + 60
    while True:
        first = kgai("query", "--store", str(store), cypher, env=env)
        assert first.returncode == 0, first.stderr
        found = list(cache.glob("*/model.sqlite.graph"))
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert found, "no stored graph was built"
    return first, found[0]


@pytest.mark.parametrize("damage", ["truncate", "behind-its-stamp"])
def test_a_damaged_stored_graph_is_built_again_not_opened(
    tmp_path: Path, damage: str
) -> None:
    """A graph file cut short after its build (its stamp records the file's
    identity) is built again; so is one the database cannot open although its
    stamp matches (damage the identity cannot see: garbage with a stamp written
    to match). Before, both failed the query inside the database."""
    from kgai_tui.core.store.regular_file import identity

    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}
    cypher = "MATCH (e:Element) RETURN e.name AS n ORDER BY n"
    first, graph = _stored_graph_queried(store, cypher, env, tmp_path / "cache")
    stamp = graph.with_name(graph.name + ".stamp")
    if damage == "truncate":
        with open(graph, "r+b") as fh:
            fh.truncate(graph.stat().st_size // 3)
    else:
        graph.write_bytes(b"\x00not a graph\xff" * 4096)
        line = stamp.read_text("ascii").split()[0]
        ident = identity(os.stat(graph))
        stamp.write_text(" ".join([line, *map(str, ident)]) + "\n", "ascii")
    again = kgai("query", "--store", str(store), cypher, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert b"Traceback" not in again.stderr


def test_an_earlier_releases_graph_stamp_is_trusted_once(tmp_path: Path) -> None:
    """A stamp of the log alone (before the file's identity was in it): the graph
    is opened, not built again, and the stamp gets the identity."""
    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}
    cypher = "MATCH (e:Element) RETURN e.name AS n ORDER BY n"
    first, graph = _stored_graph_queried(store, cypher, env, tmp_path / "cache")
    stamp = graph.with_name(graph.name + ".stamp")
    now = stamp.read_text("ascii")
    stamp.write_text(now.split()[0] + "\n", "ascii")  # as an earlier release wrote it
    built = graph.stat().st_mtime_ns
    again = kgai("query", "--store", str(store), cypher, env=env)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert graph.stat().st_mtime_ns == built, "opened, not built again"
    assert stamp.read_text("ascii") == now


def test_the_answer_of_a_moment_says_it(demo: Any) -> None:
    answer = query_answer(
        lambda: demo, "MATCH (e:Element) RETURN count(e) AS n", as_of="2026-02-01"
    )
    obj = json.loads(encode(answer))
    assert obj["as_of"] == "2026-02-01T23:59:59Z" and obj["rows"][0]["n"] > 0


def test_a_moment_is_queried_through_the_model_once_it_holds_the_index(
    tmp_path: Path,
) -> None:
    """``query --as-of`` reads the time index through the model (built from a
    replay and saved when it holds none: no whole store opened), with the rows
    the whole store's view gives."""
    from kgai_tui.core.engine import open as engine_open
    from kgai_tui.core.model.open import open_model

    store = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    open_model(store).close()
    cypher = (
        "MATCH (d:Decision)-[:SHAPES]->(e:Element) "
        "RETURN e.name AS name, count(d) AS n ORDER BY name"
    )
    read_whole = engine_open.open_engine

    def ask_at(at: str) -> Any:
        obj = query_answer(lambda: open_model(store), cypher, as_of=at)
        return json.loads(encode(obj))

    with pytest.MonkeyPatch.context() as m:
        opened = counting_opens(m)
        first = ask_at("2026-02-01")
        assert opened == [], "no index saved yet: a replay built it"
        answers = {at: ask_at(at) for at in ("2026-02-01", "2026-03-15", "2025-12-31")}
        assert opened == [], "the model answered each moment itself"
        assert first == ask_at("2026-02-01")
    for at, got in answers.items():
        want = query_answer(lambda: read_whole(store), cypher, as_of=at)
        assert got == json.loads(encode(want)), at


# --------------------------------------------------------------------------- hostile sizes


def test_queries_the_engine_cannot_parse_are_refused_not_crashed(demo: Any) -> None:
    """Sums of 10,000 terms and lists nested 800 deep kill the process inside the
    engine (a segfault, measured); the guard refuses them in one line, and the
    largest it lets through run."""
    from kgai_tui.core.query.guard import MAX_DEPTH, MAX_LENGTH

    terms = (MAX_LENGTH - len("RETURN  AS n") + 1) // 2
    longest = "RETURN " + "+".join(["1"] * terms) + " AS n"
    assert len(longest) <= MAX_LENGTH
    assert ask(demo, longest) == [{"n": terms}]
    deepest = "RETURN " + "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + " AS x"
    assert len(ask(demo, deepest)) == 1
    for text, said in (
        ("RETURN " + "+".join(["1"] * 10_000), "too long"),
        ("RETURN " + "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1), "nests"),
        ("RETURN '\udcff' AS x", "not valid UTF-8"),
    ):
        with pytest.raises(QueryError, match=said):
            ask(demo, text)


def test_an_undecodable_command_line_is_one_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    out = subprocess.run(
        [sys.executable, "-m", "kgai_tui", "query", "--store", str(store),
         b"RETURN '\xff\xfe' AS x"],
        capture_output=True, check=False,
        env={**os.environ, "KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert out.returncode == 1
    assert b"Traceback" not in out.stderr and out.stderr.count(b"\n") == 1
    assert json.loads(out.stdout) == {
        "error": "query is not valid UTF-8 text",
        "ok": False,
    }


def test_a_query_returning_too_many_rows_is_refused_before_they_are_read(
    demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgai_tui.core.query import run

    monkeypatch.setattr(run, "MAX_ROWS", 50)
    with pytest.raises(QueryError, match=r"returns 65 rows, more than 50"):
        ask(demo, "MATCH (d:Decision) RETURN d.id")
    # With ORDER BY and a limit only the kept rows are read; the rest are counted.
    got = run.run_query(demo, "MATCH (d:Decision) RETURN d.id ORDER BY d.id", limit=10)
    assert len(got.rows) == 10 and got.dropped == 55
    assert [r["d.id"] for r in got.rows] == sorted(demo.projection.dec_id)[:10]


def test_recorded_times_go_accepts_and_python_cannot_hold(tmp_path: Path) -> None:
    """Year 0 (Go parses it; ladybug's binding crashed reading it back) is stored as
    Go's zero time; year 500 keeps its four digits; a zone becomes UTC."""
    from builders import ShardWriter, decision, upsert, write_store

    w = ShardWriter("i-old")
    for n, at in enumerate(
        ["0000-06-01T00:00:00Z", "0500-01-01T00:00:00Z", "2026-03-01T10:00:00+02:00"]
    ):
        w.add(
            decision(f"t{n}", [upsert("feature", f"F{n}")]),
            lamport=n + 1,
            recorded_at=at,
        )
    root = write_store(tmp_path / "store", {"i-old.ndjson": w.to_bytes()})
    engine = open_engine(root)
    got = ask(
        engine, "MATCH (d:Decision) RETURN d.title, d.recorded_at ORDER BY d.title"
    )
    assert [r["d.recorded_at"] for r in got] == [
        "0001-01-01T00:00:00Z",
        "0500-01-01T00:00:00Z",
        "2026-03-01T08:00:00Z",
    ]
