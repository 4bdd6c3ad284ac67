"""The decision plane on disk: SQLite rows against memory-mapped NumPy columns (issue 17).

Both are written from one replayed projection (``open_engine(root)``):

* **SQLite**: the read model's ``dec`` table (:mod:`kgai_tui.core.model.schema`, same
  DDL, pragmas and rows as :func:`kgai_tui.core.model.build.build_model`), with its
  unique index on ``id``;
* **NumPy**: ``lamport`` and ``time`` as int64 ``.npy`` (``time`` NULL as
  ``INT64_MIN``), every text column (the list columns as their JSON, ``""`` for none)
  as one UTF-8 blob plus int64 offsets (``n + 1``), and an id index: the ids as a
  sorted fixed-width ``S32`` array with the permutation back to row indices. A reader
  maps them with ``np.load(mmap_mode="r")`` (the blobs with :mod:`mmap`).

Measured: the build time and the size on disk; then, in fresh child processes (the
OS page cache is warm, nothing is dropped): the import and open time, the first
fetch of one element's decision rows (every column, by their indices, as a read
gets them from the element's row), and the child's peak RSS (``ru_maxrss`` from
``os.wait4``); and, in one more child per format, warm timings: that element's rows,
10,000 random rows, and id -> index lookups (one at a time, and for NumPy also as one
vectorised ``searchsorted``). Medians over ``runs``.

Usage::

    python -m benchmarks.storage_compare /tmp/kgeng/kg1m [--out DIR] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.model.schema import DEC_COLUMNS

__all__ = ["TEXT_COLUMNS", "build_numpy", "build_sqlite", "compare", "render"]

#: The text columns of ``dec`` (the list columns hold JSON), in table order: the
#: model's own columns but its two integers.
TEXT_COLUMNS: Final = tuple(c for c in DEC_COLUMNS if c not in ("time", "lamport"))
#: The fixed-width columns.
INT_COLUMNS: Final = ("time", "lamport")
_NULL_TIME: Final = -(2**63)
_ID_WIDTH: Final = 32
_RANDOM_ROWS: Final = 10_000
_LOOKUPS: Final = 10_000

# ------------------------------------------------------------------ the children

# Each child prints one JSON object of timings (ms). argv: the format's directory,
# the parameters file, the mode ("one": open and fetch one element, then exit;
# "warm": repeat each operation ``runs`` times after a first pass).
_COMMON = r"""
import json, sys, time
t_start = time.perf_counter()
where, params_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
with open(params_path) as fh:
    P = json.load(fh)
def med(f, runs):
    f()
    out = []
    for _ in range(runs):
        t = time.perf_counter(); f(); out.append((time.perf_counter() - t) * 1000)
    out.sort()
    return out[len(out) // 2]
"""

SQLITE_CHILD: Final = (
    _COMMON
    + r"""
t0 = time.perf_counter()
import sqlite3
t1 = time.perf_counter()
db = sqlite3.connect(f"file:{where}/dec.sqlite?mode=ro", uri=True, isolation_level=None)
db.execute("BEGIN")
db.execute("SELECT 1 FROM dec LIMIT 1").fetchall()  # reads the schema
t2 = time.perf_counter()
COLS = "ix, id, title, rationale, author, refs, summary, time, lamport, install, hash, shapes, supersedes, superseded_by"
def fetch(ix):
    return db.execute(
        f"SELECT {COLS} FROM dec WHERE ix IN ({','.join('?' * len(ix))})", ix
    ).fetchall()
rows = fetch(P["element"])
t3 = time.perf_counter()
(ix,) = db.execute("SELECT ix FROM dec WHERE id = ?", (P["ids"][0],)).fetchone()
t4 = time.perf_counter()
assert len(rows) == len(P["element"]) and ix == P["id_ix"][0]
out = {"import_ms": (t1 - t0) * 1000, "open_ms": (t2 - t1) * 1000,
       "element_ms": (t3 - t2) * 1000, "lookup_ms": (t4 - t3) * 1000,
       "rows": len(rows)}
if mode == "warm":
    runs = P["runs"]
    def lookups():
        q = db.execute
        for key in P["ids"]:
            q("SELECT ix FROM dec WHERE id = ?", (key,)).fetchone()
    got = [db.execute("SELECT ix FROM dec WHERE id = ?", (k,)).fetchone()[0] for k in P["ids"]]
    assert got == P["id_ix"]
    out.update(
        element_warm_ms=med(lambda: fetch(P["element"]), runs * 20),
        random_ms=med(lambda: fetch(P["random"]), runs),
        lookup_each_us=med(lookups, runs) * 1000 / len(P["ids"]),
    )
try:  # what is resident at the end: the process's own memory vs mapped file pages
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
except OSError:
    pass
print(json.dumps(out))
"""
)

NUMPY_CHILD: Final = (
    _COMMON
    + r"""
t0 = time.perf_counter()
import mmap, os
import numpy as np
t1 = time.perf_counter()
TEXT = P["text_columns"]
def blob(name):
    fd = os.open(f"{where}/{name}.blob", os.O_RDONLY)
    try:
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if os.fstat(fd).st_size else b""
    finally:
        os.close(fd)
cols = {n: (blob(n), np.load(f"{where}/{n}.off.npy", mmap_mode="r")) for n in TEXT}
ints = {n: np.load(f"{where}/{n}.npy", mmap_mode="r") for n in ("time", "lamport")}
ids_sorted = np.load(f"{where}/id_sorted.npy", mmap_mode="r")
id_order = np.load(f"{where}/id_order.npy", mmap_mode="r")
t2 = time.perf_counter()
def fetch(ix):
    a = np.asarray(ix, dtype=np.int64)
    out = [a.tolist()]
    for n in TEXT:
        b, off = cols[n]
        out.append([b[s:e].decode() for s, e in zip(off[a].tolist(), off[a + 1].tolist())])
    for n in ("time", "lamport"):
        out.append(ints[n][a].tolist())
    return list(zip(*out))
def lookup(key):
    k = key.encode()
    at = int(np.searchsorted(ids_sorted, k))
    if at < len(ids_sorted) and ids_sorted[at] == k:
        return int(id_order[at])
    return None
rows = fetch(P["element"])
t3 = time.perf_counter()
ix = lookup(P["ids"][0])
t4 = time.perf_counter()
assert len(rows) == len(P["element"]) and ix == P["id_ix"][0]
out = {"import_ms": (t1 - t0) * 1000, "open_ms": (t2 - t1) * 1000,
       "element_ms": (t3 - t2) * 1000, "lookup_ms": (t4 - t3) * 1000,
       "rows": len(rows)}
if mode == "warm":
    runs = P["runs"]
    keys = np.array([k.encode() for k in P["ids"]], dtype=ids_sorted.dtype)
    def batch():
        at = np.searchsorted(ids_sorted, keys)
        return id_order[at]
    assert [lookup(k) for k in P["ids"]] == P["id_ix"]
    assert batch().tolist() == P["id_ix"]
    def lookups():
        for key in P["ids"]:
            lookup(key)
    out.update(
        element_warm_ms=med(lambda: fetch(P["element"]), runs * 20),
        random_ms=med(lambda: fetch(P["random"]), runs),
        lookup_each_us=med(lookups, runs) * 1000 / len(P["ids"]),
        lookup_batch_us=med(batch, runs) * 1000 / len(P["ids"]),
    )
try:  # what is resident at the end: the process's own memory vs mapped file pages
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
except OSError:
    pass
print(json.dumps(out))
"""
)


def _child(
    code: str, where: Path, params: Path, mode: str
) -> tuple[dict[str, Any], float, float]:
    """Run a child; return its timings, its wall time (ms) and its peak RSS (MiB)."""
    from benchmarks.whole_process import run_measured

    cmd = [sys.executable, "-c", code, str(where), str(params), mode]
    wall, rss, code_, data = run_measured(cmd, capture=True)
    if code_ != 0:
        raise RuntimeError(f"the {where.name} child exited {code_}")
    return json.loads(data), wall, rss


# ------------------------------------------------------------------ the builds


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build_sqlite(p: Any, out: Path) -> float:
    """Write the model's ``dec`` table (and its id index) to ``out/dec.sqlite``; seconds."""
    from kgai_tui.core.model.build import INSERT_DEC, dec_rows_all
    from kgai_tui.core.model.schema import DDL

    out.mkdir(parents=True, exist_ok=True)
    path = out / "dec.sqlite"
    start = time.perf_counter()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in (
            "journal_mode=OFF",
            "synchronous=OFF",
            "page_size=8192",
            "cache_size=-262144",
            "locking_mode=EXCLUSIVE",
        ):
            db.execute(f"PRAGMA {pragma}")
        db.executescript(DDL)  # (the other tables stay empty)
        db.execute("BEGIN")
        db.executemany(INSERT_DEC, dec_rows_all(p))
        db.execute("COMMIT")
        db.execute("CREATE UNIQUE INDEX dec_id ON dec (id)")  # as the model's
        db.execute("PRAGMA journal_mode=WAL")
    finally:
        db.close()
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())
    return time.perf_counter() - start


def _write_text(out: Path, name: str, values: list[str]) -> None:
    import numpy as np

    encoded = [v.encode("utf-8", "surrogateescape") for v in values]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(
        np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=off[1:]
    )
    with open(out / f"{name}.blob", "wb") as fh:
        fh.write(b"".join(encoded))
    np.save(out / f"{name}.off.npy", off)


def build_numpy(p: Any, out: Path) -> tuple[float, float]:
    """Write the columns and the id index to ``out``; seconds for (columns, id index)."""
    import numpy as np
    import orjson

    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for name in TEXT_COLUMNS:
        column = getattr(p, f"dec_{name}")
        if name in ("shapes", "supersedes", "superseded_by"):
            dumps = orjson.dumps
            column = [dumps(v).decode() if v else "" for v in column]
        _write_text(out, name, column)
    times = np.array(
        [_NULL_TIME if t is None else t for t in p.dec_time], dtype=np.int64
    )
    np.save(out / "time.npy", times)
    np.save(out / "lamport.npy", np.array(p.dec_lamport, dtype=np.int64))
    for name in (*TEXT_COLUMNS, "time", "lamport"):
        for suffix in (".blob", ".off.npy", ".npy"):
            f = out / f"{name}{suffix}"
            if f.exists():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
    columns_s = time.perf_counter() - start
    start = time.perf_counter()
    ids = np.array(
        [i.encode("utf-8", "surrogateescape") for i in p.dec_id], dtype=f"S{_ID_WIDTH}"
    )
    if any(len(i.encode()) > _ID_WIDTH for i in p.dec_id):
        raise ValueError(f"a decision id is longer than {_ID_WIDTH} bytes")
    order = np.argsort(ids, kind="stable")
    np.save(out / "id_sorted.npy", ids[order])
    np.save(out / "id_order.npy", order.astype(np.int64))
    return columns_s, time.perf_counter() - start


# ------------------------------------------------------------------ the comparison


def _element_rows(p: Any, element: str | None) -> tuple[str, list[int]]:
    """``kind:name`` and the sorted decision indices shaping it (default: the first
    element in graph order that has any)."""
    nodes = vars(p.graph)["_node"]
    for eid, attrs in nodes.items():
        ref = f"{attrs['kind']}:{attrs['name']}"
        if (element is None or ref == element) and p.el_shapes.get(eid):
            return ref, sorted(p.el_shapes[eid])
    raise ValueError(f"no element {element} with decisions")


def _build_both(
    root: Path, out: Path, element: str | None, runs: int, say: Any
) -> dict[str, Any]:
    """Replay the store, write both formats and the children's parameters."""
    from kgai_tui.core.engine.open import open_engine

    say("replaying the store (open_engine()) ...")
    start = time.perf_counter()
    engine = open_engine(root)
    replay_s = round(time.perf_counter() - start, 1)
    p = engine.projection
    n = len(p.dec_id)
    ref, ix = _element_rows(p, element)
    rng = random.Random(17)
    rand = rng.sample(range(n), min(_RANDOM_ROWS, n))
    id_ix = rng.sample(range(n), min(_LOOKUPS, n))
    params = {
        "element": ix,
        "random": rand,
        "ids": [p.dec_id[i] for i in id_ix],
        "id_ix": id_ix,
        "runs": runs,
        "text_columns": list(TEXT_COLUMNS),
    }
    say("building SQLite ...")
    sqlite_s = build_sqlite(p, out / "sqlite")
    say("building NumPy columns ...")
    np_cols_s, np_index_s = build_numpy(p, out / "numpy")
    del engine, p
    gc.collect()
    (out / "params.json").write_text(json.dumps(params))
    built = {
        "report": {
            "replay_s": replay_s,
            "decisions": n,
            "element": ref,
            "element_rows": len(ix),
        },
        "sqlite_s": sqlite_s,
        "np_cols_s": np_cols_s,
        "np_index_s": np_index_s,
    }
    (out / "build.json").write_text(json.dumps(built))
    return built


def compare(
    root: Path,
    out: Path,
    *,
    element: str | None = None,
    runs: int = 5,
    say: Any = None,
    measure_only: bool = False,
) -> dict[str, Any]:
    """Build both formats from the store at ``root`` into ``out`` and measure them
    (``measure_only``: measure what an earlier run built and kept in ``out``)."""
    say = say or (lambda _m: None)
    from benchmarks.whole_process import rss_method

    report: dict[str, Any] = {
        "store": str(root),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "load_before": [round(x, 2) for x in os.getloadavg()],
            "rss": rss_method(),
        },
        "runs": runs,
    }
    if measure_only:
        built = json.loads((out / "build.json").read_text())
    else:
        built = _build_both(root, out, element, runs, say)
    report.update(built["report"])
    sqlite_s, np_cols_s, np_index_s = (
        built["sqlite_s"],
        built["np_cols_s"],
        built["np_index_s"],
    )
    params_path = out / "params.json"

    formats: dict[str, Any] = {}
    for name, code, build_s in (
        ("sqlite", SQLITE_CHILD, sqlite_s),
        ("numpy", NUMPY_CHILD, np_cols_s + np_index_s),
    ):
        where = out / name
        say(f"{name}: {runs + 1} fresh one-element processes ...")
        ones = [_child(code, where, params_path, "one") for _ in range(runs + 1)][1:]
        say(f"{name}: warm timings ...")
        warm, _, _ = _child(code, where, params_path, "warm")

        def med(key: str, ones: list[Any] = ones) -> float:
            return round(float(statistics.median(o[0][key] for o in ones)), 3)

        formats[name] = {
            "build_s": round(build_s, 1),
            "size_mb": round(_size(where) / 1e6, 1),
            "import_ms": med("import_ms"),
            "open_ms": med("open_ms"),
            "element_first_ms": med("element_ms"),
            "lookup_first_ms": med("lookup_ms"),
            "process_ms": round(statistics.median(o[1] for o in ones), 1),
            "process_rss_mb": round(max(o[2] for o in ones), 1),
            "exit_rss_anon_mb": med("RssAnon") if "RssAnon" in ones[0][0] else None,
            "exit_rss_file_mb": med("RssFile") if "RssFile" in ones[0][0] else None,
            "element_warm_ms": round(warm["element_warm_ms"], 3),
            "random_10k_ms": round(warm["random_ms"], 1),
            "lookup_each_us": round(warm["lookup_each_us"], 2),
            "lookup_batch_us": round(warm.get("lookup_batch_us", 0), 3) or None,
        }
    formats["numpy"]["build_index_s"] = round(np_index_s, 1)
    report["formats"] = formats
    report["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return report


def render(report: dict[str, Any]) -> str:
    """The comparison as a Markdown table with a header."""
    s, m = report["formats"]["sqlite"], report["formats"]["numpy"]
    mach = report["machine"]

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f} ms" if v < 1 else f"{v:.1f} ms"

    def us(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f} µs"

    rows = [
        (
            "build (from the replayed projection)",
            f"{s['build_s']} s",
            f"{m['build_s']} s (id index {m['build_index_s']} s)",
        ),
        ("size on disk", f"{s['size_mb']} MB", f"{m['size_mb']} MB"),
        (
            "import in a fresh process (sqlite3 / numpy)",
            ms(s["import_ms"]),
            ms(m["import_ms"]),
        ),
        ("open in a fresh process", ms(s["open_ms"]), ms(m["open_ms"])),
        (
            f"one element's {report['element_rows']} rows, first fetch in a fresh process",
            ms(s["element_first_ms"]),
            ms(m["element_first_ms"]),
        ),
        (
            "one id -> index, first lookup in a fresh process",
            ms(s["lookup_first_ms"]),
            ms(m["lookup_first_ms"]),
        ),
        ("whole one-element process (wall)", ms(s["process_ms"]), ms(m["process_ms"])),
        (
            "whole one-element process, peak RSS",
            f"{s['process_rss_mb']:.0f} MB",
            f"{m['process_rss_mb']:.0f} MB",
        ),
        (
            "... resident at its end: anonymous / mapped file pages",
            _split(s),
            _split(m),
        ),
        (
            f"one element's {report['element_rows']} rows, warm",
            ms(s["element_warm_ms"]),
            ms(m["element_warm_ms"]),
        ),
        ("10,000 random rows, warm", ms(s["random_10k_ms"]), ms(m["random_10k_ms"])),
        (
            "id -> index, one at a time (per lookup)",
            us(s["lookup_each_us"]),
            us(m["lookup_each_us"]),
        ),
        (
            "id -> index, 10,000 in one searchsorted (per lookup)",
            "-",
            us(m["lookup_batch_us"]),
        ),
    ]
    lines = [
        f"store: {report['store']} — {report['decisions']} decisions; element "
        f"{report['element']} ({report['element_rows']} decision rows); replay "
        f"{report['replay_s']} s",
        f"date: {report['date']}; {mach['cpus']} CPUs, Python {mach['python']}, SQLite "
        f"{mach['sqlite']}; load average "
        f"{' / '.join(map(str, mach['load_before']))} before, "
        f"{' / '.join(map(str, mach['load_after']))} after; medians of {report['runs']}; "
        f"RSS from {mach['rss']}",
        "",
        "| measure | SQLite (`dec` table + id index) | NumPy (mmap'd columns) |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    return "\n".join(lines)


def _split(f: dict[str, Any]) -> str:
    anon, mapped = f.get("exit_rss_anon_mb"), f.get("exit_rss_file_mb")
    if anon is None or mapped is None:
        return "-"
    return f"{anon:.0f} MB / {mapped:.0f} MB"


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.storage_compare STORE [--out DIR] [--runs N] [--json]``."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.storage_compare")
    ap.add_argument("store", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="kept (default: a temp dir)")
    ap.add_argument("--element", default=None, help="KIND:NAME (default: the first)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--measure-only",
        action="store_true",
        help="measure what an earlier run with the same --out built",
    )
    args = ap.parse_args(argv)
    if args.measure_only and args.out is None:
        ap.error("--measure-only needs --out")
    out = args.out or Path(tempfile.mkdtemp(prefix="kgai-storage-"))
    try:
        report = compare(
            args.store.resolve(),
            out,
            element=args.element,
            runs=args.runs,
            say=lambda m: print(m, file=sys.stderr, flush=True),
            measure_only=args.measure_only,
        )
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(report, indent=2) if args.json else render(report))


if __name__ == "__main__":
    main()
