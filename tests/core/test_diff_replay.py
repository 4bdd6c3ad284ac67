"""``diff`` from the time index equals two as-of replays of decoded events.

``diff_obj`` reads both moments and the decision behind each change from the
store's time index, whole or through the model. The reference takes the long way
the spec describes: every line decoded into an ``Event`` (``engine.shards``), the
events recorded by each moment kept and sorted (``events_as_of``), each applied on
its own (``Projection.apply_all``), and the attribution rules restated as a walk
over those same events. On generated stores with back-dated, duplicated, bent
(non-canonical but hash-valid) and broken lines, every section must be the same
bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from line_cases import EDITS
from test_plain_line import _regated
from test_replay_properties import Chooser, Generated, stores, temp_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import plain
from kgai_tui.core.gosem.gotext import rfc3339_epoch
from kgai_tui.core.reads.as_of import events_as_of
from kgai_tui.core.reads.diff import (
    _END_OF_TIME,
    SECTIONS,
    DecisionChanges,
    diff_obj,
    diff_projections,
)
from kgai_tui.core.reads.diff_attrib import LinkKey, because
from kgai_tui.core.reads.kg import history_order
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.shards import ShardRead
from kgai_tui.core.wire.model import Event
from kgai_tui.core.wire.props import set_prop

_ZERO_TIME = -62135596800  # Go's time.Time{}: shown as no time


class _Walked:
    """The causes by the rules of ``diff_attrib``'s docstring, restated as a walk
    over decoded events (each event named by its number in ``events``)."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.first: dict[str, int] = {}
        self.props: dict[tuple[str, str], int] = {}
        self.added: dict[LinkKey, int] = {}
        self.retired: dict[LinkKey, int] = {}
        links, seen = set[LinkKey](), set[str]()
        for n, ev in enumerate(events):
            if ev.hash in seen or ev.decision is None:
                continue
            seen.add(ev.hash)
            for m in ev.decision.mutations or ():
                key = (m.from_id, m.link_kind, m.to_id)
                if m.op in ("upsert_element", "set_prop") and m.element_id:
                    self._touch(m.element_id, n)
                    keys = (
                        [k for k, _ in m.props] if m.op == "upsert_element" else [m.key]
                    )
                    for k in keys:
                        self.props[(m.element_id, _prop_key(k))] = n
                elif m.op == "add_link" and m.from_id and m.to_id:
                    self._touch(m.from_id, n)
                    self._touch(m.to_id, n)
                    if key not in links:
                        links.add(key)
                        self.added[key] = n
                        self.retired.pop(key, None)
                elif m.op == "retire_link" and key in links:
                    links.discard(key)
                    self.retired[key] = n
                    self.added.pop(key, None)
            for eid in ev.decision.shapes:
                self._touch(eid, n)

    def _touch(self, eid: str, n: int) -> None:
        if eid:
            self.first.setdefault(eid, n)

    def created(self, eid: str) -> int | None:
        return self.first.get(eid)

    def prop_set(self, eid: str, key: str) -> int | None:
        return self.props.get((eid, key))

    def link_added(self, key: LinkKey) -> int | None:
        return self.added.get(key)

    def link_retired(self, key: LinkKey) -> int | None:
        return self.retired.get(key)

    def because(self, events: Iterable[int]) -> dict[int, dict[str, Any]]:
        out = {}
        for n in events:
            ev = self.events[n]
            d = ev.decision
            assert d is not None
            stamp = rfc3339_epoch(ev.recorded_at)
            when = None if stamp == _ZERO_TIME else stamp
            out[n] = because(d.id, d.title, d.author, when, d.rationale)
        return out


def _prop_key(key: str) -> str:
    """The key as the props blob stores it (trimmed, ``=`` and line breaks replaced)."""
    return set_prop("", key, "").split("=", 1)[0]


def _reference(
    shards: list[ShardRead], start: datetime | None, end: datetime | None
) -> dict[str, object]:
    before = Projection()
    if start is not None:
        before.apply_all(events_as_of(shards, start))
    events = events_as_of(shards, end or _END_OF_TIME)
    after = Projection()
    after.apply_all(events)
    recorded, superseded = _changes(before, after)
    edges = [(o, s) for o, by in superseded.items() for s in by]
    changes = DecisionChanges(recorded, [o for o, _ in edges], [s for _, s in edges])
    return plain(diff_projections(before, after, _Walked(events), changes))


def _changes(
    before: Projection, after: Projection
) -> tuple[list[int], dict[int, list[int]]]:
    """The decision sections' rows by their definitions, one decision at a time:
    recorded = real at TO and not at FROM; superseded = each decision with the
    superseders of its (superseder, superseded) edges at TO that FROM did not hold."""
    real_then = {
        before.dec_id[i] for i in range(len(before.dec_id)) if before.dec_hash[i]
    }
    recorded = [
        i
        for i in range(len(after.dec_id))
        if after.dec_hash[i] and after.dec_id[i] not in real_then
    ]
    held = {
        (before.dec_id[s], before.dec_id[o])
        for s in range(len(before.dec_id))
        for o in before.dec_supersedes[s]
    }
    superseded: dict[int, list[int]] = {}
    for s in range(len(after.dec_id)):
        for o in after.dec_supersedes[s]:
            if (after.dec_id[s], after.dec_id[o]) not in held:
                superseded.setdefault(o, []).append(s)
    return recorded, superseded


def _decision_ids(
    shards: list[ShardRead], start: datetime | None, end: datetime | None
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The two decision sections by their definitions, one decision at a time, as
    ids: recorded = real at TO and not at FROM; superseded = each decision with the
    superseders of its (superseder, superseded) edges at TO that FROM did not hold;
    all in history order."""
    before = Projection()
    if start is not None:
        before.apply_all(events_as_of(shards, start))
    after = Projection()
    after.apply_all(events_as_of(shards, end or _END_OF_TIME))
    recorded, new_edges = _changes(before, after)
    ids = after.dec_id
    return [ids[i] for i in history_order(after, recorded)], [
        (ids[o], [ids[s] for s in history_order(after, new_edges[o])])
        for o in history_order(after, list(new_edges))
    ]


#: Keys Go matches case-insensitively: the line keeps its hash (the hash is over Go's
#: reading), but a plain JSON parse of its bytes would miss the field.
CASED: list[tuple[bytes, bytes]] = [
    (b'"recorded_at":', b'"Recorded_At":'),
    (b'"mutations":', b'"MUTATIONS":'),
    (b'"shapes":', b'"Shapes":'),
    (b'"element_id":', b'"Element_ID":'),
]


def _bent(files: dict[str, bytes], c: Chooser) -> dict[str, bytes]:
    """Some lines bent (hash-valid, not canonical), broken, or copied to another shard."""
    names = sorted(files)
    out: dict[str, list[bytes]] = {name: [] for name in names}
    for name in names:
        for raw in files[name].splitlines():
            roll = c.integer(0, 99)
            if roll < 8:
                old, new = c.choice(EDITS)
                if old in raw:
                    raw = _regated(raw.replace(old, new, 1))
            elif roll < 14:
                raw = raw.replace(*c.choice(CASED))
            elif roll < 17:
                raw = raw.replace(b'"title":"', b'"title":"x', 1)  # the hash fails
            elif roll < 21:
                out[c.choice(names)].append(raw)  # the same event in two shards
            out[name].append(raw)
    return {
        name: b"".join(line + b"\n" for line in lines) for name, lines in out.items()
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(gen=stores(), data=st.data())
def test_diff_equals_two_replays_of_decoded_events(
    gen: Generated, data: st.DataObject
) -> None:
    c = Chooser(draw=data.draw)
    files = _bent(gen.files(), c)
    moments = sorted({m for m in gen.moments.values() if m is not None})
    cuts: list[datetime | None] = [None, *moments]
    with temp_store(files) as root:
        engine = open_engine(root)
        shards = engine.shards
        for _ in range(3):
            start = c.choice(cuts)
            later = [m for m in cuts[1:] if start is None or m >= start]
            end = c.choice([None, *later])
            got = plain(diff_obj(engine.time_index, start, end))
            want = _reference(shards, start, end)
            assert orjson.dumps({k: got[k] for k in SECTIONS}) == orjson.dumps(want)
            recorded, superseded = _decision_ids(shards, start, end)
            assert [r["id"] for r in got["decisions_recorded"]] == recorded
            assert [
                (r["id"], [b["id"] for b in r["by"]])
                for r in got["decisions_superseded"]
            ] == superseded
