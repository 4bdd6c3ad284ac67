"""What a command-line read's update leaves until after its answer
(:mod:`kgai_tui.core.model.tidy`): the recall element file written again and the
recall segment of the decisions past the last one.

The store here crosses every line in one append: 4,200 new elements (past the
4,096 a delta holds in the model's meta, and past a quarter of the elements) and
520 decisions (past the 512 that get a segment). Recall reads the model before
the tidy and after it, and both times equals a whole replay; the tidy leaves the
files in the shape an in-line update would have written them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, set_prop, upsert, write_store
from test_model import RECALLS, append_files, state
from test_replay_properties import lines

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model import tidy
from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.model.recall_store import DELTA_FILE_SHARE, SEGMENT_EVERY
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.reads.context import context_obj

#: Queries about the wide decision's services and the small decisions.
_QUERIES = [
    *RECALLS,
    ([], "tier three service", 15),
    ([], "S4100 tune", 5),
    (["src/svc/S00*"], "", 15),
]


def _store(tmp_path: Path) -> tuple[Path, Path, bytes, bytes]:
    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    w.add(
        decision("first", [upsert("feature", "F")], rationale="use x because split"),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    wide = [
        upsert("service", f"S{n:04d}", tier=str(n % 7), path=f"src/svc/S{n:04d}")
        for n in range(4200)
    ]
    w.add(decision("wide", wide), lamport=2, recorded_at="2026-01-02T00:00:00Z")
    for n in range(520):
        name = f"S{4100 + n % 100:04d}"
        w.add(
            decision(
                f"tune {name} round {n}",
                [set_prop("service", name, "tier", f"three {n}")],
                rationale=f"billing service {name} needs tier three",
            ),
            lamport=3 + n,
            recorded_at=f"2026-01-03T00:{n // 60:02d}:{n % 60:02d}Z",
        )
    # After the big append: a few props changed again (a delta in the meta).
    for n in range(3):
        w.add(
            decision(
                f"retune S000{n}",
                [set_prop("service", f"S000{n}", "tier", "billing gold")],
            ),
            lamport=600 + n,
            recorded_at=f"2026-01-04T00:00:0{n}Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events[:1])})
    return root, cache, lines(w.events[1:-3]), lines(w.events[-3:])


def _recall(model: ModelEngine) -> dict[str, Any]:
    return read_meta(model.db, "recall")


def _same_recall(model: ModelEngine, replay: Any) -> None:
    for paths, about, limit in _QUERIES:
        got = context_obj(model.projection, paths=paths, about=about, limit=limit)
        want = context_obj(replay.projection, paths=paths, about=about, limit=limit)
        assert got == want, (paths, about)


@pytest.mark.parametrize("share", [DELTA_FILE_SHARE, 0], ids=["rewrite", "spill"])
def test_a_command_line_read_leaves_the_recall_files_until_it_has_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: int
) -> None:
    """Two background updates leave every changed element in the model's delta
    (4,203: under LATER_SLACK times its size) and 525 decisions past the last
    segment; recall through the model equals a whole replay. The tidy then
    writes the segment and spills the delta into its file; past the file's
    share (``rewrite``) it writes the element file instead, else (``spill``: the
    share set so that it never passes) the delta file stays."""
    from kgai_tui.core.model import recall_store

    monkeypatch.setattr(recall_store, "DELTA_FILE_SHARE", share)
    root, cache, rest, retune = _store(tmp_path)
    open_model(root, cache).close()
    append_files(root, {"i-one.ndjson": rest})
    handed: list[object] = []
    monkeypatch.setattr(tidy, "run_detached", lambda work: handed.append(work) or True)
    open_model(root, cache, background=True).close()
    assert len(handed) == 1
    append_files(root, {"i-one.ndjson": retune})
    replay = open_engine(root)

    model = open_model(root, cache, background=True)
    assert model.how == "append" and len(handed) == 2
    before = _recall(model)
    assert "delta_file" not in before  # the changed elements in the model's delta
    assert len(read_meta(model.db, "recall_delta")[1]) == 4200
    decisions = len(model.projection.dec_id)
    covered = sum(int(s["count"]) for s in before["segments"])
    assert decisions - covered >= SEGMENT_EVERY  # no segment written in line
    _same_recall(model, replay)
    model.close()

    path = model_path(root, cache)
    assert tidy.tidy(path)
    model = open_model(root, cache)
    assert model.how == "warm"
    after = _recall(model)
    assert sum(int(s["count"]) for s in after["segments"]) == decisions
    assert not any(read_meta(model.db, "recall_delta"))  # spilled or written
    if share:
        assert "delta_file" not in after
        assert after["elements"]["file"] != before["elements"]["file"]
    else:
        assert int(after["delta_file"]["size"]) == 4200
        assert after["elements"]["file"] == before["elements"]["file"]
    assert state(model.projection) == state(replay.projection)
    _same_recall(model, replay)
    files = {p.name for p in path.parent.joinpath(path.name + ".recall").iterdir()}
    listed = [after["elements"], *after["segments"], after.get("delta_file")]
    assert {e["file"] for e in listed if e} <= files
    model.close()
    assert not tidy.tidy(path)  # nothing left to do


def test_the_tidy_writes_what_an_update_in_line_writes(tmp_path: Path) -> None:
    """The recall files a tidy leaves answer as those of an update that did the
    work in its own transaction (the explorer's, or a write's)."""
    root, cache, rest, retune = _store(tmp_path)
    open_model(root, cache).close()
    append_files(root, {"i-one.ndjson": rest})
    open_model(root, cache).close()  # not background: everything in line
    append_files(root, {"i-one.ndjson": retune})
    inline = open_model(root, cache)
    assert inline.how == "append"
    recall = _recall(inline)
    assert "delta_file" not in recall
    decisions = len(inline.projection.dec_id)
    assert decisions - sum(int(s["count"]) for s in recall["segments"]) < SEGMENT_EVERY
    want = [
        context_obj(inline.projection, paths=p, about=a, limit=n)
        for p, a, n in _QUERIES
    ]
    inline.close()
    assert not tidy.tidy(model_path(root, cache))

    other = tmp_path / "other"
    root2, cache2, rest2, retune2 = _store(other)
    open_model(root2, cache2).close()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tidy, "run_detached", lambda work: True)
        for part in (rest2, retune2):
            append_files(root2, {"i-one.ndjson": part})
            open_model(root2, cache2, background=True).close()
    assert tidy.tidy(model_path(root2, cache2))
    model = open_model(root2, cache2)
    got = [
        context_obj(model.projection, paths=p, about=a, limit=n) for p, a, n in _QUERIES
    ]
    model.close()
    assert got == want


def test_a_real_read_answers_then_a_detached_process_tidies(tmp_path: Path) -> None:
    """Whole processes: ``status`` after the big append answers; a detached
    process then writes the element file and the segment and folds the graph
    log (within seconds); the model it leaves is sealed (the next read is warm),
    and ``context`` through it prints what the whole store prints."""
    import os
    import subprocess
    import sys
    import time

    root, cache, rest, _ = _store(tmp_path)
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache)}

    def cli(*args: str, **extra: str) -> bytes:
        argv = [sys.executable, "-m", "kgai_tui", *args, "--json", "--store", str(root)]
        done = subprocess.run(
            argv, env={**env, **extra}, capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("status")
    append_files(root, {"i-one.ndjson": rest})
    assert b'"elements": 4201' in cli("status")
    path = model_path(root, cache)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        model = open_model(root, cache)
        left = "delta_file" in _recall(model) or tidy.tidy_due(model.db)
        model.close()
        if not left:
            break
        time.sleep(0.1)
    assert not left
    time.sleep(0.2)  # the seal is written as the tidy's connection closes
    model = open_model(root, cache)
    assert model.how == "warm"
    model.close()
    assert not tidy.tidy(path)
    for about in ("tier three service", "billing", "S4100 tune"):
        assert cli("context", "--about", about) == cli(
            "context", "--about", about, KGAI_TUI_READ_MODEL="off"
        )


def test_a_delta_past_its_size_alone_calls_for_a_tidy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wide decision alone (no segment due, the graph log's floor raised out
    of reach): its 4,200 elements in the model's delta are enough for a tidy,
    which spills them and, past the file's share, writes the element file."""
    from kgai_tui.core.model import graph_log

    monkeypatch.setattr(graph_log, "_LOG_FLOOR", 10**9)
    root, cache, rest, _ = _store(tmp_path)
    open_model(root, cache).close()
    append_files(root, {"i-one.ndjson": rest.split(b"\n", 1)[0] + b"\n"})
    handed: list[object] = []
    monkeypatch.setattr(tidy, "run_detached", lambda work: handed.append(work) or True)
    open_model(root, cache, background=True).close()
    assert len(handed) == 1
    path = model_path(root, cache)
    assert tidy.tidy(path)
    model = open_model(root, cache)
    assert model.how == "warm"
    assert not any(read_meta(model.db, "recall_delta"))
    _same_recall(model, open_engine(root))
    model.close()


def test_a_tidy_overtaken_by_an_update_is_made_again_under_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tidy makes its work from a snapshot without the lock; an update that
    lands before it takes the lock makes that work stale: it is not written,
    but made again holding the lock, and the model then answers as a whole
    replay with nothing left to do."""
    root, cache, rest, retune = _store(tmp_path)
    open_model(root, cache).close()
    append_files(root, {"i-one.ndjson": rest})
    monkeypatch.setattr(tidy, "run_detached", lambda work: True)
    open_model(root, cache, background=True).close()
    path = model_path(root, cache)
    made = tidy._plan

    def then_an_update(at: Path) -> object:
        plan = made(at)
        append_files(root, {"i-one.ndjson": retune})
        open_model(root, cache, background=True).close()
        return plan

    from kgai_tui.core.model.seal import model_lock

    with model_lock(path):  # the work is made without the lock
        assert made(path) is not None
    plans: list[object] = []

    def once_then_as_made(at: Path) -> object:
        plans.append(at)
        return then_an_update(at) if len(plans) == 1 else made(at)

    monkeypatch.setattr(tidy, "_plan", once_then_as_made)
    assert tidy.tidy(path)
    assert len(plans) == 2  # the stale work made again, under the lock
    model = open_model(root, cache)
    assert model.how == "warm"
    replay = open_engine(root)
    assert state(model.projection) == state(replay.projection)
    _same_recall(model, replay)
    assert not tidy.tidy_due(model.db)
    model.close()


def test_decisions_left_past_the_segments_get_one_at_four_times_the_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Background updates whose tidies never run leave the decisions past the
    last segment to be scored one by one, until there are LATER_SLACK times
    SEGMENT_EVERY of them: then the update writes their segment itself."""
    from kgai_tui.core.model.recall_store import LATER_SLACK

    root, cache = tmp_path / "store", tmp_path / "cache"
    w = ShardWriter("i-one")
    for n in range(SEGMENT_EVERY * LATER_SLACK + 1):
        w.add(
            decision(f"step {n}", [set_prop("feature", f"F{n % 50}", "k", str(n))]),
            lamport=n + 1,
            recorded_at=f"2026-02-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
        )
    write_store(root, {"i-one.ndjson": lines(w.events[:1])})
    open_model(root, cache).close()
    monkeypatch.setattr(tidy, "run_detached", lambda work: True)
    uncovered = []
    for lo, hi in ((1, 1 + SEGMENT_EVERY), (1 + SEGMENT_EVERY, len(w.events))):
        append_files(root, {"i-one.ndjson": lines(w.events[lo:hi])})
        model = open_model(root, cache, background=True)
        covered = sum(int(s["count"]) for s in _recall(model)["segments"])
        uncovered.append(len(model.projection.dec_id) - covered)
        model.close()
    assert uncovered == [SEGMENT_EVERY, 0]
    model = open_model(root, cache)
    _same_recall(model, open_engine(root))
    model.close()
