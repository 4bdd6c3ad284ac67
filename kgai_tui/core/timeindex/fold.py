"""The fold that builds a time index: each event, in canonical order, into its tables.

:class:`IndexFold` adds events (:meth:`~IndexFold.add`), recomputes what they left
stale (:meth:`~IndexFold.refresh`: prefixes, exceptions, head steps) and finishes a
build, sharing the projection's decision lists when they are equal.
"""

from __future__ import annotations

from array import array
from bisect import insort
from typing import TYPE_CHECKING, Any, Final, Self

from kgai_tui.core.gosem.gotext import go_trim_space
from kgai_tui.core.timeindex.heads import element_versions
from kgai_tui.core.timeindex.keys import SEQ, Carry
from kgai_tui.core.timeindex.tables import (
    FIELD_COLUMNS,
    STUB_REC,
    IndexTables,
    PackedRecs,
    Rec,
    new_array,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from kgai_tui.core.replay.projection import Projection

ZERO_TIME: Final = -62135596800  # Go's time.Time{}


def _order_columns(
    exist: array[int], stable: array[int]
) -> tuple[array[int], array[int], list[int]]:
    """The running maximum of ``exist`` from the start, its running minimum from
    the end, and the decisions whose fields reach their final values only after
    they exist (``exist < stable``).

    Over every decision on every refresh, so in NumPy: in Python these three took
    0.6 s of bringing a 1M-decision index up to date after an append, whatever
    its size (py-spy). The arrays are read through views released before return
    (an array with a view cannot grow)."""
    import numpy as np  # loaded already wherever an index is built or read

    n = len(exist)
    if len(stable) != n:
        raise ValueError("the decision columns differ in length")
    ex = np.frombuffer(exist, dtype=np.int64, count=n) if n else np.zeros(0, np.int64)
    st = np.frombuffer(stable, dtype=np.int64, count=n) if n else np.zeros(0, np.int64)
    prefmax = array("q", np.maximum.accumulate(ex).tobytes())
    sufmin = array("q", np.minimum.accumulate(ex[::-1])[::-1].tobytes())
    late: list[int] = np.flatnonzero(ex < st).tolist()
    del ex, st
    return prefmax, sufmin, late


class IndexFold(IndexTables):
    """The tables plus the fold: :meth:`add` each event after the ones before."""

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
        tail = self._tail_from is not None
        if tail and (not gated or epoch is None):
            # The projection shared is only ever one with neither (see _same_as).
            raise ValueError("an appended event is not indexed as the model is")
        if not gated:
            self.ungated += 1
        if epoch is None:
            self.skipped += 1
            return
        if self.shared is not None and not tail:
            self._unshare()
        self._stale = True
        self._columns = None
        self.version += 1
        pos = self.events
        self.events += 1
        self.prop_start.append(self.prop_seq)
        times = self.times
        if not times or epoch >= times[-1]:
            times.append(epoch)
        else:
            insort(times, epoch)
        dec = obj["decision"]
        if dec is None:
            return
        did = dec["id"]
        g = self._find(did)
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
            self._dirty.update(self._shapes_of(g))

    def _intern(self, s: str) -> str:
        return self._strs.setdefault(s, s)

    # ------------------------------------------------------------------ tail

    def begin_tail(self) -> None:
        """Fold appended events into this loaded index while it keeps sharing its
        projection, which already holds them (the read model after its update, or
        a replay of the whole log): nothing is copied. The fold checks each
        decision it creates against the projection's, and :meth:`end_tail` the
        rest. A tail it cannot fold this way raises ``ValueError`` (rebuild)."""
        if self.shared is not None:
            self._tail_from = len(self.d_exist)
            self._tail_shapes = {}

    def end_tail(self) -> None:
        """Check that the tail created every decision the projection holds, with
        its shapes, and stop folding in tail mode.

        Raises:
            ValueError: the projection holds what the fold did not make.
        """
        p = self.shared
        if self._tail_from is None or p is None:
            return
        if len(p.dec_id) != len(self.d_exist):
            raise ValueError("the projection holds decisions the log does not")
        for g, shapes in self._tail_shapes.items():
            if list(p.dec_shapes[g]) != shapes:
                raise ValueError("the projection's shapes are not the log's")
        self._tail_from = None
        self._tail_shapes = {}

    def _find(self, did: str) -> int | None:
        """The index of a decision folded so far (in tail mode the shared
        projection also knows the ones still to come)."""
        g = self.d_index.get(did)
        if g is not None and self._tail_from is not None and g >= len(self.d_exist):
            return None
        return g

    def _first_shapes(self, g: int) -> list[str]:
        """In tail mode, the shapes of decision ``g``'s only event so far: an old
        decision's are those of the projection's final ones paired with it by that
        event (the tail's come later, from later events)."""
        got = self._tail_shapes.get(g)
        if got is None:
            cpos, pairs = self.d_cpos[g], self.pairs
            got = self._tail_shapes[g] = []
            for e in self.d_shapes[g]:
                quads = pairs.get(e)
                at = -1 if quads is None else find_pair(quads, g)
                if quads is not None and at >= 0 and quads[at + 1] == cpos:
                    got.append(e)
        return got

    def _tail_track(self, g: int) -> list[str]:
        """In tail mode, decision ``g``'s shapes so far, kept apart from the
        projection's final ones: for an old decision, those its events before the
        tail gave it (a stub none; else its carrying entries' in order)."""
        got = self._tail_shapes.get(g)
        if got is None:
            got = self._tail_shapes[g] = []
            for c in self.d_carry.get(g, ()):
                got.extend(e for e in c[11] if e not in got)
        return got

    def _shapes_of(self, g: int) -> Sequence[str]:
        """Decision ``g``'s shapes so far."""
        got = self._tail_shapes.get(g)
        return self.d_shapes[g] if got is None else got

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
            None if epoch == ZERO_TIME else epoch,
            [],
        )

    def _append_decision(self, did: str, fields: Rec) -> int:
        g = len(self.d_exist)
        if self._tail_from is not None:
            p = self.shared
            assert p is not None
            if g >= len(p.dec_id) or p.dec_id[g] != did:
                raise ValueError("the projection's decisions are not the log's")
            self._tail_shapes[g] = []
            self.d_in.append(-1)
            self.d_out.append(-1)
            return g
        mirror = self._mirror
        if mirror is not None and g < len(mirror.dec_id) and mirror.dec_id[g] == did:
            did = mirror.dec_id[g]  # one string for both (~70 MB at 1M)
        index, ids, shapes = self.owned()
        index[did] = g
        ids.append(did)
        recs = self._recs
        if recs is not None:
            recs.append(fields)
        else:
            for name, value in zip(FIELD_COLUMNS, fields, strict=True):
                getattr(self, name).append(value)
        shapes.append([])
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
            None if epoch == ZERO_TIME else epoch,
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

    def _new_stub(self, did: str, pos: int, epoch: int) -> int:
        g = self._append_decision(did, STUB_REC)
        self.d_exist.append(epoch)
        self.d_stable.append(epoch)
        self.d_ctime.append(epoch)
        self.d_cpos.append(~pos)
        return g

    def _more_carry(self, g: int, carry: Carry) -> None:
        entries = self.d_carry.get(g)
        if entries is None:
            entries = self.d_carry[g] = []
            if self.d_cpos[g] >= 0:
                base = self.base_carry(g)
                if self._tail_from is not None:  # shapes so far, not the final ones
                    base = (*base[:11], list(self._first_shapes(g)))
                entries.append(base)
        entries.append(carry)
        epoch = carry[1]
        if epoch < self.d_exist[g]:
            self.d_exist[g] = epoch
        if epoch > self.d_stable[g]:
            self.d_stable[g] = epoch

    def _touch(self, eid: str, epoch: int, pos: int, kind: str, name: str) -> None:
        """Record a touch that may be the first included one (a running touch
        number orders elements first touched by the same event; ``pos`` is kept
        for each number recorded, to name the event)."""
        seq = self.touch_seq
        self.touch_seq = seq + 1
        lows = self.touch.get(eid)
        if lows is None:
            self.touch[eid] = [epoch, seq, self._intern(kind), self._intern(name)]
        elif epoch < lows[-4]:
            lows.extend((epoch, seq, self._intern(kind), self._intern(name)))
        else:
            return
        self.touch_pos[seq] = pos

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
            # One string per element, not one per decoded line (~90 MB at 1M).
            shapes = [intern(e, e) for e in shapes]
            if self._tail_from is not None:
                self._tail_shapes[g] = list(shapes)
            else:
                self.owned()[2][g] = shapes  # never changed in place from here on
            for eid in shapes:
                lows = touch.get(eid)
                if lows is None or epoch < lows[-4]:
                    self._touch(eid, epoch, pos, "", "")
                quads = pairs.get(eid)
                if quads is None:
                    quads = pairs[eid] = new_array()
                quads.extend((g, pos, epoch, 1 if (legacy or eid in tset) else 0))
            return
        mine = carry[11]
        track = None if self._tail_from is None else self._tail_track(g)
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
                quads = pairs[eid] = new_array()
            at = find_pair(quads, g) if eid in self._shapes_of(g) else -1
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
        if added and track is not None:
            track.extend(added)
        elif added:
            self.owned()[2][g] = [*self.d_shapes[g], *added]

    def _supersedes(self, g: int, sups: list[str], pos: int, epoch: int) -> None:
        for seq, prev_id in enumerate(sups):
            if not prev_id:
                continue
            p = self._find(prev_id)
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
        self.prefmax, self.sufmin, late = _order_columns(self.d_exist, self.d_stable)
        self.exceptions = sorted(set(late) | set(self.d_carry))
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

    def mark_fresh(self) -> None:
        """The derived tables are current (a loaded index): from now on only the
        elements a live append touches are recomputed."""
        self._dirty = set()
        self._stale = False

    def use_mirror(self, mirror: Projection) -> None:
        """Before the first :meth:`add`: take equal ids and fields from ``mirror``
        (the projection of the same log) instead of keeping them twice."""
        self._mirror = mirror
        self._recs = PackedRecs(mirror)

    def finish(self, projection: Projection | None = None) -> Self:
        """Compute the derived tables; share the projection's lists when equal."""
        if projection is not None and self._same_as(projection):
            self._recs = None
            self.share(projection)
        self._mirror = None
        self._dirty = None
        self._stale = True
        self.refresh()
        return self

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


def find_pair(quads: array[int], g: int) -> int:
    """Offset of decision ``g``'s quad in an element's pairs, or -1."""
    for i in range(0, len(quads), 4):
        if quads[i] == g:
            return i
    return -1
