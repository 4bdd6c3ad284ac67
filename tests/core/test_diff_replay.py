"""``diff`` from the engine's line columns equals two as-of replays of decoded events.

``diff_obj`` replays both moments from the shard lines (each parsed straight into the
dict the replay applies, Go's reading of an odd line taken from the scan), in one
batch per moment. The reference here takes the long way the spec describes: every
line decoded into an ``Event`` (``engine.shards``), the events recorded by each
moment kept and sorted (``events_as_of``), each applied on its own
(``Projection.apply_all``), and the attribution rules restated over those same
events. On
generated stores with back-dated, duplicated, bent (non-canonical but hash-valid)
and broken lines, every section must be the same bytes.
"""

from __future__ import annotations

from datetime import datetime

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from line_cases import EDITS
from test_plain_line import _regated
from test_replay_properties import Chooser, Generated, stores, temp_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import rfc3339_epoch, rfc3339_seconds
from kgai_tui.core.reads.as_of import events_as_of
from kgai_tui.core.reads.diff import (
    _END_OF_TIME,
    SECTIONS,
    diff_obj,
    diff_projections,
)
from kgai_tui.core.reads.diff_attrib import Attribution, LinkKey, prop_key
from kgai_tui.core.reads.kg import history_order
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.shards import ShardRead
from kgai_tui.core.wire.codec import event_obj
from kgai_tui.core.wire.model import Event


def _attribution(events: list[Event]) -> Attribution:
    """The rules of ``diff_attrib``'s docstring, restated over decoded events."""
    why, links, seen = Attribution(), set[LinkKey](), set[str]()

    def touch(eid: str, ev: Event) -> None:
        if eid:
            why.created.setdefault(eid, event_obj(ev))

    for ev in events:
        if ev.hash in seen or ev.decision is None:
            continue
        seen.add(ev.hash)
        for m in ev.decision.mutations or ():
            key = (m.from_id, m.link_kind, m.to_id)
            if m.op in ("upsert_element", "set_prop") and m.element_id:
                touch(m.element_id, ev)
                keys = [k for k, _ in m.props] if m.op == "upsert_element" else [m.key]
                for k in keys:
                    why.prop_set[(m.element_id, prop_key(k))] = event_obj(ev)
            elif m.op == "add_link" and m.from_id and m.to_id:
                touch(m.from_id, ev)
                touch(m.to_id, ev)
                if key not in links:
                    links.add(key)
                    why.link_added[key] = event_obj(ev)
                    why.link_retired.pop(key, None)
            elif m.op == "retire_link" and key in links:
                links.discard(key)
                why.link_retired[key] = event_obj(ev)
                why.link_added.pop(key, None)
        for eid in ev.decision.shapes:
            touch(eid, ev)
    return why


def _reference(
    shards: list[ShardRead], start: datetime | None, end: datetime | None
) -> dict[str, object]:
    before = Projection()
    if start is not None:
        before.apply_all(events_as_of(shards, start))
    events = events_as_of(shards, end or _END_OF_TIME)
    after = Projection()
    after.apply_all(events)
    return dict(diff_projections(before, after, _attribution(events)))


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
    new_edges: dict[int, list[int]] = {}
    for s in range(len(after.dec_id)):
        for o in after.dec_supersedes[s]:
            if (after.dec_id[s], after.dec_id[o]) not in held:
                new_edges.setdefault(o, []).append(s)
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
            got = diff_obj(engine, start, end)
            want = _reference(shards, start, end)
            assert orjson.dumps({k: got[k] for k in SECTIONS}) == orjson.dumps(want)
            recorded, superseded = _decision_ids(shards, start, end)
            assert [r["id"] for r in got["decisions_recorded"]] == recorded
            assert [
                (r["id"], [b["id"] for b in r["by"]])
                for r in got["decisions_superseded"]
            ] == superseded


_STAMP_TEXT = st.one_of(
    st.builds(
        lambda y, mo, d, h, mi, s: (
            f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z"
        ),
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 61),
    ),
    st.sampled_from(
        [
            "2026-01-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2024-02-29T23:59:59Z",
            "2026-01-01T00:00:00z",
            "2026-01-01T00:00:00.5Z",
            "2026-01-01T00:00:00+02:00",
            "2026-01-01 00:00:00Z",
            "2026-01-01T0٠:00:00Z",  # an Arabic-Indic digit
            "٢٠٢٦-01-01T00:00:00Z",
            "",
        ]
    ),
    st.text(max_size=24),
)


@settings(max_examples=400, deadline=None)
@given(text=_STAMP_TEXT)
def test_the_quick_time_read_answers_as_the_full_one(text: str) -> None:
    """``diff`` reads every line's time with ``rfc3339_seconds``; as-of's reference
    reads it with ``rfc3339_epoch``: one answer for every string."""
    assert rfc3339_seconds(text) == rfc3339_epoch(text)
