"""``doctor`` through the read model: every byte of the log is verified again, and
the model's counts are reported only when it holds exactly the lines read.

The oracle is the replay doctor always made (every shard read and verified, no
cache). Through the model the answer must be those bytes, with no replay, on
random stores (hostile or not), after appends the model was extended with, and
beside entries of ``log/`` that are not files. When a shard was rewritten in the
middle and then appended to, the model (extended, trusting its fingerprint) no
longer holds the log: doctor must notice it from the line digests and replay.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store
from test_time_index import _random_store
from test_time_index_tail import _append, _cut_store

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.kg import doctor_answer
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.reads.health import doctor_obj
from kgai_tui.core.wire.codec import compute_hash, marshal_event

BASE = 1_767_225_600  # 2026-01-01T00:00:00Z


def _replayed(root: Path) -> bytes:
    """The oracle: doctor over a replay of every byte, no cache."""
    return orjson.dumps(doctor_obj(open_engine(root)))


def _model(root: Path) -> ModelEngine:
    opened = open_model(root)  # built, or extended with what was appended
    assert isinstance(opened, ModelEngine), opened.how
    return opened


def _no_replay() -> Engine:
    raise AssertionError("doctor replayed the log, the model held it")


def _through_model(root: Path) -> bytes:
    return encode(doctor_answer(lambda: _model(root), _no_replay))


def _json(encoded: str | bytes) -> bytes:
    return orjson.dumps(orjson.loads(encoded))


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_doctor_through_the_model_equals_the_replay(
    tmp_path: Path, seed: int, hostile: bool
) -> None:
    _random_store(tmp_path, seed, 90, hostile=hostile)
    root = tmp_path / f"r{seed}"
    if seed % 2:  # an entry of log/ that is not a file: refused, and listed
        os.symlink(root / "log", root / "log" / "zz-link.ndjson")
    open_model(root).close()
    assert _json(_through_model(root)) == _replayed(root)


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_doctor_through_an_extended_model_equals_the_replay(
    tmp_path: Path, seed: int, hostile: bool
) -> None:
    root, rest = _cut_store(tmp_path, seed, hostile)
    open_model(root).close()
    _append(root, rest)
    model = _model(root)
    assert model.how == "append", "the model was extended, not rebuilt"
    model.close()
    assert _json(_through_model(root)) == _replayed(root)


def _decision_line(writer: ShardWriter, k: int, element: str) -> bytes:
    d = decision(f"decision {k:04d}", [upsert("svc", element)], shapes=[])
    ev = writer.add(d, lamport=k + 1, recorded_at=format_epoch(BASE + 60 * k))
    return marshal_event(ev)


#: The line rewritten, and the number of lines before the append.
_FORGED, _LINES = 300, 600


def test_a_line_rewritten_under_an_appended_model_is_replayed(tmp_path: Path) -> None:
    """A shard over 128 KiB: a line in the middle (outside the fingerprint's first
    and last 64 KiB) is replaced by a valid event of the same length that creates
    another element. The line after it names no parent (a chain broken from the
    start), so counts, problems and chains all stay as they were. An append then
    has the model extended over the rewritten line: only the line digest differs."""
    writer = ShardWriter("i01", actor="ana")
    lines: list[bytes] = []
    for k in range(_LINES):
        if k == _FORGED + 1:  # this line names no parent
            before, writer.events = writer.events, []
            lines.append(_decision_line(writer, k, f"e{k % 40:03d}"))
            writer.events = before + writer.events
            continue
        lines.append(_decision_line(writer, k, f"e{k % 40:03d}"))
    root = write_store(tmp_path / "s", {"i01.ndjson": b"\n".join(lines) + b"\n"})
    shard = root / "log" / "i01.ndjson"
    assert len(shard.read_bytes()) > 3 * 65536
    open_model(root).close()

    forger = ShardWriter("i01", actor="ana")
    forger.events = list(writer.events[:_FORGED])  # the same parent
    forged = _decision_line(forger, _FORGED, "zz99")
    assert len(forged) == len(lines[_FORGED]) and forged != lines[_FORGED]
    assert orjson.loads(forged)["hash"] == compute_hash(forger.events[-1])
    data = shard.read_bytes()
    at = data.index(lines[_FORGED])
    appended = _decision_line(writer, _LINES, "e000")
    shard.write_bytes(data[:at] + forged + data[at + len(forged) :] + appended + b"\n")

    model = _model(root)
    assert model.how == "append", "the fingerprint trusted the rewritten middle"
    trusted = orjson.dumps(doctor_obj(model))
    model.close()
    replays: list[Engine] = []

    def replay() -> Engine:
        replays.append(open_engine(root))
        return replays[-1]

    got = _json(encode(doctor_answer(lambda: _model(root), replay)))
    assert replays, "doctor reported the model's counts over a rewritten line"
    assert got == _replayed(root)
    assert got != trusted, "the rewritten line changes the counts"
    assert orjson.loads(got)["elements"] == orjson.loads(trusted)["elements"] + 1


def test_the_shards_are_checked_in_workers_as_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big log is checked one shard per worker process; the states are the ones
    this process reads, and when no worker can start, this process reads them."""
    from kgai_tui.core.model import log_check

    _random_store(tmp_path, 2, 90, hostile=True)
    log = tmp_path / "r2" / "log"
    here = log_check.check_log(log)
    monkeypatch.setattr(log_check, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    seen: list[int] = []
    real = log_check.ProcessPoolExecutor

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return real(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(log_check, "ProcessPoolExecutor", counted)
        in_workers = log_check.check_log(log)
    assert seen == [1]
    assert in_workers.states == here.states and in_workers.refused == here.refused

    def broken(*_: Any, **__: Any) -> Any:
        raise OSError("no processes here")

    monkeypatch.setattr(log_check, "ProcessPoolExecutor", broken)
    assert log_check.check_log(log).states == here.states
