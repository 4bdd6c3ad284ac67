"""A store read through its model finds events by hash and lists doctor's problems.

The explorer stays on the model (issue 17): a decision's full record reads its
event back from the shard (``ModelEngine.event_for``), and the doctor list comes
from the model's shard states (broken chains) and a search of the shards (the
place of an unknown op). Each must equal what the whole store answers, also when a
shard holds forged copies of a line, odd spacing, or lines appended later.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from builders import ShardWriter, decision, upsert, write_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.reads.health import doctor_problems, problem_count
from kgai_tui.core.wire.codec import compute_hash, event_obj, marshal_event
from kgai_tui.core.wire.model import Mutation


def _store(root: Path) -> dict[str, bytes]:
    a, b = ShardWriter("ia"), ShardWriter("ib")
    a.add(
        decision("one", [upsert("feature", "x")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    b.add(
        decision("two", [upsert("feature", "y")]),
        lamport=2,
        recorded_at="2026-01-02T00:00:00Z",
    )
    odd = decision("odd op", [Mutation(op="rename_everything", element_id="el_x")])
    a.add(odd, lamport=3, recorded_at="2026-01-03T00:00:00Z")
    # A chain break: b's second event names no parent.
    ev = b.add(
        decision("three", [upsert("feature", "z")]),
        lamport=4,
        recorded_at="2026-01-04T00:00:00Z",
    )
    broken = replace(ev, parents=None)

    b.events[-1] = replace(broken, hash=compute_hash(replace(broken, hash="")))
    first = a.events[0]
    # A forged copy of a's first line in b's shard: the same claimed hash, other
    # bytes (its title changed), so it fails the hash gate.
    forged = marshal_event(
        replace(first, decision=replace(first.decision, title="forged"))
    )
    files = {
        "ia.ndjson": a.to_bytes(),
        # Leading spaces and a forged line: the scan trims the one, refuses the other.
        "ib.ndjson": forged + b"\n   " + b.to_bytes(),
    }
    write_store(root, files)
    return files


def _model(root: Path, cache: Path) -> ModelEngine:
    model = open_model(root, cache)
    assert isinstance(model, ModelEngine)
    return model


def test_events_and_problems_equal_the_whole_store(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    _store(root)
    open_model(root, cache).close()  # built
    model = _model(root, cache)
    assert model.how == "warm"
    whole = open_engine(root)
    try:
        p = whole.projection
        for idx, h in enumerate(p.dec_hash):
            if not h:
                continue
            want = whole.event_for(h)
            got = model.event_for(h, p.dec_install[idx])
            assert want is not None and got is not None
            assert event_obj(got) == event_obj(want)
            # Without the writer hint every shard is searched: the same event.
            assert event_obj(model.event_for(h) or want) == event_obj(want)
        assert model.event_for("sha256:" + "0" * 64) is None
        doctor = doctor_problems(whole)
        assert any("broken hash-chain" in line for line in doctor)
        assert any("unknown mutation op" in line for line in doctor)
        assert doctor_problems(model) == doctor
        assert problem_count(model) == len(doctor)  # type: ignore[arg-type]
    finally:
        model.close()


def test_breaks_of_an_appended_tail_keep_their_lines(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    files = _store(root)
    open_model(root, cache).close()
    # Appended later: an event of a new chain in a's shard (no parent): a break
    # at the join, its line numbered after the lines already there.
    tail = ShardWriter("ia")
    tail.add(
        decision("four", [upsert("feature", "w")]),
        lamport=9,
        recorded_at="2026-01-05T00:00:00Z",
    )
    with open(root / "log" / "ia.ndjson", "ab") as fh:
        fh.write(tail.to_bytes())
    model = _model(root, cache)
    assert model.how == "append"
    whole = open_engine(root)
    try:
        lines = files["ia.ndjson"].count(b"\n")
        assert ("ia.ndjson", lines + 1, 9) in model.chain_break_lines()
        assert model.chain_break_lines() == whole.chain_break_lines()
        assert doctor_problems(model) == doctor_problems(whole)
    finally:
        model.close()
