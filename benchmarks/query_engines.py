"""Which engine answers ``kgai-tui query`` (issue 43): ladybug against grand-cypher.

Both hold kg's schema built from the same projection: ladybug (the maintained
fork of Kuzu, which kg runs) as a database file of its own, grand-cypher as Cypher
over a NetworkX ``MultiDiGraph`` (``__labels__`` on every node and edge). Each
engine runs in a process of its own (its peak RSS is its own), loads the graph,
then runs kg's documented examples, kg's heads query and the queries below, each
twice (first, warm), each stopped at ``--timeout`` seconds.

Usage::

    python -m benchmarks.query_engines STORE [--engine ladybug|grand-cypher|both]
        [--timeout 60] [--element E000123]

``STORE`` is read through its read model (build it first with any read). It prints
one table per engine: load seconds and peak RSS, then per query first/warm ms or
why it did not run.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES: list[tuple[str, str]] = [
    (
        "kg: links",
        "MATCH (a:Element)-[r:LINK]->(b:Element) RETURN a.name, r.kind, b.name",
    ),
    (
        "kg: decisions on one element",
        "MATCH (d:Decision)-[:SHAPES]->(e:Element {name:'ELEMENT'}) "
        "RETURN d.title, d.rationale ORDER BY d.recorded_at",
    ),
    (
        "kg: undecided elements",
        "MATCH (e:Element) WHERE NOT EXISTS { MATCH (:Decision)-[:SHAPES]->(e) } "
        "RETURN e.name",
    ),
    (
        "kg: heads (conflicts)",
        "MATCH (d:Decision)-[s:SHAPES]->(e:Element) WHERE s.authority = true AND NOT "
        "EXISTS { MATCH (d2:Decision)-[:SUPERSEDES]->(d), (d2)-[s2:SHAPES]->(e) WHERE "
        "s2.authority = true } WITH e, d ORDER BY d.lamport DESC, d.id SKIP 0 WITH e, "
        "collect(d.id) AS heads WHERE size(heads) > 1 RETURN e.id, heads ORDER BY e.id",
    ),
    ("count elements", "MATCH (e:Element) RETURN count(e) AS n"),
    ("count decisions", "MATCH (d:Decision) RETURN count(d) AS n"),
    ("kinds", "MATCH (e:Element) RETURN e.kind AS kind, count(*) AS n"),
    ("one element's props", "MATCH (e:Element {name:'ELEMENT'}) RETURN e.props"),
    (
        "one element's links",
        "MATCH (e:Element {name:'ELEMENT'})-[r:LINK]-(b:Element) RETURN b.name, r.kind",
    ),
    (
        "what depends on one element (3 hops)",
        "MATCH (a:Element)-[:LINK*1..3]->(b:Element {name:'ELEMENT'}) "
        "RETURN DISTINCT a.name",
    ),
    (
        "latest decision on one element",
        "MATCH (d:Decision)-[:SHAPES]->(e:Element {name:'ELEMENT'}) "
        "RETURN d.id ORDER BY d.lamport DESC LIMIT 1",
    ),
    (
        "one decision's successors",
        "MATCH (n:Decision)-[:SUPERSEDES]->(d:Decision)-[:SHAPES]->"
        "(e:Element {name:'ELEMENT'}) RETURN n.id, d.id",
    ),
    (
        "authors",
        "MATCH (d:Decision) WHERE d.author IS NOT NULL RETURN d.author, count(*) AS n",
    ),
]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Stop(Exception):
    pass


def _alarm(_sig: int, _frame: Any) -> None:
    raise _Stop


def _timed(run: Any, timeout: float) -> tuple[float | None, str]:
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        rows = run()
        return (time.perf_counter() - start) * 1e3, f"{len(rows)} rows"
    except _Stop:
        return None, f"stopped at {timeout:g} s"
    except Exception as exc:  # an engine that cannot run it: say why
        return None, f"error: {str(exc).splitlines()[0][:90]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _ladybug(store: str, timeout: float) -> tuple[float, Any]:
    from kgai_tui.cli.support import model_source
    from kgai_tui.core.query.build import build_graph

    engine = model_source(store)()
    tmp = Path(tempfile.mkdtemp(prefix="kgai-qbench-")) / "g"
    start = time.perf_counter()
    db = build_graph(engine.projection, tmp)
    load = time.perf_counter() - start
    import ladybug

    conn = ladybug.Connection(db)
    conn.set_query_timeout(int(timeout * 1000))

    def run(q: str) -> list[Any]:
        result = conn.execute(q)
        return result.get_all()

    return load, run


def _grand_cypher(store: str, timeout: float) -> tuple[float, Any]:
    import networkx as nx
    from grandcypher import GrandCypher

    from kgai_tui.cli.support import model_source

    engine = model_source(store)()
    p = engine.projection
    start = time.perf_counter()
    g: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    for eid in p.graph.nodes:
        kind, name, props = p.element(eid) or ("", "", "")
        g.add_node(
            eid, __labels__={"Element"}, id=eid, kind=kind, name=name, props=props
        )
    ids = list(p.dec_id)
    for i, (did, title, author, lam, when) in enumerate(
        zip(ids, p.dec_title, p.dec_author, p.dec_lamport, p.dec_time, strict=True)
    ):
        g.add_node(
            "d:" + did, __labels__={"Decision"}, id=did, title=title, author=author,
            lamport=lam, recorded_at=when,
        )  # fmt: skip
        for j in p.dec_supersedes[i]:
            g.add_edge("d:" + did, "d:" + ids[j], __labels__={"SUPERSEDES"})
    for src, dst, kind in p.graph.edges(keys=True):
        g.add_edge(src, dst, __labels__={"LINK"}, kind=kind)
    for eid, shaped in p.el_shapes.items():
        for i, auth in shaped.items():
            g.add_edge("d:" + ids[i], eid, __labels__={"SHAPES"}, authority=bool(auth))
    load = time.perf_counter() - start
    engine_gc = GrandCypher(g)

    def run(q: str) -> list[Any]:
        out = engine_gc.run(q)
        first = next(iter(out.values()), [])
        return list(first)

    return load, run


def _one(store: str, name: str, timeout: float, element: str) -> dict[str, Any]:
    make = _ladybug if name == "ladybug" else _grand_cypher
    load, run = make(store, timeout)
    out: dict[str, Any] = {"engine": name, "load_s": load, "rss_after_load": _rss_mb()}
    rows = []
    for label, q in QUERIES:
        text = q.replace("ELEMENT", element)
        first = _timed(lambda text=text: run(text), timeout)
        warm = _timed(lambda text=text: run(text), timeout) if first[0] else first
        rows.append([label, first[0], warm[0], first[1]])
    out["queries"] = rows
    out["peak_rss_mb"] = _rss_mb()
    return out


def main(argv: list[str]) -> int:
    """Run each engine in a process of its own; print the tables."""
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    store = argv[0]
    engine = argv[argv.index("--engine") + 1] if "--engine" in argv else "both"
    timeout = float(argv[argv.index("--timeout") + 1]) if "--timeout" in argv else 60.0
    element = argv[argv.index("--element") + 1] if "--element" in argv else "E000123"
    if "--child" in argv:
        print(json.dumps(_one(store, engine, timeout, element)))
        return 0
    for name in ("ladybug", "grand-cypher") if engine == "both" else (engine,):
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.query_engines", store, "--engine", name,
             "--timeout", str(timeout), "--element", element, "--child"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            print(f"{name}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"\n{name}: load {got['load_s']:.1f} s, RSS after load "
            f"{got['rss_after_load']:.0f} MB, peak {got['peak_rss_mb']:.0f} MB\n"
        )
        print("| query | first ms | warm ms | result |")
        print("|---|---|---|---|")
        for label, first, warm, what in got["queries"]:
            f = f"{first:.1f}" if first is not None else "-"
            w = f"{warm:.1f}" if warm is not None else "-"
            print(f"| {label} | {f} | {w} | {what} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
