"""Writing the model: a whole one from a replayed engine, and the parts an update touched.

A whole model is written to a temporary file in the model directory and renamed into
place, so a reader never opens half of one. An update is one SQLite transaction in
write-ahead-log mode: a reader keeps the snapshot it started with and sees the model
before the update or after it, never between, and never waits for it.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from kgai_tui.core.model.people_rows import write_heads, write_people
from kgai_tui.core.model.recall_files import listed, remove_unlisted
from kgai_tui.core.model.recall_store import build_recall
from kgai_tui.core.model.schema import DDL, DEC_COLUMNS, INDEXES, header
from kgai_tui.core.model.seal import temporary_prefix, write_seal
from kgai_tui.core.store.line_digest import extend_digest
from kgai_tui.core.store.logscan import HASH_OK, ShardScan
from kgai_tui.core.store.regular_file import replace_cache_file

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection import Projection

__all__ = [
    "INSERT_DEC",
    "INSERT_EL",
    "INSERT_LINK",
    "build_model",
    "el_row",
    "graph_state",
    "link_rows",
    "plain_columns",
    "shard_state",
    "write_meta",
]

_EL_COLUMNS: Final = (
    "seq",
    "kind",
    "name",
    "props",
    "shapes_seq",
    "shapes",
    "heads_seq",
    "heads",
    "max_auth",
)


def _upsert(table: str, key: str, columns: Sequence[str], fixed: str = "") -> str:
    """Insert a row, or update the one with its key in place.

    Not ``INSERT OR REPLACE``: that deletes the old row and inserts the new one,
    so every index entry of the row is written again, and SQLite keeps a
    statement journal (a temporary file) for each statement. An append at 10M
    decisions rewrites ~2,000 rows: REPLACE wrote ~6,900 pages to the model and
    ~59 MB to temporary files, this ~4,400 pages and none (measured with strace).
    ``fixed`` is the first of ``columns`` when it never changes for a key (a
    decision's id, under a unique index of its own): it is not updated."""
    names = ", ".join((key, *columns))
    marks = ", ".join("?" * (len(columns) + 1))
    sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c != fixed)
    return (
        f"INSERT INTO {table} ({names}) VALUES ({marks})"
        f" ON CONFLICT({key}) DO UPDATE SET {sets}"
    )


#: A decision row by ``ix``; its ``id`` (unique) is written once.
INSERT_DEC: Final = _upsert("dec", "ix", DEC_COLUMNS, fixed="id")
INSERT_LINK = "INSERT OR IGNORE INTO link (src, dst, key) VALUES (?, ?, ?)"
#: An element row by ``id``.
INSERT_EL: Final = _upsert("el", "id", _EL_COLUMNS)


def _json_list(values: Sequence[Any]) -> str | None:
    # As str at once: orjson's bytes keep a much larger buffer alive (measured: a
    # million held lists cost 7 s instead of 0.3 s).
    return orjson.dumps(list(values)).decode() if values else None


def plain_columns(p: Projection | Any) -> tuple[Any, ...]:
    """The decision columns stored as they are (``DEC_COLUMNS`` before the lists):
    id, title, rationale, author, refs, summary, time, lamport, install, hash."""
    return (
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


def dec_rows(p: Projection | Any, indices: Iterable[int]) -> Iterator[tuple[Any, ...]]:
    """Rows for the decision table, list columns as JSON."""
    cols = plain_columns(p)
    shapes, sup, by = p.dec_shapes, p.dec_supersedes, p.dec_superseded_by
    for i in indices:
        yield (
            i,
            *(c[i] for c in cols),
            _json_list(shapes[i]),
            _json_list(sup[i]),
            _json_list(by[i]),
        )


def dec_rows_all(p: Projection) -> Iterator[tuple[Any, ...]]:
    """Every decision row of an in-memory projection.

    Column by column (list comprehensions and ``zip`` run in C), not row by row:
    at a million decisions a generator making tuples one by one costs seconds
    more. A block of rows at a time: a million rows' JSON lists at once were
    ~250 MB of a first build's memory.
    """
    dumps = orjson.dumps
    plain = plain_columns(p)
    lists = (p.dec_shapes, p.dec_supersedes, p.dec_superseded_by)
    n = len(p.dec_id)
    for a in range(0, n, _ROWS_BLOCK):
        b = min(a + _ROWS_BLOCK, n)
        encoded = [
            [dumps(v).decode() if v else None for v in column[a:b]] for column in lists
        ]
        yield from zip(range(a, b), *(c[a:b] for c in plain), *encoded, strict=True)


#: Decision rows made at a time by :func:`dec_rows_all`.
_ROWS_BLOCK: Final = 1 << 16


def el_row(
    eid: str,
    seq: int,
    attrs: dict[str, Any],
    shapes_seq: int | None,
    shapes: dict[int, bool] | None,
    heads_seq: int | None,
    heads: Iterable[int] | None,
    max_auth: int,
) -> tuple[Any, ...]:
    """One row of the element table."""
    return (
        eid,
        seq,
        attrs["kind"],
        attrs["name"],
        attrs["props"],
        shapes_seq,
        None
        if shapes is None
        else orjson.dumps([[i, int(a)] for i, a in shapes.items()]).decode(),
        heads_seq,
        None if heads is None else orjson.dumps(sorted(heads)).decode(),
        max_auth,
    )


def graph_state(graph: Any) -> tuple[Any, ...]:
    """Nodes, successors and predecessors in NetworkX's own orders (marshal-able)."""
    inner = vars(graph)
    nodes = [(n, a["kind"], a["name"], a["props"]) for n, a in inner["_node"].items()]
    succ = [
        (
            src,
            [
                (dst, [(k, a["created_by"]) for k, a in keys.items()])
                for dst, keys in out.items()
            ],
        )
        for src, out in inner["_succ"].items()
        if out
    ]
    pred = [(dst, list(into)) for dst, into in inner["_pred"].items() if into]
    return nodes, succ, pred


def link_rows(graph: Any) -> list[tuple[str, str, str]]:
    """Every link as ``(from, to, kind)`` (what recall's item links read)."""
    return [
        (src, dst, key)
        for src, out in vars(graph)["_succ"].items()
        for dst, keys in out.items()
        for key in keys
    ]


def shard_state(scan: ShardScan) -> dict[str, Any]:
    """What an update needs of a shard: where it ended, its fingerprint, its problems,
    and the digest of its lines (what ``doctor`` checks the model against)."""
    n = len(scan)
    return {
        "print": scan.shard_print().to_list(),
        "newlines": scan.newline_count,
        "events": n,
        "last_hash": scan.hashes[-1] if n else None,
        "last_lamport": scan.lamports[-1] if n else 0,
        "torn": bool(scan.torn_tail),
        "problems": [[p.line, p.reason, p.hash] for p in scan.problems],
        "breaks": chain_breaks(scan, 0),
        "digest": extend_digest("", scan.hashes, scan.flags),
    }


def chain_breaks(scan: ShardScan, shift: int) -> list[list[int]]:
    """``[line, lamport]`` of each line whose first parent is not the line before
    (doctor's "broken hash-chain"), lines shifted by ``shift`` (an appended tail)."""
    return [[scan.lines[i] + shift, scan.lamports[i]] for i in scan.chain_breaks]


def last_key(scans: Sequence[ShardScan]) -> list[Any] | None:
    """The largest ``(lamport, hash)`` of a hash-verified event (the replay's end)."""
    best: tuple[int, str] | None = None
    for s in scans:
        for lam, h, f in zip(s.lamports, s.hashes, s.flags, strict=True):
            if f & HASH_OK and (best is None or (lam, h) > best):
                best = (lam, h)
    return None if best is None else list(best)


def write_meta(db: sqlite3.Connection, values: dict[str, Any]) -> None:
    """Set ``meta`` keys, as :mod:`marshal` (exact for every string, even a shard
    name or store path that is not UTF-8)."""
    db.executemany(
        "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)",
        [(k, marshal.dumps(v)) for k, v in values.items()],
    )


def build_model(engine: Engine, path: Path) -> None:
    """Write the model of a replayed engine to ``path`` (atomically, then sealed)."""
    assert engine.root is not None
    p = engine.projection
    p.flush_props()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=temporary_prefix(path), suffix=".sqlite", dir=path.parent
    )
    os.close(fd)
    try:
        # The recall files first: their build is this function's peak, and
        # SQLite's page cache below grows to 256 MiB (at 1M: 1.78 GB with it
        # held, 1.5 GB without).
        recall = build_recall(path, p)
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("PRAGMA page_size=8192")
            db.execute("PRAGMA cache_size=-262144")  # 256 MiB while building
            db.execute("PRAGMA locking_mode=EXCLUSIVE")
            db.executescript(DDL)
            db.execute("BEGIN")
            db.executemany(INSERT_DEC, dec_rows_all(p))
            write_people(
                db,
                p.dec_hash,
                p.dec_author,
                p.dec_time,
                p.dec_install,
                p.dec_shapes,
                p.dec_superseded_by,
                p.el_shapes.items(),
            )
            _write_elements(db, p)
            write_heads(
                db, p.heads.items(), p.dec_hash, p.dec_author, p.dec_superseded_by
            )
            db.executemany(INSERT_LINK, link_rows(p.graph))
            meta = _meta_of(engine)
            meta["recall"] = recall
            write_meta(db, meta)
            db.execute("COMMIT")
            db.executescript(INDEXES)
            # Kept in the file: readers never wait for a writer.
            db.execute("PRAGMA journal_mode=WAL")
        finally:
            db.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        # The old model's write-ahead log must never meet the new file.
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.with_name(path.name + suffix))
        replace_cache_file(tmp, path)
        remove_unlisted(path, sorted(listed(meta["recall"])))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    write_seal(path)


def _write_elements(db: sqlite3.Connection, p: Projection) -> None:
    shapes_at = {eid: n for n, eid in enumerate(p.el_shapes)}
    heads_at = {eid: n for n, eid in enumerate(p.heads)}
    shapes, heads = p.el_shapes, p.heads
    db.executemany(
        INSERT_EL,
        (
            el_row(
                eid,
                seq,
                attrs,
                shapes_at.get(eid),
                shapes.get(eid),
                heads_at.get(eid),
                heads.get(eid),
                p.max_authority_lamport(eid),
            )
            for seq, (eid, attrs) in enumerate(vars(p.graph)["_node"].items())
        ),
    )


def _meta_of(engine: Engine) -> dict[str, Any]:
    p = engine.projection
    assert engine.root is not None
    return {
        "header": header(engine.root),
        "counts": {
            "applied": p.applied_count,
            "decisions": len(p.dec_id),
            "elements": p.graph.number_of_nodes(),
            "shapes_seq": len(p.el_shapes),
            "heads_seq": len(p.heads),
        },
        "contested": sorted(p.contested),
        "unknown_ops": [list(x) for x in p.unknown_ops],
        "graph": graph_state(p.graph),
        "shards": [shard_state(s) for s in engine.scans],
        "last": last_key(engine.scans),
    }
