"""The history documents of a full search index build, made on two cores.

A history document costs about 30 µs of Python (parse the event's line, analyse its
fields, hand them to tantivy), and tantivy indexes it on a thread of its own in
less; at a million decisions a build is bound by that Python work, on one core. So
for a big store a helper process makes the documents of the last part of the
decision order, as tantivy JSON lines in a scratch file, while this process makes
those of the first part; the writer then takes the helper's lines, which it parses
in Rust. The helper is a fresh interpreter (``python -m
kgai_tui.core.search.build``), not a fork: the caller may run threads (tantivy's,
the app's), and nothing of the caller's main module is imported again. Its
documents are those this process would make (the tests compare the two indexes term
by term); if it cannot start or fails, this process makes its part too, so a build
never depends on it.
"""

from __future__ import annotations

import base64
import itertools
import mmap
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import orjson

from kgai_tui.core.scratch import make_scratch
from kgai_tui.core.search.docs import history_fields
from kgai_tui.core.store.logscan import DECISION_ID_OK
from kgai_tui.core.store.regular_file import open_regular

if TYPE_CHECKING:
    import tantivy

    from kgai_tui.core.engine.engine import Engine

__all__ = ["HELPER_MIN", "history_fields_json", "history_items"]

#: Below this many decision events one process is quicker (the helper takes about
#: half a second to start).
HELPER_MIN: Final = 50_000
#: The helper's share of the events. This process also hands every document to
#: tantivy (about 8 µs for one of the helper's, against some 30 µs to make one),
#: so the two finish together near three quarters (measured at 1M: at one half the
#: helper was done 8 s early).
_HELPER_SHARE: Final = 0.75
_RELEASE_EVERY: Final = 64 * 1024 * 1024
#: The helper hands over its documents in chunks of this many events, and this
#: process looks for a finished chunk after every so many of its own.
_CHUNK: Final = 16_384
_LOOK_EVERY: Final = 1024
#: How many chunks the helper may have written that this process has not taken.
_AHEAD: Final = 4

# (lamport, hash, shard, line, shard index, event), as Engine.decision_order has it.
_Key = tuple[int, str, str, int, int, int]


def history_items(
    engine: Engine,
    make_docs: Callable[[Engine, Sequence[_Key]], Iterable[tantivy.Document]],
) -> Iterator[tantivy.Document | str]:
    """Every history document of the engine's store, in decision order but for the
    interleaving of the two parts (which no search result depends on).

    ``make_docs(engine, keys)`` makes this process's documents (tantivy
    documents); the helper's come as JSON text, for ``IndexWriter.add_json``, a
    chunk at a time as the helper finishes them, between this process's own.
    """
    keys = engine.decision_order()
    log_dir = engine.log_dir
    if len(keys) < HELPER_MIN or log_dir is None or len(os.sched_getaffinity(0)) < 2:
        yield from make_docs(engine, keys)
        return
    cut = len(keys) - int(len(keys) * _HELPER_SHARE)
    mine, theirs = keys[:cut], keys[cut:]
    if any(scan.slow for scan in engine.scans):
        # Lines the exact path read (not canonical bytes) stay here: their canonical
        # dicts are not what orjson would read from the file.
        scans = engine.scans
        mine = [*mine, *(k for k in theirs if k[5] in scans[k[4]].slow)]
        theirs = [k for k in theirs if k[5] not in scans[k[4]].slow]
    try:
        tmp = make_scratch("index")
    except OSError:
        yield from make_docs(engine, keys)
        return
    try:
        spec = os.path.join(tmp, "work.npz")
        _write_spec(engine, theirs, spec)
        paths = [str(log_dir / scan.name) for scan in engine.scans]
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", __name__, spec, tmp, str(os.getpid()), *paths],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            yield from make_docs(engine, keys)
            return
        chunks = _Chunks(tmp, proc, len(theirs))
        try:
            for n, doc in enumerate(make_docs(engine, mine), 1):
                yield doc
                if n % _LOOK_EVERY == 0:
                    yield from chunks.ready()
            yield from chunks.rest()
        except BaseException:  # the build failed or was abandoned: stop the helper
            proc.kill()
            proc.wait()
            raise
        if chunks.failed_at is not None:
            yield from make_docs(engine, theirs[chunks.failed_at * _CHUNK :])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class _Chunks:
    """The helper's output: chunk ``j`` (JSON lines of the events ``j * _CHUNK`` on)
    appears whole, under its final name, once written."""

    def __init__(self, tmp: str, proc: subprocess.Popen[bytes], events: int) -> None:
        self._tmp = tmp
        self._proc = proc
        self._count = -(-events // _CHUNK)
        self._next = 0
        #: The first chunk not received when the helper failed.
        self.failed_at: int | None = None

    def _path(self, j: int) -> str:
        return os.path.join(self._tmp, f"{j:06d}.ndjson")

    def ready(self) -> Iterator[str]:
        """The chunks finished so far, in order."""
        while self._next < self._count and os.path.exists(self._path(self._next)):
            yield from self._take()

    def rest(self) -> Iterator[str]:
        """Every chunk left, as the helper finishes them; on failure, none more."""
        while self._next < self._count:
            if os.path.exists(self._path(self._next)):
                yield from self._take()
                continue
            code = self._proc.poll()
            if code is None:
                time.sleep(0.005)
            elif code != 0 or not os.path.exists(self._path(self._next)):
                self._proc.wait()
                self.failed_at = self._next
                return
        self._proc.wait()

    def _take(self) -> Iterator[str]:
        path = self._path(self._next)
        self._next += 1
        with open(path, "rb") as fh:
            lines = fh.read().decode().splitlines()
        os.unlink(path)
        return iter(lines)


def _write_spec(engine: Engine, keys: Sequence[_Key], path: str) -> None:
    """The helper's work: per event, its shard, offset, length and id gate."""
    scans = engine.scans
    shard = np.fromiter((k[4] for k in keys), dtype=np.int64, count=len(keys))
    event = np.fromiter((k[5] for k in keys), dtype=np.int64, count=len(keys))
    # Every shard's columns end to end: event i of shard s is at base[s] + i.
    base = np.cumsum([0, *(len(scan.offsets) for scan in scans)])[:-1]
    at = base[shard] + event
    offsets = np.concatenate(
        [np.frombuffer(sc.offsets, dtype=np.int64) for sc in scans]
    )
    lengths = np.concatenate(
        [np.frombuffer(sc.lengths, dtype=np.int64) for sc in scans]
    )
    flags = np.concatenate([np.frombuffer(sc.flags, dtype=np.uint8) for sc in scans])
    np.savez(
        path,
        shard=shard,
        offset=offsets[at],
        length=lengths[at],
        id_ok=(flags[at] & DECISION_ID_OK) != 0,
    )


def history_fields_json(obj: dict[str, Any], id_ok: bool) -> bytes | None:
    """A history document as tantivy's JSON form (``disp`` bytes in base64)."""
    fields = history_fields(obj, id_ok)
    if fields is None:
        return None
    fields["disp"] = base64.b64encode(fields["disp"]).decode("ascii")
    return orjson.dumps(fields)


def _helper(spec: str, out: str, parent: int, paths: list[str]) -> int:
    """The helper process: the documents of the given events, a JSON line each, in
    chunks of :data:`_CHUNK` events written to ``out`` (see :class:`_Chunks`).

    It stays at most :data:`_AHEAD` chunks ahead of what the building process has
    taken, and until that process has taken every chunk (the scratch directory is
    usually memory); when that process is gone (``parent`` is no longer its
    parent) it removes what it wrote and stops.

    Returns:
        The exit status: 0 when every chunk was written.
    """
    work = np.load(spec)
    maps: dict[int, mmap.mmap | bytes] = {}
    loads = orjson.loads
    read = 0
    rows = zip(
        work["shard"].tolist(),
        work["offset"].tolist(),
        work["length"].tolist(),
        work["id_ok"].tolist(),
        strict=True,
    )
    try:
        for j in itertools.count():
            chunk = list(itertools.islice(rows, _CHUNK))
            if not chunk:
                break
            docs = []
            for si, at, size, ok in chunk:
                data = maps.get(si)
                if data is None:  # a regular file only, to its size at open
                    with open_regular(paths[si]) as shard:
                        data = maps[si] = shard.map(populate=False)
                doc = history_fields_json(loads(data[at : at + size]), ok)
                if doc is not None:
                    docs.append(doc)
                read += size
                if read > _RELEASE_EVERY:  # keep the helper's RSS small
                    read = 0
                    for m in maps.values():
                        if isinstance(m, mmap.mmap):
                            m.madvise(mmap.MADV_DONTNEED)
            behind = os.path.join(out, f"{j - _AHEAD:06d}.ndjson")
            while os.path.exists(behind) and os.getppid() == parent:
                time.sleep(0.005)  # far enough ahead: wait for the reader
            if os.getppid() != parent:
                shutil.rmtree(out, ignore_errors=True)  # nobody will read it
                return 1
            final = os.path.join(out, f"{j:06d}.ndjson")
            with open(final + ".part", "wb") as fh:
                fh.write(b"\n".join(docs))
            os.rename(final + ".part", final)  # whole, or not there
    finally:
        for m in maps.values():
            if isinstance(m, mmap.mmap):
                m.close()
    # Stay until every chunk is taken: output whose reader is gone (a build
    # killed, or one that never came) is removed, not left in memory.
    while os.getppid() == parent and any(
        name.endswith(".ndjson") for name in os.listdir(out)
    ):
        time.sleep(0.01)
    if os.getppid() != parent:
        shutil.rmtree(out, ignore_errors=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_helper(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]))
