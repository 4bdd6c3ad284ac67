"""Extending the model in place with lines appended to the shards.

The replay's own code applies the new events (:meth:`Projection.apply_many`) to an
:class:`OverlayProjection`, whose containers fetch rows from the model on first use
and keep every row they touch; one transaction then writes those rows back with the
new fingerprint, and moves the per-author totals by what those rows changed
(:mod:`kgai_tui.core.model.people_rows`). Appended events that do not all sort
after the last applied one cannot be applied this way (the replay would have put
them earlier): the caller rebuilds instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from kgai_tui.core.gosem.gotext import rfc3339_epoch
from kgai_tui.core.model.build import (
    INSERT_DEC,
    INSERT_EL,
    INSERT_LINK,
    chain_breaks,
    dec_rows,
    el_row,
    graph_state,
    last_key,
    write_meta,
)
from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.graph_log import (
    Op,
    clear_log,
    log_is_long,
    log_ops,
    logged_count,
    stored_graph,
)
from kgai_tui.core.model.lazy_graph import LazyLinkGraph
from kgai_tui.core.model.moments import MOMENTS_KEY
from kgai_tui.core.model.moments_append import MomentsAppend, plan_append
from kgai_tui.core.model.people_rows import people_delta, refresh_heads
from kgai_tui.core.model.people_steps import drop_people_steps
from kgai_tui.core.model.recall_files import listed, remove_unlisted
from kgai_tui.core.model.recall_store import LATER_SLACK, update_recall
from kgai_tui.core.model.rows import (
    DecRows,
    ElementField,
    ElRows,
    MaxAuth,
    ModelCorruptError,
    batchable,
    field,
)
from kgai_tui.core.model.schema import DEC_COLUMNS
from kgai_tui.core.replay.link_graph import LinkGraph
from kgai_tui.core.replay.order import LineSource, apply_in_order, canonical_order
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.line_digest import extend_digest
from kgai_tui.core.store.logscan import DECISION_ID_OK, ShardScan, scan_appended
from kgai_tui.core.store.shard_print import ShardPrint

__all__ = ["OverlayProjection", "Staged", "extend_if_cheaper", "extend_model"]

#: The fields of a mutation that name an element.
_ELEMENT_KEYS: Final = ("element_id", "from_id", "to_id")


def _listed_ids(value: object) -> list[str]:
    """The strings of a list field of an event (anything else: none)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


#: An element and its ``(kind, name, props)`` after a replay.
Changed = tuple[str, tuple[str, str, str]]
_ATTRS: Final = ("kind", "name", "props")


class _Index:
    """``dec_index`` for the replay: held ids first, then one lookup on disk."""

    def __init__(self, rows: DecRows) -> None:
        self._rows = rows
        self._held: dict[str, int | None] = {}

    def get(self, dec_id: str, default: int | None = None) -> int | None:
        if dec_id not in self._held:
            self._held[dec_id] = self._rows.find(dec_id)
        found = self._held[dec_id]
        return default if found is None else found

    def __getitem__(self, dec_id: str) -> int:
        found = self.get(dec_id)
        if found is None:
            raise KeyError(dec_id)
        return found

    def __setitem__(self, dec_id: str, idx: int) -> None:
        self._held[dec_id] = idx

    def prefetch(self, dec_ids: Iterable[str]) -> None:
        """Look up several ids not held yet in one query each block."""
        held = self._held
        found = self._rows.find_many(d for d in dec_ids if d not in held)
        for dec_id, ix in found.items():
            held.setdefault(dec_id, ix)

    def __contains__(self, dec_id: object) -> bool:
        return isinstance(dec_id, str) and self.get(dec_id) is not None


class OverlayProjection(Projection):
    """A projection whose state is the model's rows, fetched as the replay needs them."""

    def __init__(self, db: sqlite3.Connection) -> None:
        """Load the small parts (graph, conflicts, counts); rows come on demand.

        The graph is a :class:`~kgai_tui.core.model.lazy_graph.LazyLinkGraph`:
        NetworkX's layout without NetworkX, answered from the element and link rows
        until the update must write it back whole.
        """
        counts = read_meta(db, "counts")
        self._db = db
        self.link_graph = LazyLinkGraph(
            counts["elements"], self._stored_element, self._stored_links, self._state
        )
        super().__init__(self.link_graph)  # type: ignore[arg-type]
        self.applied = set()  # new events all sort after every applied one
        self.applied_count = counts["applied"]
        self.decs = DecRows(db, counts["decisions"])
        self._ids = _Index(self.decs)
        self._dec_index = self._ids  # type: ignore[assignment]
        for name in DEC_COLUMNS:
            setattr(self, "dec_" + name, self.decs.column(name))
        self._node_seq = counts["elements"]
        self.els = ElRows(db, self._new_row)
        self._el_shapes = ElementField(self.els, 5, counts["shapes_seq"])
        self.heads = ElementField(self.els, 7, counts["heads_seq"])  # type: ignore[assignment]
        self.contested = set(read_meta(db, "contested"))
        self.unknown_ops = [(str(h), str(op)) for h, op in read_meta(db, "unknown_ops")]
        self._max_auth = MaxAuth(self.els)  # type: ignore[assignment]

    def _state(self) -> LinkGraph:
        return stored_graph(self._db, read_meta(self._db, "graph"))

    def prefetch(self, indices: Iterable[int]) -> None:
        """Fetch the stored rows of ``indices`` not held yet, a block per query
        (recall's segment merge reads thousands; a query each took 0.7 s at 10M)."""
        self.decs.prefetch(indices)

    def warm(self, events: Iterable[dict[str, Any]]) -> None:
        """Read what the replay of ``events`` will ask the rows for, a query per
        kind instead of one per id: whether their decision ids (and those they
        supersede) are stored, their elements' attributes, the rows of the
        elements they shape. The answers are the ones the replay would get;
        an id a query cannot carry (:func:`batchable`) is left to it."""
        decs: set[str] = set()
        els: set[str] = set()
        shaped: set[str] = set()
        for ev in events:
            d = ev.get("decision")
            if not isinstance(d, dict):
                continue
            decs.update(_listed_ids([d.get("id")]))
            decs.update(_listed_ids(d.get("supersedes")))
            shaped.update(_listed_ids(d.get("shapes")))
            for m in d.get("mutations") or ():
                if isinstance(m, dict):
                    els.update(_listed_ids([m.get(k) for k in _ELEMENT_KEYS]))
        self._ids.prefetch(d for d in decs if batchable(d))
        wanted = sorted(e for e in els | shaped if batchable(e))
        rows: dict[str, tuple[str, str, str] | None] = dict.fromkeys(wanted)
        for at in range(0, len(wanted), 8192):
            for eid, kind, name, props in self._db.execute(
                "SELECT id, kind, name, props FROM el"
                " WHERE id IN (SELECT value FROM json_each(?))",
                (orjson.dumps(wanted[at : at + 8192]),),
            ):
                rows[eid] = (kind, name, props)
        self.link_graph.prefetch(rows)
        self.els.prefetch(shaped)

    def _stored_element(self, eid: str) -> tuple[str, str, str] | None:
        hit = self._db.execute(
            "SELECT kind, name, props FROM el WHERE id = ?", (eid,)
        ).fetchone()
        return None if hit is None else (hit[0], hit[1], hit[2])

    def _stored_links(self, eid: str) -> list[tuple[str, str]]:
        rows = self._db.execute("SELECT dst, key FROM link WHERE src = ?", (eid,))
        return [(dst, key) for dst, key in rows]

    def _new_row(self, eid: str) -> list[Any] | None:
        if eid not in self._nodes:
            return None
        seq = self._node_seq
        self._node_seq += 1
        return [seq, "", "", "", None, None, None, None, 0]

    def rows_to_write(
        self,
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[Changed]]:
        """The decision and element rows this replay touched, ready to write, and
        every element whose kind, name or props changed (or that was added),
        with those attributes now."""
        lengths = set(self.decs.lengths)
        if len(lengths) != 1:
            raise ModelCorruptError("a new decision's row is incomplete")
        decs = list(dec_rows(self, sorted(self.decs.rows)))
        # Only the elements fetched or added can have changed (every element,
        # once the graph is loaded).
        before = self.link_graph.stored
        nodes = self._nodes
        changed: list[Changed] = []
        for eid, attrs in dict.items(nodes):  # props flushed since, new nodes
            now = (attrs["kind"], attrs["name"], attrs["props"])
            if before.get(eid) != now:
                self.els.get(eid)
                changed.append((eid, now))
        els = [
            el_row(
                eid,
                row[0],
                nodes[eid],
                row[4],
                field(row, 5),
                row[6],
                field(row, 7),
                row[8],
            )
            for eid, row in self.els.rows.items()
            if row is not None
        ]
        return decs, els, changed

    def counts(self) -> dict[str, int]:
        """The model's counts after this replay."""
        shapes, heads = self._el_shapes, self.heads
        assert isinstance(shapes, ElementField) and isinstance(heads, ElementField)
        return {
            "applied": self.applied_count,
            "decisions": len(self.dec_id),
            "elements": self.graph.number_of_nodes(),
            "shapes_seq": shapes.next_seq,
            "heads_seq": heads.next_seq,
        }


def _same_events(
    staged: Staged, shard_meta: list[dict[str, Any]], keys: Sequence[Any]
) -> bool:
    """Whether the staged overlay is the stored state plus exactly ``keys``' events.

    The stored state must be the one the session started from, and the appended
    events (one shard's, in canonical order) the ones it applied: their hashes are
    what the overlay added to its (empty at start) applied set.
    """
    if staged.shards != shard_meta:
        return False
    hashes = [k[1] for k in keys]
    return len(set(hashes)) == len(hashes) and set(hashes) == staged.overlay.applied


def _moments_after(
    db: sqlite3.Connection,
    log_dir: Path,
    scans: Sequence[ShardScan],
    keys: Sequence[tuple[int, str, int, int]],
    rows: tuple[Any, Any, Any, Any],
    decisions: int,
) -> MomentsAppend | None:
    """The moments moved along with these events (``None``: the model has none).

    The appended lines are read once more for their times, only when the model holds
    moments (one line for a ``record``).
    """
    if db.execute("SELECT 1 FROM meta WHERE k = ?", (MOMENTS_KEY,)).fetchone() is None:
        return None
    source = LineSource(log_dir, scans)
    try:
        times = [rfc3339_epoch(source.load(si, i)["recorded_at"]) for *_, si, i in keys]
    finally:
        source.release()
    clean = all(scans[si].flags[i] & DECISION_ID_OK for *_, si, i in keys)
    decs, els, added, removed = rows
    return plan_append(db, times, clean, decisions, decs, els, added, removed)


def _problems(scan: ShardScan, shift: int) -> list[list[Any]]:
    return [[p.line + shift, p.reason, p.hash] for p in scan.problems]


class Staged:
    """A write session's overlay, which already applied the lines it appended.

    ``shards`` is the model's shard state the session started from: the overlay
    stands for the model only while the stored state is still that one.
    """

    def __init__(
        self,
        overlay: OverlayProjection,
        shards: list[dict[str, Any]],
        release: Callable[[], None],
    ) -> None:
        """Keep the overlay, the state it was staged on, and how to close the
        connection its rows come from (once they are all read)."""
        self.overlay = overlay
        self.shards = shards
        self.release = release


#: Appended bytes from which a rebuild is cheaper than extending in place: an
#: extension fetches and rewrites rows one by one (about 2.4x the per-event cost of
#: a build, measured on a 100k clone: 18.4 s extending, 7.8 s building), so when
#: the new lines are over a third of the log (a clone, a long-offline teammate's
#: pull) the model is built again from the whole log. Spec 7.5 rebuilds for the
#: same reason, at its own engine's ratio.
_REBUILD_SHARE: Final = 3
_REBUILD_MIN_BYTES: Final = 4 << 20


def extend_if_cheaper(
    db: sqlite3.Connection,
    model: Path,
    log_dir: Path,
    stored: Sequence[ShardPrint],
    now: Sequence[ShardPrint],
    staged: Staged | None = None,
    *,
    tidy_now: bool = True,
) -> bool:
    """:func:`extend_model`, unless the lines appended since ``stored`` are a
    third of the log or more (``False``: nothing written, rebuild instead)."""
    added = sum(p.size for p in now) - sum(p.size for p in stored)
    if added >= _REBUILD_MIN_BYTES and added * _REBUILD_SHARE >= sum(
        p.size for p in now
    ):
        return False
    return extend_model(db, model, log_dir, now, staged, tidy_now=tidy_now)


def extend_model(
    db: sqlite3.Connection,
    model: Path,
    log_dir: Path,
    now: Sequence[ShardPrint],
    staged: Staged | None = None,
    *,
    tidy_now: bool = True,
) -> bool:
    """Apply what was appended to the shards since the model was written.

    ``db`` is a writable connection, held under the model's lock; ``now`` the shards'
    fingerprint (already classified as "append"). Returns ``False`` when the model
    must be rebuilt instead (a replaced file, a last line read as an event without
    its newline and extended since, events that sort before the last applied one);
    nothing is written then. A torn last line, since completed, is read again.

    With ``staged`` (a write session's overlay), the appended events are not read
    and applied again when they are exactly the ones the overlay applied on top of
    the stored state: the overlay's rows are written as they are, which saves
    loading the element graph a second time. Otherwise it is ignored.

    Without ``tidy_now``, a graph log this update makes long, an element file
    or a recall segment due, are left for :func:`~kgai_tui.core.model.tidy.tidy_after`
    (the caller answers first).
    """
    shard_meta = read_meta(db, "shards")
    stored = {s["print"][0]: s for s in shard_meta}
    fresh_scans: list[ShardScan] = []
    states: list[dict[str, Any]] = []
    for p in now:
        old = stored.pop(p.name, None)
        offset = 0 if old is None else int(old["print"][1])
        fresh = scan_appended(
            log_dir, p, offset, None if old is None else old["last_hash"]
        )
        if fresh is None:
            return False
        fresh_scans.append(fresh)
        newlines = 0 if old is None else int(old["newlines"])
        problems = [] if old is None else old["problems"]
        if fresh.start < offset:  # the torn last line, read again whole
            problems = [x for x in problems if int(x[0]) <= newlines]
        states.append(
            {
                "print": p.to_list(),
                "newlines": newlines + fresh.newline_count,
                "events": (0 if old is None else int(old["events"])) + len(fresh),
                "last_hash": fresh.hashes[-1]
                if len(fresh)
                else (None if old is None else old["last_hash"]),
                "last_lamport": fresh.lamports[-1]
                if len(fresh)
                else (0 if old is None else old["last_lamport"]),
                "torn": bool(fresh.torn_tail),
                "problems": problems + _problems(fresh, newlines),
                "breaks": ([] if old is None else old["breaks"])
                + chain_breaks(fresh, newlines),
                "digest": extend_digest(
                    "" if old is None else old["digest"], fresh.hashes, fresh.flags
                ),
            }
        )
    if stored:
        return False
    last = read_meta(db, "last")
    keys = canonical_order(fresh_scans)
    if keys and last is not None and list(keys[0][:2]) <= last:
        return False
    if staged is not None and _same_events(staged, shard_meta, keys):
        overlay = staged.overlay
    else:
        overlay = OverlayProjection(db)
        source = LineSource(log_dir, fresh_scans)
        overlay.warm(source.load(k[2], k[3]) for k in keys)
        apply_in_order(
            overlay,
            fresh_scans,
            source,
            keys,
            after=None if last is None else tuple(last),
        )
        source.release()
    decs, els, changed = overlay.rows_to_write()
    fresh_last = last_key(fresh_scans)
    graph = overlay.link_graph
    added, removed = graph.added_links, graph.removed_links
    # The graph's state is one value (18 MB at 10M): an update logs what it did
    # to it, and writes it again (below) once the log is long, or whenever the
    # graph is loaded whole anyway (recall's element file written again). The
    # two share the load, so each resets the other's count.
    graph_ops: list[Op] = [
        *graph.ops,
        *(("attrs", e, dict(zip(_ATTRS, a, strict=True))) for e, a in changed),
    ]
    # Left to a tidy, unless LATER_SLACK times as much is waiting (tidies that
    # keep failing must not leave every reader replaying a log without end).
    slack = 1 if tidy_now else LATER_SLACK
    logged = logged_count(db) + len(graph_ops)
    if graph_ops and log_is_long(logged // slack, graph.number_of_nodes()):
        graph.load()
    old_recall = read_meta(db, "recall")
    recall, delta = update_recall(
        model,
        overlay,
        old_recall,
        db,
        changed=changed,
        # In graph order: the stored elements', then those the log adds (every
        # one it adds, until the graph is loaded).
        added=None
        if graph.complete
        else [op[1] for op in graph.ops if op[0] == "node"],
        stale=overlay.decs.recall_stale(),
        later=not tidy_now,
    )
    meta: dict[str, Any] = {
        "counts": overlay.counts(),
        "contested": sorted(overlay.contested),
        "unknown_ops": [list(x) for x in overlay.unknown_ops],
        "shards": states,
        "last": fresh_last if fresh_last is not None else last,
        "recall": recall,
    }
    if delta is not None:
        meta["recall_delta"] = delta.value()
    moments = _moments_after(
        db,
        log_dir,
        fresh_scans,
        keys,
        (decs, els, added, removed),
        meta["counts"]["decisions"],
    )
    fold = bool(graph_ops) and graph.complete
    if fold:
        meta["graph"] = graph_state(graph)
    if staged is not None and overlay is staged.overlay:
        # Every row the overlay needs has been read: its connection goes before
        # this commit, so that its snapshot holds no checkpoint back.
        staged.release()
    db.execute("BEGIN IMMEDIATE")
    try:
        people = people_delta(db, decs)  # reads the rows about to be replaced
        db.executemany(INSERT_DEC, decs)
        people.write(db)
        db.executemany(INSERT_EL, els)
        refresh_heads(db, decs, els)
        db.executemany(
            "DELETE FROM link WHERE src = ? AND dst = ? AND key = ?", sorted(removed)
        )
        db.executemany(INSERT_LINK, sorted(added))
        if fold:
            clear_log(db)
        else:
            log_ops(db, graph_ops)
        write_meta(db, meta)
        if moments is not None:
            moments.write(db)
        else:
            drop_people_steps(db)  # none are built without moments; never stale
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    # A reader of the state before this update may still open its files.
    remove_unlisted(model, sorted(listed(recall) | listed(old_recall)))
    return True
