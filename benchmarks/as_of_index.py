"""Time index benchmark: build from a streaming pass, then as-of at five dates.

Usage: ``python benchmarks/as_of_index.py STORE [--replay]``

Every line of a generated store is canonical, so the pass decodes lines with orjson
and merges the shards by ``(lamport, hash)`` without building ``Event`` objects.
``--replay`` also times the reference ``project_as_of`` (opens the store: slow at 1M).
"""

from __future__ import annotations

import gc
import heapq
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psutil

from kgai_tui.core.gosem.gotext import epoch_to_datetime, rfc3339_epoch
from kgai_tui.core.reads.as_of import as_of_obj
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.timeindex.index import TimeIndex, TimeIndexBuilder


def _shard(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    with open(path, "rb") as fh:
        for line in fh:
            obj = orjson.loads(line)
            yield obj["lamport"], obj["hash"], obj


def stream(root: Path) -> Iterator[dict[str, Any]]:
    """Every event of the store in canonical order (shards are sorted already)."""
    shards = [_shard(p) for p in sorted((root / "log").glob("*.ndjson"))]
    last = None
    for _lamport, ev_hash, obj in heapq.merge(*shards, key=lambda r: (r[0], r[1])):
        if ev_hash != last:
            yield obj
        last = ev_hash


def _projection_like(builder: TimeIndexBuilder) -> Projection:
    """A projection holding the index's own decision lists (what the engine has)."""
    ix = builder._index  # benchmark only
    ix._materialize()
    p = Projection()
    p.dec_index, p.dec_id, p.dec_title = ix.d_index, ix.d_id, ix.d_title
    p.dec_rationale, p.dec_author, p.dec_refs = ix.d_rationale, ix.d_author, ix.d_refs
    p.dec_summary, p.dec_time, p.dec_lamport = ix.d_summary, ix.d_time, ix.d_lamport
    p.dec_install, p.dec_hash, p.dec_shapes = ix.d_install, ix.d_hash, ix.d_shapes
    p.applied_count = ix.events
    return p


def index_bytes(ix: TimeIndex) -> int:
    """Bytes held by the index itself (not the decision lists it shares)."""
    seen: set[int] = set()
    shared = (
        {
            id(x)
            for x in (
                ix.d_index,
                ix.d_id,
                ix.d_title,
                ix.d_rationale,
                ix.d_author,
                ix.d_refs,
                ix.d_summary,
                ix.d_time,
                ix.d_lamport,
                ix.d_install,
                ix.d_hash,
                ix.d_shapes,
            )
        }
        if ix.shared is not None
        else set()
    )
    stack: list[object] = [v for k, v in vars(ix).items() if k != "shared"]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in shared:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set)):
            stack.extend(obj)
    return total


def main() -> None:
    """Build, measure, report."""
    root = Path(sys.argv[1])
    proc = psutil.Process()
    t0 = time.perf_counter()
    for obj in stream(root):
        rfc3339_epoch(obj["recorded_at"])
    decode = time.perf_counter() - t0
    print(f"decode+merge+epoch only: {decode:.1f} s")
    gc.collect()
    rss0 = proc.memory_info().rss
    t0 = time.perf_counter()
    builder = TimeIndexBuilder()
    n = 0
    for obj in stream(root):
        builder.add(obj, rfc3339_epoch(obj["recorded_at"]), True)
        n += 1
    t1 = time.perf_counter()
    if "--own" in sys.argv:
        index = builder.finish(None)
    else:  # as the engine does: share the decision lists of an equal projection
        index = builder.finish(_projection_like(builder))
    t2 = time.perf_counter()
    gc.collect()
    rss1 = proc.memory_info().rss
    print(
        f"events {n}: add {t1 - t0 - decode:.1f} s (+{decode:.1f} s decoding), "
        f"finish {t2 - t1:.1f} s; RSS +{(rss1 - rss0) / 2**20:.0f} MB "
        f"(with the decision lists); index alone {index_bytes(index) / 2**20:.0f} MB"
    )
    gc.freeze()
    lo, hi = index.times[0], index.times[-1]
    for frac in (0.2, 0.4, 0.6, 0.8, 1.0):
        cut = epoch_to_datetime(lo + int((hi - lo) * frac))
        assert cut is not None
        best = 1e9
        for _ in range(3):
            t = time.perf_counter()
            obj = as_of_obj(index.at(cut), cut)
            best = min(best, time.perf_counter() - t)
        print(
            f"  {int(frac * 100):3d}%: at+as_of_obj {best * 1000:6.1f} ms  "
            f"({len(obj['elements'] or ())} elements, "
            f"{len(obj['heads'] or ())} heads)"
        )
    t = time.perf_counter()
    data = index.dumps()
    t3 = time.perf_counter()
    again = TimeIndex.loads(data, index.shared)
    t4 = time.perf_counter()
    print(f"dumps {t3 - t:.2f} s, loads {t4 - t3:.2f} s, {len(data) / 2**20:.1f} MB")
    del again
    if "--replay" in sys.argv:
        from kgai_tui.core.engine.open import open_engine
        from kgai_tui.core.reads.as_of import project_as_of

        engine = open_engine(root)
        for frac in (0.2, 1.0):
            cut = epoch_to_datetime(lo + int((hi - lo) * frac))
            assert cut is not None
            t = time.perf_counter()
            as_of_obj(project_as_of(engine.shards, cut), cut)
            print(f"  replay {int(frac * 100)}%: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
