"""``people --as-of`` from the read model equals a fresh replay up to the cut (issue 17).

The reference is :func:`people_obj` over :func:`project_as_of` (select by recorded
time, sort canonically, replay). The model answers from its moments and decision
rows (:mod:`kgai_tui.core.model.people_at`) or says it cannot, and
:func:`people_answer` then opens the whole store and stores the moments anew.
Every property compares bytes and checks that the model really answered.
"""

from __future__ import annotations

import marshal
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
from builders import ShardWriter, decision, upsert, write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_model import append_files, scratch
from test_model_moments import (
    _at,
    _files,
    _keep,
    _moving_store,
    _stamps,
    appended_in_any_split,
    compare_every_cut,
)
from test_replay_properties import Generated, lines, stores

from kgai_tui.core.answers.people import people_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import format_rfc3339, rfc3339_epoch
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.reads.as_of import project_as_of
from kgai_tui.core.reads.people import people_obj, people_of_totals
from kgai_tui.core.wire.ids import element_id
from kgai_tui.demo import DEMO_STORE

SETTINGS = settings(max_examples=20, deadline=None)


def _reference(root: Path, stamp: int) -> bytes:
    cut = _at(stamp)
    then = project_as_of(open_engine(root).shards, cut)
    return orjson.dumps(people_obj(then, cut))


def _from_model(model: ModelEngine, stamp: int) -> bytes | None:
    parts = model.people_at_parts(stamp)
    if parts is None:
        return None
    obj = people_of_totals(*parts)
    obj["as_of"] = format_rfc3339(_at(stamp))
    return orjson.dumps(obj)


def _changing(root: Path, cache: Path) -> int:
    db = sqlite3.connect(model_path(root, cache))
    try:
        return int(db.execute("SELECT count(*) FROM at_dec").fetchone()[0])
    finally:
        db.close()


@SETTINGS
@given(gen=stores())
def test_people_at_every_cut_equals_a_replay(gen: Generated) -> None:
    with scratch() as (root, cache):
        write_store(root, gen.files())
        saved = _keep(root, cache)
        answered = compare_every_cut(root, cache, _from_model, _reference)
        if saved and _changing(root, cache) == 0:
            # No decision changes with time: the model settles every cut.
            assert answered == len(_stamps(root))


@SETTINGS
@given(gen=stores(), data=st.data())
def test_people_at_stays_exact_across_appends_in_any_split(
    gen: Generated, data: st.DataObject
) -> None:
    for root, cache, _ in appended_in_any_split(gen, data):
        compare_every_cut(root, cache, _from_model, _reference)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 40),
    parts=st.lists(st.integers(1, 6), min_size=1, max_size=6),
)
def test_people_at_after_appends_recorded_in_time_order(
    seed: int, n: int, parts: list[int]
) -> None:
    """A team recording day by day (a decision asserted twice, placeholders filled
    later): every answer the model gives after each append equals a replay, and
    the answer through :func:`people_answer` always does."""
    events = _moving_store(seed, n)
    first = max(1, n - sum(parts))
    with scratch() as (root, cache):
        write_store(root, _files(events[:first]))
        assert _keep(root, cache)
        at = first
        for size in parts:
            chunk = events[at : at + size]
            if not chunk:
                break
            at += size
            append_files(root, _files(chunk))
            model = open_model(root, cache)
            assert model.how == "append"
            model.close()
            compare_every_cut(root, cache, _from_model, _reference)
        rng = random.Random(seed)
        stamps = _stamps(root)
        for stamp in rng.sample(stamps, min(4, len(stamps))):
            answer = people_answer(
                lambda: open_model(root, cache),  # type: ignore[arg-type, return-value]
                format_rfc3339(_at(stamp)),
            )
            assert orjson.dumps(answer.obj) == _reference(root, stamp), stamp


def test_demo_store_people_at_every_moment(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _keep(DEMO_STORE, cache)
    model = open_model(DEMO_STORE, cache)
    answered = 0
    for stamp in _stamps(DEMO_STORE):
        got = _from_model(model, stamp)
        if got is not None:
            answered += 1
            assert got == _reference(DEMO_STORE, stamp), stamp
    model.close()
    # The demo holds a decision whose fields change with time: exactly the cuts in
    # its window ([first step, stable)) are left to the whole store.
    windows = _windows(DEMO_STORE, cache)
    assert windows
    inside = [t for t in _stamps(DEMO_STORE) if any(a <= t < b for a, b in windows)]
    assert answered == len(_stamps(DEMO_STORE)) - len(inside)


def _windows(root: Path, cache: Path) -> list[tuple[int, int]]:
    db = sqlite3.connect(model_path(root, cache))
    try:
        return [
            (int(marshal.loads(steps)[0][0]), int(stable))
            for stable, steps in db.execute("SELECT stable, steps FROM at_dec")
        ]
    finally:
        db.close()


def _cli(args: list[str], cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KGAI_TUI_CACHE_DIR": str(cache), **env},
        check=False,
        timeout=120,
    )


def test_cli_people_as_of_answers_from_the_model_after_the_first(
    tmp_path: Path,
) -> None:
    """The first ``people --as-of`` opens the whole store and keeps the moments;
    from then on the model answers, with the same bytes as the model turned off."""
    cache = tmp_path / "cache"
    for when in ("2026-02-01", "2026-03-20T12:00:00Z", "2031-01-01"):
        args = ["people", "--as-of", when, "--store", str(DEMO_STORE), "--json"]
        off = _cli(args, tmp_path / "off", KGAI_TUI_READ_MODEL="off")
        assert off.returncode == 0, off.stderr
        first = _cli(args, cache)
        assert first.returncode == 0, first.stderr
        assert first.stdout == off.stdout
    # The moments the first call kept settle these cuts: the model answers them.
    model = open_model(DEMO_STORE, cache)
    for when in (
        "2026-02-01T23:59:59Z",
        "2026-03-20T12:00:00Z",
        "2031-01-01T23:59:59Z",
    ):
        stamp = rfc3339_epoch(when)
        assert stamp is not None
        assert model.people_at_parts(stamp) is not None, when
    model.close()


def test_a_decision_asserted_again_with_more_shapes_and_supersedes(
    tmp_path: Path,
) -> None:
    """An append re-asserts a decision (same id) that now also shapes B and
    supersedes X: before that append it shaped A alone and X stood. The model
    must not count the later shapes or supersession at the cuts before it."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one", actor="bob")
    a, b = upsert("svc", "A"), upsert("svc", "B")
    x = decision("x stands", [b], author="carol")
    d = decision("d", [a], shapes=[element_id("svc", "A")])
    again = decision(
        "d",
        [a],
        shapes=[element_id("svc", "A"), element_id("svc", "B")],
        supersedes=[x.id],
    )
    assert again.id == d.id
    w.add(x, lamport=1, recorded_at="2026-01-01T00:00:00Z")
    w.add(d, lamport=2, recorded_at="2026-01-02T00:00:00Z")
    write_store(root, {"i-one.ndjson": lines(w.events)})
    assert _keep(root, cache)
    w.add(again, lamport=3, recorded_at="2026-01-05T00:00:00Z")
    append_files(root, {"i-one.ndjson": lines(w.events[2:])})
    model = open_model(root, cache)
    assert model.how == "append"
    for stamp in _stamps(root):
        got = _from_model(model, stamp)
        if got is not None:
            assert got == _reference(root, stamp), stamp
    # From the re-assertion on, the model answers again.
    after = rfc3339_epoch("2026-01-06T00:00:00Z")
    assert after is not None
    assert _from_model(model, after) == _reference(root, after)
    model.close()


def test_a_placeholder_an_append_creates_with_supersedes_of_its_own(
    tmp_path: Path,
) -> None:
    """Found by the split property: C supersedes B before B's own event applies,
    and B's event (refused as a decision) still brings B's supersedes of A. When
    an append creates B so, no cut before it may count A as superseded: the model
    must leave those cuts to the whole store, as its whole-store moments do.
    Every split of the two shards into a written prefix and an append."""
    source = Path(__file__).parent.parent / "fixtures" / "placeholder_supersedes"
    shards = {
        p.name: p.read_bytes().splitlines(keepends=True)
        for p in sorted((source / "log").iterdir())
    }
    names = sorted(shards)
    for a in range(1, len(shards[names[0]]) + 1):
        for b in range(1, len(shards[names[1]]) + 1):
            root, cache = tmp_path / f"s{a}-{b}", tmp_path / f"c{a}-{b}"
            cut = {names[0]: a, names[1]: b}
            write_store(root, {n: b"".join(shards[n][: cut[n]]) for n in names})
            _keep(root, cache)
            append_files(root, {n: b"".join(shards[n][cut[n] :]) for n in names})
            compare_every_cut(root, cache, _from_model, _reference)
