"""A time index over the log: point-in-time reads without replaying it (spec 6.6, 14.8).

``as-of`` replays every hash-verified event recorded at or before a cut, in canonical
``(lamport, hash)`` order. Every piece of state that replay produces is a function of
*which* events are included, and inclusion of an event is just ``time <= cut``. So the
index keeps, per piece of state, the few events that can decide it, and answers "the
first (or last) included one" by a binary search or a short scan:

* an element's kind and name come from the first included event touching it: only the
  touches that lower the running minimum time can ever be first (``record lows``);
* a prop key's value is the last included write: a suffix-minimum of write times finds
  it; only the element's very last write keeps trailing white space (``set_prop``
  re-trims every other line);
* a link exists iff the last included op on it is an add; runs of equal ops are reduced
  to their record lows too;
* authority of (decision, element) comes from the first included event of that decision
  shaping it; heads are a pure function of authority and included supersedes edges, so
  each element's head set is precomputed as a step function of time;
* decision fields come from the first included event carrying the id unless an earlier
  included event referenced it by ``supersedes`` (then it stays a stub, as in
  :meth:`Projection.apply`); a decision exists from the earliest such event on.

Times that are not monotone in canonical order (skewed writer clocks) are handled
exactly; they only make the few affected decisions "exceptions" that are recomputed at
the cut. The events must be given in canonical order with duplicate hashes removed.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_right, insort
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.gosem.gotext import go_trim_space, rfc3339_epoch
from kgai_tui.core.timeindex.heads import element_versions
from kgai_tui.core.timeindex.keys import SEQ, Carry

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from kgai_tui.core.replay.projection import Projection
    from kgai_tui.core.store.shards import ShardRead
    from kgai_tui.core.timeindex.columns import IndexColumns
    from kgai_tui.core.timeindex.view import AsOfView

INF: Final = 1 << 62
_ZERO_TIME: Final = -62135596800  # Go's time.Time{}


# A decision's scalar fields: title, rationale, author, refs, summary, dec_time,
# lamport, install, hash.
Rec = tuple[str, str, str, str, str, int | None, int, str, str]
_STUB_REC: Final[Rec] = ("", "", "", "", "", None, 0, "", "")
_COLUMNS: Final = (
    "d_title",
    "d_rationale",
    "d_author",
    "d_refs",
    "d_summary",
    "d_time",
    "d_lamport",
    "d_install",
    "d_hash",
)


def _arr() -> array[int]:
    return array("q")


def _fields_of(p: Projection, g: int) -> Rec:
    """Decision ``g``'s scalar fields in a projection, in :data:`Rec` order."""
    return (
        p.dec_title[g],
        p.dec_rationale[g],
        p.dec_author[g],
        p.dec_refs[g],
        p.dec_summary[g],
        p.dec_time[g],
        p.dec_lamport[g],
        p.dec_install[g],
        p.dec_hash[g],
    )


class _PackedRecs:
    """A build's decision fields: one ``marshal`` record each, in one buffer.

    Nine fields as a tuple of fresh strings and ints cost ~450 bytes a decision
    (440 MB at the peak of a 1M build, where the log pages and the engine are
    resident too), and are thrown away when :meth:`TimeIndex.finish` shares the
    projection's equal lists, the usual case. Packed, a record is ~190 bytes in one
    block that is handed back to the OS whole. With a ``mirror`` (the projection of
    the same log), a record equal to the mirror's decision at the same index is
    stored as an empty record and read from the mirror.
    """

    __slots__ = ("data", "ends", "mirror")

    def __init__(self, mirror: Projection | None = None) -> None:
        self.data = bytearray()
        self.ends: array[int] = _arr()
        self.mirror = mirror

    def __len__(self) -> int:
        return len(self.ends)

    def append(self, fields: Rec) -> None:
        g, mirror = len(self.ends), self.mirror
        if mirror is None or g >= len(mirror.dec_id) or _fields_of(mirror, g) != fields:
            self.data += marshal.dumps(fields)
        self.ends.append(len(self.data))

    def __getitem__(self, g: int) -> Rec:
        start, end = self.ends[g - 1] if g else 0, self.ends[g]
        if start == end:  # a record is never empty: this one is the mirror's
            assert self.mirror is not None
            return _fields_of(self.mirror, g)
        rec: Rec = marshal.loads(self.data[start:end])
        return rec


class TimeIndex:
    """Point-in-time state of a store, answering :meth:`at` without a replay."""

    def __init__(self) -> None:
        """Start empty; feed events with :meth:`add` (or use the builder)."""
        self.events = 0
        self.last_key: tuple[int, str] | None = None  # (lamport, hash) of the last add
        self.version = 0  # bumped by every add(): views of older versions are stale
        self.times: array[int] = _arr()  # sorted times of every indexed event
        self.skipped = 0  # events without an RFC3339 recorded_at (never in as-of)
        self.ungated = 0  # events that failed the decision-id gate
        self.shared: Projection | None = None
        # Decisions by global index (creation order in the full replay).
        self.d_index: dict[str, int] = {}
        self.d_id: list[str] = []
        self.d_title: list[str] = []
        self.d_rationale: list[str] = []
        self.d_author: list[str] = []
        self.d_refs: list[str] = []
        self.d_summary: list[str] = []
        self.d_time: list[int | None] = []
        self.d_lamport: list[int] = []
        self.d_install: list[str] = []
        self.d_hash: list[str] = []
        self.d_shapes: list[list[str]] = []
        # While building, the scalar fields go to one packed record per decision;
        # finish() drops them when it shares an equal projection's lists, else
        # unpacks them into the lists above.
        self._recs: _PackedRecs | None = _PackedRecs()
        # The projection of the same log, while building: equal ids, fields and
        # shapes are taken from it instead of kept twice (see TimeIndexBuilder).
        self._mirror: Projection | None = None
        self.d_exist: array[int] = _arr()  # earliest time it exists
        self.d_stable: array[int] = _arr()  # from then on, fields equal the final
        self.d_ctime: array[int] = _arr()  # time of the creating event
        self.d_cpos: array[int] = _arr()  # its pos; ~pos when created by reference
        self.d_in: array[int] = _arr()  # first in-edge (linked list), -1 none
        self.d_out: array[int] = _arr()  # first out-edge
        self.d_carry: dict[int, list[Carry]] = {}  # carrying entries when needed
        # Supersedes edges (src supersedes dst) as linked lists per endpoint.
        self.e_src: array[int] = _arr()
        self.e_dst: array[int] = _arr()
        self.e_time: array[int] = _arr()
        self.e_ord: array[int] = _arr()
        self.e_nin: array[int] = _arr()
        self.e_nout: array[int] = _arr()
        self.e_more: dict[int, list[tuple[int, int]]] = {}  # edge -> [(ord, time)]
        # Shapes pairs per element: flat (decision, pos, time, flags) quads;
        # flags bit 0 = authority of the first entry, bit 1 = more entries exist.
        self.pairs: dict[str, array[int]] = {}
        self.pair_more: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
        # Elements: record-low touches, flat (time, touch number, kind, name).
        self.touch: dict[str, list[Any]] = {}
        # Props: element -> key -> [times, seqs, trimmed lines, sufmin | None].
        self.props: dict[str, dict[str, list[Any]]] = {}
        self.raw_lines: dict[int, str] = {}  # seq -> untrimmed line, when different
        self.prop_seq = 0
        self.touch_seq = 0
        # Links: (from, to, kind) -> [run_is_add, run_min, (time, pos, add, by)...].
        self.links: dict[tuple[str, str, str], list[Any]] = {}
        self.unknown: list[tuple[int, str, str]] = []  # (time, hash, op)
        self._strs: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        # Derived (rebuilt by refresh()).
        self.prefmax: array[int] = _arr()
        self.sufmin: array[int] = _arr()
        self.exceptions: list[int] = []
        self.versions: dict[str, tuple[array[int], array[int]]] = {}
        self.vmulti: list[tuple[int, ...]] = []
        self._dirty: set[str] | None = None  # None: every element
        self._stale = True
        self._columns: IndexColumns | None = None  # dropped by add() and refresh()

    # ------------------------------------------------------------------ add

    def add(self, obj: dict[str, Any], epoch: int | None, gated: bool = True) -> None:
        """Index one event (canonical shape), after every event added so far.

        Raises:
            ValueError: the event sorts before the last one added (rebuild instead).
        """
        key = (obj["lamport"], obj["hash"])
        last = self.last_key
        if last is not None and key <= last:
            if key == last:
                return  # the same event again
            raise ValueError(
                f"event {key[1]} sorts before {last[1]}: rebuild the index"
            )
        self.last_key = key
        if not gated:
            self.ungated += 1
        if epoch is None:
            self.skipped += 1
            return
        if self.shared is not None:
            self._unshare()
        self._stale = True
        self._columns = None
        self.version += 1
        pos = self.events
        self.events += 1
        times = self.times
        if not times or epoch >= times[-1]:
            times.append(epoch)
        else:
            insort(times, epoch)
        dec = obj["decision"]
        if dec is None:
            return
        did = dec["id"]
        g = self.d_index.get(did)
        if g is None:
            g = self._new_decision(did, pos, epoch, obj, dec)
            carry = None
        else:
            carry = self._carry_of(obj, dec, pos, epoch)
            self._more_carry(g, carry)
        muts = dec["mutations"]
        if muts:
            self._mutations(muts, pos, epoch, obj["hash"])
        shapes = dec.get("shapes")
        if shapes:
            self._shapes(g, dec, shapes, pos, epoch, carry)
        sups = dec.get("supersedes")
        if sups:
            self._supersedes(g, sups, pos, epoch)
        if self._dirty is not None and (shapes or sups):
            # A live append: only the elements this decision shapes can change heads.
            self._dirty.update(self.d_shapes[g])

    def _intern(self, s: str) -> str:
        return self._strs.setdefault(s, s)

    def _carry_of(
        self, obj: dict[str, Any], dec: dict[str, Any], pos: int, epoch: int
    ) -> Carry:
        return (
            pos,
            epoch,
            dec["title"],
            dec.get("rationale", ""),
            dec.get("author", ""),
            dec.get("refs", ""),
            dec.get("summary", ""),
            obj["lamport"],
            obj["install_id"],
            obj["hash"],
            None if epoch == _ZERO_TIME else epoch,
            [],
        )

    def _append_decision(self, did: str, fields: Rec) -> int:
        g = len(self.d_id)
        mirror = self._mirror
        if mirror is not None and g < len(mirror.dec_id) and mirror.dec_id[g] == did:
            did = mirror.dec_id[g]  # one string for both (~70 MB at 1M)
        self.d_index[did] = g
        self.d_id.append(did)
        recs = self._recs
        if recs is not None:
            recs.append(fields)
        else:
            for name, value in zip(_COLUMNS, fields, strict=True):
                getattr(self, name).append(value)
        self.d_shapes.append([])
        self.d_in.append(-1)
        self.d_out.append(-1)
        return g

    def _new_decision(
        self, did: str, pos: int, epoch: int, obj: dict[str, Any], dec: dict[str, Any]
    ) -> int:
        get = dec.get
        intern = self._strs.setdefault
        author = get("author", "")
        install = obj["install_id"]
        fields: Rec = (
            dec["title"],
            get("rationale", ""),
            intern(author, author),
            get("refs", ""),
            get("summary", ""),
            None if epoch == _ZERO_TIME else epoch,
            obj["lamport"],
            intern(install, install),
            obj["hash"],
        )
        g = self._append_decision(did, fields)
        self.d_exist.append(epoch)
        self.d_stable.append(epoch)
        self.d_ctime.append(epoch)
        self.d_cpos.append(pos)
        return g

    def fields(self, g: int) -> Rec:
        """A decision's final scalar fields."""
        if self._recs is not None:
            return self._recs[g]
        return (
            self.d_title[g],
            self.d_rationale[g],
            self.d_author[g],
            self.d_refs[g],
            self.d_summary[g],
            self.d_time[g],
            self.d_lamport[g],
            self.d_install[g],
            self.d_hash[g],
        )

    def _materialize(self) -> None:
        """Unpack the build records into the field lists (author, install interned)."""
        recs = self._recs
        if recs is None:
            return
        self._recs = None
        cols: list[list[Any]] = [[] for _ in _COLUMNS]
        adds = [c.append for c in cols]
        intern = self._strs.setdefault
        data, mirror, start = recs.data, recs.mirror, 0
        for g, end in enumerate(recs.ends):
            if start == end:
                assert mirror is not None
                fields = _fields_of(mirror, g)
            else:
                fields = marshal.loads(data[start:end])
            start = end
            for add, value in zip(adds, fields, strict=True):
                add(value)
        del recs, data
        for i in (2, 7):  # author, install: a few distinct values
            cols[i] = [intern(v, v) for v in cols[i]]
        for name, col in zip(_COLUMNS, cols, strict=True):
            setattr(self, name, col)

    def _new_stub(self, did: str, pos: int, epoch: int) -> int:
        g = self._append_decision(did, _STUB_REC)
        self.d_exist.append(epoch)
        self.d_stable.append(epoch)
        self.d_ctime.append(epoch)
        self.d_cpos.append(~pos)
        return g

    def base_carry(self, g: int) -> Carry:
        """The carrying entry of a decision created by its own (only) event."""
        f = self.fields(g)
        return (
            self.d_cpos[g],
            self.d_ctime[g],
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            f[6],
            f[7],
            f[8],
            f[5],
            list(self.d_shapes[g]),
        )

    def _more_carry(self, g: int, carry: Carry) -> None:
        entries = self.d_carry.get(g)
        if entries is None:
            entries = self.d_carry[g] = []
            if self.d_cpos[g] >= 0:
                entries.append(self.base_carry(g))
        entries.append(carry)
        epoch = carry[1]
        if epoch < self.d_exist[g]:
            self.d_exist[g] = epoch
        if epoch > self.d_stable[g]:
            self.d_stable[g] = epoch

    def _touch(self, eid: str, epoch: int, pos: int, kind: str, name: str) -> None:
        """Record a touch that may be the first included one (``pos`` is unused:
        a running touch number orders elements first touched by the same event)."""
        seq = self.touch_seq
        self.touch_seq = seq + 1
        lows = self.touch.get(eid)
        if lows is None:
            self.touch[eid] = [epoch, seq, self._intern(kind), self._intern(name)]
        elif epoch < lows[-4]:
            lows.extend((epoch, seq, self._intern(kind), self._intern(name)))

    def _mutations(self, muts: list[Any], pos: int, epoch: int, ev_hash: str) -> None:
        touch, lows_of = self._touch, self.touch.get
        for m in muts:
            op = m["op"]
            if op == "upsert_element":
                eid = m.get("element_id")
                if not eid:
                    continue
                lows = lows_of(eid)
                if lows is None or epoch < lows[-4]:
                    touch(eid, epoch, pos, m.get("kind", ""), m.get("name", ""))
                props = m.get("props")
                if props:
                    for key in sorted(props):
                        self._prop(eid, key, props[key], epoch)
            elif op == "set_prop":
                eid = m.get("element_id")
                if not eid:
                    continue
                lows = lows_of(eid)
                if lows is None or epoch < lows[-4]:
                    touch(eid, epoch, pos, "", "")
                self._prop(eid, m.get("key", ""), m.get("value", ""), epoch)
            elif op == "add_link":
                f, t = m.get("from_id"), m.get("to_id")
                if not f or not t:
                    continue
                lows = lows_of(f)
                if lows is None or epoch < lows[-4]:
                    touch(f, epoch, pos, "", "")
                lows = lows_of(t)
                if lows is None or epoch < lows[-4]:
                    touch(t, epoch, pos, "", "")
                by = m.get("element_id", "")
                self._link((f, t, m.get("link_kind", "")), True, by, epoch, pos)
            elif op == "retire_link":
                f, t = m.get("from_id"), m.get("to_id")
                if f and t:
                    self._link((f, t, m.get("link_kind", "")), False, "", epoch, pos)
            else:
                self.unknown.append((epoch, ev_hash, op))

    def _prop(self, eid: str, key: str, value: str, epoch: int) -> None:
        norm = self._keys.get(key)
        if norm is None:
            norm = go_trim_space(key).replace("\n", " ").replace("\r", " ")
            norm = self._keys[key] = norm.replace("=", "-")
        if "\n" in value or "\r" in value:
            value = value.replace("\n", " ").replace("\r", " ")
        line = norm + "=" + value
        trimmed = go_trim_space(line)
        seq = self.prop_seq
        self.prop_seq += 1
        if trimmed != line:
            self.raw_lines[seq] = line
        trimmed = self._strs.setdefault(trimmed, trimmed)
        keys = self.props.get(eid)
        if keys is None:
            keys = self.props[eid] = {}
        hist = keys.get(norm)
        if hist is None:
            hist = [array("q", (epoch,)), array("q", (seq,)), [trimmed], None]
            if keys and norm < next(reversed(keys)):
                keys[norm] = hist
                self.props[eid] = dict(sorted(keys.items()))
            else:
                keys[norm] = hist
            return
        times: array[int] = hist[0]
        sufmin: array[int] | None = hist[3]
        if sufmin is None and epoch < times[-1]:
            sufmin = hist[3] = array("q", times)
        times.append(epoch)
        hist[1].append(seq)
        hist[2].append(trimmed)
        if sufmin is not None:
            sufmin.append(epoch)
            j = len(sufmin) - 2
            while j >= 0 and sufmin[j] > epoch:
                sufmin[j] = epoch
                j -= 1

    def _link(
        self, key: tuple[str, str, str], add: bool, by: str, epoch: int, pos: int
    ) -> None:
        ops = self.links.get(key)
        if ops is None:
            self.links[key] = [add, epoch, epoch, pos, add, by]
            return
        if ops[0] == add:
            if epoch >= ops[1]:
                return  # dominated: an earlier op of the same run is included first
            ops[1] = epoch
        else:
            ops[0], ops[1] = add, epoch
        ops.extend((epoch, pos, add, by))

    def _shapes(
        self,
        g: int,
        dec: dict[str, Any],
        shapes: list[str],
        pos: int,
        epoch: int,
        carry: Carry | None,
    ) -> None:
        targets = dec.get("targets") or ()
        legacy = not targets and not dec.get("provenance_only", False)
        tset = set(targets) if len(targets) > 8 else targets
        pairs, touch, intern = self.pairs, self.touch, self._strs.setdefault
        if carry is None:  # the decision is new: every pair is new
            if "" in shapes or (len(shapes) > 1 and len(set(shapes)) < len(shapes)):
                shapes = [e for i, e in enumerate(shapes) if e and e not in shapes[:i]]
            mirror = self._mirror
            if (
                mirror is not None
                and g < len(mirror.dec_shapes)
                and mirror.dec_shapes[g] == shapes
            ):
                # The mirror's own list (copied by finish() unless it is shared).
                shapes = mirror.dec_shapes[g]
            else:
                # One string per element, not one per decoded line (~90 MB at 1M).
                shapes = [intern(e, e) for e in shapes]
            self.d_shapes[g] = shapes  # never changed in place from here on
            for eid in shapes:
                lows = touch.get(eid)
                if lows is None or epoch < lows[-4]:
                    self._touch(eid, epoch, pos, "", "")
                quads = pairs.get(eid)
                if quads is None:
                    quads = pairs[eid] = _arr()
                quads.extend((g, pos, epoch, 1 if (legacy or eid in tset) else 0))
            return
        mine = carry[11]
        added: list[str] = []
        for eid in shapes:
            if not eid or eid in mine:
                continue
            eid = intern(eid, eid)
            mine.append(eid)
            self._touch(eid, epoch, pos, "", "")
            flag = 1 if (legacy or eid in tset) else 0
            quads = pairs.get(eid)
            if quads is None:
                quads = pairs[eid] = _arr()
            at = _find_pair(quads, g) if eid in self.d_shapes[g] else -1
            if at < 0:
                quads.extend((g, pos, epoch, flag))
                added.append(eid)
                continue
            more = self.pair_more.get((eid, g))
            if more is None:
                more = self.pair_more[(eid, g)] = [
                    (quads[at + 1], quads[at + 2], quads[at + 3] & 1)
                ]
                quads[at + 3] |= 2
            more.append((pos, epoch, flag))
        if added:
            self.d_shapes[g] = [*self.d_shapes[g], *added]

    def _supersedes(self, g: int, sups: list[str], pos: int, epoch: int) -> None:
        for seq, prev_id in enumerate(sups):
            if not prev_id:
                continue
            p = self.d_index.get(prev_id)
            if p is None:
                p = self._new_stub(prev_id, pos, epoch)
            elif epoch < self.d_exist[p]:
                self.d_exist[p] = epoch
            e = self.d_out[g]
            while e >= 0 and self.e_dst[e] != p:
                e = self.e_nout[e]
            order = pos * SEQ + min(seq, SEQ - 1)
            if e < 0:
                e = len(self.e_src)
                self.e_src.append(g)
                self.e_dst.append(p)
                self.e_time.append(epoch)
                self.e_ord.append(order)
                self.e_nout.append(self.d_out[g])
                self.e_nin.append(self.d_in[p])
                self.d_out[g] = e
                self.d_in[p] = e
                continue
            more = self.e_more.get(e)
            last = more[-1][0] if more else self.e_ord[e]
            if last // SEQ == pos:
                continue  # the same event lists it twice
            if more is None:
                more = self.e_more[e] = [(self.e_ord[e], self.e_time[e])]
            more.append((order, epoch))

    # ------------------------------------------------------------------ finish

    def refresh(self) -> None:
        """Recompute what :meth:`add` left stale (prefixes, exceptions, heads)."""
        self._materialize()
        if not self._stale:
            return
        exist = self.d_exist
        self.prefmax = array("q", accumulate(exist, max))
        self.sufmin = array("q", reversed(list(accumulate(reversed(exist), min))))
        stable, carry = self.d_stable, self.d_carry
        self.exceptions = sorted(
            {g for g, (e, s) in enumerate(zip(exist, stable, strict=True)) if e < s}
            | set(carry)
        )
        dirty = self._dirty
        if dirty is None:
            self.vmulti = []
            self.versions = {}
            targets: Iterable[str] = list(self.pairs)
        else:
            targets = [e for e in dirty if e in self.pairs]
        for eid in targets:
            self.versions[eid] = element_versions(self, eid)
        self._dirty = set()
        self._stale = False
        self._columns = None

    def mark_dirty(self, eids: Iterable[str]) -> None:
        """Recompute these elements' head steps at the next refresh."""
        if self._dirty is not None:
            self._dirty.update(eids)

    def _unshare(self) -> None:
        """Take private copies of the projection's lists before changing them."""
        p = self.shared
        assert p is not None
        n = len(self.d_exist)
        self.d_index = {k: v for k, v in p.dec_index.items() if v < n}
        self.d_id = p.dec_id[:n]
        self.d_title = p.dec_title[:n]
        self.d_rationale = p.dec_rationale[:n]
        self.d_author = p.dec_author[:n]
        self.d_refs = p.dec_refs[:n]
        self.d_summary = p.dec_summary[:n]
        self.d_time = p.dec_time[:n]
        self.d_lamport = p.dec_lamport[:n]
        self.d_install = p.dec_install[:n]
        self.d_hash = p.dec_hash[:n]
        self.d_shapes = [list(s) for s in p.dec_shapes[:n]]
        self.shared = None

    def finish(self, projection: Projection | None = None) -> TimeIndex:
        """Compute the derived tables; share the projection's lists when equal."""
        if projection is not None and self._same_as(projection):
            self._recs = None
            self._share(projection)
        else:
            self._own_shapes()
        self._mirror = None
        self._dirty = None
        self._stale = True
        self.refresh()
        return self

    def _own_shapes(self) -> None:
        """Copy the shapes lists taken from the mirror: it grows them in place."""
        mirror = self._mirror
        if mirror is None:
            return
        theirs, mine = mirror.dec_shapes, self.d_shapes
        for g in range(min(len(theirs), len(mine))):
            if mine[g] is theirs[g]:
                mine[g] = list(theirs[g])

    def _same_as(self, p: Projection) -> bool:
        n = len(self.d_id)
        return (
            self.skipped == 0
            and self.ungated == 0
            and len(p.dec_id) == n
            and p.applied_count == self.events
            and (
                n == 0
                or (p.dec_id[0] == self.d_id[0] and p.dec_id[-1] == self.d_id[-1])
            )
        )

    def _share(self, p: Projection) -> None:
        self._recs = None
        self.shared = p
        self.d_index = p.dec_index
        self.d_id, self.d_title, self.d_rationale = (
            p.dec_id,
            p.dec_title,
            p.dec_rationale,
        )
        self.d_author, self.d_refs, self.d_summary = (
            p.dec_author,
            p.dec_refs,
            p.dec_summary,
        )
        self.d_time, self.d_lamport = p.dec_time, p.dec_lamport
        self.d_install, self.d_hash, self.d_shapes = (
            p.dec_install,
            p.dec_hash,
            p.dec_shapes,
        )

    # ------------------------------------------------------------------ read

    def at(self, cut: datetime) -> AsOfView:
        """The store as of ``cut``: equal to replaying the events recorded by then."""
        from kgai_tui.core.timeindex.view import AsOfView

        self.refresh()
        return AsOfView(self, int(cut.timestamp()))

    def columns(self) -> IndexColumns:
        """Elements, links and head steps as flat arrays (built once per version)."""
        self.refresh()
        if self._columns is None:
            from kgai_tui.core.timeindex.columns import IndexColumns

            self._columns = IndexColumns(self)
        return self._columns

    def applied_at(self, limit: int) -> int:
        """Number of events recorded at or before ``limit`` (Unix seconds)."""
        return bisect_right(self.times, limit)

    # ------------------------------------------------------------------ storage

    def dumps(self) -> bytes:
        """Serialise the index (see :mod:`kgai_tui.core.timeindex.io`)."""
        from kgai_tui.core.timeindex.io import dump_index

        return dump_index(self)

    @classmethod
    def loads(
        cls, data: bytes | memoryview, projection: Projection | None = None
    ) -> TimeIndex:
        """Rebuild an index from :meth:`dumps` (``projection`` when it was shared).

        ``data`` may be a view of the mapped cache file: no copy of it is needed.

        Raises:
            ValueError: the bytes are of another format, or the projection does not
                match the one the index shared.
        """
        from kgai_tui.core.timeindex.io import load_index

        return load_index(cls(), data, projection)


def _find_pair(quads: array[int], g: int) -> int:
    for i in range(0, len(quads), 4):
        if quads[i] == g:
            return i
    return -1


class TimeIndexBuilder:
    """Collect events in canonical order during open, then :meth:`finish`."""

    def __init__(self, mirror: Projection | None = None) -> None:
        """Start an empty index.

        Args:
            mirror: The projection of the same log, when at hand. A decision's id,
                fields and shapes equal to the mirror's at the same index are not
                kept a second time during the build (at 1M decisions ~330 MB
                less at the build's peak); the result is the same either way. The
                mirror must not change until :meth:`finish`.
        """
        self._index = TimeIndex()
        if mirror is not None:
            self._index._mirror = mirror
            self._index._recs = _PackedRecs(mirror)

    def add(self, obj: dict[str, Any], epoch: int | None, gated: bool) -> None:
        """Index one hash-verified event (canonical order, duplicates removed)."""
        self._index.add(obj, epoch, gated)

    def observe(self, obj: dict[str, Any], gated: bool) -> None:
        """:meth:`add` with the epoch parsed here (an engine ``EventObserver``)."""
        self._index.add(obj, rfc3339_epoch(obj["recorded_at"]), gated)

    def finish(self, projection: Projection | None = None) -> TimeIndex:
        """Return the finished index (sharing ``projection``'s lists when equal)."""
        return self._index.finish(projection)


def build_time_index(
    shards: Iterable[ShardRead], projection: Projection | None = None
) -> TimeIndex:
    """Build an index from shards already read (the slow path, for tests and tools)."""
    from kgai_tui.core.wire.codec import event_obj

    items = [
        item.decoded
        for shard in shards
        for item in shard.events
        if item.decoded.hash_ok
    ]
    items.sort(key=lambda d: (d.event.lamport, d.event.hash))
    builder = TimeIndexBuilder(projection)
    seen: set[str] = set()
    for d in items:
        ev = d.event
        if ev.hash in seen:
            continue
        seen.add(ev.hash)
        builder.add(event_obj(ev), rfc3339_epoch(ev.recorded_at), d.decision_id_ok)
    return builder.finish(projection)
