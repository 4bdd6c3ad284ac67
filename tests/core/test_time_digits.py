"""Recorded times are read with ASCII digits only, as Go's ``time.Parse`` reads them.

Python's ``\\d`` on text also matches every other Unicode decimal digit, so a hostile
line stamped ``٢٠٢٦-01-02T00:00:00Z`` was dated by us and undated by the reference:
as-of, diff, history order and the slider answered differently from ``kg``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store

from kgai_tui.core.gosem.gotext import (
    parse_rfc3339,
    recorded_epoch,
    rfc3339_epoch,
)
from kgai_tui.core.search.docs import NO_TIME, epoch_of
from kgai_tui.core.store.decision_fields import ZERO_TIME, epochs

#: Arabic-Indic, Devanagari and fullwidth digits in each part of a timestamp.
FOREIGN = [
    "٢٠٢٦-01-02T00:00:00Z",
    "2026-٠1-02T00:00:00Z",
    "2026-01-02T0٠:00:00Z",
    "2026-01-02T00:00:0٠Z",
    "2026-01-02T00:00:00.٥Z",
    "2026-01-02T00:00:00+0٢:00",
    "२०२६-01-02T00:00:00Z",
    "２０２６-01-02T00:00:00Z",
    "2026-01-0٢T00:00:00",  # the naive and the date-only shapes
    "2026-01-0٢",
]


@pytest.mark.parametrize("text", FOREIGN)
def test_a_time_with_other_digits_is_no_time(text: str) -> None:
    assert rfc3339_epoch(text) is None
    assert parse_rfc3339(text) is None
    assert recorded_epoch(text) is None
    assert epoch_of(text) == NO_TIME
    assert epochs([text.encode()]).tolist() == [ZERO_TIME]


def test_the_same_times_in_ascii_digits_still_parse() -> None:
    assert rfc3339_epoch("2026-01-02T00:00:00Z") == 1767312000
    assert recorded_epoch("2026-01-02T00:00:00") == 1767312000
    assert recorded_epoch("2026-01-02") == 1767312000
    assert epoch_of("2026-01-02T00:00:00Z") == 1767312000


def _run(root: Path, cache: Path, *args: str, model: str = "on") -> str:
    env = {"KGAI_TUI_CACHE_DIR": str(cache), "KGAI_TUI_READ_MODEL": model}
    done = subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args, "--store", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout


def test_as_of_leaves_out_a_decision_stamped_with_other_digits(tmp_path: Path) -> None:
    """The reference leaves the event out of every as-of cut (its time does not
    parse); the model, the whole store and a warm cache agree."""
    w = ShardWriter("i-one")
    w.add(
        decision("Keep A", [upsert("feature", "A")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    w.add(
        decision("Add B", [upsert("feature", "B")]),
        lamport=2,
        recorded_at="٢٠٢٦-01-02T00:00:00Z",
    )
    root = write_store(tmp_path / "store", {"i-one.ndjson": w.to_bytes()})
    answers = {
        (model, turn): _run(
            root, tmp_path / f"cache-{model}", "as-of", "2027-01-01", model=model
        )
        for model in ("on", "off")
        for turn in ("cold", "warm")
    }
    assert len(set(answers.values())) == 1, answers
    obj = json.loads(answers[("on", "cold")])
    assert obj["elements"] == ["A"]
    history = json.loads(_run(root, tmp_path / "cache-on", "history", "feature:B"))
    assert [d["when"] for d in history["decisions"]] == [""]
