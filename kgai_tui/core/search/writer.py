"""Index writing: building the history and live indexes, extending them after
appends, and the directories they are recorded in under the user cache.
"""

from __future__ import annotations

import contextlib
import gc
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import tantivy

from kgai_tui.core.search.backend import SCHEMA, STAMP, register, tantivy_failure
from kgai_tui.core.search.cache import (
    IndexState,
    PartState,
    dir_manifest,
    save_state,
)
from kgai_tui.core.search.docs import DocRecord, history_fields, index_fields
from kgai_tui.core.search.live import LiveSet, live_set, touched_by
from kgai_tui.core.search.tail import appended_decisions
from kgai_tui.core.store.shard_print import ShardPrint
from kgai_tui.core.wire.codec import event_from_obj

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "IndexInfo",
    "Parts",
    "all_history_docs",
    "build_in_memory",
    "build_persisted",
    "decision_objs",
    "engine_prints",
    "extend_persisted",
    "history_docs",
    "live_documents",
    "new_index",
    "no_gc",
    "open_part",
    "write",
]

_BUILD_HEAP: Final = 256_000_000
_UPDATE_HEAP: Final = 64_000_000
#: Documents built before they are handed to tantivy together (see _write_docs).
_BURST: Final = 1024


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """What an index holds and how it was obtained.

    Attributes:
        how: ``"cached"`` (reused as is), ``"appended"`` (incremental),
            ``"built"`` (full build) or ``"memory"`` (no store path: not persisted).
        history_docs: Decision events indexed.
        live_docs: Current elements plus decisions in force.
        path: The cache directory, if persisted.
        added: History documents added by this open.
    """

    how: str
    history_docs: int
    live_docs: int
    path: Path | None
    added: int = 0


def _document(rec: DocRecord) -> tantivy.Document:
    """Build the index document of a record.

    One ``from_dict`` call instead of a dozen ``add_*`` calls: the build is bound by
    the Python work per document (tantivy indexes on its own thread meanwhile).
    """
    return tantivy.Document.from_dict(index_fields(rec), SCHEMA)


def new_index(path: Path | None) -> tantivy.Index:
    if path is None:
        return register(tantivy.Index(SCHEMA))
    path.mkdir(parents=True, exist_ok=False)
    return register(tantivy.Index(SCHEMA, path=str(path), reuse=False))


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building documents.

    Building creates no reference cycles, and with an engine of a million decisions
    alive a full collection walks tens of millions of objects (about a second); an
    update of the index allocates enough to trigger one.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def write(
    index: tantivy.Index, docs: Iterable[tantivy.Document | str], heap: int
) -> int:
    """Add documents (or their JSON) with one indexing thread, commit, and wait for
    merges. One thread writes one segment: a query then runs once, not per segment
    (docs/performance.md has the measurement)."""
    with no_gc():
        return _write_docs(index, docs, heap)


def _write_docs(
    index: tantivy.Index, docs: Iterable[tantivy.Document | str], heap: int
) -> int:
    """Add documents in bursts of :data:`_BURST` (the order is unchanged).

    tantivy's indexing thread is faster than Python builds documents: fed one at a
    time, it empties its channel after each, sleeps, and every add wakes it (a futex
    call on both sides, a third of that thread's CPU in a full build). Added in a
    burst, the channel fills and the thread stays awake until it has drained it.
    """
    writer = index.writer(heap_size=heap, num_threads=1)
    add, add_json = writer.add_document, writer.add_json
    pending = iter(docs)
    count = 0
    try:
        while burst := list(islice(pending, _BURST)):
            for doc in burst:
                if isinstance(doc, str):
                    add_json(doc)  # made by the helper process of .build
                else:
                    add(doc)
            count += len(burst)
        writer.commit()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.rollback()
        raise
    finally:
        writer.wait_merging_threads()
    index.reload()
    return count


def decision_objs(engine: Engine) -> Iterator[tuple[dict[str, Any], bool]]:
    """The engine's hash-verified decision events as dicts (no Event per line)."""
    return engine.decision_objs()


def history_docs(
    items: Iterable[tuple[dict[str, Any], bool]],
) -> Iterator[tantivy.Document]:
    """History documents of hash-verified decision events, in the given order."""
    schema = SCHEMA
    from_dict = tantivy.Document.from_dict
    for obj, id_ok in items:
        fields = history_fields(obj, id_ok)
        if fields is not None:
            yield from_dict(fields, schema)


def all_history_docs(
    engine: Engine, keys: Iterable[tuple[int, str, str, int, int, int]] | None = None
) -> Iterator[tantivy.Document]:
    """``history_docs(decision_objs(engine))`` in one loop (the tests hold them
    equal): a full build runs it a million times on the core that feeds tantivy.

    ``keys`` (from ``engine.decision_order()``) limits it to those events.
    """
    from kgai_tui.core.replay.order import LineSource
    from kgai_tui.core.store.logscan import DECISION_ID_OK

    scans = engine.scans
    gates = [scan.flags for scan in scans]
    schema = SCHEMA
    from_dict = tantivy.Document.from_dict
    source = LineSource(engine.log_dir, scans)
    load = source.load
    try:
        for key in engine.decision_order() if keys is None else keys:
            si, i = key[4], key[5]
            fields = history_fields(load(si, i), gates[si][i] & DECISION_ID_OK != 0)
            if fields is not None:
                yield from_dict(fields, schema)
    finally:
        source.release()


def live_documents(live: LiveSet) -> Iterator[tantivy.Document]:
    return (entry.document(_document) for entry in live.entries)


def engine_prints(engine: Engine) -> tuple[ShardPrint, ...]:
    """The fingerprint of the log the engine read, with each shard's line count."""
    return tuple(
        sorted(
            (replace(s.shard_print(), lines=s.newline_count) for s in engine.scans),
            key=lambda p: p.name.encode("utf-8", "surrogateescape"),
        )
    )


def open_part(cache: Path, part: PartState) -> tantivy.Index | None:
    """Open one recorded index directory, or ``None`` if anything does not match."""
    path = cache / part.dir
    try:
        if dir_manifest(path) != part.files:
            return None
        index = register(tantivy.Index.open(str(path)))
        if index.searcher().num_docs != part.docs:
            return None
        return index
    except BaseException as exc:
        if not tantivy_failure(exc):
            raise
        return None


def _remove_stale(cache: Path, keep: Iterable[str]) -> None:
    keep_set = set(keep)
    for entry in cache.iterdir():
        if entry.is_dir() and entry.name not in keep_set:
            shutil.rmtree(entry, ignore_errors=True)


#: The live documents last written per cache directory, for incremental updates in
#: long-running processes (the terminal app, the MCP server).
_LIVE_MEMO: dict[str, LiveSet] = {}

#: An opened pair of indexes and what they hold: (live, history, info).
Parts = tuple[tantivy.Index, tantivy.Index, IndexInfo]


def build_in_memory(engine: Engine) -> Parts:
    """Build both indexes in memory (an engine without a store path, or no cache)."""
    history = new_index(None)
    added = write(history, all_history_docs(engine), _BUILD_HEAP)
    live = new_index(None)
    count = write(live, live_documents(live_set(engine.projection)), _UPDATE_HEAP)
    info = IndexInfo("memory", added, count, None, added)
    return live, history, info


def build_persisted(
    cache: Path, store: str, prints: tuple[ShardPrint, ...], engine: Engine
) -> Parts:
    """Build both indexes from scratch in new directories of ``cache``, record them
    and remove every other directory (the caller holds the write lock)."""
    gen = uuid.uuid4().hex[:12]
    history = new_index(cache / f"history-{gen}")
    # The helper process (and NumPy under it) loads only when an index is built,
    # not with every search that opens one.
    from kgai_tui.core.search.build import history_items

    added = write(history, history_items(engine, all_history_docs), _BUILD_HEAP)
    live_docs = live_set(engine.projection)
    live = new_index(cache / f"live-{gen}")
    write(live, live_documents(live_docs), _UPDATE_HEAP)
    state = IndexState(
        STAMP,
        store,
        prints,
        PartState(f"history-{gen}", added, dir_manifest(cache / f"history-{gen}")),
        PartState(
            f"live-{gen}",
            len(live_docs.entries),
            dir_manifest(cache / f"live-{gen}"),
            live_docs.digest,
        ),
    )
    save_state(cache, state)
    _LIVE_MEMO[str(cache)] = live_docs
    _remove_stale(cache, (state.history.dir, state.live.dir))
    info = IndexInfo("built", added, len(live_docs.entries), cache, added)
    return live, history, info


def extend_persisted(
    cache: Path,
    state: IndexState,
    prints: tuple[ShardPrint, ...],
    projection: ProjectionView,
    log_dir: Path,
) -> Parts | None:
    """Add the decision events appended up to ``prints`` (read from the shards'
    new bytes) to the recorded history index, and rewrite the live index from
    ``projection`` (the log at ``prints``: a whole store or the read model) if it
    changed; ``None`` when the recorded indexes do not hold what the state says
    or a tail cannot be read (then build from scratch)."""
    history = open_part(cache, state.history)
    if history is None:
        return None
    fresh = appended_decisions(log_dir, state.shards, prints)
    if fresh is None:
        return None
    added = write(history, history_docs(fresh), _UPDATE_HEAP)
    hist_part = PartState(
        state.history.dir,
        state.history.docs + added,
        dir_manifest(cache / state.history.dir),
    )
    previous = _LIVE_MEMO.get(str(cache))
    if previous is not None and previous.digest == state.live.digest:
        touched = touched_by(event_from_obj(obj) for obj, _ in fresh)
        live_docs = live_set(projection, previous, touched)
    else:
        live_docs = live_set(projection)
    live_part = state.live
    if live_docs.digest != state.live.digest:
        name = f"live-{uuid.uuid4().hex[:12]}"
        write(new_index(cache / name), live_documents(live_docs), _UPDATE_HEAP)
        live_part = PartState(
            name,
            len(live_docs.entries),
            dir_manifest(cache / name),
            live_docs.digest,
        )
    new_state = IndexState(STAMP, state.store, prints, hist_part, live_part)
    save_state(cache, new_state)
    _LIVE_MEMO[str(cache)] = live_docs
    _remove_stale(cache, (hist_part.dir, live_part.dir))
    live = open_part(cache, live_part)
    if live is None or history.searcher().num_docs != hist_part.docs:
        return None
    info = IndexInfo("appended", hist_part.docs, live_part.docs, cache, added)
    return live, history, info
