"""Recomputing only the touched live documents equals recomputing all of them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from search_stores import mixed_store

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.search.live import live_set, touched_by
from kgai_tui.core.store.shards import read_shard_bytes


def _engine(shards: dict[str, bytes]) -> Engine:
    return Engine.from_shards(
        [read_shard_bytes(n, b) for n, b in sorted(shards.items())]
    )


@pytest.mark.parametrize("seed", range(6))
def test_delta_equals_full_recomputation(tmp_path: Path, seed: int) -> None:
    mixed_store(tmp_path)
    full = {p.name: p.read_bytes() for p in (tmp_path / "log").iterdir()}
    rng = random.Random(seed)
    before = {}
    for name, data in full.items():
        lines = data.splitlines(keepends=True)
        before[name] = b"".join(lines[: rng.randrange(len(lines) + 1)])
    old = _engine(before)
    previous = live_set(old.projection)
    new = _engine(full)
    fresh = [
        item.decoded.event
        for shard in new.shards
        for item in shard.events
        if item.line > before[shard.name].count(b"\n")
    ]
    touched = touched_by(fresh)
    delta = live_set(new.projection, previous, touched)
    again = live_set(new.projection)
    assert delta.digest == again.digest
    assert [e.blob for e in delta.entries] == [e.blob for e in again.entries]


def test_a_stub_named_by_a_late_writer_renames_the_decisions_that_shaped_it(
    tmp_path: Path,
) -> None:
    mixed_store(tmp_path)
    full = {p.name: p.read_bytes() for p in (tmp_path / "log").iterdir()}
    before = {n: b for n, b in full.items() if not n.startswith("ilate")}
    old = _engine(before)
    new = _engine(full)
    stubs = [
        e
        for e, a in old.projection.graph.nodes(data=True)
        if a["name"] == "" and a["kind"] == ""
    ]
    assert stubs  # GhostQueue was a nameless stub before the late shard arrived
    fresh = [
        it.decoded.event
        for n in full
        if n.startswith("ilate")
        for it in read_shard_bytes(n, full[n]).events
    ]
    delta = live_set(new.projection, live_set(old.projection), touched_by(fresh))
    again = live_set(new.projection)
    assert [e.blob for e in delta.entries] == [e.blob for e in again.entries]
    assert any(
        b"GhostQueue" in e.blob and e.record.doctype == "decision"
        for e in again.entries
    )
