"""The search benchmark: the tantivy index vs SQLite FTS5 vs the reference scan scorer.

Everything runs in one process on a copy of the store (the copy gets 1,000 events
appended), with the index in a private cache directory:

* **index**: full build time and size, a warm reopen, adding 1,000 events (the search
  index update only; the engine applies the new events in memory the way an
  incremental engine would), query latency p50/p95 in process on the open index, by
  default (decisions in force) and with ``--all``, and a whole warm ``kgai-tui
  search`` process;
* **SQLite FTS5** with ``bm25()`` over the same documents (the same camelCase
  splitting, the porter stemmer, the same field weights, ties by key);
* **the scan scorer** of spec 6.5 (``kg search`` itself), over every element and
  decision, on a sample of the queries when the store is large.

The queries (at least 200) are drawn deterministically from the store: element names,
title words, phrases, prefixes, filters, typos and hostile text.
"""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.genlog import GenParams, append_store, install_id
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.recall.scoring import STOPWORDS, ScanScorer, scan_corpus
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.search.cache import cache_dir_for
from kgai_tui.core.search.docs import DocRecord, history_record, live_records
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.query import parse_query, split_camel

__all__ = ["BenchOptions", "make_queries", "render_report", "run_bench"]

_WORD = re.compile(r"[^\W_]+")
_FTS_COLUMNS = ("title", "elnames", "body", "meta", "name", "kind", "props")
_FTS_WEIGHTS = (3.0, 1.5, 1.0, 0.5, 3.0, 2.0, 1.0)


@dataclass
class BenchOptions:
    """What to run."""

    queries: int = 200
    scan_queries: int | None = None
    fts: bool = True
    scan: bool = True
    process_runs: int = 5
    progress: Callable[[str], None] = field(default=lambda _msg: None)


# ------------------------------------------------------------------ queries


def make_queries(p: Projection, n: int, seed: int = 7) -> list[str]:
    """Draw ``n`` varied queries from a store's content, deterministically.

    The mix cycles through: an element name; two title words; a question in prose;
    a prefix; a phrase; ``author:`` plus a word; ``kind:`` plus a name;
    ``element:`` plus a word; a typo of a name; a frequent word; hostile text;
    a rationale word.
    """
    rng = random.Random(seed)
    names = sorted({a["name"] for _, a in p.graph.nodes(data=True) if a["name"]})
    kinds = sorted({a["kind"] for _, a in p.graph.nodes(data=True) if a["kind"]})
    sample = rng.sample(range(len(p.dec_id)), min(len(p.dec_id), 4000))
    titles = [p.dec_title[i] for i in sample if p.dec_title[i]]
    authors = sorted({p.dec_author[i] for i in sample if p.dec_author[i]})
    rationale = [w for i in sample for w in _WORD.findall(p.dec_rationale[i])]
    words = [w for t in titles for w in _WORD.findall(t) if w.lower() not in STOPWORDS]
    # The most frequent word; a tie goes to the first in sorted order (iterating a
    # set would follow string hashing, which differs from process to process).
    counts = Counter(words)
    common = min(counts, key=lambda w: (-counts[w], w), default="decision")
    if not names or not titles:
        return ["decision"] * n

    def pick(seq: Sequence[str]) -> str:
        return seq[rng.randrange(len(seq))] if seq else "x"

    def typo(word: str) -> str:
        if len(word) < 4:
            return word + "x"
        i = rng.randrange(1, len(word) - 1)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]

    out: list[str] = []
    for i in range(n):
        title_words = _WORD.findall(pick(titles)) or ["x"]
        w1, w2 = pick(title_words), pick(words)
        name = pick(names)
        kind = i % 12
        if kind == 0:
            out.append(name)
        elif kind == 1:
            out.append(f"{w1} {w2}")
        elif kind == 2:
            out.append(f"how is {name} handled in the {w2}?")
        elif kind == 3:
            out.append(name[: max(2, len(name) - 2)] + "*")
        elif kind == 4:
            j = rng.randrange(max(1, len(title_words) - 1))
            out.append('"' + " ".join(title_words[j : j + 2]) + '"')
        elif kind == 5:
            out.append(f"author:{pick(authors)} {w1}")
        elif kind == 6:
            out.append(f"kind:{pick(kinds)} {name}")
        elif kind == 7:
            out.append(f"element:{name} {w2}")
        elif kind == 8:
            out.append(typo(name))
        elif kind == 9:
            out.append(common)
        elif kind == 10:
            out.append(rng.choice([f'{w1} AND ("{w2}', f"it's {w1}:", f"-{w1} OR *"]))
        else:
            out.append(pick(rationale) if rationale else w1)
    return out


# ------------------------------------------------------------------ helpers


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _latencies(run: Callable[[str], object], queries: Sequence[str]) -> list[float]:
    for q in queries[:10]:  # warm-up
        run(q)
    out = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        out.append((time.perf_counter() - start) * 1000)
    return out


def _summary(ms: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(_pct(ms, 0.50), 3),
        "p95_ms": round(_pct(ms, 0.95), 3),
        "max_ms": round(max(ms, default=0.0), 3),
        "n": len(ms),
    }


# ------------------------------------------------------------------ FTS5


class Fts:
    """SQLite FTS5 over the same documents as the index, ranked by ``bm25()``."""

    def __init__(self, path: Path) -> None:
        """Create the database file."""
        self.db = sqlite3.connect(path)
        cols = ", ".join(_FTS_COLUMNS)
        for table in ("live", "hist"):
            self.db.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5({cols}, doctype UNINDEXED, "
                "key UNINDEXED, author UNINDEXED, writer UNINDEXED, kinds UNINDEXED, "
                "els UNINDEXED, tokenize='porter unicode61 remove_diacritics 2')"
            )

    def add(self, table: str, records: Iterable[DocRecord]) -> int:
        """Insert documents; returns how many."""
        rows = []
        for rec in records:
            text = dict(rec.text)
            flt = dict(rec.filters)
            rows.append(
                (
                    *(split_camel(text.get(c, "")) for c in _FTS_COLUMNS),
                    rec.doctype,
                    rec.key - (1 << 63),  # SQLite integers are signed
                    " ".join(flt.get("f_author", ())),
                    " ".join(flt.get("f_writer", ())),
                    " ".join(flt.get("f_kind", ())),
                    " ".join(flt.get("f_el", ())),
                )
            )
        marks = ", ".join("?" * (len(_FTS_COLUMNS) + 6))
        self.db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        self.db.commit()
        return len(rows)

    def search(self, text: str, include_all: bool, limit: int = 20) -> list[Any]:
        """Run a query the way the index reads it (no typo tolerance in FTS5)."""
        pq = parse_query(text)
        terms = [
            f'"{w.lower()}"'
            for chunk in pq.words
            for w in _WORD.findall(split_camel(chunk))
            if len(w) >= 2 and w.lower() not in STOPWORDS
        ]
        terms += [
            f'"{w.lower()}"*'
            for p in pq.prefixes
            for w in _WORD.findall(split_camel(p))[-1:]
        ]
        phrases = [
            '"' + " ".join(_WORD.findall(split_camel(ph))).lower() + '"'
            for ph in pq.phrases
            if _WORD.findall(ph)
        ]
        parts = []
        if terms:
            parts.append("(" + " OR ".join(terms) + ")")
        parts += phrases
        if not parts:
            return []
        match = " AND ".join(parts)
        where, args = ["{t} MATCH ?"], [match]
        for a in pq.authors:
            where.append("(author = ? OR writer = ?)")
            args += [a.lower(), a.lower()]
        for k in pq.kinds:
            where.append("instr(' ' || kinds || ' ', ?) > 0")
            args.append(f" {k.lower()} ")
        weights = ", ".join(str(w) for w in _FTS_WEIGHTS)
        out: list[Any] = []
        tables = [("live", "")]
        if include_all:
            tables = [("live", " AND doctype = 'element'"), ("hist", "")]
        for table, extra in tables:
            sql = (
                f"SELECT key, doctype, bm25({table}, {weights}) AS r FROM {table} "
                f"WHERE {' AND '.join(where).format(t=table)}{extra} "
                f"ORDER BY r, key LIMIT {limit}"
            )
            out += self.db.execute(sql, args).fetchall()
        return sorted(out, key=lambda row: (row[2], row[0]))[:limit]


# ------------------------------------------------------------------ appending


def _genlog_params(engine: Engine) -> GenParams | None:
    """The generator parameters of a store written by ``bench generate``, if it is one."""
    installs = len(engine.scans)
    names = [s.name for s in engine.scans]
    if not installs or names != [f"{install_id(i)}.ndjson" for i in range(installs)]:
        return None
    total = len(engine.projection.dec_id)
    return GenParams(total, installs, max(1, len(engine.projection.graph)))


# ------------------------------------------------------------------ the run


def _process_ms(root: Path, xdg: Path, query: str, runs: int = 5) -> float:
    env = dict(os.environ, XDG_CACHE_HOME=str(xdg))
    cmd = [sys.executable, "-m", "kgai_tui", "search", "--store", str(root), "--json"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([*cmd, query], env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run_bench(store: Path, opts: BenchOptions) -> dict[str, Any]:
    """Run the whole benchmark on a copy of ``store`` and return the measurements."""
    say = opts.progress
    work = Path(tempfile.mkdtemp(prefix="kgai-search-bench-"))
    try:
        return _run(store, work, opts, say)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(
    store: Path, work: Path, opts: BenchOptions, say: Callable[[str], None]
) -> dict[str, Any]:
    root = work / "store"
    say(f"copying {store} ...")
    shutil.copytree(store / "log", root / "log")
    xdg = work / "cache"
    base = xdg / "kgai-tui"
    r: dict[str, Any] = {"store": str(store), "load_before": os.getloadavg()[0]}

    say("opening the engine (replay) ...")
    t0 = time.perf_counter()
    engine = open_engine(root)
    r["engine_open_s"] = round(time.perf_counter() - t0, 2)
    p = engine.projection
    r["decisions"], r["elements"] = len(p.dec_id), len(p.graph)
    r["events"], r["writers"] = p.applied_count, len(engine.scans)

    say("building the index ...")
    t0 = time.perf_counter()
    index = SearchIndex.for_engine(engine, cache_base=base)
    r["index_build_s"] = round(time.perf_counter() - t0, 2)
    r["index_docs"] = {"history": index.info.history_docs, "live": index.info.live_docs}
    r["index_mb"] = round(_dir_size(cache_dir_for(root, base)) / 1e6, 1)
    t0 = time.perf_counter()
    reopened = SearchIndex.open_cached(root, cache_base=base)
    r["index_reopen_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    assert reopened is not None

    queries = make_queries(p, opts.queries)
    r["queries"] = len(queries)
    say(f"timing {len(queries)} queries on the index ...")
    t0 = time.perf_counter()
    reopened.search(queries[0])
    r["index_first_query_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    r["index_default"] = _summary(_latencies(reopened.search, queries))
    r["index_all"] = _summary(
        _latencies(lambda q: reopened.search(q, include_all=True), queries)
    )

    if opts.fts:
        say("building SQLite FTS5 over the same documents ...")
        fts_path = work / "fts.sqlite"
        fts = Fts(fts_path)
        t0 = time.perf_counter()
        fts.add("live", live_records(p))
        fts.add(
            "hist",
            (
                rec
                for ev, id_ok in engine.decision_events()
                for rec in [history_record(ev, id_ok)]
                if rec is not None
            ),
        )
        r["fts_build_s"] = round(time.perf_counter() - t0, 2)
        r["fts_mb"] = round(fts_path.stat().st_size / 1e6, 1)
        say("timing FTS5 queries ...")
        r["fts_default"] = _summary(_latencies(lambda q: fts.search(q, False), queries))
        r["fts_all"] = _summary(_latencies(lambda q: fts.search(q, True), queries))

    if opts.scan:
        n_scan = opts.scan_queries
        if n_scan is None:
            n_scan = 50 if r["decisions"] <= 100_000 else 10
        say(f"tokenising for the scan scorer, then {n_scan} queries ...")
        t0 = time.perf_counter()
        scanner = ScanScorer(scan_corpus(p))
        r["scan_prepare_s"] = round(time.perf_counter() - t0, 2)
        step = max(1, len(queries) // max(1, n_scan))
        sample = queries[::step][:n_scan]
        ms = []
        for q in sample:
            t0 = time.perf_counter()
            scanner.search(q)
            ms.append((time.perf_counter() - t0) * 1000)
        r["scan_all"] = _summary(ms)
        del scanner

    say("timing a whole warm `kgai-tui search` process ...")
    r["process_warm_ms"] = round(
        _process_ms(root, xdg, queries[0], opts.process_runs), 1
    )

    params = _genlog_params(engine)
    if params is not None:
        say("appending 1,000 generated events ...")
        from kgai_tui.core.search.tail import appended_decisions
        from kgai_tui.core.search.writer import engine_prints
        from kgai_tui.core.wire.codec import event_from_obj

        prints_before = engine_prints(engine)
        append_store(root, params, 1000)
        updated = open_engine(root)
        t0 = time.perf_counter()
        index = SearchIndex.for_engine(updated, cache_base=base)
        r["index_add_1000_s"] = round(time.perf_counter() - t0, 3)
        r["index_add_how"] = index.info.how
        if opts.fts:
            tail = appended_decisions(
                root / "log", prints_before, engine_prints(updated)
            )
            new = [(event_from_obj(obj), ok) for obj, ok in tail or ()]
            t0 = time.perf_counter()
            fts.add(
                "hist",
                (
                    rec
                    for ev, _ in new
                    for rec in [history_record(ev, True)]
                    if rec is not None
                ),
            )
            r["fts_add_1000_s"] = round(time.perf_counter() - t0, 3)
    r["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    r["load_after"] = os.getloadavg()[0]
    return r


# ------------------------------------------------------------------ report


def _cell(r: dict[str, Any], key: str, stat: str) -> str:
    value = r.get(key, {}).get(stat)
    return "-" if value is None else f"{value:.2f} ms"


def render_report(r: dict[str, Any]) -> str:
    """Render the measurements as a Markdown table plus notes."""
    rows = [
        (
            "full build",
            f"{r['index_build_s']} s",
            f"{r.get('fts_build_s', '-')} s",
            f"{r.get('scan_prepare_s', '-')} s (tokenise)",
        ),
        ("size on disk", f"{r['index_mb']} MB", f"{r.get('fts_mb', '-')} MB", "-"),
        (
            "add 1,000 events",
            f"{r.get('index_add_1000_s', '-')} s",
            f"{r.get('fts_add_1000_s', '-')} s",
            "-",
        ),
    ]
    for mode, label in (("default", "in force"), ("all", "--all")):
        for stat in ("p50_ms", "p95_ms"):
            rows.append(
                (
                    f"query {stat[:3]} ({label})",
                    _cell(r, f"index_{mode}", stat),
                    _cell(r, f"fts_{mode}", stat),
                    _cell(r, f"scan_{mode}", stat) if mode == "all" else "-",
                )
            )
    rows.append(
        ("warm `kgai-tui search` process", f"{r['process_warm_ms']} ms", "-", "-")
    )
    lines = [
        f"store: {r['store']} — {r['decisions']} decisions, {r['elements']} elements, "
        f"{r['writers']} writers",
        "",
        "| measure | kgai-tui index (tantivy) | SQLite FTS5 bm25() | scan scorer (spec 6.5) |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    scan_n = r.get("scan_all", {}).get("n")
    lines += [
        "",
        f"queries: {r['queries']} (scan scorer: {scan_n} of them)"
        if scan_n
        else f"queries: {r['queries']}",
        f"index: {r['index_docs']['history']} decision events + "
        f"{r['index_docs']['live']} live documents; reopen {r['index_reopen_ms']} ms; "
        f"first query {r['index_first_query_ms']} ms",
        f"engine open (replay, not part of the index): {r['engine_open_s']} s; "
        f"peak RSS {r['peak_rss_mb']} MB; load average {r['load_before']:.1f} → "
        f"{r['load_after']:.1f}",
    ]
    return "\n".join(lines)
